"""In-fit private centring (``feature_centring``): plan, mechanism, mapping."""

import math
import warnings
import zlib

import dp_accounting
import numpy as np
import pytest
import scipy.sparse as sp

from dpestim import LinearSVC, LogisticRegression, Ridge
from dpestim.preprocessing._centring import (
    CENTRING_SHARES,
    _clipped_sum,
    laplace_centre,
    laplace_move_threshold,
    plan_centring,
)
from dpestim.solvers.saddle import ExponentialMechanismDpEvent


def _seed(*parts):
    return zlib.crc32("/".join(map(str, parts)).encode())


def _year_data(n=6000, seed=0):
    """Four informative columns and a year column (offset 2005, spread 9)."""
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, 4))
    year = rng.integers(1990, 2021, n).astype(float)
    y = Z @ [1.0, 2.0, 3.0, 4.0] + 0.1 * (year - 2005) + rng.normal(size=n)
    return np.c_[Z, year], y


@pytest.mark.parametrize("case", range(3))
def test_l1_clipped_sum_sensitivity_on_random_neighbours(case):
    """Adding or removing one row moves the L1-clipped sum by at most ``R`` in
    L1 norm (replacing one: ``2 R``): the Laplace mean's sensitivity."""
    rng = np.random.default_rng(_seed("l1-centring", case))
    worst_add, worst_replace = 0.0, 0.0
    for _ in range(200):
        n, d = int(rng.integers(2, 30)), int(rng.integers(1, 12))
        D = rng.normal(size=(n, d)) * 10.0 ** rng.uniform(-3, 3, size=(n, 1))
        if rng.random() < 0.3:
            D[int(rng.integers(n))] *= 1e150
        if rng.random() < 0.2:
            D[int(rng.integers(n)), 0] = 1e300
        R = float(10.0 ** rng.uniform(-2, 2))
        k = int(rng.integers(n))
        full = _clipped_sum(D, R, ord=1)
        assert np.isfinite(full).all()
        less = _clipped_sum(np.delete(D, k, axis=0), R, ord=1)
        other = D.copy()
        other[k] = rng.normal(size=d) * 10.0 ** rng.uniform(-3, 3)
        worst_add = max(worst_add, np.abs(full - less).sum() / R)
        replaced = _clipped_sum(other, R, ord=1)
        worst_replace = max(worst_replace, np.abs(full - replaced).sum() / R)
    assert worst_add <= 1.0 and worst_replace <= 2.0
    assert worst_add > 0.5  # the bound is reached by clipped rows


def test_plan_is_public_and_skips_small_n_epsilon():
    # the radius draw and the mean's detection rule, from n, d, epsilon only
    er, em, note = plan_centring(1.0, 6000, 5, 1.0)
    assert (er, em, note) == (CENTRING_SHARES[0], CENTRING_SHARES[1], None)
    er, em, note = plan_centring(1.0, 331, 10, 1.0)
    assert er is None and em is None and "not run" in note
    # the radius draw needs epsilon n >= about 5,070 (a median at 1%)
    assert plan_centring(1.0, 5000, 5, 1.0)[2] is not None
    # the mean, d = 200: about 4,150 under add/remove, twice under replace-one
    need = laplace_move_threshold(200) / 0.1 / CENTRING_SHARES[1]
    assert 4000 < need < 5070 < 6000 < 2 * need
    assert plan_centring(1.0, 6000, 200, 1.0)[2] is None
    assert plan_centring(1.0, 6000, 200, 2.0)[2] is not None


def test_ridge_centres_a_year_column_by_default():
    X, y = _year_data(8000)
    fits = {
        c: Ridge(epsilon=1.0, random_state=0, feature_centring=c)
        for c in ("auto", None)
    }
    for fit in fits.values():
        fit.fit(X[:6000], y[:6000])
    on, off = fits["auto"], fits[None]
    assert off.feature_centre_ is None
    c = on.feature_centre_
    np.testing.assert_array_equal(c[:4], 0.0)  # no offset: left exactly
    assert abs(c[4] - X[:6000, 4].mean()) < 50  # the year, Laplace noise
    assert on.score(X[6000:], y[6000:]) > 0.8 > 0.1 > off.score(X[6000:], y[6000:])
    # the two draws run first, inside the requested epsilon
    events = on.dp_event_.events
    assert events[0] == ExponentialMechanismDpEvent(CENTRING_SHARES[0])
    assert events[1] == dp_accounting.LaplaceDpEvent(1.0 / CENTRING_SHARES[1])
    assert on.epsilon_ <= 1.0
    report = str(on.privacy_report())
    assert "private centring" in report and "Laplace mean" in report
    assert "1 of 5 columns moved" in on.hyperparameters_["feature_centring"]
    # released model in the user's units: predict = X coef + intercept
    np.testing.assert_allclose(
        on.predict(X[:10]), X[:10] @ on.coef_ + on.intercept_, rtol=1e-12
    )


def test_the_intercept_carries_the_centre_exactly_at_epsilon_inf():
    """Shifting a column by 1000 changes nothing at epsilon = inf: the exact
    centre absorbs it and the intercept maps it back."""
    X, y = _year_data(3000, seed=1)
    X[:, 4] -= 2005.0
    shifted = X.copy()
    shifted[:, 0] += 1000.0
    a = Ridge(epsilon=math.inf, solver="dp-gd").fit(X, y)
    b = Ridge(epsilon=math.inf, solver="dp-gd").fit(shifted, y)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(a.predict(X), b.predict(shifted), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(b.feature_centre_, shifted.mean(axis=0))
    assert "not private" in b.hyperparameters_["feature_centring"]


def test_what_the_user_fixes_is_not_centred():
    X, y = _year_data(4000, seed=2)
    for kw in (
        dict(feature_centring=None),
        dict(clip_norm=1.0),
        dict(feature_scale=None),
        dict(feature_scale=100.0),
        dict(fit_intercept=False),
    ):
        fit = Ridge(epsilon=1.0, random_state=0, **kw).fit(X, y)
        assert fit.feature_centre_ is None, kw
        assert not any(
            isinstance(e, dp_accounting.LaplaceDpEvent)
            for e in getattr(fit.dp_event_, "events", [])
        ), kw
    fit = Ridge(epsilon=1.0, random_state=0).fit(sp.csr_matrix(X), y)
    assert fit.feature_centre_ is None  # sparse: centring would fill it


def test_small_n_runs_nothing_and_says_why():
    X, y = _year_data(300, seed=3)
    fit = Ridge(epsilon=1.0, random_state=0).fit(X, y)
    assert fit.feature_centre_ is None
    assert "not run" in fit.hyperparameters_["feature_centring"]
    same = Ridge(epsilon=1.0, random_state=0, feature_centring=None).fit(X, y)
    np.testing.assert_array_equal(fit.coef_, same.coef_)
    np.testing.assert_array_equal(fit.intercept_, same.intercept_)


@pytest.mark.parametrize("Estimator", [LogisticRegression, LinearSVC])
def test_classifiers_centre_by_default(Estimator):
    X, _ = _year_data(6000, seed=4)
    y = (X[:, 0] + 0.3 * (X[:, 4] - 2005.0) > 0).astype(int)
    off = Estimator(
        epsilon=1.0, classes=[0, 1], random_state=0, feature_centring=None
    ).fit(X, y)
    on = Estimator(epsilon=1.0, classes=[0, 1], random_state=0).fit(X, y)
    same = Estimator(
        epsilon=1.0, classes=[0, 1], random_state=0, feature_centring=True
    ).fit(X, y)
    np.testing.assert_array_equal(on.coef_, same.coef_)  # "auto" is on
    assert off.feature_centre_ is None
    assert on.feature_centre_ is not None and on.feature_centre_[4] > 1900
    assert on.score(X, y) > off.score(X, y) + 0.05
    assert on.epsilon_ <= 1.0


def test_replace_one_solver_doubles_the_laplace_sensitivity():
    X, y = _year_data(6000, seed=5)
    fit = Ridge(epsilon=2.0, delta=0.0, random_state=0).fit(X, y)  # dp-nag
    assert fit.solver_.neighbouring == "replace_one"
    assert fit.feature_centre_ is not None
    assert fit.epsilon_ <= 2.0


def test_laplace_centre_limit_and_noise_scale():
    X, _ = _year_data(2000, seed=6)
    c, r = laplace_centre(X, math.inf, math.inf, 1.0, np.random.default_rng(0))
    np.testing.assert_allclose(c, X.mean(axis=0))
    assert r == math.inf
    # a private draw: radius near the median L1 norm (bin's upper edge)
    c, r = laplace_centre(X, 1.0, 1.0, 1.0, np.random.default_rng(0))
    median = np.median(np.abs(X).sum(axis=1))
    assert median <= r <= median * 2 ** (1 / 8) * 1.001


def test_float32_rows_keep_the_l1_bound():
    """float32 rows: norms and sums in float64 (a float32 norm can fall short
    of the true one by about d 2^-24, beyond the rounding shrink)."""
    rng = np.random.default_rng(_seed("f32-centring"))
    worst = 0.0
    for _ in range(300):
        d = int(rng.integers(50, 400))
        X = (rng.random((20, d)) * 10.0 ** rng.uniform(-2, 2)).astype(np.float32)
        R = float(np.median(np.abs(X.astype(np.float64)).sum(axis=1)))
        row = np.full((1, d), np.float32(R / d * (1 + 1e-7)), dtype=np.float32)
        full = _clipped_sum(np.vstack([X, row]), R, ord=1)
        less = _clipped_sum(X, R, ord=1)
        worst = max(worst, np.abs(full - less).sum() / R)
    assert worst <= 1.0


def test_estimates_cap_and_silent_cases_say_why():
    X, y = _year_data(20000, seed=7)
    fit = Ridge(epsilon=1.0, random_state=0, scale_share=0.97).fit(X, y)
    assert fit.feature_centre_ is None
    assert "at most 0.5" in fit.hyperparameters_["feature_centring"]
    assert fit.epsilon_ <= 1.0
    for kw, why in (
        (dict(fit_intercept=False), "fit_intercept=False"),
        (dict(clip_norm=1.0), "not estimated"),
        (dict(epsilon=None, noise_multiplier=2.0), "no epsilon to share"),
        (dict(epsilon=None, noise_multiplier=2.0, clip_norm=1.0), "no epsilon"),
    ):
        fit = Ridge(random_state=0, **{"epsilon": 1.0, **kw}).fit(X[:6000], y[:6000])
        assert why in fit.hyperparameters_["feature_centring"], kw
    fit = Ridge(epsilon=1.0, random_state=0).fit(sp.csr_matrix(X), y)
    assert "sparse" in fit.hyperparameters_["feature_centring"]


@pytest.mark.parametrize("y_bound", [None, "auto"])
def test_the_intercept_path_is_mapped_back_too(y_bound):
    """The recorded iterates are in the released model's units: the row
    scale, the centre and (``y_bound="auto"``) the targets' scale and centre;
    the last one is the model (before the final intercept query, which the
    pure-DP family runs only at larger ``n epsilon``)."""
    from dpestim.solvers import DPGD

    X, y = _year_data(8000, seed=8)
    fit = Ridge(
        epsilon=2.0, delta=0.0, y_bound=y_bound, random_state=0,
        solver=DPGD(store_path=True, final_intercept=False),
    ).fit(X, y)  # fmt: skip
    assert fit.feature_centre_ is not None
    last = X @ fit.coef_path_[-1].T + fit.intercept_path_[-1]
    np.testing.assert_allclose(
        last.ravel(), X @ fit.coef_ + fit.intercept_, rtol=1e-6, atol=1e-6
    )


def test_the_advice_does_not_recommend_a_centring_that_ran():
    """Labels without signal: the utility check warns, with the public advice;
    it names feature_centring only where the fit did not centre, and after a
    centring it names per-column scales instead."""
    X, _ = _year_data(6000, seed=9)
    y = np.random.default_rng(0).integers(0, 2, 6000)
    for centring, named in (("auto", False), (None, True)):
        with pytest.warns(UserWarning, match="not clearly better") as record:
            LogisticRegression(
                epsilon=1.0, classes=[0, 1], random_state=0, feature_centring=centring
            ).fit(X, y)
        text = " ".join(str(w.message) for w in record)
        assert ("feature_centring centres them" in text) is named
        assert ("per-column scales" in text) is not named
        assert "here it did not run" not in text  # asked for and run, or off


def test_the_advice_says_why_the_centring_did_not_run():
    """Too few rows for the centring's radius draw (a user trial: raw columns
    at 2,000 rows, the majority rate): the advice names the plan's public
    reason."""
    X, _ = _year_data(2000, seed=10)
    y = np.random.default_rng(1).integers(0, 2, 2000)
    with pytest.warns(UserWarning, match="not clearly better") as record:
        fit = LogisticRegression(epsilon=1.0, classes=[0, 1], random_state=0).fit(X, y)
    assert fit.feature_centre_ is None
    text = " ".join(str(w.message) for w in record)
    assert "here it did not run: epsilon x n_samples too small" in text


def test_epsilon_inf_limit_is_scikit_learns_ridge():
    """The non-private limit with the exact centre (AdaSSP, the exact solution
    of its objective) is scikit-learn's Ridge at the same ``alpha_``."""
    from sklearn.linear_model import Ridge as SkRidge

    X, y = _year_data(4000, seed=11)
    # the column balance off: with it the year column is rescaled, and the
    # limit is scikit-learn on the rescaled columns (test_column_balance.py)
    fit = Ridge(epsilon=math.inf, feature_balance=None).fit(X, y)
    assert fit.feature_centre_ is not None
    ref = SkRidge(alpha=fit.alpha_ * X.shape[0]).fit(X, y)
    np.testing.assert_allclose(fit.coef_, ref.coef_, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(fit.intercept_, ref.intercept_, rtol=1e-9)


def test_the_centring_draws_are_charged_to_the_active_budget():
    from dpestim.model_selection import PrivacyBudget

    X, y = _year_data(6000, seed=12)
    budget = PrivacyBudget(2.0, 1e-5)
    with budget:
        fit = Ridge(epsilon=1.0, random_state=0).fit(X, y)
    assert fit.feature_centre_ is not None
    charged = [e for r in budget.records for e in getattr(r[0], "events", [r[0]])]
    assert ExponentialMechanismDpEvent(CENTRING_SHARES[0]) in charged
    assert dp_accounting.LaplaceDpEvent(1.0 / CENTRING_SHARES[1]) in charged
    assert budget.spent()[0] <= 1.0 + 1e-9


def test_an_age_like_column_after_centring_settles_with_dp_sgds_steps():
    """The user trial's loss: an age-like column (mean 40, sd 13) dominates
    the centred rows' norms, so dp-sgd's constant steps oscillate across the
    optimum along it; the settling steps (the "auto" schedule of a private
    squared-loss run) recover the fit. Constant steps: the same plan with
    the resolved learning_rate given explicitly. The column balance is off:
    it rescales the age column (it carries most of the centred rows' squared
    norms), after which constant steps fit too (R^2 0.93)."""
    rng = np.random.default_rng(11)
    Z = rng.normal(size=(12000, 4))
    age = rng.normal(40, 13, 12000).clip(17, 90)
    X = np.c_[Z, age]
    y = Z @ [1, -1, 0.5, 0.25] + 0.08 * (age - 40) + 0.5 * rng.normal(size=12000)
    kw = dict(epsilon=1.0, random_state=0, feature_balance=None)
    fit = Ridge(**kw).fit(X[:9000], y[:9000])
    hp = fit.hyperparameters_
    assert fit.feature_centre_ is not None and "step schedule" in hp
    constant = Ridge(**kw, learning_rate=hp["learning_rate"])
    constant.fit(X[:9000], y[:9000])
    assert "step schedule" not in constant.hyperparameters_
    test = X[9000:], y[9000:]
    assert fit.score(*test) > 0.9 > 0.7 > constant.score(*test)
    assert abs(fit.coef_[4] - 0.08) < 0.02  # the constant steps' was 0.175


def test_an_explicit_true_that_cannot_run_warns_why():
    """feature_centring=True asked by name: where the public plan cannot run
    it the fit warns with the reason (``"auto"`` only notes it)."""
    X, y = _year_data(600)
    with pytest.warns(UserWarning, match="feature_centring=True was not run: "):
        fit = Ridge(epsilon=1.0, random_state=0, feature_centring=True).fit(X, y)
    assert fit.feature_centre_ is None
    assert fit.hyperparameters_["feature_centring"].startswith("not run")
    with pytest.warns(UserWarning, match="fit_intercept=False"):
        Ridge(epsilon=1.0, fit_intercept=False, feature_centring=True).fit(X, y)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Ridge(epsilon=1.0, random_state=0).fit(X, y)  # "auto": a note only
    assert not any("feature_centring=True" in str(w.message) for w in caught)
