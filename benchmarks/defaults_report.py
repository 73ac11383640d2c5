"""The markdown report of the defaults matrix (``benchmarks/results/defaults.md``).

Median tables (one per estimator and dataset, with the commit each row was
measured on), then every cell that misses a target of issue 14 **with its
reason**, then every cell of the matrix that was not run. Used by
``benchmarks/defaults.py``; the reasons are the measured explanations of the
result notes (``REASONS`` below, first matching rule wins; a miss that no rule
explains is printed as "reason not established").

Targets checked (issue 14): at epsilon = inf within 1 accuracy point (0.02
R^2) of scikit-learn (item 3); at epsilon >= 0.5 strictly above the
majority / constant baseline (item 4, "Done when"); R^2 >= -0.1 on California
at every epsilon (item 2); on Adult at epsilon = 1, >= 0.835 for a Gaussian
solver and >= 0.80 for a pure-DP one (item 4).
"""

from collections import defaultdict

import numpy as np

EPS_LABELS = ["0.1", "0.5", "1.0", "2.0", "inf"]

#: Label of records written before runs were stamped with a commit.
LEGACY = "s1"
LEGACY_TEXT = (
    "first session: branch issue14 between f972a6d and d8de184, before main's "
    "issue 17/18 changes (counter-based Poisson sampler, float32 kernel, "
    "calibration); not rerun since"
)

#: Kinds of miss: non-private limit, at/below baseline, California R^2, Adult.
LIMIT, BASELINE, R2, ADULT = "limit", "baseline", "r2", "adult"

#: ``(kind, estimator, dataset, solvers, epsilons) -> reason``; ``None``
#: matches anything; first match wins. Filled from the measured explanations
#: of the result notes (see BENCHMARKS.md, "Defaults").
REASONS = []


def _match(rule, kind, est, d, s, e):
    r_kind, r_est, r_d, r_s, r_e = rule
    return (
        (r_kind is None or kind in _as_set(r_kind))
        and (r_est is None or est in _as_set(r_est))
        and (r_d is None or d in _as_set(r_d))
        and (r_s is None or s in _as_set(r_s))
        and (r_e is None or e in _as_set(r_e))
    )


def _as_set(x):
    return {x} if isinstance(x, str) else set(x)


def reason(kind, est, d, s, e):
    for rule, text in REASONS:
        if _match(rule, kind, est, d, s, e):
            return text
    return "reason not established"


def medians(records):
    """``{(estimator, dataset, solver, epsilon): median score}``."""
    groups = defaultdict(list)
    for r in records:
        groups[(r["estimator"], r["dataset"], r["solver"], str(r["epsilon"]))].append(
            r["score"]
        )
    return {k: float(np.nanmedian(v)) for k, v in groups.items()}


def _provenance(records):
    """``{(estimator, dataset, solver, epsilon): set of commit labels}``."""
    out = defaultdict(set)
    for r in records:
        key = (r["estimator"], r["dataset"], r["solver"], str(r["epsilon"]))
        out[key].add(r.get("commit", LEGACY))
    return out


def _row_commits(prov, est, d, s):
    """``"abc (0.1-2.0), s1 (inf)"``: which commit measured which epsilons."""
    by_label = defaultdict(list)
    for e in EPS_LABELS:
        labels = prov.get((est, d, s, e))
        if labels:
            by_label["+".join(sorted(labels))].append(e)
    if len(by_label) == 1:
        return next(iter(by_label))
    return ", ".join(f"{lab} ({_eps_range(es)})" for lab, es in by_label.items())


def _eps_range(es):
    return es[0] if len(es) == 1 else f"{es[0]}-{es[-1]}"


def misses(est, d, s, e, v, sk, base, base_name):
    """``[(kind, text)]``: the targets the median ``v`` of a cell misses."""
    out = []
    regression = est == "Ridge"
    if e == "inf" and v < sk - (0.02 if regression else 0.01):
        out.append((LIMIT, f"{v:.4f} vs scikit-learn {sk:.4f} (non-private limit)"))
    if (e == "inf" or float(e) >= 0.5) and v <= base + 1e-9:
        out.append((BASELINE, f"{v:.4f} <= {base_name} {base:.4f}"))
    if d == "california" and v < -0.1:
        out.append((R2, f"R^2 {v:.4f} < -0.1"))
    if d == "adult" and e == "1.0":
        from dpestim.solvers import SOLVERS

        target = 0.80 if SOLVERS[s].privacy_notion == "pure" else 0.835
        if v < target:
            out.append((ADULT, f"{v:.4f} < target {target}"))
    return out


def summary(records, matrix, families, datasets, meta=None):
    """Markdown text and the list of missed cells.

    ``matrix`` is ``[(estimator, dataset, solver)]``, every cell the full
    matrix should hold (for the "not run" list).
    """
    med = medians(records)
    prov = _provenance(records)
    seeds = defaultdict(set)
    for r in records:
        seeds[(r["estimator"], r["dataset"], r["solver"])].add(r["seed"])
    order = [s for fam in families.values() for s in fam]
    lines, missed = [], []
    for est in ("LogisticRegression", "LinearSVC", "Ridge"):
        for d in datasets:
            if (est, d, "sklearn", "inf") not in med:
                continue
            base_name = "constant" if est == "Ridge" else "majority"
            sk = med[(est, d, "sklearn", "inf")]
            base = med[(est, d, base_name, "inf")]
            lines += [
                f"**{est} on {d}** (scikit-learn {sk:.4f}, {base_name} {base:.4f}; "
                f"baselines measured on {_row_commits(prov, est, d, 'sklearn')})",
                "",
                "| solver | "
                + " | ".join(f"eps={e}" for e in EPS_LABELS)
                + " | measured on |",
                "|---|" + "---|" * (len(EPS_LABELS) + 1),
            ]
            for s in order:
                if (est, d, s) not in matrix:
                    continue
                row = []
                for e in EPS_LABELS:
                    v = med.get((est, d, s, e))
                    row.append("not run" if v is None else f"{v:.4f}")
                    if v is None:
                        continue
                    for kind, text in misses(est, d, s, e, v, sk, base, base_name):
                        missed.append(
                            f"{est} {d} {s} eps={e}: {text}. "
                            f"*{reason(kind, est, d, s, e)}*"
                        )
                n_seeds = len(seeds[(est, d, s)])
                lines.append(
                    f"| {s} ({n_seeds}) | "
                    + " | ".join(row)
                    + f" | {_row_commits(prov, est, d, s) or '-'} |"
                )
            lines.append("")
    not_run = _not_run(med, matrix)
    labels = defaultdict(int)
    for r in records:
        labels[r.get("commit", LEGACY)] += 1
    head = [
        "# Defaults matrix (issue 14): every estimator x solver at its defaults",
        "",
        "Generated by `benchmarks/defaults.py` from `defaults.json`. Medians over "
        "seeds (number of seeds in brackets; full-batch solvers run once at "
        "eps=inf, where they are deterministic). Targets: eps=inf within 1 point "
        "(0.02 R^2) of scikit-learn; eps >= 0.5 strictly above the majority / "
        "constant rate; California R^2 >= -0.1; Adult at eps=1 >= 0.835 "
        "(Gaussian) / 0.80 (pure DP).",
        "",
        "**Measured on** (column of every table; a cell's seeds all come from "
        "one run):",
        "",
    ]
    for label, n in sorted(labels.items(), key=lambda kv: -kv[1]):
        text = LEGACY_TEXT if label == LEGACY else f"commit `{label}`"
        head.append(f"- `{label}`: {n} records; {text}")
    head.append("")
    if meta and meta.get("merged"):
        head.append(
            "Merged result files (in order; a file's cells replace older ones): "
            + ", ".join(f"`{m['file']}` ({m['cells']} cells)" for m in meta["merged"])
        )
        head.append("")
    tail = [
        f"## Cells that miss a target ({len(missed)})",
        "",
        *[f"- {m}" for m in missed],
        "",
        f"## Cells not run ({sum(len(v) for v in not_run.values())})",
        "",
        *[
            f"- {est} {d} {s}: eps {', '.join(es)}"
            for (est, d, s), es in not_run.items()
        ],
    ]
    return "\n".join(head + lines + tail) + "\n", missed


def _not_run(med, matrix):
    out = {}
    for est, d, s in matrix:
        missing = [e for e in EPS_LABELS if (est, d, s, e) not in med]
        if missing:
            out[(est, d, s)] = missing
    return out
