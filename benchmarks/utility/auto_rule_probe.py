"""``solver="auto"``: the Ridge rows the defaults matrix cannot decide alone.

The matrix has two regression datasets (California, 15,480 training rows, in
the derivation split; diabetes, 331, held out), so a ``Ridge`` row that fires
at small ``n`` or at ``epsilon <= 0.1`` rests on one or two cells. This probe
adds cells: California subsamples (331, 1,000 and 3,000 rows drawn from the
matrix's training part, three seeded draws each, scored on the matrix's test
part) beside the matrix's own California and diabetes data, every solver at
its defaults (``defaults.py``'s preparation: ``y_bound`` given, ``delta =
1e-5``), median of 5 fit seeds. It was run for issue 26 to check the rows
``adp-sgd`` / ``dp-lssgd`` for ``Ridge`` at ``epsilon <= 0.1`` and
``adassp`` for ``Ridge`` at ``n <= 2000`` (any target bound), which the
matrix alone would have let in (``auto_rule.py``'s ``CANDIDATES``).

    PYTHONPATH=. nice -n 10 python benchmarks/utility/auto_rule_probe.py \
        [--seeds 5] [--out /tmp/auto_rule_probe.md]

Writes ``benchmarks/results/auto_rule_probe.md`` (or ``--out``).
"""

import argparse
import os
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from defaults import _commit, load  # noqa: E402

RESULTS = Path(
    os.environ.get("DPESTIM_BENCH_RESULTS")
    or Path(__file__).resolve().parents[1] / "results"
)
SOLVERS = ["dp-sgd", "adp-sgd", "dp-lssgd", "adassp"]
EPSILONS = [0.1, 0.5, 1.0, 2.0]
SIZES = [331, 1000, 3000]
DRAWS = 3


def _cells():
    """``(label, X, y, X_test, y_test, fit kwargs)`` of every probed cell."""
    X, y, Xt, yt, extra = load("diabetes")
    yield "diabetes (331)", X, y, Xt, yt, extra
    X, y, Xt, yt, extra = load("california")
    yield f"california ({len(y)})", X, y, Xt, yt, extra
    for n in SIZES:
        for draw in range(DRAWS):
            rows = np.random.default_rng(100 + draw).choice(len(y), n, replace=False)
            yield f"california {n} draw {draw}", X[rows], y[rows], Xt, yt, extra


def main():
    from dpestim import Ridge

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--out", default=str(RESULTS / "auto_rule_probe.md"))
    args = p.parse_args()
    head = "| cell | eps | " + " | ".join(SOLVERS) + " | best - dp-sgd |"
    lines = [head, "|---" * (len(SOLVERS) + 3) + "|"]
    for label, X, y, Xt, yt, extra in _cells():
        for eps in EPSILONS:
            med = {}
            for solver in SOLVERS:
                kw = dict(solver=solver, epsilon=eps, delta=1e-5, **extra)
                scores = [
                    Ridge(random_state=s, **kw).fit(X, y).score(Xt, yt)
                    for s in range(args.seeds)
                ]
                med[solver] = float(np.median(scores))
            best = max(med, key=med.get)
            row = " | ".join(f"{med[s]:+.3f}" for s in SOLVERS)
            gap = med[best] - med["dp-sgd"]
            lines.append(f"| {label} | {eps:g} | {row} | {best} {gap:+.3f} |")
            print(lines[-1], flush=True)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        f"R^2, median of {args.seeds} fit seeds, code {_commit()} "
        "(benchmarks/utility/auto_rule_probe.py)\n\n" + "\n".join(lines) + "\n"
    )


if __name__ == "__main__":
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        main()
