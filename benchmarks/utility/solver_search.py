"""Search over solvers (issue 27 item 4) against the default search and one fit.

For each dataset and seed, every method spends ``(epsilon, 1e-5)`` in total,
selection included:

- ``default``: ``LogisticRegression(classes=...)`` at its defaults, one fit;
- ``search``: ``PrivateSearchCV`` at its defaults (default space around the
  estimator's ``"auto"`` plan, ``accountant="auto"``, mean 10 candidates);
- ``solvers``: ``PrivateSearchCV`` over ``solver`` in ``--solvers`` (each
  candidate draws its solver; the max-curve RDP mixture) and the default
  space's factors, resolved against each solver's own plan.

Usage (small; run niced)::

    PYTHONPATH=. nice -n 10 python benchmarks/utility/solver_search.py \\
        --datasets german breast_cancer adult --seeds 3 --epsilon 1

Prints a markdown table (median test accuracy over the seeds, and each seed)
and the noise multipliers.
"""

import argparse
import statistics
import warnings

import numpy as np

from benchmarks.utility.defaults import load
from dpestim import LogisticRegression, set_composition_warning
from dpestim.model_selection import PrivateSearchCV, default_space

ADULT_ROWS = 8000


def _data(name, seed):
    X, y, Xt, yt, _ = load(name)
    if name == "adult":  # a public random subsample of the training rows
        rows = np.random.default_rng(seed).choice(X.shape[0], ADULT_ROWS, False)
        X, y = X[rows], y[rows]
    return X, y, Xt, yt


def run(datasets, seeds, epsilon, solvers):
    set_composition_warning(False)
    rows = []
    for name in datasets:
        for seed in range(seeds):
            X, y, Xt, yt = _data(name, seed)
            classes = np.unique(y)

            def est(classes=classes, seed=seed, **kw):
                return LogisticRegression(classes=classes, random_state=seed, **kw)

            space = {"solver": list(solvers)} | default_space(est())
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                one = est(epsilon=epsilon).fit(X, y)
                common = {"epsilon": epsilon, "random_state": seed}
                search = PrivateSearchCV(est(), **common).fit(X, y)
                mixed = PrivateSearchCV(est(), space, **common).fit(X, y)
            rows.append(
                {
                    "dataset": name,
                    "seed": seed,
                    "default": one.score(Xt, yt),
                    "default_solver": one.solver_.name,
                    "search": search.score(Xt, yt),
                    "solvers": mixed.score(Xt, yt),
                    "picked": mixed.best_params_["solver"],
                    "nm_default": one.noise_multiplier_,
                    "nm_search": search.noise_multiplier_,
                    "nm_solvers": mixed.noise_multipliers_,
                    "eps": (search.epsilon_, mixed.epsilon_),
                }
            )
            print(rows[-1], flush=True)
    return rows


def table(rows):
    lines = [
        "| dataset | default (solver) | search | solvers (picked) |",
        "|---|---|---|---|",
    ]
    for name in dict.fromkeys(r["dataset"] for r in rows):
        rs = [r for r in rows if r["dataset"] == name]

        def cell(key, rs=rs):
            vals = [100 * r[key] for r in rs]
            each = ", ".join(f"{v:.1f}" for v in vals)
            return f"{statistics.median(vals):.1f} ({each})"

        lines.append(
            f"| {name} | {cell('default')} [{rs[0]['default_solver']}] | "
            f"{cell('search')} | {cell('solvers')} "
            f"[{', '.join(r['picked'] for r in rs)}] |"
        )
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["german", "breast_cancer"])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--solvers", nargs="+", default=["dp-sgd", "dp-scd"])
    args = parser.parse_args()
    rows = run(args.datasets, args.seeds, args.epsilon, args.solvers)
    print(table(rows))


if __name__ == "__main__":
    main()
