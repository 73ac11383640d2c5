"""Privacy-facing behaviour of the estimators: events, budgets, leaks, reports."""

import math
import warnings

import dp_accounting as dpa
import numpy as np
import pytest
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from dpestim import (
    LinearSVC,
    LogisticRegression,
    PrivacyBudgetWarning,
    PrivacyLeakWarning,
    Ridge,
    UtilityWarning,
)
from dpestim.privacy import compute_epsilon
from dpestim.solvers import DPGD, DPSGD


@pytest.fixture
def Xy():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1000, 4)) / 2
    return X, (X[:, 0] + 0.3 * rng.normal(size=1000) > 0).astype(int)


def test_inferred_label_set_warns_and_is_reported(Xy):
    X, y = Xy
    with pytest.warns(PrivacyLeakWarning, match="classes="):
        clf = LogisticRegression(random_state=0).fit(X, y)
    assert any("PrivacyLeakWarning" in w for w in clf.privacy_report().warnings)


def test_given_label_set_does_not_warn_and_allows_absent_class(Xy):
    X, y = Xy
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clf = LogisticRegression(
            utility_check=None, classes=[0, 1, 2], random_state=0
        ).fit(X, y)
        # one class only: the one warning is the released proportions' own
        # (epsilon 2: at 1,000 rows and epsilon 1 the row scale alone is
        # affordable and the class histogram is not estimated)
        with pytest.warns(UtilityWarning, match="in one class"):
            LinearSVC(
                utility_check=None, classes=[0, 1], epsilon=2.0, random_state=0
            ).fit(X, np.zeros_like(y))
    np.testing.assert_array_equal(clf.classes_, [0, 1, 2])
    assert clf.coef_.shape == (3, 4)
    # only the flag of the integer seed (random_state=0) remains
    assert [w for w in clf.privacy_report().warnings if "integer seed" not in w] == []


@pytest.mark.parametrize(
    "epsilon,accountant", [(0.3, "rdp"), (1.0, "rdp"), (4.0, "rdp"), (1.0, "pld")]
)
def test_calibrated_fit_meets_budget(Xy, epsilon, accountant):
    X, y = Xy
    clf = LogisticRegression(
        utility_check=None,
        epsilon=epsilon,
        delta=1e-5,
        classes=[0, 1],
        accountant=accountant,
        batch_size=100,
        max_iter=2,
        random_state=0,
        feature_scale=None,  # the solver's calibration alone (see test_private_scales)
        class_prior=None,  # likewise (see test_class_balance)
    ).fit(X, y)
    assert clf.epsilon_ <= epsilon
    assert clf.epsilon_ >= 0.99 * epsilon
    assert clf.delta_ == 1e-5
    assert compute_epsilon(clf.dp_event_, 1e-5, accountant) == clf.epsilon_


def test_dp_event_is_what_ran(Xy):
    X, y = Xy
    clf = LogisticRegression(
        epsilon=None,
        noise_multiplier=1.5,
        classes=[0, 1],
        batch_size=100,
        max_iter=2,
        random_state=0,
    ).fit(X, y)
    expected = dpa.SelfComposedDpEvent(
        dpa.PoissonSampledDpEvent(0.1, dpa.GaussianDpEvent(1.5)), 20
    )
    assert clf.dp_event_ == expected
    assert clf.n_iter_ == 20
    assert clf.noise_multiplier_ == 1.5
    assert clf.epsilon_ == compute_epsilon(expected, 1e-5)
    gd = LogisticRegression(
        epsilon=None,
        noise_multiplier=1.5,
        classes=[0, 1],
        solver=DPGD(noise="gaussian"),
        max_iter=7,
    ).fit(X, y)
    assert gd.dp_event_ == dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(1.5), 7)


def test_multiclass_is_one_mechanism_not_a_composition(Xy):
    X, y = Xy
    y3 = np.digitize(X[:, 1], [-0.3, 0.3])
    kw = dict(
        epsilon=None,
        noise_multiplier=1.0,
        batch_size=100,
        max_iter=1,
        classes=[0, 1, 2],
        random_state=0,
    )
    multi = LinearSVC(**kw).fit(X, y3)
    binary = LinearSVC(**{**kw, "classes": [0, 1]}).fit(X, y)
    assert multi.dp_event_ == binary.dp_event_
    assert multi.coef_.shape == (3, 4)


def test_int_random_state_is_bit_reproducible_and_none_is_fresh(Xy):
    X, y = Xy
    a = LogisticRegression(classes=[0, 1], random_state=7).fit(X, y)
    b = LogisticRegression(classes=[0, 1], random_state=7).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    c = LogisticRegression(classes=[0, 1], random_state=None).fit(X, y)
    d = LogisticRegression(classes=[0, 1], random_state=None).fit(X, y)
    assert not np.array_equal(c.coef_, d.coef_)


def test_fit_mutates_no_global_state(Xy):
    X, y = Xy
    np.random.seed(123)  # noqa: NPY002 (the legacy global state is the point)
    before = np.random.get_state()[1].copy()  # noqa: NPY002
    filters = list(warnings.filters)
    LogisticRegression(classes=[0, 1], random_state=0).fit(X, y)
    assert np.array_equal(np.random.get_state()[1], before)  # noqa: NPY002
    assert warnings.filters == filters


def test_delta_not_below_one_over_n_warns(Xy):
    X, y = Xy
    with pytest.warns(PrivacyBudgetWarning, match="1/n_samples"):
        clf = LogisticRegression(delta=1e-2, classes=[0, 1], random_state=0).fit(X, y)
    assert any("PrivacyBudgetWarning" in w for w in clf.privacy_report().warnings)


def test_non_private_limit_reports_infinite_epsilon(Xy):
    X, y = Xy
    clf = Ridge(epsilon=math.inf, random_state=0).fit(X, y.astype(float))
    assert clf.epsilon_ == math.inf and clf.noise_multiplier_ == 0.0
    assert "inf" in str(clf.privacy_report())


def test_privacy_report_contents(Xy):
    X, y = Xy
    with pytest.raises(NotFittedError):
        LogisticRegression().privacy_report()
    clf = LogisticRegression(classes=[0, 1], random_state=0).fit(X, y)
    text = str(clf.privacy_report())
    for needle in (
        "dp-sgd",
        "Poisson",
        "adding or removing one record",
        "rdp",
        "GaussianDpEvent",
        "number of training records n",
        "steps",
    ):
        assert needle in text


def test_nothing_data_derived_written_back_into_parameters(Xy):
    X, y = Xy
    solver = DPSGD()
    clf = LogisticRegression(solver=solver, random_state=0)
    with pytest.warns(PrivacyLeakWarning):
        clf.fit(X, y)
    assert clf.classes is None and clf.epsilon == 1.0
    assert clf.noise_multiplier is None and clf.solver is solver
    assert clf.solver_ is not solver


def test_works_in_pipeline_and_grid_search(Xy):
    X, y = Xy
    pipe = make_pipeline(
        FunctionTransformer(lambda Z: Z / 2),
        LogisticRegression(classes=[0, 1], random_state=0),
    )
    assert pipe.fit(X, y).score(X, y) > 0.6
    grid = GridSearchCV(
        LogisticRegression(solver=DPSGD(), classes=[0, 1], random_state=0),
        {"solver": ["dp-sgd", "dp-gd"], "learning_rate": [0.1, 1.0]},
        cv=2,
    ).fit(X, y)
    assert grid.best_estimator_.epsilon_ <= 1.0


def test_private_model_is_useful(Xy):
    X, y = Xy
    clf = LogisticRegression(epsilon=1.0, classes=[0, 1], random_state=0).fit(X, y)
    assert clf.score(X, y) > 0.8
