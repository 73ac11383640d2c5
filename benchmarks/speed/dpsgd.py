"""Timing benchmark: dpestim DP-SGD against scikit-learn's SGDClassifier.

One run measures

1. a dense synthetic binary problem (200,000 x 100, float64, C order, rows of
   norm ~1): time per epoch of ``dpestim.LogisticRegression(solver="dp-sgd")``
   and of ``sklearn.linear_model.SGDClassifier(loss="log_loss")``;
2. the sparse LIBSVM w8a and UCI Farm Ads datasets (CSR, skipped when absent):
   time per epoch, nanoseconds per non-zero and per ``n x d`` cell;
3. the first-fit latency of a fresh Python process with a warm numba cache.

Per-epoch times are differences, ``(t(E2) - t(E1)) / (E2 - E1)``, of the
shortest of several whole-fit times with ``E1`` and ``E2`` epochs: this
cancels every per-fit constant (input validation, privacy accounting, noise
calibration). numba compilation is excluded by a warm-up fit on the same input
type. dpestim caches the noise calibration inside the process, so each
dpestim fit is timed twice: first with the calibration cache emptied ("fresh
calibration", what a single user fit costs) and then with it filled
("calibration cached"); the headline per-epoch time uses the second. On the
sparse datasets dpestim is also timed with ``noise_multiplier=0`` (same loop,
no Gaussian draws; not a private fit) to split the epoch into the gradient
work and the per-step noise. Fits of all variants are interleaved so that
background load affects them alike; process CPU times are recorded in the
JSON as well (they exceed wall times where a library uses extra threads).

Usage::

    python benchmarks/speed/dpsgd.py           # full run (a few minutes)
    python benchmarks/speed/dpsgd.py --quick   # smaller problems, fewer repeats

Writes ``benchmarks/results/bench_dpsgd.json`` (raw numbers) and
``benchmarks/results/bench_dpsgd.md`` (tables, also printed); ``--quick``
writes ``bench_dpsgd_quick.{json,md}`` instead.
"""

import argparse
import importlib.metadata
import json
import logging
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
RESULTS = Path(
    os.environ.get("DPESTIM_BENCH_RESULTS") or REPO / "benchmarks" / "results"
)
SCRATCH = RESULTS / "scratch"

CONFIGS = {
    "full": {
        "dense_shape": (200_000, 100),
        "dense_epochs": (5, 10),
        "sparse_epochs": (10, 50),
        "repeats": 7,
        "latency_runs": 3,
    },
    "quick": {
        "dense_shape": (20_000, 100),
        "dense_epochs": (2, 4),
        "sparse_epochs": (2, 12),
        "repeats": 2,
        "latency_runs": 3,
    },
}

TARGET_DENSE_RATIO = 2.0
TARGET_FIRST_FIT_S = 2.0
# Sparse criterion: ns per non-zero within this factor across datasets while
# ns per (n x d) cell differs by at least SPARSE_ND_MIN_SPREAD.
SPARSE_NNZ_MAX_SPREAD = 2.0
SPARSE_ND_MIN_SPREAD = 5.0

DP_PARAMS = {
    "solver": "dp-sgd",
    "epsilon": 1.0,
    "delta": 1e-5,
    "classes": [0, 1],
    "batch_size": 256,
    "random_state": 0,
}
SK_PARAMS = {
    "loss": "log_loss",
    "tol": None,
    "learning_rate": "constant",
    "eta0": 0.01,
    "alpha": 1e-4,
    "shuffle": True,
    "random_state": 0,
}

# Run in a fresh interpreter for the first-fit latency.
CHILD_SCRIPT = """\
import time
t0 = time.perf_counter()
import json
import numpy as np
import dpestim
t_import = time.perf_counter()
rng = np.random.default_rng(0)
X = rng.standard_normal((1000, 20))
y = (X[:, 0] + 0.5 * rng.standard_normal(1000) > 0).astype(np.int64)
t_data = time.perf_counter()
dpestim.LogisticRegression(epsilon=1, classes=[0, 1]).fit(X, y)
t_fit = time.perf_counter()
print(json.dumps({
    "import_s": t_import - t0,
    "data_s": t_data - t_import,
    "fit_s": t_fit - t_data,
    "total_s": t_fit - t0,
}))
"""

# Named baseline: the same first fit with scikit-learn's SGDClassifier.
CHILD_SKLEARN = CHILD_SCRIPT.replace("import dpestim", "import sklearn.linear_model")
CHILD_SKLEARN = CHILD_SKLEARN.replace(
    "dpestim.LogisticRegression(epsilon=1, classes=[0, 1]).fit(X, y)",
    "sklearn.linear_model.SGDClassifier(loss='log_loss').fit(X, y)",
)

# Same first fit, split into its parts (run separately so that the timed runs
# above end with the first fit): import of the dependencies, import of
# dpestim itself, the first fit, a repeat (calibration cached, numba loaded)
# and a fit needing a new calibration (max_iter=11; numba loaded).
CHILD_BREAKDOWN = """\
import time
t0 = time.perf_counter()
import json
import numpy as np
import scipy.special
import sklearn.base
import numba
import dp_accounting
t_deps = time.perf_counter()
import dpestim
t_import = time.perf_counter()
rng = np.random.default_rng(0)
X = rng.standard_normal((1000, 20))
y = (X[:, 0] + 0.5 * rng.standard_normal(1000) > 0).astype(np.int64)
times = []
for max_iter in (10, 10, 11):
    t = time.perf_counter()
    dpestim.LogisticRegression(epsilon=1, classes=[0, 1], max_iter=max_iter).fit(X, y)
    times.append(time.perf_counter() - t)
print(json.dumps({
    "import_dependencies_s": t_deps - t0,
    "import_dpestim_only_s": t_import - t_deps,
    "first_fit_s": times[0],
    "repeat_fit_s": times[1],
    "new_calibration_fit_s": times[2],
}))
"""


# --------------------------------------------------------------- machine
def _version(dist):
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def machine_info():
    cpu = None
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        nproc = len(os.sched_getaffinity(0))
    except AttributeError:
        nproc = os.cpu_count()
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = None
    from threadpoolctl import threadpool_info

    import dpestim

    return {
        "nproc": nproc,
        "cpu_model": cpu,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "numpy": _version("numpy"),
        "numba": _version("numba"),
        "scikit-learn": _version("scikit-learn"),
        "scipy": _version("scipy"),
        "dp-accounting": _version("dp-accounting"),
        "dpestim": dpestim.__version__,
        "git_commit": commit,
        "threadpools": [
            {k: info.get(k) for k in ("internal_api", "num_threads", "version")}
            for info in threadpool_info()
        ],
    }


# ---------------------------------------------------------------- timing
def _make_dp(epochs, **overrides):
    from dpestim import LogisticRegression

    return LogisticRegression(**{**DP_PARAMS, "max_iter": epochs, **overrides})


def _make_sk(epochs):
    from sklearn.linear_model import SGDClassifier

    return SGDClassifier(**SK_PARAMS, max_iter=epochs)


def _clear_calibration_cache():
    """Empty every calibration cache (both in-process caches, disk cache off).

    Returns False if a cache was not found. The noise calibration and the
    epsilon of the calibrated event are cached separately in the process, and
    calibrations are also cached on disk: a "fresh calibration" clears the
    first two and disables the third.
    """
    from dpestim.privacy import accounting

    found = True
    for name in ("_calibration_cache", "_epsilon_cache", "_order_cache"):
        cache = getattr(accounting, name, None)
        if cache is None:
            found = False
        else:
            cache.clear()
    setter = getattr(accounting, "set_calibration_cache", None)
    if setter is None:
        found = False
    else:
        setter(False)
    return found


def _timed_fit(estimator, X, y, seen_warnings):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0, c0 = time.perf_counter(), time.process_time()
        estimator.fit(X, y)
        elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    for w in caught:
        seen_warnings.add(f"{w.category.__name__}: {w.message}")
    return elapsed, cpu, estimator


def bench_problem(X, y, epochs, repeats, *, noise_free=False):
    """Whole-fit times with E1 and E2 epochs and the derived per-epoch times.

    Variants: ``dpestim_fresh_calibration`` (calibration cache emptied
    before the fit), ``dpestim`` (cache filled), ``sklearn`` and, with
    ``noise_free``, ``dpestim_noise_free`` (``noise_multiplier=0``: the same
    loop without the Gaussian draws, not a private fit).
    """
    e1, e2 = epochs
    seen = set()
    makers = {
        "dpestim": lambda e: _make_dp(e),
        "sklearn": _make_sk,
    }
    if noise_free:
        makers["dpestim_noise_free"] = lambda e: _make_dp(
            e, epsilon=None, noise_multiplier=0.0
        )
    # Warm-up: numba compilation for this input type, first-call overheads.
    warmup = {}
    for name, make in makers.items():
        warmup[name] = _timed_fit(make(1), X, y, seen)[0]

    variants = ["dpestim_fresh_calibration", *makers]
    raw = {v: {str(e1): [], str(e2): []} for v in variants}
    raw_cpu = {v: {str(e1): [], str(e2): []} for v in variants}
    cache_cleared = True
    fitted = {}
    # Interleaved so that background load hits every variant alike.
    for _ in range(repeats):
        for e in (e1, e2):
            cache_cleared &= _clear_calibration_cache()
            t, c, est = _timed_fit(makers["dpestim"](e), X, y, seen)
            raw["dpestim_fresh_calibration"][str(e)].append(t)
            raw_cpu["dpestim_fresh_calibration"][str(e)].append(c)
            for name, make in makers.items():
                t, c, est = _timed_fit(make(e), X, y, seen)
                raw[name][str(e)].append(t)
                raw_cpu[name][str(e)].append(c)
                fitted[(name, e)] = est

    summary = {}
    for v in variants:
        t1, t2 = raw[v][str(e1)], raw[v][str(e2)]
        c1, c2 = raw_cpu[v][str(e1)], raw_cpu[v][str(e2)]
        summary[v] = {
            f"fit_E{e1}_min_s": min(t1),
            f"fit_E{e2}_min_s": min(t2),
            f"fit_E{e1}_median_s": statistics.median(t1),
            f"fit_E{e2}_median_s": statistics.median(t2),
            "per_epoch_s": (min(t2) - min(t1)) / (e2 - e1),
            "per_epoch_median_s": (statistics.median(t2) - statistics.median(t1))
            / (e2 - e1),
            "per_epoch_cpu_s": (min(c2) - min(c1)) / (e2 - e1),
        }
    dp_fit = fitted[("dpestim", e1)]
    n, d = X.shape
    steps_per_epoch = dp_fit.n_iter_ / e1
    dp_info = {
        "steps_E1": int(dp_fit.n_iter_),
        "steps_E2": int(fitted[("dpestim", e2)].n_iter_),
        "steps_per_epoch": steps_per_epoch,
        "noise_multiplier_E1": dp_fit.noise_multiplier_,
        "noise_multiplier_E2": fitted[("dpestim", e2)].noise_multiplier_,
        "epsilon_E1": dp_fit.epsilon_,
        # K * d coefficient draws plus K intercept draws per step, K = 1 here.
        "noise_draws_per_epoch": steps_per_epoch * (d + 1),
    }
    return {
        "epochs": [e1, e2],
        "repeats": repeats,
        "warmup_fit_s": warmup,
        "calibration_cache_cleared": cache_cleared,
        "raw_fit_s": raw,
        "raw_fit_cpu_s": raw_cpu,
        "summary": summary,
        "dpestim_fit": dp_info,
        "warnings": sorted(seen),
    }


# ----------------------------------------------------------------- dense
def dense_problem(n, d, seed=0):
    """Seeded binary problem; ``x ~ N(0, I / d)`` so that ``||x|| ~ 1``."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) / math.sqrt(d)
    w = rng.standard_normal(d)
    margin = X @ w + 0.3 * rng.standard_normal(n)
    y = (margin > 0).astype(np.int64)
    X = np.ascontiguousarray(X, dtype=np.float64)
    return X, y


def run_dense(cfg):
    n, d = cfg["dense_shape"]
    X, y = dense_problem(n, d)
    assert X.flags.c_contiguous and X.dtype == np.float64
    norms = np.linalg.norm(X, axis=1)
    res = bench_problem(X, y, cfg["dense_epochs"], cfg["repeats"])
    res.update(
        n=n,
        d=d,
        row_norm_mean=float(norms.mean()),
        row_norm_min=float(norms.min()),
        row_norm_max=float(norms.max()),
        positive_rate=float(y.mean()),
    )
    s = res["summary"]
    res["ratio_per_epoch"] = s["dpestim"]["per_epoch_s"] / s["sklearn"]["per_epoch_s"]
    res["ratio_per_epoch_median"] = (
        s["dpestim"]["per_epoch_median_s"] / s["sklearn"]["per_epoch_median_s"]
    )
    res["ratio_per_epoch_cpu"] = (
        s["dpestim"]["per_epoch_cpu_s"] / s["sklearn"]["per_epoch_cpu_s"]
    )
    res["target_ratio_max"] = TARGET_DENSE_RATIO
    res["target_held"] = res["ratio_per_epoch"] <= TARGET_DENSE_RATIO
    return res


# ---------------------------------------------------------------- sparse
SPARSE = {"w8a": "load_w8a", "farm_ads": "load_farm_ads"}


def run_sparse(cfg):
    from dpestim import datasets

    out = {}
    for name, loader in SPARSE.items():
        if not datasets.dataset_available(name):
            msg = (
                f"dataset {name!r} not found under {datasets.get_data_home()} "
                "(set DPESTIM_DATA); skipped"
            )
            print(f"[sparse] {msg}", flush=True)
            out[name] = {"skipped": msg}
            continue
        bunch = getattr(datasets, loader)()
        X, y = bunch.data.tocsr(), bunch.target
        index_dtype = str(X.indices.dtype)
        # SGDClassifier only accepts 32-bit CSR indices; both libraries get
        # the very same int32 matrix.
        X.indices = X.indices.astype(np.int32)
        X.indptr = X.indptr.astype(np.int32)
        n, d = X.shape
        print(f"[sparse] {name}: {n} x {d}, nnz={X.nnz}", flush=True)
        res = bench_problem(X, y, cfg["sparse_epochs"], cfg["repeats"], noise_free=True)
        s = res["summary"]
        dp, sk = s["dpestim"]["per_epoch_s"], s["sklearn"]["per_epoch_s"]
        nf = s["dpestim_noise_free"]["per_epoch_s"]
        draws = res["dpestim_fit"]["noise_draws_per_epoch"]
        # The noise share is a difference of two noisy per-epoch times; under
        # load the min-based wall difference can come out negative. Use CPU
        # time and report an unresolved split as None, never a negative cost.
        noise_cpu = (
            s["dpestim"]["per_epoch_cpu_s"] - s["dpestim_noise_free"]["per_epoch_cpu_s"]
        )
        noise = noise_cpu if noise_cpu > 0 else None
        res.update(
            n=n,
            d=d,
            nnz=int(X.nnz),
            n_x_d=n * d,
            loader_index_dtype=index_dtype,
            ratio_per_epoch=dp / sk,
            ratio_per_epoch_cpu=s["dpestim"]["per_epoch_cpu_s"]
            / s["sklearn"]["per_epoch_cpu_s"],
            dpestim_noise_free_s_per_epoch=nf,
            dpestim_ns_per_nnz=dp / X.nnz * 1e9,
            dpestim_ns_per_nd=dp / (n * d) * 1e9,
            sklearn_ns_per_nnz=sk / X.nnz * 1e9,
            sklearn_ns_per_nd=sk / (n * d) * 1e9,
            noise_free_ns_per_nnz=nf / X.nnz * 1e9,
            noise_cpu_s_per_epoch=noise,
            noise_ns_per_draw=None if noise is None else noise / draws * 1e9,
        )
        out[name] = res
    done = [r for r in out.values() if "skipped" not in r]
    if len(done) >= 2:

        def spread(key):
            vals = [r[key] for r in done]
            return max(vals) / min(vals)

        out["comparison"] = {
            "nnz_spread": spread("nnz"),
            "n_x_d_spread": spread("n_x_d"),
            "dpestim_ns_per_nnz_spread": spread("dpestim_ns_per_nnz"),
            "dpestim_ns_per_nd_spread": spread("dpestim_ns_per_nd"),
            "noise_free_ns_per_nnz_spread": spread("noise_free_ns_per_nnz"),
            "sklearn_ns_per_nnz_spread": spread("sklearn_ns_per_nnz"),
            "criterion": (
                f"dpestim ns/nnz max/min <= {SPARSE_NNZ_MAX_SPREAD:g} and "
                f"ns/(n*d) max/min >= {SPARSE_ND_MIN_SPREAD:g}"
            ),
        }
        c = out["comparison"]
        c["target_held"] = (
            c["dpestim_ns_per_nnz_spread"] <= SPARSE_NNZ_MAX_SPREAD
            and c["dpestim_ns_per_nd_spread"] >= SPARSE_ND_MIN_SPREAD
        )
    return out


# --------------------------------------------------------------- latency
def run_latency(cfg):
    cache_dir = SCRATCH / "numba_cache_first_fit"
    shutil.rmtree(cache_dir, ignore_errors=True)
    cache_dir.mkdir(parents=True)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache_dir)}

    def once(script=CHILD_SCRIPT):
        t0 = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-c", script],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
        )
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            raise RuntimeError(f"first-fit child failed:\n{proc.stderr}")
        child = json.loads(proc.stdout.strip().splitlines()[-1])
        return {"parent_wall_s": wall, **child}

    cold = once()  # compiles and fills the (emptied) cache: discarded
    runs = [once() for _ in range(cfg["latency_runs"])]
    med = {
        key: statistics.median(r[key] for r in runs)
        for key in ("parent_wall_s", "total_s", "import_s", "fit_s")
    }
    sk_runs = [once(CHILD_SKLEARN) for _ in range(cfg["latency_runs"])]
    sk_med = {
        key: statistics.median(r[key] for r in sk_runs)
        for key in ("parent_wall_s", "total_s", "import_s", "fit_s")
    }
    parts = [once(CHILD_BREAKDOWN) for _ in range(cfg["latency_runs"])]
    parts_med = {
        key: statistics.median(r[key] for r in parts)
        for key in parts[0]
        if key.endswith("_s")
    }
    # Derived: calibration = new-calibration fit - repeat fit; one-time numba
    # cache load and initialisation = first fit - new-calibration fit.
    parts_med["calibration_s"] = (
        parts_med["new_calibration_fit_s"] - parts_med["repeat_fit_s"]
    )
    parts_med["numba_load_s"] = (
        parts_med["first_fit_s"] - parts_med["new_calibration_fit_s"]
    )
    return {
        "numba_cache_dir": str(cache_dir.relative_to(REPO)),
        "cold_cache_run_discarded": cold,
        "runs": runs,
        "median": med,
        "sklearn_baseline_runs": sk_runs,
        "sklearn_baseline_median": sk_med,
        "ratio_to_sklearn": med["parent_wall_s"] / sk_med["parent_wall_s"],
        "breakdown_runs": parts,
        "breakdown_median": parts_med,
        "target_s": TARGET_FIRST_FIT_S,
        "target_held": max(med["parent_wall_s"], med["total_s"]) < TARGET_FIRST_FIT_S,
    }


# ---------------------------------------------------------------- report
def _ms(seconds):
    return f"{seconds * 1e3:.1f}"


def _yes(flag):
    return "yes" if flag else "**no**"


def render_markdown(results):
    m = results["machine"]
    lines = [
        f"Mode: `{results['mode']}`. Machine: {m['nproc']} CPU(s), {m['cpu_model']}; "
        f"Python {m['python']}, numpy {m['numpy']}, numba {m['numba']}, "
        f"scikit-learn {m['scikit-learn']}, scipy {m['scipy']}, "
        f"dp-accounting {m['dp-accounting']}, dpestim {m['dpestim']} "
        f"(commit {str(m['git_commit'])[:12]}). Load average (1 min) at "
        f"start/end: {results['loadavg_start'][0]:.2f} / "
        f"{results['loadavg_end'][0]:.2f}. Total run time "
        f"{results['total_s']:.0f} s.",
        "",
    ]
    if results["mode"] == "quick":
        lines += [
            "**Quick mode: a smoke run (small problems, few repeats). Its numbers "
            "are too noisy to judge the targets; use the full run.**",
            "",
        ]
    dense = results["dense"]
    e1, e2 = dense["epochs"]
    s = dense["summary"]
    dp, sk = s["dpestim"], s["sklearn"]
    fresh = s["dpestim_fresh_calibration"]
    lines += [
        f"### 1. Dense {dense['n']:,} x {dense['d']} (row norm mean "
        f"{dense['row_norm_mean']:.3f}), E1={e1}, E2={e2} epochs, "
        f"{dense['repeats']} fits of each",
        "",
        "| quantity | dpestim dp-sgd | sklearn SGDClassifier | ratio |",
        "|---|---:|---:|---:|",
        f"| **time per epoch, wall, min-based (ms)** | **{_ms(dp['per_epoch_s'])}** "
        f"| **{_ms(sk['per_epoch_s'])}** | **{dense['ratio_per_epoch']:.2f}** |",
        f"| time per epoch, wall, median-based (ms) | "
        f"{_ms(dp['per_epoch_median_s'])} | {_ms(sk['per_epoch_median_s'])} | "
        f"{dense['ratio_per_epoch_median']:.2f} |",
    ]
    for e in (e1, e2):
        key = f"fit_E{e}_min_s"
        lines.append(
            f"| whole fit, {e} epochs, fresh calibration (s, min) | "
            f"{fresh[key]:.3f} | {sk[key]:.3f} | {fresh[key] / sk[key]:.2f} |"
        )
        lines.append(
            f"| whole fit, {e} epochs, calibration cached (s, min) | "
            f"{dp[key]:.3f} | {sk[key]:.3f} | {dp[key] / sk[key]:.2f} |"
        )
    lines += [""]

    sparse = results["sparse"]
    se1, se2 = results["config"]["sparse_epochs"]
    done = [name for name in SPARSE if "skipped" not in sparse[name]]
    lines += [
        f"### 2. Sparse CSR, E1={se1}, E2={se2} epochs, "
        f"{results['config']['repeats']} fits of each",
        "",
    ]
    for name in SPARSE:
        if name not in done:
            lines.append(f"- {name}: {sparse[name]['skipped']}")
    if done:
        lines += [
            "| dataset | n x d | nnz | dpestim ms/epoch | sklearn ms/epoch | ratio |",
            "|---|---|---:|---:|---:|---:|",
        ]
        for name in done:
            r = sparse[name]
            ss = r["summary"]
            lines.append(
                f"| {name} | {r['n']:,} x {r['d']:,} | {r['nnz']:,} | "
                f"{_ms(ss['dpestim']['per_epoch_s'])} | "
                f"{_ms(ss['sklearn']['per_epoch_s'])} | "
                f"{r['ratio_per_epoch']:.2f} |"
            )
        lines += [
            "",
            "| dataset | dpestim ns/nnz | dpestim ns/(n*d) | sklearn ns/nnz "
            "| dpestim noise-free ms/epoch (ns/nnz) "
            "| noise draws/epoch | noisy - noise-free ms/epoch |",
            "|---|---:|---:|---:|---:|---:|---:|",
        ]
        for name in done:
            r = sparse[name]
            lines.append(
                f"| {name} | {r['dpestim_ns_per_nnz']:.1f} | "
                f"{r['dpestim_ns_per_nd']:.3f} | {r['sklearn_ns_per_nnz']:.1f} | "
                f"{_ms(r['dpestim_noise_free_s_per_epoch'])} "
                f"({r['noise_free_ns_per_nnz']:.1f}) | "
                f"{r['dpestim_fit']['noise_draws_per_epoch']:,.0f} | "
                + (
                    "not resolved (<= 0 under load)"
                    if r["noise_cpu_s_per_epoch"] is None
                    else f"{_ms(r['noise_cpu_s_per_epoch'])} (CPU)"
                )
                + " |"
            )
    if "comparison" in sparse:
        c = sparse["comparison"]
        lines += [
            "",
            f"Spread (max/min) across datasets: nnz {c['nnz_spread']:.2f}x, "
            f"n*d {c['n_x_d_spread']:.1f}x; dpestim ns/nnz "
            f"{c['dpestim_ns_per_nnz_spread']:.2f}x, dpestim ns/(n*d) "
            f"{c['dpestim_ns_per_nd_spread']:.1f}x, noise-free ns/nnz "
            f"{c['noise_free_ns_per_nnz_spread']:.2f}x, sklearn ns/nnz "
            f"{c['sklearn_ns_per_nnz_spread']:.2f}x.",
        ]
    lines += [""]

    lat = results["latency"]
    med = lat["median"]
    cold = lat["cold_cache_run_discarded"]
    lines += [
        "### 3. First fit in a fresh process (1,000 x 20, warm numba cache)",
        "",
        "| run | parent wall (s) | child start->fit end (s) | import (s) | fit (s) |",
        "|---|---:|---:|---:|---:|",
        f"| cold cache (discarded) | {cold['parent_wall_s']:.2f} | "
        f"{cold['total_s']:.2f} | {cold['import_s']:.2f} | {cold['fit_s']:.2f} |",
    ]
    for i, r in enumerate(lat["runs"], 1):
        lines.append(
            f"| warm {i} | {r['parent_wall_s']:.2f} | {r['total_s']:.2f} | "
            f"{r['import_s']:.2f} | {r['fit_s']:.2f} |"
        )
    lines += [
        f"| **median (warm)** | **{med['parent_wall_s']:.2f}** | "
        f"**{med['total_s']:.2f}** | {med['import_s']:.2f} | {med['fit_s']:.2f} |",
        f"| sklearn SGDClassifier, same child (median) | "
        f"{lat['sklearn_baseline_median']['parent_wall_s']:.2f} | "
        f"{lat['sklearn_baseline_median']['total_s']:.2f} | "
        f"{lat['sklearn_baseline_median']['import_s']:.2f} | "
        f"{lat['sklearn_baseline_median']['fit_s']:.2f} |",
        "",
        f"Ratio dpestim / sklearn first fit (parent wall): "
        f"{lat['ratio_to_sklearn']:.2f}.",
        "",
    ]
    bd = lat["breakdown_median"]
    lines += [
        f"Breakdown (separate runs, median of {len(lat['breakdown_runs'])}): "
        f"importing the dependencies (numpy, scipy.special, sklearn.base, numba, "
        f"dp_accounting) {bd['import_dependencies_s']:.2f} s, then dpestim "
        f"itself {bd['import_dpestim_only_s']:.2f} s; first fit "
        f"{bd['first_fit_s']:.2f} s = noise calibration ~{bd['calibration_s']:.2f}"
        f" s + numba cache load/initialisation ~{bd['numba_load_s']:.2f} s + "
        f"the rest of the fit {bd['repeat_fit_s']:.2f} s (a repeat fit).",
        "",
        "### Targets",
        "",
        "| target | measured | held |",
        "|---|---|---|",
        f"| dense dpestim/sklearn time per epoch <= {TARGET_DENSE_RATIO:g} | "
        f"{dense['ratio_per_epoch']:.2f} | {_yes(dense['target_held'])} |",
    ]
    if "comparison" in sparse:
        c = sparse["comparison"]
        lines.append(
            f"| sparse epoch time follows nnz, not n*d ({c['criterion']}) | "
            f"ns/nnz spread {c['dpestim_ns_per_nnz_spread']:.2f}x, ns/(n*d) "
            f"spread {c['dpestim_ns_per_nd_spread']:.1f}x | "
            f"{_yes(c['target_held'])} |"
        )
    else:
        lines.append("| sparse epoch time follows nnz | not measured (no data) | - |")
    lines.append(
        f"| first fit in a fresh process < {TARGET_FIRST_FIT_S:g} s (median) | "
        f"{med['parent_wall_s']:.2f} s wall, {med['total_s']:.2f} s in child | "
        f"{_yes(lat['target_held'])} |"
    )
    warn = sorted(
        {w for part in (dense, *sparse.values()) for w in part.get("warnings", [])}
    )
    if warn:
        lines += ["", "Warnings raised by the timed fits:", ""]
        lines += [f"- {w}" for w in warn]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ main
def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smaller dense problem, fewer epochs and repeats (a smoke run)",
    )
    parser.add_argument(
        "--repeats", type=int, default=None, help="fits per configuration"
    )
    parser.add_argument(
        "--output-dir",
        type=Path,
        default=RESULTS,
        help="where to write the .json and .md results",
    )
    args = parser.parse_args(argv)
    mode = "quick" if args.quick else "full"
    cfg = dict(CONFIGS[mode])
    if args.repeats is not None:
        cfg["repeats"] = args.repeats

    # Keep this process's numba cache inside the (gitignored) scratch folder;
    # must be set before numba is imported.
    # numba does not invalidate a cached function when a jitted function it
    # calls from another file changes, so start from an empty cache each run
    # (compilation happens in the untimed warm-up fits).
    if "NUMBA_CACHE_DIR" not in os.environ:
        bench_cache = SCRATCH / "numba_cache_bench"
        shutil.rmtree(bench_cache, ignore_errors=True)
        bench_cache.mkdir(parents=True)
        os.environ["NUMBA_CACHE_DIR"] = str(bench_cache)
    # dp_accounting logs RDP-order convergence notes through absl.
    logging.getLogger("absl").setLevel(logging.ERROR)
    # Pin every thread pool to one thread, here and in the child processes:
    # both libraries then run on one core and CPU time equals wall time.
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = "1"
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)

    start = time.perf_counter()
    results = {
        "mode": mode,
        "config": cfg,
        "machine": machine_info(),
        "loadavg_start": os.getloadavg(),
    }
    print(f"[dense] {cfg['dense_shape']}", flush=True)
    results["loadavg_before_dense"] = os.getloadavg()
    results["dense"] = run_dense(cfg)
    results["loadavg_before_sparse"] = os.getloadavg()
    results["sparse"] = run_sparse(cfg)
    print("[latency] first fit in fresh processes", flush=True)
    results["loadavg_before_latency"] = os.getloadavg()
    results["latency"] = run_latency(cfg)
    results["loadavg_end"] = os.getloadavg()
    results["total_s"] = time.perf_counter() - start

    suffix = "" if mode == "full" else "_quick"
    args.output_dir.mkdir(parents=True, exist_ok=True)
    json_path = args.output_dir / f"bench_dpsgd{suffix}.json"
    md_path = args.output_dir / f"bench_dpsgd{suffix}.md"
    json_path.write_text(json.dumps(results, indent=2) + "\n")
    table = render_markdown(results)
    md_path.write_text(table)
    print(table)
    print(f"wrote {json_path} and {md_path}")
    return results


if __name__ == "__main__":
    main()
