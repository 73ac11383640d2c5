"""Scaling out: the same private model in memory, from disk and on Dask
======================================================================

Fits ``dpestim.LogisticRegression`` (DP-SGD, epsilon = 1) three ways on the
same synthetic data: from an in-memory array, streamed from a zarr store on
disk in blocks of 20,000 rows, and on a 2-worker ``dask.distributed``
``LocalCluster`` from a Dask array with a different chunking. The Poisson
samples are keyed by (seed, step, row), so with the same ``random_state``
the three models agree to floating-point summation order, and their privacy
reports are identical.

Needs ``pip install "dpestim[dask]"``.
Run: ``python examples/scaling_out.py``
"""

import tempfile
from pathlib import Path

import dask.array as da
import numpy as np
import zarr
from distributed import Client, LocalCluster

from dpestim import LogisticRegression
from dpestim.scaling import BlockedArray


def main():
    """Fit in memory, from zarr, and on a 2-worker cluster; compare."""
    rng = np.random.default_rng(0)
    n, d = 100_000, 20
    X = rng.normal(size=(n, d)) / np.sqrt(d)  # rows of norm ~1 (public scaling)
    y = (X @ rng.normal(size=d) + 0.3 * rng.normal(size=n) > 0).astype(int)

    params = dict(
        epsilon=1.0,
        delta=1e-6,
        classes=[0, 1],
        batch_size=2048,
        max_iter=3,
        random_state=0,
        # Blocked input (zarr, Dask, memory maps) runs neither the private row
        # scale nor the private utility check (each reads the rows in memory):
        # with them off in memory too, the three fits are the same mechanism.
        # The rows are then used as given, so scale them by public constants
        # (here: norm ~1).
        feature_scale=None,
        utility_check=None,
    )

    in_memory = LogisticRegression(**params).fit(X, y)

    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "X.zarr"
        z = zarr.create_array(store, shape=X.shape, chunks=(10_000, d), dtype="f8")
        z[:] = X
        on_disk = LogisticRegression(**params).fit(
            BlockedArray(zarr.open_array(store), block_size=20_000), y
        )

        with (
            LocalCluster(
                n_workers=2,
                threads_per_worker=1,
                processes=False,  # threads keep the demo light; processes (the
                dashboard_address=None,  # default) run the kernels in parallel
            ) as lc,
            Client(lc),
        ):
            X_dask = da.from_zarr(str(store), chunks=(7_000, d))
            on_dask = LogisticRegression(**params).fit(X_dask, y)

    for name, est in [("in memory", in_memory), ("zarr", on_disk), ("dask", on_dask)]:
        gap = np.abs(est.coef_ - in_memory.coef_).max()
        print(
            f"{name:>10}: accuracy {est.score(X, y):.4f}, epsilon {est.epsilon_:.4f}, "
            f"max |coef - in-memory coef| = {gap:.1e}"
        )
    print()
    print(on_dask.privacy_report())


if __name__ == "__main__":  # worker processes re-import this module
    main()
