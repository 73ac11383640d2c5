"""Cost of one full-batch clipped-gradient step against two ``X @ W`` products.

Problem: MNIST-sized dense data (20,000 x 784, float64, C order, 10 outputs,
multinomial loss), the setting of the issue's dp-nag-opt measurement. One
full-batch step of the accelerated family, dp-gd and full-batch dp-sgd is
:func:`dpestim._kernels.clipped_grad_sum` over all rows. Measured in the same
run, interleaved (A B C A B C ...), CPU and wall time, medians:

* ``floor``: NumPy ``X @ W.T`` then ``C.T @ X`` (the two products a gradient
  needs; the target is a step <= 2x this);
* ``in_place``: the kernel on ``rows = arange(n)`` (consecutive rows are read
  in place, no gather);
* ``gathered``: the kernel on a random permutation of the rows (every block
  gathered: the previous behaviour for any batch).

Also times ``DPNAGOpt(noise="gaussian")`` fits of 10 full-batch iterations
(through the estimator, noise calibration cached) against 10 floors.

Usage::

    PYTHONPATH=. python benchmarks/speed/fullbatch.py [--repeats 7]

Writes ``benchmarks/results/bench_fullbatch.{json,md}``.
"""

import argparse
import json
import os
import statistics
import time
from pathlib import Path

import numpy as np

from dpestim._kernels import clipped_grad_sum
from dpestim.losses import MULTINOMIAL

RESULTS = Path(
    os.environ.get("DPESTIM_BENCH_RESULTS")
    or Path(__file__).resolve().parents[2] / "benchmarks" / "results"
)


def _time(fn):
    c, w = time.process_time(), time.perf_counter()
    fn()
    return time.process_time() - c, time.perf_counter() - w


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    n, d, K = 20_000, 784, 10
    X = rng.random((n, d)) / np.sqrt(d / 3)
    labels = rng.integers(K, size=n)
    Y = np.zeros((n, K))
    Y[np.arange(n), labels] = 1.0
    W, b = rng.normal(size=(K, d)) * 0.01, np.zeros(K)
    sq = np.einsum("ij,ij->i", X, X)
    G, g0, z, dz = np.zeros((K, d)), np.zeros(K), np.empty(K), np.empty(K)
    consecutive = np.arange(n, dtype=np.int64)
    shuffled = rng.permutation(n).astype(np.int64)

    def kernel(rows):
        G[:] = 0.0
        g0[:] = 0.0
        clipped_grad_sum(
            X, Y, rows, n, W, b, MULTINOMIAL, 1.0, sq, True, G, g0, z, dz
        )  # fmt: skip

    def floor():
        C = X @ W.T
        return C.T @ X

    from dpestim import LogisticRegression
    from dpestim.solvers import DPNAGOpt

    est = LogisticRegression(
        solver=DPNAGOpt(noise="gaussian"), max_iter=10, random_state=0
    )

    def fit():
        est.fit(X, labels)

    variants = {
        "floor": floor,
        "in_place": lambda: kernel(consecutive),
        "gathered": lambda: kernel(shuffled),
        "fit_10_iterations": fit,
    }
    for fn in variants.values():  # compile, calibrate, warm caches
        fn()
    raw = {k: [] for k in variants}
    for _ in range(args.repeats):
        for k, fn in variants.items():
            raw[k].append(_time(fn))
    med = {
        k: {
            "cpu_s": statistics.median(c for c, _ in v),
            "wall_s": statistics.median(w for _, w in v),
        }
        for k, v in raw.items()
    }
    f = med["floor"]["cpu_s"]
    ratios = {
        "in_place_over_floor": med["in_place"]["cpu_s"] / f,
        "gathered_over_floor": med["gathered"]["cpu_s"] / f,
        "fit_10_over_10_floors": med["fit_10_iterations"]["cpu_s"] / (10 * f),
    }
    command = (
        f"PYTHONPATH=. python benchmarks/speed/fullbatch.py --repeats {args.repeats}"
    )
    out = {"command": command, "shape": [n, d, K], "median": med, "ratios": ratios}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "bench_fullbatch.json").write_text(json.dumps(out, indent=1))
    lines = [
        f"Command: `{command}`; X {n} x {d} float64, {K} outputs; medians, "
        "CPU s (wall s).",
        "",
        "| variant | CPU s | wall s | CPU / floor |",
        "|---|---|---|---|",
    ]
    for k, v in med.items():
        scale = 10 * f if k == "fit_10_iterations" else f
        lines.append(
            f"| {k} | {v['cpu_s']:.4f} | {v['wall_s']:.4f} | {v['cpu_s'] / scale:.2f}"
            + (" (vs 10 floors)" if k == "fit_10_iterations" else "")
            + " |"
        )
    md = "\n".join(lines) + "\n"
    (RESULTS / "bench_fullbatch.md").write_text(md)
    print(md)


if __name__ == "__main__":
    main()
