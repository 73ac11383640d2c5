"""Empirical privacy audit of every registered solver (the slow audit tier).

For every solver in ``dpestim.solvers.SOLVERS`` and every estimator whose
loss it supports, :func:`dpestim.audit.audit_estimator` trains the estimator
``2 * trials`` times on a tiny dataset with and without a Dirac ("gradient")
canary at a loose budget and computes a 95%-confidence lower bound on
epsilon. A correct solver must give a lower bound below the epsilon it
reports. The same audit runs on deliberately broken variants of dp-sgd
(``tests/audit/broken_solvers.py``: clipping removed, noise halved, shuffled
batches accounted as Poisson), which it should catch; the shuffled variant
is also checked by a participation-count test (noise-free fits), because a
final-model audit cannot see it (see BENCHMARKS.md).

Usage (from the repository root)::

    python benchmarks/audit_solvers.py                    # all solvers + broken
    python benchmarks/audit_solvers.py --solvers dp-sgd   # some solvers only
    python benchmarks/audit_solvers.py --quick            # smoke run
    python benchmarks/audit_solvers.py --no-broken --solvers dp-hb dp-scd

Results: ``benchmarks/results/audit.json``, ``audit.md`` and
``audit_table.rst`` (included by doc/privacy_statement.rst); with
``--solvers`` the new rows are merged into the existing files.
"""

import argparse
import json
import logging
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "audit")]

import numpy as np  # noqa: E402

from dpestim import LinearSVC, LogisticRegression, Ridge  # noqa: E402
from dpestim.audit import audit_estimator  # noqa: E402
from dpestim.solvers import SOLVERS  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
N, D = 60, 4
EPSILON, DELTA = 2.0, 1e-2


def audit_data(seed=0):
    """Tiny dataset: D informative features and one all-zero column."""
    rng = np.random.default_rng(seed)
    X = np.hstack([rng.normal(size=(N, D)) / (2 * np.sqrt(D)), np.zeros((N, 1))])
    y_class = (X[:, 0] + 0.1 * rng.normal(size=N) > 0).astype(int)
    y_reg = X[:, 0] + 0.1 * rng.normal(size=N)
    return X, y_class, y_reg


_STRONGLY_CONVEX_ALPHA = 1e-2


def _needs_strong_convexity(solver):
    name = solver if isinstance(solver, str) else solver.name
    return name in {
        "dp-hb",
        "dp-nag",
        "dp-nag-opt",
        "dp-masg",
        "dp-masg-opt",
        "dp-scd",
        "seq-dp-scd",
    }


def estimators(solver, *, full_batch=False):
    """(label, estimator, target kind) for every loss the solver supports."""
    supported = (
        solver.supported_losses
        if not isinstance(solver, str)
        else SOLVERS[solver].supported_losses
    )
    common = dict(
        epsilon=EPSILON,
        delta=DELTA,
        solver=solver,
        max_iter=2,
        batch_size=10 * N if full_batch else 16,  # same n_steps for n and n + 1
        learning_rate=0.5,
        # Momentum solvers (step from public smoothness and strong convexity)
        # and dual coordinate descent (dual defined through alpha) need
        # alpha > 0; a small public penalty for them.
        alpha=_STRONGLY_CONVEX_ALPHA if _needs_strong_convexity(solver) else 0.0,
    )
    candidates = [
        ("LogisticRegression", LogisticRegression(classes=[0, 1], **common), "class"),
        (
            "LinearSVC(hinge)",
            LinearSVC(loss="hinge", classes=[0, 1], **common),
            "class",
        ),
        (
            "LinearSVC(squared_hinge)",
            LinearSVC(loss="squared_hinge", classes=[0, 1], **common),
            "class",
        ),
        ("Ridge", Ridge(**common), "reg"),
    ]
    return [c for c in candidates if c[1]._loss_name in supported]


def run_one(label, est, target, trials, seed):
    X, y_class, y_reg = audit_data()
    t0 = time.perf_counter()
    try:
        res = audit_estimator(
            est,
            X,
            y_class if target == "class" else y_reg,
            canary="gradient",
            n_trials=trials,
            random_state=seed,
        )
    except Exception as exc:  # recorded, so one failing solver does not stop the run
        return {"estimator": label, "error": f"{type(exc).__name__}: {exc}"}
    return {
        "estimator": label,
        "epsilon": res.epsilon,
        "delta": res.delta,
        "lower_bound": res.epsilon_lower_bound,
        "false_positives": res.false_positives,
        "false_negatives": res.false_negatives,
        "n_eval": res.n_eval,
        "trials": res.n_trials,
        "violation": res.violation,
        "seconds": time.perf_counter() - t0,
    }


def participation_test(solver, trials, seed):
    """Noise-free fits: does the canary's participation count vary as Poisson?

    With noise_multiplier=0, alpha=0 and a Dirac canary whose clipped
    gradient is always ``clip_norm`` (Ridge, huge target), the coefficient of
    the canary's feature is ``count * lr * c / (q n)``, so the number of steps
    the canary took part in is read off the released model. Under Poisson
    sampling it is Binomial(T, q); shuffled epochs give a constant.
    """
    X, _, y_reg = audit_data()
    est = Ridge(
        epsilon=None,
        noise_multiplier=0.0,
        solver=solver,
        max_iter=2,
        batch_size=N // 4,
        learning_rate=0.5,
        alpha=0.0,
        fit_intercept=False,
    )
    scale = 4.0
    x_c = np.zeros(D + 1)
    x_c[-1] = scale
    Xc = np.vstack([X, x_c])
    yc = np.append(y_reg, 1e6)
    n = N + 1
    q = min(1.0, est.batch_size / n)
    steps = int(np.ceil(est.max_iter / q - 1e-9))
    unit = est.learning_rate * 1.0 / (q * n)  # clip_norm = 1
    rng = np.random.default_rng(seed)
    counts = []
    for _ in range(trials):
        model = est.set_params(random_state=int(rng.integers(2**31))).fit(Xc, yc)
        counts.append(model.coef_[-1] / unit)
    counts = np.asarray(counts)
    expected_var = steps * q * (1 - q)
    return {
        "steps": steps,
        "q": q,
        "mean_count": float(counts.mean()),
        "var_count": float(counts.var(ddof=1)),
        "binomial_var": expected_var,
        # Var of a Binomial sample variance is small at these sizes: a ratio
        # below 0.5 is far outside its spread (thousands of sigma for 0).
        "poisson_consistent": bool(counts.var(ddof=1) > 0.5 * expected_var),
    }


def to_markdown(data):
    lines = [
        "# Privacy audit of the solvers",
        "",
        f"Dirac canary, n={N}+1, d={D}+1, epsilon={EPSILON}, delta={DELTA}, "
        "95% confidence (Clopper-Pearson), threshold chosen on half of the "
        "trials and the bound computed on the other half. batch: 16 is "
        "`batch_size=16` (q = 16/61 for dp-sgd; solvers without sampling, such "
        "as dp-gd, ignore it), full is `batch_size=600` (q = 1).",
        "",
        "| solver | estimator | batch | reported eps | lower bound | FP | FN | "
        "n_eval | verdict | s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in data["rows"]:
        if "error" in row:
            lines.append(
                f"| {row['solver']} | {row['estimator']} | {row['batch']} | | | | | "
                f"| error: {row['error'][:80]} | |"
            )
            continue
        verdict = "VIOLATION (caught)" if row["violation"] else "ok"
        lines.append(
            f"| {row['solver']} | {row['estimator']} | {row['batch']} | "
            f"{row['epsilon']:.3f} | {row['lower_bound']:.3f} | "
            f"{row['false_positives']} | {row['false_negatives']} | {row['n_eval']} "
            f"| {verdict} | {row['seconds']:.0f} |"
        )
    if data.get("participation"):
        lines += [
            "",
            "## Participation counts (noise-free fits, Ridge, q = 15/61)",
            "",
            "| solver | steps | mean count | variance | Binomial variance | "
            "Poisson-consistent |",
            "|---|---|---|---|---|---|",
        ]
        for name, p in data["participation"].items():
            lines.append(
                f"| {name} | {p['steps']} | {p['mean_count']:.3f} | "
                f"{p['var_count']:.3f} | {p['binomial_var']:.3f} | "
                f"{p['poisson_consistent']} |"
            )
    return "\n".join(lines) + "\n"


def to_rst(data):
    """The per-solver table included by doc/privacy_statement.rst."""
    lines = [
        ".. list-table::",
        "   :header-rows: 1",
        "",
        "   * - solver",
        "     - estimator",
        "     - batch",
        "     - reported epsilon",
        "     - lower bound",
        "     - FP / FN (of n_eval)",
        "     - verdict",
    ]
    for row in data["rows"]:
        if "error" in row:
            cells = [row["solver"], row["estimator"], row["batch"], "", "", "", "error"]
        else:
            cells = [
                row["solver"],
                row["estimator"],
                row["batch"],
                f"{row['epsilon']:.3f}",
                f"{row['lower_bound']:.3f}",
                f"{row['false_positives']} / {row['false_negatives']} "
                f"({row['n_eval']})",
                "violation (caught)" if row["violation"] else "ok",
            ]
        lines.append(f"   * - ``{cells[0]}``")
        lines += [f"     - {c}" for c in cells[1:]]
    return "\n".join(lines) + "\n"


def write_results(data):
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "audit.json").write_text(json.dumps(data, indent=1) + "\n")
    (RESULTS / "audit.md").write_text(to_markdown(data))
    (RESULTS / "audit_table.rst").write_text(to_rst(data))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--solvers", nargs="*", default=None)
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--broken-trials", type=int, default=4000)
    parser.add_argument("--no-broken", action="store_true")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--render-only",
        action="store_true",
        help="rewrite audit.md and audit_table.rst from audit.json",
    )
    args = parser.parse_args(argv)
    if args.render_only:
        write_results(json.loads((RESULTS / "audit.json").read_text()))
        return
    logging.getLogger("absl").setLevel(logging.ERROR)
    warnings.simplefilter("ignore")  # this script's process only
    if args.quick:
        args.trials, args.broken_trials = 200, 300
    names = sorted(SOLVERS) if args.solvers is None else args.solvers
    unknown = sorted(set(names) - set(SOLVERS))
    if unknown:
        parser.error(f"unknown solvers {unknown}; registered: {sorted(SOLVERS)}")

    out_json = RESULTS / "audit.json"
    data = {"rows": [], "participation": {}}
    if args.solvers is not None and out_json.exists():
        data = json.loads(out_json.read_text())
        keep = set(names) | (set() if args.no_broken else {"broken"})
        data["rows"] = [
            r
            for r in data["rows"]
            if r["solver"] not in names
            and not (r["solver"].startswith("broken") and "broken" in keep)
        ]
    t_start = time.perf_counter()
    jobs = []
    for name in names:
        for full in (False, True) if name == "dp-sgd" else (False,):
            for label, est, target in estimators(name, full_batch=full):
                jobs.append((name, label, est, target, args.trials, full))
    if not args.no_broken:
        from broken_solvers import BROKEN_SOLVERS

        for bname, cls in BROKEN_SOLVERS.items():
            for full in (False, True):
                for label, est, target in estimators(cls(), full_batch=full):
                    if label == "Ridge":
                        jobs.append(
                            (bname, label, est, target, args.broken_trials, full)
                        )
    for name, label, est, target, trials, full in jobs:
        row = run_one(label, est, target, trials, args.seed)
        row["solver"] = name
        row["batch"] = "full" if full else "16"
        print(json.dumps(row), flush=True)
        data["rows"].append(row)
    if not args.no_broken:
        from broken_solvers import ShuffledAsPoisson

        ptrials = 100 if args.quick else 400
        for pname, solver in (
            ("dp-sgd", "dp-sgd"),
            (
                ShuffledAsPoisson.name,
                ShuffledAsPoisson(),
            ),
        ):
            data["participation"][pname] = participation_test(
                solver, ptrials, args.seed
            )
            print(pname, data["participation"][pname], flush=True)
    data["config"] = {
        "n": N,
        "d": D,
        "epsilon": EPSILON,
        "delta": DELTA,
        "trials": args.trials,
        "broken_trials": args.broken_trials,
        "quick": args.quick,
        "seconds_this_run": time.perf_counter() - t_start,
    }
    write_results(data)
    print(f"total {time.perf_counter() - t_start:.0f} s")


if __name__ == "__main__":
    main()
