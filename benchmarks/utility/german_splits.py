"""German credit over random splits: is the fixed split of the matrix unlucky?

Issue 26 asks for German credit >= 0.735 at epsilon 1 (its non-private
reference 0.777). The defaults matrix scores one fixed 75/25 split
(``random_state=0``), on which scikit-learn's ``LogisticRegression`` reaches
0.732 only, below the target. This script scores every solver that may
serve a ``LogisticRegression`` at its defaults (``"auto"``, the Gaussian and
pure-DP solvers "auto" may pick, and two research-only ones as an oracle)
over ``--splits`` random 75/25 splits of ``load_german`` (split seeds 0, 1,
...), ``--seeds`` fits per split, and reports per solver and epsilon the
median over the splits of each split's median, the mean, and the share of
splits whose median reaches the target; beside them scikit-learn's default
``LogisticRegression`` on the same splits and the test majority rate.

    PYTHONPATH=. python benchmarks/utility/german_splits.py [--splits 20] \\
        [--seeds 3] [--epsilons 1 2] [--commit C] [--out FILE]
"""

import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from defaults import markdown_table, result_parser, run_and_save_stamped  # noqa: E402

TARGET = 0.735
SOLVERS = (
    "auto",
    "dp-sgd",
    "dp-lssgd",
    "adp-sgd",
    "adp-adagrad",
    "dp-scd",
    "dp-gd",
    "dp-nag",
    "objective-perturbation",
    "seq-dp-scd",
)


def run(args):
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split

    import dpestim
    from dpestim.datasets import load_german

    X, y = load_german(return_X_y=True)
    records = []
    for split in range(args.splits):
        Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, random_state=split)
        sk = LogisticRegression(max_iter=5000).fit(Xtr, ytr).score(Xte, yte)
        majority = max(np.mean(yte), 1 - np.mean(yte))
        for name, score in (("scikit-learn", sk), ("majority", majority)):
            records.append(
                {"split": split, "solver": name, "epsilon": None, "seed": None,
                 "score": float(score)}
            )  # fmt: skip
        for eps in args.epsilons:
            for solver in SOLVERS:
                for seed in range(args.seeds):
                    model = dpestim.LogisticRegression(
                        epsilon=eps, solver=solver, random_state=seed
                    )
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        model.fit(Xtr, ytr)
                    records.append(
                        {"split": split, "solver": solver, "epsilon": eps,
                         "seed": seed, "score": float(model.score(Xte, yte))}
                    )  # fmt: skip
        print(f"split {split}: scikit-learn {sk:.3f}", flush=True)
    return records


def _per_split(records, solver, eps):
    """Each split's median score of ``solver`` at ``eps``."""
    by_split = {}
    for r in records:
        if r["solver"] == solver and r["epsilon"] == eps:
            by_split.setdefault(r["split"], []).append(r["score"])
    return np.array([np.median(v) for _, v in sorted(by_split.items())])


def report(records, command, cpu_s, commit):
    head = ["solver", "epsilon", "median", "mean", f"splits >= {TARGET}"]
    rows = []
    cells = [("scikit-learn", None), ("majority", None)]
    cells += [(s, e) for e in sorted({r["epsilon"] for r in records} - {None})
              for s in SOLVERS]  # fmt: skip
    for solver, eps in cells:
        v = _per_split(records, solver, eps)
        if v.size:
            rows.append(
                [solver, "-" if eps is None else f"{eps:g}", f"{np.median(v):.3f}",
                 f"{v.mean():.3f}", f"{np.sum(v >= TARGET)} / {v.size}"]
            )  # fmt: skip
    return "\n".join(
        [
            "# German credit over random splits (issue 26's target)",
            "",
            f"Command: `{command}` (code {commit}; {cpu_s:.0f} CPU s). "
            "`load_german`, 75/25 splits with `random_state` 0, 1, ...; every "
            "solver at its defaults (`delta=1e-5`, ignored by the pure-DP dp-gd "
            "and dp-nag); per split the median over the fits' seeds, then "
            "over the splits their median and mean. The defaults matrix "
            "scores split 0 only. objective-perturbation and seq-dp-scd are "
            'research-only (`"auto"` never picks them): an oracle row.',
            "",
            markdown_table(head, rows),
            "",
        ]
    )


def main(argv=None):
    p = result_parser(__doc__, "german_splits.md")
    p.add_argument("--splits", type=int, default=20)
    p.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 2.0])
    args = p.parse_args(argv)
    run_and_save_stamped("german_splits.py", args, run, report)


if __name__ == "__main__":
    main()
