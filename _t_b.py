import numpy as np, time, warnings
from dpestim import MinimaxLogisticRegression, MinimaxRegressor, FairLogisticRegression
def gen(n, rng):
    p=10; X=rng.uniform(-1,1,(n,p)); a=(rng.random(n)<0.4).astype(int)
    t0=np.zeros(p); t0[:3]=[4,-4,3]; t1=np.zeros(p); t1[[0,1,3]]=[4,-4,3]
    th=np.where(a[:,None]==0,t0,t1); pr=1/(1+np.exp(-(X*th).sum(1)))
    y=(rng.random(n)<pr).astype(int); return X,y,a
def grisk(clf,X,y,a):
    s=clf.decision_function(X); m=np.where(y==1,1,-1)*s; l=np.logaddexp(0,-m)
    return [l[a==g].mean() for g in (0,1)]
rng=np.random.default_rng(0)
Xt,yt,at=gen(200000,rng)
for n in [10**5]:
  X,y,a=gen(n,rng)
  for eps in [np.inf]:
    t=time.time()
    clf=MinimaxLogisticRegression(epsilon=eps,delta=1e-6,classes=[0,1],groups=[0,1],group_proportions=[0.6,0.4],random_state=0).fit(X,y,sensitive_features=a)
    print(n,eps,np.round(grisk(clf,Xt,yt,at),3),clf.group_weights_,clf.dp_params_['max_iter'],clf.dp_params_['step_size'],round(clf.epsilon_,3),time.time()-t)
clf=MinimaxRegressor(epsilon=1.0,groups=[0,1],random_state=0).fit(X,y-0.5,sensitive_features=a); print(clf.coef_, clf.group_weights_)
for c in ["demographic_parity","equalized_odds"]:
  clf=FairLogisticRegression(constraint=c,epsilon=1.0,classes=[0,1],groups=[0,1],random_state=0).fit(X,y,sensitive_features=a); print(clf.coef_, clf.multipliers_, clf.score(Xt,yt))
def dp_diff(clf,X,a): p=clf.predict(X); return abs(p[a==0].mean()-p[a==1].mean())
from dpestim import LogisticRegression
for c in ["demographic_parity","equalized_odds"]:
  for B in [0.5, 2.0, 8.0]:
    clf=FairLogisticRegression(constraint=c,multiplier_bound=B,difference_bound=0.0,epsilon=np.inf,classes=[0,1],groups=[0,1],random_state=0).fit(X,y,sensitive_features=a); print(c,B,clf.multipliers_.round(2), clf.score(Xt,yt), dp_diff(clf,Xt,at))
clf=MinimaxLogisticRegression(epsilon=np.inf,classes=[0,1],groups=[0,1],random_state=0).fit(X,y,sensitive_features=a); print(clf.score(Xt,yt), dp_diff(clf,Xt,at))
