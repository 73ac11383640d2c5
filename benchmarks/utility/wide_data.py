"""Wide data: more noised coordinates than rows (``D = outputs x (d + 1) > n``).

Farm Ads (3,107 training rows x 54,877 sparse binary features; 25% stratified
test split, seed 0) at epsilon 0.5 / 1 / 2, and, at epsilon 1, subsamples
of MNIST (250 / 500 / 1,000 / 3,000 rows: ``D = 7,850``), digits (300 rows:
``D = 650``) and w8a (250 rows: ``D = 301``) from ``benchmarks/defaults.py``'s
loaders, scored on their test parts; ``LogisticRegression`` and
``LinearSVC`` at their defaults (``solver="auto"``), median of 5 seeds (the
seed draws the subsample and the noise). Prints the resolved learning rate
of the last fit beside each cell.

    PYTHONPATH=. python benchmarks/utility/wide_data.py \\
        [--seeds 5] [--commit C] [--out FILE]

Writes ``benchmarks/results/wide_data.md`` (or ``--out``).
"""

import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from defaults import _commit, load, result_parser, write_table  # noqa: E402

SUBSAMPLES = {"mnist": [250, 500, 1000, 3000], "digits": [300], "w8a": [250]}


def _sets():
    from sklearn.model_selection import train_test_split

    from dpestim import datasets

    try:
        b = datasets.load_farm_ads()
    except Exception as exc:  # missing data: skip, say so
        print(f"skip farm_ads: {exc}", flush=True)
    else:
        Xtr, Xte, ytr, yte = train_test_split(
            b.data, b.target, test_size=0.25, random_state=0, stratify=b.target
        )
        yield "farm_ads", Xtr, ytr, Xte, yte, [None], [0.5, 1.0, 2.0]
    for name, sizes in SUBSAMPLES.items():
        try:
            X, y, Xt, yt, _ = load(name)
        except Exception as exc:
            print(f"skip {name}: {exc}", flush=True)
            continue
        yield name, X, y, Xt, yt, sizes, [1.0]


def main():
    from dpestim import LinearSVC, LogisticRegression

    p = result_parser(__doc__, "wide_data.md", seeds=5)
    args = p.parse_args()
    lines = [
        f"Test accuracy, median of {args.seeds} seeds, defaults, code "
        f"{args.commit or _commit()} (benchmarks/utility/wide_data.py).",
        "",
        "| dataset | n | D | estimator | eps | accuracy | learning rate |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, X, y, Xt, yt, sizes, epsilons in _sets():
        classes = np.unique(y)
        for n in sizes:
            for Est in (LogisticRegression, LinearSVC):
                for eps in epsilons:
                    scores = []
                    for seed in range(args.seeds):
                        rows = (
                            np.arange(X.shape[0])
                            if n is None
                            else np.random.default_rng(seed).choice(
                                X.shape[0], n, replace=False
                            )
                        )
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            model = Est(
                                epsilon=eps, classes=classes, random_state=seed
                            ).fit(X[rows], y[rows])
                        scores.append(model.score(Xt, yt))
                    K = 1 if len(classes) == 2 else len(classes)
                    line = (
                        f"| {name} | {len(rows)} | {K * (X.shape[1] + 1)} | "
                        f"{Est.__name__} | {eps:g} | {np.median(scores):.4f} | "
                        f"{model.hyperparameters_['learning_rate']:.4g} |"
                    )
                    print(line, flush=True)
                    lines.append(line)
    write_table(args.out, lines)


if __name__ == "__main__":
    main()
