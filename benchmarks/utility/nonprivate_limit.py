"""The non-private limit (``epsilon=inf``) at any feature scale (issue 25).

Rows: every classification / regression set of the defaults matrix as
prepared there (``benchmarks/utility/defaults.py``; Adult is a9a, California
and diabetes without a target bound), ``epsilon = inf``, the default solver
and ``alpha="auto"``, the loader's ``X`` multiplied by ``k`` in {1e-3, 1e-2,
1, 100} and rows scaled to unit norm; beside it scikit-learn on the objective
the fit solved (``C = 1 / (alpha_ n)``, ``Ridge(alpha_ n)``) and, for
reference, one private fit at ``epsilon = 1`` (median of ``--seeds``). A fit
at ``epsilon = inf`` should be the limit of the private ones: as good at any
scale of ``X``.

Usage::

    PYTHONPATH=. python benchmarks/utility/nonprivate_limit.py --seeds 3

Writes ``benchmarks/results/nonprivate_limit.md``.
"""

import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from defaults import _commit, _estimators, _sklearn, load, result_parser, write_table  # noqa: E402

DATASETS = [
    "adult",
    "breast_cancer",
    "digits",
    "german",
    "compas",
    "california",
    "diabetes",
]
SCALES = ["1e-3", "1e-2", "1", "100", "unit-norm"]


def _scaled(X, how):
    if how == "unit-norm":  # sparse-safe (Adult is a9a)
        from sklearn.preprocessing import normalize

        return normalize(X)
    return X * float(how)


def main():
    import dpestim  # noqa: F401

    p = result_parser(__doc__, "nonprivate_limit.md", seeds=3)
    p.add_argument("--datasets", nargs="+", default=DATASETS)
    args = p.parse_args()
    lines = [
        f"Code {args.commit or _commit()} (benchmarks/utility/nonprivate_limit.py). "
        "Test accuracy (R^2 for Ridge): `inf` the default fit at epsilon = inf, "
        "`sklearn` scikit-learn on the objective it solved (its `alpha_`), "
        f"`eps 1` a private default fit (median of {args.seeds} seeds).",
        "",
        "| dataset | estimator | X | inf | sklearn | eps 1 |",
        "|---|---|---|---|---|---|",
    ]
    for name in args.datasets:
        X, y, Xt, yt, _ = load(name)
        for est_name, Est in _estimators(name).items():
            for how in SCALES:
                Xs, Xts = _scaled(X, how), _scaled(Xt, how)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    inf = Est(epsilon=float("inf"), random_state=0).fit(Xs, y)
                    sk = _sklearn(est_name, Xs.shape[0], inf.alpha_).fit(Xs, y)
                    private = [
                        Est(epsilon=1.0, random_state=s).fit(Xs, y).score(Xts, yt)
                        for s in range(args.seeds)
                    ]
                line = (
                    f"| {name} | {est_name} | {how} | {inf.score(Xts, yt):.3f} | "
                    f"{sk.score(Xts, yt):.3f} | {np.median(private):.3f} |"
                )
                print(line, flush=True)
                lines.append(line)
    write_table(args.out, lines)


if __name__ == "__main__":
    main()
