"""Sparse DP-SGD epoch against scikit-learn's SGDClassifier (issue 18, item 5).

On the CSR datasets w8a (49,749 x 300) and Farm Ads (4,143 x 54,877) one run
measures, interleaved (every variant once per round, so that background load
hits them alike), process CPU time and wall time of whole fits with ``E1``
and ``E2`` epochs; the time per epoch is ``(t(E2) - t(E1)) / (E2 - E1)`` of
the shortest fits, which cancels every per-fit constant (validation,
calibration, the final flush). Variants:

* ``lazy``: ``dpestim.LogisticRegression(solver="dp-sgd")``, the O(nnz)
  steps (lazy per-column noise and L2 shrinkage, the default on CSR input);
* ``dense_noise``: the same estimator with the previous dense per-step noise
  (``noisy_gradient_descent(lazy=False)``, forced here through the keyword's
  default), for comparison;
* ``lazy_noise_free``: ``lazy`` with ``noise_multiplier=0`` (not a private
  fit: the same loop and bookkeeping without the Gaussian draws), to split
  the epoch into the draws and the rest;
* ``lazy_adp_sgd``: ``solver="adp-sgd"`` (lazy too; no target);
* ``sklearn``: ``SGDClassifier(loss="log_loss")``, the named baseline, on the
  same int32-indexed CSR matrix.

dpestim's noise calibration is cached in the process after the warm-up fit
(a fresh calibration is a per-fit constant and cancels anyway). Threads are
pinned to one. Targets: Farm Ads <= 1.5x and w8a <= 1.2x SGDClassifier's
epoch, CPU time.

Usage::

    PYTHONPATH=. DPESTIM_DATA=../shared/datasets nice -n 10 \\
        python benchmarks/speed/sparse_epochs.py [--repeats 9] [--epochs 5 25]

Writes ``benchmarks/results/bench_sparse.{json,md}``.
"""

import argparse
import json
import os
import statistics
import time
import warnings
from pathlib import Path

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import numpy as np  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

RESULTS = Path(
    os.environ.get("DPESTIM_BENCH_RESULTS")
    or Path(__file__).resolve().parents[2] / "benchmarks" / "results"
)
TARGETS = {"farm_ads": 1.5, "w8a": 1.2}
DATASETS = {"w8a": "load_w8a", "farm_ads": "load_farm_ads"}


def _estimators(E):
    from sklearn.linear_model import SGDClassifier

    from dpestim import LogisticRegression

    common = dict(epsilon=1.0, delta=1e-6, classes=[0, 1], batch_size=256)
    common.update(max_iter=E, random_state=0)
    return {
        "lazy": lambda: LogisticRegression(solver="dp-sgd", **common),
        "dense_noise": lambda: LogisticRegression(solver="dp-sgd", **common),
        "lazy_noise_free": lambda: LogisticRegression(
            solver="dp-sgd", **{**common, "epsilon": None, "noise_multiplier": 0.0}
        ),
        "lazy_adp_sgd": lambda: LogisticRegression(solver="adp-sgd", **common),
        "sklearn": lambda: SGDClassifier(
            loss="log_loss",
            tol=None,
            learning_rate="constant",
            eta0=0.01,
            alpha=1e-4,
            max_iter=E,
            random_state=0,
        ),  # fmt: skip
    }


def _fit(name, make, X, y):
    from dpestim.solvers.sgd import dp_sgd

    defaults = dp_sgd.noisy_gradient_descent.__kwdefaults__
    defaults["lazy"] = name != "dense_noise"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            c, w = time.process_time(), time.perf_counter()
            make().fit(X, y)
            return time.process_time() - c, time.perf_counter() - w
    finally:
        defaults["lazy"] = True


def bench(name, X, y, epochs, repeats):
    e1, e2 = epochs
    variants = list(_estimators(1))
    for v, make in _estimators(1).items():  # warm-up: numba, calibration
        _fit(v, make, X, y)
    for E in epochs:
        for v, make in _estimators(E).items():
            _fit(v, make, X, y)  # calibration of this plan cached
    raw = {v: {e: {"cpu": [], "wall": []} for e in epochs} for v in variants}
    for _ in range(repeats):
        for E in epochs:
            for v, make in _estimators(E).items():
                c, w = _fit(v, make, X, y)
                raw[v][E]["cpu"].append(c)
                raw[v][E]["wall"].append(w)
    per_epoch = {}
    for v in variants:
        per_epoch[v] = {
            kind: (min(raw[v][e2][kind]) - min(raw[v][e1][kind])) / (e2 - e1)
            for kind in ("cpu", "wall")
        }
        per_epoch[v]["cpu_median"] = (
            statistics.median(raw[v][e2]["cpu"]) - statistics.median(raw[v][e1]["cpu"])
        ) / (e2 - e1)
    sk = per_epoch["sklearn"]
    ratios = {
        v: {k: per_epoch[v][k] / sk[k] for k in ("cpu", "wall", "cpu_median")}
        for v in variants
    }
    return {"raw_s": raw, "per_epoch_s": per_epoch, "ratio_to_sklearn": ratios}


def render(results):
    lines = [
        f"Command: `{results['command']}`; {results['date']}; git "
        f"{results['git']}; load average (1 min) at start / end "
        f"{results['load_start'][0]:.1f} / {results['load_end'][0]:.1f}; "
        f"epochs E1={results['epochs'][0]}, E2={results['epochs'][1]}, "
        f"{results['repeats']} interleaved rounds; per-epoch time from the "
        "shortest fits; threads pinned to 1.",
        "",
        "| dataset | variant | CPU ms/epoch | wall ms/epoch | ratio to "
        "SGDClassifier, CPU (median-based) | target | held |",
        "|---|---|---:|---:|---:|---:|---|",
    ]
    for ds, res in results["datasets"].items():
        if "skipped" in res:
            lines.append(f"| {ds} | skipped: {res['skipped']} | | | | | |")
            continue
        for v, pe in res["per_epoch_s"].items():
            r = res["ratio_to_sklearn"][v]
            target = TARGETS[ds] if v == "lazy" else None
            held = (
                "-" if target is None else ("yes" if r["cpu"] <= target else "**no**")
            )
            lines.append(
                f"| {ds} | {v} | {pe['cpu'] * 1e3:.2f} | {pe['wall'] * 1e3:.2f} | "
                f"{r['cpu']:.2f} ({r['cpu_median']:.2f}) | "
                f"{'-' if target is None else f'<= {target}'} | {held} |"
            )
    return "\n".join(lines) + "\n"


def main(argv=None):
    import subprocess
    import sys

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--epochs", type=int, nargs=2, default=(5, 25))
    parser.add_argument("--output", default="bench_sparse")
    args = parser.parse_args(argv)
    threadpool_limits(1)
    from dpestim import datasets

    git = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    results = {
        "command": "python "
        + " ".join(["benchmarks/speed/sparse_epochs.py", *sys.argv[1:]]),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "git": git,
        "epochs": list(args.epochs),
        "repeats": args.repeats,
        "load_start": os.getloadavg(),
        "datasets": {},
    }
    for ds, loader in DATASETS.items():
        if not datasets.dataset_available(ds):
            results["datasets"][ds] = {"skipped": "dataset not found (DPESTIM_DATA)"}
            continue
        bunch = getattr(datasets, loader)()
        X, y = bunch.data.tocsr(), bunch.target
        X.indices = X.indices.astype(np.int32)  # SGDClassifier needs int32
        X.indptr = X.indptr.astype(np.int32)
        print(f"[{ds}] {X.shape[0]} x {X.shape[1]}, nnz {X.nnz}", flush=True)
        results["datasets"][ds] = bench(ds, X, y, tuple(args.epochs), args.repeats)
        results["datasets"][ds].update(shape=list(X.shape), nnz=int(X.nnz))
    results["load_end"] = os.getloadavg()
    RESULTS.mkdir(parents=True, exist_ok=True)
    table = render(results)
    (RESULTS / f"{args.output}.json").write_text(
        json.dumps(results, indent=1, default=str) + "\n"
    )
    (RESULTS / f"{args.output}.md").write_text(table)
    print(table)


if __name__ == "__main__":
    main()
