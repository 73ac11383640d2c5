"""``FairLogisticRegression``'s multiplier bound: collapses to one class.

At its defaults (``solver="auto"`` = noisy-sgda, ``difference_bound=0``,
``multiplier_bound=5``) a private run can land on a constant predictor where
the groups differ little or the features carry little of the group (a
twenty-second-session probe: COMPAS by race without the race columns, the
majority rate at every epsilon; a synthetic with groups independent of the
features, 2 of 3 seeds at epsilon 1). The multipliers, noisy, reach their
bound and price any difference of rates, which one class removes. This
script fits the fairness tasks of ``threshold_bins.py`` (German by sex,
COMPAS by race (6 groups), Adult by sex to derive; COMPAS African-American
against the rest, Adult by race (5), Bank by age (3) held out) at epsilon
0.5 / 1 / 2, both constraints, ``multiplier_bound`` in {5 (the default), 2,
1}, and counts the fits at the majority rate (test accuracy within half a
point of it), with the median accuracy and the constraint's gap.

    PYTHONPATH=. python benchmarks/utility/fair_multiplier_bound.py [--seeds 5]

Writes ``benchmarks/results/fair_multiplier_bound.{json,md}`` (or ``--out``).
"""

import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from defaults import markdown_table, result_parser, run_and_save_stamped  # noqa: E402
from threshold_bins import CONSTRAINTS, TASKS, _data, _stats  # noqa: E402

BOUNDS = (5.0, 2.0, 1.0)
EPSILONS = (0.5, 1.0, 2.0)
#: A fit "collapsed" when its test accuracy is within this of the majority rate.
COLLAPSE = 0.005


def run(args):
    from dpestim import FairLogisticRegression

    records = []
    for task, (split, loader, attribute, group_map) in TASKS.items():
        for seed in range(args.seeds):
            X, y, Xt, yt, a, at = _data(loader, attribute, group_map, seed)
            groups = sorted(set(a))
            majority = float(max(np.mean(yt), 1 - np.mean(yt)))
            for eps in EPSILONS:
                for constraint in CONSTRAINTS:
                    for bound in BOUNDS:
                        model = FairLogisticRegression(
                            constraint=constraint, multiplier_bound=bound,
                            epsilon=eps, classes=[0, 1], groups=groups,
                            random_state=seed,
                        )  # fmt: skip
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            model.fit(X, y, sensitive_features=a)
                        stats = _stats(yt, model.predict(Xt), at)
                        records.append(
                            {"task": task, "split": split, "seed": seed,
                             "epsilon": eps, "constraint": constraint,
                             "bound": bound, "majority": majority,
                             "collapsed": stats["accuracy"] <= majority + COLLAPSE}
                            | stats
                        )  # fmt: skip
            print(task, seed, flush=True)
    return records


def _cell(records, **where):
    rs = [r for r in records if all(r[k] == v for k, v in where.items())]
    acc = np.median([r["accuracy"] for r in rs])
    gap = np.median([r[where["constraint"]] for r in rs])
    return acc, gap, sum(r["collapsed"] for r in rs), len(rs)


def report(records, command, cpu_s, commit):
    head = ["split", "task", "constraint", "epsilon", "majority"]
    head += [f"B={b:g}: accuracy / gap / collapsed" for b in BOUNDS]
    rows, totals = [], {}
    for task, (split, *_) in TASKS.items():
        for c in CONSTRAINTS:
            for eps in EPSILONS:
                cells = []
                for b in BOUNDS:
                    acc, gap, k, m = _cell(
                        records, task=task, constraint=c, epsilon=eps, bound=b
                    )
                    t = totals.setdefault((split, b), [0, 0, []])
                    t[0] += k
                    t[1] += m
                    t[2].append((acc, gap))
                    cells.append(f"{acc:.3f} / {gap:.3f} / {k} of {m}")
                maj = np.median([r["majority"] for r in records if r["task"] == task])
                rows.append([split, task, c, f"{eps:g}", f"{maj:.3f}", *cells])
    summary = []
    for (split, b), (k, m, cells) in sorted(totals.items()):
        acc = np.mean([a for a, _ in cells])
        gap = np.mean([g for _, g in cells])
        summary.append(
            f"- {split}, B={b:g}: {k} of {m} fits collapsed; mean over the cells "
            f"of the median accuracy {acc:.3f}, of the median gap {gap:.3f}"
        )
    return "\n".join(
        [
            "# `FairLogisticRegression`: the multiplier bound and collapses",
            "",
            f"Command: `{command}` (code {commit}; {cpu_s:.0f} CPU s). "
            "noisy-sgda, `difference_bound=0`; each cell: median test accuracy "
            "/ median gap of the constraint / fits within half a point of the "
            "majority rate.",
            "",
            markdown_table(head, rows),
            "",
            *summary,
            "",
        ]
    )


def main(argv=None):
    p = result_parser(__doc__, "fair_multiplier_bound.md", seeds=5)
    args = p.parse_args(argv)
    run_and_save_stamped("fair_multiplier_bound.py", args, run, report)


if __name__ == "__main__":
    main()
