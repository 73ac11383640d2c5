"""The counter-based Poisson sampler: twin, chunking invariance, Bernoulli(q).

The accountant (``PoissonSampledDpEvent(q, ...)`` composed over the steps)
assumes that every row enters every step's batch independently with
probability ``q``. These tests check that law on the sampler the in-memory
solvers and the blocked / Dask paths share; ``tests/distributed`` checks
that the Dask path draws exactly these samples.
"""

import zlib

import numpy as np
import pytest
from scipy import stats
from twins import np_poisson_sample_range

from dpestim._kernels import SAMPLING_BLOCK, poisson_sample_range
from dpestim._kernels.counter_sampling import philox4x64, sampling_key


def _seed(name):
    return zlib.crc32(name.encode())


def _sample(key, step, q, start, stop):
    out = np.empty(stop - start, dtype=np.int64)
    m = poisson_sample_range(key, step, q, start, stop, out)
    return out[:m].copy()


def test_philox_equals_numpy_philox():
    rng = np.random.default_rng(_seed("philox"))
    out = np.empty(4, dtype=np.uint64)
    for _ in range(50):
        key = rng.integers(0, 2**64 - 1, size=2, dtype=np.uint64, endpoint=True)
        ctr = rng.integers(0, 2**63, size=4, dtype=np.uint64)
        ref = np.random.Philox(key=key, counter=ctr).random_raw(4)
        c = [np.uint64(int(ctr[0]) + 1), ctr[1], ctr[2], ctr[3]]
        philox4x64(*c, key[0], key[1], out)
        np.testing.assert_array_equal(out, ref)


@pytest.mark.parametrize("q", [1e-3, 0.03, 0.5, 0.999, 1.0])
@pytest.mark.parametrize(
    "start,stop", [(0, 10_000), (4000, 9000), (4096, 8192), (5, 6), (0, 0)]
)
def test_sample_equals_numpy_twin(q, start, stop):
    key = sampling_key(np.random.default_rng(_seed(f"twin{q}{start}")))
    for step in (0, 7):
        np.testing.assert_array_equal(
            _sample(key, step, q, start, stop),
            np_poisson_sample_range(key, step, q, start, stop, SAMPLING_BLOCK),
        )


def test_sample_does_not_depend_on_the_split():
    rng = np.random.default_rng(_seed("split"))
    n = 3 * SAMPLING_BLOCK + 123
    key = sampling_key(rng)
    for step in range(5):
        whole = _sample(key, step, 0.05, 0, n)
        cuts = np.sort(rng.choice(np.arange(1, n), size=6, replace=False))
        bounds = np.concatenate([[0], cuts, [n]])
        parts = [_sample(key, step, 0.05, a, b) for a, b in zip(bounds, bounds[1:])]
        np.testing.assert_array_equal(np.concatenate(parts), whole)
        assert np.all((whole >= 0) & (whole < n)) and np.all(np.diff(whole) > 0)


def _participation(key, n, q, T):
    P = np.zeros((T, n), dtype=bool)
    for t in range(T):
        P[t, _sample(key, t, q, 0, n)] = True
    return P


def _pooled_z(a, b, q):
    """z-score of the pooled covariance of two arrays of Bernoulli(q) indicators."""
    c = ((a - q) * (b - q)).sum() / (q * (1 - q))
    return c / np.sqrt(a.size)


@pytest.mark.parametrize("q", [0.02, 0.3])
def test_participation_is_bernoulli_q_independent_across_rows_and_steps(q):
    """Counts per row ~ Binomial(T, q); no correlation between rows or steps."""
    n, T = 3 * SAMPLING_BLOCK + 500, 200
    P = _participation(sampling_key(np.random.default_rng(_seed(f"law{q}"))), n, q, T)
    counts = P.sum(axis=0)
    # the counts of the n rows against the Binomial(T, q) law (bins with
    # expected size >= 20, tails merged)
    edges = np.arange(T + 2)
    expected = n * stats.binom.pmf(edges[:-1], T, q)
    keep = expected >= 20
    lo, hi = np.argmax(keep), len(keep) - np.argmax(keep[::-1])
    observed = np.bincount(counts, minlength=T + 1).astype(np.float64)
    obs, exp = observed[lo:hi].copy(), expected[lo:hi].copy()
    obs[0] += observed[:lo].sum()
    obs[-1] += observed[hi:].sum()
    exp[0] += expected[:lo].sum()
    exp[-1] += expected[hi:].sum()
    exp *= obs.sum() / exp.sum()
    assert stats.chisquare(obs, exp).pvalue > 1e-4
    assert abs(P.mean() - q) < 5 * np.sqrt(q * (1 - q) / P.size)
    X = P.astype(np.float64)
    # neighbouring rows, rows across sampling-block boundaries, rows one
    # block apart (same offset in the next block), and consecutive steps
    B = SAMPLING_BLOCK
    assert abs(_pooled_z(X[:, :-1], X[:, 1:], q)) < 5
    edges_ = np.arange(B, n, B)
    assert abs(_pooled_z(X[:, edges_ - 1], X[:, edges_], q)) < 5
    assert abs(_pooled_z(X[:, : n - B], X[:, B:], q)) < 5
    assert abs(_pooled_z(X[:-1], X[1:], q)) < 5


def test_different_keys_and_steps_give_different_samples():
    k1 = sampling_key(np.random.default_rng(1))
    k2 = sampling_key(np.random.default_rng(2))
    a, b, c = (_sample(k, t, 0.1, 0, 5000) for k, t in ((k1, 0), (k2, 0), (k1, 1)))
    assert not np.array_equal(a, b) and not np.array_equal(a, c)


def test_full_batch_takes_every_row_in_range():
    key = np.zeros(2, dtype=np.uint64)
    np.testing.assert_array_equal(_sample(key, 3, 1.0, 10, 20), np.arange(10, 20))
