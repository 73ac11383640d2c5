import numpy as np, time
from dpestim import LogisticRegression
from dpestim.datasets import load_adult_a9a
from dpestim.solvers import DPSMDSCO
d=load_adult_a9a()
for eps in [np.inf, 1.0]:
  for tau in [None, 0.01, 0.05, 0.2]:
   for K in [32, 256]:
    R=5.0
    clf=LogisticRegression(solver=DPSMDSCO(l1_radius=R,n_vertex_samples=K,step_size=tau),epsilon=eps,delta=1e-6,classes=[0,1],random_state=0).fit(d.data,d.target)
    print(eps,tau,K,clf.score(d.data_test,d.target_test),clf.dp_params_['step_size'],clf.dp_params_['max_iter'],np.abs(clf.coef_).sum()+abs(clf.intercept_[0]))
