import numpy as np, time
from dpestim import LogisticRegression
from dpestim.datasets import load_adult_a9a
from dpestim.solvers import DPSMDSCO
d=load_adult_a9a()
for eps in [1.0, 4.0]:
  for T in [30, 100, 300, 1000]:
   for K in [8, 64]:
    for R in [2.0, 5.0]:
     clf=LogisticRegression(solver=DPSMDSCO(l1_radius=R,n_vertex_samples=K,max_iter=T),epsilon=eps,delta=1e-6,classes=[0,1],random_state=0).fit(d.data,d.target)
     print(eps,T,K,R,clf.score(d.data_test,d.target_test),round(clf.dp_params_['step_size']*T,2))
