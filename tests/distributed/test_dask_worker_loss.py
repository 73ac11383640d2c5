"""A Dask worker lost in the middle of a private fit.

In its own module so that the 2-worker cluster of ``test_dask.py`` is closed
first: this test starts (and damages) a cluster of its own.
"""

import zlib

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
pytest.importorskip("distributed")

from dpestim import LogisticRegression  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::dpestim.PrivacyBudgetWarning")


def test_worker_lost_mid_fit_aborts_without_a_partial_step(monkeypatch):
    """Kill a worker after step 4: the fit raises, nothing is released.

    Every step the driver takes goes through ``noisy_update`` with the sums
    of all blocks; the step whose sums are incomplete is never applied, and
    a new fit (on the surviving worker) reproduces the uninterrupted run.
    """
    from distributed import Client, LocalCluster

    import dpestim.solvers.sgd._descent as descent

    rng = np.random.default_rng(zlib.crc32(b"kill"))
    X = rng.normal(size=(2500, 5))
    y = np.digitize(X[:, 0] - X[:, 1], [-0.7, 0.7])
    kw = dict(
        classes=[0, 1, 2], max_iter=2, batch_size=250, random_state=11,
        epsilon=None, noise_multiplier=0.8,
    )  # fmt: skip
    ref = LogisticRegression(**kw).fit(X, y)
    applied = []
    update = descent.noisy_update
    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
        ) as cluster,
        Client(cluster),
    ):

        def update_then_kill(G, g0, W, *args):
            applied.append(G.copy())
            update(G, g0, W, *args)
            if len(applied) == 4:
                victim = sorted(cluster.workers)[-1]
                cluster.sync(cluster.workers[victim].close)

        monkeypatch.setattr(descent, "noisy_update", update_then_kill)
        est = LogisticRegression(**kw)
        with pytest.raises(RuntimeError, match="aborted before applying this step"):
            est.fit(da.from_array(X, chunks=(400, 5)), y)
        assert len(applied) == 4 and not hasattr(est, "coef_")
        monkeypatch.setattr(descent, "noisy_update", update)
        est.fit(da.from_array(X, chunks=(400, 5)), y)
    np.testing.assert_allclose(est.coef_, ref.coef_, rtol=0, atol=1e-10)
