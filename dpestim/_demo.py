"""``python -m dpestim``: what privacy costs, on real data, in a minute or two.

About a minute of CPU on the first run (61 s, median of 3 on empty numba and
calibration caches: a third of it compiling the kernels, which numba then
caches) and 37 s on later runs (``benchmarks/speed/demo.py``).

Fits the solvers worth considering first at epsilon 0.5, 1, 2 and inf
(delta = 1e-5) for LogisticRegression on Adult (LIBSVM a9a, 32,561 training
records) and Ridge on California housing, from the shared datasets folder
(``DPESTIM_DATA``), beside scikit-learn's non-private model and the trivial
baseline (majority class, or the training mean). Without that folder it falls
back to scikit-learn's bundled digits and diabetes datasets. Prints a short
table (median, i.e. mean, of two seeds) and writes a privacy-utility plot.

``--full`` runs the whole matrix instead: every estimator (LogisticRegression,
LinearSVC, Ridge) x every solver x epsilon in 0.1, 0.5, 1, 2, inf.
"""

import argparse
import math
import statistics
import time
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.model_selection import train_test_split

from . import LinearSVC, LogisticRegression, Ridge
from .datasets import (
    dataset_available,
    get_data_home,
    load_adult_a9a,
    load_california_housing,
)
from .solvers import SOLVERS
from .solvers.accelerated import AcceleratedSolver
from .utils._progress import progress_bar

EPSILONS = (0.5, 1.0, 2.0, math.inf)
FULL_EPSILONS = (0.1, 0.5, 1.0, 2.0, math.inf)
DELTA = 1e-5
#: Two seeds per cell (three cost half as much fitting again, mostly in the
#: pure-DP full-batch fits, and kept the first run above a minute of CPU).
SEEDS = (0, 1)

#: What the demo compares (see doc/solvers.rst): DP-SGD (what
#: ``solver="auto"`` picks on both tasks), private coordinate descent,
#: AdaGrad-norm steps on noisy gradients, and one pure-DP (delta = 0)
#: full-batch solver, dp-nag-opt: a research solver (``"auto"`` picks dp-gd
#: under delta = 0, within about half a point of it on Adult at epsilon 1),
#: shown because its non-private limit costs a third of dp-gd's CPU (8 s
#: against 22 s on Adult), which keeps the demo near a minute.
QUICK_SOLVERS = ("dp-sgd", "dp-scd", "adp-adagrad", "dp-nag-opt")


def _classification_data():
    if dataset_available("adult_a9a"):
        d = load_adult_a9a()
        return "Adult (a9a)", d.data, d.target, d.data_test, d.target_test
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    X = X / 16.0  # public pixel range, not a statistic of the data
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, random_state=0)
    return "digits (bundled)", Xtr, ytr, Xte, yte


def _regression_data():
    if dataset_available("california_housing"):
        d = load_california_housing()
        return (
            "California housing",
            d.data_train,
            d.target_train,
            d.data_test,
            d.target_test,
        )
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True)
    y = y / 100.0  # public unit change
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.2, random_state=0)
    return "diabetes (bundled)", Xtr, ytr, Xte, yte


def _tasks(estimators):
    """``(estimator class, extra params, dataset name, data)``."""
    cname, X, y, Xt, yt = _classification_data()
    classes = np.unique(np.concatenate([y, yt]))  # public label set of the task
    rname, R, r, Rt, rt = _regression_data()
    table = {
        "LogisticRegression": (
            LogisticRegression,
            dict(classes=classes),
            cname,
            (X, y, Xt, yt),
        ),
        "LinearSVC": (
            LinearSVC,
            dict(classes=classes),
            cname,
            (X, y, Xt, yt),
        ),
        "Ridge": (Ridge, {}, rname, (R, r, Rt, rt)),
    }
    return [table[name] for name in estimators]


def _fit_score(est, data):
    X, y, Xt, yt = data
    start = time.process_time()
    with warnings.catch_warnings():
        # the demo fixes seeds for a reproducible table: the reports say that
        # a seeded fit is not a release; keep the table readable
        warnings.simplefilter("ignore")
        est.fit(X, y)
    return est.score(Xt, yt), time.process_time() - start


def _baselines(est_cls, name, data):
    """scikit-learn's non-private model and the trivial one (not private)."""
    from sklearn.dummy import DummyClassifier, DummyRegressor
    from sklearn.linear_model import LogisticRegression as SkLogistic
    from sklearn.linear_model import Ridge as SkRidge
    from sklearn.svm import LinearSVC as SkSVC

    X, y, Xt, yt = data
    if sp.issparse(X):  # liblinear takes 32-bit sparse indices only
        X, Xt = (
            sp.csr_matrix((A.data, A.indices.astype(np.int32), A.indptr), A.shape)
            for A in (X, Xt)
        )
    regression = est_cls is Ridge
    models = {
        "scikit-learn": {
            "LogisticRegression": SkLogistic(max_iter=1000),
            "LinearSVC": SkSVC(),
            "Ridge": SkRidge(alpha=1.0),
        }[est_cls.__name__],
        "constant" if regression else "majority": (
            DummyRegressor() if regression else DummyClassifier()
        ),
    }
    rows = []
    for solver, model in models.items():
        start = time.process_time()
        model.fit(X, y)
        rows.append(
            dict(
                estimator=est_cls.__name__,
                dataset=name,
                solver=solver,
                notion="non-private",
                epsilon=math.inf,
                target_epsilon=math.inf,
                delta=0.0,
                metric="R^2" if regression else "accuracy",
                score=model.score(Xt, yt),
                seconds=time.process_time() - start,
            )
        )
    return rows


def run(
    epsilons=EPSILONS,
    *,
    solvers=QUICK_SOLVERS,
    estimators=("LogisticRegression", "Ridge"),
    seeds=SEEDS,
    progress=True,
):
    """Fit estimators x solvers x epsilons; return one row per cell.

    Each private row holds the median score over ``seeds`` and the median
    CPU seconds of one fit; ``baselines`` rows (scikit-learn, trivial) are
    appended per estimator.
    """
    tasks = _tasks(estimators)
    cells = []
    for est_cls, extra, name, data in tasks:
        for solver in solvers:
            probe = est_cls(solver=solver, **extra)
            if probe._loss_name in SOLVERS[solver].supported_losses:
                cells.append((est_cls, extra, name, data, solver))
    total = len(cells) * len(epsilons) * len(seeds) + 2 * len(tasks)
    rows, baselines = [], []
    with progress_bar(
        total=total, desc="dpestim demo", unit="fit", disable=not progress
    ) as bar:
        for est_cls, _, name, data in tasks:
            baselines.extend(_baselines(est_cls, name, data))
            bar.update(2)
        for est_cls, extra, name, data, solver in cells:
            for eps in epsilons:
                scores, seconds = [], []
                # a full-batch solver without noise draws no random numbers:
                # its epsilon = inf fit is the same for every seed, run once
                once = math.isinf(eps) and issubclass(
                    SOLVERS[solver], AcceleratedSolver
                )
                for seed in seeds:
                    if once and scores:
                        scores.append(scores[0])
                        seconds.append(seconds[0])
                        bar.update()
                        continue
                    est = est_cls(
                        epsilon=eps,
                        delta=DELTA,
                        solver=solver,
                        random_state=seed,
                        **extra,
                    )
                    score, cpu = _fit_score(est, data)
                    scores.append(score)
                    seconds.append(cpu)
                    bar.update()
                rows.append(
                    dict(
                        estimator=est_cls.__name__,
                        dataset=name,
                        solver=solver,
                        notion="pure" if est.delta_ == 0 else "approx",
                        epsilon=est.epsilon_,
                        target_epsilon=eps,
                        delta=est.delta_,  # 0 for pure-DP (Laplace) solvers
                        metric="R^2" if est_cls is Ridge else "accuracy",
                        score=statistics.median(scores),
                        seconds=statistics.median(seconds),
                        n_seeds=len(seeds),
                        seed_scores=dict(zip(seeds, scores)),
                        seed_seconds=dict(zip(seeds, seconds)),
                    )
                )
    return rows + baselines


def _cell(value):
    return "" if value is None else f"{value:.3f}".replace("-0.000", "0.000")


def format_table(rows, epsilons=EPSILONS):
    """One block per estimator: a row per solver, a column per epsilon."""
    blocks = []
    for est in dict.fromkeys(r["estimator"] for r in rows):
        sel = [r for r in rows if r["estimator"] == est]
        head = (
            f"{est} on {sel[0]['dataset']}: test {sel[0]['metric']} "
            f"(median of {sel[0]['n_seeds']} seeds; delta = {DELTA:g} for approx DP)"
        )
        eps_cols = "".join(
            f"{'eps=' + ('inf' if math.isinf(e) else f'{e:g}'):>9}" for e in epsilons
        )
        header = f"{'solver':<14}{'DP':<13}{eps_cols}{'CPU s/fit':>11}"
        lines = [head, header, "-" * len(header)]
        for solver in dict.fromkeys(r["solver"] for r in sel):
            cells = {r["target_epsilon"]: r for r in sel if r["solver"] == solver}
            first = next(iter(cells.values()))
            if first["notion"] == "non-private":
                values = "".join(
                    f"{_cell(first['score']) if math.isinf(e) else '':>9}"
                    for e in epsilons
                )
            else:
                values = "".join(
                    f"{_cell(cells[e]['score'] if e in cells else None):>9}"
                    for e in epsilons
                )
            seconds = statistics.median(r["seconds"] for r in cells.values())
            notion = {"pure": "pure (d=0)", "approx": "(eps, delta)"}.get(
                first["notion"], first["notion"]
            )
            lines.append(f"{solver:<14}{notion:<13}{values}{seconds:>11.2f}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


# Distinct colour and marker per series (matplotlib's colour-blind-safe
# tab10 extended with tab20's dark shades), so no two solvers look alike.
_COLOURS = (
    "#1f77b4 #ff7f0e #2ca02c #d62728 #9467bd #8c564b #e377c2 #17becf "
    "#bcbd22 #393b79 #637939 #c51b7d #7b4173 #3182bd"
).split()
_MARKERS = "o s ^ D v P X < > h * p d 8".split()


def plot(rows, path):
    """Privacy-utility plot (score against epsilon); needs matplotlib."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = list(dict.fromkeys((r["estimator"], r["dataset"]) for r in rows))
    private = [r for r in rows if r["notion"] != "non-private"]
    solvers = list(dict.fromkeys(r["solver"] for r in private))
    finite = sorted({r["target_epsilon"] for r in private} - {math.inf})
    x_inf = finite[-1] * 2.2  # where epsilon = inf is drawn
    fig, axes = plt.subplots(
        1, len(panels), figsize=(4.6 * len(panels), 4.0), squeeze=False
    )
    for ax, (est, dataset) in zip(axes[0], panels):
        sel = [r for r in rows if (r["estimator"], r["dataset"]) == (est, dataset)]
        shown = []
        for i, solver in enumerate(solvers):
            pts = sorted(
                (r["target_epsilon"], r["score"]) for r in sel if r["solver"] == solver
            )
            if not pts:
                continue
            xs = [x_inf if math.isinf(e) else e for e, _ in pts]
            ys = [s for _, s in pts]
            style = dict(color=_COLOURS[i % 14], marker=_MARKERS[i % 14], ms=6)
            pure = any(r["notion"] == "pure" for r in sel if r["solver"] == solver)
            ax.plot(
                xs[:-1] if math.isinf(pts[-1][0]) else xs,
                ys[:-1] if math.isinf(pts[-1][0]) else ys,
                ls="--" if pure else "-",
                label=f"{solver} ({'pure DP' if pure else 'approx. DP'})",
                **style,
            )
            if math.isinf(pts[-1][0]):
                ax.plot([xs[-1]], [ys[-1]], ls="none", **style)
            shown.extend(ys)
        for r in sel:
            if r["notion"] == "non-private":
                grey = r["solver"] != "scikit-learn"
                ax.axhline(
                    r["score"],
                    color="0.55" if grey else "black",
                    ls=":" if grey else "-.",
                    lw=1.2,
                    label=(
                        "trivial baseline (majority class / training mean)"
                        if grey
                        else "scikit-learn (non-private)"
                    ),
                )
                shown.append(r["score"])
        lo, hi = min(shown), max(shown)
        if sel[0]["metric"] == "R^2" and lo < -0.5:
            lo = -0.5  # a useless model would flatten the rest
            ax.annotate(
                "R^2 below -0.5 off the chart",
                (0.02, 0.02),
                xycoords="axes fraction",
                fontsize=7,
                color="0.4",
            )
        pad = 0.08 * (hi - lo or 1.0)
        ax.set_ylim(lo - pad, hi + pad)
        ax.set_xscale("log")
        ticks = finite + [x_inf]
        ax.set_xticks(ticks)
        ax.set_xticklabels([f"{e:g}" for e in finite] + ["inf"])
        ax.minorticks_off()
        ax.set_xlabel(f"epsilon (delta = {DELTA:g} for approx. DP)")
        ax.set_ylabel(f"test {sel[0]['metric']}")
        ax.set_title(f"{est} on {dataset}", fontsize=10)
        ax.grid(alpha=0.3)
    handles, labels = axes[0][0].get_legend_handles_labels()
    for ax in axes[0][1:]:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    fig.legend(
        handles,
        labels,
        loc="lower center",
        ncol=min(4, len(labels)),
        fontsize=8,
        frameon=False,
    )
    n_rows = math.ceil(len(labels) / 4)
    fig.tight_layout(rect=(0, 0.02 + 0.045 * n_rows, 1, 1))
    fig.savefig(path, dpi=120)
    plt.close(fig)


def to_records(rows):
    """Rows as records of the defaults-benchmark schema (one per seed).

    The schema of ``benchmarks/results/defaults.json``: estimator, solver,
    dataset, epsilon (the string ``"inf"`` for the non-private limit), seed,
    metric (``accuracy`` or ``r2``), score, fit_cpu_s.
    """
    out = []
    for r in rows:
        seeds = r.get("seed_scores") or {0: r["score"]}
        for seed, score in seeds.items():
            eps = r["target_epsilon"]
            out.append(
                dict(
                    estimator=r["estimator"],
                    solver="sklearn" if r["solver"] == "scikit-learn" else r["solver"],
                    dataset=r["dataset"],
                    epsilon="inf" if math.isinf(eps) else eps,
                    seed=int(seed),
                    metric="r2" if r["metric"] == "R^2" else "accuracy",
                    score=float(score),
                    fit_cpu_s=float(r.get("seed_seconds", {}).get(seed, r["seconds"])),
                )
            )
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m dpestim",
        description=__doc__,
        formatter_class=argparse.RawTextHelpFormatter,
    )
    parser.add_argument(
        "--plot",
        default="dpestim_demo.png",
        help="where to write the privacy-utility plot",
    )
    parser.add_argument("--no-plot", action="store_true")
    parser.add_argument(
        "--full",
        action="store_true",
        help="every estimator x solver x epsilon (several minutes)",
    )
    parser.add_argument(
        "--seeds",
        type=int,
        default=None,
        help="seeds per cell (default: 2, or 1 with --full)",
    )
    parser.add_argument(
        "--json",
        default=None,
        help="also write the results as JSON records (defaults-benchmark schema)",
    )
    args = parser.parse_args(argv)
    print(
        f"dpestim demo; datasets folder: {get_data_home()} "
        "(set DPESTIM_DATA to change it)\n",
        flush=True,
    )
    wall, cpu = time.perf_counter(), time.process_time()
    if args.full:
        epsilons = FULL_EPSILONS
        rows = run(
            epsilons,
            solvers=sorted(SOLVERS),
            estimators=("LogisticRegression", "LinearSVC", "Ridge"),
            seeds=tuple(range(args.seeds or 1)),
        )
    else:
        epsilons = EPSILONS
        rows = run(epsilons, seeds=tuple(range(args.seeds or len(SEEDS))))
    print(format_table(rows, epsilons))
    print(
        f"\ntotal {time.perf_counter() - wall:.1f} s wall, "
        f"{time.process_time() - cpu:.1f} s CPU (including numba compilation on "
        "a cold cache and noise calibration)"
    )
    if args.json:
        import json
        import sys

        meta = dict(
            command="python -m dpestim "
            + " ".join(sys.argv[1:] if argv is None else argv),
            date=time.strftime("%Y-%m-%d"),
            delta=DELTA,
        )
        with open(args.json, "w") as f:
            json.dump(dict(meta=meta, records=to_records(rows)), f, indent=1)
        print(f"results written to {args.json}")
    if not args.no_plot:
        try:
            plot(rows, args.plot)
            print(f"privacy-utility plot written to {args.plot}")
        except ImportError:
            print('matplotlib is not installed: no plot (pip install ".[demo]")')
    return 0
