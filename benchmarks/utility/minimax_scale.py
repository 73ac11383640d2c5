"""The minimax estimators' private row scale under common preprocessings.

The minimax estimators clip every coordinate of ``x / s`` at
``feature_bound``; ``s`` is their private row scale (``feature_scale="auto"``).
Cells, epsilon 1 (``--epsilon``), ``delta = 1e-5``, every other parameter at
its default, ``--seeds`` seeds (median test score: accuracy, R^2 for the
regressor):

* ``MinimaxRegressor`` on 5,000 rows of 3 uniform features (a linear target
  with noise; two random groups), and on California housing as loaded and
  after scikit-learn's ``StandardScaler`` (groups: median income above its
  training median; a 75/25 split);
* ``MinimaxLogisticRegression`` and ``FairLogisticRegression`` on Adult
  (``load_adult``, sensitive feature sex) after ``StandardScaler``, and
  ``MinimaxLogisticRegression`` on Adult as loaded;
* ``MinimaxLogisticRegression`` on COMPAS (race: African-American or not; a
  70/30 split) as loaded and after ``StandardScaler``.

With ``--held-out``, other cells instead (not used to choose the rules):
``MinimaxLogisticRegression`` and ``FairLogisticRegression`` on UCI Bank
Marketing (sensitive: age above 40) and German credit (sex), a 70/30 split,
as loaded and after ``StandardScaler``.

``StandardScaler`` is fitted on the training rows (non-private
preprocessing, as a user may do it). ``--scales k ...`` multiplies every
cell's features (training and test) by each ``k`` (the user's units; default
1). Run it at two commits to compare rules.

Usage::

    PYTHONPATH=. python benchmarks/utility/minimax_scale.py [--seeds 3] [--out FILE]
    PYTHONPATH=. python benchmarks/utility/minimax_scale.py --epsilon inf \
        --scales 0.01 1 100 --seeds 1 --out benchmarks/results/minimax_inf.md

Writes ``benchmarks/results/minimax_scale.md`` (or ``--out``).
"""

import sys
import warnings
import zlib
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from defaults import _commit, result_parser, write_table  # noqa: E402


def _std(X, Xt):
    from sklearn.preprocessing import StandardScaler

    sc = StandardScaler().fit(X)
    return sc.transform(X), sc.transform(Xt)


def cells():
    """``(name, estimator class, X, y, groups, X_test, y_test, kwargs)``."""
    from sklearn.model_selection import train_test_split

    from dpestim import (
        FairLogisticRegression,
        MinimaxLogisticRegression,
        MinimaxRegressor,
    )
    from dpestim.datasets import load_adult, load_california_housing, load_compas

    rng = np.random.default_rng(zlib.crc32(b"minimax-scale"))
    X = rng.uniform(-1, 1, (6000, 3))
    a = rng.integers(0, 2, 6000)
    y = 0.5 * X[:, 0] - 0.3 * X[:, 1] + 0.1 * rng.normal(size=6000)
    yield (
        "3 uniform features",
        MinimaxRegressor,
        X[:5000],
        y[:5000],
        a[:5000],
        X[5000:],
        y[5000:],
        {},
    )
    c = load_california_housing()
    Xtr, Xte, ytr, yte = train_test_split(
        c.data, c.target, test_size=0.25, random_state=0
    )
    g = (Xtr[:, 0] > np.median(Xtr[:, 0])).astype(int)
    yield "California", MinimaxRegressor, Xtr, ytr, g, Xte, yte, {}
    Xs, Xst = _std(Xtr, Xte)
    yield "California, StandardScaler", MinimaxRegressor, Xs, ytr, g, Xst, yte, {}
    b = load_adult()
    A = (np.asarray(b.sensitive["sex"]) == "Female").astype(int)
    cls = {"classes": [0, 1]}
    Xs, Xst = _std(b.data, b.data_test)
    yield (
        "Adult",
        MinimaxLogisticRegression,
        b.data,
        b.target,
        A,
        b.data_test,
        b.target_test,
        cls,
    )
    for Est in (MinimaxLogisticRegression, FairLogisticRegression):
        yield "Adult, StandardScaler", Est, Xs, b.target, A, Xst, b.target_test, cls
    m = load_compas()
    race = (np.asarray(m.sensitive["race"]) == "African-American").astype(int)
    Xa, Xb, ya, yb, aa, _ = train_test_split(
        m.data, m.target, race, test_size=0.3, random_state=0
    )
    yield "COMPAS", MinimaxLogisticRegression, Xa, ya, aa, Xb, yb, cls
    Xs, Xst = _std(Xa, Xb)
    yield "COMPAS, StandardScaler", MinimaxLogisticRegression, Xs, ya, aa, Xst, yb, cls


def held_out_cells():
    """Bank and German credit (see the module docstring), as :func:`cells`."""
    from sklearn.model_selection import train_test_split

    from dpestim import FairLogisticRegression, MinimaxLogisticRegression
    from dpestim.datasets import load_bank, load_german

    for name, b in (("Bank", load_bank()), ("German", load_german())):
        if name == "Bank":
            g = (np.asarray(b.sensitive["age"]) > 40).astype(int)
        else:
            g = (np.asarray(b.sensitive["sex"]) == "female").astype(int)
        Xa, Xb, ya, yb, ga, _ = train_test_split(
            b.data, b.target, g, test_size=0.3, random_state=0
        )
        Xs, Xst = _std(Xa, Xb)
        for prep, X, Xt in ((name, Xa, Xb), (f"{name}, StandardScaler", Xs, Xst)):
            for Est in (MinimaxLogisticRegression, FairLogisticRegression):
                yield prep, Est, X, ya, ga, Xt, yb, {"classes": [0, 1]}


def main():
    p = result_parser(__doc__, "minimax_scale.md", seeds=3)
    p.add_argument("--epsilon", type=float, default=1.0)
    p.add_argument("--scales", nargs="+", type=float, default=[1.0])
    p.add_argument("--held-out", action="store_true", help="Bank and German cells")
    args = p.parse_args()
    lines = [
        f"Minimax estimators at their defaults, epsilon {args.epsilon:g}, median of "
        f"{args.seeds} seeds, code {args.commit or _commit()} "
        "(benchmarks/utility/minimax_scale.py). `k`: the features multiplied by k.",
        "",
        "| data | estimator | k | score | feature_scale_ (seed 0) |",
        "|---|---|---|---|---|",
    ]
    for name, Est, X, y, groups, Xt, yt, kw in (
        held_out_cells() if args.held_out else cells()
    ):
        for k in args.scales:
            scores, scale = [], None
            for seed in range(args.seeds):
                est = Est(epsilon=args.epsilon, groups=[0, 1], random_state=seed, **kw)
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        est.fit(X * k, y, sensitive_features=groups)
                except ValueError as e:  # a diverged fit is a result too
                    scores.append(np.nan)
                    print(f"{name} x{k:g} seed {seed}: {e}", flush=True)
                    continue
                scores.append(est.score(Xt * k, yt))
                scale = est.feature_scale_ if scale is None else scale
            score = "diverged" if np.isnan(scores).any() else f"{np.median(scores):.4f}"
            scale = "-" if scale is None else f"{scale:.4g}"
            line = f"| {name} | {Est.__name__} | {k:g} | {score} | {scale} |"
            print(line, flush=True)
            lines.append(line)
    write_table(args.out, lines)


if __name__ == "__main__":
    main()
