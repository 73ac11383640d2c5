"""PrivateSearchCV estimates the private row scale once (``feature_scale="auto"``
with an ``"auto"`` / AutoUnits clip norm), charges it, and runs every
candidate on the rescaled rows: the search is invariant to the units of X.
An explicit clip norm, ``feature_scale=None`` or a given ``feature_scale``
keep the search in X's units (no estimate, nothing charged for it)."""

import dp_accounting
import numpy as np
import pytest
from dp_accounting import dp_event
from sklearn.base import clone

from dpestim import LogisticRegression, Ridge
from dpestim.exceptions import BudgetExceededError
from dpestim.model_selection import PrivacyBudget, PrivateSearchCV, _search_scale
from dpestim.preprocessing._scale_plan import _pure_epsilon
from dpestim.privacy import compute_epsilon
from dpestim.privacy.ledger import composed_epsilon
from dpestim.solvers.saddle import ExponentialMechanismDpEvent


@pytest.fixture
def data():
    rng = np.random.default_rng(11)
    X = rng.normal(size=(5000, 4)) / 2
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    return X, y


def _lr(**kw):
    return LogisticRegression(classes=[0, 1], max_iter=3, batch_size=100, **kw)


def _search(est, space=None, **kw):
    kw = {"epsilon": 1.0, "n_candidates": 3, "random_state": 0} | kw
    return PrivateSearchCV(est, space, **kw)


def _is_estimates(event):
    """The search's estimates: pure-DP draws, the row scale's among them."""
    return (
        isinstance(event, dp_accounting.ComposedDpEvent)
        and any(isinstance(e, ExponentialMechanismDpEvent) for e in event.events)
        and all(
            isinstance(e, (ExponentialMechanismDpEvent, dp_accounting.LaplaceDpEvent))
            for e in event.events
        )
    )


def test_event_composes_the_scale_estimates(data):
    X, y = data
    s = _search(_lr(scale_share=0.1), accountant="rdp").fit(X, y)
    scale, selection = s.dp_event_.events
    # the estimator's own policy step at the search's epsilon: its column
    # balance (rows as given at this n: median L2 norm, Laplace squares,
    # later rounds), its row scale and class counts at its share: the
    # estimates of one default fit, without the utility check
    own = _lr(scale_share=0.1, utility_check=None).fit(X, y)
    assert scale == dp_accounting.ComposedDpEvent(own.dp_event_.events[:-1])
    assert isinstance(selection, dp_event.RepeatAndSelectDpEvent)
    # RDP: the selection calibrated with the estimates (their draws as zCDP
    # events) to 1 in all, which leaves it more than the basic split's rest
    e0 = sum(map(_pure_epsilon, scale.events))
    assert 0.1 < e0 < 0.25
    eps_selection = compute_epsilon(selection, 1e-5, "rdp")
    assert eps_selection > 1 - e0
    whole = composed_epsilon([s.dp_event_], 1e-5, "rdp")
    assert 0.99 < whole <= 1.0
    assert s.epsilon_ == pytest.approx(min(e0 + eps_selection, whole))
    # what a budget computes for the whole event is within the request too
    assert composed_epsilon([s.dp_event_], 1e-5, "rdp") <= 1.0 + 1e-9
    assert "row scale" in s.privacy_report()
    assert "column scales" in s.privacy_report()
    # the released model carries the search's scale (the DP release), and
    # the estimator's own parameter
    best = s.best_estimator_
    assert best.feature_scale_ != 1.0
    assert best.get_params()["feature_scale"] == "auto"


@pytest.mark.parametrize(
    "solver, relation", [("dp-sgd", "add_or_remove_one"), ("dp-gd", "replace_one")]
)
def test_scale_charged_first_under_the_search_relation(
    data, monkeypatch, solver, relation
):
    X, y = data
    budget = PrivacyBudget(1.0, 1e-5)
    s = _search(_lr(solver=solver), budget=budget).fit(X, y)
    assert s._relation == relation
    assert [r[0] for r in budget.records] == list(s.dp_event_.events)
    assert {r[1] for r in budget.records} == {s._relation}
    assert "scale estimates" in budget.records[0][2]
    assert budget.spent()[0] <= 1.0 + 1e-9

    # refused before the estimate reads the data
    def never(*args, **kwargs):
        raise AssertionError("the row scale read the data before its charge")

    monkeypatch.setattr(_search_scale._scales, "private_row_scale", never)
    small = PrivacyBudget(0.01, 1e-5)
    with pytest.raises(BudgetExceededError):
        _search(_lr(), budget=small).fit(X, y)
    assert small.records == []


@pytest.mark.parametrize("f", [0.01, 100.0])
def test_search_is_invariant_to_the_units_of_X(data, f):
    """The candidates see rows of the same median norm whatever the units of
    X (the private median is on a public grid of 8 bins per octave: equal up
    to its noise, a bin or two)."""
    X, y = data
    base = _search(_lr()).fit(X, y)
    scaled = _search(_lr()).fit(X * f, y)
    ratio = scaled.best_estimator_.feature_scale_ / base.best_estimator_.feature_scale_
    assert abs(np.log2(ratio / f)) <= 3 / 8
    assert scaled.dp_event_ == base.dp_event_
    assert scaled.score(X * f, y) > base.score(X, y) - 0.02
    if f < 1:
        # in X's units (an explicit clip norm: the behaviour before) rows of
        # norm 0.005 are lost in noise calibrated for a clip norm of 1 (on
        # Adult, rows x 100 lost 5 points too; these separable ones do not)
        old = _search(_lr(clip_norm=1.0)).fit(X * f, y)
        assert old.score(X * f, y) < base.score(X, y) - 0.05


@pytest.mark.parametrize(
    "est",
    [
        _lr(clip_norm=1.0),
        _lr(clip_norm=2.0, feature_scale="auto"),
        _lr(feature_scale=None),
        _lr(feature_scale=2.0),
    ],
)
def test_explicit_units_estimate_nothing(data, est):
    X, y = data
    budget = PrivacyBudget(1.0, 1e-5)
    s = _search(est, budget=budget, accountant="rdp").fit(X, y)
    assert isinstance(s.dp_event_, dp_event.RepeatAndSelectDpEvent)
    assert len(budget.records) == 1
    fs = est.get_params()["feature_scale"]
    assert s.best_estimator_.feature_scale_ == (2.0 if fs == 2.0 else 1.0)
    assert s.epsilon_ == compute_epsilon(s.dp_event_, 1e-5, "rdp")


def test_epsilon_none_plans_the_estimates_on_the_budget_rest(data):
    """``epsilon=None`` spends what a budget has left: the estimates are
    planned on that rest (public: the budget's state), charged first, and
    the selection calibrated on what remains after them."""
    X, y = data
    budget = PrivacyBudget(2.0, 1e-5)
    _lr().set_params(epsilon=1.0).fit(X, y)  # outside the budget: not counted
    with budget:
        _lr().set_params(epsilon=0.5).fit(X, y)
    rest = budget.remaining()
    s = _search(_lr(), epsilon=None, budget=budget).fit(X * 100 + 50, y)
    scale, selection = s.dp_event_.events
    assert _is_estimates(scale)
    assert ExponentialMechanismDpEvent(0.025 * rest) in scale.events  # row scale
    assert [r[0] for r in budget.records][-2:] == [scale, selection]
    assert budget.spent()[0] <= 2.0 + 1e-9
    assert budget.remaining() < 1e-3
    # on a fresh budget the search's own guarantee is within it (the basic
    # sum of the estimates and the selection was 1.078 of a fresh budget of
    # 1: dp-accounting's bound of the whole event is kept, as the budget's)
    fresh = PrivacyBudget(1.0, 1e-5)
    alone = _search(_lr(), epsilon=None, budget=fresh).fit(X, y)
    assert alone.epsilon_ <= 1.0 + 1e-9
    assert alone.epsilon_ == pytest.approx(fresh.spent()[0], rel=1e-9)
    assert s.score(X * 100 + 50, y) > 0.9
    # an epsilon=None search without a budget raises, and says to pass it
    with pytest.raises(ValueError, match="pass the PrivacyBudget as budget="):
        _search(_lr(), epsilon=None).fit(X, y)


def test_small_n_estimates_nothing(data):
    X, y = data
    # too few rows for a reliable median at this share: nothing spent
    small = _search(_lr(), n_candidates=2).fit(X[:100], y[:100])
    assert not isinstance(small.dp_event_, dp_accounting.ComposedDpEvent)
    assert small.best_estimator_.feature_scale_ == 1.0


def test_search_over_solvers_gives_each_solver_its_scale(data):
    X, y = data
    s = _search(_lr(), {"solver": ["dp-sgd", "dp-scd"]}).fit(X, y)
    scale, selection = s.dp_event_.events
    assert _is_estimates(scale)
    assert s.epsilon_ <= 1.0
    given = s._scales[s.best_params_["solver"]]
    assert s.best_estimator_.feature_scale_ == given["feature_scale"]


def test_candidates_with_a_number_clip_keep_the_units_of_X(data):
    X, y = data
    # a list mixing "auto" and a number: the "auto" candidates run on the
    # search's scale, the numbers in X's units (the estimator's own rule)
    s = _search(_lr(), {"clip_norm": ["auto", 1.0]}, n_candidates=4).fit(X, y)
    assert _is_estimates(s.dp_event_.events[0])
    expected = s._scales[None]["feature_scale"]
    if s.best_params_["clip_norm"] == 1.0:
        expected = 1.0
    assert s.best_estimator_.feature_scale_ == expected
    assert s.best_estimator_.get_params()["clip_norm"] == s.best_params_["clip_norm"]
    assert s.best_estimator_.get_params()["feature_scale"] == "auto"
    # numbers only, or feature_scale searched: no candidate would read a
    # scale; nothing is estimated nor spent
    for space in ({"clip_norm": [0.5, 1.0]}, {"feature_scale": [None, "auto"]}):
        s = _search(_lr(), space).fit(X, y)
        assert isinstance(s.dp_event_, dp_event.RepeatAndSelectDpEvent)


def test_the_estimator_own_target_multiclass_and_ridge():
    """The search's scale is the estimator's rule: the softmax of more than
    two classes brings rows to a median norm of 8.36, not 2.95 (1.5 octaves
    apart, well beyond the median's noise)."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(6000, 4)) * 10
    y = np.digitize(X[:, 0] + X[:, 1], [-5.0, 5.0])
    est = LogisticRegression(classes=[0, 1, 2], max_iter=3, batch_size=100)
    s = _search(est).fit(X, y)
    own = clone(est).set_params(epsilon=1.0, random_state=0).fit(X, y)
    ratio = s.best_estimator_.feature_scale_ / own.feature_scale_
    assert abs(np.log2(ratio)) <= 3 / 8
    r = _search(Ridge(max_iter=3, batch_size=100, y_bound=5.0), error_bound=4.0)
    r.fit(X, X[:, 0] / 10)
    assert _is_estimates(r.dp_event_.events[0])
    assert r.epsilon_ <= 1.0


def test_small_n_share_follows_the_estimator_loss():
    """At 400 rows 5% of epsilon 1 is too little: the search raises the share
    as the estimator's own fit does, for the classifier and (since a public
    y_bound is scaled to the rules' units, dp-sgd's share cap covers every
    loss) for the squared loss; the total stays within the budget."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(400, 4)) * 10
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    clf = _search(_lr(), n_candidates=2).fit(X, y)
    assert _is_estimates(clf.dp_event_.events[0])
    ridge = Ridge(solver="dp-sgd", max_iter=3, y_bound=30.0)
    reg = _search(ridge, n_candidates=2, error_bound=900.0)
    reg.fit(X, X[:, 0])
    assert isinstance(reg.dp_event_, dp_accounting.ComposedDpEvent)
    assert _is_estimates(reg.dp_event_.events[0])
    assert reg.best_estimator_.feature_scale_ != 1.0
    assert reg.epsilon_ <= 1.0


def test_candidates_run_in_the_default_fit_units():
    """The search runs the estimator's whole policy step once (column
    means, column balance, row scale; the target range for ``Ridge``) and
    gives the candidates the releases as public parameters: an offset of
    1000 on a column and a target in other units and far from 0 leave the
    search where it was. Before (the row scale alone) the offset column set
    every row's norm and the raw target was fitted without a range."""
    rng = np.random.default_rng(8)
    X = rng.normal(size=(20000, 4))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    t = X[:, 0] + 0.5 * X[:, 1] + 0.1 * rng.normal(size=20000)
    offset = np.array([0.0, 0.0, 1000.0, 0.0])
    lr = LogisticRegression(max_iter=2)
    base = _search(lr).fit(X, y)
    moved = _search(lr).fit(X + offset, y)
    assert moved.score(X + offset, y) > base.score(X, y) - 0.02
    given = moved._scales[None]
    best = moved.best_estimator_
    np.testing.assert_array_equal(best.feature_centre_, given["feature_centring"])
    assert abs(best.feature_centre_[2] - 1000.0) < 1.0
    assert best.feature_scale_ == given["feature_scale"]
    # the released model keeps the estimator's own parameters and says
    # where its constants came from
    assert best.get_params()["feature_centring"] == "auto"
    assert best.get_params()["feature_balance"] == "auto"
    assert "PrivateSearchCV" in best.hyperparameters_["feature_centring"]
    assert "private column means (PrivateSearchCV)" in str(best.privacy_report())
    assert "column means" in moved.privacy_report()

    ridge = Ridge(max_iter=2)
    r_base = _search(ridge, error_bound=4.0).fit(X, t)
    raw = 1e5 * t + 1e6
    r_raw = _search(ridge, error_bound=4e10).fit(X + offset, raw)
    assert r_raw.score(X + offset, raw) > r_base.score(X, t) - 0.05
    assert r_base.score(X, t) > 0.8
    low, high = r_raw.best_estimator_.y_bound_
    np.testing.assert_array_equal(low, r_raw._scales[None]["y_bound"][0])
    assert low[0] < 1e6 < high[0]
    assert r_raw.best_estimator_.get_params()["y_bound"] == "auto"
    assert "target range" in r_raw.privacy_report()
    assert r_raw.epsilon_ <= 1.0


def test_class_counts_estimated_once_for_the_candidates():
    """The classifiers' Laplace histogram of the class counts runs in the
    search's estimates: the candidates start at the private prior intercept
    (``class_prior``) and ``class_weight="balanced"``, which a candidate at
    a fixed noise multiplier refuses alone, is searchable, with the
    estimator's balanced weights from those counts."""
    rng = np.random.default_rng(9)
    X = rng.normal(size=(20000, 4))
    y = (X[:, 0] + X[:, 1] > 2.2).astype(int)  # about 6% positives
    est = LogisticRegression(classes=[0, 1], class_weight="balanced", max_iter=2)
    with pytest.raises(ValueError, match="needs epsilon"):
        clone(est).set_params(epsilon=None, noise_multiplier=1.0).fit(X, y)
    s = _search(est).fit(X, y)
    given = s._scales[None]
    best = s.best_estimator_
    np.testing.assert_array_equal(best.class_prior_, given["class_prior"])
    assert abs(best.class_prior_[1] - y.mean()) < 0.01
    w = best.class_weight_
    assert given["class_weight"] == {0: w[0], 1: w[1]}
    # scikit-learn's n / (K c_k) from the released counts
    assert w[1] / w[0] == pytest.approx(
        given["class_prior"][0] / given["class_prior"][1]
    )
    assert best.get_params()["class_weight"] == "balanced"
    assert best.get_params()["class_prior"] == "auto"
    assert "PrivateSearchCV" in best.hyperparameters_["class_weight"]
    assert "balanced class weights" in s.privacy_report()
    # one Laplace histogram among the estimates, inside the budget
    laplace = [
        e
        for e in s.dp_event_.events[0].events
        if isinstance(e, dp_accounting.LaplaceDpEvent)
    ]
    assert laplace and s.epsilon_ <= 1.0
    # searching the weights leaves each candidate its drawn value: no
    # histogram for it (a drawn "balanced" then needs epsilon, as before)
    plain = LogisticRegression(classes=[0, 1], class_prior=None, max_iter=2)
    s = _search(plain, {"class_weight": [None, {0: 1.0, 1: 5.0}]}).fit(X, y)
    assert "class_weight" not in s._scales[None]
    assert "class_prior" not in s._scales[None]


def test_unsorted_classes_are_searched_with_the_prior():
    """A public label set given unsorted: the search's class prior is in
    ``classes_`` order (sorted), which the estimator refuses beside an
    unsorted ``classes``; the candidates get the same set sorted, and the
    released model keeps the user's."""
    rng = np.random.default_rng(13)
    X = rng.normal(size=(8000, 3))
    y = np.where(X[:, 0] > 0.3, "yes", "no")
    est = LogisticRegression(classes=["yes", "no"], max_iter=2)
    s = _search(est).fit(X, y)
    assert s._scales[None]["classes"] == ["no", "yes"]
    assert s.best_estimator_.get_params()["classes"] == ["yes", "no"]
    assert list(s.classes_) == ["no", "yes"]
    assert s.score(X, y) > 0.9


def test_joint_calibration_falls_back_where_it_cannot_meet_the_budget():
    """At small ``epsilon n`` the estimates' zCDP translation alone can
    exceed the budget (the raised row-scale draw); the search then keeps the
    basic split instead of failing (breast cancer at epsilon 0.5, found by
    the private-search benchmark)."""
    rng = np.random.default_rng(14)
    X = rng.normal(size=(426, 5)) * 10
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    s = _search(_lr(), epsilon=0.5, n_candidates=2, accountant="rdp").fit(X, y)
    assert _is_estimates(s.dp_event_.events[0])
    assert s.epsilon_ <= 0.5
