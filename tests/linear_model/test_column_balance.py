"""feature_balance: columns that dominate the rows' norms, scaled privately."""

import math
import warnings
import zlib

import dp_accounting
import numpy as np
import pytest
import scipy.sparse as sp

from dpestim import LinearSVC, LogisticRegression, Ridge
from dpestim.preprocessing._balance import BALANCE_SHARE, LATER_SHARE


def _seed(*parts):
    return zlib.crc32("/".join(map(str, parts)).encode())


def _one_raw_column(n=20_000, seed=0, regression=False):
    """Five informative columns of order one and a sixth in its own units
    (spread 1e5, uninformative): the user trial's trap (Adult's fnlwgt)."""
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, 5))
    raw = 2e5 + 1e5 * rng.normal(size=n)
    X = np.c_[Z, raw]
    signal = Z @ np.array([1.0, -1.0, 0.5, 0.5, 0.25])
    if regression:
        return X, signal + 0.5 * rng.normal(size=n)
    return X, (signal + 0.5 * rng.normal(size=n) > 0).astype(int)


def _laplace(event):
    if isinstance(event, dp_accounting.ComposedDpEvent):
        return [e for sub in event.events for e in _laplace(sub)]
    return [event] if isinstance(event, dp_accounting.LaplaceDpEvent) else []


def _quiet_fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, y)


@pytest.mark.parametrize("Est", [LogisticRegression, LinearSVC])
def test_a_raw_column_no_longer_sinks_a_classifier(Est):
    X, y = _one_raw_column(seed=_seed("classifier"))
    Xt, yt = _one_raw_column(5000, seed=_seed("classifier", "test"))
    kw = dict(epsilon=1.0, classes=[0, 1], random_state=0)
    off = _quiet_fit(Est(feature_balance=None, **kw), X, y)
    on = _quiet_fit(Est(**kw), X, y)
    majority = max(yt.mean(), 1 - yt.mean())
    assert off.score(Xt, yt) < majority + 0.05  # the trap
    assert on.score(Xt, yt) > 0.9
    sigma = on.feature_balance_
    assert sigma is not None and np.all(sigma[:5] == 1.0)
    assert 0.5e5 < sigma[5] < 1.2e5  # about the column's spread
    assert "1 of 6 columns" in on.hyperparameters_["feature_balance"]


def test_a_raw_column_no_longer_sinks_ridge():
    X, y = _one_raw_column(seed=_seed("ridge"), regression=True)
    Xt, yt = _one_raw_column(5000, seed=_seed("ridge", "test"), regression=True)
    off = _quiet_fit(Ridge(feature_balance=None, random_state=0), X, y)
    on = _quiet_fit(Ridge(random_state=0), X, y)
    assert off.score(Xt, yt) < 0.2
    assert on.score(Xt, yt) > 0.8


def test_event_budget_and_report():
    X, y = _one_raw_column(seed=_seed("event"))
    eps = 1.0
    on = _quiet_fit(
        LogisticRegression(epsilon=eps, classes=[0, 1], random_state=0), X, y
    )
    off = _quiet_fit(
        LogisticRegression(
            epsilon=eps, classes=[0, 1], random_state=0, feature_balance=None
        ),
        X,
        y,
    )
    extra = len(_laplace(on.dp_event_)) - len(_laplace(off.dp_event_))
    assert extra == 1
    assert any(
        e.noise_multiplier == pytest.approx(1.0 / (BALANCE_SHARE * eps))
        for e in _laplace(on.dp_event_)
    )
    assert on.epsilon_ <= eps and off.epsilon_ <= eps
    assert "column balance" in str(on.privacy_report())
    assert off.feature_balance_ is None


def test_comparable_columns_are_used_as_given():
    rng = np.random.default_rng(_seed("comparable"))
    X = np.c_[rng.normal(size=(20_000, 4)), rng.random((20_000, 3)) < 0.3]
    y = (X[:, 0] > 0).astype(int)
    fit = _quiet_fit(LogisticRegression(classes=[0, 1], random_state=0), X, y)
    assert fit.feature_balance_ is None
    assert fit.hyperparameters_["feature_balance"].startswith("no column dominant")


def test_epsilon_inf_is_the_fit_on_the_rescaled_columns():
    """The exact limit: the balanced fit predicts as a fit on the data with
    the dominant column divided by its exact root mean square (centred)."""
    X, y = _one_raw_column(5000, seed=_seed("inf"), regression=True)
    fit = Ridge(epsilon=math.inf).fit(X, y)
    rms = np.sqrt(np.mean((X[:, 5] - X[:, 5].mean()) ** 2))
    assert fit.feature_balance_[5] == pytest.approx(rms)
    Xs = X.copy()
    Xs[:, 5] /= rms
    ref = Ridge(epsilon=math.inf, feature_balance=None).fit(Xs, y)
    np.testing.assert_allclose(fit.predict(X), ref.predict(Xs), rtol=1e-6, atol=1e-6)
    assert fit.score(X, y) > 0.9


def test_epsilon_inf_limit_is_scikit_learns_ridge_on_the_rescaled_columns():
    """The named reference: scikit-learn's Ridge at the same ``alpha_`` on the
    columns divided by ``feature_balance_`` (the penalty is on the rescaled
    coefficients), mapped back to the columns' own units."""
    from sklearn.linear_model import Ridge as SkRidge

    X, y = _one_raw_column(5000, seed=_seed("inf-sklearn"), regression=True)
    fit = Ridge(epsilon=math.inf).fit(X, y)
    sigma = fit.feature_balance_
    assert sigma is not None and sigma[5] > 1e4
    ref = SkRidge(alpha=fit.alpha_ * X.shape[0]).fit(X / sigma, y)
    np.testing.assert_allclose(fit.coef_, ref.coef_ / sigma, rtol=1e-6, atol=1e-12)
    np.testing.assert_allclose(fit.intercept_, ref.intercept_, rtol=1e-6)


def test_the_balance_is_charged_to_the_active_budget():
    from dpestim.model_selection import PrivacyBudget

    X, y = _one_raw_column(seed=_seed("budget"), regression=True)
    budget = PrivacyBudget(2.0, 1e-5)
    with budget:
        fit = _quiet_fit(Ridge(epsilon=1.0, random_state=0), X, y)
    assert fit.feature_balance_ is not None
    charged = [e for r in budget.records for e in getattr(r[0], "events", [r[0]])]
    assert dp_accounting.LaplaceDpEvent(1.0 / BALANCE_SHARE) in charged
    assert budget.spent()[0] <= 1.0 + 1e-9


def test_not_run_where_the_centring_does_not_run():
    X, y = _one_raw_column(300, seed=_seed("small"))
    fit = _quiet_fit(LogisticRegression(classes=[0, 1], random_state=0), X, y)
    assert fit.feature_balance_ is None
    assert fit.hyperparameters_["feature_balance"].startswith("not run")
    with pytest.warns(UserWarning, match="feature_balance=True was not run"):
        LogisticRegression(classes=[0, 1], random_state=0, feature_balance=True).fit(
            X, y
        )
    # sparse input: no centring, no balance, nothing spent on it
    big, yb = _one_raw_column(seed=_seed("sparse"))
    fit = _quiet_fit(
        LogisticRegression(classes=[0, 1], random_state=0), sp.csr_matrix(big), yb
    )
    assert fit.feature_balance_ is None
    assert not any(
        "column balance" in line for line in str(fit.privacy_report()).splitlines()
    )


def test_parameter_is_validated():
    X, y = _one_raw_column(200, seed=_seed("param"))
    with pytest.raises(ValueError, match="feature_balance"):
        LogisticRegression(classes=[0, 1], feature_balance="yes").fit(X, y)


def _em_count(event):
    if isinstance(event, dp_accounting.ComposedDpEvent):
        return sum(_em_count(sub) for sub in event.events)
    return int(type(event).__name__ == "ExponentialMechanismDpEvent")


def _two_raw_columns(n, seed):
    """The one-raw-column task plus a second uninformative column of spread
    50 (beside the first's 1e5: below the first release's noise)."""
    X, y = _one_raw_column(n, seed=seed)
    rng = np.random.default_rng(seed + 1)
    return np.c_[X, 300.0 + 50.0 * rng.normal(size=n)], y


def test_a_later_round_scales_the_column_the_first_missed():
    """At epsilon n = 40,000 one later round is planned: it re-centres the
    balanced rows and finds the second raw column, which the first release
    (its noise set by the 1e5 column) cannot see; both are charged."""
    X, y = _two_raw_columns(40_000, _seed("later"))
    Xt, yt = _two_raw_columns(5000, _seed("later", "test"))
    kw = dict(epsilon=1.0, classes=[0, 1], random_state=0)
    fit = _quiet_fit(LogisticRegression(**kw), X, y)
    sigma = fit.feature_balance_
    assert np.all(sigma[:5] == 1.0) and sigma[5] > 1e4 and 20 < sigma[6] < 100
    assert "2 of 2 rounds run" in fit.hyperparameters_["feature_balance"]
    assert fit.score(Xt, yt) > 0.9
    off = _quiet_fit(LogisticRegression(feature_balance=None, **kw), X, y)
    # the later round: an L1 radius, a Laplace mean, an L2 radius, squares
    assert len(_laplace(fit.dp_event_)) - len(_laplace(off.dp_event_)) == 3
    assert _em_count(fit.dp_event_) - _em_count(off.dp_event_) == 2
    later = [e.noise_multiplier for e in _laplace(fit.dp_event_)]
    assert later.count(pytest.approx(4.0 / LATER_SHARE)) == 2
    assert fit.epsilon_ <= 1.0 and "later round" in str(fit.privacy_report())


def test_later_rounds_are_charged_when_they_do_not_run():
    """Comparable columns at epsilon n = 40,000: no column is dominant, so
    the later round does not run, and its budget is spent all the same (it
    was planned before any release read the data)."""
    rng = np.random.default_rng(_seed("charged"))
    X = rng.normal(size=(40_000, 6))
    y = (X[:, 0] > 0).astype(int)
    fit = _quiet_fit(LogisticRegression(classes=[0, 1], random_state=0), X, y)
    assert fit.feature_balance_ is None
    assert "1 of 2 rounds run" in fit.hyperparameters_["feature_balance"]
    noise = [e.noise_multiplier for e in _laplace(fit.dp_event_)]
    assert noise.count(pytest.approx(4.0 / LATER_SHARE)) == 2


def test_later_rounds_are_charged_to_the_active_budget():
    """The later rounds' four draws reach the active PrivacyBudget with the
    rest of the fit's events, and the fit stays within its epsilon."""
    from dpestim.model_selection import PrivacyBudget

    X, y = _two_raw_columns(40_000, _seed("budget-later"))
    budget = PrivacyBudget(2.0, 1e-5)
    with budget:
        fit = _quiet_fit(LogisticRegression(classes=[0, 1], random_state=0), X, y)
    charged = [e for r in budget.records for e in getattr(r[0], "events", [r[0]])]
    part = LATER_SHARE / 4
    assert charged.count(dp_accounting.LaplaceDpEvent(1.0 / part)) == 2
    assert "2 of 2 rounds run" in fit.hyperparameters_["feature_balance"]
    assert budget.spent()[0] <= 1.0 + 1e-9
