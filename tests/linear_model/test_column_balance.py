"""feature_balance: columns that dominate the rows' norms, scaled privately."""

import math
import warnings
import zlib

import dp_accounting
import numpy as np
import pytest
import scipy.sparse as sp

from dpestim import LinearSVC, LogisticRegression, Ridge
from dpestim.preprocessing._balance import (
    BALANCE_SHARE,
    LATER_SHARE,
    SPARSE_RADIUS_SHARE,
    plan_balance,
)


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


def _em_events(event):
    if isinstance(event, dp_accounting.ComposedDpEvent):
        return [e for sub in event.events for e in _em_events(sub)]
    return [event] if type(event).__name__ == "ExponentialMechanismDpEvent" else []


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
    assert extra == 1 + len(plan_balance(eps, X.shape[0])[1])  # + later rounds
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


def test_not_run_below_its_smallest_epsilon_n():
    """Below ``epsilon n`` of about 2,030 not even the first round on rows
    as given runs (its draws would take more than MAX_DRAW_SHARE): nothing
    runs or is spent, and the notes say why."""
    X, y = _one_raw_column(300, seed=_seed("small"))
    fit = _quiet_fit(LogisticRegression(classes=[0, 1], random_state=0), X, y)
    off = _quiet_fit(
        LogisticRegression(classes=[0, 1], random_state=0, feature_balance=None), X, y
    )
    assert fit.feature_balance_ is None
    assert fit.hyperparameters_["feature_balance"].startswith("not run")
    assert "about 2,030 needed" in fit.hyperparameters_["feature_balance"]
    assert fit.dp_event_ == off.dp_event_
    np.testing.assert_array_equal(fit.coef_, off.coef_)
    with pytest.warns(UserWarning, match="feature_balance=True was not run"):
        LogisticRegression(classes=[0, 1], random_state=0, feature_balance=True).fit(
            X, y
        )


def test_small_dense_data_is_balanced_as_given():
    """Too few rows for the in-fit centring (``epsilon n`` below about
    5,070): the dense rows are balanced as given, as sparse rows are, each
    draw raised to ``draw_need(n)`` within ``BALANCE_CAP``; the raw column is
    found and the fit learns (off: the majority rate); every draw is in
    ``dp_event_``, charged to the active budget, and within ``epsilon``."""
    from dpestim.model_selection import PrivacyBudget
    from dpestim.preprocessing._balance import BALANCE_CAP, draw_need

    n, eps = 3000, 1.0
    X, y = _one_raw_column(n, seed=_seed("small-dense"))
    Xt, yt = _one_raw_column(5000, seed=_seed("small-dense", "test"))
    kw = dict(epsilon=eps, classes=[0, 1], random_state=0)
    budget = PrivacyBudget(2.0, 1e-5)
    with budget:
        fit = _quiet_fit(LogisticRegression(**kw), X, y)
    off = _quiet_fit(LogisticRegression(feature_balance=None, **kw), X, y)
    hp = fit.hyperparameters_
    assert hp["feature_centring"].startswith("not run: epsilon x n_samples")
    assert "rows as given, not centred" in hp["feature_balance"]
    assert "1 of 6 columns" in hp["feature_balance"]
    sigma = fit.feature_balance_
    assert np.all(sigma[:5] == 1.0) and 0.5e5 < sigma[5] < 3e5
    assert fit.feature_centre_ is None
    majority = max(yt.mean(), 1 - yt.mean())
    assert off.score(Xt, yt) < majority + 0.05
    assert fit.score(Xt, yt) > 0.9
    need = draw_need(n)
    radius = [
        e
        for e in _em_events(fit.dp_event_)
        if e.epsilon == pytest.approx(need, rel=1e-12)
    ]
    # the first round's radius draw and three later rounds' (a fourth would
    # break the cap)
    assert len(radius) == 4 and 4 * 2 * need <= BALANCE_CAP * eps < 5 * 2 * need
    assert need > max(SPARSE_RADIUS_SHARE, BALANCE_SHARE, LATER_SHARE / 2) * eps
    assert dp_accounting.LaplaceDpEvent(1.0 / need) in _laplace(fit.dp_event_)
    assert fit.epsilon_ <= eps
    charged = [e for r in budget.records for e in getattr(r[0], "events", [r[0]])]
    assert dp_accounting.LaplaceDpEvent(1.0 / need) in charged
    assert budget.spent()[0] <= eps + 1e-9
    assert "rows as given (not centred)" in str(fit.privacy_report())


@pytest.mark.parametrize("solver", ["dp-gd", "dp-scd", "objective-perturbation"])
def test_solvers_outside_the_dp_sgd_family_keep_the_shares(solver):
    """Only the dp-sgd family raises the balance's draws
    (``raises_balance_draws``): with any other solver, below ``epsilon n``
    5,070 nothing runs or is spent (the notes say why), where dp-sgd
    balances; above, the first round at its shares, no later round below
    10,100."""
    X, y = _one_raw_column(3000, seed=_seed("shares", solver))
    kw = dict(epsilon=1.0, classes=[0, 1], random_state=0, solver=solver)
    fit = _quiet_fit(LogisticRegression(**kw), X, y)
    off = _quiet_fit(LogisticRegression(feature_balance=None, **kw), X, y)
    note = fit.hyperparameters_["feature_balance"]
    assert note.startswith("not run") and f"by solver {solver!r}" in note
    assert fit.dp_event_ == off.dp_event_
    np.testing.assert_array_equal(fit.coef_, off.coef_)
    kw["solver"] = "dp-sgd"
    assert _quiet_fit(LogisticRegression(**kw), X, y).feature_balance_ is not None
    X, y = _one_raw_column(8000, seed=_seed("shares", solver, "8000"))
    kw["solver"] = solver
    fit = _quiet_fit(LogisticRegression(**kw), X, y)
    assert fit.feature_balance_ is not None
    assert "3 rounds" not in fit.hyperparameters_["feature_balance"]
    assert fit.epsilon_ <= 1.0


def test_the_dp_sgd_family_raises_the_draws():
    """The solver's public flag, not the estimator, decides."""
    from dpestim.solvers import resolve_solver

    family = {"dp-sgd", "dp-lssgd", "adp-sgd", "adp-adagrad"}
    for name in family | {"dp-gd", "dp-nag", "dp-scd", "objective-perturbation"}:
        assert resolve_solver(name).raises_balance_draws == (name in family)


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
    """At epsilon n = 40,000 two later rounds are planned: the second round
    finds the second raw column, which the first release (its noise set by
    the 1e5 column) cannot see; the third finds nothing more; both later
    rounds are charged."""
    X, y = _two_raw_columns(40_000, _seed("later"))
    Xt, yt = _two_raw_columns(5000, _seed("later", "test"))
    kw = dict(epsilon=1.0, classes=[0, 1], random_state=0)
    fit = _quiet_fit(LogisticRegression(**kw), X, y)
    sigma = fit.feature_balance_
    # uncentred (its offset is below the first centring's noise): scaled by
    # its root mean square with the offset, sqrt(300^2 + 50^2) = 304
    assert np.all(sigma[:5] == 1.0) and sigma[5] > 1e4 and 200 < sigma[6] < 400
    assert "3 rounds" in fit.hyperparameters_["feature_balance"]
    assert fit.score(Xt, yt) > 0.9
    off = _quiet_fit(LogisticRegression(feature_balance=None, **kw), X, y)
    # the first release and the later rounds' squares; their radius draws
    assert len(_laplace(fit.dp_event_)) - len(_laplace(off.dp_event_)) == 3
    assert _em_count(fit.dp_event_) - _em_count(off.dp_event_) == 2
    later = 2.0 / LATER_SHARE
    assert _noise_count(fit, later) - _noise_count(off, later) == 2
    assert fit.epsilon_ <= 1.0 and "later round" in str(fit.privacy_report())


def _noise_count(fit, multiplier):
    return sum(
        e.noise_multiplier == pytest.approx(multiplier) for e in _laplace(fit.dp_event_)
    )


def test_a_huge_constant_column_no_longer_hides_the_others():
    """A constant of 1e6 beside an informative raw column (an age of 40 +-
    13) and five scaled ones (a user trial): the constant sets the first
    centring's L1 radius (1e6), so the first release sees nothing, and the
    later rounds used to stop there (0.653 at the code before). Every
    planned round now runs: the second's radius is the rows' own, which the
    centring's residual in the constant sets, and the rounds find both."""

    def task(n, seed):
        rng = np.random.default_rng(seed)
        Z = rng.normal(size=(n, 5))
        age = 40.0 + 13.0 * rng.normal(size=n)
        score = Z @ np.array([1.0, -1.0, 0.5, 0.5, 0.25]) + (age - 40.0) / 13.0
        y = (score + 0.5 * rng.normal(size=n) > 0).astype(int)
        return np.c_[Z, age, np.full(n, 1e6)], y

    X, y = task(40_000, _seed("constant"))
    Xt, yt = task(5000, _seed("constant", "test"))
    fit = _quiet_fit(
        LogisticRegression(epsilon=1.0, classes=[0, 1], random_state=0), X, y
    )
    sigma = fit.feature_balance_
    assert sigma is not None and np.all(sigma[:5] == 1.0)
    assert sigma[5] > 5.0 and sigma[6] > 5.0
    assert fit.score(Xt, yt) > 0.9


def test_later_rounds_run_when_the_first_scales_nothing():
    """Comparable columns at epsilon n = 40,000: no column is dominant in
    any round; the later rounds run all the same (planned and charged before
    any release read the data)."""
    rng = np.random.default_rng(_seed("charged"))
    X = rng.normal(size=(40_000, 6))
    y = (X[:, 0] > 0).astype(int)
    kw = dict(classes=[0, 1], random_state=0)
    fit = _quiet_fit(LogisticRegression(**kw), X, y)
    off = _quiet_fit(LogisticRegression(feature_balance=None, **kw), X, y)
    assert fit.feature_balance_ is None
    assert "3 rounds" in fit.hyperparameters_["feature_balance"]
    assert _em_count(fit.dp_event_) - _em_count(off.dp_event_) == 2


def test_later_rounds_draw_from_a_stream_of_their_own(monkeypatch):
    """The later rounds' draws come from a generator spawned from the fit's,
    not from the fit's own stream: a fit whose rounds scale nothing is bit
    for bit the fit whose rounds release nothing at all (their draws
    replaced by a release that reads no randomness)."""
    from dpestim.linear_model import _balance_step

    rng = np.random.default_rng(_seed("stream"))
    X = rng.normal(size=(40_000, 6))
    y = (X[:, 0] > 0).astype(int)
    kw = dict(classes=[0, 1], random_state=0)
    fit = _quiet_fit(LogisticRegression(**kw), X, y)
    assert fit.feature_balance_ is None and "3 rounds" in str(fit.hyperparameters_)
    calls = []

    def silent(X, *args, divisor=None):
        calls.append(args[-1])
        return np.ones(X.shape[1]), np.inf  # nothing above an infinite bar

    monkeypatch.setattr(_balance_step, "l2_column_squares", silent)
    same = _quiet_fit(LogisticRegression(**kw), X, y)
    assert len(calls) == 2 and calls[0] is calls[1]  # one spawned stream
    np.testing.assert_array_equal(same.coef_, fit.coef_)
    np.testing.assert_array_equal(same.intercept_, fit.intercept_)


def test_later_rounds_are_charged_to_the_active_budget():
    """The later rounds' draws reach the active PrivacyBudget with the rest
    of the fit's events, and the fit stays within its epsilon."""
    from dpestim.model_selection import PrivacyBudget

    X, y = _two_raw_columns(40_000, _seed("budget-later"))
    budget = PrivacyBudget(2.0, 1e-5)
    with budget:
        fit = _quiet_fit(LogisticRegression(classes=[0, 1], random_state=0), X, y)
    charged = [e for r in budget.records for e in getattr(r[0], "events", [r[0]])]
    radius = [e for e in charged if type(e).__name__ == "ExponentialMechanismDpEvent"]
    assert sum(e.epsilon == pytest.approx(LATER_SHARE / 2) for e in radius) == 2
    assert "3 rounds" in fit.hyperparameters_["feature_balance"]
    assert budget.spent()[0] <= 1.0 + 1e-9


def _sparse_raw_columns(n, seed):
    """The default scikit-learn pipeline's output on a raw CSV: sparse
    one-hot columns beside raw numeric ones (a weight of 2e5 +- 1e5, an age
    of 40 +- 13), uncentred, the label from the one-hot and age columns."""
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 8, size=(n, 4))
    onehot = np.zeros((n, 32))
    for j in range(4):
        onehot[np.arange(n), 8 * j + codes[:, j]] = 1.0
    age = 40.0 + 13.0 * rng.normal(size=n)
    weight = 2e5 + 1e5 * rng.normal(size=n)
    signal = onehot @ rng.normal(size=32) + 0.1 * (age - 40.0)
    X = sp.csr_matrix(np.c_[onehot, age, weight])
    return X, (signal + 0.5 * rng.normal(size=n) > np.median(signal)).astype(int)


def test_sparse_rows_are_balanced_as_given():
    """Sparse input is not centred (centring would fill it) but balanced as
    given: the weight and the age columns are scaled, the one-hot ones
    left, the matrix stays sparse, and the fit learns (off: about chance);
    its report names the sparse rows' radius draw."""
    X, y = _sparse_raw_columns(20_000, _seed("sparse"))
    Xt, yt = _sparse_raw_columns(5000, _seed("sparse", "test"))
    kw = dict(epsilon=1.0, classes=[0, 1], random_state=0)
    fit = _quiet_fit(LogisticRegression(**kw), X, y)
    off = _quiet_fit(LogisticRegression(feature_balance=None, **kw), X, y)
    sigma = fit.feature_balance_
    assert sigma is not None and np.all(sigma[:32] == 1.0)
    assert 1e5 < sigma[33] < 3e5 and 20 < sigma[32] < 60  # RMS with the offset
    assert fit.feature_centre_ is None
    assert fit.hyperparameters_["feature_centring"].startswith("not run: sparse X")
    assert "sparse rows as given" in fit.hyperparameters_["feature_balance"]
    assert fit.score(Xt, yt) > off.score(Xt, yt) + 0.1
    assert "rows as given (not centred)" in str(fit.privacy_report())
    assert _em_count(fit.dp_event_) - _em_count(off.dp_event_) == 3  # 1 + 2 later
    assert fit.epsilon_ <= 1.0
    # no intercept to carry a centre, or no centring asked for: the balance
    # of sparse rows runs all the same
    no_b = _quiet_fit(LogisticRegression(fit_intercept=False, **kw), X, y)
    assert no_b.feature_balance_ is not None
    no_c = _quiet_fit(LogisticRegression(feature_centring=None, **kw), X, y)
    assert no_c.feature_balance_ is not None


def test_sparse_binary_columns_are_used_as_given():
    """One-hot and binary bag-of-words columns (a9a, w8a): uncentred, their
    mean squares are their frequencies, none twenty times the mean."""
    rng = np.random.default_rng(_seed("binary"))
    p = rng.uniform(0.01, 0.6, size=60)
    X = sp.csr_matrix((rng.random((20_000, 60)) < p).astype(float))
    y = np.asarray(X[:, 0].toarray().ravel() > 0, dtype=int)
    fit = _quiet_fit(LogisticRegression(classes=[0, 1], random_state=0), X, y)
    assert fit.feature_balance_ is None
    assert fit.hyperparameters_["feature_balance"].startswith("no column dominant")


def test_sparse_epsilon_inf_is_the_fit_on_the_rescaled_columns():
    """The sparse balance's exact limit: the uncentred root mean squares,
    and the fit equals the fit on the columns divided by them."""
    X, y = _sparse_raw_columns(3000, _seed("sparse-inf"))
    fit = Ridge(epsilon=math.inf).fit(X, y.astype(float))
    rms = np.sqrt(np.asarray(X.multiply(X).mean(axis=0)).ravel())
    assert fit.feature_balance_[33] == pytest.approx(rms[33])
    Xs = X @ sp.diags(1.0 / fit.feature_balance_)
    ref = Ridge(epsilon=math.inf, feature_balance=None).fit(Xs, y.astype(float))
    np.testing.assert_allclose(fit.predict(X), ref.predict(Xs), rtol=1e-6, atol=1e-6)


def test_sparse_epsilon_inf_limit_is_scikit_learns_ridge():
    """The named reference for sparse rows: scikit-learn's Ridge at the same
    ``alpha_`` on the columns divided by ``feature_balance_`` (uncentred:
    sparse rows are balanced as given), mapped back to the columns' units."""
    from sklearn.linear_model import Ridge as SkRidge

    X, y = _sparse_raw_columns(3000, _seed("sparse-inf-sklearn"))
    fit = Ridge(epsilon=math.inf).fit(X, y.astype(float))
    sigma = fit.feature_balance_
    assert sigma is not None and sigma[33] > 1e4
    Xs = (X @ sp.diags(1.0 / sigma)).toarray()
    ref = SkRidge(alpha=fit.alpha_ * X.shape[0]).fit(Xs, y.astype(float))
    np.testing.assert_allclose(fit.coef_, ref.coef_ / sigma, rtol=1e-5, atol=1e-10)
    np.testing.assert_allclose(fit.intercept_, ref.intercept_, rtol=1e-5)
