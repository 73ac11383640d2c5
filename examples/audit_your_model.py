"""Audit the privacy of your own configuration
===========================================

The audit trains the estimator many times with and without one crafted
"canary" record and turns the success of a membership test on the released
models into a lower bound on epsilon (95% confidence). A bound above the
reported epsilon would prove a privacy bug; a bound below it is what a
correct implementation gives.

The dataset is tiny and has an all-zero column, which makes the "gradient"
canary (all its weight on that column) as visible as possible. It is
synthetic: the audit's output is not private (its fits are not accounted
and its canary is built from the data), so run it on public or synthetic
data, never publish it for private data.

Run: ``python examples/audit_your_model.py`` (about 10 s).
"""

import numpy as np

from dpestim import LogisticRegression, Ridge
from dpestim.audit import audit_estimator

rng = np.random.default_rng(0)
X = np.hstack([rng.normal(size=(50, 3)) / 4, np.zeros((50, 1))])
y_reg = X[:, 0] + 0.1 * rng.normal(size=50)
y_clf = (X[:, 0] > 0).astype(int)

# Full batch (dp-gd): n and n + 1 records give the same number of steps.
ridge = Ridge(epsilon=2.0, delta=1e-3, solver="dp-gd", max_iter=3, alpha=0.0)
result = audit_estimator(
    ridge, X, y_reg, canary="gradient", n_trials=500, random_state=0
)
print(result)

clf = LogisticRegression(
    epsilon=2.0, delta=1e-3, solver="dp-gd", max_iter=3, classes=[0, 1]
)
result = audit_estimator(clf, X, y_clf, canary="input", n_trials=300, random_state=0)
print(result)
print(
    "scores without / with the canary (means):",
    result.scores_out.mean().round(4),
    result.scores_in.mean().round(4),
)
