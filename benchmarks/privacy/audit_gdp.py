"""Gaussian-DP audit of the Gaussian solvers (issue 13, small delta).

The white-box audit of ``benchmarks/privacy/audit_solvers.py`` (worst-case datasets,
full batch, two steps, epsilon = 1) with ``audit_solver(..., bound="gdp")``:
the error counts of a test at moderate rates give a lower bound on the GDP
parameter ``mu`` (Clopper-Pearson, 95%), converted to epsilon at the
reported delta through the Gaussian privacy profile (Nasr et al., 2023).
Valid when the release's trade-off curve is Gaussian, exactly so for dp-sgd
at full batch; the assumption-free ``(epsilon, delta)`` bound of the same
fits is recorded beside it. Broken variants (``tests/audit/broken_solvers.py``)
get the same number of fits as the correct dp-sgd row. ``reference`` rows
run the same test on the exact Gaussian mechanism (numpy draws, 5 seeds).

Usage (from the repository root)::

    nice -n 10 python benchmarks/privacy/audit_gdp.py             # every row
    python benchmarks/privacy/audit_gdp.py --quick                # smoke run
    python benchmarks/privacy/audit_gdp.py --only dp-sgd          # rows by prefix

Results: ``benchmarks/results/audit_gdp.{json,md}``.
"""

import argparse
import json
import logging
import os
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "audit")]

from broken_solvers import DoubledSensitivity, HalfNoise  # noqa: E402

from dpestim.audit import (  # noqa: E402
    AuditResult,
    audit_solver,
    gdp_epsilon,
    gdp_lower_bound,
    gdp_mu,
)

RESULTS = Path(
    os.environ.get("DPESTIM_BENCH_RESULTS") or ROOT / "benchmarks" / "results"
)
EPSILON = 1.0

#: Whether the release's trade-off curve is Gaussian in the audited setting.
ASSUMPTION = {
    "dp-sgd": "exact (one Gaussian mechanism)",
    "broken-half-noise": "exact (one Gaussian mechanism)",
    "broken-doubled-sensitivity": "exact (one Gaussian mechanism)",
    "adp-sgd": "approximate (adaptive step: non-linear in the noise)",
    "adp-adagrad": "approximate (adaptive step: non-linear in the noise)",
    "dp-lssgd": "exact (smoothing is the identity in 1-d)",
    "dp-scd": "not derived (the canary acts through a clipped dual step)",
    "noisy-sgda": "Gaussian (one noisy step, see audit_solver)",
    "dp-sgda": "exact (first step of a game, projection inactive)",
    "broken-game-half-noise": "exact (first step of a game)",
}


#: ``--quick``: this many times fewer fits (a smoke run of the whole audit
#: path; its bounds are not meant to be read).
QUICK_FACTOR = 100


def configs(quick=False):
    """(row label, solver, audit_solver keyword arguments)."""
    k = QUICK_FACTOR if quick else 1
    big = 50_000 // k
    rows = [
        (f"dp-sgd q=1 T=2 delta={d:g}", "dp-sgd", dict(delta=d, n_trials=n // k))
        for d, n in ((1e-5, 50_000), (1e-3, 25_000), (1e-2, 10_000))
    ]
    rows += [
        (f"{s.name} (same settings, delta=1e-05)", s, dict(delta=1e-5, n_trials=big))
        for s in (HalfNoise(), DoubledSensitivity())
    ]
    for name in ("adp-sgd", "adp-adagrad", "dp-lssgd", "dp-scd"):
        penalty = 0.01 if name == "dp-scd" else 0.0
        kw = dict(delta=1e-5, n_trials=10_000 // k, penalty=penalty)
        rows.append((f"{name} T=2 delta=1e-05", name, kw))
    return rows + saddle_configs(k)


def saddle_configs(k):
    """Gaussian saddle solvers, when the white-box saddle audit is available.

    noisy-sgda through ``audit_solver`` (its minimax worst case) and dp-sgda
    through the game harness of ``tests/audit/game_audit.py``, with their
    broken variants; skipped on a checkout without them.
    """
    try:
        from broken_solvers import (
            GameHalfNoise,
            SgdaDoubledSensitivity,
            SgdaHalfNoise,
        )
        from game_audit import audit_game_solver  # noqa: F401

        from dpestim.solvers.saddle import DPSGDA
    except ImportError:
        return []
    sgda = dict(delta=1e-5, n_trials=10_000 // k, max_iter=1)
    game = dict(delta=1e-5, n_trials=10_000 // k, game=True)
    rows = [("noisy-sgda T=1 delta=1e-05", "noisy-sgda", sgda)]
    # (the broken noisy-sgda variants keep the registered name "noisy-sgda")
    rows += [
        ("broken-sgda-half-noise (same settings)", SgdaHalfNoise(), sgda),
        (
            "broken-sgda-doubled-sensitivity (same settings)",
            SgdaDoubledSensitivity(),
            sgda,
        ),
        ("dp-sgda game T=2 delta=1e-05", DPSGDA(), game),
        ("broken-game-half-noise (same settings)", GameHalfNoise(), game),
    ]
    return rows


def run_row(label, solver, kw, seed):
    wall, cpu = time.perf_counter(), time.process_time()
    kw = {"max_iter": 2} | kw
    try:
        if kw.pop("game", False):
            from game_audit import audit_game_solver

            kw.pop("max_iter")  # the game harness runs its own 2 steps
            audit = audit_game_solver(solver, epsilon=EPSILON, random_state=seed, **kw)
            res = gdp_lower_bound(audit)
        else:
            res = audit_solver(
                solver, epsilon=EPSILON, random_state=seed, bound="gdp", **kw
            )
    except Exception as exc:  # recorded: one failing solver does not stop the run
        return {"label": label, "error": f"{type(exc).__name__}: {exc}"[:300]}
    free = res.assumption_free
    name = solver if isinstance(solver, str) else solver.name
    return {
        "label": label,
        "solver": name,
        "assumption": ASSUMPTION[name],
        "settings": {k: v for k, v in kw.items() if k != "n_trials"},
        "n_trials": res.n_trials,
        "n_eval": res.n_eval,
        "epsilon": res.epsilon,
        "delta": res.delta,
        "mu_reported": res.mu,
        "mu_lower_bound": res.mu_lower_bound,
        "lower_bound": res.epsilon_lower_bound,
        "ratio": res.epsilon_lower_bound / res.epsilon,
        "false_positives": res.false_positives,
        "false_negatives": res.false_negatives,
        "violation": res.violation,
        "dp_lower_bound": free.epsilon_lower_bound,
        "dp_ratio": free.epsilon_lower_bound / free.epsilon,
        "dp_violation": free.violation,
        "cpu_s": time.process_time() - cpu,
        "wall_s": time.perf_counter() - wall,
    }


def reference(quick=False, seeds=5):
    """The same bound on the exact Gaussian mechanism of the reported guarantee."""
    k = QUICK_FACTOR if quick else 1
    rows = []
    # the budgets of the rows (10,000: the other Gaussian solvers)
    for delta, n in ((1e-5, 50_000), (1e-3, 25_000), (1e-2, 10_000), (1e-5, 10_000)):
        n //= k
        mu = gdp_mu(EPSILON, delta)
        bounds = []
        for seed in range(seeds):
            rng = np.random.default_rng(seed)
            out, inn = rng.normal(size=n), mu + rng.normal(size=n)
            n_sel = n // 10
            audit = AuditResult(
                0.0, gdp_epsilon(mu, delta), delta, 0.05, "custom", n, n - n_sel,
                0.0, 0, 0, 1.0, 1.0, out, inn,
            )  # fmt: skip
            bounds.append(gdp_lower_bound(audit).epsilon_lower_bound)
        rows.append({"delta": delta, "n_trials": n, "mu": mu, "bounds": bounds})
    return rows


def to_markdown(data):
    c = data["config"]
    lines = [
        "# Gaussian-DP audit of the Gaussian solvers (issue 13)",
        "",
        f"`{c['command']}`; {c['date']}; {c['machine']}; epsilon = {EPSILON}, "
        "full batch, 2 steps, 95% confidence; `audit_solver(..., bound='gdp')` "
        "(threshold planned on 10% of the trials, bound on the other 90%).",
        "",
        "| row | fits per dataset | reported eps (delta) | mu reported "
        "| mu lower bound | GDP lower bound | ratio | assumption-free bound "
        "| FP / FN (of n_eval) | verdict | Gaussian trade-off | CPU s | wall s |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in data["rows"]:
        if "error" in r:
            lines.append(f"| {r['label']} | error: {r['error'][:100]} |")
            continue
        verdict = "**flagged**" if r["violation"] else "ok"
        lines.append(
            f"| {r['label']} | {r['n_trials']} | {r['epsilon']:.4f} ({r['delta']:g}) "
            f"| {r['mu_reported']:.4f} | {r['mu_lower_bound']:.4f} "
            f"| {r['lower_bound']:.3f} | **{r['ratio']:.2f}** "
            f"| {r['dp_lower_bound']:.3f} ({r['dp_ratio']:.2f}x) "
            f"| {r['false_positives']} / {r['false_negatives']} ({r['n_eval']}) "
            f"| {verdict} | {r['assumption']} | {r['cpu_s']:.0f} | {r['wall_s']:.0f} |"
        )
    lines += [
        "",
        "Reference: the same bound on the exact Gaussian mechanism of the reported "
        "guarantee (numpy draws, 5 seeds):",
        "",
        "| delta | trials per dataset | mu | lower bounds (epsilon = 1) |",
        "|---|---|---|---|",
    ]
    for r in data["reference"]:
        b = ", ".join(f"{x:.3f}" for x in r["bounds"])
        lines.append(f"| {r['delta']:g} | {r['n_trials']} | {r['mu']:.4f} | {b} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help=f"{QUICK_FACTOR}x fewer fits (a smoke run)"
    )
    parser.add_argument("--only", nargs="*", default=None, help="row label prefixes")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--render-only", action="store_true")
    args = parser.parse_args(argv)
    suffix = "_quick" if args.quick else ""
    path = RESULTS / f"audit_gdp{suffix}.json"
    if args.render_only:
        data = json.loads(path.read_text())
        (RESULTS / f"audit_gdp{suffix}.md").write_text(to_markdown(data))
        return
    logging.getLogger("absl").setLevel(logging.ERROR)  # this script's process only
    warnings.simplefilter("ignore")
    rows = configs(args.quick)
    if args.only:
        rows = [r for r in rows if any(r[0].startswith(p) for p in args.only)]
    data = {"rows": []}
    if args.only and path.exists():
        data = json.loads(path.read_text())
        labels = {r[0] for r in rows}
        data["rows"] = [r for r in data["rows"] if r["label"] not in labels]
    t0 = time.perf_counter()
    for label, solver, kw in rows:
        row = run_row(label, solver, kw, args.seed)
        print(json.dumps(row), flush=True)
        data["rows"].append(row)
    order = {r[0]: i for i, r in enumerate(configs(args.quick))}
    data["rows"].sort(key=lambda r: order.get(r["label"], len(order)))
    data["reference"] = reference(args.quick)
    command = ["python benchmarks/privacy/audit_gdp.py", *(argv or sys.argv[1:])]
    data["config"] = {
        "command": " ".join(command),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "epsilon": EPSILON,
        "seed": args.seed,
        "quick": args.quick,
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs (shared)",
        "wall_s_this_run": time.perf_counter() - t0,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1) + "\n")
    (RESULTS / f"audit_gdp{suffix}.md").write_text(to_markdown(data))
    print(f"total {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
