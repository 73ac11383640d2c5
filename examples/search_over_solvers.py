"""Searching over solvers, and objective perturbation for LinearSVC
===================================================================

:class:`~dpestim.model_selection.PrivateSearchCV` accepts a public list of
solver names: each candidate draws its solver (and its other
hyperparameters) with public coins. A candidate is then a mixture of the
listed mechanisms, whose Renyi-DP at every order is at most the largest of
theirs (joint quasi-convexity), so the whole search, selection included, is
accounted by dp-accounting's repeat-and-select RDP bound on that pointwise
maximum (:class:`~dpestim.privacy.mixture.MaxRdpDpEvent`). Each solver gets
its own noise; ``noise_multipliers_`` shows them.

The second part fits :class:`~dpestim.LinearSVC` by objective perturbation:
the hinge is not smooth, so the solver fits the Huber hinge
(``hinge_smoothing``), the loss its theorem covers, and says so in
``hyperparameters_["fitted_loss"]``. Run:
``python examples/search_over_solvers.py``.
"""

from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from dpestim import LinearSVC, LogisticRegression
from dpestim.model_selection import PrivateSearchCV

X, y = load_breast_cancer(return_X_y=True)
X, X_test, y, y_test = train_test_split(X, y, test_size=0.25, random_state=0)
# for brevity only: StandardScaler fitted on the training rows is NOT private
# (the private workflow example scales with public bounds instead)
scaler = StandardScaler().fit(X)
X, X_test = scaler.transform(X), scaler.transform(X_test)

# -- 1. one search over two solvers, epsilon 1 in all ---------------------------
search = PrivateSearchCV(
    LogisticRegression(classes=[0, 1]),
    param_distributions={"solver": ["dp-sgd", "dp-scd"]},
    epsilon=1.0,
    n_candidates=5,
    random_state=0,
).fit(X, y)
print(f"selected: {search.best_params_}")
print(f"noise multiplier of each solver: {search.noise_multipliers_}")
print(f"epsilon of the whole search: {search.epsilon_:.3f}")
print(f"test accuracy: {search.score(X_test, y_test):.3f}")

# -- 2. objective perturbation for a linear SVM --------------------------------
svc = LinearSVC(
    loss="hinge", solver="objective-perturbation", epsilon=1.0,
    classes=[0, 1], random_state=0,
).fit(X, y)  # fmt: skip
print(f"fitted loss: {svc.hyperparameters_['fitted_loss']}")
print(f"epsilon: {svc.epsilon_:.3f}, test accuracy: {svc.score(X_test, y_test):.3f}")
