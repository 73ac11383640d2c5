import numpy as np, warnings
warnings.simplefilter("ignore")
from sklearn.utils.estimator_checks import check_classifiers_train
from dpestim import LogisticRegression, LinearSVC
from dpestim.solvers import DPSMDSCO
for est in [LogisticRegression, LinearSVC]:
  for K in [4,16,64]:
    for R in [5.0,10.0]:
      try:
        check_classifiers_train(est.__name__, est(solver=DPSMDSCO(n_vertex_samples=K,l1_radius=R),epsilon=np.inf,random_state=0)); print(est.__name__,K,R,"ok")
      except AssertionError as e: print(est.__name__,K,R,"fail")
