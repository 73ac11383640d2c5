"""numba kernels against their NumPy twins, and the clipping sensitivity."""

import zlib

import numpy as np
import pytest
import scipy.sparse as sp
from twins import make_targets, np_clipped_grad_sum, np_dloss, np_poisson_sample

from dpestim._kernels import clipped_grad_sum, clipped_grad_sum_csr, poisson_sample
from dpestim.losses import (
    HINGE,
    LOGISTIC,
    MULTINOMIAL,
    SQUARED,
    SQUARED_HINGE,
    dloss,
    loss_value,
)

LOSSES = [LOGISTIC, SQUARED, HINGE, SQUARED_HINGE, MULTINOMIAL]


@pytest.mark.parametrize("loss", LOSSES)
def test_dloss_matches_numpy_and_finite_differences(loss):
    rng = np.random.default_rng(1)
    K = 1 if loss in (LOGISTIC, HINGE) else 3
    for _ in range(20):
        z = rng.normal(size=K) * 3
        y = make_targets(loss, 1, K, rng)[0]
        dz = np.empty(K)
        value = dloss(loss, z, y, dz)
        np.testing.assert_allclose(dz, np_dloss(loss, z, y), rtol=1e-12, atol=1e-14)
        if loss != HINGE:  # hinge is not differentiable at the kink
            h = 1e-6
            for k in range(K):
                zp = z.copy()
                zp[k] += h
                fd = (dloss(loss, zp, y, np.empty(K)) - value) / h
                assert abs(fd - dz[k]) < 1e-4 * max(1, abs(dz[k]))


def test_logistic_loss_stable_for_huge_margins():
    dz = np.empty(1)
    assert dloss(LOGISTIC, np.array([1e4]), np.array([-1.0]), dz) == pytest.approx(1e4)
    assert np.isfinite(dz).all()
    assert loss_value(LOGISTIC, np.array([[-1e4]]), np.array([[-1.0]])) == 0.0


@pytest.mark.parametrize("q", [0.01, 0.3, 1.0])
def test_poisson_sample_matches_numpy_twin_on_same_stream(q):
    n = 1000
    rng1, rng2 = np.random.default_rng(5), np.random.default_rng(5)
    out = np.empty(n, dtype=np.int64)
    for _ in range(20):
        m = poisson_sample(rng1, n, q, out)
        np.testing.assert_array_equal(out[:m], np_poisson_sample(rng2, n, q))
    assert rng1.random() == rng2.random()


def test_poisson_sample_is_bernoulli_per_row():
    # Inclusion frequency of every row ~ q and the batch size ~ Binomial(n, q).
    rng = np.random.default_rng(0)
    n, q, reps = 200, 0.1, 4000
    out = np.empty(n, dtype=np.int64)
    counts = np.zeros(n)
    sizes = np.empty(reps)
    for r in range(reps):
        m = poisson_sample(rng, n, q, out)
        counts[out[:m]] += 1
        sizes[r] = m
    freq = counts / reps
    # 5 standard errors of a Bernoulli(q) frequency over reps trials.
    assert np.abs(freq - q).max() < 5 * np.sqrt(q * (1 - q) / reps)
    assert abs(sizes.mean() - n * q) < 5 * np.sqrt(n * q * (1 - q) / reps)
    assert abs(sizes.var() - n * q * (1 - q)) < 0.15 * n * q * (1 - q)


def _random_problem(loss, rng, n=40, d=7, sparse=False, scale=1.0):
    K = 1 if loss in (LOGISTIC, HINGE, SQUARED_HINGE) else 3
    X = rng.normal(size=(n, d)) * scale
    if sparse:
        X[rng.random((n, d)) < 0.6] = 0.0
        X = sp.csr_matrix(X)
    Y = make_targets(loss, n, K, rng)
    W = rng.normal(size=(K, d))
    b = rng.normal(size=K)
    return X, Y, W, b


def _kernel_sum(X, Y, rows, W, b, loss, clip_norm, fit_intercept):
    K, d = W.shape
    G, g0 = np.zeros((K, d)), np.zeros(K)
    rows = np.asarray(rows, dtype=np.int64)
    z, dz = np.empty(K), np.empty(K)
    if sp.issparse(X):
        sq = np.asarray(X.multiply(X).sum(axis=1)).ravel()
        clipped_grad_sum_csr(
            X.data,
            X.indices,
            X.indptr,
            Y,
            rows,
            rows.shape[0],
            W,
            b,
            loss,
            clip_norm,
            sq,
            fit_intercept,
            G,
            g0,
            z,
            dz,
        )
    else:
        sq = np.einsum("ij,ij->i", X, X)
        clipped_grad_sum(
            X,
            Y,
            rows,
            rows.shape[0],
            W,
            b,
            loss,
            clip_norm,
            sq,
            fit_intercept,
            G,
            g0,
            z,
            dz,
        )
    return G, g0


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_clipped_grad_sum_matches_numpy_twin(loss, sparse, fit_intercept):
    rng = np.random.default_rng(2)
    X, Y, W, b = _random_problem(loss, rng, sparse=sparse)
    rows = rng.choice(X.shape[0], 25, replace=False)
    for clip in (0.1, 1.0, np.inf):
        G, g0 = _kernel_sum(X, Y, rows, W, b, loss, clip, fit_intercept)
        G2, g02 = np_clipped_grad_sum(X, Y, rows, W, b, loss, clip, fit_intercept)
        np.testing.assert_allclose(G, G2, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(g0, g02, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("loss", LOSSES)
def test_clipped_grad_sum_matches_twin_with_overflowing_rows(loss, sparse):
    """Rows whose outputs overflow (inf or NaN) add nothing, in both."""
    rng = np.random.default_rng(12)
    X, Y, W, b = _random_problem(loss, rng, sparse=False)
    X[::5] *= 1e300  # outputs about 1e300 x 1e300 ... overflow
    X[1::5, 0], X[1::5, 1] = 1e300, -1e300  # inf - inf: NaN outputs
    W = W * 1e100
    if sparse:
        X = sp.csr_matrix(X)
    rows = np.arange(X.shape[0])
    with np.errstate(over="ignore"):
        for clip in (0.1, 1.0):
            G, g0 = _kernel_sum(X, Y, rows, W, b, loss, clip, True)
            G2, g02 = np_clipped_grad_sum(X, Y, rows, W, b, loss, clip, True)
            assert np.isfinite(G).all() and np.isfinite(g0).all()
            np.testing.assert_allclose(G, G2, rtol=1e-10, atol=1e-12)
            np.testing.assert_allclose(g0, g02, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("loss", LOSSES)
def test_sensitivity_on_random_neighbouring_datasets(loss, sparse):
    """Adding/removing one record moves the clipped sum by <= clip_norm.

    Brute force over random datasets, random models and records of very
    different scales (including huge ones) and both intercept settings.
    """
    rng = np.random.default_rng(3)
    worst = 0.0
    for trial in range(60):
        clip = float(rng.choice([0.01, 0.5, 1.0, 7.0]))
        scale = float(rng.choice([1e-3, 1.0, 1e3]))
        X, Y, W, b = _random_problem(loss, rng, n=30, sparse=sparse, scale=scale)
        fit_intercept = bool(trial % 2)
        full = np.arange(X.shape[0])
        removed = np.delete(full, rng.integers(X.shape[0]))
        G, g0 = _kernel_sum(X, Y, full, W, b, loss, clip, fit_intercept)
        H, h0 = _kernel_sum(X, Y, removed, W, b, loss, clip, fit_intercept)
        diff = np.sqrt(np.sum((G - H) ** 2) + np.sum((g0 - h0) ** 2))
        worst = max(worst, diff / clip)
        assert diff <= clip * (1 + 1e-9)
    # The bound is attained (records with large gradients are clipped to it).
    assert worst > 0.99


@pytest.mark.parametrize("loss", LOSSES)
def test_dense_kernel_blocks_match_numpy_twin(loss):
    """Batches spanning several 128-row blocks (repeated rows included)."""
    rng = np.random.default_rng(4)
    n, d, K = 400, 7, 3 if loss == MULTINOMIAL else 1
    X = rng.normal(size=(n, d)) * rng.choice([1e-3, 1.0, 30.0], size=(n, 1))
    Y = make_targets(loss, n, K, rng)
    W, b = rng.normal(size=(K, d)), rng.normal(size=K)
    for m in (1, 127, 128, 129, 300, 700):
        rows = rng.integers(n, size=m)
        for fit_intercept in (True, False):
            G, g0 = _kernel_sum(X, Y, rows, W, b, loss, 1.0, fit_intercept)
            ref = np_clipped_grad_sum(X, Y, rows, W, b, loss, 1.0, fit_intercept)
            np.testing.assert_allclose(G, ref[0], rtol=1e-10, atol=1e-12)
            np.testing.assert_allclose(g0, ref[1], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("loss", LOSSES)
def test_dense_kernel_reads_consecutive_rows_in_place(loss):
    """Full batches and consecutive runs (no gather) match the NumPy twin.

    Mixes blocks whose rows are consecutive (read in place), partly
    consecutive, and consecutive runs ending at the last row.
    """
    rng = np.random.default_rng(zlib.crc32(b"in-place"))
    n, d, K = 300, 5, 3 if loss == MULTINOMIAL else 1
    X = rng.normal(size=(n, d)) * rng.choice([1e-3, 1.0, 30.0], size=(n, 1))
    Y = make_targets(loss, n, K, rng)
    W, b = rng.normal(size=(K, d)), rng.normal(size=K)
    cases = [
        np.arange(n),  # full batch
        np.arange(40, 300),  # ends at the last row
        np.r_[np.arange(10, 138), np.arange(200, 250)],
        np.r_[np.arange(0, 100), [5], np.arange(100, 250)],
    ]
    for rows in cases:
        rows = rows.astype(np.int64)
        for fit_intercept in (True, False):
            G, g0 = _kernel_sum(X, Y, rows, W, b, loss, 0.7, fit_intercept)
            ref = np_clipped_grad_sum(X, Y, rows, W, b, loss, 0.7, fit_intercept)
            np.testing.assert_allclose(G, ref[0], rtol=1e-10, atol=1e-12)
            np.testing.assert_allclose(g0, ref[1], rtol=1e-10, atol=1e-12)
