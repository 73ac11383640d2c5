"""Dask / out-of-core benchmark: per-step overhead, throughput, memory.

One run measures, on this machine:

1. **Per-step overhead** of the Dask path against the in-memory fit, at
   expected batch sizes 256, 4,096 and the full batch, on an in-memory
   ``n x 100`` float64 problem held by a 2-worker ``LocalCluster``
   (processes, one thread each; blocks persisted on the workers). Time per
   step is a difference of whole-fit times, ``(t(T2) - t(T1)) / (T2 - T1)``,
   which cancels the per-fit constants (validation, loading the blocks onto
   the workers, accounting); each fit is repeated and the median of the
   repeats is used.
2. **Out-of-core throughput** at the full batch (dp-gd, Gaussian: one step
   is one epoch) on an ``N x 100`` float32 zarr store on disk: 2 workers each
   streaming their blocks from the store at every step (``persist=False``)
   against one process streaming the same store block by block
   (``BlockedArray(zarr_array, block_size=...)``, no cluster).
3. **Memory**: peak resident memory of each worker process
   (``ru_maxrss``) in the out-of-core run, and a fit on a store 2x larger
   than the memory limit given to each worker, compared in test accuracy
   with the in-memory fit on a subsample that fits in that limit.

CPU time (process, and the workers' via ``client.run``) is recorded beside
wall time: the machine is shared.

Usage::

    PYTHONPATH=. python benchmarks/speed/dask_fit.py --rows 2000000   # scaled down
    PYTHONPATH=. python benchmarks/speed/dask_fit.py --rows 20000000  # 8 GB store

Writes ``benchmarks/results/bench_dask_<rows>.json`` and prints a table.
"""

import argparse
import json
import os
import resource
import shutil
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
RESULTS = Path(
    os.environ.get("DPESTIM_BENCH_RESULTS") or REPO / "benchmarks" / "results"
)
D = 100


def _cpu():
    t = os.times()
    return t.user + t.system


def _timed(fn, repeats):
    """Median wall and CPU seconds of ``fn()`` over ``repeats`` runs."""
    walls, cpus = [], []
    for _ in range(repeats):
        w, c = time.perf_counter(), _cpu()
        fn()
        walls.append(time.perf_counter() - w)
        cpus.append(_cpu() - c)
    return statistics.median(walls), statistics.median(cpus)


def _worker_cpu(client):
    return sum(client.run(_cpu).values())


def _worker_maxrss_mb(client):
    def rss():
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    return client.run(rss)


def _busy(n=15_000_000):
    """Seconds of a pure-CPU loop (no memory traffic, no I/O)."""
    t = time.perf_counter()
    s = 0
    for i in range(n):
        s += i
    return time.perf_counter() - t


def parallel_capacity(client, repeats=3):
    """CPU the 2 workers get together, in cores, right now (control).

    The same pure-CPU loop on one worker alone, then on both at once:
    ``2 * t_alone / t_both`` is 2.0 on 2 idle cores and 1.0 when the
    workers share one core (e.g. other jobs on the machine). No Dask
    speedup over one process can exceed it.
    """
    w0 = sorted(client.scheduler_info()["workers"])[0]
    ratios = []
    for _ in range(repeats):
        alone = client.run(_busy, workers=[w0])[w0]
        both = max(client.run(_busy).values())
        ratios.append(2 * alone / both)
    return statistics.median(ratios)


def _make_problem(n, seed=0):
    """Rows ~ N(0, I / D); labels of the fixed model ``w`` (the store's too)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, D)) / np.sqrt(D)
    w = np.random.default_rng(0).normal(size=D)
    y = (X @ w + 0.3 * rng.normal(size=n) > 0).astype(int)
    return X, y


def per_step_overhead(client, n, repeats):
    """Seconds per step, in memory vs Dask, at three batch sizes."""
    import dask.array as da

    from dpestim import LogisticRegression
    from dpestim.scaling import BlockedArray

    X, y = _make_problem(n)
    Xd = da.from_array(X, chunks=(n // 4, D)).persist()
    rows = []
    for batch in (256, 4096, n):
        # dp-sgd runs ceil(max_iter * n / batch) steps: 1 vs 2 epochs for
        # mini-batches, 3 vs 13 full-batch steps
        epochs = (1, 2) if batch < n else (3, 13)
        timings = {}
        for where in ("memory", "dask"):
            X_in = X if where == "memory" else BlockedArray(Xd)
            per = []
            for E in epochs:
                est = LogisticRegression(
                    classes=[0, 1],
                    epsilon=None,
                    noise_multiplier=1.0,
                    batch_size=batch,
                    max_iter=E,
                    random_state=0,
                )

                def fit(est=est, X_in=X_in):
                    est.fit(X_in, y)

                fit()  # warm-up (numba; the noise is fixed, no calibration)
                wc0 = _worker_cpu(client)
                wall, cpu = _timed(fit, repeats)
                wcpu = (_worker_cpu(client) - wc0) / repeats
                per.append((est.n_iter_, wall, cpu, wcpu))
            (s1, w1, c1, k1), (s2, w2, c2, k2) = per
            timings[where] = {
                "steps": (s1, s2),
                "s_per_step": (w2 - w1) / (s2 - s1),
                "cpu_per_step": (c2 - c1) / (s2 - s1),
                "worker_cpu_per_step": (k2 - k1) / (s2 - s1),
            }
        rows.append(
            {
                "batch": batch,
                "memory_ms": 1e3 * timings["memory"]["s_per_step"],
                "dask_ms": 1e3 * timings["dask"]["s_per_step"],
                "overhead_ms": 1e3
                * (timings["dask"]["s_per_step"] - timings["memory"]["s_per_step"]),
                "detail": timings,
            }
        )
    return rows


def _write_store(path, n, block):
    import zarr

    if path.exists():
        shutil.rmtree(path)
    z = zarr.create_array(
        path, shape=(n, D), chunks=(block, D), dtype="f4", compressors=None
    )
    rng = np.random.default_rng(1)
    w = np.random.default_rng(0).normal(size=D)
    y = np.empty(n, dtype=np.int8)
    for lo in range(0, n, block):
        hi = min(lo + block, n)
        Xb = (rng.normal(size=(hi - lo, D)) / np.sqrt(D)).astype(np.float32)
        z[lo:hi] = Xb
        y[lo:hi] = Xb @ w + 0.3 * rng.normal(size=hi - lo) > 0
    return z, y


def out_of_core(client, path, n, block, steps, repeats):
    """Seconds per full-batch step (= epoch): 2 streaming workers vs 1 process."""
    import dask.array as da
    import zarr

    from dpestim import LogisticRegression
    from dpestim.scaling import BlockedArray
    from dpestim.solvers import DPGD

    z = zarr.open_array(path, mode="r")
    y = np.load(path.with_suffix(".y.npy"))

    def fit(X_in, T):
        return LogisticRegression(
            classes=[0, 1],
            solver=DPGD(noise="gaussian"),
            epsilon=None,
            noise_multiplier=1.0,
            max_iter=T,
            random_state=0,
        ).fit(X_in, y)

    res = {"parallel_capacity_cores_before": parallel_capacity(client)}
    one = BlockedArray(z, block_size=block)  # one process, no cluster
    Xd = da.from_zarr(str(path), chunks=(block, D))
    two = BlockedArray(Xd, persist=False, client=client)
    for name, X_in in (("one_process", one), ("two_workers", two)):
        out = []
        fit(X_in, 1)  # warm-up: numba compilation in this process / the workers
        for T in (1, 1 + steps):
            wc0 = _worker_cpu(client)
            wall, cpu = _timed(lambda X_in=X_in, T=T: fit(X_in, T), repeats)
            out.append((wall, cpu, (_worker_cpu(client) - wc0) / repeats))
        (w1, c1, k1), (w2, c2, k2) = out
        res[name] = {
            "s_per_epoch": (w2 - w1) / steps,
            "cpu_per_epoch": (c2 - c1) / steps,
            "worker_cpu_per_epoch": (k2 - k1) / steps,
        }
    res["speedup"] = (
        res["one_process"]["s_per_epoch"] / res["two_workers"]["s_per_epoch"]
    )
    # CPU the workers spend per epoch, relative to the one process: the
    # ceiling of the speedup on 2 idle cores is 2 / cpu_ratio
    res["cpu_ratio"] = (
        res["two_workers"]["worker_cpu_per_epoch"] / res["one_process"]["cpu_per_epoch"]
    )
    res["parallel_capacity_cores"] = parallel_capacity(client)  # after
    res["worker_maxrss_mb"] = _worker_maxrss_mb(client)
    return res


def larger_than_memory(path, n, block, limit_bytes, epochs):
    """Fit a store 2x the workers' memory limit; compare with a subsample fit."""
    import dask.array as da
    import zarr
    from distributed import Client, LocalCluster

    from dpestim import LogisticRegression
    from dpestim.scaling import BlockedArray
    from dpestim.solvers import DPGD

    y = np.load(path.with_suffix(".y.npy"))
    z = zarr.open_array(path, mode="r")
    X_test, y_test = _make_problem(20_000, seed=5)
    kw = dict(
        classes=[0, 1],
        solver=DPGD(noise="gaussian"),
        epsilon=1.0,
        delta=1e-6,
        max_iter=epochs,
        learning_rate=2.0,
        random_state=0,
    )
    with (
        LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            memory_limit=limit_bytes,
            dashboard_address=None,
        ) as cluster,
        Client(cluster) as client,
    ):
        Xd = da.from_zarr(str(path), chunks=(block, D))
        w = time.perf_counter()
        big = LogisticRegression(**kw).fit(BlockedArray(Xd, persist=False), y)
        wall = time.perf_counter() - w
        rss = _worker_maxrss_mb(client)
    # the subsample that fits in one worker's limit (float64 in memory)
    m = int(limit_bytes // (8 * D) // 2)
    small = LogisticRegression(**kw).fit(np.asarray(z[:m], dtype=np.float64), y[:m])
    return {
        "store_gb": n * D * 4 / 1e9,
        "worker_limit_gb": limit_bytes / 1e9,
        "subsample_rows": m,
        "acc_full_store": big.score(X_test, y_test),
        "acc_subsample_in_memory": small.score(X_test, y_test),
        "epsilon": big.epsilon_,
        "wall_s": wall,
        "worker_maxrss_mb": rss,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--overhead-rows", type=int, default=100_000)
    ap.add_argument("--block", type=int, default=250_000)
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--store", default=str(RESULTS / "scratch" / "bench_dask.zarr"))
    ap.add_argument("--skip-memory-limit", action="store_true")
    ap.add_argument("--only-memory-limit", action="store_true")
    ap.add_argument("--tag", default="", help="suffix of the results file")
    ap.add_argument("--reuse-store", action="store_true")
    ap.add_argument("--epochs", type=int, default=5, help="memory-limit fit")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    sys.stdout.reconfigure(line_buffering=True)
    import logging

    logging.getLogger("absl").setLevel(logging.ERROR)
    logging.getLogger("distributed").setLevel(logging.ERROR)
    from distributed import Client, LocalCluster

    path = Path(args.store)
    path.parent.mkdir(parents=True, exist_ok=True)
    t = time.perf_counter()
    if not (args.reuse_store and path.exists()):
        _, y = _write_store(path, args.rows, args.block)
        np.save(path.with_suffix(".y.npy"), y)
        print(
            f"wrote {args.rows} x {D} float32 store in {time.perf_counter() - t:.1f} s"
        )
    out = RESULTS / f"bench_dask_{args.rows}{args.tag}.json"
    record = {
        "command": " ".join([Path(sys.executable).name] + sys.argv),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "cpus": os.cpu_count(),
        "loadavg_start": os.getloadavg(),
    }
    if args.only_memory_limit:
        out = out.with_name(out.stem + "_memory_limit.json")
    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
    ):
        if args.only_memory_limit:
            cluster.close()
            return _memory_limit_part(args, path, record, out)
        record["overhead"] = per_step_overhead(client, args.overhead_rows, args.repeats)
        out.write_text(json.dumps(record, indent=1, default=str))
        for r in record["overhead"]:
            print(
                f"batch {r['batch']:>8}: in memory {r['memory_ms']:8.2f} ms/step, "
                f"dask {r['dask_ms']:8.2f} ms/step, overhead {r['overhead_ms']:7.2f} ms"
            )
        record["out_of_core"] = out_of_core(
            client, path, args.rows, args.block, args.steps, args.repeats
        )
        ooc = record["out_of_core"]
        out.write_text(json.dumps(record, indent=1, default=str))
        print(
            f"full batch on {args.rows} x {D} float32 zarr: one process "
            f"{ooc['one_process']['s_per_epoch']:.2f} s/epoch, 2 workers "
            f"{ooc['two_workers']['s_per_epoch']:.2f} s/epoch, "
            f"speedup {ooc['speedup']:.2f}x; worker CPU / one-process CPU "
            f"{ooc['cpu_ratio']:.2f}; cores available to the 2 workers "
            f"{ooc['parallel_capacity_cores']:.2f}; "
            f"worker max RSS {ooc['worker_maxrss_mb']}"
        )
    if not args.skip_memory_limit:
        return _memory_limit_part(args, path, record, out)
    _finish(args, path, record, out)


def _memory_limit_part(args, path, record, out):
    limit = args.rows * D * 4 // 2  # the store is 2x each worker's limit
    record["larger_than_memory"] = larger_than_memory(
        path, args.rows, args.block // 2, limit, epochs=args.epochs
    )
    print(record["larger_than_memory"])
    _finish(args, path, record, out)


def _finish(args, path, record, out):
    record["loadavg_end"] = os.getloadavg()
    out.write_text(json.dumps(record, indent=1, default=str))
    print(f"wrote {out}")
    if not args.reuse_store:
        shutil.rmtree(path)
        path.with_suffix(".y.npy").unlink()


if __name__ == "__main__":
    main()
