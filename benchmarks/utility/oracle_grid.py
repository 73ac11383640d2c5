"""Oracle grid (issue 14): a solver's test score over explicit hyperparameters.

Evidence for the misses of the defaults matrix (``benchmarks/utility/defaults.py``):
every setting of a grid is scored on the test split and the median over seeds
is printed, so the best row is *optimistic* (tuned on the test data). When no
row beats the majority / constant rate, no default can either.

    PYTHONPATH=. python benchmarks/utility/oracle_grid.py \\
        german LogisticRegression dp-gd 2 \\
        --max-iter auto 5 10 20 50 100 --learning-rate auto 0.3 1 3 10 30 --seeds 3

``--lr-factor`` multiplies the learning rate the ``"auto"`` rule resolves for
each (``max_iter``, ``batch_size``) instead (the seq-dp-scd grids). Raw
outputs of the session-3 grids: ``benchmarks/results/oracle/`` (the helpers
ran one-off copies of this logic; the lead's German eps=2 grid ran this one's
predecessor with the same arguments).
"""

import argparse
import itertools
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from defaults import _estimators, load  # noqa: E402


def _values(raw, cast):
    return [None if v == "auto" else cast(v) for v in raw]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dataset")
    p.add_argument("estimator")
    p.add_argument("solver")
    p.add_argument("epsilon", type=float)
    p.add_argument("--max-iter", nargs="+", default=["auto"])
    p.add_argument("--batch-size", nargs="+", default=["auto"])
    p.add_argument("--learning-rate", nargs="+", default=["auto"])
    p.add_argument("--lr-factor", nargs="+", type=float, default=None)
    p.add_argument("--seeds", type=int, default=3)
    args = p.parse_args(argv)
    X, y, Xt, yt, extra = load(args.dataset)
    Est = _estimators(args.dataset)[args.estimator]
    kw = dict(extra)
    if args.estimator != "Ridge":
        kw["classes"] = np.unique(np.concatenate([y, yt]))

    def fit(seed, **params):
        est = Est(solver=args.solver, epsilon=args.epsilon, random_state=seed, **kw)
        est.set_params(**{k: v for k, v in params.items() if v is not None})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return est.fit(X, y)

    grid = itertools.product(_values(args.max_iter, int), _values(args.batch_size, int))
    for T, B in grid:
        if args.lr_factor is None:
            rates = [(lr, lr) for lr in _values(args.learning_rate, float)]
        else:
            lr0 = fit(0, max_iter=T, batch_size=B).hyperparameters_["learning_rate"]
            rates = [(f, lr0 * f) for f in args.lr_factor]
        for label, lr in rates:
            t = time.process_time()
            fits = [
                fit(s, max_iter=T, batch_size=B, learning_rate=lr)
                for s in range(args.seeds)
            ]
            sc = [e.score(Xt, yt) for e in fits]
            hp = fits[-1].hyperparameters_
            print(
                f"{args.dataset} {args.estimator} {args.solver} eps={args.epsilon} "
                f"T={T} B={B} lr={label} -> {np.round(sc, 4)} "
                f"med={np.median(sc):.4f} plan T={hp.get('max_iter')} "
                f"lr={hp.get('learning_rate'):.4g} cpu={time.process_time() - t:.1f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
