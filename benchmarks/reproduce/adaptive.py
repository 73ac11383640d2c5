"""Reproduction: adaptive private SGD (Wu et al., 2021) on convex models.

The paper's experiments are CNNs on CIFAR-10; no table involves a convex
model. This script runs the convex proxy target of the spec (section 5.8)
through dpestim's public API, comparing ``adp-sgd`` (noise ``sigma_t``
proportional to ``eta_t^-1/2``) with DP-SGD *with the same decaying step
sizes* (``ADPSGD(noise_shape="constant")``, the paper's DP-SGD baseline):

* data: ``make_classification(n_samples=15000, n_features=1000,
  n_informative=200, n_redundant=0, class_sep=1.0, flip_y=0.02,
  random_state=1)``, features divided by ``sqrt(d)``, 5,000 train / 10,000
  test; binary ``LogisticRegression``, ``alpha=0``, intercept fitted;
* the paper's recipe: batch 256, ``eta_t = 1 / sqrt(20 + t)``
  (``learning_rate=1/sqrt(20)``, ``a=20``, ``c=1``), clip norm 1 and 0.5,
  60 and 200 epochs; Poisson sampling (dpestim's), last-iterate test accuracy
  (the paper's "best over checkpoints" selection on the test split is not
  private and is not used);
* part (a): the noise of the paper's formula (eq. 18, ``epsilon = 16
  epsilon_bar``) at ``epsilon_bar`` in {0.8, 1.6}, passed as
  ``noise_multiplier``; the estimator reports the epsilon our accountant
  (RDP, add/remove-one) certifies for each run;
* part (b): equal true budget ``(epsilon, delta) = (1, 1e-5)`` and
  ``(4, 1e-5)``, noise calibrated by dpestim for each solver;
* part (c): MNIST multinomial logistic regression at epsilon in {0.5, 1, 2};
* part (d): ``adp-adagrad`` (AdaGrad-norm on the released noisy gradient,
  ``b0_sq=1``, ``alpha_growth=0.05``) against the same solver with constant
  noise, at epsilon in {0.25, 1} (60 epochs, clip 1); in the tables "adp-sgd"
  / "dp-sgd" then mean adaptive / constant noise.

Usage::

    python benchmarks/reproduce/adaptive.py --parts ab     # synthetic parts
    python benchmarks/reproduce/adaptive.py --parts c      # MNIST
    python benchmarks/reproduce/adaptive.py --quick        # small check
    python benchmarks/reproduce/adaptive.py --from-log results/x.log.jsonl ...
        # tables and plot from the rows logged so far (e.g. an unfinished run)

Run it from the repository root with ``PYTHONPATH=.`` so that this checkout
of dpestim is imported.

Writes ``benchmarks/results/reproduce_adaptive_<parts>.{json,md,png}``
(``_quick`` suffix with ``--quick``).
"""

import argparse
import json
import logging
import math
import os
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression as SkLogisticRegression

from dpestim import LogisticRegression
from dpestim.exceptions import PrivacyBudgetWarning
from dpestim.losses import LOGISTIC
from dpestim.solvers import ADPSGD, ADPAdaGrad, ERMPlan
from dpestim.solvers.sgd.adp_sgd import paper_noise_multiplier

RESULTS = Path(
    os.environ.get("DPESTIM_BENCH_RESULTS")
    or Path(__file__).resolve().parents[1] / "results"
)
DELTA = 1e-5
BATCH = 256
LR = 1.0 / math.sqrt(20.0)


def synthetic():
    X, y = make_classification(
        n_samples=15000,
        n_features=1000,
        n_informative=200,
        n_redundant=0,
        class_sep=1.0,
        flip_y=0.02,
        random_state=1,
    )
    X = X / math.sqrt(X.shape[1])
    return X[:5000], y[:5000], X[5000:], y[5000:]


def solvers():
    return {
        "adp-sgd": ADPSGD("invsqrt", a=20.0, c=1.0, n_noise_levels=16),
        "dp-sgd": ADPSGD("invsqrt", a=20.0, c=1.0, noise_shape="constant"),
    }


def _plan(n, d, epochs, clip):
    return ERMPlan(
        n_samples=n,
        n_features=d,
        n_outputs=1,
        loss=LOGISTIC,
        alpha=0.0,
        fit_intercept=True,
        clip_norm=clip,
        max_iter=epochs,
        batch_size=BATCH,
        learning_rate=LR,
    )


def _fit(solver, X, y, Xt, yt, *, epochs, clip, seed, epsilon, noise, classes):
    clf = LogisticRegression(
        epsilon=epsilon,
        noise_multiplier=noise,
        delta=DELTA,
        clip_norm=clip,
        alpha=0.0,
        max_iter=epochs,
        batch_size=BATCH,
        learning_rate=LR,
        solver=solver,
        classes=classes,
        random_state=seed,
    )
    start = time.perf_counter()
    clf.fit(X, y)
    return dict(
        accuracy=float(clf.score(Xt, yt)),
        epsilon_=float(clf.epsilon_),
        noise_multiplier_=float(clf.noise_multiplier_),
        steps=int(clf.n_iter_),
        seconds=time.perf_counter() - start,
    )


def _record(rows, log, res, **keys):
    """Append (and log) one result row: the configuration keys and ``res``."""
    row = dict(**keys, **res)
    rows.append(row)
    log(row)


def run_synthetic(part, seeds, epochs_list, clips, log):
    X, y, Xt, yt = synthetic()
    n, d = X.shape
    rows = []
    budgets = (0.8, 1.6) if part == "a" else (1.0, 4.0)
    for clip in clips:
        for budget in budgets:
            for epochs in epochs_list:
                plan = _plan(n, d, epochs, clip)
                for name, solver in solvers().items():
                    if part == "a":
                        shape = solver.noise_scales(plan)
                        with warnings.catch_warnings(record=True) as caught:
                            warnings.simplefilter("always")
                            noise = paper_noise_multiplier(
                                budget, DELTA, n, BATCH, shape
                            )
                        cond = not any(
                            issubclass(w.category, PrivacyBudgetWarning) for w in caught
                        )
                        kw = dict(epsilon=None, noise=noise)
                    else:
                        cond = None
                        kw = dict(epsilon=budget, noise=None)
                    for seed in range(seeds):
                        res = _fit(
                            solver,
                            X,
                            y,
                            Xt,
                            yt,
                            epochs=epochs,
                            clip=clip,
                            seed=seed,
                            classes=[0, 1],
                            **kw,
                        )
                        _record(rows, log, res, part=part, dataset="synthetic",
                                solver=name, clip=clip, budget=budget, epochs=epochs,
                                seed=seed, paper_condition_holds=cond)  # fmt: skip
    return rows


def run_adagrad(seeds, epochs_list, epsilons, log):
    """Part (d): AdaGrad-norm on the released gradient, ADP vs DP noise."""
    X, y, Xt, yt = synthetic()
    rows = []
    kw = dict(b0_sq=1.0, alpha_growth=0.05)
    pair = {
        "adp-sgd": ADPAdaGrad(**kw, n_noise_levels=16),
        "dp-sgd": ADPAdaGrad(**kw, noise_shape="constant"),
    }
    for eps in epsilons:
        for epochs in epochs_list:
            for name, solver in pair.items():
                for seed in range(seeds):
                    res = _fit(
                        solver, X, y, Xt, yt, epochs=epochs, clip=1.0, seed=seed,
                        epsilon=eps, noise=None, classes=[0, 1],
                    )  # fmt: skip
                    _record(rows, log, res, part="d", dataset="synthetic-adagrad",
                            solver=name, clip=1.0, budget=eps, epochs=epochs,
                            seed=seed, paper_condition_holds=None)  # fmt: skip
    return rows


def run_mnist(seeds, epochs, epsilons, log, clip=1.0):
    from dpestim.datasets import load_mnist

    data = load_mnist()
    X, y, Xt, yt = data.data, data.target, data.data_test, data.target_test
    rows = []
    for eps in epsilons:
        for name, solver in solvers().items():
            for seed in range(seeds):
                clf_kw = dict(epochs=epochs, clip=clip, seed=seed, epsilon=eps)
                res = _fit(
                    solver, X, y, Xt, yt, noise=None, classes=list(range(10)), **clf_kw
                )
                _record(rows, log, res, part="c", dataset="mnist", solver=name,
                        clip=clip, budget=eps, epochs=epochs, seed=seed,
                        paper_condition_holds=None)  # fmt: skip
    return rows


def summarise(rows):
    """Mean/std per configuration and the ADP - DP gap."""
    groups = {}
    for r in rows:
        key = (r["part"], r["dataset"], r["clip"], r["budget"], r["epochs"])
        groups.setdefault(key, {}).setdefault(r["solver"], []).append(r)
    out = []
    for key, by_solver in sorted(groups.items()):
        entry = dict(zip(("part", "dataset", "clip", "budget", "epochs"), key))
        for name, rs in by_solver.items():
            acc = np.array([r["accuracy"] for r in rs])
            entry[f"{name}_mean"] = float(acc.mean())
            entry[f"{name}_std"] = float(acc.std(ddof=1)) if acc.size > 1 else 0.0
            entry[f"{name}_eps"] = float(np.mean([r["epsilon_"] for r in rs]))
            entry[f"{name}_noise"] = float(rs[0]["noise_multiplier_"])
            entry[f"{name}_seeds"] = int(acc.size)
            entry[f"{name}_paper_condition_holds"] = rs[0]["paper_condition_holds"]
        if "adp-sgd_mean" in entry and "dp-sgd_mean" in entry:
            entry["gap_points"] = 100 * (entry["adp-sgd_mean"] - entry["dp-sgd_mean"])
            # paired by seed (same random_state for both solvers)
            adp = {r["seed"]: r["accuracy"] for r in by_solver["adp-sgd"]}
            dp = {r["seed"]: r["accuracy"] for r in by_solver["dp-sgd"]}
            diffs = [100 * (adp[k] - dp[k]) for k in adp if k in dp]
            entry["gap_paired_sd"] = (
                float(np.std(diffs, ddof=1)) if len(diffs) > 1 else float("nan")
            )
        out.append(entry)
    return out


def to_markdown(summary, header):
    lines = [header, ""]
    head = (
        "| part | data | clip | budget | epochs | ADP acc (%) | DP acc (%) "
        "| gap (pts, paired sd) | ADP eps_ | DP eps_ | ADP s | DP s | seeds ADP/DP |"
    )
    lines += [head, "|" + "---|" * 13]

    def acc(e, name):
        if f"{name}_mean" not in e:
            return "not run"
        return f"{100 * e[name + '_mean']:.2f} ± {100 * e[name + '_std']:.2f}"

    def num(e, key):
        return f"{e[key]:.4g}" if key in e else "-"

    for e in summary:
        budget = (
            f"eps_bar={e['budget']:g}" if e["part"] == "a" else f"eps={e['budget']:g}"
        )
        failed = [
            label
            for label, name in (("ADP", "adp-sgd"), ("DP", "dp-sgd"))
            if e.get(f"{name}_paper_condition_holds") is False
        ]
        if failed:
            budget += f" (paper cond. fails: {'/'.join(failed)})"
        gap = "-"
        if "gap_points" in e:
            gap = f"{e['gap_points']:+.2f} ({e['gap_paired_sd']:.2f})"
        lines.append(
            f"| {e['part']} | {e['dataset']} | {e['clip']:g} | {budget} | "
            f"{e['epochs']} | {acc(e, 'adp-sgd')} | {acc(e, 'dp-sgd')} | {gap} | "
            f"{num(e, 'adp-sgd_eps')} | {num(e, 'dp-sgd_eps')} | "
            f"{num(e, 'adp-sgd_noise')} | {num(e, 'dp-sgd_noise')} | "
            f"{e.get('adp-sgd_seeds', 0)}/{e.get('dp-sgd_seeds', 0)} |"
        )
    return "\n".join(lines)


def plot(summary, path):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    parts = sorted({e["part"] for e in summary})
    fig, axes = plt.subplots(1, len(parts), figsize=(5 * len(parts), 4), squeeze=False)
    for ax, part in zip(axes[0], parts):
        es = [e for e in summary if e["part"] == part]
        # x: epochs for the synthetic parts, the budget for MNIST
        xkey, series = ("budget", "epochs") if part == "c" else ("epochs", "budget")
        for clip in sorted({e["clip"] for e in es}):
            for other in sorted({e[series] for e in es}):
                sel = sorted(
                    (e for e in es if e["clip"] == clip and e[series] == other),
                    key=lambda e: e[xkey],
                )
                for name, style in (("adp-sgd", "-o"), ("dp-sgd", "--s")):
                    got = [e for e in sel if f"{name}_mean" in e]
                    ax.errorbar(
                        [e[xkey] for e in got],
                        [100 * e[f"{name}_mean"] for e in got],
                        yerr=[100 * e[f"{name}_std"] for e in got],
                        fmt=style,
                        capsize=3,
                        label=f"{name} C={clip:g} {series}={other:g}",
                    )
        ax.set_title(f"part ({part})")
        ax.set_xlabel("epsilon (MNIST)" if part == "c" else "epochs")
        ax.set_ylabel("test accuracy (%, last iterate)")
        ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--parts", default="ab", help="any of a, b, c, d")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--seeds", type=int, default=None)
    parser.add_argument("--mnist-epochs", type=int, default=None)
    parser.add_argument("--mnist-clip", type=float, default=1.0)
    parser.add_argument("--mnist-eps", type=float, nargs="+", default=[0.5, 1.0, 2.0])
    parser.add_argument("--tag", default="", help="suffix of the output files")
    parser.add_argument(
        "--from-log",
        nargs="+",
        default=None,
        help="summarise the rows of these .log.jsonl files instead of running",
    )
    args = parser.parse_args()
    if args.from_log:
        rows = []
        for path in args.from_log:
            rows += [json.loads(line) for line in Path(path).read_text().splitlines()]
        summary = summarise(rows)
        stem = RESULTS / "reproduce_adaptive_summary"
        md = to_markdown(summary, f"Summary of {', '.join(args.from_log)}")
        print(md)
        stem.with_suffix(".md").write_text(md + "\n")
        stem.with_suffix(".json").write_text(json.dumps(summary, indent=1))
        plot(summary, stem.with_suffix(".png"))
        return
    logging.getLogger("absl").setLevel(logging.ERROR)
    warnings.simplefilter("ignore", PrivacyBudgetWarning)
    seeds = args.seeds or (2 if args.quick else 5)
    epochs_list = (3, 10) if args.quick else (60, 200)
    clips = (1.0,) if args.quick else (1.0, 0.5)
    suffix = args.parts + ("_quick" if args.quick else "") + args.tag
    RESULTS.mkdir(exist_ok=True)
    stem = RESULTS / f"reproduce_adaptive_{suffix}"
    rows = []
    log_path = stem.with_suffix(".log.jsonl")
    log_file = log_path.open("w")

    def log(row):
        print(json.dumps(row), flush=True)
        log_file.write(json.dumps(row) + "\n")
        log_file.flush()

    started = time.time()
    for part in "ab":
        if part in args.parts:
            rows += run_synthetic(part, seeds, epochs_list, clips, log)
    if "c" in args.parts:
        mnist_epochs = args.mnist_epochs or (1 if args.quick else 20)
        mnist_seeds = args.seeds or (1 if args.quick else 3)
        rows += run_mnist(
            mnist_seeds, mnist_epochs, args.mnist_eps, log, clip=args.mnist_clip
        )
    if "d" in args.parts:
        rows += run_adagrad(seeds, epochs_list[:1], (0.25, 1.0), log)
    summary = summarise(rows)
    header = (
        f"Adaptive private SGD reproduction (parts {args.parts}"
        f"{', quick' if args.quick else ''}; {time.time() - started:.0f} s)"
    )
    md = to_markdown(summary, header)
    if "a" in args.parts or "b" in args.parts:
        X, y, Xt, yt = synthetic()
        ref = SkLogisticRegression(max_iter=2000).fit(X, y).score(Xt, yt)
        md += f"\n\nNon-private sklearn LogisticRegression (C=1): {100 * ref:.2f}%"
    print(md)
    stem.with_suffix(".md").write_text(md + "\n")
    stem.with_suffix(".json").write_text(
        json.dumps(dict(rows=rows, summary=summary), indent=1)
    )
    plot(summary, stem.with_suffix(".png"))


if __name__ == "__main__":
    main()
