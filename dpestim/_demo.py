"""``python -m dpestim``: privacy-utility table of every estimator x solver.

Fits LogisticRegression and LinearSVC on Adult (LIBSVM a9a, 32,561 training
records) and Ridge on California housing from the shared datasets folder
(``DPESTIM_DATA``). Without that folder it falls back to scikit-learn's
bundled digits (10 classes, pixels scaled by their public maximum 16) and
diabetes datasets. Prints solver, epsilon, delta, test accuracy or R^2 and
fit time, and writes a privacy-utility plot when matplotlib is installed.
"""

import argparse
import math
import time

import numpy as np
from sklearn.model_selection import train_test_split

from . import LinearSVC, LogisticRegression, Ridge
from .datasets import (
    dataset_available,
    get_data_home,
    load_adult_a9a,
    load_california_housing,
)
from .solvers import SOLVERS

EPSILONS = (0.1, 0.5, 1.0, 2.0, math.inf)
DELTA = 1e-5

# Per-solver schedule: dp-sgd counts epochs of Poisson batches, dp-gd and the
# accelerated solvers count full-batch iterations (Laplace, pure DP: their
# clip_norm is an L1 bound). Chosen once on public defaults, not tuned per epsilon.
SCHEDULES = {
    "dp-sgd": dict(max_iter=10, batch_size=256, learning_rate=0.5),
    "dp-gd": dict(max_iter=100, learning_rate=2.0),
    # dp-scd: no learning rate; clip_norm in residual units (clip_mode="relative")
    "dp-scd": dict(max_iter=10, batch_size=256),
    # the paper's sequential baseline: its sensitivity grows with the batch,
    # so batch 1 and a small clip (spec 002, section 6.6)
    "seq-dp-scd": dict(max_iter=2, batch_size=1, clip_norm=1e-3),
    "adp-sgd": dict(max_iter=10, batch_size=256, learning_rate=0.5),
    "adp-adagrad": dict(max_iter=10, batch_size=256, learning_rate=0.5),
    "dp-lssgd": dict(max_iter=10, batch_size=256, learning_rate=0.5),
    # single pass; l1_radius and feature_bound live on the solver object
    "dp-smd-sco": dict(),
    "dp-hb": dict(max_iter=100, learning_rate=2.0),
    "dp-nag": dict(max_iter=100, learning_rate=2.0),
    "dp-nag-opt": dict(max_iter=100, learning_rate=2.0),
    "dp-masg": dict(max_iter=100, learning_rate=2.0),
    "dp-masg-opt": dict(max_iter=100, learning_rate=2.0),
}
REGRESSION_SCHEDULES = {
    "dp-sgd": dict(max_iter=10, batch_size=256, learning_rate=0.5, clip_norm=3.0),
    "dp-gd": dict(max_iter=100, learning_rate=0.5, clip_norm=3.0),
    "dp-scd": dict(max_iter=10, batch_size=256),
    "seq-dp-scd": dict(max_iter=2, batch_size=1, clip_norm=1e-3),
    "adp-sgd": dict(max_iter=10, batch_size=256, learning_rate=0.5, clip_norm=3.0),
    "adp-adagrad": dict(max_iter=10, batch_size=256, learning_rate=0.5, clip_norm=3.0),
    "dp-lssgd": dict(max_iter=10, batch_size=256, learning_rate=0.5, clip_norm=3.0),
    "dp-hb": dict(max_iter=100, learning_rate=0.5, clip_norm=3.0),
    "dp-nag": dict(max_iter=100, learning_rate=0.5, clip_norm=3.0),
    "dp-nag-opt": dict(max_iter=100, learning_rate=0.5, clip_norm=3.0),
    "dp-masg": dict(max_iter=100, learning_rate=0.5, clip_norm=3.0),
    "dp-masg-opt": dict(max_iter=100, learning_rate=0.5, clip_norm=3.0),
}


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
        X, y, name = d.data, d.target, "California housing"
    else:
        from sklearn.datasets import load_diabetes

        X, y = load_diabetes(return_X_y=True)
        y = y / 100.0  # public unit change
        name = "diabetes (bundled)"
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.2, random_state=0)
    return name, Xtr, ytr, Xte, yte


def run(epsilons=EPSILONS, random_state=0):
    """Fit every estimator x solver x epsilon; return a list of result rows."""
    rows = []
    cname, X, y, Xt, yt = _classification_data()
    classes = np.unique(np.concatenate([y, yt]))  # public label set of the task
    rname, R, r, Rt, rt = _regression_data()
    tasks = [
        (LogisticRegression, dict(classes=classes), cname, X, y, Xt, yt, SCHEDULES),
        (LinearSVC, dict(classes=classes), cname, X, y, Xt, yt, SCHEDULES),
        (Ridge, {}, rname, R, r, Rt, rt, REGRESSION_SCHEDULES),
    ]
    for est_cls, extra, data_name, Xa, ya, Xb, yb, schedules in tasks:
        for solver in sorted(SOLVERS):
            probe = est_cls(solver=solver, **extra)
            if probe._loss_name not in SOLVERS[solver].supported_losses:
                continue  # e.g. smooth-loss solvers and the hinge loss
            for eps in epsilons:
                est = est_cls(
                    epsilon=eps,
                    delta=DELTA,
                    solver=solver,
                    random_state=random_state,
                    **extra,
                    **schedules[solver],
                )
                start = time.perf_counter()
                est.fit(Xa, ya)
                seconds = time.perf_counter() - start
                rows.append(
                    dict(
                        estimator=est_cls.__name__,
                        dataset=data_name,
                        solver=solver,
                        epsilon=est.epsilon_,
                        target_epsilon=eps,
                        delta=est.delta_,  # 0 for pure-DP (Laplace) solvers
                        metric="R^2" if est_cls is Ridge else "accuracy",
                        score=est.score(Xb, yb),
                        seconds=seconds,
                    )
                )
    return rows


def format_table(rows):
    """Rows as an aligned text table."""
    header = (
        f"{'estimator':<19}{'solver':<13}{'target eps':>11}{'epsilon_':>10}"
        f"{'delta':>8}  {'metric':<9}{'score':>7}{'fit s':>8}"
    )
    lines = [header, "-" * len(header)]
    for row in rows:
        lines.append(
            f"{row['estimator']:<19}{row['solver']:<13}{row['target_epsilon']:>11g}"
            f"{row['epsilon']:>10.4g}{row['delta']:>8.0e}  {row['metric']:<9}"
            f"{row['score']:>7.4f}{row['seconds']:>8.2f}"
        )
    return "\n".join(lines)


def plot(rows, path):
    """Privacy-utility plot (score against epsilon); needs matplotlib."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    estimators = sorted({r["estimator"] for r in rows})
    fig, axes = plt.subplots(1, len(estimators), figsize=(4.2 * len(estimators), 3.4))
    for ax, name in zip(np.atleast_1d(axes), estimators):
        for solver in sorted({r["solver"] for r in rows}):
            sel = [r for r in rows if r["estimator"] == name and r["solver"] == solver]
            finite = [r for r in sel if math.isfinite(r["target_epsilon"])]
            (line,) = ax.plot(
                [r["target_epsilon"] for r in finite],
                [r["score"] for r in finite],
                "o-",
                label=solver,
            )
            for r in sel:
                if not math.isfinite(r["target_epsilon"]):
                    ax.axhline(r["score"], ls="--", color=line.get_color(), lw=0.8)
        ax.set_xscale("log")
        ax.set_xlabel("epsilon (delta = 1e-5)")
        ax.set_ylabel(sel[0]["metric"])
        ax.set_title(f"{name}\n{sel[0]['dataset']}", fontsize=9)
        ax.legend(fontsize=8, title="dashed: eps = inf", title_fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


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
    args = parser.parse_args(argv)
    print(
        f"dpestim demo; datasets folder: {get_data_home()} "
        "(set DPESTIM_DATA to change it)\n"
    )
    start = time.perf_counter()
    rows = run()
    print(format_table(rows))
    print(
        f"\ntotal {time.perf_counter() - start:.1f} s (including numba compilation "
        "on a cold cache and noise calibration)"
    )
    if not args.no_plot:
        try:
            plot(rows, args.plot)
            print(f"privacy-utility plot written to {args.plot}")
        except ImportError:
            print("matplotlib is not installed: no plot (pip install matplotlib)")
    return 0
