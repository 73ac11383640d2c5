"""The policy step: private scale estimates inside fit (issue 25, issue 24 item 7)."""

import math
import warnings
import zlib

import numpy as np
import pytest
import scipy.sparse as sp
from dp_accounting import ComposedDpEvent, LaplaceDpEvent

from dpestim import LinearSVC, LogisticRegression, Ridge
from dpestim.exceptions import (
    BudgetExceededError,
    PrivacyLeakWarning,
    UtilityWarning,
)
from dpestim.model_selection import PrivacyBudget
from dpestim.preprocessing import _fit_scales as S
from dpestim.preprocessing import _target_range as T
from dpestim.solvers.saddle import ExponentialMechanismDpEvent


def _classification(n=4000, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    w = np.linspace(-1.0, 1.5, d)
    y = (X @ w + 0.5 * rng.normal(size=n) > 0).astype(int)
    return X, y


def _regression(n=5000, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / 2.0
    y = X @ np.linspace(-1.0, 1.5, d) + 0.3 * rng.normal(size=n)
    return X, y


# -- the mechanism -------------------------------------------------------------


@pytest.mark.parametrize("relation", ["add_remove", "replace"])
@pytest.mark.parametrize("quantile", [0.1, 0.5, 0.75])
@pytest.mark.parametrize("signed", [False, True])
def test_bin_utility_sensitivity_on_neighbouring_datasets(relation, quantile, signed):
    """Every bin's utility moves by at most 1 between neighbouring datasets."""
    rng = np.random.default_rng(zlib.crc32(f"{relation} {quantile} {signed}".encode()))
    edges = S.signed_edges() if signed else S.positive_edges()
    worst = 0.0
    for _ in range(200):
        n = int(rng.integers(1, 40))
        # values on the edges themselves, inside bins and beyond the grid
        pool = np.concatenate([edges[:: max(1, len(edges) // 50)], [0.0, 1e30]])
        if signed:
            pool = np.concatenate([pool, -pool])
        v = rng.choice(pool, size=n) * rng.choice([1.0, 1.03], size=n)
        if relation == "add_remove":
            extra = rng.choice(pool) * rng.choice([1.0, 1.5])
            w = np.append(v, extra)
        else:
            w = v.copy()
            w[rng.integers(n)] = rng.choice(pool) * rng.choice([1.0, 0.97])
        du = np.abs(
            S.bin_utility(v, quantile, edges) - S.bin_utility(w, quantile, edges)
        )
        worst = max(worst, float(du.max()))
    assert worst <= 1.0 + 1e-12
    assert worst >= 0.5  # the check can fail: utilities do move


@pytest.mark.parametrize("statistic", [S.row_norms, S.row_max_abs])
def test_row_scale_utility_sensitivity_with_empty_rows(statistic):
    """The row scale's values are the nonzero rows' statistic: every bin's
    utility still moves by at most 1 when a row (empty or not) is added,
    removed or replaced, including an empty row becoming nonzero."""
    rng = np.random.default_rng(zlib.crc32(statistic.__name__.encode()))
    edges = S.positive_edges()
    worst = 0.0
    for _ in range(200):
        n = int(rng.integers(1, 30))
        X = rng.normal(size=(n, 3)) * 10.0 ** rng.integers(-2, 3)
        X[rng.random(n) < rng.random()] = 0.0  # up to every row empty
        row = rng.normal(size=(1, 3)) * rng.choice([0.0, 1.0, 100.0])
        move = rng.integers(3)
        if move == 0:
            Y = np.vstack([X, row])  # add
        elif move == 1:
            Y = np.delete(X, rng.integers(n), axis=0)  # remove
        else:
            Y = X.copy()
            Y[rng.integers(n)] = row  # replace
        for a, b in ((X, Y), (sp.csr_matrix(X), sp.csr_matrix(Y))):
            du = np.abs(
                S.bin_utility(S.nonzero_row_statistic(a, statistic), 0.5, edges)
                - S.bin_utility(S.nonzero_row_statistic(b, statistic), 0.5, edges)
            )
            worst = max(worst, float(du.max()))
    assert worst <= 1.0 + 1e-12
    assert worst >= 0.5


@pytest.mark.parametrize("empty", [0.0, 0.7])
def test_empty_rows_do_not_set_the_row_scale(empty):
    """Sparse data with most rows empty: the scale is the nonzero rows' median.

    Before, with over half the rows empty the median row norm was 0 and the
    draw landed at the grid's lowest edge (the rows then scaled up by about
    1e12, with a ``UtilityWarning``).
    """
    rng = np.random.default_rng(5)
    X, y = _classification(n=8000, d=5)
    X = X * 30.0
    X[rng.random(X.shape[0]) < empty] = 0.0
    Xs = sp.csr_matrix(X)
    median = np.median(np.linalg.norm(X[np.any(X != 0, axis=1)], axis=1))
    for seed in range(3):
        est = LogisticRegression(classes=[0, 1], epsilon=1.0, random_state=seed)
        est.fit(Xs, y)
        ratio = est.feature_scale_ * S.ROW_NORM_TARGET / median
        assert abs(math.log2(ratio)) <= 0.5, ratio
    exact = LogisticRegression(classes=[0, 1], epsilon=math.inf, random_state=0)
    exact.fit(Xs, y)
    ratio = exact.feature_scale_ * S.ROW_NORM_TARGET / median
    assert abs(math.log2(ratio)) <= 1 / 16


def test_all_rows_empty_fit_without_error():
    """No nonzero row: the draw is uniform over the grid (private) or the
    grid's lowest edge (non-private); either way the fit completes."""
    X = np.zeros((300, 4))
    y = np.arange(300) % 2
    for eps in (1.0, math.inf):
        est = LogisticRegression(classes=[0, 1], epsilon=eps, random_state=0)
        est.fit(X, y)
        assert np.isfinite(est.coef_).all()
        assert est.predict(X).shape == (300,)


def test_bin_quantile_finds_the_median_and_edges_clamp():
    rng = np.random.default_rng(1)
    values = np.full(2000, 3.0)
    est = S.bin_quantile(values, 0.5, 1.0, S.positive_edges(), rng)
    assert est == pytest.approx(3.0, rel=2.0 ** (1 / S.BINS_PER_OCTAVE) - 1)
    huge = S.bin_quantile(np.full(2000, 1e30), 0.5, 1.0, S.positive_edges(), rng)
    assert huge == S.positive_edges()[-1]
    assert S.beyond_range(huge) and not S.beyond_range(est)
    tiny = S.bin_quantile(np.full(2000, 1e-30), 0.5, 1.0, S.positive_edges(), rng)
    assert tiny == S.positive_edges()[0] and S.beyond_range(tiny)


@pytest.mark.parametrize("value", [1e-30, 1e-14, 3.0, 1e14, 1e30])
def test_bin_quantile_limit_is_exact_beyond_the_grid(value):
    """epsilon = inf: the best bin's midpoint inside the grid (unchanged), the
    exact quantile in an open end bin (not the grid's edge)."""
    values = value * np.linspace(1.0, 2.0, 101)
    est = S.bin_quantile(values, 0.5, math.inf, S.positive_edges(), None)
    if S.beyond_range(value):
        assert est == pytest.approx(1.5 * value, rel=1e-12)
    else:
        assert est == pytest.approx(1.5 * value, rel=2.0 ** (1 / S.BINS_PER_OCTAVE) - 1)
        assert est != pytest.approx(1.5 * value, rel=1e-9)  # a bin's midpoint
    # an all-zero statistic keeps the edge (a scale of 0 would divide by 0)
    zero = S.bin_quantile(np.zeros(5), 0.5, math.inf, S.positive_edges(), None)
    assert zero == S.positive_edges()[0]


def _grid_warnings(record):
    return [
        str(w.message)
        for w in record
        if issubclass(w.category, UtilityWarning) and "scale grid" in str(w.message)
    ]


@pytest.mark.parametrize("k", [1e-14, 1e13])
def test_a_scale_beyond_the_grid_warns_and_the_limit_is_invariant(k):
    """A private row scale beyond the grid is the grid's edge: the fit says so
    (from the released estimate only); inside the grid it is silent, and the
    non-private fit reads the exact scale, so it is the fit at X x 1."""
    X, y = _regression(n=2000)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        Ridge(epsilon=1.0, random_state=0).fit(X * k, y)
    (msg,) = _grid_warnings(rec)
    assert "row norm" in msg and "Rescale X" in msg
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        Ridge(epsilon=1.0, random_state=0).fit(X, y)
        LogisticRegression(epsilon=1.0, random_state=0, classes=[0, 1]).fit(
            *_classification(n=2000)
        )
    assert _grid_warnings(rec) == []
    ref = Ridge(epsilon=math.inf).fit(X, y).score(X, y)
    assert Ridge(epsilon=math.inf).fit(X * k, y).score(X * k, y) == pytest.approx(
        ref, abs=1e-3
    )


def test_a_target_beyond_the_grid_warns():
    X, y = _regression(n=2000)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        Ridge(epsilon=1.0, random_state=0).fit(X, y * 1e14)
    (msg,) = _grid_warnings(rec)
    assert "spread of the target" in msg and "Rescale y" in msg


def test_plan_is_public_and_drops_infeasible_draws():
    plan = S.plan_estimates(1.0, 30000, share=0.05, rows=True, targets=0)
    assert plan.row_epsilon == pytest.approx(0.05) and plan.target_epsilon is None
    assert plan.epsilon == pytest.approx(0.05)
    small = S.plan_estimates(1.0, 200, share=0.05, rows=True, targets=1)
    assert small.events() == [] and "feature_scale" in small.notes
    assert "y_bound" in small.notes
    ridge = S.plan_estimates(1.0, 20000, share=0.05, rows=True, targets=2)
    assert len(ridge.events()) == 1 + 2 * S.TARGET_DRAWS
    assert ridge.epsilon == pytest.approx(0.05)


def test_short_budget_runs_fewer_centre_stages():
    """The centre's stages are the most the (raised) share makes reliable:
    all four where they fit, one at 331 rows and epsilon 1 (AdaSSP's cap),
    none when even one does not fit (the range is then dropped)."""
    full = S.plan_estimates(2.0, 331, share=0.05, rows=True, targets=1, max_share=0.5)
    assert full.centre_stages == S.CENTRE_STAGES
    assert len(full.events()) == 1 + S.TARGET_DRAWS
    short = S.plan_estimates(1.0, 331, share=0.05, rows=True, targets=1, max_share=0.5)
    assert short.centre_stages == 1 and short.target_epsilon is not None
    assert len(short.events()) == 1 + 2
    assert short.epsilon <= 0.5 + 1e-12
    # each draw of the short plan is reliable at its epsilon
    n_signed = S.signed_edges().shape[0] + 1
    assert S.feasible(short.target_epsilon, 331, 0.5, n_signed)
    # two stages would not have been
    assert S.feasible_share(1.0, 331, rows=True, targets=1, stages=2) > 0.5
    none = S.plan_estimates(0.5, 331, share=0.05, rows=True, targets=1, max_share=0.5)
    assert none.target_epsilon is None and "y_bound" in none.notes
    # a share that affords every stage is not cut (dp-sgd's plan at large n)
    big = S.plan_estimates(1.0, 20000, share=0.05, rows=True, targets=1)
    assert big.centre_stages == S.CENTRE_STAGES


def test_one_stage_range_covers_an_offset_target(monkeypatch):
    """One centre stage: the centre is within the grid's resolution of the
    median and the spread's draw covers that error, so the range still holds
    most of a target far from 0 (diabetes-like: 150 -+ 60)."""
    y = 150.0 + 60.0 * np.random.default_rng(0).standard_normal(331)
    calls = []
    real = T.bin_quantile
    monkeypatch.setattr(
        T, "bin_quantile", lambda *a, **k: calls.append(1) or real(*a, **k)
    )
    low, high = S.private_target_range(y, 0.17, np.random.default_rng(1), 1)
    assert len(calls) == 2  # one centre stage and the spread
    inside = np.mean((y >= low) & (y <= high))
    assert inside > 0.99 and high - low < 20 * 60.0


# -- the estimators -----------------------------------------------------------


def test_budget_share_is_inside_the_request_and_composed():
    X, y = _classification()
    clf = LogisticRegression(
        utility_check=None, classes=[0, 1], random_state=0, feature_balance=None
    ).fit(X, y)  # the column balance's draws: tested in test_small_data_balance
    assert clf.epsilon_ <= 1.0
    assert isinstance(clf.dp_event_, ComposedDpEvent)
    first, second = clf.dp_event_.events[:2]
    # the share is split with the class histogram (class_prior="auto")
    assert first == ExponentialMechanismDpEvent(0.025)
    assert second == LaplaceDpEvent(1 / 0.025)
    report = clf.privacy_report()
    assert report.dp_event == clf.dp_event_
    assert "5.0% of epsilon=1" in str(report)
    assert "feature_scale" in clf.hyperparameters_
    # the solver's run is calibrated for the rest of the budget
    solver_event = clf.dp_event_.events[2]
    eps_solver = clf.solver_.spent_epsilon(solver_event, 1e-5, accountant="rdp")
    assert eps_solver <= 0.95 + 1e-9
    assert clf.epsilon_ <= eps_solver + 0.05 + 1e-12


def test_budget_is_charged_for_the_estimates():
    X, y = _classification()
    with PrivacyBudget(1.0) as budget:
        LogisticRegression(
            utility_check=None, classes=[0, 1], random_state=0, feature_balance=None
        ).fit(X, y)
    events = [r[0] for r in budget.records]
    assert events[0] == ComposedDpEvent(
        [ExponentialMechanismDpEvent(0.025), LaplaceDpEvent(1 / 0.025)]
    )
    assert budget.spent()[0] <= 1.0
    with PrivacyBudget(1.0), pytest.raises(BudgetExceededError):
        LogisticRegression(utility_check=None, epsilon=0.9, classes=[0, 1]).fit(X, y)
        LogisticRegression(utility_check=None, epsilon=0.9, classes=[0, 1]).fit(X, y)


def test_pure_dp_solver_gets_a_pure_estimate():
    X, y = _classification(n=3000)
    clf = LogisticRegression(
        solver="dp-gd", delta=0.0, classes=[0, 1], random_state=0
    ).fit(X, y)
    assert clf.delta_ == 0.0 and clf.epsilon_ <= 1.0
    assert isinstance(clf.dp_event_.events[0], ExponentialMechanismDpEvent)


@pytest.mark.parametrize("k", [1e-3, 1e3, 2.0**-7])
def test_classifier_accuracy_invariant_to_feature_scale(k):
    """alpha=0: the objective does not depend on the scale, nor should the fit."""
    X, y = _classification()
    kw = dict(classes=[0, 1], alpha=0.0, random_state=0)
    base = LogisticRegression(**kw).fit(X, y).score(X, y)
    scaled = LogisticRegression(**kw).fit(X * k, y).score(X * k, y)
    assert base > 0.85
    assert abs(scaled - base) <= 0.02
    # without the estimate the default rules fail at these scales
    off = LogisticRegression(feature_scale=None, **kw).fit(X * k, y).score(X * k, y)
    assert off < base - 0.02


def test_feature_scale_float_is_public_rescaling():
    X, y = _classification()
    kw = dict(classes=[0, 1], alpha=0.0, random_state=3)
    a = LogisticRegression(feature_scale=None, **kw).fit(X, y)
    b = LogisticRegression(feature_scale=1e3, **kw).fit(X * 1e3, y)
    np.testing.assert_allclose(b.coef_ * 1e3, a.coef_, rtol=1e-9, atol=1e-12)
    assert b.dp_event_ == a.dp_event_ and b.epsilon_ == a.epsilon_


@pytest.mark.parametrize(
    "make",
    [
        lambda **k: LogisticRegression(classes=[0, 1], **k),
        lambda **k: LinearSVC(classes=[0, 1], **k),
    ],
)
def test_epsilon_inf_reads_the_row_scale_exactly(make):
    """The non-private fit is the limit of the private ones at any scale of X.

    ``s`` is the grid bin of the exact median row norm (no event; the note
    says it is not private), ``alpha="auto"`` is ``1e-4 s^2`` in X's units,
    and the fit is the one with that ``s`` given as a public float. Before,
    ``alpha`` was ``1e-4`` in X's units at ``epsilon=inf``: with ``X x
    0.01`` the fit fell to the majority class (private fits did not).
    """
    X, y = _classification(n=500)
    # the row scale alone (the exact centring, on by default, is a step of its
    # own: test_fit_centring)
    kw = dict(epsilon=math.inf, random_state=0, feature_centring=None)
    none = make(feature_scale=None, **kw).fit(X, y)
    assert none.feature_scale_ == 1.0 and "feature_scale" not in none.hyperparameters_
    scores = []
    for k in (0.01, 1.0, 100.0):
        est = make(**kw).fit(X * k, y)
        m = np.median(np.linalg.norm(X * k, axis=1))
        # within half a bin (8 bins per factor 2) of the exact median
        assert abs(math.log2(est.feature_scale_ * S.ROW_NORM_TARGET / m)) <= 1 / 16
        assert "not private" in est.hyperparameters_["feature_scale"]
        assert est.alpha_ == pytest.approx(1e-4 * est.feature_scale_**2)
        assert est.epsilon_ == math.inf
        ref = make(feature_scale=est.feature_scale_, **kw).fit(X * k, y)
        np.testing.assert_array_equal(est.coef_, ref.coef_)
        scores.append(est.score(X * k, y))
    majority = max(np.mean(y), 1 - np.mean(y))
    assert min(scores) > majority + 0.2
    assert max(scores) - min(scores) <= 0.01


def test_alpha_maps_to_the_scaled_units(monkeypatch):
    """With x' = x / s the solver gets alpha' = alpha / s^2 (same objective)."""
    X, y = _classification(n=500)
    seen = []
    orig = LogisticRegression._resolve_plan

    def spy(self, *a, **k):
        plan, hp = orig(self, *a, **k)
        seen.append(plan.alpha)
        return plan, hp

    monkeypatch.setattr(LogisticRegression, "_resolve_plan", spy)
    LogisticRegression(feature_scale=4.0, alpha=1e-2, classes=[0, 1]).fit(X, y)
    LogisticRegression(feature_scale=None, alpha=1e-2, classes=[0, 1]).fit(X, y)
    assert seen == [pytest.approx(1e-2 / 16), 1e-2]


@pytest.mark.parametrize(
    "make",
    [
        lambda **k: LogisticRegression(clip_norm=1.0, classes=[0, 1], **k),
        lambda **k: LinearSVC(clip_norm=2.0, classes=[0, 1], **k),
        lambda **k: Ridge(clip_norm=1.0, y_bound=(-3.0, 3.0), **k),
    ],
)
def test_explicit_parameters_estimate_nothing(make, monkeypatch):
    """Explicit clip_norm (and y_bound): no estimate, the same run as before."""
    X, y = _classification()
    if "Ridge" in repr(make()):
        X, y = _regression()
    ref = make(feature_scale=None, random_state=5).fit(X, y)

    def refuse(*a, **k):
        raise AssertionError("a scale was estimated")

    monkeypatch.setattr(S, "private_row_scale", refuse)
    monkeypatch.setattr(S, "private_target_range", refuse)
    est = make(random_state=5).fit(X, y)
    np.testing.assert_array_equal(est.coef_, ref.coef_)
    np.testing.assert_array_equal(est.intercept_, ref.intercept_)
    assert est.dp_event_ == ref.dp_event_ and est.epsilon_ == ref.epsilon_
    assert not isinstance(est.dp_event_, ComposedDpEvent) or not any(
        isinstance(e, ExponentialMechanismDpEvent) for e in est.dp_event_.events
    )
    assert est.feature_scale_ == 1.0


def _released_numbers(est):
    out = []
    for name, value in vars(est).items():
        if not name.endswith("_") or name.startswith("_"):
            continue
        if isinstance(value, dict):
            value = list(value.values())
        try:
            arr = np.asarray(value, dtype=object).ravel()
        except Exception:  # noqa: BLE001
            continue
        for v in arr:
            if isinstance(v, tuple | list | np.ndarray):
                out.extend(np.asarray(v, dtype=float).ravel().tolist())
            elif isinstance(v, int | float | np.floating):
                out.append(float(v))
            elif isinstance(v, str):
                out.append(v)
    out.append(str(est.privacy_report()))
    return out


def test_ridge_default_does_not_release_the_target_range():
    """Issue 24 item 7: a planted extreme target never comes back."""
    X, y = _regression()
    planted = 987654.321
    y = y.copy()
    y[17] = planted
    y[18] = -planted / 3
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        est = Ridge(random_state=0).fit(X, y)
    low, high = est.y_bound_
    assert high[0] < planted / 1e3 and low[0] > -planted / 3e3
    for v in _released_numbers(est):
        if isinstance(v, str):
            assert "987654" not in v and "329218" not in v
        else:
            assert v != planted and v != -planted / 3
    assert isinstance(est.dp_event_, ComposedDpEvent)
    assert est.epsilon_ <= 1.0


def test_ridge_y_bound_data_is_an_explicit_warned_opt_in():
    X, y = _regression()
    with pytest.warns(PrivacyLeakWarning, match="y_bound='data'"):
        est = Ridge(y_bound="data", random_state=0).fit(X, y)
    assert est.y_bound_[1][0] == y.max()


@pytest.mark.parametrize("k, c", [(1e-3, 0.0), (1e3, 0.0), (1.0, 1e4), (1e3, -1e4)])
def test_ridge_r2_invariant_to_target_scale_and_shift(k, c):
    X, y = _regression()
    base = Ridge(random_state=0).fit(X, y).score(X, y)
    moved = Ridge(random_state=0).fit(X, k * y + c).score(X, k * y + c)
    assert base > 0.7
    assert abs(moved - base) <= 0.05


def test_ridge_small_data_skips_the_estimate_and_says_so():
    X, y = _regression(n=150)
    est = Ridge(random_state=0).fit(X, y)
    assert est.y_bound_ is None
    assert "not estimated" in est.hyperparameters_["y_bound"]
    # no estimate composed in: the event is the solver's alone (which may be a
    # composition itself: "auto" picks adp-sgd for a small Ridge at epsilon 1)
    plain = Ridge(
        solver=est.solver_.name, feature_scale=None, y_bound=None, random_state=0
    ).fit(X, y)
    assert repr(est.dp_event_) == repr(plain.dp_event_)


def test_parameters_are_validated():
    X, y = _classification(n=100)
    for bad in (dict(feature_scale=-1.0), dict(feature_scale="x"), dict(scale_share=0)):
        with pytest.raises(ValueError, match="feature_scale|scale_share"):
            LogisticRegression(classes=[0, 1], **bad).fit(X, y)


def test_sparse_and_float32_rows_are_rescaled_in_their_format():
    import scipy.sparse as sp

    X, y = _classification()
    dense = LogisticRegression(classes=[0, 1], random_state=2).fit(X * 100, y)
    sparse = LogisticRegression(classes=[0, 1], random_state=2).fit(
        sp.csr_matrix(X * 100), y
    )
    # the same private scale (same draws); the sparse solver's noise differs
    assert sparse.feature_scale_ == dense.feature_scale_ > 1
    assert sparse.score(sp.csr_matrix(X * 100), y) > 0.85
    f32 = LogisticRegression(classes=[0, 1], random_state=2).fit(
        (X * 100).astype(np.float32), y
    )
    assert f32.coef_.dtype == np.float32 and f32.feature_scale_ > 1
    assert f32.score((X * 100).astype(np.float32), y) > 0.85


@pytest.mark.parametrize("quantile", [0.5, 0.25])
def test_selection_probabilities_are_epsilon_dp_on_neighbours(quantile):
    """The exact output distribution of one draw, on random neighbours."""
    rng = np.random.default_rng(7)
    edges = S.signed_edges()
    eps = 0.7
    worst = 0.0
    for _ in range(100):
        n = int(rng.integers(2, 30))
        v = rng.normal(size=n) * 10.0 ** rng.integers(-3, 4)
        w = v.copy()
        if rng.random() < 0.5:
            w[rng.integers(n)] = rng.normal() * 1e3  # replace one
        else:
            w = np.append(v, rng.normal() * 1e3)  # add one
        logp = []
        for values in (v, w):
            z = eps * S.bin_utility(values, quantile, edges) / 2.0
            logp.append(z - np.logaddexp.reduce(z))
        worst = max(worst, float(np.abs(logp[0] - logp[1]).max()))
    assert worst <= eps + 1e-9
    assert worst > eps / 4


# -- the target's spread: robust where the budget affords it ----------------------


def test_plan_runs_the_robust_spread_only_where_the_full_plan_affords_it():
    """Two units (the 75th percentile) at large ``epsilon n``; the median
    absolute deviation (one unit) where the budget is short; the events and
    the total follow the units."""
    big = S.plan_estimates(1.0, 20000, share=0.05, rows=True, targets=1)
    assert big.spread_units == 2 and big.centre_stages == S.CENTRE_STAGES
    eps = [e.epsilon for e in big.events()]
    assert eps[1 : 1 + S.CENTRE_STAGES] == [big.target_epsilon] * S.CENTRE_STAGES
    assert eps[-1] == pytest.approx(2 * big.target_epsilon)
    assert big.epsilon == pytest.approx(0.05)
    # each unit is as reliable as a signed median: the spread's 75th
    # percentile at two units has the same min(q, 1 - q) eps as a median at one
    assert S.feasible(big.target_epsilon, 20000, 0.5, S.signed_edges().shape[0] + 1)
    short = S.plan_estimates(2.0, 331, share=0.05, rows=True, targets=1, max_share=0.5)
    assert short.spread_units == 1 and short.target_epsilon is not None
    assert [e.epsilon for e in short.events()][-1] == pytest.approx(
        short.target_epsilon
    )
    assert short.epsilon <= 0.5 * 2.0 + 1e-12
    assert "median absolute deviations" in S.target_note(short)
    assert "75th percentiles" in S.target_note(big)


@pytest.mark.parametrize("seed", range(5))
def test_robust_spread_does_not_collapse_on_a_dominant_value(seed):
    """60% of the targets share one value: the median absolute deviation is 0
    and its range collapses onto that value; the 75th percentile's covers the
    rest of the targets."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(20000) < 0.6, 3.0, 3.0 + rng.exponential(2.0, 20000))
    plan = S.plan_estimates(1.0, 20000, share=0.05, rows=False, targets=1)
    assert plan.spread_units == 2
    low, high = S.private_target_range(
        y, plan.target_epsilon, np.random.default_rng(seed), plan.centre_stages, 2
    )
    # the 75th percentile of |y - 3| is the positive part's 37.5th (0.94): 3 -+ 2.75
    assert low < 3.0 and high > 3.0 + 2.0  # covers most of the positive part
    low1, high1 = S.private_target_range(
        y, plan.target_epsilon, np.random.default_rng(seed), plan.centre_stages, 1
    )
    assert high1 - low1 < 0.1  # the median absolute deviation's collapse
    # the non-private limit is the robust one, read exactly
    elow, ehigh = S.exact_target_range(y)
    m = np.quantile(np.abs(y - np.median(y)), 0.75)
    assert (elow, ehigh) == pytest.approx(
        (3.0 - S.FENCES[2] * m, 3.0 + S.FENCES[2] * m)
    )


def _collapse_warnings(est, X, y):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X, y)
    return [
        w
        for w in caught
        if issubclass(w.category, UtilityWarning) and "collapsed" in str(w.message)
    ]


@pytest.mark.parametrize("mode", [0.0, 1.0])
def test_a_collapsed_target_range_is_warned(mode):
    """Four fifths of the targets share one value (a 0/1 target, either
    way round): the private spread's quantile is 0, the range collapses and
    the fit predicts a constant. With ``epsilon n`` this large the draw
    lands in the grid's lowest bin (or at the centre's own error), below the
    bar, and the fit says so (post-processing of the released spread). At
    small ``epsilon n`` the draw may land anywhere below the rare value's
    deviation and is not always warned (``COLLAPSED``)."""
    rng = np.random.default_rng(zlib.crc32(f"collapse/{mode}".encode()))
    X = rng.normal(size=(30_000, 4))
    rare = X[:, 0] > 0.85  # about 20% of the rows
    y = np.where(rare, 1.0 - mode, mode)
    fit = Ridge(epsilon=1.0, random_state=0)
    caught = _collapse_warnings(fit, X, y)
    assert len(caught) == 1 and "y_bound=(low, high)" in str(caught[0].message)
    low, high = fit.y_bound_
    assert high[0] - low[0] < 2 * T.FENCES[2] * T.COLLAPSED


@pytest.mark.parametrize("k, c", [(1e-3, 0.0), (1e-3, 1e4), (1.0, 1e4)])
def test_a_small_or_shifted_spread_is_not_warned_as_collapsed(k, c):
    """The invariance cells' smallest spread (the target times 1e-3, shifted
    by up to 1e4) is far above the collapse bar: no warning."""
    rng = np.random.default_rng(zlib.crc32(f"no-collapse/{k}/{c}".encode()))
    X = rng.normal(size=(3000, 4))
    y = X @ np.array([1.0, -0.5, 0.25, 0.0]) + 0.5 * rng.normal(size=3000)
    assert not _collapse_warnings(Ridge(epsilon=1.0, random_state=0), X, k * y + c)
