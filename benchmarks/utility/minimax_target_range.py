"""``MinimaxRegressor`` with its private target range at small ``n``.

The regression tasks of ``public_target_bound.py`` (California, and Adult's
and Bank's age predicted from the other columns), 331 / 1,000 / 3,000 rows
(a row sample per seed), two groups (the first column above its median),
``target_bound="auto"`` and every other parameter at its default, epsilon
0.5 / 1 / 2: R^2 on the held-out rows, median of 3 seeds.

    PYTHONPATH=. python benchmarks/utility/minimax_target_range.py \\
        [--seeds 3] [--commit C] [--out FILE]

Writes ``benchmarks/results/minimax_target_range.md`` (or ``--out``).
"""

import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from defaults import _commit, result_parser, write_table  # noqa: E402
from public_target_bound import _cells  # noqa: E402

TASKS = ("california", "adult-age", "bank-age")
SIZES = (331, 1000, 3000)
EPSILONS = (0.5, 1.0, 2.0)


def main():
    from sklearn.metrics import r2_score

    from dpestim import MinimaxRegressor

    p = result_parser(__doc__, "minimax_target_range.md", seeds=3)
    args = p.parse_args()
    lines = [
        f"MinimaxRegressor, target_bound='auto', R^2 on the test rows, median of "
        f"{args.seeds} seeds (a row sample each), code {args.commit or _commit()} "
        "(benchmarks/utility/minimax_target_range.py).",
        "",
        "| task | n | eps=0.5 | eps=1 | eps=2 |",
        "|---|---|---|---|---|",
    ]
    for name, X, y, Xt, yt, _, _ in _cells():
        if name not in TASKS:
            continue
        cut = np.median(X[:, 0])  # the groups: a public split of column 0
        for n in SIZES:
            row = []
            for eps in EPSILONS:
                scores = []
                for seed in range(args.seeds):
                    rows = np.random.default_rng(100 + seed).choice(
                        len(y), n, replace=False
                    )
                    groups = (X[rows, 0] > cut).astype(int)
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        model = MinimaxRegressor(
                            epsilon=eps, groups=[0, 1], random_state=seed
                        ).fit(X[rows], y[rows], sensitive_features=groups)
                    scores.append(r2_score(yt, model.predict(Xt)))
                row.append(f"{np.median(scores):+.3f}")
            line = f"| {name} | {n} | " + " | ".join(row) + " |"
            print(line, flush=True)
            lines.append(line)
    write_table(args.out, lines)


if __name__ == "__main__":
    main()
