"""scikit-learn's optimum of dp-smd-sco's own problem (the "sklearn-l1ball" row).

``dp-smd-sco`` minimises the mean loss over ``||W||_1 <= R`` with features
clipped to ``feature_bound`` and the intercept a constant feature
(``feature_bound``) sharing the l1 budget; it has no L2 penalty. Its
epsilon = inf reference is therefore not ``sklearn.LogisticRegression(C=1 /
(alpha n))`` but the l1-**constrained** optimum, computed here with
scikit-learn's l1-**penalised** solvers on the same lifted features: the
penalised optimum ``w(C)`` of ``||w||_1 + C sum loss`` solves the constrained
problem with radius ``||w(C)||_1``, so ``C`` is bisected (in log scale)
until ``||w(C)||_1 = R`` (``C n`` in [1e-2, 1e4]; relative 1e-3; saga,
the multiclass case, at tolerance 1e-3: an accuracy reference, not a
certificate), or the largest
``C`` tried is used when its optimum already lies inside the ball (the
constraint does not bind).

- LogisticRegression, binary: ``LogisticRegression(penalty="l1",
  solver="liblinear", fit_intercept=False)``;
- LogisticRegression, multiclass: ``penalty="l1", solver="saga"`` (multinomial,
  l1 over all coefficients, as the solver's joint ball);
- LinearSVC: ``LinearSVC(penalty="l1", loss="squared_hinge", dual=False,
  fit_intercept=False)`` (one-vs-rest: the classes' problems share ``C``, so a
  common ``C`` is the joint l1 ball's multiplier).
"""

import math
import warnings

import numpy as np
import scipy.sparse as sp


def lifted(X, feature_bound=1.0):
    """Features clipped to ``feature_bound`` plus the constant feature."""
    X = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=float)
    X = np.clip(X, -feature_bound, feature_bound)
    return np.hstack([X, np.full((X.shape[0], 1), feature_bound)])


def _model(est_name, C, multiclass):
    import sklearn.linear_model as skl
    import sklearn.svm as sks

    if est_name == "LinearSVC":
        return sks.LinearSVC(
            penalty="l1", loss="squared_hinge", dual=False, C=C,
            fit_intercept=False, tol=1e-6, max_iter=5000,
        )  # fmt: skip
    if multiclass:
        return skl.LogisticRegression(
            penalty="l1", solver="saga", C=C, fit_intercept=False, tol=1e-3,
            max_iter=500,
        )  # fmt: skip
    return skl.LogisticRegression(
        penalty="l1", solver="liblinear", C=C, fit_intercept=False, tol=1e-7,
        max_iter=2000,
    )  # fmt: skip


def l1ball_reference(est_name, X, y, radius, feature_bound=1.0, max_bisect=25):
    """Fitted scikit-learn model at the l1-ball optimum; ``(model, ||w||_1)``.

    Score it on ``lifted(X_test, feature_bound)``.
    """
    Xl = lifted(X, feature_bound)
    multiclass = np.unique(y).size > 2

    def fit(log_c):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = _model(est_name, 10.0**log_c, multiclass).fit(Xl, y)
        return m, float(np.abs(m.coef_).sum())

    # C in [1e-2, 1e4] / n: the mean-loss l1 weight 1 / (C n) from 100 down
    # to 1e-4 (liblinear can take minutes near C = 1e4 on Adult)
    lo, hi = (math.log10(c / Xl.shape[0]) for c in (1e-2, 1e4))
    model, norm = fit(hi)
    if norm <= radius:  # the constraint does not bind at the largest C
        return model, norm
    for _ in range(max_bisect):
        mid = 0.5 * (lo + hi)
        model, norm = fit(mid)
        if abs(norm - radius) <= 1e-3 * radius:
            break
        lo, hi = (lo, mid) if norm > radius else (mid, hi)
    return model, norm
