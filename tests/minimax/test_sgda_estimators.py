"""The minimax / fair estimators on their default solver (noisy-sgda), and the
private threshold post-processing."""

import math
import warnings
import zlib

import numpy as np
import pytest
from scipy.special import expit
from sklearn.linear_model import LogisticRegression as SkLR

from dpestim import (
    FairLogisticRegression,
    LogisticRegression,
    MinimaxLogisticRegression,
    MinimaxRegressor,
    PrivacyBudgetWarning,
)
from dpestim.postprocessing import PrivateThresholdOptimizer
from dpestim.solvers import NoisySGDA

DELTA = 1e-6


def _data(n, seed, minority=0.3):
    """Two groups with different true models; the group is a feature."""
    rng = np.random.default_rng(seed)
    a = (rng.random(n) < minority).astype(int)
    X = np.column_stack([rng.uniform(-1, 1, (n, 3)), a])
    logit = np.where(a == 1, 3 * X[:, 1] - 0.5, 3 * X[:, 0] + 0.5)
    y = (rng.random(n) < expit(logit)).astype(int)
    return X, y, a


def _group_logloss(clf, X, y, a):
    p = np.clip(clf.predict_proba(X)[:, 1], 1e-12, 1 - 1e-12)
    ll = -(y * np.log(p) + (1 - y) * np.log(1 - p))
    return [ll[a == g].mean() for g in (0, 1)]


def _dp_difference(pred, a):
    return abs(pred[a == 0].mean() - pred[a == 1].mean())


def test_minimax_nonprivate_limit_matches_the_weighted_reference():
    """epsilon = inf: worst-group risk within 0.01 of the exact minimax value.

    Reference: ``max_lam min_theta lam R_1 + (1 - lam) R_0`` by scikit-learn
    weighted logistic regressions over a grid of ``lam`` (weak duality: each
    lam gives a lower bound, the best one is the minimax value).
    """
    X, y, a = _data(6000, zlib.crc32(b"mm-inf"))
    clf = MinimaxLogisticRegression(
        epsilon=math.inf, classes=[0, 1], groups=[0, 1], random_state=0,
        solver=NoisySGDA(max_iter=30),
    ).fit(X, y, sensitive_features=a)  # fmt: skip
    worst = max(_group_logloss(clf, X, y, a))
    n0, n1 = np.bincount(a)
    lower = -np.inf
    for lam in np.linspace(0, 1, 41):
        w = np.where(a == 1, lam / n1, (1 - lam) / n0) * len(y)
        m = SkLR(C=1e4, max_iter=2000).fit(X, y, sample_weight=w)
        r = _group_logloss(m, X, y, a)
        lower = max(lower, lam * r[1] + (1 - lam) * r[0])
    plain = SkLR(C=1e4, max_iter=2000).fit(X, y)
    assert worst <= lower + 0.01
    assert worst < max(_group_logloss(plain, X, y, a)) - 0.01  # it does something


def test_minimax_private_beats_the_average_model_on_the_worst_group():
    X, y, a = _data(20000, zlib.crc32(b"mm-priv"), minority=0.2)
    Xt, yt, at = _data(20000, zlib.crc32(b"mm-priv-test"), minority=0.2)
    mm = MinimaxLogisticRegression(
        epsilon=1.0, delta=DELTA, classes=[0, 1], groups=[0, 1], random_state=0
    ).fit(X, y, sensitive_features=a)
    lr = LogisticRegression(
        solver="dp-sgd", epsilon=1.0, delta=DELTA, classes=[0, 1], random_state=0
    ).fit(X, y)
    assert mm.epsilon_ <= 1.0
    assert max(_group_logloss(mm, Xt, yt, at)) < max(_group_logloss(lr, Xt, yt, at))


def test_fair_nonprivate_limit_removes_the_rate_gap():
    X, y, a = _data(8000, zlib.crc32(b"fair-inf"))
    kw = dict(classes=[0, 1], groups=[0, 1], random_state=0)
    fair = FairLogisticRegression(epsilon=math.inf, **kw).fit(
        X, y, sensitive_features=a
    )
    plain = SkLR(C=1e4, max_iter=2000).fit(X, y)
    gap_plain = _dp_difference(plain.predict(X), a)
    assert gap_plain > 0.1
    assert _dp_difference(fair.predict(X), a) < 0.02
    # equalized odds: the TPR / FPR gaps shrink too
    eo = FairLogisticRegression(
        epsilon=math.inf, constraint="equalized_odds", **kw
    ).fit(X, y, sensitive_features=a)
    pred = eo.predict(X)

    def eo_gap(p):
        return max(
            abs(p[(a == 0) & (y == c)].mean() - p[(a == 1) & (y == c)].mean())
            for c in (0, 1)
        )

    assert eo_gap(pred) < 0.5 * eo_gap(plain.predict(X))


def test_fair_private_reduces_the_rate_gap_and_spends_the_budget():
    X, y, a = _data(20000, zlib.crc32(b"fair-priv"))
    fair = FairLogisticRegression(
        epsilon=1.0, delta=DELTA, classes=[0, 1], groups=[0, 1], random_state=0
    ).fit(X, y, sensitive_features=a)
    assert 0.9 < fair.epsilon_ <= 1.0  # the whole fit's (tighter) bound
    assert fair.privacy_report().neighbouring == "add_or_remove_one"
    plain = SkLR(C=1e4, max_iter=2000).fit(X, y)
    assert _dp_difference(fair.predict(X), a) < 0.5 * _dp_difference(
        plain.predict(X), a
    )
    assert fair.multipliers_.shape == (4,)  # (+D_g, -D_g) per group


def test_regressor_nonprivate_limit():
    rng = np.random.default_rng(zlib.crc32(b"reg"))
    X = rng.uniform(-1, 1, (5000, 3))
    a = rng.integers(0, 2, 5000)
    y = 0.5 * X[:, 0] - 0.3 * X[:, 1]
    reg = MinimaxRegressor(epsilon=math.inf, groups=[0, 1], random_state=0).fit(
        X, y, sensitive_features=a
    )
    assert reg.score(X, y) > 0.99


def test_regressor_nonprivate_limit_on_long_rows():
    """Rows of norm about 3 sharing one direction (as Adult's one-hot rows
    with their intercept column): the unclipped non-private steps of 0.5
    diverged ("The fit diverged"); the step is now at most 2 / (mean
    squared row norm)."""
    rng = np.random.default_rng(zlib.crc32(b"long rows"))
    n = 4000
    X = rng.uniform(0.5, 1.0, (n, 10))
    a = rng.integers(0, 2, n)
    y = X @ rng.normal(size=10) + 0.05 * rng.normal(size=n)
    reg = MinimaxRegressor(epsilon=math.inf, groups=[0, 1], random_state=0).fit(
        X, y, sensitive_features=a
    )
    assert reg.score(X, y) > 0.9


def test_small_group_warns_with_the_number_needed_and_no_private_count():
    X, y, a = _data(3000, zlib.crc32(b"small"), minority=0.004)
    true_count = int(a.sum())
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        # feature_scale=None: dp_event_ is the solver's (read by _plan below)
        clf = MinimaxLogisticRegression(
            epsilon=0.5,
            delta=DELTA,
            classes=[0, 1],
            groups=[0, 1],
            random_state=0,
            feature_scale=None,
        ).fit(X, y, sensitive_features=a)
    msgs = [str(w.message) for w in rec if w.category is PrivacyBudgetWarning]
    assert any("fewer rows than the" in m for m in msgs), msgs
    msg = next(m for m in msgs if "fewer rows" in m)
    needed = int(msg.split("fewer rows than the ")[1].split()[0])
    assert needed > 10
    # the number needed depends on public quantities only: same with other data
    X2, y2, a2 = _data(3000, zlib.crc32(b"small2"), minority=0.5)
    sgda = clf.solver_
    p1 = sgda.resolve(0.5, DELTA, _plan(clf, 3000))
    assert p1["max_iter"] == clf.n_iter_
    assert str(true_count) not in msg.replace(str(needed), "")
    assert any("fewer rows" in w for w in clf.privacy_report().warnings)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyBudgetWarning)
        MinimaxLogisticRegression(
            epsilon=0.5, delta=DELTA, classes=[0, 1], groups=[0, 1], random_state=0
        ).fit(X2, y2, sensitive_features=a2)


def _plan(clf, n):
    from dpestim.solvers.saddle.sgda import SGDAPlan

    return SGDAPlan(n, clf.n_features_in_ + 1, 2, clf.dp_event_.events[0])


# -- post-processing --


def test_threshold_optimizer_equalises_rates_at_the_nonprivate_limit():
    X, y, a = _data(8000, zlib.crc32(b"pp-inf"))
    base = LogisticRegression(epsilon=math.inf, classes=[0, 1], random_state=0).fit(
        X, y
    )
    for constraint in ("demographic_parity", "equalized_odds"):
        pp = PrivateThresholdOptimizer(
            base, constraint=constraint, epsilon=math.inf, groups=[0, 1],
            random_state=0,
        ).fit(X, y, sensitive_features=a)  # fmt: skip
        P = pp.positive_probability_
        bins = pp._bins(X)
        rate = [P[g, bins[a == g]].mean() for g in (0, 1)]
        if constraint == "demographic_parity":
            assert abs(rate[0] - rate[1]) < 1e-6
        else:
            for c in (0, 1):
                r = [P[g, bins[(a == g) & (y == c)]].mean() for g in (0, 1)]
                assert abs(r[0] - r[1]) < 1e-6
    pred = pp.predict(X, sensitive_features=a)
    assert set(np.unique(pred)) <= {0, 1}


def test_threshold_optimizer_private_composes_and_needs_the_group():
    X, y, a = _data(20000, zlib.crc32(b"pp-priv"))
    base = LogisticRegression(
        solver="dp-sgd", epsilon=0.8, delta=DELTA, classes=[0, 1], random_state=0
    )
    pp = PrivateThresholdOptimizer(
        base, epsilon=0.3, delta=DELTA, groups=[0, 1], random_state=0
    ).fit(X, y, sensitive_features=a)
    assert pp.estimator_ is not base and pp.estimator_.epsilon_ <= 0.8
    # RDP composition is tighter than the sum, never looser
    assert pp.epsilon_ <= 0.8 + 0.3 + 1e-9
    assert pp.epsilon_ > 0.8
    assert pp.delta_ == pytest.approx(2 * DELTA)
    assert "histogram" in str(pp.privacy_report())
    plain = SkLR(C=1e4, max_iter=2000).fit(X, y)
    pred = pp.predict(X, sensitive_features=a)
    assert _dp_difference(pred, a) < 0.3 * _dp_difference(plain.predict(X), a)
    with pytest.raises(TypeError):
        pp.predict(X)
    with pytest.raises(ValueError, match="not in groups"):
        pp.predict(X, sensitive_features=a + 7)
    # deterministic given random_state
    again = PrivateThresholdOptimizer(
        base, epsilon=0.3, delta=DELTA, groups=[0, 1], random_state=0
    ).fit(X, y, sensitive_features=a)
    np.testing.assert_array_equal(again.positive_probability_, pp.positive_probability_)


def test_histogram_sensitivity_on_random_neighbours():
    """One record added or removed changes one (group, label, bin) count by 1."""
    rng = np.random.default_rng(zlib.crc32(b"hist"))
    X, y, a = _data(500, 0)
    base = LogisticRegression(epsilon=math.inf, classes=[0, 1]).fit(X, y)
    pp = PrivateThresholdOptimizer(base, epsilon=math.inf, groups=[0, 1], n_bins=50)
    pp.estimator_ = base
    pp.n_bins_ = pp._resolve_n_bins(500, 2, 0.0)

    def hist(idx):
        cell = ((a[idx] * 2 + y[idx]) * pp.n_bins_) + pp._bins(X[idx])
        return np.bincount(cell, minlength=4 * pp.n_bins_)

    for _ in range(20):
        i = rng.integers(0, 500)
        rest = np.delete(np.arange(500), i)
        diff = hist(np.arange(500)) - hist(rest)
        assert np.linalg.norm(diff) == 1.0 and np.abs(diff).sum() == 1


def test_threshold_optimizer_on_a_replace_one_model_uses_basic_composition():
    X, y, a = _data(3000, zlib.crc32(b"pp-smd"))
    base = MinimaxLogisticRegression(
        epsilon=1.0, delta=DELTA, classes=[0, 1], groups=[0, 1], solver="dp-smd",
        random_state=0,
    ).fit(X, y, sensitive_features=a)  # fmt: skip
    pp = PrivateThresholdOptimizer(
        base, epsilon=0.5, delta=DELTA, groups=[0, 1], random_state=0
    ).fit(X, y, sensitive_features=a)
    assert pp.estimator_ is base  # prefit: used as is
    report = pp.privacy_report()
    assert report.neighbouring == "replace_one"
    assert pp.epsilon_ == pytest.approx(base.epsilon_ + 0.5)
    assert "basic composition" in report.composition
