"""Fitting on a 2-worker LocalCluster: the in-memory algorithm, block by block.

Equality with the in-memory fit for three chunkings, the sampling law on
the Dask path, bad input raising before any noise, and a worker lost
mid-fit aborting the fit before any step is applied with a partial sum.
"""

import zlib

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
pytest.importorskip("distributed")

from dpestim import LinearSVC, LogisticRegression, Ridge  # noqa: E402
from dpestim._distributed._dask import DaskBlocks  # noqa: E402
from dpestim._kernels import poisson_sample_range, sampling_key  # noqa: E402
from dpestim.losses import SQUARED  # noqa: E402
from dpestim.scaling import BlockedArray  # noqa: E402
from dpestim.solvers import DPGD, ERMPlan  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::dpestim.PrivacyBudgetWarning")

CHUNKS = (311, 1000, 2048)


def _data(n=2500, d=5, seed="dask"):
    rng = np.random.default_rng(zlib.crc32(seed.encode()))
    X = rng.normal(size=(n, d))
    y = np.digitize(X[:, 0] - X[:, 1] + 0.3 * rng.normal(size=n), [-0.7, 0.7])
    return X, y


def _params(**kw):
    return dict(random_state=11, epsilon=None, noise_multiplier=0.8, **kw)


@pytest.mark.parametrize("persist", [True, False])
@pytest.mark.parametrize(
    "est,kw",
    [
        (LogisticRegression, {"classes": [0, 1, 2], "max_iter": 2, "batch_size": 250}),
        (LinearSVC, {"classes": [0, 1, 2], "max_iter": 2, "batch_size": 250}),
        (Ridge, {"solver": DPGD(noise="gaussian"), "max_iter": 15, "alpha": 0.01}),
    ],
)
def test_fit_equals_in_memory_fit_for_three_chunkings(client, est, kw, persist):
    X, y = _data()
    target = y if est is not Ridge else X @ np.arange(5.0)
    ref = est(**_params(**kw)).fit(X, target)
    for rows in CHUNKS:
        Xd = da.from_array(X, chunks=(rows, 3))  # columns are gathered too
        m = est(**_params(**kw)).fit(BlockedArray(Xd, persist=persist), target)
        np.testing.assert_allclose(m.coef_, ref.coef_, rtol=0, atol=1e-10)
        np.testing.assert_allclose(m.intercept_, ref.intercept_, rtol=0, atol=1e-10)
        assert m.dp_event_ == ref.dp_event_ and m.n_iter_ == ref.n_iter_


def test_worker_list_does_not_read_the_cached_scheduler_info(client, monkeypatch):
    """The client's periodic refresh leaves ``scheduler_info()["workers"]``
    empty (distributed 2026.8: it fetches no per-worker entries), so a fit
    that read it could see "no workers" at random; the blocks ask the
    scheduler directly and fit as before."""
    X, y = _data(seed="info")
    kw = _params(classes=[0, 1, 2], max_iter=2, batch_size=250)
    ref = LogisticRegression(**kw).fit(X, y)
    monkeypatch.setattr(
        type(client), "scheduler_info", lambda self, **k: {"workers": {}}
    )
    m = LogisticRegression(**kw).fit(BlockedArray(da.from_array(X, chunks=(700, 5))), y)
    np.testing.assert_allclose(m.coef_, ref.coef_, rtol=0, atol=1e-10)


def test_dataframe_and_dask_targets(client):
    dd = pytest.importorskip("dask.dataframe")
    import pandas as pd

    X, y = _data(seed="frame")
    kw = _params(classes=[0, 1, 2], max_iter=2, batch_size=300)
    ref = LogisticRegression(**kw).fit(X, y)
    frame = dd.from_pandas(pd.DataFrame(X, columns=list("abcde")), npartitions=3)
    m = LogisticRegression(**kw).fit(frame, da.from_array(y, chunks=700))
    np.testing.assert_allclose(m.coef_, ref.coef_, rtol=0, atol=1e-10)
    with pytest.raises(ValueError, match="unknown chunk sizes"):
        LogisticRegression(**kw).fit(frame.to_dask_array(), y)
    with pytest.raises(TypeError, match="numeric"):
        LogisticRegression(**kw).fit(frame.assign(s="x"), y)


def test_dask_path_draws_the_in_memory_poisson_samples(client):
    """Identity design: the clipped sum of step t is minus the sample indicator.

    With X = I (one row per feature), squared loss, targets 1 and W = 0, row
    i contributes -e_i, so the oracle's output reveals which rows the
    workers sampled. It must be the in-memory sample of the same key and
    step exactly, and participation counts must be Binomial(T, q).
    """
    n, T, q = 60, 300, 0.2
    X = da.from_array(np.eye(n), chunks=(7, n))
    plan = ERMPlan(n, n, 1, SQUARED, 0.0, False, 10.0, 1, int(q * n), 0.1)
    key = sampling_key(np.random.default_rng(zlib.crc32(b"law")))
    blocks = DaskBlocks(X, client)
    W, b = np.zeros((1, n)), np.zeros(1)
    P = np.zeros((T, n))
    rows = np.empty(n, dtype=np.int64)
    with blocks.gradient_oracle(np.ones((n, 1)), plan) as clipped_sum:
        for t in range(T):
            G, _ = clipped_sum(key, t, q, W, b)
            P[t] = -G[0]
            ref = np.zeros(n)
            ref[rows[: poisson_sample_range(key, t, q, 0, n, rows)]] = 1.0
            np.testing.assert_array_equal(P[t], ref)
    counts = P.sum(axis=0)  # n draws of Binomial(T, q): mean and variance
    assert abs(counts.mean() - T * q) < 4 * np.sqrt(T * q * (1 - q) / n)
    assert 0.5 < counts.var(ddof=1) / (T * q * (1 - q)) < 1.7
    C = np.corrcoef(P.T)
    off = C[~np.eye(n, dtype=bool)]
    assert np.abs(off).max() < 5 / np.sqrt(T)  # no pair of rows moves together


def test_nan_in_a_late_chunk_raises_before_any_noise(client):
    X, y = _data(seed="nan")
    X[-2, 1] = np.inf
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    with pytest.raises(ValueError, match="NaN or infinity"):
        LogisticRegression(classes=[0, 1, 2], random_state=rng).fit(
            da.from_array(X, chunks=(500, 5)), y
        )
    assert rng.bit_generator.state == state  # nothing drawn: no noise released


def test_unsupported_solver_on_dask_names_the_supported_ones(client):
    X, y = _data(seed="unsupported")
    with pytest.raises(ValueError, match="Supported: dp-sgd"):
        LogisticRegression(classes=[0, 1, 2], solver="dp-scd").fit(
            da.from_array(X, chunks=500), y
        )


def test_nonprivate_fit_on_a_dask_array():
    """epsilon=inf on blocked X: the exact utility check (in-memory X only)
    is skipped, not run on the blocked wrapper (a matmul error before)."""
    X, y = _data()
    Xd = da.from_array(X, chunks=(1000, X.shape[1]))
    fit = LogisticRegression(epsilon=np.inf, classes=[0, 1, 2], random_state=0)
    fit.fit(Xd, y)
    assert np.isfinite(fit.coef_).all() and fit.score(X, y) > 0.6


def test_pure_dp_auto_on_a_dask_array_says_why():
    """delta=0 with solver='auto' picks a pure-DP solver, none of which runs
    block-wise: the error says the rule picked it and to pass delta > 0."""
    X, y = _data()
    Xd = da.from_array(X, chunks=(1000, X.shape[1]))
    with pytest.raises(ValueError, match="picked 'dp-nag' for delta=0"):
        LinearSVC(delta=0, classes=[0, 1, 2]).fit(Xd, y)
