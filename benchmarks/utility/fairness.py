"""Fairness benchmark: private worst-group / fair models on Adult and COMPAS.

Every estimator and solver of dpestim's fairness toolbox against
``LogisticRegression(solver="dp-sgd")`` and non-private references
(scikit-learn, fairlearn's ``ExponentiatedGradient`` and
``ThresholdOptimizer`` with a scikit-learn ``LogisticRegression`` learner;
fairlearn is a benchmark-only dependency), at full-record
``(epsilon, 1e-5)``-DP for epsilon in {0.5, 1, 2, 4} and epsilon = inf, on

* Adult (sensitive feature sex; the given 32,561 / 16,281 train / test split);
* COMPAS (race, African-American vs the others; a fixed 70 / 30 split).

Metrics on the test set: accuracy, demographic-parity difference (largest
difference of positive-prediction rates between groups), equalized-odds
difference, worst-group accuracy and worst-group log-loss (models with
probabilities). Medians over the seeds.

Results are appended one JSON line per (dataset, model, epsilon, seed) to
``benchmarks/results/fairness_runs.jsonl``; a rerun skips what is there
(resumable). ``--report`` rebuilds ``fairness.md`` and ``fairness_tradeoff.png``.

Usage::

    PYTHONPATH=. nice -n 10 python benchmarks/utility/fairness.py [--seeds 10] [--quick]
        [--max-minutes 60] [--only-models a,b] [--report]
"""

import argparse
import json
import math
import os
import platform
import time
import warnings
from pathlib import Path

import numpy as np

OUT = Path(
    os.environ.get("DPESTIM_BENCH_RESULTS")
    or Path(__file__).resolve().parents[1] / "results"
)
RUNS = OUT / "fairness_runs.jsonl"
DELTA = 1e-5
EPSILONS = (0.5, 1.0, 2.0, 4.0, math.inf)

# Published private-fair results on Adult (sex), as quoted in issue 16.
PUBLISHED = [
    dict(
        model="DP-FERMI (Lowy et al. 2023)",
        epsilon=1.0,
        accuracy=0.813,
        dp_difference=0.010,
        protects="sensitive attribute only",
        color="red",
    ),
    dict(
        model="PF-LD (Tran et al. 2021)",
        epsilon=1.0,
        accuracy=0.817,
        dp_difference=0.061,
        protects="sensitive attribute only",
        color="magenta",
    ),
    dict(
        model="Ghoukasian & Asoodeh 2024 (post-processing)",
        epsilon=3.0,
        accuracy=0.775,
        dp_difference=0.006,
        protects="see their paper (not re-verified here)",
        color="saddlebrown",
    ),
]


def load_tasks():
    from sklearn.model_selection import train_test_split

    from dpestim.datasets import load_adult, load_compas

    ad = load_adult()
    tasks = {
        "Adult/sex": (
            ad.data,
            ad.target,
            ad.sensitive["sex"].astype(str),
            ad.data_test,
            ad.target_test,
            ad.sensitive_test["sex"].astype(str),
            ["Female", "Male"],
        )
    }
    co = load_compas()
    race = np.where(
        co.sensitive["race"] == "African-American", "African-American", "other"
    )
    Xtr, Xte, ytr, yte, atr, ate = train_test_split(
        co.data, co.target, race, test_size=0.3, random_state=0
    )
    tasks["COMPAS/race"] = (Xtr, ytr, atr, Xte, yte, ate, ["African-American", "other"])
    return tasks


def metrics(pred, proba, y, a, groups):
    out = dict(accuracy=float((pred == y).mean()))
    rates = [pred[a == g].mean() for g in groups]
    out["dp_difference"] = float(max(rates) - min(rates))
    eo = 0.0
    for c in (0, 1):
        r = [pred[(a == g) & (y == c)].mean() for g in groups]
        eo = max(eo, max(r) - min(r))
    out["eo_difference"] = float(eo)
    out["worst_group_accuracy"] = float(
        min((pred[a == g] == y[a == g]).mean() for g in groups)
    )
    if proba is not None:
        p = np.clip(proba, 1e-12, 1 - 1e-12)
        ll = -(y * np.log(p) + (1 - y) * np.log(1 - p))
        out["worst_group_logloss"] = float(max(ll[a == g].mean() for g in groups))
    return out


def split_for_postprocessing(eps, delta, base_event):
    """Histogram epsilon so that (base event + histogram) composes to <= eps.

    Public computation only (events and accountant, no data): bisection on
    the histogram budget of :class:`PrivateThresholdOptimizer`, whose noise
    is ``calibrate_noise(GaussianDpEvent, eps_h, delta)``.
    """
    from dp_accounting import ComposedDpEvent, GaussianDpEvent

    from dpestim.privacy import calibrate_noise, compute_epsilon

    def total(eps_h):
        s = calibrate_noise(GaussianDpEvent, eps_h, delta / 2, cache_key=("gaussian",))
        return compute_epsilon(ComposedDpEvent([base_event, GaussianDpEvent(s)]), delta)

    lo, hi = 1e-3 * eps, eps
    for _ in range(14):
        mid = math.sqrt(lo * hi)
        if total(mid) <= eps:
            lo = mid
        else:
            hi = mid
    return lo


def make_model(name, eps, groups, seed):
    """(estimator, fit kwargs kind) for a model name; all public settings."""
    from dpestim import (
        FairLogisticRegression,
        LogisticRegression,
        MinimaxLogisticRegression,
    )

    common = dict(epsilon=eps, delta=DELTA, classes=[0, 1], random_state=seed)
    lr_kw = dict(
        common, solver="dp-sgd", clip_norm=1.0 if math.isfinite(eps) else math.inf
    )
    if name == "LogisticRegression(dp-sgd)":
        return LogisticRegression(**lr_kw)
    if name == "MinimaxLogisticRegression":
        return MinimaxLogisticRegression(groups=groups, **common)
    if name == "MinimaxLogisticRegression(dp-smd)":
        return MinimaxLogisticRegression(groups=groups, solver="dp-smd", **common)
    if name == "FairLogisticRegression(DP)":
        return FairLogisticRegression(groups=groups, **common)
    if name == "FairLogisticRegression(EO)":
        return FairLogisticRegression(
            groups=groups, constraint="equalized_odds", **common
        )
    if name == "FairLogisticRegression(DP, dp-smd)":
        return FairLogisticRegression(groups=groups, solver="dp-smd", **common)
    raise ValueError(name)


PRIVATE_MODELS = (
    "LogisticRegression(dp-sgd)",
    "MinimaxLogisticRegression",
    "FairLogisticRegression(DP)",
    "FairLogisticRegression(EO)",
    "PostProcessing(DP) on dp-sgd",
    "PostProcessing(EO) on dp-sgd",
    "MinimaxLogisticRegression(dp-smd)",
    "FairLogisticRegression(DP, dp-smd)",
)
# the paper's vertex-sampling solvers are slow at epsilon = inf (T = n steps)
FEW_SEEDS = {
    "MinimaxLogisticRegression(dp-smd)": 3,
    "FairLogisticRegression(DP, dp-smd)": 3,
}


def run_private(name, eps, seed, task):
    from dpestim.postprocessing import PrivateThresholdOptimizer

    X, y, a, Xt, yt, at, groups = task
    if name.startswith("PostProcessing"):
        constraint = "demographic_parity" if "(DP)" in name else "equalized_odds"
        if math.isfinite(eps):
            eps_b = 0.85 * eps
            base = make_model("LogisticRegression(dp-sgd)", eps_b, groups, seed)
            base.set_params(delta=DELTA / 2)
            base.fit(X, y)
            eps_h = split_for_postprocessing(eps, DELTA, base.dp_event_)
        else:
            base = make_model("LogisticRegression(dp-sgd)", eps, groups, seed).fit(X, y)
            eps_h = math.inf
        est = PrivateThresholdOptimizer(
            base, constraint=constraint, epsilon=eps_h, delta=DELTA / 2, groups=groups,
            n_bins=20, random_state=seed,
        ).fit(X, y, sensitive_features=a)  # fmt: skip
        pred = est.predict(Xt, sensitive_features=at)
        return metrics(pred, None, yt, at, groups), est.epsilon_, est.delta_
    est = make_model(name, eps, groups, seed)
    if name.startswith("LogisticRegression"):
        est.fit(X, y)
    else:
        est.fit(X, y, sensitive_features=a)
    m = metrics(est.predict(Xt), est.predict_proba(Xt)[:, 1], yt, at, groups)
    return m, est.epsilon_, getattr(est, "delta_", DELTA)


def run_references(task):
    from fairlearn.postprocessing import ThresholdOptimizer
    from fairlearn.reductions import (
        DemographicParity,
        EqualizedOdds,
        ExponentiatedGradient,
    )
    from sklearn.linear_model import LogisticRegression as SkLR

    X, y, a, Xt, yt, at, groups = task
    out = {}
    sk = SkLR(max_iter=2000).fit(X, y)
    out["sklearn LogisticRegression"] = metrics(
        sk.predict(Xt), sk.predict_proba(Xt)[:, 1], yt, at, groups
    )
    for cname, cons in (("DP", DemographicParity), ("EO", EqualizedOdds)):
        eg = ExponentiatedGradient(SkLR(max_iter=1000), cons(difference_bound=0.01))
        eg.fit(X, y, sensitive_features=a)
        out[f"fairlearn ExponentiatedGradient({cname})"] = metrics(
            eg.predict(Xt, random_state=0), None, yt, at, groups
        )
        to = ThresholdOptimizer(
            estimator=sk,
            constraints="demographic_parity" if cname == "DP" else "equalized_odds",
            prefit=True,
            predict_method="predict_proba",
        ).fit(X, y, sensitive_features=a)
        out[f"fairlearn ThresholdOptimizer({cname})"] = metrics(
            to.predict(Xt, sensitive_features=at, random_state=0), None, yt, at, groups
        )
    out[FW_NAME] = _fw_minimax(task)
    return out


FW_NAME = "l1-ball (R=4) minimax logistic, Frank-Wolfe"


def _fw_minimax(task, R=4.0, iters=600):
    """Non-private reference of dp-smd's objective (l1 ball, features clipped
    to 1, intercept inside the ball): Frank-Wolfe on ``sum_g lam_g R_g`` for
    a grid of ``lam``; the one with the smallest worst-group training risk."""
    from scipy.special import expit

    X, y, a, Xt, yt, at, groups = task
    Z = np.hstack([np.clip(X, -1, 1), np.ones((len(y), 1))])
    s = np.where(y == 1, 1.0, -1.0)
    best = None
    for lam in np.linspace(0, 1, 5):
        w = np.where(a == groups[1], lam, 1 - lam) / np.where(
            a == groups[1], (a == groups[1]).sum(), (a == groups[0]).sum()
        )
        th = np.zeros(Z.shape[1])
        for k in range(iters):
            g = Z.T @ (w * -s * expit(-s * (Z @ th)))
            j = np.argmax(np.abs(g))
            v = np.zeros_like(th)
            v[j] = -R * np.sign(g[j])
            th += 2 / (k + 2) * (v - th)
        loss = np.logaddexp(0, -s * (Z @ th))
        worst = max(loss[a == g].mean() for g in groups)
        if best is None or worst < best[0]:
            best = (worst, th)
    Zt = np.hstack([np.clip(Xt, -1, 1), np.ones((len(yt), 1))])
    p = expit(Zt @ best[1])
    return metrics((p > 0.5).astype(int), p, yt, at, groups)


def _done():
    keys = set()
    if RUNS.exists():
        for line in RUNS.read_text().splitlines():
            r = json.loads(line)
            keys.add((r["dataset"], r["model"], str(r["epsilon"]), r["seed"]))
    return keys


def _append(record):
    OUT.mkdir(exist_ok=True)
    with RUNS.open("a") as f:
        f.write(json.dumps(record) + "\n")


def run(seeds, epsilons, models, max_minutes, references=True, datasets=None):
    tasks = load_tasks()
    if datasets:
        tasks = {k: v for k, v in tasks.items() if k in datasets}
    done = _done()
    start = time.time()
    for dname, task in tasks.items():
        if references and (dname, "references", "inf", 0) not in done:
            t0 = time.process_time()
            refs = run_references(task)
        elif references and (dname, FW_NAME, "inf", 0) not in done:
            t0 = time.process_time()
            refs = {FW_NAME: _fw_minimax(task)}
        else:
            refs = None
        if refs is not None:
            for mname, m in refs.items():
                _append(dict(dataset=dname, model=mname, epsilon="inf", seed=0, **m,
                             epsilon_spent="inf", fit_cpu_s=None))  # fmt: skip
            _append(dict(dataset=dname, model="references", epsilon="inf", seed=0,
                         fit_cpu_s=time.process_time() - t0))  # fmt: skip
            done = _done()
        for seed in range(seeds):
            for eps in epsilons:
                for mname in models:
                    if seed >= FEW_SEEDS.get(mname, seeds):
                        continue
                    key = (
                        dname,
                        mname,
                        str(eps if math.isfinite(eps) else "inf"),
                        seed,
                    )
                    if key in done:
                        continue
                    if time.time() - start > 60 * max_minutes:
                        print("time bound reached; rerun to resume", flush=True)
                        return
                    t0, w0 = time.process_time(), time.time()
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        m, spent, dlt = run_private(mname, eps, seed, task)
                    rec = dict(
                        dataset=dname, model=mname, epsilon=key[2], seed=seed, **m,
                        epsilon_spent=spent if math.isfinite(spent) else "inf",
                        delta_spent=dlt, fit_cpu_s=time.process_time() - t0,
                        fit_wall_s=time.time() - w0,
                    )  # fmt: skip
                    _append(rec)
                    print(json.dumps(rec), flush=True)


# -- report --

COLS = ("accuracy", "dp_difference", "eo_difference", "worst_group_accuracy",
        "worst_group_logloss")  # fmt: skip


def _load():
    return [json.loads(line) for line in RUNS.read_text().splitlines()]


def summarise(rows):
    latest = {}  # one row per (dataset, model, epsilon, seed): the last written
    for r in rows:
        if r["model"] != "references":
            latest[(r["dataset"], r["model"], r["epsilon"], r["seed"])] = r
    groups = {}
    for r in latest.values():
        groups.setdefault((r["dataset"], r["model"], r["epsilon"]), []).append(r)
    out = []
    for (d, m, e), rs in groups.items():
        s = dict(dataset=d, model=m, epsilon=e, n_seeds=len(rs))
        for c in COLS + ("epsilon_spent", "fit_cpu_s"):
            vals = [r[c] for r in rs if isinstance(r.get(c), (int, float))]
            s[c] = float(np.median(vals)) if vals else None
        out.append(s)
    return out


def _fmt(v, nd=3):
    return "" if v is None else f"{v:.{nd}f}"


def write_report(rows):
    summ = summarise(rows)
    lines = [
        "# Fairness benchmark (issue 16)",
        "",
        f"Test-set medians over seeds; full-record (epsilon, {DELTA:g})-DP "
        "(add/remove one record, n public); `eps spent` is the accounted total "
        "(for post-processing: the RDP composition of the dp-sgd model and the "
        "histogram). Generated by `benchmarks/utility/fairness.py`.",
        "",
    ]
    order = {m: i for i, m in enumerate(PRIVATE_MODELS)}
    for d in sorted({s["dataset"] for s in summ}):
        lines += [f"## {d}", ""]
        lines.append(
            "| model | epsilon | seeds | accuracy | DP diff | EO diff "
            "| worst-group acc | worst-group log-loss | eps spent | fit CPU s |"
        )
        lines.append("|---|---|---|---|---|---|---|---|---|---|")
        rows_d = [s for s in summ if s["dataset"] == d]

        def key(s):
            e = math.inf if s["epsilon"] == "inf" else float(s["epsilon"])
            return (e, order.get(s["model"], 100), s["model"])

        for s in sorted(rows_d, key=key):
            lines.append(
                f"| {s['model']} | {s['epsilon']} | {s['n_seeds']} | "
                + " | ".join(_fmt(s[c]) for c in COLS)
                + f" | {_fmt(s['epsilon_spent'])} | {_fmt(s['fit_cpu_s'], 2)} |"
            )
        if d == "Adult/sex":
            lines += ["", "Published (Adult, sex):", ""]
            lines.append("| method | epsilon | accuracy | DP diff | privacy protects |")
            lines.append("|---|---|---|---|---|")
            for p in PUBLISHED:
                lines.append(
                    f"| {p['model']} | {p['epsilon']} | {p['accuracy']:.3f} | "
                    f"{p['dp_difference']:.3f} | {p['protects']} |"
                )
        lines.append("")
    (OUT / "fairness.md").write_text("\n".join(lines))
    (OUT / "fairness_summary.json").write_text(json.dumps(summ, indent=1))
    plot(summ)


def plot(summ):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    datasets = sorted({s["dataset"] for s in summ})
    eps_list = ["0.5", "1.0", "2.0", "4.0", "inf"]
    fig, axes = plt.subplots(
        len(datasets), len(eps_list), figsize=(4 * len(eps_list), 3.6 * len(datasets)),
        squeeze=False, sharey="row",
    )  # fmt: skip
    models = [m for m in PRIVATE_MODELS if any(s["model"] == m for s in summ)]
    refs = sorted({s["model"] for s in summ if s["model"] not in PRIVATE_MODELS})
    cmap = plt.get_cmap("tab10")
    style = {m: (cmap(i % 10), "o") for i, m in enumerate(models)}
    style.update({m: ("k", mk) for m, mk in zip(refs, "sPXD*^v")})
    for i, d in enumerate(datasets):
        for j, e in enumerate(eps_list):
            ax = axes[i, j]
            for s in summ:
                if s["dataset"] != d or s["accuracy"] is None:
                    continue
                is_ref = s["model"] in refs
                if not is_ref and s["epsilon"] != e:
                    continue
                c, mk = style[s["model"]]
                label = s["model"] + (" (non-private)" if is_ref else "")
                ax.scatter(s["dp_difference"], s["accuracy"], color=c, marker=mk,
                           s=50, alpha=0.5 if is_ref else 0.9, label=label)  # fmt: skip
            if d == "Adult/sex":
                for p in PUBLISHED:
                    if (e == "1.0" and p["epsilon"] == 1.0) or (
                        e == "4.0" and p["epsilon"] == 3.0
                    ):
                        ax.scatter(p["dp_difference"], p["accuracy"], marker="x",
                                   color=p["color"], s=60, label=p["model"]
                                   + f" [published, eps {p['epsilon']:g}]")  # fmt: skip
            ax.set_title(f"{d}, epsilon = {e}", fontsize=9)
            ax.set_xlabel("demographic-parity difference (test)")
            if j == 0:
                ax.set_ylabel("accuracy (test)")
            ax.grid(alpha=0.3)
    handles = {}
    for ax in axes.ravel():
        for h, lab in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(lab, h)
    fig.legend(list(handles.values()), list(handles.keys()), loc="lower center",
               ncol=3, fontsize=8)  # fmt: skip
    fig.tight_layout(rect=(0, 0.16, 1, 1))
    fig.savefig(OUT / "fairness_tradeoff.png", dpi=100)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--quick", action="store_true", help="2 seeds, epsilon 1 and inf")
    p.add_argument("--max-minutes", type=float, default=90.0)
    p.add_argument("--only-models", default="", help="names separated by ;")
    p.add_argument("--epsilons", default="")
    p.add_argument("--report", action="store_true", help="only rebuild the report")
    p.add_argument("--no-references", action="store_true")
    p.add_argument("--datasets", default="", help="names separated by ;")
    args = p.parse_args(argv)
    if not args.report:
        models = [m for m in args.only_models.split(";") if m] or list(PRIVATE_MODELS)
        eps = EPSILONS
        if args.epsilons:
            eps = tuple(float(e) for e in args.epsilons.split(","))
        seeds = args.seeds
        if args.quick:
            seeds, eps = 2, (1.0, math.inf)
        print(f"# {platform.node()} {time.strftime('%Y-%m-%d %H:%M:%S')}", flush=True)
        datasets = [d for d in args.datasets.split(";") if d]
        run(seeds, eps, models, args.max_minutes, not args.no_references, datasets)
    write_report(_load())


if __name__ == "__main__":
    main()
