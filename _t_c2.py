import numpy as np, time
from dpestim import LogisticRegression
from dpestim.datasets import load_adult_a9a
from dpestim.solvers import DPSMDSCO
d=load_adult_a9a()
for eps in [1.0, np.inf]:
  for K in [4, 32, 256]:
   for R in [2.0,5.0]:
    t=time.time()
    clf=LogisticRegression(solver=DPSMDSCO(l1_radius=R,n_vertex_samples=K),epsilon=eps,delta=1e-6,classes=[0,1],random_state=0).fit(d.data,d.target)
    print(eps,K,R,clf.score(d.data_test,d.target_test),clf.dp_params_['step_size'],clf.dp_params_['max_iter'],round(time.time()-t,2))
