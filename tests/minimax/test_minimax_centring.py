"""The minimax estimators' column balance (on by default, on the rows as
given) and in-fit centring (``feature_centring=True``), the linear
estimators' mechanisms run before the row unit: raw columns, the mapping
back to the user's units, the events."""

import warnings
import zlib

import numpy as np
import pytest
from dp_accounting import ComposedDpEvent, LaplaceDpEvent

from dpestim import FairLogisticRegression, MinimaxLogisticRegression, MinimaxRegressor


def _seed(*parts):
    return zlib.crc32("/".join(map(str, parts)).encode())


def _raw_column_task(n, seed, regression=False):
    """Five informative columns of order one, an uninformative sixth in its
    own units (2e5 +- 1e5, Adult's ``fnlwgt``), a group label."""
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, 5))
    X = np.c_[Z, 2e5 + 1e5 * rng.normal(size=n)]
    a = rng.integers(0, 2, n)
    signal = Z @ np.array([1.0, -1.0, 0.5, 0.5, 0.25])
    noisy = signal + 0.5 * rng.normal(size=n)
    return X, (noisy if regression else (noisy > 0).astype(int)), a


def _fit(est, X, y, a):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, y, sensitive_features=a)


def _laplace(event):
    if isinstance(event, ComposedDpEvent):
        return [e for sub in event.events for e in _laplace(sub)]
    return [event] if isinstance(event, LaplaceDpEvent) else []


@pytest.mark.parametrize("Est", [MinimaxLogisticRegression, FairLogisticRegression])
def test_a_raw_column_no_longer_sinks_the_classifiers(Est):
    """A user trial: on Adult's raw CSV every minimax classifier fell to the
    majority rate (the raw column set the row unit alone); balanced (by
    default) or centred and balanced, the fit learns."""
    X, y, a = _raw_column_task(20_000, _seed(Est.__name__))
    Xt, yt, _ = _raw_column_task(5000, _seed(Est.__name__, "test"))
    kw = dict(epsilon=1.0, classes=[0, 1], groups=[0, 1], random_state=0)
    on = _fit(Est(**kw), X, y, a)
    centred = _fit(Est(feature_centring=True, **kw), X, y, a)
    off = _fit(Est(feature_balance=None, **kw), X, y, a)
    majority = max(yt.mean(), 1 - yt.mean())
    assert off.score(Xt, yt) < majority + 0.05  # the trap
    for fit in (on, centred):
        assert fit.score(Xt, yt) > 0.85
        assert fit.feature_balance_ is not None and fit.feature_balance_[5] > 1e4
        assert fit.epsilon_ <= 1.0
    assert on.feature_centre_ is None and centred.feature_centre_ is not None
    assert off.feature_balance_ is None and off.feature_centre_ is None


def test_the_regressor_learns_on_a_raw_column():
    X, y, a = _raw_column_task(20_000, _seed("regressor"), regression=True)
    Xt, yt, _ = _raw_column_task(5000, _seed("regressor", "test"), regression=True)
    kw = dict(epsilon=1.0, groups=[0, 1], random_state=0)
    on = _fit(MinimaxRegressor(**kw), X, y, a)
    off = _fit(MinimaxRegressor(feature_balance=None, **kw), X, y, a)
    assert off.score(Xt, yt) < 0.2
    assert on.score(Xt, yt) > 0.7


def test_prediction_clips_as_the_fit_did():
    """The fit ran on ``x' = (x - c) / sigma / s`` clipped to ``-+
    feature_bound``: the released ``coef_`` / ``intercept_`` with the clip
    at ``c -+ sigma s feature_bound`` give the same scores as the model in
    the fit's units, on rows far outside the clip too."""
    X, y, a = _raw_column_task(20_000, _seed("clip"))
    clf = _fit(
        MinimaxLogisticRegression(
            epsilon=1.0, classes=[0, 1], random_state=0, feature_centring=True
        ),
        X, y, a,
    )  # fmt: skip
    c, sigma, s = clf.feature_centre_, clf.feature_balance_, clf.feature_scale_
    assert c is not None and sigma is not None
    w = np.ravel(clf.coef_) * sigma * s
    b = float(clf.intercept_[0]) + float(np.ravel(clf.coef_) @ c)
    rows = np.r_[X[:50], 50.0 * X[:50]]
    inside = np.clip((rows - c) / sigma / s, -clf.feature_bound, clf.feature_bound)
    np.testing.assert_allclose(clf.decision_function(rows), inside @ w + b, rtol=1e-9)


@pytest.mark.parametrize("solver", ["noisy-sgda", "dp-smd"])
@pytest.mark.parametrize("centring", [None, True])
def test_the_draws_are_composed_inside_the_request(solver, centring):
    """The balance (a Laplace release after its own radius draw, or the
    centring's, and two later rounds where ``epsilon n`` affords them) and,
    asked for, the centring (a radius and a Laplace mean) are in
    ``dp_event_`` and the report, and ``epsilon_`` stays within the request,
    under the solver's relation (dp-smd: replace-one)."""
    X, y, a = _raw_column_task(20_000, _seed("events", solver), regression=True)
    kw = dict(epsilon=1.0, groups=[0, 1], solver=solver, random_state=0)
    on = _fit(MinimaxRegressor(feature_centring=centring, **kw), X, y, a)
    off = _fit(MinimaxRegressor(feature_balance=None, **kw), X, y, a)
    extra = len(_laplace(on.dp_event_)) - len(_laplace(off.dp_event_))
    # the first release and two rounds' squares; the centring's mean
    assert extra == 3 + (centring is True)
    assert on.epsilon_ <= 1.0 + 1e-12
    note = on.hyperparameters_.get("feature_centring", "")
    assert ("moved by their private means" in note) == (centring is True)
    report = on.privacy_report()
    assert report.dp_event == on.dp_event_ and "balance" in report.estimates


def test_off_is_the_former_fit():
    """``feature_centring=None, feature_balance=None``: no draw and no
    fitted centre or scales; the fit is that of the row unit alone."""
    X, y, a = _raw_column_task(8000, _seed("off"))
    kw = dict(epsilon=1.0, classes=[0, 1], groups=[0, 1], random_state=3)
    one = _fit(
        MinimaxLogisticRegression(feature_centring=None, feature_balance=None, **kw),
        X, y, a,
    )  # fmt: skip
    two = _fit(
        MinimaxLogisticRegression(feature_centring=False, feature_balance=False, **kw),
        X, y, a,
    )  # fmt: skip
    assert one.feature_centre_ is None and one.feature_balance_ is None
    np.testing.assert_array_equal(one.coef_, two.coef_)
    assert "feature_centring" not in one.hyperparameters_


def test_an_asked_centring_that_cannot_run_says_why():
    """``feature_centring=True`` without an intercept: the centring cannot
    carry its offset, so it does not run, and the warning says so without
    pointing at an ``"auto"`` the minimax estimators do not take."""
    X, y, a = _raw_column_task(8000, _seed("no-intercept"))
    est = MinimaxLogisticRegression(
        epsilon=1.0,
        classes=[0, 1],
        groups=[0, 1],
        random_state=0,
        feature_centring=True,
        fit_intercept=False,
    )
    with pytest.warns(UserWarning, match="feature_centring=True was not run") as rec:
        est.fit(X, y, sensitive_features=a)
    text = " ".join(str(w.message) for w in rec)
    assert "fit_intercept=False" in text and "'auto'" not in text
    assert est.feature_centre_ is None


def test_the_non_private_limit_is_the_fit_on_the_rescaled_columns():
    """``epsilon = inf``: the balance reads the exact mean squares, and the
    fit is the former estimator's (``feature_balance=None``) on the columns
    divided by those scales, mapped back (the named reference)."""
    X, y, a = _raw_column_task(4000, _seed("inf"), regression=True)
    kw = dict(epsilon=np.inf, groups=[0, 1], random_state=0)
    fit = _fit(MinimaxRegressor(**kw), X, y, a)
    sigma = fit.feature_balance_
    assert sigma is not None and sigma[5] > 1e4
    ref = _fit(MinimaxRegressor(feature_balance=None, **kw), X / sigma, y, a)
    np.testing.assert_allclose(fit.coef_ * sigma, ref.coef_, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(fit.intercept_, ref.intercept_, rtol=1e-10)
    np.testing.assert_allclose(fit.predict(X), ref.predict(X / sigma), rtol=1e-9)


def test_the_balance_is_charged_to_the_active_budget():
    """The balance's draws reach an active ``PrivacyBudget`` with the rest
    of the fit's events, and the fit stays within its epsilon."""
    from dpestim.model_selection import PrivacyBudget

    X, y, a = _raw_column_task(20_000, _seed("budget"))
    budget = PrivacyBudget(2.0, 1e-5)
    with budget:
        fit = _fit(
            MinimaxLogisticRegression(
                epsilon=1.0, classes=[0, 1], groups=[0, 1], random_state=0
            ),
            X, y, a,
        )  # fmt: skip
    charged = [e for r in budget.records for e in getattr(r[0], "events", [r[0]])]
    assert len(_laplace(ComposedDpEvent(charged))) >= 3  # release + 2 rounds
    assert fit.feature_balance_ is not None
    assert budget.spent()[0] <= 1.0 + 1e-9
