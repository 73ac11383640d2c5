"""Budget across fits: dpestim's composition against diffprivlib's.

The same sequences of real fits (dp-sgd LogisticRegression on Adult) run
inside a :class:`dpestim.model_selection.PrivacyBudget`, which composes their
``DpEvent`` s with dp-accounting (RDP, and PLD). diffprivlib's
``BudgetAccountant`` composes (epsilon, delta) pairs only: it is given each
fit's own guarantee and composes them by the basic theorem (``slack=0``) or by
its advanced composition (Kairouz et al., ``slack > 0``). For a fair
comparison at the same total delta, each fit's epsilon is taken at
``delta_i = delta / (2 k)`` (dp-accounting's value for that fit) and
diffprivlib's slack is ``delta / 2``, so that both totals hold at ``delta``.

Sequences: (a) ``GridSearchCV`` of 3 candidates x 5 folds + refit, each fit
at epsilon 0.1; (b) ``cross_val_score`` 5 folds at epsilon 1; (c) 50 fits at
epsilon 0.05 (a large search).

diffprivlib is not a dependency of dpestim; install it to run this script.
Only its accountant is imported (its models do not import with recent
scikit-learn).

Usage::

    PYTHONPATH=. nice -n 10 python benchmarks/utility/budget_composition.py

Writes ``benchmarks/results/budget_composition.{json,md}``.
"""

import importlib.util
import json
import os
import sys
import time
import types
from pathlib import Path

from dp_accounting import ComposedDpEvent
from sklearn.model_selection import GridSearchCV, cross_val_score

from dpestim import LogisticRegression
from dpestim.datasets import load_adult
from dpestim.model_selection import PrivacyBudget
from dpestim.privacy import compute_epsilon

RESULTS = Path(
    os.environ.get("DPESTIM_BENCH_RESULTS")
    or Path(__file__).resolve().parents[1] / "results"
)
DELTA = 1e-5


def diffprivlib_accountant():
    """``diffprivlib.accountant.BudgetAccountant`` without the package's models."""
    if "diffprivlib" not in sys.modules:
        spec = importlib.util.find_spec("diffprivlib")
        if spec is None:
            sys.exit("diffprivlib is not installed: pip install diffprivlib")
        pkg = types.ModuleType("diffprivlib")
        pkg.__path__ = list(spec.submodule_search_locations)
        sys.modules["diffprivlib"] = pkg
    from diffprivlib.accountant import BudgetAccountant

    version = "unknown"
    try:
        from importlib.metadata import version as _v

        version = _v("diffprivlib")
    except Exception:  # pragma: no cover
        pass
    return BudgetAccountant, version


def lr(eps, seed=0, **kw):
    return LogisticRegression(
        epsilon=eps, delta=DELTA, classes=[0, 1], random_state=seed, **kw
    )


def run_sequence(name, fn, X, y):
    w, c = time.perf_counter(), time.process_time()
    budget = PrivacyBudget(1e6, DELTA)
    with budget:
        fn(X, y)
    events = [r[0] for r in budget.records]
    k = len(events)
    eps_pld = compute_epsilon(ComposedDpEvent(events), DELTA, "pld")
    BudgetAccountant, _ = diffprivlib_accountant()
    per_fit = [compute_epsilon(e, DELTA / (2 * k)) for e in events]
    basic = BudgetAccountant()
    advanced = BudgetAccountant(slack=DELTA / 2)
    own = BudgetAccountant()
    for e, eps_i in zip(events, per_fit):
        basic.spend(eps_i, DELTA / (2 * k))
        advanced.spend(eps_i, DELTA / (2 * k))
        own.spend(compute_epsilon(e, DELTA), DELTA)
    row = dict(
        sequence=name,
        n_fits=k,
        dpestim_rdp=budget.spent()[0],
        dpestim_pld=eps_pld,
        diffprivlib_basic=basic.total()[0],
        diffprivlib_advanced=advanced.total(slack=DELTA / 2)[0],
        diffprivlib_advanced_delta=advanced.total(slack=DELTA / 2)[1],
        diffprivlib_own_pairs=own.total()[0],
        diffprivlib_own_pairs_delta=own.total()[1],
        wall_s=time.perf_counter() - w,
        cpu_s=time.process_time() - c,
    )
    print(row, flush=True)
    return row


def main():
    b = load_adult()
    X, y = b.data, b.target
    sequences = {
        "GridSearchCV 3 x 5 folds + refit, eps 0.1 each": lambda X, y: GridSearchCV(
            lr(0.1), {"learning_rate": [0.25, 0.5, 1.0]}, cv=5
        ).fit(X, y),
        "cross_val_score 5 folds, eps 1 each": lambda X, y: cross_val_score(
            lr(1.0), X, y, cv=5
        ),
        "50 fits, eps 0.05 each": lambda X, y: [
            lr(0.05, seed=s).fit(X, y) for s in range(50)
        ],
    }
    rows = [run_sequence(name, fn, X, y) for name, fn in sequences.items()]
    _, version = diffprivlib_accountant()
    meta = dict(
        command=" ".join(sys.argv),
        date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        delta=DELTA,
        diffprivlib=version,
    )
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "budget_composition.json").write_text(
        json.dumps({"meta": meta, "records": rows}, indent=1)
    )
    lines = [
        f"Command: `{meta['command']}` ({meta['date']}); diffprivlib {version}. "
        f"Total epsilon at delta = {DELTA:g} of the same fits.",
        "",
        "| sequence | fits | dpestim RDP | dpestim PLD | diffprivlib basic | "
        "diffprivlib advanced | ratio diffprivlib best / dpestim best | "
        "wall s (CPU s) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        ours = min(r["dpestim_rdp"], r["dpestim_pld"])
        theirs = min(r["diffprivlib_basic"], r["diffprivlib_advanced"])
        lines.append(
            f"| {r['sequence']} | {r['n_fits']} | {r['dpestim_rdp']:.3f} | "
            f"{r['dpestim_pld']:.3f} | {r['diffprivlib_basic']:.3f} | "
            f"{r['diffprivlib_advanced']:.3f} | {theirs / ours:.2f} | "
            f"{r['wall_s']:.0f} ({r['cpu_s']:.0f}) |"
        )
    lines.append("")
    lines.append(
        "diffprivlib given each fit's own (epsilon_, 1e-5) and no slack (what a "
        "user would type): "
        + "; ".join(
            f"{r['sequence']}: epsilon {r['diffprivlib_own_pairs']:.3f} at delta "
            f"{r['diffprivlib_own_pairs_delta']:.2g}"
            for r in rows
        )
    )
    text = "\n".join(lines) + "\n"
    (RESULTS / "budget_composition.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
