"""Issue 13 reproducers for the minimax / fairness estimators and the saddle
solvers: clear errors naming the parameter, no crash, and the invariant that a
fit never runs a mechanism accounted above the requested epsilon."""

import math
import threading
import warnings

import numpy as np
import pytest
from reliability_helpers import time_limit
from sklearn.exceptions import NotFittedError
from sklearn.utils._param_validation import InvalidParameterError

from dpestim import (
    FairLogisticRegression,
    MinimaxLogisticRegression,
    MinimaxRegressor,
)
from dpestim.solvers import DPSMD, DPSMDBR

rng = np.random.default_rng(13)
X = rng.normal(size=(20, 3))
y = (X[:, 0] > 0).astype(int)
a = np.arange(20) % 2
XB = rng.uniform(-1, 1, size=(4000, 3))
AB = np.arange(4000) % 2


def _fit(est, X=X, target=None, groups=a):
    target = X[:, 0] if target is None else target
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with time_limit(60):
            return est.fit(X, target, sensitive_features=groups)


@pytest.mark.parametrize("value", [math.inf, 1e300])
def test_br_budget_scale(value):
    if math.isinf(value):
        with pytest.raises(InvalidParameterError, match="'budget_scale' parameter"):
            _fit(MinimaxRegressor(solver=DPSMDBR(budget_scale=value)))
        return
    est = _fit(
        MinimaxRegressor(solver=DPSMDBR(budget_scale=value), groups=[0, 1]),
        XB, np.clip(XB[:, 0], -1, 1), AB,
    )  # fmt: skip
    assert est.epsilon_ <= 1.0 * (1 + 1e-9)
    assert np.isfinite(est.coef_).all()
    # the budget is capped where the data runs out: it stays an int64
    assert est.dp_params_["budget_u"] <= 4000 + 2 ** est.dp_params_["tg_max_level"]


@pytest.mark.parametrize("solver", ["dp-smd", "dp-smd-br"])
def test_tiny_epsilon(solver):
    with pytest.raises(ValueError, match="epsilon"):
        _fit(MinimaxRegressor(solver=solver, epsilon=1e-300, groups=[0, 1]))


def test_empty_groups():
    with pytest.raises(ValueError, match="groups must list at least one group"):
        _fit(MinimaxRegressor(groups=[]))


@pytest.mark.parametrize(
    "params, name",
    [
        ({"l1_radius": 1e103}, "l1_radius"),
        ({"target_bound": 1e160}, "target_bound"),
        ({"l1_radius": 1e200, "feature_bound": 1e200}, "l1_radius|feature_bound"),
    ],
)
def test_huge_public_bounds(params, name):
    with pytest.raises(ValueError, match=name):
        _fit(MinimaxRegressor(groups=[0, 1], **params))


def test_bounds_whose_product_overflows():
    """Each bound in range, their product not: refused before the data."""
    est = MinimaxLogisticRegression(
        l1_radius=1e40, feature_bound=1e40, classes=[0, 1], groups=[0, 1]
    )
    with pytest.raises(ValueError, match="l1_radius \\* feature_bound"):
        _fit(est, target=y)


def test_tiny_min_group_proportion():
    # dp-smd: the Lipschitz bound scales with 1 / min_group_proportion
    with pytest.raises(ValueError, match="min_group_proportion"):
        _fit(
            MinimaxRegressor(
                min_group_proportion=1e-300, groups=[0, 1], solver="dp-smd"
            )
        )
    # noisy-sgda: the sensitivity does not depend on it; a finite model
    est = _fit(MinimaxRegressor(min_group_proportion=1e-300, groups=[0, 1]))
    assert np.isfinite(est.coef_).all()


@pytest.mark.parametrize(
    "gp",
    [[np.inf, np.inf], [0.5, np.nan], [2.0, 0.5], ["a", "b"], [0.25, 0.25]],
)
def test_bad_group_proportions(gp):
    with pytest.raises(ValueError, match="group_proportions"):
        _fit(MinimaxRegressor(group_proportions=gp, groups=[0, 1]))


@pytest.mark.parametrize(
    "cls", [MinimaxLogisticRegression, FairLogisticRegression, MinimaxRegressor]
)
def test_predict_before_fit(cls):
    for method in ("predict", "predict_proba", "decision_function"):
        if hasattr(cls, method):
            with pytest.raises(NotFittedError):
                getattr(cls(), method)(X)


@pytest.mark.parametrize("cls", [MinimaxLogisticRegression, FairLogisticRegression])
def test_labels_and_classes(cls):
    with pytest.raises(TypeError, match="y mixes strings"):
        _fit(cls(groups=[0, 1]), target=np.array(["a", 1] * 10, dtype=object))
    with pytest.raises(ValueError, match="classes contains NaN"):
        _fit(cls(classes=[0, np.nan], groups=[0, 1]), target=y)
    with pytest.raises(TypeError, match="classes mixes"):
        _fit(cls(classes=np.array([0, "a"], dtype=object), groups=[0, 1]), target=y)


@pytest.mark.filterwarnings("ignore")
def test_same_object_fitted_from_four_threads():
    est = MinimaxRegressor(random_state=0)  # groups=None warns during fit
    errors = []

    def work():
        try:
            for _ in range(3):
                est.fit(X, X[:, 0], sensitive_features=a)
        except Exception as exc:  # noqa: BLE001 - collected and asserted
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors
    ref = _fit(MinimaxRegressor(random_state=0))
    np.testing.assert_array_equal(est.coef_, ref.coef_)
    assert any("PrivacyLeakWarning" in w for w in est.privacy_report().warnings)


def test_read_only_input():
    Xr = XB[:400].copy()
    Xr.flags.writeable = False
    yr = np.clip(XB[:400, 0], -1, 1)
    yr.flags.writeable = False
    est = _fit(MinimaxRegressor(groups=[0, 1], random_state=0), Xr, yr, AB[:400])
    ref = _fit(
        MinimaxRegressor(groups=[0, 1], random_state=0),
        XB[:400].copy(), np.clip(XB[:400, 0], -1, 1), AB[:400],
    )  # fmt: skip
    np.testing.assert_array_equal(est.coef_, ref.coef_)


# -- the invariant -------------------------------------------------------------------


class _OverspendingDPSMD(DPSMD):
    """Broken on purpose: states twice the per-sample epsilon it calibrated."""

    def resolve(self, epsilon, delta, plan):
        params = super().resolve(epsilon, delta, plan)
        return dict(params, eps_per_sample=2 * params["eps_per_sample"])

    def solve(self, *args, **kwargs):
        raise AssertionError("the mechanism must not run")


class _NaNDPSMD(_OverspendingDPSMD):
    def resolve(self, epsilon, delta, plan):
        return dict(super().resolve(epsilon, delta, plan), eps_per_sample=math.nan)


@pytest.mark.parametrize(
    "solver, match",
    [(_OverspendingDPSMD(), "more than the requested"), (_NaNDPSMD(), "not a number")],
)
def test_accounted_epsilon_above_request_or_nan_stops_the_fit(solver, match):
    with pytest.raises(ValueError, match=match):
        _fit(MinimaxRegressor(solver=solver, groups=[0, 1]))


def test_parameters_are_validated_even_when_sklearn_skips_validation():
    import sklearn

    with sklearn.config_context(skip_parameter_validation=True):
        with pytest.raises(InvalidParameterError, match="epsilon"):
            _fit(MinimaxRegressor(epsilon=math.nan, groups=[0, 1]))
