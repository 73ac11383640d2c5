import numpy as np, warnings
warnings.simplefilter("ignore")
from sklearn.datasets import make_blobs
from sklearn.preprocessing import StandardScaler
from sklearn.utils import shuffle
from dpestim import LogisticRegression, LinearSVC
from dpestim.solvers import DPSMDSCO
X_m, y_m = make_blobs(n_samples=300, random_state=0)
X_m, y_m = shuffle(X_m, y_m, random_state=7)
X_m = StandardScaler().fit_transform(X_m)
y_b = y_m[y_m != 2]; X_b = X_m[y_m != 2]
res=[]
for T in [None,1,2,3,5,10,20]:
  for K in [1,4,16,64]:
    for R in [2.0,5.0,10.0]:
      for fb in [1.0,2.0,3.0]:
        accs=[]
        for est in [LogisticRegression, LinearSVC]:
          for X,y in [(X_m,y_m),(X_b,y_b)]:
            try:
              c=est(solver=DPSMDSCO(l1_radius=R,n_vertex_samples=K,max_iter=T,feature_bound=fb),random_state=0).fit(X,y)
              accs.append(c.score(X,y))
            except Exception as e: accs.append(-1)
        res.append((min(accs),T,K,R,fb,accs))
res.sort(key=lambda r:-r[0])
for r in res[:10]: print(r)
