"""Relative(clip_norm) is a factor of the "auto" clip norm in the "auto" fit's
units (issue 27): the fit keeps its private row scale, so that the factor 1
is the "auto" fit (the same mechanism and, with the same seed, the same
model), where an explicit number (in X's units) switches the scale off."""

import numpy as np
import pytest
from sklearn.base import clone

from dpestim import LogisticRegression
from dpestim.linear_model._scales import AutoUnits
from dpestim.model_selection import PrivateSearchCV, Relative, SubsetSearchCV
from dpestim.model_selection._space import Factor, resolve_relative
from dpestim.solvers import ERMPlan


@pytest.fixture
def data():
    # rows of norm ~ 20: the private row scale is far from 1
    rng = np.random.default_rng(5)
    X = rng.normal(size=(6000, 4)) * 10
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    return X, y


def _lr(**kw):
    return LogisticRegression(classes=[0, 1], max_iter=3, batch_size=100, **kw)


def _same_fit(a, b):
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.intercept_, b.intercept_)
    assert a.dp_event_ == b.dp_event_
    assert a.feature_scale_ == b.feature_scale_


def test_auto_units_clip_is_the_auto_fit(data):
    X, y = data
    auto = _lr(random_state=0).fit(X, y)
    assert auto.feature_scale_ != 1.0  # the row scale was estimated
    one = _lr(clip_norm=AutoUnits(1.0), random_state=0).fit(X, y)
    _same_fit(one, auto)
    # a plain number is in X's units: no row scale, another model
    plain = _lr(clip_norm=1.0, random_state=0).fit(X, y)
    assert plain.feature_scale_ == 1.0
    assert not np.array_equal(plain.coef_, auto.coef_)
    # another factor keeps the scale and clips the rescaled rows at 2
    two = _lr(clip_norm=AutoUnits(2.0), random_state=0).fit(X, y)
    assert two.feature_scale_ == auto.feature_scale_ and two.clip_norm_ == 2.0
    assert two.epsilon_ <= 1.0
    # clone keeps the type (the released model refits the same way)
    assert isinstance(clone(two).clip_norm, AutoUnits)


def test_auto_units_is_validated():
    assert repr(AutoUnits(2.0)) == "AutoUnits(2.0)"
    with pytest.raises(ValueError, match="positive"):
        AutoUnits(0.0)
    with pytest.raises(TypeError, match="real"):
        AutoUnits("1")


def test_resolve_relative_units():
    plan = ERMPlan(1000, 5, 1, 0, 1e-4, True, 1.0, 10, 100, 0.1)
    factor = {"clip_norm": Factor(2.0)}
    auto = resolve_relative(factor, plan, _lr())["clip_norm"]
    assert isinstance(auto, AutoUnits) and auto == 2.0
    # an explicit clip norm is in X's units: so is its factor
    given = resolve_relative(factor, plan, _lr(clip_norm=1.0))["clip_norm"]
    assert not isinstance(given, AutoUnits) and given == 2.0
    # pipelines: the step's own clip norm decides
    from sklearn.pipeline import make_pipeline

    from dpestim.preprocessing import StandardScaler

    pipe = make_pipeline(StandardScaler(bounds=(-3, 3)), _lr())
    key = "logisticregression__clip_norm"
    out = resolve_relative({key: Factor(0.5)}, plan, pipe)[key]
    assert isinstance(out, AutoUnits) and out == 0.5


def test_subset_search_factor_one_is_the_auto_fit(data):
    """The final fit of a winner of factor 1 is the "auto" fit on the other
    rows (failed before: an explicit clip_norm=1.0 dropped the row scale)."""
    X, y = data
    kw = dict(epsilon=1.0, subset=0.2, n_candidates=2, score_noise=0.02)
    rel = SubsetSearchCV(
        _lr(), {"clip_norm": Relative([1.0])}, random_state=4, **kw
    ).fit(X, y)
    auto = SubsetSearchCV(_lr(), {"clip_norm": ["auto"]}, random_state=4, **kw).fit(
        X, y
    )
    assert isinstance(rel.best_params_["clip_norm"], AutoUnits)
    assert auto.best_params_["clip_norm"] == "auto"
    assert rel.best_estimator_.feature_scale_ != 1.0
    _same_fit(rel.best_estimator_, auto.best_estimator_)
    assert rel.epsilon_ == auto.epsilon_


def test_subset_search_factor_keeps_the_row_scale(data):
    X, y = data
    s = SubsetSearchCV(
        _lr(),
        {"clip_norm": Relative([2.0])},
        epsilon=1.0,
        subset=0.2,
        n_candidates=2,
        score_noise=0.02,
        random_state=4,
    ).fit(X, y)
    final = s.best_estimator_
    assert final.clip_norm == AutoUnits(2.0) and final.clip_norm_ == 2.0
    assert final.feature_scale_ != 1.0  # estimated, and accounted:
    assert "scale" in str(final.privacy_report()).lower()
    assert final.epsilon_ <= 1.0


@pytest.mark.parametrize("refit", [False, True])
def test_private_search_factor_one_is_the_auto_candidate(data, refit):
    """Candidates (and the refit) run at a fixed noise multiplier on the rows
    rescaled by the search's one private row scale: "auto" and the factor 1
    (AutoUnits(1.0)) are the same clip in the "auto" fit's units, the same
    model."""
    X, y = data
    kw = dict(epsilon=1.0, n_candidates=2, refit=refit, score_noise=0.02)
    rel = PrivateSearchCV(
        _lr(), {"clip_norm": Relative([1.0])}, random_state=7, **kw
    ).fit(X, y)
    auto = PrivateSearchCV(_lr(), {"clip_norm": ["auto"]}, random_state=7, **kw).fit(
        X, y
    )
    assert rel.dp_event_ == auto.dp_event_
    assert rel.best_estimator_.feature_scale_ != 1.0  # the search's scale
    assert rel.best_estimator_.get_params()["feature_scale"] == "auto"
    _same_fit(rel.best_estimator_, auto.best_estimator_)
