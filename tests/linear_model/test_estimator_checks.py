"""scikit-learn's estimator checks over every estimator x solver.

Only dp-smd-sco's training-accuracy check is an expected failure (see
``_expected_failed_checks``); otherwise the estimators pass all checks
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


def _expected_failed_checks(estimator):
    if estimator.solver == "dp-smd-sco":
        # Vertex-sampling mirror descent (paper 001) cannot reach 83% training
        # accuracy on the check's 300-sample blobs at epsilon=1: its private
        # step size is far too small at that n (see BENCHMARKS.md, issue 6).
        return {"check_classifiers_train": "dp-smd-sco utility at n=300, eps=1"}
    return {}


@parametrize_with_checks(
    list(_estimators()), expected_failed_checks=_expected_failed_checks
)
def test_sklearn_estimator_checks(estimator, check):
    with np.errstate(all="ignore"):
        check(estimator)
