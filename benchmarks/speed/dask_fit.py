"""Dask / out-of-core benchmark: per-step overhead, throughput, memory.

One run measures, on this machine:

0. **A default fit, in memory vs on the cluster** (issue 28): ``--fit-rows``
   x 50 float32 (default 1,000,000), ``LogisticRegression(epsilon=1,
   delta=1e-7)`` with every hyperparameter ``"auto"``, fitted in memory and
   as ``dask.array.from_array(X)`` on the 2-worker ``LocalCluster`` in the
   same run: wall time, CPU time (driver + workers for Dask), test
   accuracy on 100,000 fresh rows, steps, messages per worker, and every
   warning raised. Each fit is preceded by an untimed warm-up fit (numba,
   imports on the workers, the noise calibration); the median of
   ``--repeats`` timed fits is kept. ``--compare-actor`` adds the former
   path: Dask actors and the in-memory plan (its batch and passes, so its
   number of steps).
1. **Round trip of a step** with no work (about one sampled row), through
   the direct channel and through Dask actors, and the **per-step
   overhead** of the Dask path against the in-memory fit, at
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

Writes ``benchmarks/results/bench_dask_<rows>.json`` and prints a table;
``--out NAME`` writes ``benchmarks/results/NAME.{json,md}`` instead.
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
    w0 = sorted(client.nthreads())[0]
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


def _fit_problem(n, seed):
    """``n`` x 50 float32 rows ~ N(0, I / 50); labels of a fixed model."""
    d = 50
    rng = np.random.default_rng(seed)
    X = (rng.normal(size=(n, d)) / np.sqrt(d)).astype(np.float32)
    w = np.random.default_rng(0).normal(size=d)
    y = (X @ w + 0.3 * rng.normal(size=n) > 0).astype(int)
    return X, y


def default_fit(client, n, repeats, compare_actor=False):
    """The ``"auto"`` fit in memory vs on the cluster, in the same run."""
    import dask.array as da

    import dpestim._distributed._channel as channel
    import dpestim._distributed._dask as dask_blocks
    from dpestim import LogisticRegression

    X, y = _fit_problem(n, seed=1)
    X_test, y_test = _fit_problem(100_000, seed=2)
    kw = dict(classes=[0, 1], epsilon=1.0, delta=1e-7, random_state=0)
    sent = []
    send = channel._send
    channel._send = lambda sock, obj: (sent.append(obj[0]), send(sock, obj))[1]
    rows = {}

    def run(name, make_X, est_kw, where="dask"):
        est = LogisticRegression(**est_kw)
        est.fit(make_X(), y)  # warm-up
        walls, cpus, wcpus, caught = [], [], [], []
        for _ in range(repeats):
            X_in = make_X()
            sent.clear()
            wc0 = _worker_cpu(client) if where == "dask" else 0.0
            with warnings.catch_warnings(record=True) as ws:
                warnings.simplefilter("always")
                w0, c0 = time.perf_counter(), _cpu()
                est.fit(X_in, y)
                walls.append(time.perf_counter() - w0)
                cpus.append(_cpu() - c0)
            wcpus.append(_worker_cpu(client) - wc0 if where == "dask" else 0.0)
            caught += [f"{w.category.__name__}: {str(w.message)[:80]}" for w in ws]
        workers = len(client.nthreads())
        rows[name] = {
            "wall_s": statistics.median(walls),
            "cpu_s": statistics.median(cpus),
            "worker_cpu_s": statistics.median(wcpus),
            "total_cpu_s": statistics.median(c + k for c, k in zip(cpus, wcpus)),
            "walls": walls,
            "steps": int(est.n_iter_),
            "batch_size": int(est.batch_size_),
            "max_iter": int(est.max_iter_),
            "epsilon": float(est.epsilon_),
            "accuracy": float(est.score(X_test, y_test)),
            "messages_per_worker": len(sent) / workers if where == "dask" else 0,
            "warnings": sorted(set(caught)),
            "n_warnings": len(caught),
        }
        print(name, {k: v for k, v in rows[name].items() if k != "walls"})
        return est

    mem = run("in_memory", lambda: X, kw, where="memory")
    run("dask", lambda: da.from_array(X, chunks=(n // 4, 50)), kw)
    if compare_actor:  # the former path: actors, the in-memory plan's steps
        cls = dask_blocks.DaskBlocks
        start = cls._start_actors

        def actors(self):
            self.channel = "actor"
            start(self)

        cls._start_actors = actors
        try:
            plan = dict(kw, batch_size=mem.batch_size_, max_iter=mem.max_iter_)
            run(
                "dask_actor_memory_plan",
                lambda: da.from_array(X, chunks=(n // 4, 50)),
                plan,
            )
        finally:
            cls._start_actors = start
    channel._send = send
    m, d = rows["in_memory"], rows["dask"]
    rows["ratios"] = {
        "wall": d["wall_s"] / m["wall_s"],
        "cpu": d["total_cpu_s"] / m["cpu_s"],
        "accuracy_points": 100 * (d["accuracy"] - m["accuracy"]),
    }
    print("ratios", rows["ratios"])
    return rows


def _write_md(record, path):
    """The tables of ``record`` as Markdown."""
    lines = [
        "# bench_dask",
        "",
        f"Command: `{record['command']}`; {record['date']}; {record['cpus']} CPUs; "
        f"load average {record['loadavg_start']} at the start, "
        f"{record.get('loadavg_end')} at the end.",
        "",
    ]
    fit = record.get("default_fit")
    if fit:
        lines += [
            "## Default fit, 1,000,000 x 50 float32, in memory vs LocalCluster(2 x 1)",
            "",
            "| fit | wall (s) | CPU (s): driver + workers | steps | batch | passes "
            "| messages / worker | test accuracy | warnings |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for name, r in fit.items():
            if name == "ratios":
                continue
            lines.append(
                f"| {name} | {r['wall_s']:.2f} | {r['cpu_s']:.2f} + "
                f"{r['worker_cpu_s']:.2f} = {r['total_cpu_s']:.2f} | {r['steps']} | "
                f"{r['batch_size']} | {r['max_iter']} | "
                f"{r['messages_per_worker']:.0f} | {r['accuracy']:.4f} | "
                f"{r['n_warnings']} |"
            )
        q = fit["ratios"]
        lines += [
            "",
            f"Dask / in memory: wall **{q['wall']:.2f}x**, CPU **{q['cpu']:.2f}x**, "
            f"accuracy {q['accuracy_points']:+.2f} points.",
            "",
        ]
    lat = record.get("step_latency")
    if lat:
        lines += [
            "## Round trip of a step with no work (100,000 x 100 on 2 workers)",
            "",
            "| channel | median (ms) | mean (ms) | 90th percentile (ms) "
            "| driver CPU (ms) |",
            "|---|---|---|---|---|",
        ]
        for name, r in lat.items():
            lines.append(
                f"| {name} | {r['median_ms']:.2f} | {r['mean_ms']:.2f} | "
                f"{r['p90_ms']:.2f} | {r['driver_cpu_ms']:.2f} |"
            )
        lines.append("")
    if record.get("overhead"):
        lines += [
            "## Per-step overhead (dp-sgd, 100,000 x 100 float64)",
            "",
            "| expected batch | in memory (ms/step) | Dask (ms/step) | overhead (ms) |",
            "|---|---|---|---|",
        ]
        for r in record["overhead"]:
            lines.append(
                f"| {r['batch']} | {r['memory_ms']:.2f} | {r['dask_ms']:.2f} | "
                f"{r['overhead_ms']:.2f} |"
            )
        lines.append("")
    ooc = record.get("out_of_core")
    if ooc:
        lines += [
            "## Full batch on a zarr store (dp-gd, one step = one epoch)",
            "",
            "| reader | s / epoch | CPU / epoch (s) |",
            "|---|---|---|",
            f"| one process | {ooc['one_process']['s_per_epoch']:.2f} | "
            f"{ooc['one_process']['cpu_per_epoch']:.2f} |",
            f"| 2 workers (persist=False) | {ooc['two_workers']['s_per_epoch']:.2f} | "
            f"{ooc['two_workers']['worker_cpu_per_epoch']:.2f} |",
            "",
            f"Speedup {ooc['speedup']:.2f}x; cores available to the 2 workers "
            f"{ooc['parallel_capacity_cores_before']:.2f} before, "
            f"{ooc['parallel_capacity_cores']:.2f} after; worker peak RSS "
            f"{ooc['worker_maxrss_mb']} MB.",
            "",
        ]
    big = record.get("larger_than_memory")
    if big:
        lines += [
            "## A store larger than each worker's memory limit "
            "(2 workers, persist=False)",
            "",
            f"Store {big['store_gb']:.1f} GB, limit {big['worker_limit_gb']:.1f} GB "
            f"per worker: {big['wall_s']:.1f} s wall, test accuracy "
            f"{big['acc_full_store']:.4f} (in memory on the first "
            f"{big['subsample_rows']} rows: {big['acc_subsample_in_memory']:.4f}), "
            f"epsilon {big['epsilon']:.4f}, worker peak RSS "
            f"{big['worker_maxrss_mb']} MB.",
            "",
        ]
    path.write_text("\n".join(lines))


def step_latency(client, n_calls=300):
    """Milliseconds per step call when a step has (almost) no work.

    The gradient oracle of a 100,000 x 100 array held on the workers is
    called ``n_calls`` times at ``q = 1e-5`` (about one sampled row per
    step), through each channel (direct socket, Dask actors): what is left
    is the cost of one round trip to every worker. Driver CPU per call too.
    """
    import dask.array as da

    from dpestim._distributed._dask import DaskBlocks
    from dpestim._kernels import sampling_key
    from dpestim.losses import LOGISTIC
    from dpestim.solvers import ERMPlan

    X, y = _make_problem(100_000)
    Y = np.where(y[:, None] > 0, 1.0, -1.0)
    plan = ERMPlan(X.shape[0], D, 1, LOGISTIC, 0.0, True, 1.0, 1, 1, 0.5)
    key = sampling_key(np.random.default_rng(0))
    W, b = np.zeros((1, D)), np.zeros(1)
    out = {}
    for channel in ("direct", "actor"):
        blocks = DaskBlocks(da.from_array(X, chunks=(25_000, D)), client)
        blocks.channel = channel
        with blocks.gradient_oracle(Y, plan) as clipped_sum:
            clipped_sum(key, 0, 1e-5, W, b)
            walls = []
            c0 = _cpu()
            for t in range(n_calls):
                w0 = time.perf_counter()
                clipped_sum(key, t, 1e-5, W, b)
                walls.append(time.perf_counter() - w0)
            cpu = _cpu() - c0
        out[channel] = {
            "used": blocks.channel,
            "median_ms": 1e3 * statistics.median(walls),
            "mean_ms": 1e3 * statistics.fmean(walls),
            "p90_ms": 1e3 * float(np.quantile(walls, 0.9)),
            "driver_cpu_ms": 1e3 * cpu / n_calls,
        }
        print("step latency", channel, out[channel])
    return out


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
    ap.add_argument("--fit-rows", type=int, default=1_000_000)
    ap.add_argument("--skip-fit", action="store_true", help="skip part 0")
    ap.add_argument("--skip-overhead", action="store_true", help="skip part 1")
    ap.add_argument("--compare-actor", action="store_true")
    ap.add_argument("--out", default="", help="results/NAME.{json,md}")
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
    if args.out:
        out = RESULTS / f"{args.out}.json"
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
        if not args.skip_fit:
            record["default_fit"] = default_fit(
                client, args.fit_rows, args.repeats, args.compare_actor
            )
            out.write_text(json.dumps(record, indent=1, default=str))
        record["step_latency"] = step_latency(client)
        record["overhead"] = (
            []
            if args.skip_overhead
            else per_step_overhead(client, args.overhead_rows, args.repeats)
        )
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
        path, args.rows, args.block, limit, epochs=args.epochs
    )
    print(record["larger_than_memory"])
    _finish(args, path, record, out)


def _finish(args, path, record, out):
    record["loadavg_end"] = os.getloadavg()
    out.write_text(json.dumps(record, indent=1, default=str))
    _write_md(record, out.with_suffix(".md"))
    print(f"wrote {out}")
    if not args.reuse_store:
        shutil.rmtree(path)
        path.with_suffix(".y.npy").unlink()


if __name__ == "__main__":
    main()
