"""The fuzz kinds of issue 24 (item 8): each a clear error or a finite result."""

import math
import warnings

import numpy as np
import pytest
from scipy.stats import loguniform

from dpestim import (
    FairLogisticRegression,
    LogisticRegression,
    MinimaxRegressor,
    Ridge,
)
from dpestim.audit import clopper_pearson_upper
from dpestim.audit._statistics import epsilon_lower_bound
from dpestim.model_selection import PrivacyBudget, PrivateSearchCV, Relative
from dpestim.model_selection._space import Factor
from dpestim.preprocessing import StandardScaler, estimate_clip_norm, private_quantile
from dpestim.privacy import gaussian_noise, laplace_noise
from dpestim.scaling import BlockedArray
from dpestim.solvers import NoisySGDA


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    return X, (X[:, 0] > 0).astype(int)


# -- non-finite minimax models are refused -------------------------------------


def test_fair_model_that_diverges_is_refused(data):
    X, y = data
    est = FairLogisticRegression(solver=NoisySGDA(alpha=1e12), random_state=0)
    with pytest.raises(ValueError, match="The fit diverged"):
        est.fit(X, y, sensitive_features=np.arange(40) % 2)
    assert not hasattr(est, "coef_") and not hasattr(est, "epsilon_")


def test_minimax_regressor_that_diverges_is_refused(data):
    X, _ = data
    est = MinimaxRegressor(
        epsilon=math.inf,
        feature_bound=3,
        l1_radius=1,
        min_group_proportion=0.01,
        solver=NoisySGDA(learning_rate=5.0),  # far above 2 / curvature
    )
    with pytest.raises(ValueError, match="The fit diverged"):
        est.fit(X, X[:, 0], sensitive_features=np.zeros(40, dtype=int))
    # the same problem with a smaller step converges to a finite model, and so
    # does the non-private "auto" step (at most 2 / curvature since the
    # thirteenth session; 0.5 diverged here before)
    for solver in (NoisySGDA(learning_rate=0.01), NoisySGDA()):
        est.set_params(solver=solver, random_state=0)
        est.fit(X, X[:, 0], sensitive_features=np.zeros(40, dtype=int))
        assert np.isfinite(est.coef_).all() and np.isfinite(est.predict(X)).all()


# -- StandardScaler bounds ------------------------------------------------------


@pytest.mark.parametrize(
    "bounds, match",
    [
        ((-1e300, 1e300), "too wide"),
        ((-1.4e154, 1.4e154), "too wide"),
        ((1.7e308, 1.75e308), "too wide"),
        ((-1e-300, 1e-300), "too narrow"),
        ((-1.4e-152, 1.4e-152), "too narrow"),
    ],
)
def test_scaler_bounds_outside_the_float_range_are_refused(data, bounds, match):
    with pytest.raises(ValueError, match=match):
        StandardScaler(bounds=bounds, epsilon=1.0).fit(data[0])


@pytest.mark.parametrize("half", [1.3e154, 1.5e-152, 1e-100, 1e100])
def test_scaler_at_the_edges_of_the_bounds_range_is_finite(data, half):
    X = data[0] * half
    sc = StandardScaler(bounds=(-half, half), epsilon=1.0, random_state=0).fit(X)
    for attr in (sc.scale_, sc.var_, sc.mean_):
        assert np.isfinite(attr).all()
    assert (sc.var_ > 0).all()
    Z = sc.transform(X)
    assert np.isfinite(Z).all() and np.abs(Z).max() <= 2.0 / math.sqrt(1e-4)


# -- ZeroDivisionError kinds --------------------------------------------------


def test_dp_smd_sco_with_delta_zero_is_a_clear_error(data):
    with pytest.raises(ValueError, match="delta must be in"):
        LogisticRegression(solver="dp-smd-sco", delta=0.0).fit(*data)


def test_seq_dp_scd_nonprivate_without_penalty_is_a_clear_error(data):
    X, _ = data
    with pytest.raises(ValueError, match="needs alpha > 0"):
        Ridge(solver="seq-dp-scd", epsilon=math.inf, alpha=0.0).fit(X, X[:, 0])


@pytest.mark.parametrize("shape", [(0, 3), (3, 0)])
def test_empty_blocked_array_is_a_clear_error(shape):
    X = BlockedArray(np.zeros(shape), block_size=3)
    with pytest.raises(ValueError, match="minimum of 1 is required"):
        LogisticRegression(classes=[0, 1]).fit(X, np.zeros(shape[0]))


# -- Relative / Factor -----------------------------------------------------------


def test_relative_accepts_a_list_and_draws_its_values():
    rel = Relative([0.5, 2.0])
    rng = np.random.default_rng(0)
    draws = {float(rel.rvs(rng)) for _ in range(50)}
    assert draws == {0.5, 2.0}
    assert isinstance(rel.rvs(0), Factor)
    assert 0.25 <= Relative(loguniform(0.25, 4)).rvs(rng) <= 4


@pytest.mark.parametrize(
    "dist, error",
    [
        ([], ValueError),
        ("ab", TypeError),
        (3, TypeError),
        ([0.5, -1.0], ValueError),
        ([math.nan], ValueError),
        ([math.inf], ValueError),
        (["a"], TypeError),
        ([True], TypeError),
    ],
)
def test_relative_refuses_bad_factors_at_construction(dist, error):
    with pytest.raises(error, match="Relative"):
        Relative(dist)


def test_search_with_a_relative_list_runs(data):
    search = PrivateSearchCV(
        LogisticRegression(epsilon=1.0, classes=[0, 1], max_iter=1),
        {"learning_rate": Relative([0.5, 2.0])},
        epsilon=2.0,
        n_candidates=2,
        random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(*data)
    lr = search.best_estimator_.learning_rate
    assert np.isfinite(lr) and lr > 0


# -- quantile, clip norm, audit statistics, noise helpers, budget ------------------


@pytest.mark.parametrize(
    "kwargs",
    [
        {"n_grid": 10**12},
        {"n_grid": math.inf},
        {"n_grid": 1},
        {"n_grid": 2.5},
        {"quantile": "0.5"},
        {"quantile": 1.0},
        {"epsilon": "1"},
        {"epsilon": math.inf},
        {"epsilon": math.nan},
        {"random_state": "x"},
    ],
)
def test_private_quantile_parameters_are_validated(kwargs):
    values = np.abs(np.random.default_rng(0).normal(size=100))
    args = {"quantile": 0.5, "epsilon": 1.0} | kwargs
    with pytest.raises((ValueError, TypeError), match="parameter of private_quantile"):
        private_quantile(
            values, args.pop("quantile"), args.pop("epsilon"), (1e-3, 10), **args
        )


def test_private_quantile_accepts_the_largest_grid():
    values = np.abs(np.random.default_rng(0).normal(size=100))
    value, _ = private_quantile(
        values, 0.5, 1.0, (1e-3, 10), n_grid=2**20, random_state=0
    )
    assert 1e-3 <= value <= 10


@pytest.mark.parametrize(
    "kwargs",
    [{"quantile": "0.5"}, {"epsilon": "0.5"}, {"n_grid": 10**12}, {"fit_intercept": 2}],
)
def test_estimate_clip_norm_parameters_are_validated(data, kwargs):
    with pytest.raises(
        (ValueError, TypeError), match="parameter of estimate_clip_norm"
    ):
        estimate_clip_norm(data[0], **kwargs)


@pytest.mark.parametrize(
    "args, match",
    [
        ((3, 10, 1e300), "'alpha' parameter"),
        ((3, 10, math.nan), "'alpha' parameter"),
        ((120, 10, 0.05), "exceeds the number of trials"),
        ((-1, 10, 0.05), "'k' parameter"),
        ((3.5, 10, 0.05), "'k' parameter"),
        ((3, 0, 0.05), "'n' parameter"),
    ],
)
def test_clopper_pearson_arguments_are_validated(args, match):
    with pytest.raises(ValueError, match=match):
        clopper_pearson_upper(*args)


def test_epsilon_lower_bound_arguments_are_validated():
    with pytest.raises(ValueError, match="exceeds the number of trials"):
        epsilon_lower_bound(3, 20, 10, 1e-5, 0.05)
    with pytest.raises(ValueError, match="'delta' parameter"):
        epsilon_lower_bound(3, 2, 10, 1.5, 0.05)


@pytest.mark.parametrize("noise", [gaussian_noise, laplace_noise])
@pytest.mark.parametrize(
    "rng, scale, shape, error",
    [
        (np.random.default_rng(0), 1.0, -1, ValueError),
        (np.random.default_rng(0), 1.0, (2, -1), ValueError),
        (np.random.default_rng(0), 1.0, 2.5, TypeError),
        (np.random.default_rng(0), "1.0", 3, TypeError),
        (np.random.default_rng(0), -1.0, 3, ValueError),
        (np.random.RandomState(0), 1.0, 3, TypeError),
    ],
)
def test_noise_helpers_are_validated(noise, rng, scale, shape, error):
    with pytest.raises(error):
        noise(rng, scale, shape)


def test_noise_helpers_draw_the_requested_shapes():
    rng = np.random.default_rng(0)
    assert gaussian_noise(rng, 1.0, (2, 3)).shape == (2, 3)
    assert laplace_noise(rng, 0.0, np.int64(4)).shape == (4,)


@pytest.mark.parametrize("epsilon", ["1", None, True])
def test_budget_epsilon_must_be_a_number(epsilon):
    with pytest.raises(TypeError, match="epsilon must be a real number"):
        PrivacyBudget(epsilon)


def test_infinite_budget_remaining_after_a_nonprivate_fit(data):
    budget = PrivacyBudget(math.inf)
    with budget:
        LogisticRegression(epsilon=math.inf, classes=[0, 1]).fit(*data)
    assert budget.spent()[0] == math.inf
    assert budget.remaining() == math.inf
    finite = PrivacyBudget(1.0)
    assert finite.remaining() == 1.0


def test_accounting_functions_refuse_string_budgets():
    import dp_accounting

    from dpestim.privacy import calibrate_noise, compute_epsilon

    with pytest.raises(TypeError, match="epsilon must be a real number"):
        calibrate_noise(dp_accounting.GaussianDpEvent, "1", 1e-5)
    with pytest.raises(TypeError, match="delta must be a real number"):
        calibrate_noise(dp_accounting.GaussianDpEvent, 1.0, "1e-5")
    with pytest.raises(TypeError, match="delta must be a real number"):
        compute_epsilon(dp_accounting.GaussianDpEvent(1.0), "1e-5")
    with pytest.raises(ValueError, match="delta must be in"):
        compute_epsilon(dp_accounting.GaussianDpEvent(1.0), 2.0)
    assert 0 < compute_epsilon(dp_accounting.GaussianDpEvent(1.0), np.float64(1e-5))
