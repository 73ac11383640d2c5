"""alpha="auto" and the small-n share of the private row scale (issue 25, item 2)."""

import math

import numpy as np
import pytest
from dp_accounting import ComposedDpEvent, LaplaceDpEvent
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV

from dpestim import LinearSVC, LogisticRegression, Ridge
from dpestim.model_selection._space import Factor, resolve_relative
from dpestim.preprocessing import _fit_scales as S
from dpestim.solvers import DPGD, DPSGD, ERMPlan
from dpestim.solvers._policy import (
    AUTO_ALPHA,
    ITERATIVE_SCALE_SHARE_CAP,
    ITERATIVE_SQUARED_SHARE_CAP,
)
from dpestim.solvers.saddle import ExponentialMechanismDpEvent


def _classification(n=3000, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X @ np.linspace(-1.0, 1.5, d) + 0.5 * rng.normal(size=n) > 0).astype(int)
    return X, y


def _regression(n=3000, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / 2.0
    return X, X @ np.linspace(-1.0, 1.5, d) + 0.3 * rng.normal(size=n)


ESTIMATORS = [
    lambda **k: LogisticRegression(classes=[0, 1], **k),
    lambda **k: LinearSVC(classes=[0, 1], **k),
    lambda **k: Ridge(y_bound=(-3.0, 3.0), **k),
]


def _data(make):
    return _regression() if isinstance(make(), Ridge) else _classification()


def test_auto_is_the_default_of_the_linear_estimators():
    for make in ESTIMATORS:
        assert make().get_params()["alpha"] == "auto"
    assert AUTO_ALPHA == 1e-4


@pytest.mark.parametrize("make", ESTIMATORS)
@pytest.mark.parametrize(
    "nothing",
    [
        dict(feature_scale=None),
        dict(epsilon=math.inf, feature_scale=None),
        dict(clip_norm=1.0),
    ],
)
def test_auto_is_exactly_1e4_when_no_scale_is_estimated(make, nothing):
    """Bit-identical to alpha=1e-4 (today's default) when s = 1."""
    X, y = _data(make)
    ref = make(alpha=1e-4, random_state=4, **nothing).fit(X, y)
    est = make(random_state=4, **nothing).fit(X, y)
    assert est.feature_scale_ == 1.0
    np.testing.assert_array_equal(est.coef_, ref.coef_)
    np.testing.assert_array_equal(est.intercept_, ref.intercept_)
    assert est.dp_event_ == ref.dp_event_ and est.epsilon_ == ref.epsilon_
    assert est.alpha_ == ref.alpha_ == 1e-4
    assert est.hyperparameters_["alpha"] == 1e-4


@pytest.mark.parametrize("make", ESTIMATORS)
@pytest.mark.parametrize("alpha", [1e-4, 3e-2, 0.0])
def test_explicit_alpha_keeps_the_users_objective(make, alpha):
    """Explicit alpha: the solver gets alpha / s^2 on x / s, coef_ = w' / s.

    A public ``feature_scale=s`` is that rescaling done by hand, bit for bit.
    """
    X, y = _data(make)
    s = 8.0
    ref = make(alpha=alpha / s**2, feature_scale=None, random_state=2).fit(X / s, y)
    est = make(alpha=alpha, feature_scale=s, random_state=2).fit(X, y)
    np.testing.assert_array_equal(est.coef_, ref.coef_ / s)
    np.testing.assert_array_equal(est.intercept_, ref.intercept_)
    assert est.alpha_ == alpha
    assert "alpha" not in est.hyperparameters_  # only "auto" is reported


@pytest.mark.parametrize("make", ESTIMATORS)
def test_auto_is_1e4_in_the_rescaled_units(make):
    """alpha="auto" with rows x / s: alpha' = 1e-4, i.e. 1e-4 s^2 in X's units."""
    X, y = _data(make)
    s = 8.0
    ref = make(alpha=1e-4, feature_scale=None, random_state=2).fit(X / s, y)
    est = make(feature_scale=s, random_state=2).fit(X, y)
    np.testing.assert_array_equal(est.coef_, ref.coef_ / s)
    np.testing.assert_array_equal(est.intercept_, ref.intercept_)
    assert est.alpha_ == 1e-4 * s**2
    # the public rules' value, in the rescaled units (as clip_norm)
    assert est.hyperparameters_["alpha"] == 1e-4


def test_auto_follows_the_private_scale_of_x_times_k():
    """The estimated scale: the fit on X k is the fit on X, coefficients / k.

    At a large epsilon the private median is the true median's bin (no
    randomness left in the draw), and ``k = 2^-7`` moves the norms by a
    whole number of bins, so both fits see the same rescaled rows up to
    rounding: same model, ``coef_`` divided by ``k``, ``alpha_`` times
    ``k^2``. With an explicit alpha the two objectives differ.
    """
    X, y = _classification()
    k = 2.0**-7
    kw = dict(classes=[0, 1], epsilon=1e4, random_state=0)
    a = LogisticRegression(**kw).fit(X, y)
    b = LogisticRegression(**kw).fit(X * k, y)
    assert b.feature_scale_ == pytest.approx(a.feature_scale_ * k, rel=1e-12)
    assert b.alpha_ == pytest.approx(a.alpha_ * k**2, rel=1e-12)
    np.testing.assert_allclose(b.coef_ * k, a.coef_, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(b.intercept_, a.intercept_, rtol=1e-6, atol=1e-9)
    c = LogisticRegression(alpha=1e-4, **kw).fit(X * k, y)
    assert c.alpha_ == 1e-4
    assert np.abs(c.coef_ * k).sum() < 0.5 * np.abs(a.coef_).sum()


def test_coef_bound_uses_the_resolved_alpha():
    X, y = _classification()
    est = LogisticRegression(classes=[0, 1], random_state=0).fit(X * 2.0**-6, y)
    assert est.feature_scale_ < 0.1
    assert est.coef_bound_ == pytest.approx(math.sqrt(2 * math.log(2) / est.alpha_))


def test_alpha_is_validated():
    X, y = _classification(n=200)
    for bad in ("big", -1.0):
        with pytest.raises(ValueError, match="alpha"):
            LogisticRegression(classes=[0, 1], alpha=bad).fit(X, y)


def test_clone_and_grid_search_over_alpha():
    X, y = _classification(n=600)
    est = LogisticRegression(classes=[0, 1], epsilon=math.inf, random_state=0)
    assert clone(est).get_params()["alpha"] == "auto"
    grid = GridSearchCV(est, {"alpha": ["auto", 1e-2]}, cv=2).fit(X, y)
    assert grid.best_params_["alpha"] in ("auto", 1e-2)


def test_relative_alpha_resolves_in_the_users_units(monkeypatch):
    """Relative(alpha): a factor of the estimator's alpha in X's units."""
    plan = ERMPlan(1000, 5, 1, 0, 1e-4, True, 1.0, 10, 100, 0.1, user_alpha=0.64)
    out = resolve_relative({"clf__alpha": Factor(2.0)}, plan)
    assert out == {"clf__alpha": pytest.approx(1.28)}
    bare = ERMPlan(1000, 5, 1, 0, 1e-4, True, 1.0, 10, 100, 0.1)
    assert resolve_relative({"alpha": Factor(2.0)}, bare) == {"alpha": 2e-4}
    # the estimator's charged plan carries alpha_ in X's units
    from dpestim.privacy.charging import charge_fit as real_charge

    seen = []

    def spy(charge, **k):
        if charge.plan is not None:
            seen.append(charge.plan)
        return real_charge(charge, **k)

    monkeypatch.setattr("dpestim.linear_model._base.charge_fit", spy)
    X, y = _classification()
    est = LogisticRegression(classes=[0, 1], random_state=0).fit(X * 2.0**-5, y)
    assert seen[-1].user_alpha == est.alpha_
    assert seen[-1].alpha == pytest.approx(1e-4)


# -- the small-n share -------------------------------------------------------


def test_iterative_solvers_declare_the_cap():
    assert DPSGD.scale_share_cap == DPGD.scale_share_cap == ITERATIVE_SCALE_SHARE_CAP
    assert 0.05 < ITERATIVE_SCALE_SHARE_CAP <= 0.4


def test_plan_raises_the_share_and_drops_the_histogram_first():
    cap = ITERATIVE_SCALE_SHARE_CAP
    kw = dict(rows=True, targets=0, classes=True, n_classes=2, max_share=cap)
    # large n: the default share is feasible, nothing moves
    big = S.plan_estimates(1.0, 30000, share=0.05, **kw)
    assert big.row_epsilon == big.class_epsilon == pytest.approx(0.025)
    # no cap: the former plan (the row median is dropped)
    old = S.plan_estimates(1.0, 426, share=0.05, **{**kw, "max_share": None})
    assert old.row_epsilon is None
    # 800 rows: the row scale alone, at the smallest feasible share
    mid = S.plan_estimates(1.0, 800, share=0.05, **kw)
    assert mid.row_epsilon is not None and mid.class_epsilon is None
    assert "class_prior" in mid.notes
    assert 0.05 < mid.epsilon <= cap
    assert S.feasible(mid.row_epsilon, 800, 0.5, S.positive_edges().shape[0] + 1)
    assert not S.feasible(
        mid.row_epsilon * 0.99, 800, 0.5, S.positive_edges().shape[0] + 1
    )
    # 3000 rows at epsilon 0.5: both fit in twice the default share: both kept
    both = S.plan_estimates(0.5, 3000, share=0.05, **kw)
    assert both.row_epsilon is not None and both.class_epsilon is not None
    assert 0.05 < both.epsilon / 0.5 <= 0.1
    assert S.feasible(both.row_epsilon, 3000, 0.5, S.positive_edges().shape[0] + 1)
    # 1347 rows, 10 classes: the default share suffices for the row scale
    # alone, not for both: the row scale at 5%, no histogram
    digits = S.plan_estimates(1.0, 1347, share=0.05, **{**kw, "n_classes": 10})
    assert digits.row_epsilon == pytest.approx(0.05) and digits.class_epsilon is None
    # a required histogram (class_weight="balanced") is kept and counted
    req = S.plan_estimates(1.0, 800, share=0.05, classes_required=True, **kw)
    assert req.class_epsilon is not None and req.row_epsilon is not None
    assert req.epsilon == pytest.approx(2 * mid.epsilon) and req.epsilon <= cap
    # 426 rows at epsilon 0.5: 20.8% for the row median, under the cap
    small = S.plan_estimates(0.5, 426, share=0.05, **kw)
    assert small.row_epsilon is not None and small.class_epsilon is None
    assert 0.2 < small.epsilon / 0.5 <= cap
    # 300 rows at epsilon 0.5 (epsilon n = 150): 34% of epsilon, under the cap
    edge = S.plan_estimates(0.5, 300, share=0.05, **kw)
    assert edge.row_epsilon is not None and 0.3 < edge.epsilon / 0.5 <= cap
    # too small even for the row scale alone (epsilon n = 125): nothing raised
    tiny = S.plan_estimates(0.5, 250, share=0.05, **kw)
    assert tiny.row_epsilon is None and tiny.epsilon <= 0.05 * 0.5 + 1e-12


@pytest.mark.parametrize("solver", ["dp-sgd", "dp-gd"])
def test_small_n_fit_estimates_the_row_scale_inside_epsilon(solver):
    X, y = _classification(n=426, d=8)
    est = LogisticRegression(
        utility_check=None, classes=[0, 1], solver=solver, random_state=1
    ).fit(X * 0.01, y)
    assert est.feature_scale_ < 0.1  # estimated (about 0.01)
    assert isinstance(est.dp_event_, ComposedDpEvent)
    first = est.dp_event_.events[0]
    assert isinstance(first, ExponentialMechanismDpEvent)
    assert 0.05 < first.epsilon <= ITERATIVE_SCALE_SHARE_CAP
    assert not any(isinstance(e, LaplaceDpEvent) for e in est.dp_event_.events)
    assert "class_prior" in est.hyperparameters_
    assert est.epsilon_ <= 1.0
    report = str(est.privacy_report())
    assert "exponential-mechanism" in report and "of epsilon=1" in report
    assert est.score(X * 0.01, y) > 0.8


def test_solver_without_cap_is_unchanged_at_small_n():
    X, y = _classification(n=426, d=8)
    est = LogisticRegression(classes=[0, 1], solver="dp-scd", random_state=1).fit(
        X * 0.01, y
    )
    assert est.feature_scale_ == 1.0
    assert "not estimated" in est.hyperparameters_["feature_scale"]


def test_private_search_over_relative_alpha():
    """PrivateSearchCV with alpha="auto": Relative(alpha) resolves against the
    plan's alpha in X's units. Its candidates run at a fixed noise multiplier
    on the rows rescaled by the search's one private row scale s: the "auto"
    alpha is 1e-4 on the rescaled rows, 1e-4 s^2 in X's units."""
    from dpestim.model_selection import PrivateSearchCV, Relative

    X, y = _classification(n=4000, d=4)
    est = LogisticRegression(classes=[0, 1], max_iter=2, batch_size=100)
    search = PrivateSearchCV(
        est, {"alpha": Relative([4.0])}, epsilon=1.0, n_candidates=2, random_state=0
    ).fit(X, y)
    s = search.best_estimator_.feature_scale_
    assert s != 1.0
    assert search.best_params_["alpha"] == pytest.approx(4e-4 * s**2)
    assert search.best_estimator_.alpha_ == pytest.approx(4e-4 * s**2)
    assert search.score(X, y) > 0.8


def test_squared_loss_raises_the_share_and_is_invariant_to_the_feature_scale():
    """dp-sgd raises the row-scale share for every loss (Ridge too): at 442
    rows and epsilon 1 the row scale is estimated, so X x 100 gives about the
    model of X (before, the rows were used as given: R^2 far below 0)."""
    assert DPSGD().share_cap("logistic") == ITERATIVE_SCALE_SHARE_CAP
    # Ridge keeps the former, smaller cap (a regression left with too
    # little budget falls below a constant)
    assert DPSGD().share_cap("squared") == ITERATIVE_SQUARED_SHARE_CAP
    assert DPGD().share_cap("squared") == ITERATIVE_SQUARED_SHARE_CAP
    assert ITERATIVE_SQUARED_SHARE_CAP < ITERATIVE_SCALE_SHARE_CAP
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True)  # 442 rows: 5% of eps 1 is too little
    scores = []
    for k in (1.0, 100.0):
        ridge = Ridge(solver="dp-sgd", epsilon=1.0, y_bound=(0, 400), random_state=0)
        ridge.fit(k * X, y)
        assert ridge.feature_scale_ != 1.0
        assert ridge.epsilon_ <= 1.0
        scores.append(ridge.score(k * X, y))
    assert scores[0] > 0.1 and abs(scores[1] - scores[0]) < 0.1, scores
    Xc, yc = _classification(n=442)
    clf = LogisticRegression(classes=[0, 1], epsilon=1.0, random_state=0).fit(Xc, yc)
    assert clf.feature_scale_ != 1.0
