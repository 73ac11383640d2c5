"""The private search on columns and targets in their own units: raw CSVs.

``PrivateSearchCV`` and ``SubsetSearchCV`` at their defaults against one
default fit, on the shared raw CSVs as a user reads them
(``benchmarks/utility/raw_columns.py``'s loaders: numeric columns in their
natural units, categorical columns one-hot, no scaling):

* Adult (``adult.data`` / ``adult.test``), ``LogisticRegression``, test
  accuracy;
* California housing (``housing.csv.gz``), ``Ridge``, target in dollars,
  no bound given, test R^2; the search's private score uses
  ``error_bound=1e11`` (a public bound on the squared error in dollars^2:
  the CSV's documented top-code is 500,001).

Total epsilon 0.5 / 1 / 2 (selection included), delta 1e-5, seeds paired
(``random_state=seed`` for the estimator and the search); the median over
the seeds. Before the twenty-second session the search's candidates
estimated only the row scale: no column means, column scales or target
range (``--out`` on a checkout of that commit gives the "before" table).

    PYTHONPATH=. nice -n 10 python benchmarks/utility/search_raw.py \\
        [--seeds 5] [--methods default,search,subset] [--out search_raw.md]

Writes ``benchmarks/results/search_raw.md`` (or ``--out``).
"""

import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from defaults import _commit, result_parser, write_table  # noqa: E402
from raw_columns import _adult, _california  # noqa: E402

EPSILONS = (0.5, 1.0, 2.0)


def _model(method, est, eps, seed, error_bound):
    from dpestim.model_selection import PrivateSearchCV, SubsetSearchCV

    kw = {} if error_bound is None else {"error_bound": error_bound}
    if method == "default":
        return est
    if method == "search":
        return PrivateSearchCV(est, epsilon=eps, random_state=seed, **kw)
    if method == "subset":
        return SubsetSearchCV(est, epsilon=eps, random_state=seed, **kw)
    raise ValueError(f"unknown method {method!r}")


def main():
    from dpestim import LogisticRegression, Ridge
    from dpestim.datasets import get_data_home

    p = result_parser(__doc__, "search_raw.md", seeds=5)
    p.add_argument("--methods", default="default,search,subset")
    args = p.parse_args()
    home = Path(get_data_home())
    lines = [
        f"Median of {args.seeds} seeds (each seed's score in brackets); total "
        f"epsilon, delta 1e-5; code {args.commit or _commit()} "
        "(benchmarks/utility/search_raw.py).",
        "",
        "| data | method | eps=0.5 | eps=1 | eps=2 |",
        "|---|---|---|---|---|",
    ]
    tasks = (
        ("adult raw (accuracy)", _adult, LogisticRegression, {"classes": [0, 1]},
         None),
        ("california raw, target in dollars (R^2)", _california, Ridge, {}, 1e11),
    )  # fmt: skip
    for name, loader, Est, kw, error_bound in tasks:
        try:
            Xtr, ytr, Xte, yte, _ = loader(home)
        except OSError as exc:  # missing data: skip, say so
            print(f"skip {name}: {exc}", flush=True)
            continue
        for method in args.methods.split(","):
            cells = []
            for eps in EPSILONS:
                scores = []
                for seed in range(args.seeds):
                    est = Est(epsilon=eps, random_state=seed, **kw)
                    model = _model(method, est, eps, seed, error_bound)
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        model.fit(Xtr, ytr)
                    assert model.epsilon_ <= eps + 1e-9, model.epsilon_
                    scores.append(float(model.score(Xte, yte)))
                seeds = " ".join(f"{s:.3f}" for s in scores)
                cells.append(f"{np.median(scores):.3f} ({seeds})")
            line = f"| {name} | {method} | " + " | ".join(cells) + " |"
            print(line, flush=True)
            lines.append(line)
    write_table(args.out, lines)


if __name__ == "__main__":
    main()
