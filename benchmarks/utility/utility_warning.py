"""Can the ``UtilityWarning`` be trusted? Its precision and recall (issue 25 item 5).

Reads a defaults-matrix file written by ``benchmarks/utility/defaults.py``
(records carry ``utility_warning``: whether a :class:`~dpestim.UtilityWarning`
fired during the fit). A **cell** is (estimator, solver, dataset, epsilon),
private epsilons only, over its seeds:

* **positive** (the fit is useless): the cell's median score is at or below
  the majority-class accuracy (classifiers) or the constant-mean R^2
  (Ridge) of its dataset plus ``MARGIN`` (1 point of accuracy, 0.02 of R^2);
  a fit that raised (NaN score) counts as at the base rate;
* **warned**: a ``UtilityWarning`` fired in at least half of its seeds. A
  classifier's record with ``lift`` (the private utility check's release,
  :mod:`dpestim.linear_model._utility_check`) has its verdict recomputed
  from that release by the library's rule (``check_fires`` at the check's
  public Laplace scale): post-processing of the same release, so the
  verdict the fit gives at the current commit even for records written
  under an earlier rule (the fits are the same; ``--no-rescore`` reads the
  recorded field instead).

The check's rule ``lift < 0.01 + z b`` is also swept over ``z`` on the
recorded releases (train and held-out datasets): how ``z`` was chosen.

Precision = warned positives / warned cells; recall = warned positives /
positive cells; per estimator, per solver family and overall.

A **candidate rule** is then fitted and checked: "warn when ``epsilon n /
D < t_family``" (``D`` noised coordinates = outputs x (features +
intercept), ``n`` training rows, all public), one threshold per solver
family chosen on the ``--train`` datasets (the threshold maximising F1
there), and reported on the held-out datasets (the others).

Usage::

    DPESTIM_BENCH_RESULTS=/tmp/r PYTHONPATH=. nice -n 10 python \\
        benchmarks/utility/defaults.py --datasets german compas breast_cancer \\
        digits diabetes w8a --epsilons 0.1 0.5 1 2 --seeds 2
    PYTHONPATH=. python benchmarks/utility/utility_warning.py \\
        --matrix /tmp/r/defaults.json

Writes ``benchmarks/results/utility_warning.json`` and ``.md``.
"""

import argparse
import json
import math
import os
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

RESULTS = Path(
    os.environ.get("DPESTIM_BENCH_RESULTS")
    or Path(__file__).resolve().parents[1] / "results"
)
#: A cell within this of the base rate is "no better than a constant".
MARGIN = {"accuracy": 0.01, "r2": 0.02}
#: The second definition: a cell that gains less than this share of the
#: non-private model's gain over the base rate.
RELATIVE = 0.1
BASELINES = {"majority", "constant"}
REFERENCES = {"sklearn", "sklearn-l1ball"}
TRAIN = ["german", "compas", "digits"]
#: The rule's second clause: a binary classifier whose smaller class is below
#: this share (the private class proportions of issue 25 item 1; here the
#: training labels' proportion stands in for them, stated in the report).
MINORITY = 0.05
#: Values of the utility check's ``z`` (``lift < 0.01 + z b``) swept.
Z_GRID = (0.0, 0.25, 0.5, 0.75, 1.0)


def _family(solver):
    from defaults import FAMILIES

    for fam, members in FAMILIES.items():
        if solver in members:
            return fam
    return "other"


def _shape(dataset):
    """``(n_train, n_features, n_outputs, minority share)`` of a dataset.

    The first three are public; the minority share (binary classification;
    1 otherwise) stands in for a private class-proportion estimate.
    """
    from defaults import REGRESSION, load

    X, y, _, _, _ = load(dataset)
    k = 1 if dataset in REGRESSION else len(np.unique(y))
    minority = 1.0
    if k == 2:
        minority = float(np.min(np.unique(y, return_counts=True)[1]) / y.shape[0])
    return X.shape[0], X.shape[1], (1 if k <= 2 else k), minority


def check_scale(rec, n):
    """Public Laplace scale of an unweighted record's ``lift`` (``n`` rows)."""
    from dpestim.linear_model._utility_check import check_epsilon, lift_scale
    from dpestim.solvers import resolve_solver

    relation = resolve_solver(rec.get("picked") or rec["solver"]).neighbouring
    return lift_scale(check_epsilon(float(rec["epsilon"]), n, relation), n, relation)


def rescore(records, shapes, z=None):
    """Set each classifier record's verdict from its ``lift`` (see the module).

    The matrix fits no class weights, so the divisor is ``n``. ``z``: the
    rule's ``CHECK_CONFIDENCE`` (default: the library's).
    """
    from dpestim.linear_model import _utility_check as uc

    z = uc.CHECK_CONFIDENCE if z is None else z
    out = []
    for r in records:
        if "lift" in r:
            b = check_scale(r, shapes[r["dataset"]][0])
            r = dict(r, utility_warning=bool(uc.check_fires(r["lift"], b, z)))
        out.append(r)
    return out


def cells(records):
    """One dict per private cell that has ``utility_warning`` on its records."""
    base = {
        (r["estimator"], r["dataset"]): r["score"]
        for r in records
        if r["solver"] in BASELINES
    }
    ref = {
        (r["estimator"], r["dataset"]): r["score"]
        for r in records
        if r["solver"] == "sklearn"
    }
    groups = defaultdict(list)
    for r in records:
        if r["solver"] in BASELINES | REFERENCES or r["epsilon"] == "inf":
            continue
        if "utility_warning" not in r:
            continue
        groups[(r["estimator"], r["solver"], r["dataset"], float(r["epsilon"]))].append(
            r
        )
    out = []
    for (est, solver, dataset, eps), rs in sorted(groups.items()):
        b = base[(est, dataset)]
        sk = ref[(est, dataset)]
        metric = rs[0]["metric"]
        scores = [b if math.isnan(r["score"]) else r["score"] for r in rs]
        score = float(np.median(scores))
        warned = sum(bool(r["utility_warning"]) for r in rs) >= len(rs) / 2
        out.append(
            dict(
                estimator=est,
                solver=solver,
                family=_family(solver),
                dataset=dataset,
                epsilon=eps,
                seeds=len(rs),
                metric=metric,
                score=score,
                base=b,
                sklearn=sk,
                positive=bool(score <= b + MARGIN[metric]),
                positive_relative=bool(score <= b + RELATIVE * (sk - b)),
                positive_literal=bool(score <= b),
                warned=bool(warned),
            )
        )
    return out


def precision_recall(rows, key="warned", truth="positive"):
    tp = sum(r[truth] and r[key] for r in rows)
    fp = sum((not r[truth]) and r[key] for r in rows)
    fn = sum(r[truth] and not r[key] for r in rows)
    prec = tp / (tp + fp) if tp + fp else math.nan
    rec = tp / (tp + fn) if tp + fn else math.nan
    return dict(
        cells=len(rows),
        positives=tp + fn,
        warned=tp + fp,
        tp=tp,
        fp=fp,
        fn=fn,
        precision=prec,
        recall=rec,
    )


def _f1(stats):
    p, r = stats["precision"], stats["recall"]
    if math.isnan(p) or math.isnan(r) or p + r == 0:
        return 0.0
    return 2 * p * r / (p + r)


def fit_rule(rows, shapes, train, key="rule"):
    """Per family, the threshold ``t`` of ``epsilon n / D < t`` best on ``train``.

    Sets ``r[key]`` (the rule's verdict) on every row; returns the thresholds.
    """
    for r in rows:
        n, d, k, minority = shapes[r["dataset"]]
        D = k * (d + 1)
        r["budget_per_coordinate"] = r["epsilon"] * n / D
        r["imbalanced"] = r["metric"] == "accuracy" and minority < MINORITY
    thresholds = {}
    for fam in sorted({r["family"] for r in rows}):
        tr = [r for r in rows if r["family"] == fam and r["dataset"] in train]
        if not tr:
            continue
        cands = sorted({r["budget_per_coordinate"] for r in tr})
        cands = [0.0] + [c * 1.0001 for c in cands]
        best = max(
            cands,
            key=lambda t: (
                _f1(_rule_stats(tr, t)),
                -t,  # ties: the smaller threshold (fewer warnings)
            ),
        )
        thresholds[fam] = best
    for r in rows:
        t = thresholds.get(r["family"], 0.0)
        r[key] = bool(r["budget_per_coordinate"] < t)
        r[key + "+imbalance"] = r[key] or r["imbalanced"]
    return thresholds


def leave_one_out(rows, shapes):
    """``r["lodo"]``: the rule fitted on every other dataset, applied to ``r``."""
    datasets = sorted({r["dataset"] for r in rows})
    for ds in datasets:
        others = [x for x in datasets if x != ds]
        marked = [dict(r) for r in rows]
        fit_rule(marked, shapes, others, key="lodo")
        for r, m in zip(rows, marked, strict=True):
            if r["dataset"] == ds:
                r["lodo"] = m["lodo"]
                r["lodo+imbalance"] = m["lodo+imbalance"]


def _rule_stats(rows, t):
    marked = [dict(r, rule=r["budget_per_coordinate"] < t) for r in rows]
    return precision_recall(marked, "rule")


def _fmt(x):
    return "n/a" if isinstance(x, float) and math.isnan(x) else f"{x:.2f}"


def report(rows, thresholds, train, source, matrix_meta=None, sweep=None):
    held = sorted({r["dataset"] for r in rows} - set(train))
    lines = [
        "# UtilityWarning: precision and recall over the defaults matrix",
        "",
        f"Source: `{source}` (cells with the `utility_warning` field; private "
        "epsilons). A cell is positive when its median score over seeds is at "
        "or below the majority / constant rate plus "
        f"{MARGIN['accuracy']:g} (accuracy) or {MARGIN['r2']:g} (R^2). "
        "Relative definition (second line): positive when the cell gains less "
        f"than {RELATIVE:g} of scikit-learn's gain over that rate. Literal "
        "definition (third line, issue 25's wording): at or below the rate, "
        "no margin.",
        "",
        "Matrix commands (from the matrix file, run with "
        "`DPESTIM_BENCH_RESULTS` set to a scratch directory): "
        + "; ".join(
            f"`{c}`" for c in (matrix_meta or {}).get("commands", []) or ["unknown"]
        )
        + f" (commit {(matrix_meta or {}).get('commit', 'unknown')}).",
        "",
        "## The current warning",
        "",
        "| subset | cells | positives | warned | precision | recall |",
        "|---|---|---|---|---|---|",
    ]

    def row(name, sub, key="warned"):
        s = precision_recall(sub, key)
        return (
            f"| {name} | {s['cells']} | {s['positives']} | {s['warned']} | "
            f"{_fmt(s['precision'])} | {_fmt(s['recall'])} |"
        )

    lines.append(row("**all**", rows))
    for name, truth in (
        ("relative definition", "positive_relative"),
        ("at or below the rate (literal)", "positive_literal"),
    ):
        s = precision_recall(rows, truth=truth)
        lines.append(
            f"| all, {name} | {s['cells']} | {s['positives']} | "
            f"{s['warned']} | {_fmt(s['precision'])} | {_fmt(s['recall'])} |"
        )
    for est in sorted({r["estimator"] for r in rows}):
        lines.append(row(est, [r for r in rows if r["estimator"] == est]))
    for fam in sorted({r["family"] for r in rows}):
        lines.append(row(fam, [r for r in rows if r["family"] == fam]))
    for ds in sorted({r["dataset"] for r in rows}):
        lines.append(row(f"dataset {ds}", [r for r in rows if r["dataset"] == ds]))
    if sweep:
        lines += [
            "",
            "## The utility check's rule: warn when lift < 0.01 + z b",
            "",
            "`lift`: each classifier fit's private release (its Laplace scale "
            "`b` public); `z` chosen by F1 on the train datasets "
            f"({', '.join(train)}); the library's `CHECK_CONFIDENCE` is the "
            "verdict above.",
            "",
            "| z | train precision | train recall | train F1 | held-out "
            "precision | held-out recall |",
            "|---|---|---|---|---|---|",
        ]
        for z, parts in sweep.items():
            tr, ho = parts["train"], parts["held out"]
            lines.append(
                f"| {z:g} | {_fmt(tr['precision'])} | {_fmt(tr['recall'])} | "
                f"{_f1(tr):.2f} | {_fmt(ho['precision'])} | {_fmt(ho['recall'])} |"
            )
    lines += [
        "",
        "## A candidate rule: warn when epsilon n / D < t(family)",
        "",
        "`n` training rows, `D` = outputs x (features + 1); thresholds chosen "
        f"(best F1) on {', '.join(train)}; held out: {', '.join(held)}.",
        "",
        "| family | threshold t |",
        "|---|---|",
        *[f"| {f} | {t:.4g} |" for f, t in thresholds.items()],
        "",
        "| subset | cells | positives | warned | precision | recall |",
        "|---|---|---|---|---|---|",
        row("train (rule)", [r for r in rows if r["dataset"] in train], "rule"),
        row("held out (rule)", [r for r in rows if r["dataset"] not in train], "rule"),
        row(
            "held out (current warning)",
            [r for r in rows if r["dataset"] not in train],
        ),
        row("leave one dataset out (rule)", rows, "lodo"),
        row(
            f"leave one dataset out (rule, or minority share < {MINORITY:g})",
            rows,
            "lodo+imbalance",
        ),
        row(
            f"current warning, or minority share < {MINORITY:g}",
            [dict(r, w=r["warned"] or r["imbalanced"]) for r in rows],
            "w",
        ),
    ]
    for est in sorted({r["estimator"] for r in rows}):
        sub = [r for r in rows if r["dataset"] not in train and r["estimator"] == est]
        lines.append(row(f"held out, {est} (rule)", sub, "rule"))
    pair = ("german", "breast_cancer")
    if all(any(r["dataset"] == ds for r in rows) for ds in pair):
        lines += [
            "",
            "## Why a rule on public quantities cannot separate the cells",
            "",
            "German credit and breast cancer have nearly the same public "
            "quantities (n, d, so epsilon n / D) and opposite outcomes: any "
            "rule on them warns on both or on neither.",
            "",
            "| epsilon | "
            + " | ".join(f"{ds}: eps n / D, positive cells" for ds in pair)
            + " |",
            "|---|---|---|",
        ]
        for eps in sorted({r["epsilon"] for r in rows}):
            cols = []
            for ds in pair:
                sub = [r for r in rows if r["dataset"] == ds and r["epsilon"] == eps]
                if not sub:
                    cols.append("")
                    continue
                pos = sum(r["positive"] for r in sub)
                cols.append(
                    f"{sub[0]['budget_per_coordinate']:.1f}, {pos} of {len(sub)}"
                )
            lines.append(f"| {eps:g} | " + " | ".join(cols) + " |")
    lines += [
        "",
        "## Misses of the current warning",
        "",
        "False negatives (useless, not warned) and false positives (warned, useful):",
        "",
        "| kind | estimator | solver | dataset | epsilon | score | base |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        kind = (
            "FN"
            if r["positive"] and not r["warned"]
            else "FP"
            if r["warned"] and not r["positive"]
            else None
        )
        if kind:
            lines.append(
                f"| {kind} | {r['estimator']} | {r['solver']} | {r['dataset']} | "
                f"{r['epsilon']:g} | {r['score']:.3f} | {r['base']:.3f} |"
            )
    return "\n".join(lines) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--matrix", default=str(RESULTS / "defaults.json"))
    p.add_argument("--train", nargs="+", default=TRAIN)
    p.add_argument(
        "--no-rescore",
        action="store_true",
        help="read the recorded warnings (no verdict recomputed from lift)",
    )
    args = p.parse_args()
    if not Path(args.matrix).exists():
        print(f"{args.matrix}: no defaults matrix; run benchmarks/utility/defaults.py")
        return
    matrix = json.loads(Path(args.matrix).read_text())
    records = matrix["records"]
    if not cells(records):
        print(
            f"{args.matrix}: no record has the utility_warning field; run "
            "benchmarks/utility/defaults.py into a scratch results dir first"
        )
        return
    shapes = {ds: _shape(ds) for ds in sorted({r["dataset"] for r in cells(records)})}
    sweep = {}
    if any("lift" in r for r in records):
        for z in Z_GRID:
            zrows = cells(rescore(records, shapes, z))
            sweep[z] = {
                part: precision_recall(
                    [
                        r
                        for r in zrows
                        if (r["dataset"] in args.train) is (part == "train")
                    ]
                )
                for part in ("train", "held out")
            }
    if not args.no_rescore:
        records = rescore(records, shapes)
    rows = cells(records)
    leave_one_out(rows, shapes)
    thresholds = fit_rule(rows, shapes, args.train)
    overall = precision_recall(rows)
    text = report(rows, thresholds, args.train, args.matrix, matrix.get("meta"), sweep)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "utility_warning.md").write_text(text)
    (RESULTS / "utility_warning.json").write_text(
        json.dumps(
            dict(
                meta=dict(
                    source=args.matrix,
                    command=" ".join(["python", *sys.argv]),
                    matrix_commands=matrix.get("meta", {}).get("commands", []),
                    matrix_commit=matrix.get("meta", {}).get("commit"),
                    margin=MARGIN,
                    train=args.train,
                    shapes=shapes,
                ),
                overall=overall,
                overall_relative=precision_recall(rows, truth="positive_relative"),
                thresholds=thresholds,
                held_out_rule=precision_recall(
                    [r for r in rows if r["dataset"] not in args.train], "rule"
                ),
                leave_one_dataset_out_rule=precision_recall(rows, "lodo"),
                leave_one_dataset_out_rule_imbalance=precision_recall(
                    rows, "lodo+imbalance"
                ),
                cells=rows,
            ),
            indent=1,
        )
    )
    print(text)


if __name__ == "__main__":
    main()
