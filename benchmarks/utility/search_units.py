"""Units of the private search's candidates: Adult with X, 100 X and X / 100.

``PrivateSearchCV`` and ``SubsetSearchCV`` at their defaults (and
``SubsetSearchCV(subset=0.25)``, a search even where the plan declines) at
epsilon 1, delta 1e-5, against one default fit, on an 8,000-row subsample of
Adult's training file (``load_adult``, rows drawn with seed 0) and its full
test file, the features multiplied by a public factor (1, 100, 0.01; the
test rows by the same). Prints the test accuracy of each seed and the mean,
and writes the table to ``search_units.md`` in ``DPESTIM_BENCH_RESULTS``
(default ``benchmarks/results``).

Usage (CPU: about 30 s per method on one core; run niced)::

    PYTHONPATH=. nice -n 10 python benchmarks/utility/search_units.py \\
        [--methods default,search,subset,subset25] [--seeds 3]
"""

import argparse
import os
import warnings
from pathlib import Path

import numpy as np

from dpestim import LogisticRegression
from dpestim.datasets import load_adult
from dpestim.model_selection import PrivateSearchCV, SubsetSearchCV

FACTORS = (1.0, 100.0, 0.01)
RESULTS = Path(__file__).resolve().parents[1] / "results"


def _model(method, est, seed):
    if method == "default":
        return est
    if method == "search":
        return PrivateSearchCV(est, epsilon=1.0, random_state=seed)
    if method == "subset":
        return SubsetSearchCV(est, epsilon=1.0, random_state=seed)
    if method == "subset25":
        return SubsetSearchCV(est, epsilon=1.0, subset=0.25, random_state=seed)
    raise ValueError(f"unknown method {method!r}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--methods", default="default,search,subset,subset25")
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    b = load_adult()
    idx = np.random.default_rng(0).choice(len(b.target), 8000, replace=False)
    X, y = np.asarray(b.data[idx], float), np.asarray(b.target[idx])
    Xt, yt = np.asarray(b.data_test, float), np.asarray(b.target_test)
    classes = np.unique(np.concatenate([y, yt]))
    lines = [
        "| method | X x | test accuracy (seeds) | mean |",
        "|---|---|---|---|",
    ]
    for method in args.methods.split(","):
        for f in FACTORS:
            accs = []
            for seed in range(args.seeds):
                est = LogisticRegression(
                    classes=classes, epsilon=1.0, random_state=seed
                )
                model = _model(method, est, seed).fit(X * f, y)
                assert model.epsilon_ <= 1.0 + 1e-9, model.epsilon_
                accs.append(float(model.score(Xt * f, yt)))
            mean = np.mean(accs)
            print(f"{method:8s} x{f:<6g} acc {np.round(accs, 4)} mean {mean:.4f}")
            seeds = " ".join(f"{a:.4f}" for a in accs)
            lines.append(f"| {method} | {f:g} | {seeds} | {mean:.4f} |")
    out = Path(os.environ.get("DPESTIM_BENCH_RESULTS") or RESULTS) / "search_units.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
