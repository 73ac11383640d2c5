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
("calibration cached"); the headline per-epoch time uses the second.

Usage::

    python benchmarks/bench_dpsgd.py           # full run (a few minutes)
    python benchmarks/bench_dpsgd.py --quick   # smaller problems, fewer repeats

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

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"
SCRATCH = RESULTS / "scratch"

CONFIGS = {
    "full": {
        "dense_shape": (200_000, 100),
        "dense_epochs": (5, 10),
        "sparse_epochs": (10, 50),
        "repeats": 5,
        "latency_runs": 3,
    },
    "quick": {
        "dense_shape": (20_000, 100),
        "dense_epochs": (2, 4),
        "sparse_epochs": (2, 6),
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
    }


# ---------------------------------------------------------------- timing
def _make_dp(epochs, **overrides):
    from dpestim import LogisticRegression

    return LogisticRegression(**{**DP_PARAMS, "max_iter": epochs, **overrides})


def _make_sk(epochs):
    from sklearn.linear_model import SGDClassifier

    return SGDClassifier(**SK_PARAMS, max_iter=epochs)


def _clear_calibration_cache():
    """Empty dpestim's in-process noise-calibration cache; False if not found."""
    from dpestim.privacy import accounting

    cache = getattr(accounting, "_calibration_cache", None)
    if cache is None:
        return False
    cache.clear()
    return True


def _timed_fit(estimator, X, y, seen_warnings):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        estimator.fit(X, y)
        elapsed = time.perf_counter() - t0
    for w in caught:
        seen_warnings.add(f"{w.category.__name__}: {w.message}")
    return elapsed, estimator


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
    cache_cleared = True
    fitted = {}
    for _ in range(repeats):
        for e in (e1, e2):
            cache_cleared &= _clear_calibration_cache()
            t, est = _timed_fit(makers["dpestim"](e), X, y, seen)
            raw["dpestim_fresh_calibration"][str(e)].append(t)
            for name, make in makers.items():
                t, est = _timed_fit(make(e), X, y, seen)
                raw[name][str(e)].append(t)
                fitted[(name, e)] = est

    summary = {}
    for v in variants:
        t1, t2 = raw[v][str(e1)], raw[v][str(e2)]
        summary[v] = {
            f"fit_E{e1}_min_s": min(t1),
            f"fit_E{e2}_min_s": min(t2),
            f"fit_E{e1}_median_s": statistics.median(t1),
            f"fit_E{e2}_median_s": statistics.median(t2),
            "per_epoch_s": (min(t2) - min(t1)) / (e2 - e1),
            "per_epoch_median_s": (statistics.median(t2) - statistics.median(t1))
            / (e2 - e1),
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
        res = bench_problem(
            X, y, cfg["sparse_epochs"], cfg["repeats"], noise_free=True
        )
        s = res["summary"]
        dp, sk = s["dpestim"]["per_epoch_s"], s["sklearn"]["per_epoch_s"]
        nf = s["dpestim_noise_free"]["per_epoch_s"]
        draws = res["dpestim_fit"]["noise_draws_per_epoch"]
        res.update(
            n=n,
            d=d,
            nnz=int(X.nnz),
            n_x_d=n * d,
            loader_index_dtype=index_dtype,
            ratio_per_epoch=dp / sk,
            dpestim_ns_per_nnz=dp / X.nnz * 1e9,
            dpestim_ns_per_nd=dp / (n * d) * 1e9,
            sklearn_ns_per_nnz=sk / X.nnz * 1e9,
            sklearn_ns_per_nd=sk / (n * d) * 1e9,
            noise_free_ns_per_nnz=nf / X.nnz * 1e9,
            noise_s_per_epoch=dp - nf,
            noise_ns_per_draw=(dp - nf) / draws * 1e9,
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

    def once():
        t0 = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-c", CHILD_SCRIPT],
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
    return {
        "numba_cache_dir": str(cache_dir.relative_to(REPO)),
        "cold_cache_run_discarded": cold,
        "runs": runs,
        "median": med,
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
    dense = results["dense"]
    e1, e2 = dense["epochs"]
    s = dense["summary"]
    lines += [
        f"### 1. Dense {dense['n']:,} x {dense['d']} (row norm mean "
        f"{dense['row_norm_mean']:.3f}), E1={e1}, E2={e2} epochs, "
        f"min of {dense['repeats']} fits",
        "",
        "| quantity | dpestim dp-sgd | sklearn SGDClassifier | ratio |",
        "|---|---:|---:|---:|",
    ]
    dp, sk = s["dpestim"], s["sklearn"]
    fresh = s["dpestim_fresh_calibration"]
    lines.append(
        f"| time per epoch (ms) | {_ms(dp['per_epoch_s'])} | "
        f"{_ms(sk['per_epoch_s'])} | {dense['ratio_per_epoch']:.2f} |"
    )
    lines.append(
        f"| time per epoch, fresh calibration (ms) | {_ms(fresh['per_epoch_s'])} | "
        f"{_ms(sk['per_epoch_s'])} | "
        f"{fresh['per_epoch_s'] / sk['per_epoch_s']:.2f} |"
    )
    for e in (e1, e2):
        key = f"fit_E{e}_min_s"
        lines.append(
            f"| whole fit, {e} epochs, fresh calibration (s) | {fresh[key]:.3f} | "
            f"{sk[key]:.3f} | {fresh[key] / sk[key]:.2f} |"
        )
        lines.append(
            f"| whole fit, {e} epochs, calibration cached (s) | {dp[key]:.3f} | "
            f"{sk[key]:.3f} | {dp[key] / sk[key]:.2f} |"
        )
    lines += [""]

    sparse = results["sparse"]
    lines += [
        "### 2. Sparse (CSR), E1={}, E2={} epochs".format(
            *results["config"]["sparse_epochs"]
        ),
        "",
        "| dataset | n x d | nnz | dpestim ms/epoch | sklearn ms/epoch | ratio "
        "| dpestim ns/nnz | dpestim ns/(n*d) | sklearn ns/nnz "
        "| dpestim noise-free ns/nnz | noise ms/epoch (draws/epoch) |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name in SPARSE:
        r = sparse[name]
        if "skipped" in r:
            lines.append(f"| {name} | skipped: {r['skipped']} |" + " |" * 9)
            continue
        ss = r["summary"]
        lines.append(
            f"| {name} | {r['n']:,} x {r['d']:,} | {r['nnz']:,} | "
            f"{_ms(ss['dpestim']['per_epoch_s'])} | "
            f"{_ms(ss['sklearn']['per_epoch_s'])} | {r['ratio_per_epoch']:.2f} | "
            f"{r['dpestim_ns_per_nnz']:.1f} | {r['dpestim_ns_per_nd']:.3f} | "
            f"{r['sklearn_ns_per_nnz']:.1f} | {r['noise_free_ns_per_nnz']:.1f} | "
            f"{_ms(r['noise_s_per_epoch'])} "
            f"({r['dpestim_fit']['noise_draws_per_epoch']:,.0f}) |"
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
        "| run | parent wall (s) | child start->fit end (s) | import (s) "
        "| fit (s) |",
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
        lines.append("| sparse epoch time follows nnz | not measured (data missing) | - |")
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
    SCRATCH.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("NUMBA_CACHE_DIR", str(SCRATCH / "numba_cache_bench"))
    # dp_accounting logs RDP-order convergence notes through absl.
    logging.getLogger("absl").setLevel(logging.ERROR)

    start = time.perf_counter()
    results = {
        "mode": mode,
        "config": cfg,
        "machine": machine_info(),
        "loadavg_start": os.getloadavg(),
    }
    print(f"[dense] {cfg['dense_shape']}", flush=True)
    results["dense"] = run_dense(cfg)
    results["sparse"] = run_sparse(cfg)
    print("[latency] first fit in fresh processes", flush=True)
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
