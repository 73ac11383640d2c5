"""Tight privacy audit of every registered solver (issue 13).

Every solver of ``dpestim.solvers.SOLVERS`` is audited with
:func:`dpestim.audit.audit_solver` (white-box: worst-case neighbouring
datasets of zero records plus a canary whose clipped gradient is maximal,
full batch, few steps, a threshold fitted on 10% of the trials and a 95%
Clopper-Pearson bound on the other 90%), at ``epsilon = 1``. The ratio
lower bound / reported epsilon is recorded per solver, beside CPU and wall
time. Deliberately broken variants (``tests/audit/broken_solvers.py``: noise
halved, sensitivity doubled without telling the accountant) are audited with
the same budget of fits as their correct counterpart.

Usage (from the repository root)::

    nice -n 10 python benchmarks/privacy/audit_solvers.py            # everything
    python benchmarks/privacy/audit_solvers.py --quick               # smoke run
    python benchmarks/privacy/audit_solvers.py --only dp-sgd dp-gd   # some rows

Results: ``benchmarks/results/audit.json``, ``audit.md`` and
``audit_table.rst`` (included by doc/privacy_statement.rst).
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

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "audit")]

from broken_solvers import (  # noqa: E402
    DoubledSensitivity,
    GameDoubledSensitivity,
    GameHalfNoise,
    HalfNoise,
    LaplaceDoubledSensitivity,
    LaplaceHalfNoise,
    ScdDoubledSensitivity,
    ScdHalfNoise,
    SeqScdHalfNoise,
    SeqScdParallelSensitivity,
    SgdaDoubledSensitivity,
    SgdaHalfNoise,
    SmdUncappedStep,
)
from game_audit import audit_game_solver  # noqa: E402

from dpestim.audit import audit_solver  # noqa: E402
from dpestim.solvers import DPGD, DPSGDA, DPSMD, SOLVERS  # noqa: E402

RESULTS = Path(
    os.environ.get("DPESTIM_BENCH_RESULTS") or ROOT / "benchmarks" / "results"
)
EPSILON = 1.0
_NEEDS_PENALTY = {"dp-hb", "dp-nag", "dp-nag-opt", "dp-masg", "dp-masg-opt"}
_NEEDS_PENALTY |= {"dp-scd", "seq-dp-scd", "objective-perturbation"}


#: ``--quick``: this many times fewer fits (a smoke run of the whole audit
#: path; its bounds are not meant to be read).
QUICK_FACTOR = 100


def configs(quick=False):
    """(row label, solver, audit_solver keyword arguments)."""
    k = QUICK_FACTOR if quick else 1
    rows = []
    # The headline target: dp-sgd, full batch, 2 steps, epsilon = 1.
    for delta in (1e-2, 1e-3, 1e-5):
        trials = 50_000
        rows.append(
            (
                f"dp-sgd q=1 T=2 delta={delta:g}",
                "dp-sgd",
                dict(max_iter=2, delta=delta, n_trials=trials // k),
            )
        )
    # Mini-batch: batch 6 of 50 / 51 records gives q = 0.12 and 17 steps on
    # both datasets (the step count must not depend on n + 1 versus n).
    rows.append(
        (
            "dp-sgd q=6/51 T=17 delta=0.01",
            "dp-sgd",
            dict(max_iter=2, delta=1e-2, n_trials=10_000 // k, batch_size=6),
        )
    )
    for name in sorted(SOLVERS):
        if name == "dp-sgd":
            continue
        penalty = 0.01 if name in _NEEDS_PENALTY else 0.0
        solver = SOLVERS[name]()
        if solver.privacy_notion == "pure":
            kw = dict(max_iter=1, n_trials=20_000 // k, penalty=penalty)
            rows.append((f"{name} T=1", name, kw))
            if name == "dp-gd":
                exact = DPGD(noise="discrete_laplace")
                rows.append(("dp-gd noise=discrete_laplace T=1", exact, kw))
                gauss = dict(max_iter=2, delta=1e-2, n_trials=10_000 // k)
                label = "dp-gd noise=gaussian T=2 delta=0.01"
                rows.append((label, DPGD(noise="gaussian"), gauss))
        else:
            big = name.startswith("adp") or name == "dp-scd"
            trials = (10_000 if big else 5_000) // k
            kw = dict(max_iter=2, delta=1e-2, n_trials=trials, penalty=penalty)
            if name == "dp-smd-sco":
                kw["threshold"] = "split"
            # dp-smd-sco ignores the estimator's max_iter: its own schedule
            # (Theorem 4.2) runs 34 batches of 1 record, K = 8, 1,120 samples
            steps = "own schedule" if name == "dp-smd-sco" else "T=2"
            rows.append((f"{name} {steps} delta=0.01", name, kw))
    # Objective perturbation's smooth-hinge surrogates (LinearSVC, issue 26).
    for loss in ("hinge", "squared_hinge"):
        kw = dict(max_iter=2, delta=1e-2, n_trials=5_000 // k, penalty=0.01, loss=loss)
        rows.append((f"objective-perturbation LinearSVC {loss} delta=0.01",
                     "objective-perturbation", kw))  # fmt: skip
    # Saddle solvers (minimax / fairness estimators; dp-sgda on a game).
    sgda = dict(max_iter=1, delta=1e-2, n_trials=10_000 // k)
    rows.append(("noisy-sgda T=1 delta=0.01", "noisy-sgda", sgda))
    game = dict(game=True, delta=1e-2, n_trials=20_000 // k)
    rows.append(("dp-sgda game T=2 delta=0.01", DPSGDA(), game))
    # Vertex samplers release counts (discrete scores): the best empirical
    # threshold on half of the trials, not a fitted Gaussian.
    smd = dict(max_iter=2, delta=1e-2, n_trials=5_000 // k, threshold="split")
    rows.append(("dp-smd K=1 T=2 delta=0.01", DPSMD(n_vertex_samples=1), smd))
    # dp-smd-br needs alpha n >= 1: 200 zero records
    br = dict(delta=1e-2, n_samples=200, n_trials=2_000 // k, threshold="split")
    rows.append(("dp-smd-br n=200 delta=0.01", "dp-smd-br", br))
    scd = dict(max_iter=2, delta=1e-2, n_trials=10_000 // k, penalty=0.01)
    seq = dict(max_iter=2, delta=1e-2, n_trials=5_000 // k, penalty=0.01)
    broken = [
        (ScdHalfNoise(), scd),
        (ScdDoubledSensitivity(), scd),
        (SeqScdHalfNoise(), seq),
        (SeqScdParallelSensitivity(), seq),
        (SgdaHalfNoise(), sgda),
        (SgdaDoubledSensitivity(), sgda),
        (GameHalfNoise(), game),
        (GameDoubledSensitivity(), game),
        (SmdUncappedStep(n_vertex_samples=1, step_size=50.0), smd),
    ]
    broken += [
        (HalfNoise(), dict(max_iter=2, delta=1e-2, n_trials=20_000 // k)),
        (DoubledSensitivity(), dict(max_iter=2, delta=1e-2, n_trials=20_000 // k)),
        (LaplaceHalfNoise(), dict(max_iter=1, n_trials=20_000 // k)),
        (LaplaceDoubledSensitivity(), dict(max_iter=1, n_trials=20_000 // k)),
    ]
    rows += [(f"{s.name} (same settings)", s, kw) for s, kw in broken[9:]]
    rows += [
        (f"{getattr(s, 'label', s.name)} (same settings)", s, kw)
        for s, kw in broken[:9]
    ]
    return rows


def reference_gaussian(n_trials=50_000, seeds=5):
    """The same test on the exact Gaussian mechanism of dp-sgd's reported noise.

    What an ideal solver would score (numpy draws, no fits): the spread of
    the bound over seeds at the budget of the dp-sgd rows.
    """
    import math

    import numpy as np
    from dp_accounting import GaussianDpEvent, SelfComposedDpEvent

    from dpestim.audit._audit import epsilon_lower_bound
    from dpestim.audit._solver_audit import _FittedThreshold
    from dpestim.privacy import calibrate_noise

    out = {}
    for delta in (1e-2, 1e-3, 1e-5):
        nm = calibrate_noise(
            lambda s: SelfComposedDpEvent(GaussianDpEvent(s), 2),
            EPSILON,
            delta,
            accountant="pld",
        )
        bounds = []
        for seed in range(seeds):
            rng = np.random.default_rng(seed)
            sd = nm / math.sqrt(2)  # score units: shift 1, mean of 2 draws
            o, i = rng.normal(0, sd, n_trials), 1 + rng.normal(0, sd, n_trials)
            k = n_trials // 10
            t = _FittedThreshold(False)(o[:k], i[:k], delta, 0.05, n_trials - k)
            fp, fn = int(np.sum(o[k:] > t)), int(np.sum(i[k:] <= t))
            bounds.append(epsilon_lower_bound(fp, fn, n_trials - k, delta, 0.05)[0])
        out[f"{delta:g}"] = {"noise_multiplier": nm, "bounds": bounds}
        print(delta, nm, np.round(bounds, 3), flush=True)
    return out


def run_row(label, solver, kw, seed):
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        if kw.get("game"):
            args = {k: v for k, v in kw.items() if k != "game"}
            res = audit_game_solver(solver, epsilon=EPSILON, random_state=seed, **args)
        else:
            res = audit_solver(solver, epsilon=EPSILON, random_state=seed, **kw)
    except Exception as exc:  # recorded: one failing solver does not stop the run
        return {"label": label, "error": f"{type(exc).__name__}: {exc}"[:300]}
    return {
        "label": label,
        "solver": solver
        if isinstance(solver, str)
        else getattr(solver, "label", solver.name),
        "settings": {k: v for k, v in kw.items() if k != "n_trials"},
        "n_trials": res.n_trials,
        "n_eval": res.n_eval,
        "epsilon": res.epsilon,
        "delta": res.delta,
        "lower_bound": res.epsilon_lower_bound,
        "ratio": res.epsilon_lower_bound / res.epsilon,
        "false_positives": res.false_positives,
        "false_negatives": res.false_negatives,
        "violation": res.violation,
        "cpu_s": time.process_time() - cpu,
        "wall_s": time.perf_counter() - wall,
    }


def to_markdown(data):
    c = data["config"]
    lines = [
        "# Tight privacy audit of the solvers (issue 13)",
        "",
        f"`{c['command']}`; {c['date']}; epsilon = {EPSILON}, confidence 95% "
        "(Clopper-Pearson, alpha/2 per error rate), worst-case datasets of "
        "50 zero records plus a Dirac canary (target 1e6, clipped gradient of "
        "norm clip_norm = 1 in every step), full batch unless stated, threshold "
        "fitted on 10% of the trials, bound on the other 90%.",
        "",
        "| row | fits per dataset | reported eps | delta | lower bound | ratio "
        "| FP / FN (of n_eval) | verdict | CPU s | wall s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in data["rows"]:
        if "error" in r:
            lines.append(f"| {r['label']} | | | | | | | error: {r['error'][:90]} | | |")
            continue
        verdict = "VIOLATION" if r["violation"] else "ok"
        lines.append(
            f"| {r['label']} | {r['n_trials']} | {r['epsilon']:.4f} | {r['delta']:g} "
            f"| {r['lower_bound']:.3f} | {r['ratio']:.2f} | {r['false_positives']} / "
            f"{r['false_negatives']} ({r['n_eval']}) | {verdict} | {r['cpu_s']:.0f} "
            f"| {r['wall_s']:.0f} |"
        )
    return "\n".join(lines) + "\n"


def to_rst(data):
    """The per-solver table included by doc/privacy_statement.rst."""
    lines = [
        ".. list-table::",
        "   :header-rows: 1",
        "",
        "   * - audited setting",
        "     - reported epsilon (delta)",
        "     - lower bound (95%)",
        "     - ratio",
        "     - verdict",
    ]
    for r in data["rows"]:
        if "error" in r:
            cells = [r["label"], "", "", "", "error"]
        else:
            cells = [
                r["label"],
                f"{r['epsilon']:.3f} ({r['delta']:g})",
                f"{r['lower_bound']:.3f}",
                f"{r['ratio']:.2f}",
                "violation" if r["violation"] else "ok",
            ]
        lines.append(f"   * - ``{cells[0]}``")
        lines += [f"     - {x}" for x in cells[1:]]
    return "\n".join(lines) + "\n"


def write_results(data):
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "audit.json").write_text(json.dumps(data, indent=1) + "\n")
    (RESULTS / "audit.md").write_text(to_markdown(data))
    (RESULTS / "audit_table.rst").write_text(to_rst(data))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help=f"{QUICK_FACTOR}x fewer fits (a smoke run)"
    )
    parser.add_argument("--only", nargs="*", default=None, help="row label prefixes")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--render-only", action="store_true")
    parser.add_argument(
        "--reference",
        action="store_true",
        help="simulate the exact Gaussian mechanism with the same test "
        "(audit_reference.json)",
    )
    parser.add_argument(
        "--part",
        default=None,
        help="write rows to audit_part_<PART>.json (run parts in parallel)",
    )
    parser.add_argument(
        "--merge", nargs="*", default=None, help="merge these parts into audit.json"
    )
    parser.add_argument(
        "--logs",
        nargs="*",
        default=None,
        help="with --merge: also take the JSON rows printed in these logs",
    )
    args = parser.parse_args(argv)
    if args.reference:
        ref = reference_gaussian()
        (RESULTS / "audit_reference.json").write_text(json.dumps(ref, indent=1))
        return
    if args.render_only:
        write_results(json.loads((RESULTS / "audit.json").read_text()))
        return
    if args.merge is not None:
        parts = [
            json.loads((RESULTS / f"audit_part_{p}.json").read_text())
            for p in args.merge
        ]
        for log in args.logs or []:
            logged = [
                json.loads(line)
                for line in Path(log).read_text().splitlines()
                if line.startswith("{")
            ]
            config = {"command": f"(rows logged in {Path(log).name})"}
            parts.append({"rows": logged, "config": config | {"wall_s_this_run": 0}})
        order = {r[0]: i for i, r in enumerate(configs())}
        rows = sorted(
            (r for p in parts for r in p["rows"] if r["label"] in order),
            key=lambda r: order.get(r["label"], len(order)),
        )
        seen, unique = set(), []
        for r in rows:  # a row logged twice keeps its last run
            if r["label"] in seen:
                unique = [u for u in unique if u["label"] != r["label"]]
            seen.add(r["label"])
            unique.append(r)
        rows = unique
        config = dict(parts[0]["config"])
        config["command"] = " ; ".join(p["config"]["command"] for p in parts)
        config["wall_s_this_run"] = max(p["config"]["wall_s_this_run"] for p in parts)
        write_results({"rows": rows, "config": config})
        for p in args.merge:
            (RESULTS / f"audit_part_{p}.json").unlink()
        return
    logging.getLogger("absl").setLevel(logging.ERROR)  # this script's process only
    warnings.simplefilter("ignore")
    rows = configs(args.quick)
    if args.only:
        rows = [r for r in rows if any(r[0].startswith(p) for p in args.only)]
    data = {"rows": []}
    old = RESULTS / "audit.json"
    if args.only and old.exists() and args.part is None:
        data = json.loads(old.read_text())
        labels = {r[0] for r in rows}
        data["rows"] = [r for r in data["rows"] if r["label"] not in labels]
    t0 = time.perf_counter()
    for label, solver, kw in rows:
        row = run_row(label, solver, kw, args.seed)
        print(json.dumps(row), flush=True)
        data["rows"].append(row)
    order = {r[0]: i for i, r in enumerate(configs(args.quick))}
    data["rows"].sort(key=lambda r: order.get(r["label"], len(order)))
    data["config"] = {
        "command": "python benchmarks/privacy/audit_solvers.py "
        + " ".join(argv or sys.argv[1:]),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "epsilon": EPSILON,
        "seed": args.seed,
        "quick": args.quick,
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs (shared)",
        "wall_s_this_run": time.perf_counter() - t0,
    }
    if args.part is not None:
        out = RESULTS / f"audit_part_{args.part}.json"
        out.write_text(json.dumps(data, indent=1) + "\n")
    else:
        write_results(data)
    print(f"total {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
