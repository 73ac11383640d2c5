"""Generate the solver guide's decision table and privacy-utility figure.

Reads results in the defaults-benchmark schema (``benchmarks/results/
defaults.json``: ``{"meta": {...}, "records": [{"estimator", "solver",
"dataset", "epsilon" (number or "inf"), "seed", "metric", "score",
"fit_cpu_s"}, ...]}``) and writes

* ``doc/solver_guide/table.rst``: which solver to use (best median score for
  each DP notion, dataset and epsilon), and one row per solver with its DP
  notion, losses, median score at each epsilon and fit CPU time;
* ``doc/solver_guide/privacy_utility_<Estimator>.png``: score against
  epsilon, one figure per estimator (a panel per dataset), beside
  scikit-learn and the trivial baseline: a colour per solver family (shades
  and markers within it), solid lines and filled markers for (epsilon,
  delta)-DP, dashed lines and hollow markers for pure DP.

``doc/solvers.rst`` includes them. Run from the repository root::

    PYTHONPATH=. python benchmarks/utility/solver_guide.py \\
        [--results benchmarks/results/defaults.json] [--out doc/solver_guide]
"""

import argparse
import json
import math
import statistics
from pathlib import Path

from dpestim.solvers import SOLVERS

GUIDE_EPSILONS = (0.5, 1.0, 2.0)
BASELINES = {"sklearn", "majority", "constant"}
#: Non-private references that are not a baseline of every solver (the optimum
#: of dp-smd-sco's l1-ball problem): left out of the figures.
REFERENCES = {"sklearn-l1ball"}
_DATASET_ORDER = ("adult", "mnist", "california")


def _eps(value):
    return math.inf if value in ("inf", None) else float(value)


def load(path):
    """``(meta, records)`` of a results file, epsilons as floats."""
    with open(path) as f:
        raw = json.load(f)
    records = [dict(r, epsilon=_eps(r["epsilon"])) for r in raw["records"]]
    return raw.get("meta", {}), records


def _dataset_key(name):
    low = name.lower()
    for i, prefix in enumerate(_DATASET_ORDER):
        if low.startswith(prefix):
            return (i, low)
    return (len(_DATASET_ORDER), low)


def medians(records):
    """``{(estimator, dataset, solver, epsilon): (median score, median CPU s, n)}``."""
    groups = {}
    for r in records:
        key = (r["estimator"], r["dataset"], r["solver"], r["epsilon"])
        groups.setdefault(key, []).append(r)
    return {
        key: (
            statistics.median(r["score"] for r in rs),
            statistics.median(r["fit_cpu_s"] for r in rs),
            len(rs),
        )
        for key, rs in groups.items()
    }


def _notion(solver):
    if solver in BASELINES:
        return "non-private"
    cls = SOLVERS.get(solver)
    if cls is None:
        return "?"
    return "pure" if cls.privacy_notion == "pure" else "approx"


_ESTIMATOR_ORDER = ("LogisticRegression", "LinearSVC", "Ridge")


def _tasks(med):
    """``(estimator, dataset)`` pairs in guide order (Adult, MNIST, California)."""
    pairs = {(e, d) for e, d, _, _ in med}

    def key(pair):
        est, data = pair
        rank = _ESTIMATOR_ORDER.index(est) if est in _ESTIMATOR_ORDER else 9
        return (_dataset_key(data), rank, est)

    return sorted(pairs, key=key)


def _metric(records, task):
    for r in records:
        if (r["estimator"], r["dataset"]) == task:
            return "R^2" if r["metric"] == "r2" else r["metric"]
    return "score"


def best_solvers(med, task, notion, epsilon):
    """Private solvers of ``notion`` ranked by median score on ``task``."""
    ranked = [
        (score, solver)
        for (e, d, solver, eps), (score, _, _) in med.items()
        if (e, d) == task and eps == epsilon and _notion(solver) == notion
    ]
    return [solver for _, solver in sorted(ranked, key=lambda t: -t[0])]


_ALL_LOSSES = ("logistic", "multinomial", "squared", "hinge", "squared_hinge")


def _losses(cls):
    """``all``, or the losses (estimators) a solver cannot fit."""
    if cls is None:
        return "?"
    missing = [loss for loss in _ALL_LOSSES if loss not in cls.supported_losses]
    return "all" if not missing else "all but " + ", ".join(missing)


def _fmt(value):
    if value is None:
        return ""
    text = f"{value:.3f}"
    return "0.000" if text == "-0.000" else text


def _list_table(title, header, rows, widths=None):
    lines = [f".. list-table:: {title}", "   :header-rows: 1"]
    if widths:
        lines.append(f"   :widths: {' '.join(str(w) for w in widths)}")
    lines.append("")
    for row in [header] + rows:
        lines.append(f"   * - {row[0]}")
        lines.extend(f"     - {cell}" for cell in row[1:])
    return "\n".join(lines) + "\n"


def _eps_label(eps):
    return "inf" if math.isinf(eps) else f"{eps:g}"


def decision_table(meta, records):
    """The reStructuredText of the guide's two tables."""
    med = medians(records)
    tasks = _tasks(med)
    header = ["you need"] + [f"{d} ({e}, {_metric(records, (e, d))})" for e, d in tasks]
    rows = []
    for notion, label in (("approx", "(epsilon, delta)-DP"), ("pure", "pure DP")):
        for eps in GUIDE_EPSILONS:
            cells = [f"{label}, epsilon = {eps:g}"]
            for task in tasks:
                ranked = best_solvers(med, task, notion, eps)
                if not ranked:
                    cells.append("(not run)")
                    continue
                score = med[(*task, ranked[0], eps)][0]
                cells.append(f"**{ranked[0]}** ({score:.3f})")
            rows.append(cells)
    base = []
    for solver, label in (
        ("sklearn", "scikit-learn, not private"),
        ("majority", "trivial baseline"),
        ("constant", "trivial baseline"),
    ):
        cells = [label]
        found = False
        for task in tasks:
            hit = med.get((*task, solver, math.inf))
            found |= hit is not None
            cells.append(_fmt(hit[0]) if hit else "")
        if found:
            base.append(cells)
    merged = {}
    for cells in base:  # majority (classification) and constant (regression)
        row = merged.setdefault(cells[0], cells)
        for i, c in enumerate(cells[1:], 1):
            row[i] = row[i] or c
    rows.extend(merged.values())
    source = meta.get("command", "see benchmarks/results")
    n_seeds = max((n for _, _, n in med.values()), default=0)
    out = [
        _list_table(
            f"Best solver for each guarantee (median test score over up to {n_seeds} "
            "seeds)",
            header,
            rows,
        ),
        "",
    ]
    eps_cols = [_eps_label(e) for e in GUIDE_EPSILONS]
    header = ["solver", "DP", "losses"] + [
        f"{d} ({e}): eps {'/'.join(eps_cols)}" for e, d in tasks
    ]
    header.append("CPU s / fit")
    rows = []
    solvers = sorted(
        {s for (_, _, s, _) in med if s not in BASELINES},
        key=lambda s: (_notion(s) != "approx", s),
    )
    for solver in solvers:
        cls = SOLVERS.get(solver)
        cells = [
            f"``{solver}``",
            {"pure": "pure", "approx": "approx."}.get(_notion(solver), "?"),
            _losses(cls),
        ]
        cpu = []
        for task in tasks:
            vals = []
            for eps in GUIDE_EPSILONS:
                hit = med.get((*task, solver, eps))
                vals.append(_fmt(hit[0]) if hit else "-")
                if hit:
                    cpu.append(hit[1])
            cells.append(" / ".join(vals))
        cells.append(f"{statistics.median(cpu):.2f}" if cpu else "-")
        rows.append(cells)
    out.append(
        _list_table(
            "Every solver: median test score at epsilon "
            f"{', '.join(eps_cols)} (delta = 1e-5 where it applies)",
            header,
            rows,
        )
    )
    out.append(
        f"\n*Generated by* ``benchmarks/utility/solver_guide.py`` *from* ``{source}`` "
        f"*({meta.get('date', 'undated')}).*\n"
    )
    return "\n".join(out)


def plot_rows(records):
    """Median rows in the shape :func:`dpestim._demo.plot` draws."""
    med = medians(records)
    rows = []
    for (est, dataset, solver, eps), (score, cpu, _n) in med.items():
        if solver in BASELINES and not math.isinf(eps):
            continue
        if not (math.isinf(eps) or eps in GUIDE_EPSILONS):
            continue
        rows.append(
            dict(
                estimator=est,
                dataset=dataset,
                solver="scikit-learn" if solver == "sklearn" else solver,
                notion=_notion(solver),
                target_epsilon=eps,
                metric=_metric(records, (est, dataset)),
                score=score,
                seconds=cpu,
            )
        )
    order = {task: i for i, task in enumerate(_tasks(med))}
    rows.sort(
        key=lambda r: (
            order[(r["estimator"], r["dataset"])],
            r["notion"] == "non-private",
            r["notion"] != "approx",
            r["solver"],
            r["target_epsilon"],
        )
    )
    return rows


#: Solver families (the subpackages of ``dpestim.solvers``), one hue each;
#: within a family a shade and a marker per solver.
FAMILIES = {
    "DP-SGD (Poisson, Gaussian)": (
        ("dp-sgd", "#08306b", "o"),
        ("dp-lssgd", "#2171b5", "s"),
        ("adp-sgd", "#4292c6", "^"),
        ("adp-adagrad", "#6baed6", "D"),
    ),
    "coordinate descent (Gaussian)": (
        ("dp-scd", "#006d2c", "o"),
        ("seq-dp-scd", "#41ab5d", "s"),
    ),
    "accelerated full batch (Laplace)": (
        ("dp-gd", "#7f2704", "o"),
        ("dp-hb", "#a63603", "s"),
        ("dp-nag", "#d94801", "^"),
        ("dp-nag-opt", "#f16913", "D"),
        ("dp-masg", "#fd8d3c", "v"),
        ("dp-masg-opt", "#e31a1c", "P"),
    ),
    "saddle point (exp. mechanism)": (("dp-smd-sco", "#6a3d9a", "o"),),
    "one-shot (Gaussian)": (
        ("adassp", "#c51b7d", "o"),
        ("objective-perturbation", "#de77ae", "s"),
    ),
    "solver='auto' (the default)": (("auto", "#000000", "*"),),
}
_OTHER = ("#555555", "X")


def _style(solver):
    for family, members in FAMILIES.items():
        for name, colour, marker in members:
            if name == solver:
                return family, colour, marker
    return "other", *_OTHER


def plot_estimators(rows, out):
    """One PNG per estimator, a panel per dataset; returns the paths.

    ``rows`` as from :func:`plot_rows`. A colour family per solver family;
    (epsilon, delta)-DP solid with filled markers, pure DP (Laplace or
    exponential mechanism, delta = 0) dashed with hollow markers; the
    non-private limit (epsilon = inf) is drawn apart on the right.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    rows = [r for r in rows if r["solver"] not in REFERENCES]
    finite = sorted({r["target_epsilon"] for r in rows} - {math.inf})
    x_inf = finite[-1] * 2.2 if finite else 1.0
    paths = []
    for est in dict.fromkeys(r["estimator"] for r in rows):
        sel = [r for r in rows if r["estimator"] == est]
        datasets = list(dict.fromkeys(r["dataset"] for r in sel))
        fig, axes = plt.subplots(
            1,
            len(datasets),
            figsize=(4.4 * len(datasets) + 3.0, 4.2),
            squeeze=False,
            layout="constrained",
        )
        present = set()
        for ax, dataset in zip(axes[0], datasets):
            cell = [r for r in sel if r["dataset"] == dataset]
            for solver in dict.fromkeys(r["solver"] for r in cell):
                pts = sorted(
                    (r["target_epsilon"], r["score"], r["notion"])
                    for r in cell
                    if r["solver"] == solver
                )
                notion = pts[0][2]
                if notion == "non-private":
                    grey = solver != "scikit-learn"
                    ax.axhline(
                        pts[-1][1],
                        color="0.55" if grey else "black",
                        ls=":" if grey else "-.",
                        lw=1.3,
                    )
                    present.add(solver)
                    continue
                _, colour, marker = _style(solver)
                pure = notion == "pure"
                style = dict(
                    color=colour,
                    marker=marker,
                    ms=6,
                    mew=1.4,
                    mfc="white" if pure else colour,
                )
                xs = [e for e, _, _ in pts if not math.isinf(e)]
                ys = [s for e, s, _ in pts if not math.isinf(e)]
                ax.plot(xs, ys, ls="--" if pure else "-", lw=1.6, **style)
                ax.plot(
                    [x_inf for e, _, _ in pts if math.isinf(e)],
                    [s for e, s, _ in pts if math.isinf(e)],
                    ls="none",
                    **style,
                )
                present.add(solver)
            ax.set_xscale("log")
            ax.set_xticks(finite + [x_inf])
            ax.set_xticklabels([f"{e:g}" for e in finite] + ["inf"])
            ax.minorticks_off()
            ax.axvspan(finite[-1] * 1.45, x_inf * 1.3, color="0.93", zorder=0)
            ax.set_xlim(finite[0] / 1.3, x_inf * 1.3)
            ax.set_xlabel("epsilon (delta = 1e-5 for approx. DP; inf: no noise)")
            ax.set_ylabel(f"test {cell[0]['metric']}")
            ax.set_title(f"{est} on {dataset}", fontsize=10)
            ax.grid(alpha=0.3)
        handles = []
        for family, members in FAMILIES.items():
            shown = [m for m in members if m[0] in present]
            if not shown:
                continue
            handles.append(Line2D([], [], ls="none", label=family))
            for name, colour, marker in shown:
                pure = name in SOLVERS and SOLVERS[name].privacy_notion == "pure"
                handles.append(
                    Line2D(
                        [],
                        [],
                        color=colour,
                        marker=marker,
                        ms=6,
                        mew=1.4,
                        mfc="white" if pure else colour,
                        ls="--" if pure else "-",
                        label=f"  {name} ({'pure DP' if pure else 'approx. DP'})",
                    )
                )
        handles.append(Line2D([], [], ls="none", label="non-private"))
        if "scikit-learn" in present:
            handles.append(
                Line2D([], [], color="black", ls="-.", label="  scikit-learn")
            )
        for name, label in (
            ("majority", "majority class"),
            ("constant", "training mean"),
        ):
            if name in present:
                handles.append(Line2D([], [], color="0.55", ls=":", label=f"  {label}"))
        fig.legend(
            handles=handles,
            loc="outside right upper",
            fontsize=8,
            frameon=False,
            handlelength=3.0,
        )
        path = Path(out) / f"privacy_utility_{est}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    return paths


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", default="benchmarks/results/defaults.json")
    parser.add_argument("--out", default="doc/solver_guide")
    parser.add_argument(
        "--datasets",
        nargs="+",
        default=list(_DATASET_ORDER),
        help="dataset name prefixes to keep (default: the guide's one screen: "
        "%(default)s); 'all' keeps every dataset of the results file",
    )
    args = parser.parse_args(argv)
    meta, records = load(args.results)
    if "all" not in args.datasets:
        keep = tuple(name.lower() for name in args.datasets)
        records = [r for r in records if r["dataset"].lower().startswith(keep)]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "table.rst").write_text(decision_table(meta, records))
    figures = plot_estimators(plot_rows(records), out)
    print(f"wrote {out / 'table.rst'} and", ", ".join(str(p) for p in figures))


if __name__ == "__main__":
    main()
