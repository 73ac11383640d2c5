"""Private scales of the minimax estimators (issue 25 item 1).

``MinimaxRegressor(target_bound="auto")``: a private centre and spread of the
target (the estimator of ``Ridge(y_bound="auto")``, whose sensitivity is
tested by brute force in ``tests/linear_model/test_private_scales.py``), the
target centred and scaled before the solver and the model mapped back; and
``feature_scale="auto"`` (a private row scale) for the three minimax
estimators.
"""

import math

import numpy as np
import pytest
import scipy.sparse as sp
from dp_accounting import ComposedDpEvent
from sklearn.metrics import r2_score

from dpestim import MinimaxLogisticRegression, MinimaxRegressor, UtilityWarning
from dpestim.preprocessing import _fit_scales as S
from dpestim.privacy.ledger import composed_epsilon
from dpestim.solvers.saddle import ExponentialMechanismDpEvent

EPS = 2.0


def _regression(n=8000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, size=(n, 4))
    a = rng.integers(0, 2, n)
    y = X @ np.array([0.6, -0.4, 0.3, 0.2]) + 0.2 * a + 0.1 * rng.normal(size=n)
    return X, y, a


def _em_events(event):
    if isinstance(event, ComposedDpEvent):
        return [e for sub in event.events for e in _em_events(sub)]
    return [event] if isinstance(event, ExponentialMechanismDpEvent) else []


@pytest.mark.parametrize("solver", ["noisy-sgda", "dp-smd"])
def test_estimates_are_composed_and_inside_the_request(solver):
    X, y, a = _regression()
    reg = MinimaxRegressor(
        epsilon=EPS,
        groups=[0, 1],
        solver=solver,
        random_state=0,
        feature_centring=None,  # its draws: test_minimax_centring.py
        feature_balance=None,
    ).fit(X, y, sensitive_features=a)
    plan = S.plan_estimates(EPS, X.shape[0], share=0.05, rows=True, targets=1)
    assert plan.row_epsilon is not None and plan.target_epsilon is not None
    # one row-scale draw and TARGET_DRAWS target draws, then the solver's
    draws = plan.events()
    assert len(draws) == 1 + S.TARGET_DRAWS
    assert isinstance(reg.dp_event_, ComposedDpEvent)
    assert reg.dp_event_.events[: len(draws)] == draws
    assert len(reg.dp_event_.events) == len(draws) + 1
    assert sum(e.epsilon for e in draws) == pytest.approx(0.05 * EPS)
    assert reg.epsilon_ <= EPS + 1e-12
    # the solver ran on the rest: its own epsilon is what is left
    assert reg.epsilon_ - plan.epsilon <= EPS * 0.95 + 1e-9
    report = reg.privacy_report()
    assert report.epsilon == reg.epsilon_ and report.dp_event == reg.dp_event_
    assert "5.0% of epsilon" in report.estimates
    assert "target_bound" in report.hyperparameters
    low, high = reg.target_range_
    assert low < np.median(y) < high


def test_model_is_mapped_back_to_the_users_units(monkeypatch):
    """The auto fit is the explicit fit on ``(clip(y) - c) / s``, mapped back."""
    X, y, a = _regression(seed=1)
    low, high = -0.5, 1.5
    monkeypatch.setattr(
        S, "private_target_range", lambda y, eps, rng, *plan, **kw: (low, high)
    )
    auto = MinimaxRegressor(
        epsilon=EPS, groups=[0, 1], feature_scale=None, random_state=3
    ).fit(X, y, sensitive_features=a)
    plan = S.plan_estimates(EPS, X.shape[0], share=0.05, rows=False, targets=1)
    c, s = (low + high) / 2, (high - low) / 2 / S.TARGET_HALF_RANGE
    t = S.TARGET_HALF_RANGE
    yt = np.clip((np.clip(y, low, high) - c) / s, -t, t)
    ref = MinimaxRegressor(
        epsilon=EPS - plan.epsilon,
        groups=[0, 1],
        feature_scale=None,
        target_bound=S.TARGET_HALF_RANGE,
        random_state=3,
    ).fit(X, yt, sensitive_features=a)
    np.testing.assert_allclose(auto.coef_, s * ref.coef_, rtol=1e-12)
    assert auto.intercept_ == pytest.approx(c + s * ref.intercept_, rel=1e-12)
    assert auto.target_range_ == (low, high)
    # predictions are clipped to the (released) range
    far = np.full((1, 4), 1e3)
    assert low <= auto.predict(far)[0] <= high
    basic = ref.epsilon_ + plan.epsilon
    accounted = composed_epsilon([auto.dp_event_], auto.delta_)
    assert auto.epsilon_ == pytest.approx(min(basic, accounted))
    assert auto.epsilon_ <= EPS


@pytest.mark.parametrize("k, shift", [(1e5, 0.0), (1e-3, 0.0), (1e4, 1e9)])
def test_target_in_large_units_keeps_r2(k, shift):
    X, y, a = _regression(seed=2)
    Xt, yt, at = _regression(n=2000, seed=3)

    def r2(scale, offset, **kw):
        reg = MinimaxRegressor(epsilon=EPS, groups=[0, 1], random_state=0, **kw)
        reg.fit(X, y * scale + offset, sensitive_features=a)
        return r2_score(yt * scale + offset, reg.predict(Xt)), reg

    base, _ = r2(1.0, 0.0)
    moved, reg = r2(k, shift)
    assert base > 0.7
    assert abs(moved - base) < 0.05
    low, high = reg.target_range_
    assert low < np.median(y) * k + shift < high
    # the old public default (targets clipped to -+1) cannot fit them
    old, _ = r2(k, shift, target_bound=1.0)
    assert old < 0.0


@pytest.mark.parametrize("solver", ["noisy-sgda", "dp-smd"])
def test_explicit_bounds_estimate_nothing(solver, monkeypatch):
    """Explicit target_bound and feature_scale=None: no draw, no budget share."""
    X, y, a = _regression(seed=4)

    def boom(*args, **kwargs):
        raise AssertionError("estimated although explicit")

    monkeypatch.setattr(S, "private_target_range", boom)
    monkeypatch.setattr(S, "bin_quantile", boom)
    fits = [
        MinimaxRegressor(
            epsilon=EPS,
            groups=[0, 1],
            solver=solver,
            target_bound=1.0,
            feature_scale=None,
            scale_share=share,
            random_state=5,
        ).fit(X, y, sensitive_features=a)
        for share in (0.05, 0.5)
    ]
    np.testing.assert_array_equal(fits[0].coef_, fits[1].coef_)
    assert fits[0].intercept_ == fits[1].intercept_
    assert fits[0].epsilon_ == fits[1].epsilon_
    assert fits[0].privacy_report().estimates == ""
    assert fits[0].target_range_ is None and fits[0].feature_scale_ == 1.0


def test_epsilon_inf_and_small_n_say_what_they_did():
    X, y, a = _regression(seed=5)
    inf = MinimaxRegressor(epsilon=math.inf, groups=[0, 1], random_state=0)
    inf.fit(X, 1e5 * y, sensitive_features=a)
    assert "not private" in inf.privacy_report().hyperparameters["target_bound"]
    assert _em_events(inf.dp_event_) == []
    small = MinimaxRegressor(epsilon=1.0, groups=[0, 1], random_state=0)
    # the fallback clip at -+ 1 is said as a warning too (as Ridge's is)
    with pytest.warns(UtilityWarning, match="target range was not estimated"):
        small.fit(X[:300], y[:300], sensitive_features=a[:300])
    note = small.privacy_report().hyperparameters["target_bound"]
    assert "not estimated" in note and small.target_range_ is None
    assert small.privacy_report().estimates == ""
    assert small.epsilon_ <= 1.0


def test_classifier_feature_scale_is_private_and_invariant():
    rng = np.random.default_rng(6)
    n = 6000
    X = rng.normal(size=(n, 5))
    a = rng.integers(0, 2, n)
    y = (X @ np.linspace(-1, 1.5, 5) + 0.3 * rng.normal(size=n) > 0).astype(int)
    scores, scales = [], []
    for k in (1.0, 100.0, 0.01):
        clf = MinimaxLogisticRegression(
            epsilon=1.0,
            classes=[0, 1],
            groups=[0, 1],
            random_state=0,
            feature_centring=None,  # the row unit alone
            feature_balance=None,
        ).fit(k * X, y, sensitive_features=a)
        scores.append(clf.score(k * X, y))
        scales.append(clf.feature_scale_)
        assert len(_em_events(clf.dp_event_)) == 1 and clf.epsilon_ <= 1.0
    assert max(scores) - min(scores) < 0.03, scores
    assert scales[1] / scales[0] == pytest.approx(100.0, rel=0.1)
    assert scales[2] / scales[0] == pytest.approx(0.01, rel=0.1)
    # without it, the features x100 are clipped to -+1: a different model
    raw = MinimaxLogisticRegression(
        epsilon=1.0, classes=[0, 1], groups=[0, 1], random_state=0, feature_scale=None
    ).fit(100 * X, y, sensitive_features=a)
    assert raw.feature_scale_ == 1.0 and _em_events(raw.dp_event_) == []


def test_row_scale_is_the_median_largest_coordinate_at_feature_bound():
    """The minimax estimators clip every coordinate of ``x / s`` at
    ``feature_bound``: ``s`` is a private median of each row's largest
    ``|x_j|`` over ``feature_bound`` (was: the L2 median over 2.95, which
    clipped dense low-dimensional rows: R^2 0.82 here)."""
    rng = np.random.default_rng(11)
    n = 5000
    X = rng.uniform(-1, 1, (n, 3))
    a = rng.integers(0, 2, n)
    y = 0.5 * X[:, 0] - 0.3 * X[:, 1] + 0.1 * rng.normal(size=n)
    median_linf = float(np.median(np.abs(X).max(axis=1)))
    for bound in (1.0, 2.0):
        reg = MinimaxRegressor(
            epsilon=1.0, groups=[0, 1], random_state=0, feature_bound=bound
        ).fit(X, y, sensitive_features=a)
        # within a grid bin (about 4.4%) of the exact median, and private
        assert reg.feature_scale_ == pytest.approx(median_linf / bound, rel=0.05)
        assert "private median row max |x_j|" in reg.hyperparameters_["feature_scale"]
    assert S.row_max_abs(X) == pytest.approx(np.abs(X).max(axis=1))
    sparse = S.row_max_abs(sp.csr_matrix(-X))
    assert sparse == pytest.approx(np.abs(X).max(axis=1))
    reg = MinimaxRegressor(epsilon=1.0, groups=[0, 1], random_state=0).fit(
        X, y, sensitive_features=a
    )
    assert reg.score(X, y) > 0.88


def test_nonprivate_fit_is_the_same_at_any_feature_scale():
    """``epsilon = inf``: ``s`` is the (grid bin of the) 90th percentile of
    each row's largest ``|x_j|`` over ``feature_bound``, read exactly; the
    fit is then the same at any feature scale (``s = 1`` before: ``X x
    0.01`` fitted the majority class, ``X x 100`` was clipped to ``-+1``)."""
    rng = np.random.default_rng(12)
    n = 4000
    X = rng.normal(size=(n, 5))
    a = rng.integers(0, 2, n)
    y = (X @ np.linspace(-1, 1.5, 5) + 0.3 * rng.normal(size=n) > 0).astype(int)
    q90 = float(np.quantile(np.abs(X).max(axis=1), 0.9))
    preds = []
    for k in (1.0, 0.01, 100.0):
        clf = MinimaxLogisticRegression(
            epsilon=math.inf, classes=[0, 1], groups=[0, 1], random_state=0
        ).fit(k * X, y, sensitive_features=a)
        assert clf.feature_scale_ == pytest.approx(k * q90, rel=0.05)
        assert "90th percentile row max |x_j|" in clf.hyperparameters_["feature_scale"]
        assert _em_events(clf.dp_event_) == []
        preds.append(clf.predict(k * X))
        assert clf.score(k * X, y) > 0.9
    assert (preds[0] == preds[1]).mean() > 0.99 and (preds[0] == preds[2]).mean() > 0.99
    # the regressor's features x 100 no longer clipped (nor diverge)
    Xr, yr, ar = _regression(n=4000, seed=13)
    for k in (0.01, 100.0):
        reg = MinimaxRegressor(epsilon=math.inf, groups=[0, 1], random_state=0)
        assert reg.fit(k * Xr, yr, sensitive_features=ar).score(k * Xr, yr) > 0.9


@pytest.mark.parametrize("k", [1.0, 1e13])
def test_a_row_scale_beyond_the_grid_warns(k):
    """The minimax row statistic (each row's largest |x_j|) beyond the private
    grid: the fit says so (from the released estimate), and only then."""
    import warnings

    from dpestim import UtilityWarning

    X, y, a = _regression(n=3000, seed=2)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        MinimaxRegressor(epsilon=EPS, groups=[0, 1], random_state=0).fit(
            k * X, y, sensitive_features=a
        )
    grid = [
        str(w.message)
        for w in rec
        if issubclass(w.category, UtilityWarning) and "scale grid" in str(w.message)
    ]
    assert len(grid) == (1 if k > 1e12 else 0)
    if grid:
        assert "largest |x_j|" in grid[0] and "Rescale X" in grid[0]
