"""scikit-learn's estimator checks over every estimator x solver.

The estimators pass all of them with their private defaults (epsilon=1,
delta=1e-5, classes inferred with a PrivacyLeakWarning because the checks
cannot pass ``classes=``), except the accuracy thresholds listed in
``EXPECTED_FAILURES`` (strict: an unexpected pass fails).
"""

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from dpestim import LinearSVC, LogisticRegression, Ridge
from dpestim.solvers import SOLVERS

# (solver, estimator class, check name) -> reason. Accuracy thresholds of
# check_classifiers_train / check_regressors_train that a solver cannot reach
# at epsilon=1 on the checks' 100-300 unnormalised records.
EXPECTED_FAILURES = {
    **{
        ("seq-dp-scd", est, check): (
            "seqDP-SCD, the paper's baseline: sensitivity grows like the batch "
            "size (2C sqrt(L(L+1))), the default batch covers all records"
        )
        for est, check in (
            ("LogisticRegression", "check_classifiers_train"),
            ("LinearSVC", "check_classifiers_train"),
            ("Ridge", "check_regressors_train"),
        )
    },
    **{
        ("dp-smd-sco", est, "check_classifiers_train"): (
            "vertex-sampling mirror descent (paper 001) cannot reach 83% training "
            "accuracy on the check's 300-sample blobs at epsilon=1: its private "
            "step size is far too small at that n (BENCHMARKS.md, issue 6)"
        )
        for est in ("LogisticRegression", "LinearSVC")
    },
    ("dp-scd", "Ridge", "check_regressors_train"): (
        "DP-SCD assumes rows of norm <= 1; on the check's standardised rows "
        "(norm ~3.3) a dual step is a primal step of size 1/||x||^2, too slow "
        "for 10 full-batch noisy steps (R^2 0.31 < 0.5)"
    ),
}


def _check_name(check):
    return getattr(check, "func", check).__name__


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
def test_sklearn_estimator_checks(estimator, check, request):
    key = (estimator.solver, type(estimator).__name__, _check_name(check))
    if key in EXPECTED_FAILURES:
        request.applymarker(
            pytest.mark.xfail(reason=EXPECTED_FAILURES[key], strict=True)
        )
    with np.errstate(all="ignore"):
        check(estimator)
