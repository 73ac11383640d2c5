"""``feature_centring`` / ``feature_balance`` given as arrays: public
per-column constants. The fit runs on ``(x - c) / sigma`` and estimates
neither (nothing spent on them); the released model is in ``X``'s units."""

import numpy as np
import pytest
import scipy.sparse as sp
from dp_accounting import LaplaceDpEvent

from dpestim import LinearSVC, LogisticRegression, Ridge


@pytest.fixture
def data():
    rng = np.random.default_rng(4)
    # a column scale below 1 (0.01) with a strong coefficient: in X's units
    # its coefficient is 100 times its balanced one (the coef_bound ball and
    # the projection's intercept must follow: a user trial's 0.50 accuracy)
    c = np.array([0.0, 5.0, 3.0, 1000.0, 0.0])
    sigma = np.array([1.0, 2.0, 0.01, 100.0, 1.0])
    Z = rng.normal(size=(3000, 5))
    X = Z * sigma + c
    y = (Z[:, 0] + 0.4 * Z[:, 1] - 3 * Z[:, 2] > 0.5).astype(int)
    return X, y, c, sigma


@pytest.mark.parametrize("epsilon", [1.0, np.inf])
@pytest.mark.parametrize("Estimator", [LogisticRegression, LinearSVC, Ridge])
def test_public_constants_are_the_fit_on_transformed_rows(data, Estimator, epsilon):
    """The fit of the transformed rows with centring and balance off (the
    same draws), mapped back (``coef_ = w / sigma``, ``intercept_ = b' -
    coef_ . c``), up to rounding."""
    X, y, c, sigma = data
    target = y if Estimator is not Ridge else X[:, 0] + 0.2 * X[:, 1]
    Xt = (X - c) / sigma
    # epsilon = inf: the non-private fit of the transformed rows (whose own
    # limit is scikit-learn's, tests/linear_model/test_nonprivate_limit.py)
    kw = {"random_state": 0, "epsilon": epsilon}
    given = Estimator(feature_centring=c, feature_balance=sigma, **kw).fit(X, target)
    plain = Estimator(feature_centring=None, feature_balance=None, **kw)
    plain.fit(Xt, target)
    coef = plain.coef_ / sigma
    np.testing.assert_allclose(given.coef_, coef, rtol=1e-12)
    np.testing.assert_allclose(
        given.intercept_, plain.intercept_ - coef @ c, rtol=1e-12, atol=1e-9
    )
    assert given.dp_event_ == plain.dp_event_
    assert given.epsilon_ == plain.epsilon_
    np.testing.assert_array_equal(given.feature_centre_, c)
    np.testing.assert_array_equal(given.feature_balance_, sigma)
    assert given.hyperparameters_["feature_centring"].startswith("public")
    assert given.hyperparameters_["feature_balance"].startswith("public")
    # the caller's arrays are not written
    assert given.get_params()["feature_centring"] is c
    assert given.score(X, target) == pytest.approx(plain.score(Xt, target), abs=1e-9)
    if Estimator is not Ridge:
        assert given.score(X, target) > 0.9


def test_a_public_centre_spends_nothing_on_the_centring():
    """At this n the private centring runs by default (two draws in
    ``dp_event_``); a public centre replaces them, and the balance (left to
    ``"auto"``) runs on the centred rows as given."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(20000, 4)) + [0.0, 0.0, 50.0, 0.0]
    y = (X[:, 0] > 0).astype(int)
    kw = {"random_state": 0, "class_prior": None, "utility_check": None}
    default = LogisticRegression(**kw).fit(X, y)
    assert (
        "moved by their private means" in default.hyperparameters_["feature_centring"]
    )
    c = np.array([0.0, 0.0, 50.0, 0.0])
    given = LogisticRegression(feature_centring=c, **kw).fit(X, y)
    assert given.hyperparameters_["feature_centring"].startswith("public")
    # the balance's draws (a median L2 norm, then Laplace squares per round),
    # then the row scale: no L1 radius and Laplace mean of the centring
    events = given.dp_event_.events[:-1]
    assert len(events) < len(default.dp_event_.events[:-1])
    assert "rows as given" in given.hyperparameters_["feature_balance"]
    assert isinstance(events[1], LaplaceDpEvent)
    assert given.score(X, y) > 0.95


@pytest.mark.parametrize(
    "params, match",
    [
        ({"feature_centring": np.zeros(3)}, r"shape \(n_features,\) = \(5,\)"),
        ({"feature_balance": np.ones((5, 1))}, "shape"),
        ({"feature_centring": [0, 0, np.nan, 0, 0]}, "finite"),
        ({"feature_centring": [0, 0, 1e200, 0, 0]}, "finite, within"),
        ({"feature_balance": [1, 1, 0, 1, 1]}, "must be positive"),
        ({"feature_balance": [1, 1, -2, 1, 1]}, "must be positive"),
        ({"feature_centring": ["a"] * 5}, "hold numbers"),
        ({"feature_balance": ["1", "1", "1", "1", "1"]}, "hold numbers"),
        (
            {"feature_centring": np.zeros(5), "fit_intercept": False},
            "needs fit_intercept=True",
        ),
    ],
)
def test_bad_public_constants_raise_naming_the_parameter(data, params, match):
    X, y, _, _ = data
    with pytest.raises(ValueError, match=match):
        LogisticRegression(**params).fit(X, y)


def test_sparse_rows_take_public_scales_not_a_public_centre(data):
    X, y, c, sigma = data
    Xs = sp.csr_matrix(X - c)
    with pytest.raises(ValueError, match="needs dense X"):
        LogisticRegression(feature_centring=c).fit(Xs, y)
    fit = LogisticRegression(feature_balance=sigma, random_state=0).fit(Xs, y)
    np.testing.assert_array_equal(fit.feature_balance_, sigma)
    assert fit.score(Xs, y) > 0.9


def test_blocked_rows_refuse_public_constants(data):
    da = pytest.importorskip("dask.array")
    X, y, c, _ = data
    with pytest.raises(ValueError, match="need X in memory"):
        LogisticRegression(feature_centring=c).fit(da.from_array(X, chunks=1000), y)


def test_projection_onto_coef_bound_keeps_the_centred_intercept(data):
    """A public (or private) centre: ``coef_bound`` shrinks the coefficients
    of the centred columns, and the centred model's intercept is kept: the
    scores are those of the same fit on ``X - c``, projected there."""
    X, y, c, _ = data
    kw = {"random_state": 0, "coef_bound": 0.05, "feature_balance": None}
    given = LogisticRegression(feature_centring=c, **kw).fit(X, y)
    plain = LogisticRegression(feature_centring=None, **kw).fit(X - c, y)
    assert np.linalg.norm(given.coef_) == pytest.approx(0.05)
    np.testing.assert_allclose(
        given.decision_function(X), plain.decision_function(X - c), atol=1e-9
    )
