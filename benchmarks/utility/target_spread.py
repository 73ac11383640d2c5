"""``Ridge``'s private target range on targets with a dominant value.

The spread of ``y_bound="auto"`` was the median absolute deviation, which is 0
when more than half of the targets share one value (counts, hours per week,
ratings): the range collapsed onto that value. This runs ``Ridge`` at its
defaults (``y_bound="auto"``, ``solver="auto"``) on

* synthetic targets built from one linear score ``z`` on 5 normal features:
  ``int0-2`` (``z`` rounded to {0, 1, 2}, about half the rows at 1),
  ``binary`` (``z > 0``), ``zeroinfl`` (a count, 0 in 68% of the rows),
  ``cont`` (``z`` itself: the control), ``rare`` / ``common`` (``z > 1.5``
  and its complement: 82% of the rows at 0, or at 1);
* the shared data's tasks of ``public_target_bound.py``: Adult's hours per
  week (47% of the rows at 40), COMPAS's prior-offence count (18% at its
  median), Adult's age and California (controls), and Adult's label as a 0/1
  target (76% zeros) and its complement (76% ones);

with 331 / 1,000 / 3,000 training rows (a row sample per seed), epsilon 0.5
/ 1 / 2, R^2 on held-out rows, median over ``--seeds`` seeds. Run it from
a ``git archive`` snapshot of each commit to compare (``--commit`` stamps
the table).

    PYTHONPATH=. python benchmarks/utility/target_spread.py [--seeds 5] \\
        [--sizes 331 1000 3000] [--commit C] [--out FILE]
"""

import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from defaults import (  # noqa: E402
    load,
    markdown_table,
    result_parser,
    run_and_save_stamped,
)

EPSILONS = (0.5, 1.0, 2.0)
SHARED = ("adult-hours", "compas-priors", "adult-age")


def _synthetic():
    rng = np.random.default_rng(0)
    n = 4000
    X = rng.normal(size=(n, 5))
    z = X @ np.array([1.0, -1.0, 0.5, 0.0, 0.2]) + 0.7 * rng.normal(size=n)
    targets = {
        "syn-int0-2": np.clip(np.round(z / 2 + 1), 0, 2),
        "syn-binary": (z > 0).astype(float),
        "syn-zeroinfl": np.where(z > 0.8, np.round(np.exp(z / 2)), 0.0),
        "syn-rare": (z > 1.5).astype(float),
        "syn-common": (z <= 1.5).astype(float),
        "syn-cont": z,
    }
    for name, y in targets.items():
        yield name, X[:3000], y[:3000], X[3000:], y[3000:]


def tasks():
    """``(name, X, y, X_test, y_test)`` of every task (the shared data's as
    ``public_target_bound.py`` splits them)."""
    from public_target_bound import _cells

    yield from _synthetic()
    for name, X, y, Xt, yt, _, _ in _cells([*SHARED, "california"]):
        yield name, X, y, Xt, yt
    X, y, Xt, yt, _ = load("adult")  # the label as a 0/1 target, 76% zeros
    yield "adult-income", X, y.astype(float), Xt, yt.astype(float)
    yield "adult-income-flipped", X, 1.0 - y, Xt, 1.0 - yt


def run(args):
    from sklearn.linear_model import Ridge as SkRidge

    from dpestim import Ridge

    records = []
    for name, X, y, Xt, yt in tasks():
        share = float(np.mean(y == np.median(y)))
        for size in args.sizes:
            if size > len(y):
                continue
            sk = SkRidge(alpha=1e-4 * size).fit(X[:size], y[:size]).score(Xt, yt)
            for eps in EPSILONS:
                for seed in range(args.seeds):
                    rows = np.random.default_rng(100 + seed)
                    idx = rows.choice(len(y), size, replace=False)
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        m = Ridge(epsilon=eps, random_state=seed).fit(X[idx], y[idx])
                    records.append(
                        dict(
                            task=name,
                            n=size,
                            epsilon=eps,
                            seed=seed,
                            r2=float(m.score(Xt, yt)),
                            sklearn=float(sk),
                            at_median=share,
                            y_bound=m.hyperparameters_.get("y_bound", ""),
                        )
                    )
                print(name, size, eps, flush=True)
    return records


def report(records, command, cpu_s, commit="?"):
    head = ["task", "share at the median", "n", "scikit-learn"]
    head += [f"eps={e:g}" for e in EPSILONS]
    cells = {}
    for r in records:
        cells.setdefault((r["task"], r["n"]), []).append(r)
    rows = []
    for (task, n), rs in cells.items():
        row = [task, f"{rs[0]['at_median']:.2f}", str(n), f"{rs[0]['sklearn']:.3f}"]
        for e in EPSILONS:
            r2 = [r["r2"] for r in rs if r["epsilon"] == e]
            row.append(f"{np.median(r2):.3f} (min {np.min(r2):.3f})")
        rows.append(row)
    return (
        f"# Ridge's private target range on targets with a dominant value\n\n"
        f"Command: `{command}` (code {commit}; {cpu_s:.0f} CPU s). `Ridge` at its "
        "defaults (`y_bound='auto'`, `solver='auto'`), R^2 on held-out rows, "
        "median (and minimum) over the seeds, each seed its own row sample.\n\n"
        + markdown_table(head, rows)
        + "\n"
    )


def main():
    p = result_parser(__doc__, "target_spread.md", seeds=5)
    p.add_argument("--sizes", nargs="+", type=int, default=[331, 1000, 3000])
    args = p.parse_args()
    run_and_save_stamped("target_spread.py", args, run, report)


if __name__ == "__main__":
    main()
