"""Reproduce the saddle-point experiments of spec 001 (section 6.2) and a
fairness benchmark on Adult and COMPAS.

Experiments
-----------
A  planted zero-sum game (Algorithm 1, K = 1, exact gap) against the spec's
   prototype numbers, plus the Euclidean baseline dp-sgda side by side.
B  worst-group logistic regression (MinimaxLogisticRegression, Algorithm 1,
   second-order regime) with a Frank-Wolfe certified gap upper bound.
C  l1-constrained logistic regression (dp-smd-sco, Algorithm 5): excess
   population risk against the non-private constrained optimum.
F  fairness: runs ``benchmarks/utility/fairness.py`` (every fairness estimator and
   solver, private post-processing, fairlearn references, published
   numbers; Adult/sex and COMPAS/race at epsilon in {0.5, 1, 2, 4, inf}).

Usage::

    python benchmarks/reproduce/saddle.py [--quick] [--only A,B,C,F]

Writes ``benchmarks/results/saddle_*.json``, ``saddle.md`` and plots.
"""

import argparse
import json
import math
import os
import time
import warnings
from pathlib import Path

import numpy as np
from scipy.special import expit

from dpestim import (
    LogisticRegression,
    MinimaxLogisticRegression,
)
from dpestim.solvers import DPSGDA, DPSMD, DPSMDSCO
from dpestim.solvers.saddle import SaddlePlan, run_saddle
from dpestim.solvers.saddle._games import planted_game

OUT = Path(
    os.environ.get("DPESTIM_BENCH_RESULTS")
    or Path(__file__).resolve().parents[1] / "results"
)
DELTA = 1e-6

# Spec 001 section 6.2 prototype numbers (mean over 3 seeds).
SPEC_A = {
    (10, 10**4): (0.394, 0.357, 0.031),
    (10, 10**5): (0.145, 0.131, 0.011),
    (10, 10**6): (0.046, 0.041, 0.0032),
    (100, 10**4): (0.716, 0.607, 0.053),
    (100, 10**5): (0.308, 0.217, 0.016),
    (100, 10**6): (0.097, 0.068, 0.0054),
    (1000, 10**4): (0.860, 0.700, 0.061),
    (1000, 10**5): (0.462, 0.262, 0.020),
    (1000, 10**6): (0.147, 0.082, 0.0064),
}
SPEC_B = {10**4: (0.256, 0.245, 0.083), 10**5: (0.240, 0.205, 0.025)}
SPEC_B[10**6] = (0.192, 0.135, 0.0076)


# -- Experiment A --


def experiment_a(quick):
    dims = (10, 100) if quick else (10, 100, 1000)
    ns = (10**4, 10**5) if quick else (10**4, 10**5, 10**6)
    seeds = range(2 if quick else 3)
    rows = []
    for d in dims:
        for n in ns:
            for eps in (1.0, 4.0, math.inf):
                if d >= 1000 and n >= 10**6 and math.isinf(eps):
                    continue  # not run: about an hour on the shared machine
                for solver_name, solver in (
                    ("dp-smd theory T", DPSMD(max_iter="theory")),
                    ("dp-smd auto T", DPSMD(max_iter="auto")),
                ):
                    if solver_name.endswith("auto T") and math.isinf(eps):
                        continue
                    gaps, secs = [], []
                    for seed in seeds:
                        rng = np.random.default_rng(seed)
                        game = planted_game(d, n, rng)
                        plan = SaddlePlan(n, d, d, game.lipschitz, game.lipschitz, 0.0)
                        t0 = time.perf_counter()
                        res = run_saddle(solver, game, plan, eps, DELTA, rng)
                        secs.append(time.perf_counter() - t0)
                        gaps.append(game.gap(res.x, res.y))
                    spec = SPEC_A.get((d, n))
                    spec_val = None
                    if spec and solver_name == "dp-smd theory T":
                        spec_val = spec[{1.0: 0, 4.0: 1}.get(eps, 2)]
                    rows.append(
                        dict(
                            d=d,
                            n=n,
                            epsilon=eps,
                            solver=solver_name,
                            gap_mean=float(np.mean(gaps)),
                            gap_sd=float(np.std(gaps)),
                            spec=spec_val,
                            T=res.params["max_iter"],
                            seconds=float(np.mean(secs)),
                        )
                    )
                    print("A", rows[-1], flush=True)
    return rows


def experiment_s(quick):
    """Experiment A's Euclidean baseline dp-sgda next to dp-smd."""
    dims = (10, 100) if quick else (10, 100, 1000)
    seeds = range(2)
    rows = []
    # Euclidean baseline at n = 1e5, eps = 4 and 1 (learning rate tuned on the
    # exact gap: optimistic for the baseline)
    n = 10**4 if quick else 10**5
    for d in dims:
        for eps in (1.0, 4.0):
            best = None
            for lr in (0.2, 1.0):
                gaps = []
                for seed in seeds:
                    rng = np.random.default_rng(seed)
                    game = planted_game(d, n, rng)
                    plan = SaddlePlan(n, d, d, game.lipschitz, game.lipschitz, 0.0)
                    res = run_saddle(
                        DPSGDA(learning_rate=lr), game, plan, eps, DELTA, rng
                    )
                    gaps.append(game.gap(res.x, res.y))
                if best is None or np.mean(gaps) < best[0]:
                    best = (float(np.mean(gaps)), float(np.std(gaps)), lr)
            rows.append(
                dict(
                    d=d,
                    n=n,
                    epsilon=eps,
                    solver=f"dp-sgda (lr={best[2]})",
                    gap_mean=best[0],
                    gap_sd=best[1],
                    spec=None,
                    T=n // 100,
                    seconds=None,
                )
            )
            print("A", rows[-1], flush=True)
    return rows


# -- Experiment B --


def _planted_groups(n, rng, p=10):
    X = rng.uniform(-1, 1, (n, p))
    a = (rng.random(n) < 0.4).astype(int)
    t0 = np.zeros(p)
    t0[:3] = [4, -4, 3]
    t1 = np.zeros(p)
    t1[[0, 1, 3]] = [4, -4, 3]
    th = np.where(a[:, None] == 0, t0, t1)
    y = (rng.random(n) < expit((X * th).sum(1))).astype(int)
    return X, y, a


def _group_risks(theta, b, X, y, a, G):
    m = np.where(y == 1, 1.0, -1.0) * (X @ theta + b)
    loss = np.logaddexp(0, -m)
    return np.array([loss[a == g].mean() for g in range(G)])


def fw_lower_bound(lam, X, y, a, R, iters=300):
    """min over the l1-ball (with intercept column 1) of sum_g lam_g R_g.

    Frank-Wolfe with the certificate ``G(v) + min_i grad_i - <grad, v>``;
    returns ``(value, certified lower bound)``.
    """
    Z = np.hstack([X, np.ones((X.shape[0], 1))])
    s = np.where(y == 1, 1.0, -1.0)
    G = lam.shape[0]
    w = lam[a] / np.bincount(a, minlength=G)[a]
    theta = np.zeros(Z.shape[1])
    best_lb = -np.inf
    val = None
    for k in range(iters):
        m = s * (Z @ theta)
        val = float(np.sum(w * np.logaddexp(0, -m)))
        grad = Z.T @ (w * -s * expit(-m))
        j = int(np.argmax(np.abs(grad)))
        vertex = np.zeros_like(theta)
        vertex[j] = -R * np.sign(grad[j])
        lb = val + grad @ vertex - grad @ theta
        best_lb = max(best_lb, lb)
        theta += 2.0 / (k + 2) * (vertex - theta)
    return val, best_lb


def experiment_b(quick):
    rng_pop = np.random.default_rng(123)
    Xp, yp, ap = _planted_groups(50_000 if quick else 100_000, rng_pop)
    ns = (10**4, 10**5) if quick else (10**4, 10**5, 10**6)
    seeds = range(1 if quick else 2)
    rows = []
    for n in ns:
        for eps in (1.0, 8.0, math.inf):
            for label, solver in (
                ("theory T, K=4", DPSMD(max_iter="theory", n_vertex_samples=4)),
                ("auto T, K=4", DPSMD(max_iter="auto", n_vertex_samples=4)),
            ):
                if label.startswith("auto") and math.isinf(eps):
                    continue
                if n >= 10**6 and (math.isinf(eps) or label.startswith("auto")):
                    continue  # not run: shared machine, time budget
                ubs, wrs = [], []
                for seed in seeds if n < 10**6 else range(1):
                    rng = np.random.default_rng(seed)
                    X, y, a = _planted_groups(n, rng)
                    clf = MinimaxLogisticRegression(
                        epsilon=eps,
                        delta=DELTA,
                        l1_radius=4.0,
                        classes=[0, 1],
                        groups=[0, 1],
                        group_proportions=[0.6, 0.4],
                        solver=solver,
                        random_state=seed,
                    ).fit(X, y, sensitive_features=a)
                    worst = _group_risks(
                        clf.coef_[0], clf.intercept_[0], Xp, yp, ap, 2
                    ).max()
                    _, lb = fw_lower_bound(clf.group_weights_, Xp, yp, ap, 4.0, 200)
                    ubs.append(worst - lb)
                    wrs.append(worst)
                spec = SPEC_B.get(n)
                rows.append(
                    dict(
                        n=n,
                        epsilon=eps,
                        setting=label,
                        gap_upper_bound=float(np.mean(ubs)),
                        worst_group_risk=float(np.mean(wrs)),
                        spec_theory_K=(
                            spec[{1.0: 0, 8.0: 1}.get(eps, 2)]
                            if spec and label.startswith("theory")
                            else None
                        ),
                        T=clf.dp_params_["max_iter"],
                    )
                )
                print("B", rows[-1], flush=True)
    return rows


# -- Experiment C --


def _sparse_logistic(n, p, rng):
    X = rng.uniform(-1, 1, (n, p))
    theta = np.zeros(p)
    theta[:5] = [2.0, -2.0, 1.5, -1.5, 1.0]
    y = (rng.random(n) < expit(X @ theta)).astype(int)
    return X, y, theta


def _risk(coef, b, X, y):
    m = np.where(y == 1, 1.0, -1.0) * (X @ coef + b)
    return float(np.logaddexp(0, -m).mean())


def experiment_c(quick):
    configs = [(100, 10**4), (100, 10**5), (1000, 10**4), (10000, 10**4)]
    if quick:
        configs = configs[:3]
    rows = []
    for p, n in configs:
        rng = np.random.default_rng(p + n)
        Xp, yp, theta = _sparse_logistic(min(100_000, 2 * 10**8 // (8 * p)), p, rng)
        R = float(np.abs(theta).sum())
        opt, lb = fw_lower_bound(np.ones(1), Xp, yp, np.zeros(len(yp), int), R, 200)
        X, y, _ = _sparse_logistic(n, p, rng)
        for eps in (0.5, 1.0, 2.0, 4.0, math.inf):
            for name, est in (
                (
                    "dp-smd-sco",
                    LogisticRegression(
                        solver=DPSMDSCO(l1_radius=R),
                        epsilon=eps,
                        delta=DELTA,
                        classes=[0, 1],
                        random_state=0,
                    ),
                ),
                (
                    "dp-sgd (l2, reference)",
                    LogisticRegression(
                        solver="dp-sgd",
                        epsilon=eps,
                        delta=DELTA,
                        classes=[0, 1],
                        clip_norm=math.sqrt(p) if math.isinf(eps) else 1.0,
                        random_state=0,
                    ),
                ),
            ):
                t0 = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    est.fit(X, y)
                rows.append(
                    dict(
                        p=p,
                        n=n,
                        epsilon=eps,
                        solver=name,
                        excess_risk=_risk(est.coef_[0], est.intercept_[0], Xp, yp) - lb,
                        seconds=time.perf_counter() - t0,
                    )
                )
                print("C", rows[-1], flush=True)
    return rows


# -- Fairness --


def fairness(quick):
    """Part F now lives in ``benchmarks/utility/fairness.py`` (issue 16): run it.

    Its results go to ``fairness_runs.jsonl`` / ``fairness.md``; the
    ``saddle_F.json`` table below is the wave-1 run (dp-smd defaults).
    """
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "utility"))
    from fairness import main as fairness_main  # benchmarks/utility/fairness.py

    fairness_main(["--quick"] if quick else [])
    return None


def _fmt(v, nd=3):
    if v is None:
        return "-"
    if isinstance(v, float):
        if math.isinf(v):
            return "inf"
        return f"{v:.{nd}f}" if abs(v) >= 1e-3 else f"{v:.2e}"
    return str(v)


def _table(rows, cols):
    head = "| " + " | ".join(cols) + " |"
    sep = "|" + "---|" * len(cols)
    body = ["| " + " | ".join(_fmt(r.get(c)) for c in cols) + " |" for r in rows]
    return "\n".join([head, sep, *body])


def plots(results):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = results.get("F")
    if not rows:
        return
    tasks = sorted({r["task"] for r in rows})
    fig, axes = plt.subplots(2, len(tasks), figsize=(4.5 * len(tasks), 7))
    for col, task in enumerate(tasks):
        sel = [r for r in rows if r["task"] == task]
        ax = axes[0, col]
        for model in sorted({r["model"] for r in sel}):
            pts = [
                r for r in sel if r["model"] == model and math.isfinite(r["epsilon"])
            ]
            if pts:
                ax.plot(
                    [r["epsilon"] for r in pts],
                    [r["worst_group_logloss"] for r in pts],
                    "o-",
                    label=model,
                )
            for r in sel:
                if r["model"] == model and not math.isfinite(r["epsilon"]):
                    ax.axhline(r["worst_group_logloss"], ls=":", lw=0.8)
        ax.set_xscale("log")
        ax.set_xlabel("epsilon")
        ax.set_ylabel("worst-group log-loss (test)")
        ax.set_title(task)
        ax = axes[1, col]
        for model in sorted({r["model"] for r in sel}):
            pts = [r for r in sel if r["model"] == model]
            ax.scatter(
                [r["dp_difference"] for r in pts],
                [r["accuracy"] for r in pts],
                label=model,
                s=18,
            )
        ax.set_xlabel("demographic-parity difference")
        ax.set_ylabel("accuracy (test)")
    axes[0, 0].legend(fontsize=6)
    axes[1, 0].legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(OUT / "saddle_fairness.png", dpi=110)
    plt.close(fig)
    rows = results.get("A")
    if rows:
        fig, ax = plt.subplots(figsize=(5, 3.6))
        for d in sorted({r["d"] for r in rows}):
            pts = [
                r
                for r in rows
                if r["d"] == d
                and r["solver"] == "dp-smd theory T"
                and r["epsilon"] == 1.0
            ]
            ax.plot(
                [r["n"] for r in pts],
                [r["gap_mean"] for r in pts],
                "o-",
                label=f"d={d}",
            )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("n")
        ax.set_ylabel("duality gap (eps=1)")
        ax.legend()
        ax.set_title("Experiment A: planted game, dp-smd")
        fig.tight_layout()
        fig.savefig(OUT / "saddle_game.png", dpi=110)
        plt.close(fig)


COLS_A = ["gap_mean", "gap_sd", "spec", "seconds"]
COLS_B = ["gap_upper_bound", "worst_group_risk", "spec_theory_K"]
COLS_F = [
    "accuracy",
    "worst_group_accuracy",
    "worst_group_logloss",
    "dp_difference",
    "eo_difference",
]


def write_markdown(results, path):
    parts = ["# Saddle-point solvers (spec 001): reproduction\n"]
    if "A" in results:
        parts += [
            "## Experiment A: planted game (duality gap, mean and sd over seeds)\n",
            _table(
                results["A"],
                [
                    "d",
                    "n",
                    "epsilon",
                    "solver",
                    "T",
                    "gap_mean",
                    "gap_sd",
                    "spec",
                    "seconds",
                ],
            ),
            "",
        ]
    if "B" in results:
        parts += [
            "## Experiment B: worst-group logistic regression "
            "(certified gap upper bound)\n",
            _table(
                results["B"],
                [
                    "n",
                    "epsilon",
                    "setting",
                    "T",
                    "gap_upper_bound",
                    "worst_group_risk",
                    "spec_theory_K",
                ],
            ),
            "",
        ]
    if "C" in results:
        parts += [
            "## Experiment C: l1-constrained logistic regression "
            "(excess population risk)\n",
            _table(
                results["C"], ["p", "n", "epsilon", "solver", "excess_risk", "seconds"]
            ),
            "",
        ]
    if "F" in results:
        parts += [
            "## Fairness, wave-1 run (dp-smd defaults; superseded by "
            "`fairness.md`, `benchmarks/utility/fairness.py`): Adult (sex, race), "
            "COMPAS (race); test-set metrics\n",
            _table(
                results["F"],
                [
                    "task",
                    "model",
                    "epsilon",
                    "accuracy",
                    "worst_group_accuracy",
                    "worst_group_logloss",
                    "dp_difference",
                    "eo_difference",
                ],
            ),
            "",
        ]
    path.write_text("\n".join(parts))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", default="A,S,B,C,F")
    parser.add_argument(
        "--report",
        action="store_true",
        help="only rebuild the markdown and plots from saved JSON results",
    )
    args = parser.parse_args(argv)
    OUT.mkdir(exist_ok=True, parents=True)
    suffix = "_quick" if args.quick else ""
    results = {}
    funcs = {
        "A": experiment_a,
        "S": experiment_s,
        "B": experiment_b,
        "C": experiment_c,
        "F": fairness,
    }
    for key in [] if args.report else args.only.split(","):
        t0 = time.perf_counter()
        results[key] = funcs[key](args.quick)
        print(f"[{key}] {time.perf_counter() - t0:.1f} s", flush=True)
        if results[key] is None:
            del results[key]
            continue
        (OUT / f"saddle_{key}{suffix}.json").write_text(
            json.dumps(results[key], indent=1)
        )
    for key in funcs:
        saved = OUT / f"saddle_{key}{suffix}.json"
        if key not in results and saved.exists():
            results[key] = json.loads(saved.read_text())
    results = {k: results[k] for k in funcs if k in results}
    write_markdown(results, OUT / f"saddle{suffix}.md")
    plots(results)


if __name__ == "__main__":
    main()
