"""scikit-learn's estimator checks over every estimator x solver.

No check is marked as an expected failure: the estimators pass all of them
with their private defaults (epsilon=1, delta=1e-5, classes inferred with a
PrivacyLeakWarning because the checks cannot pass ``classes=``).
"""

import numpy as np
from sklearn.utils.estimator_checks import parametrize_with_checks

from dpestim import LinearSVC, LogisticRegression, Ridge
from dpestim.solvers import SOLVERS


def _estimators():
    """Every estimator x solver pair the solver supports (others are refused)."""
    for solver in sorted(SOLVERS):
        common = dict(solver=solver, random_state=0)
        for est in (
            LogisticRegression(**common),
            LinearSVC(**common),
            LinearSVC(loss="hinge", **common),
            Ridge(**common),
        ):
            if est._loss_name in SOLVERS[solver].supported_losses:
                yield est


@parametrize_with_checks(list(_estimators()))
def test_sklearn_estimator_checks(estimator, check):
    with np.errstate(all="ignore"):
        check(estimator)
