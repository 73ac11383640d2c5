"""dp-lssgd: smoothing operator, loop twin, dp-sgd equivalence, event, limits."""

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn.linear_model as sk
from test_dp_sgd import _plan as _sgd_plan
from twins import make_targets, np_noisy_sgd

from dpestim import LinearSVC, LogisticRegression, Ridge
from dpestim._kernels import laplacian_smooth_inplace
from dpestim.losses import HINGE, LOGISTIC, MULTINOMIAL, SQUARED
from dpestim.solvers import (
    DPLSSGD,
    DPSGD,
    SOLVERS,
    laplacian_smooth,
    smoothed_noise_variance_factor,
    smoothing_eigenvalues,
)

DIMS = (1, 2, 3, 4, 7, 10, 784, 7850)
STRENGTHS = (0.0, 0.2, 1.0, 3.0, 10.0)


def _dense_A(d, s):
    """``I - s L`` built entry by entry from the periodic Laplacian."""
    L = np.zeros((d, d))
    for i in range(d):
        L[i, i] -= 2.0
        L[i, (i + 1) % d] += 1.0
        L[i, (i - 1) % d] += 1.0
    return np.eye(d) - s * L


def _kernel(v, s):
    u = np.array(v, dtype=np.float64)
    laplacian_smooth_inplace(u, s)
    return u


# ----------------------------------------------------------------- operator


@pytest.mark.parametrize("d", DIMS)
@pytest.mark.parametrize("s", STRENGTHS)
def test_kernel_and_fft_invert_A_to_1e12(d, s):
    rng = np.random.default_rng(d)
    v = rng.normal(size=d)
    fft = laplacian_smooth(v, s)
    rec = _kernel(v, s)
    if d <= 784:
        A = _dense_A(d, s)
        np.testing.assert_allclose(A @ fft, v, rtol=0, atol=1e-12)
        np.testing.assert_allclose(A @ rec, v, rtol=0, atol=1e-12)
        np.testing.assert_allclose(laplacian_smooth(A @ v, s), v, rtol=0, atol=1e-12)
        np.testing.assert_allclose(_kernel(A @ v, s), v, rtol=0, atol=1e-12)
    np.testing.assert_allclose(rec, fft, rtol=0, atol=1e-12)


@pytest.mark.parametrize("d", [2, 3, 10, 784])
@pytest.mark.parametrize("s", [0.2, 1.0, 3.0])
def test_fft_form_equals_paper_kernel_formula(d, s):
    """``ifft(fft(v) / (1 - s fft([-2, 1, 0, ..., 0, 1])))`` (paper, sec. 2.1)."""
    rng = np.random.default_rng(1)
    v = rng.normal(size=d)
    ker = np.zeros(d)
    ker[0] -= 2.0
    ker[1] += 1.0
    ker[-1] += 1.0
    paper = np.fft.ifft(np.fft.fft(v) / (1.0 - s * np.fft.fft(ker))).real
    np.testing.assert_allclose(laplacian_smooth(v, s), paper, atol=1e-13)


@pytest.mark.parametrize("d", [1, 2, 5, 8, 64])
@pytest.mark.parametrize("s", [0.2, 1.0, 3.0])
def test_spectrum_and_condition_number(d, s):
    A = _dense_A(d, s)
    np.testing.assert_allclose(
        np.sort(np.linalg.eigvalsh(A)), np.sort(smoothing_eigenvalues(d, s)), atol=1e-12
    )
    if d % 2 == 0:
        assert np.isclose(np.linalg.cond(A), 1 + 4 * s)


@pytest.mark.parametrize("s", [0.2, 1.0, 3.0])
def test_operator_invariants(s):
    rng = np.random.default_rng(2)
    d = 101
    u, v = rng.normal(size=(2, d))
    Su, Sv = _kernel(u, s), _kernel(v, s)
    assert np.isclose(Sv.sum(), v.sum())  # the mean (DC mode) is kept
    assert np.linalg.norm(Sv) <= np.linalg.norm(v)
    assert np.linalg.norm(Sv) >= np.linalg.norm(v) / (1 + 4 * s)
    assert np.isclose(Su @ v, u @ Sv)  # symmetric
    np.testing.assert_allclose(_kernel(2 * u - v, s), 2 * Su - Sv, atol=1e-12)
    np.testing.assert_allclose(_kernel(np.roll(v, 7), s), np.roll(Sv, 7), atol=1e-12)
    # energy identity ||g||^2 = ||u||^2 + 2 s ||D+ u||^2 + s^2 ||L u||^2
    Dp = np.roll(Sv, -1) - Sv
    Lu = np.roll(Sv, -1) - 2 * Sv + np.roll(Sv, 1)
    assert np.isclose(v @ v, Sv @ Sv + 2 * s * Dp @ Dp + s**2 * Lu @ Lu)


@pytest.mark.parametrize("d", [2, 3, 5, 10, 100, 1000])
@pytest.mark.parametrize("s", [0.2, 1.0, 3.0, 10.0])
def test_variance_factor_closed_form_equals_finite_sum(d, s):
    lam = smoothing_eigenvalues(d, s)
    assert np.isclose(smoothed_noise_variance_factor(d, s), np.mean(1 / lam**2))


def test_variance_factor_matches_paper_table_4():
    got = [smoothed_noise_variance_factor(1000, s) for s in (1, 2, 3, 4, 5)]
    np.testing.assert_allclose(got, [0.268, 0.185, 0.149, 0.128, 0.114], atol=6e-4)
    for s in (1.0, 3.0):  # large-d limit
        lim = (1 + 2 * s) / (1 + 4 * s) ** 1.5
        assert np.isclose(smoothed_noise_variance_factor(10**5, s), lim)


@pytest.mark.parametrize("d,s", [(784, 1.0), (100, 3.0), (10, 1.0)])
def test_smoothing_reduces_noise_variance_by_the_closed_form_factor(d, s):
    """Monte Carlo: per-coordinate variance of smoothed N(0, nu^2) is nu^2 beta."""
    rng = np.random.default_rng(5)
    nu = 2.5
    draws = nu * rng.standard_normal((4000, d))
    smoothed = np.array([_kernel(x, s) for x in draws])
    beta = smoothed_noise_variance_factor(d, s)
    per_coord = smoothed.var(axis=0)
    assert abs(per_coord.mean() / (nu**2 * beta) - 1) < 0.03
    # lag-1 correlation 2s / (1 + 2s) for large d
    if d >= 100:
        c = np.mean(smoothed * np.roll(smoothed, 1, axis=1)) / per_coord.mean()
        assert abs(c - 2 * s / (1 + 2 * s)) < 0.02


# -------------------------------------------------------------------- solver


def _plan(**kw):
    return _sgd_plan(**{**dict(n=60, d=12, alpha=0.05, batch_size=12), **kw})


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize(
    "loss,K", [(LOGISTIC, 1), (SQUARED, 2), (HINGE, 3), (MULTINOMIAL, 3)]
)
def test_solver_equals_numpy_twin_on_same_stream(loss, K, sparse):
    rng = np.random.default_rng(0)
    plan = _plan(K=K, loss=loss, fit_intercept=loss != HINGE)
    X = rng.normal(size=(plan.n_samples, plan.n_features))
    Y = make_targets(loss, plan.n_samples, K, rng)
    solver = DPLSSGD(smoothing=1.7)
    res = solver.solve(
        sp.csr_matrix(X) if sparse else X, Y, plan, 1.3, np.random.default_rng(42)
    )
    W, b = np_noisy_sgd(
        X,
        Y,
        loss,
        plan.fit_intercept,
        plan.clip_norm,
        1.3 * plan.clip_norm,
        solver.sampling_prob(plan),
        plan.learning_rate,
        plan.alpha,
        solver.n_steps(plan),
        np.random.default_rng(42),
        smoothing=1.7,
    )
    np.testing.assert_allclose(res.coef, W, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(res.intercept, b, rtol=1e-9, atol=1e-12)
    # smoothing changed the run
    plain = DPSGD().solve(X, Y, plan, 1.3, np.random.default_rng(42))
    assert not np.allclose(plain.coef, res.coef)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("est", ["logistic2", "logistic3", "svc", "ridge"])
def test_zero_smoothing_is_dp_sgd_bit_for_bit(est, sparse):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 6))
    if sparse:
        X[rng.random(X.shape) < 0.5] = 0.0
        X = sp.csr_matrix(X)
    s = rng.normal(size=200)
    kw = dict(epsilon=1.0, delta=1e-4, max_iter=3, batch_size=32, random_state=7)
    make, y, extra = {
        "logistic2": (LogisticRegression, (s > 0).astype(int), [0, 1]),
        "logistic3": (LogisticRegression, np.digitize(s, [-0.5, 0.5]), [0, 1, 2]),
        "svc": (LinearSVC, (s > 0).astype(int), [0, 1]),
        "ridge": (Ridge, s, None),
    }[est]
    if extra is not None:
        kw["classes"] = extra
    else:  # dp-sgd's "auto" steps settle on the squared loss; dp-lssgd's are its
        kw["learning_rate"] = 0.5  # schedule parameter's: compare constant steps
    a = make(solver="dp-sgd", **kw).fit(X, y)
    b = make(solver=DPLSSGD(smoothing=0.0), **kw).fit(X, y)
    c = make(solver=DPLSSGD(smoothing=0, record_path=True), **kw).fit(X, y)
    for m in (b, c):
        assert a.noise_multiplier_ == m.noise_multiplier_
        assert a.dp_event_ == m.dp_event_
    # on sparse data the steps are lazy (O(nnz)); recording the path flushes
    # the pending noise every epoch, the same distribution in another draw
    # order, so only the run without a path is bit for bit dp-sgd's there
    for m in (b,) if sparse else (b, c):
        assert np.array_equal(a.coef_, m.coef_)
        assert np.array_equal(a.intercept_, m.intercept_)
    assert np.array_equal(c.coef_path_[-1].ravel(), np.ravel(c.coef_))


@pytest.mark.parametrize("s", [0.0, 1.0, 3.0])
def test_event_and_calibration_identical_to_dp_sgd(s):
    for plan in (_plan(), _plan(n=1000, batch_size=50, max_iter=4), _plan(n=10)):
        assert DPLSSGD(smoothing=s).make_event(1.1, plan) == DPSGD().make_event(
            1.1, plan
        )
        assert DPLSSGD(smoothing=s).n_steps(plan) == DPSGD().n_steps(plan)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 5))
    y = (X[:, 0] > 0).astype(int)
    kw = dict(epsilon=0.5, delta=1e-5, max_iter=2, classes=[0, 1], random_state=0)
    a = LogisticRegression(solver="dp-sgd", **kw).fit(X, y)
    b = LogisticRegression(solver=DPLSSGD(smoothing=s), **kw).fit(X, y)
    assert a.dp_event_ == b.dp_event_
    assert a.noise_multiplier_ == b.noise_multiplier_
    assert a.epsilon_ == b.epsilon_ <= 0.5


def test_record_path_is_bit_identical_and_ends_at_coef():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(150, 9))
    y = np.digitize(X[:, 0] + X[:, 1], [-0.5, 0.5])
    kw = dict(epsilon=2.0, delta=1e-4, max_iter=4, batch_size=40, random_state=1)
    kw["classes"] = [0, 1, 2]
    a = LogisticRegression(solver=DPLSSGD(smoothing=2.0), **kw).fit(X, y)
    solver = DPLSSGD(smoothing=2.0, record_path=True)
    b = LogisticRegression(solver=solver, **kw).fit(X, y)
    assert np.array_equal(a.coef_, b.coef_)
    assert b.coef_path_.shape == (4, 3, 9) and b.intercept_path_.shape == (4, 3)
    assert np.array_equal(b.coef_path_[-1], b.coef_)
    assert np.array_equal(b.intercept_path_[-1], b.intercept_)
    assert not hasattr(a, "coef_path_")


def test_step_sensitivity_is_that_of_the_unsmoothed_clipped_sum():
    """Brute force on neighbouring datasets: the statistic the noise covers.

    One full-batch step from zero without noise or penalty gives
    ``W = -lr A^{-1} G / n``, so ``G = -n A W / lr``: the clipped sum moves by at
    most ``clip_norm`` when a record is removed (noise is added before the
    smoothing, which is post-processing).
    """
    rng = np.random.default_rng(4)
    worst = 0.0
    for _ in range(30):
        n, d, K = 20, 8, 3
        X = rng.normal(size=(n, d)) * float(rng.choice([0.01, 1.0, 100.0]))
        Y = make_targets(MULTINOMIAL, n, K, rng)
        clip = float(rng.choice([0.1, 1.0, 5.0]))
        s = float(rng.choice([0.5, 1.0, 3.0]))
        stats = []
        for rows in (np.arange(n), np.delete(np.arange(n), rng.integers(n))):
            m = rows.shape[0]
            plan = _plan(
                n=m, d=d, K=K, loss=MULTINOMIAL, alpha=0.0, clip_norm=clip,
                max_iter=1, batch_size=m, learning_rate=1.0,
            )  # fmt: skip
            res = DPLSSGD(smoothing=s).solve(X[rows], Y[rows], plan, 0.0, rng)
            G = -m * res.coef @ _dense_A(d, s).T
            stats.append(np.concatenate([G.ravel(), -m * res.intercept]))
        diff = np.linalg.norm(stats[0] - stats[1])
        worst = max(worst, diff / clip)
        assert diff <= clip * (1 + 1e-9)
    assert worst > 0.9


@pytest.mark.parametrize("s", [1.0, 3.0])
def test_non_private_limit_is_the_regularised_optimum(s):
    """A^{-1} is a fixed SPD preconditioner: same fixed point as gradient descent."""
    rng = np.random.default_rng(0)
    n, d = 300, 8
    X = rng.normal(size=(n, d))
    w = rng.normal(size=d)
    y = X @ w + 0.3 * rng.normal(size=n)
    kw = dict(epsilon=np.inf, clip_norm=np.inf, alpha=0.01, batch_size=n)
    ours = Ridge(
        solver=DPLSSGD(smoothing=s), max_iter=3000, learning_rate=0.5, **kw
    ).fit(X, y)
    ref = sk.Ridge(alpha=0.01 * n, tol=1e-12).fit(X, y)
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-6)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, atol=1e-6)
    yc = np.digitize(X @ w + 0.3 * rng.normal(size=n), [-1, 1])
    ours = LogisticRegression(
        solver=DPLSSGD(smoothing=s),
        classes=[0, 1, 2],
        max_iter=8000,
        learning_rate=1.0,
        **kw,
    ).fit(X, yc)
    ref = sk.LogisticRegression(C=1 / (0.01 * n), tol=1e-12, max_iter=10_000)
    ref.fit(X, yc)
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-6)


def test_inv_t_epoch_schedule():
    plan = _plan(n=1000, batch_size=128, max_iter=3, learning_rate=2.0)
    solver = DPLSSGD(schedule="inv_t_epoch")
    m = solver.steps_per_epoch(plan)
    assert m == 8
    rates = solver.learning_rates(plan)
    assert rates.shape == (solver.n_steps(plan),)
    np.testing.assert_array_equal(rates[:m], 2.0)
    np.testing.assert_array_equal(rates[m : 2 * m], 2.0 / (1 + m))
    np.testing.assert_array_equal(rates[2 * m :], 2.0 / (1 + 2 * m))
    np.testing.assert_array_equal(DPLSSGD().learning_rates(plan), 2.0)


@pytest.mark.parametrize(
    "params,exc,match",
    [
        (dict(smoothing=-1.0), ValueError, "smoothing"),
        (dict(smoothing=np.nan), ValueError, "smoothing"),
        (dict(smoothing=np.inf), ValueError, "smoothing"),
        (dict(smoothing="1"), ValueError, "smoothing"),
        (dict(smoothing=True), ValueError, "smoothing"),
        (dict(schedule="1/t"), ValueError, "schedule"),
        (dict(record_path="yes"), TypeError, "record_path"),
    ],
)
def test_bad_parameters_name_the_parameter(params, exc, match):
    X = np.random.default_rng(0).normal(size=(40, 3))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(exc, match=match):
        LogisticRegression(solver=DPLSSGD(**params), epsilon=1.0, classes=[0, 1]).fit(
            X, y
        )


def test_registered_and_reported():
    assert SOLVERS["dp-lssgd"] is DPLSSGD
    assert DPLSSGD().get_params() == dict(
        smoothing=0.5, schedule="constant", record_path=False, final_intercept=True
    )
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 4))
    y = (X[:, 0] > 0).astype(int)
    clf = LogisticRegression(solver="dp-lssgd", epsilon=1.0, classes=[0, 1])
    clf.fit(X, y)
    assert "Laplacian smoothing" in str(clf.privacy_report())
