"""scikit-learn's estimator checks over every estimator x solver.

The estimators pass all checks with their private defaults (epsilon=1,
delta=1e-5, classes inferred with a PrivacyLeakWarning because the checks
cannot pass ``classes=``), with one stated exception: ``Ridge`` with a
pure-DP Laplace solver (the accelerated solvers' default) cannot reach the
R^2 > 0.5 of ``check_regressors_train`` at epsilon = 1 on its 200 records
(L1 clipping, replace-one sensitivity); that check is an expected failure
there, and the same solvers with ``noise="gaussian"`` pass every check.
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
        if SOLVERS[solver].privacy_notion == "pure" and "noise" in (
            SOLVERS[solver]().get_params()
        ):
            yield Ridge(solver=SOLVERS[solver](noise="gaussian"), random_state=0)


def _expected_failed_checks(estimator):
    solver = estimator.solver
    if isinstance(estimator, Ridge) and isinstance(solver, str):
        if SOLVERS[solver].privacy_notion == "pure":
            return {
                "check_regressors_train": "pure epsilon-DP (Laplace) at epsilon=1 "
                "on 200 records: R^2 > 0.5 is out of reach with default settings"
            }
    return {}


@parametrize_with_checks(
    list(_estimators()), expected_failed_checks=_expected_failed_checks
)
def test_sklearn_estimator_checks(estimator, check):
    with np.errstate(all="ignore"):
        check(estimator)
