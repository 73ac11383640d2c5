"""``GridSearchCV(n_jobs=2)`` against ``n_jobs=1`` over a dpestim estimator.

Each variant runs in a fresh Python process, as a user's script would (joblib
workers start cold; the numba cache in ``NUMBA_CACHE_DIR`` is warm, because
a warm-up run precedes the timed ones). Variants, interleaved A B C A B C:

* ``n_jobs=1``;
* ``n_jobs=2`` (on-disk calibration cache on, the default);
* ``n_jobs=2, no disk cache`` (``DPESTIM_CALIBRATION_CACHE=0``): every
  worker calibrates again, the previous behaviour.

The search, a realistic one rather than one chosen to win:
``LogisticRegression()`` (estimator defaults: ``solver="dp-sgd"``,
``epsilon=1``, ``max_iter="auto"``) on Adult (a9a, 32,561 x 123), grid
``alpha`` x ``clip_norm`` (3 x 3 = 9 candidates), 5-fold CV: 45 fits plus
the refit. Reported: wall time of the whole child process (what the user
waits for) and its CPU time including waited-for children (``os.wait4``),
medians.

The per-worker floor: a separate child starts two loky workers
(``joblib.Parallel(n_jobs=2)``) that each report their CPU time at entry
(loky start-up), after ``import sklearn.model_selection`` (what any
GridSearchCV worker imports), after ``import dpestim.linear_model``, after a first fit
of ``LogisticRegression`` on 200 x 5 random rows (numba's first call, a
kernel loaded from the warm cache, a calibration) and after a second one.

Usage::

    PYTHONPATH=. python benchmarks/speed/gridsearch.py [--repeats 3]

Writes ``benchmarks/results/bench_gridsearch.{json,md}``.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RESULTS = Path(
    os.environ.get("DPESTIM_BENCH_RESULTS") or REPO / "benchmarks" / "results"
)

CHILD = """
import sys, warnings
warnings.simplefilter("ignore")
from sklearn.model_selection import GridSearchCV
import dpestim
from dpestim.datasets import load_adult_a9a
data = load_adult_a9a()
X, y = data.data, data.target
est = dpestim.LogisticRegression(classes=[0, 1], random_state=0)
grid = {"alpha": [1e-5, 1e-4, 1e-3], "clip_norm": [0.5, 1.0, 2.0]}
GridSearchCV(est, grid, cv=5, n_jobs=int(sys.argv[1])).fit(X, y)
"""

FLOOR = """
import json, time
from joblib import Parallel, delayed

def probe():
    import os, time, warnings
    warnings.simplefilter("ignore")
    out = {"entry": time.process_time()}
    import numpy as np
    import sklearn.model_selection
    out["import sklearn.model_selection"] = time.process_time()
    import dpestim.linear_model
    out["import dpestim.linear_model"] = time.process_time()
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 5))
    y = (X[:, 0] > 0).astype(int)
    est = dpestim.linear_model.LogisticRegression(classes=[0, 1], random_state=0)
    est.fit(X, y)
    out["first fit"] = time.process_time()
    est.fit(X, y)
    out["second fit"] = time.process_time()
    out["pid"] = os.getpid()
    return out

print(json.dumps(Parallel(n_jobs=2)(delayed(probe)() for _ in range(2))))
"""


def _run(n_jobs, env):
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(n_jobs)], env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if status != 0:
        raise RuntimeError(f"child failed with status {status}")
    return wall, usage.ru_utime + usage.ru_stime


def _worker_floor(env, repeats):
    """Median cumulative CPU of a loky worker at each stage (see FLOOR)."""
    stages = {}
    for _ in range(repeats):
        out = subprocess.run(
            [sys.executable, "-c", FLOOR],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        for worker in json.loads(out.stdout.strip().splitlines()[-1]):
            for k, v in worker.items():
                if k != "pid":
                    stages.setdefault(k, []).append(v)
    return {k: statistics.median(v) for k, v in stages.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    base = dict(os.environ)
    base.setdefault("PYTHONPATH", str(REPO))
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        base[var] = "1"
    with tempfile.TemporaryDirectory() as tmp:
        cached = dict(base, DPESTIM_CACHE_DIR=tmp, DPESTIM_CALIBRATION_CACHE="1")
        uncached = dict(base, DPESTIM_CALIBRATION_CACHE="0")
        variants = {
            "n_jobs=1": (1, uncached),
            "n_jobs=2": (2, cached),
            "n_jobs=2, no disk cache": (2, uncached),
        }
        _run(2, uncached)  # warm the numba cache for every worker
        raw = {k: [] for k in variants}
        for _ in range(args.repeats):
            for name, (n_jobs, env) in variants.items():
                if name == "n_jobs=2":  # each repeat starts from an empty disk cache
                    for f in Path(tmp).rglob("*.json"):
                        f.unlink()
                raw[name].append(_run(n_jobs, env))
    med = {
        k: {
            "wall_s": statistics.median(w for w, _ in v),
            "cpu_s": statistics.median(c for _, c in v),
        }
        for k, v in raw.items()
    }
    ratio = med["n_jobs=2"]["wall_s"] / med["n_jobs=1"]["wall_s"]
    floor = _worker_floor(cached, args.repeats)
    command = (
        f"PYTHONPATH=. python benchmarks/speed/gridsearch.py --repeats {args.repeats}"
    )
    out = {
        "command": command,
        "raw": raw,
        "median": med,
        "wall_ratio_2_over_1": ratio,
        "worker_floor_cpu_s": floor,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "bench_gridsearch.json").write_text(json.dumps(out, indent=1))
    lines = [
        f"Command: `{command}`; medians of {args.repeats} fresh processes each; "
        "the disk cache starts empty in every n_jobs=2 run.",
        "",
        "| variant | wall s | CPU s (process + workers) |",
        "|---|---|---|",
    ]
    for k, v in med.items():
        lines.append(f"| {k} | {v['wall_s']:.2f} | {v['cpu_s']:.2f} |")
    lines += ["", f"n_jobs=2 / n_jobs=1 wall time: {ratio:.2f}", ""]
    lines += [
        "Per-worker floor (CPU s of one loky worker, cumulative, median over "
        "workers and repeats):",
        "",
        "| stage | CPU s |",
        "|---|---|",
    ]
    lines += [f"| {k} | {v:.3f} |" for k, v in floor.items()]
    md = "\n".join(lines) + "\n"
    (RESULTS / "bench_gridsearch.md").write_text(md)
    print(md)


if __name__ == "__main__":
    main()
