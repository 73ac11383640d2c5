import numpy as np, time
from dpestim import LogisticRegression, LinearSVC
from dpestim.datasets import load_adult_a9a
from dpestim.solvers import DPSMDSCO
d=load_adult_a9a()
for eps in [1.0, 4.0, np.inf]:
  for R in [2.0, 5.0]:
    t=time.time()
    clf=LogisticRegression(solver=DPSMDSCO(l1_radius=R),epsilon=eps,delta=1e-6,classes=[-1,1] if -1 in d.target else [0,1],random_state=0).fit(d.data,d.target)
    print(eps,R,clf.score(d.data_test,d.target_test),clf.epsilon_,clf.dp_params_,round(time.time()-t,2))
clf=LinearSVC(solver="dp-smd-sco",epsilon=1.0,classes=np.unique(d.target),random_state=0).fit(d.data,d.target); print(clf.score(d.data_test,d.target_test))
print(clf.privacy_report())
try: LinearSVC(loss="hinge",solver="dp-smd-sco").fit(d.data,d.target)
except ValueError as e: print(e)
