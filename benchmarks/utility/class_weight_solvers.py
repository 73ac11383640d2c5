"""class_weight="balanced" on the accelerated and dual coordinate solvers (issue 25).

COMPAS and w8a (a 10,000-row subsample of the training part), each a 75/25
split (``random_state=0``), ``LogisticRegression(solver=S, epsilon=1,
class_weight="balanced", alpha=1e-4)`` for dp-gd and dp-nag at ``delta=0``
(Laplace, pure DP), dp-scd and dp-sgd (reference) at ``delta=1e-5``, and the
same fit without weights: the test balanced accuracy, mean over ``--seeds``
seeds, against scikit-learn's ``LogisticRegression(C=1/(alpha n),
class_weight="balanced")`` (the same objective, non-private).

Usage::

    PYTHONPATH=. nice -n 10 python benchmarks/utility/class_weight_solvers.py --seeds 3

Prints a markdown table and writes it to ``class_weight_solvers.md``, the
rows to ``class_weight_solvers.json`` (in ``DPESTIM_BENCH_RESULTS``, default
``benchmarks/results``; ``--out FILE`` for another JSON path).
"""

import argparse
import json
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.metrics import balanced_accuracy_score
from sklearn.model_selection import train_test_split

from dpestim import LogisticRegression
from dpestim.datasets import load_compas, load_w8a

sys.path.insert(0, str(Path(__file__).resolve().parent))
from imbalance_probe import ALPHA, sklearn_balanced  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "results"

SOLVERS = [("dp-gd", 0.0), ("dp-nag", 0.0), ("dp-scd", 1e-5), ("dp-sgd", 1e-5)]


def _data(name, rows):
    b = {"w8a": load_w8a, "compas": load_compas}[name]()
    X, y = b.data, b.target
    if rows is not None and X.shape[0] > rows:
        keep = np.random.default_rng(0).choice(X.shape[0], rows, replace=False)
        X, y = X[np.sort(keep)], y[np.sort(keep)]
    return train_test_split(X, y, test_size=0.25, random_state=0, stratify=y)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--w8a-rows", type=int, default=10_000)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    rows, lines = [], []

    def emit(line):
        lines.append(line)
        print(line, flush=True)

    emit("| data | solver | delta | balanced acc., balanced (seeds) | "
         "unweighted | scikit-learn balanced | gap (points) |")  # fmt: skip
    emit("|---|---|---|---|---|---|---|")
    for name in ("compas", "w8a"):
        X, Xt, y, yt = _data(name, args.w8a_rows if name == "w8a" else None)
        sk_bal = sklearn_balanced(X, y, Xt, yt, max_iter=5000)
        for solver, delta in SOLVERS:
            out = {}
            for label, kw in (("balanced", {"class_weight": "balanced"}), ("none", {})):
                scores, t = [], time.process_time()
                for seed in range(args.seeds):
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        m = LogisticRegression(
                            solver=solver, epsilon=args.epsilon, delta=delta,
                            alpha=ALPHA, classes=[0, 1], random_state=seed, **kw,
                        ).fit(X, y)  # fmt: skip
                    assert m.epsilon_ <= args.epsilon
                    scores.append(float(balanced_accuracy_score(yt, m.predict(Xt))))
                out[label] = scores
                out[label + "_cpu_s"] = round(time.process_time() - t, 1)
            row = dict(data=name, solver=solver, delta=delta, sklearn=sk_bal, **out)
            rows.append(row)
            bal = np.mean(out["balanced"])
            seeds = ", ".join(f"{s:.3f}" for s in out["balanced"])
            emit(
                f"| {name} | {solver} | {delta:g} | {bal:.3f} ({seeds}) | "
                f"{np.mean(out['none']):.3f} | {sk_bal:.3f} | "
                f"{100 * (sk_bal - bal):+.1f} |"
            )
    results = Path(os.environ.get("DPESTIM_BENCH_RESULTS") or RESULTS)
    out = Path(args.out) if args.out else results / "class_weight_solvers.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(rows, indent=1))
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
