"""scikit-learn's estimator checks over every estimator at its defaults
(``solver="auto"``) and every estimator x solver.

The estimators pass all of them with their private defaults (epsilon=1,
delta=1e-5, every hyperparameter "auto", classes inferred with a
PrivacyLeakWarning because the checks cannot pass them; Ridge's private
y_bound="auto", except adassp, which needs a public bound and gets one),
except the accuracy thresholds listed in
``EXPECTED_FAILURES`` and ``Ridge``'s ``check_regressors_train`` with a
pure-DP Laplace solver (the accelerated solvers' default: L1 clipping and
replace-one sensitivity cannot reach R^2 > 0.5 at epsilon = 1 on 200 records;
the same solvers with ``noise="gaussian"`` pass every check), and
``check_class_weight_classifiers`` (refused by the solvers that take no
weights; noise-bound on 50 rows for those that take them). Expected
failures are strict: an unexpected pass fails.
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
            "seqDP-SCD, the paper's baseline: batch 1 and sign-like dual steps "
            "matched to the noise on every dual variable (its 'auto' rule) on "
            "the check's 200 unnormalised records at epsilon=1 stay "
            "below the R^2 threshold (the classifiers now pass)"
        )
        for est, check in (("Ridge", "check_regressors_train"),)
    },
    **{
        ("dp-smd-sco", est, "check_classifiers_train"): (
            "vertex-sampling mirror descent (paper 001) cannot reach 83% training "
            "accuracy on the check's 300-sample blobs at epsilon=1: its private "
            "step size is far too small at that n (BENCHMARKS.md, issue 6)"
        )
        for est in ("LogisticRegression", "LinearSVC")
    },
    ("dp-gd", "LinearSVC", "check_classifiers_train"): (
        "pure-DP dp-gd, squared hinge, on the check's 300 standardised 3-class "
        "blobs at epsilon=1: the private row scale takes 14.8% of epsilon at "
        "this n (scale_share_cap) and rescales the rows (median norm 1.24) to "
        "2.95; seed 0 reaches 0.813 < 0.83 (seeds 0-5: 0.81-0.92, mean 0.874; "
        "0.90-0.92 with feature_scale=None); the binary blobs gain (0.95-0.98)"
    ),
    ("adassp", "Ridge", "check_regressors_train"): (
        "AdaSSP (one-shot sufficient statistics) at epsilon=1 on the check's 200 "
        "standardised records: rows of norm ~3 clipped to clip_norm=1 and Gram "
        "noise of standard deviation ~9 per entry against a diagonal of ~20; "
        "the adaptive ridge shrinks the model below R^2 0.5"
    ),
}


def _check_name(check):
    return getattr(check, "func", check).__name__


def _estimators():
    """The defaults (``solver="auto"``), then every estimator x solver pair
    the solver supports (others are refused)."""
    yield LogisticRegression(random_state=0)
    yield LinearSVC(random_state=0)
    yield LinearSVC(loss="hinge", random_state=0)
    yield Ridge(random_state=0)
    for solver in sorted(SOLVERS):
        common = dict(solver=solver, random_state=0)
        for est in (
            LogisticRegression(**common),
            LinearSVC(**common),
            LinearSVC(loss="hinge", **common),
            # adassp needs a public target bound: y_bound="auto" estimates
            # none on the checks' few hundred rows (and adassp then refuses)
            Ridge(**common, **({"y_bound": 10.0} if solver == "adassp" else {})),
        ):
            if est._loss_name in SOLVERS[solver].supported_losses:
                yield est
        if SOLVERS[solver].privacy_notion == "pure" and "noise" in (
            SOLVERS[solver]().get_params()
        ):
            yield Ridge(solver=SOLVERS[solver](noise="gaussian"), random_state=0)


_PURE_RIDGE_REASON = (
    "pure epsilon-DP (Laplace) at epsilon=1 on 200 records: R^2 > 0.5 is out "
    "of reach with default settings"
)


_CLASS_WEIGHT_REFUSED = (
    "class_weight is refused (ValueError naming it and the solver): only the "
    "dp-sgd, accelerated and dual coordinate families weight their examples"
)
_CLASS_WEIGHT_NOISE = (
    "class_weight={0: 1000, 1: 1e-4} on the check's 50 training rows at "
    "epsilon=1 and max_iter=1000: the noise (noise multiplier ~100) swamps the "
    "weighted gradient, and 50 rows are too few for the private class "
    "histogram (no prior intercept), so predictions are not 87% class 0"
)


def _expected_failure(estimator, check_name):
    """The reason a check is expected to fail for this estimator, or None."""
    solver = estimator.solver
    if not isinstance(solver, str):
        return None
    key = (solver, type(estimator).__name__, check_name)
    if key in EXPECTED_FAILURES:
        return EXPECTED_FAILURES[key]
    if solver == "auto":  # dp-sgd on the checks' data, which weights examples
        if check_name == "check_class_weight_classifiers":
            return _CLASS_WEIGHT_NOISE
        return None
    if check_name == "check_class_weight_classifiers":
        if not SOLVERS[solver].supports_class_weight:
            return _CLASS_WEIGHT_REFUSED
        return _CLASS_WEIGHT_NOISE
    if (
        isinstance(estimator, Ridge)
        and check_name == "check_regressors_train"
        and SOLVERS[solver]().privacy_notion == "pure"
    ):
        return _PURE_RIDGE_REASON
    return None


@parametrize_with_checks(list(_estimators()))
def test_sklearn_estimator_checks(estimator, check, request):
    reason = _expected_failure(estimator, _check_name(check))
    if reason is not None:
        request.applymarker(pytest.mark.xfail(reason=reason, strict=True))
    with np.errstate(all="ignore"):
        check(estimator)
