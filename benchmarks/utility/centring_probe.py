"""What private feature centring would buy: a probe, not a library feature.

The rules of every estimator read one private row scale (the median row
norm); a column with a large offset (a year, a constant, pixels in [0, 1],
the California loader's unscaled columns) dominates the row norms, so the
informative columns are tiny in the rules' units. This probe fits the
estimator at its defaults on:

* ``none``: ``X`` as given (the library today);
* ``exact``: ``X`` minus its exact column means (not private: the upper
  bound of any centring);
* ``laplace``: ``X`` minus a noisy mean -- rows clipped to L1 norm
  ``2 x`` their median L1 norm (taken exactly here: a prototype shortcut,
  not private), summed, Laplace noise of scale ``C / (share epsilon)`` per
  coordinate (add/remove-one), the estimator fitted at ``(1 - share)
  epsilon``;
* ``thresholded``: the same release, but only the coordinates whose noisy
  mean exceeds 3 noise scales are subtracted (post-processing: columns
  without an offset are left as they are).

``share`` = 3%. Test accuracy or R^2, median of the seeds. Tasks: Adult
(the loader) and Adult plus a constant column of 100, California (the
loader), breast cancer (the loader, standardised by public constants) and
raw, California's median income from the loader's other columns, a
synthetic regression with a year column, digits (pixels / 16).

    PYTHONPATH=. python benchmarks/utility/centring_probe.py [--seeds 3] \\
        [--commit C] [--out FILE]
"""

import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from defaults import (  # noqa: E402
    load,
    markdown_table,
    result_parser,
    run_and_save_stamped,
)
from public_target_bound import _task  # noqa: E402

EPSILONS = (0.5, 1.0)
SHARE = 0.03
METHODS = ("none", "exact", "laplace", "thresholded")


def _dense(X):
    return np.asarray(X.toarray() if hasattr(X, "toarray") else X, dtype=float)


def tasks():
    """``(name, kind, X, y, X_test, y_test)``."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split

    X, y, Xt, yt, _ = load("adult")
    X, Xt = _dense(X), _dense(Xt)
    yield "adult", "clf", X, y, Xt, yt
    c, ct = np.full((len(y), 1), 100.0), np.full((len(yt), 1), 100.0)
    yield "adult + constant 100", "clf", np.hstack([X, c]), y, np.hstack([Xt, ct]), yt
    X, y, Xt, yt, _ = load("california")
    yield "california", "reg", _dense(X), y, _dense(Xt), yt
    X, y, Xt, yt, _ = load("breast_cancer")
    yield "breast cancer", "clf", _dense(X), y, _dense(Xt), yt
    d = load_breast_cancer()
    Xa, Xb, ya, yb = train_test_split(d.data, d.target, test_size=0.25, random_state=0)
    yield "breast cancer, raw", "clf", Xa, ya, Xb, yb
    X, y, _ = _task("load_california_housing", "median_income")
    Xa, Xb, ya, yb = train_test_split(X, y, test_size=0.2, random_state=0)
    yield "california income", "reg", Xa, ya, Xb, yb
    rng = np.random.default_rng(5)
    Z = rng.normal(size=(8000, 4))
    year = rng.integers(1990, 2021, 8000).astype(float)
    Xs = np.c_[Z, year]
    ys = Z @ [1.0, 2.0, 3.0, 4.0] + 0.1 * (year - 2005) + rng.normal(size=8000)
    yield "synthetic + year", "reg", Xs[:6000], ys[:6000], Xs[6000:], ys[6000:]
    X, y, Xt, yt, _ = load("digits")
    yield "digits", "clf", _dense(X), y, _dense(Xt), yt


def noisy_mean(X, epsilon, rng):
    """``(mean, noise scale)``: L1-clipped rows' mean plus Laplace noise."""
    l1 = np.abs(X).sum(axis=1)
    C = 2.0 * np.median(l1)  # prototype shortcut: exact, not private
    Xc = X * np.minimum(1.0, C / np.maximum(l1, 1e-300))[:, None]
    n = X.shape[0]
    b = C / epsilon
    return (Xc.sum(axis=0) + rng.laplace(0.0, b, size=X.shape[1])) / n, b / n


def run(args):
    from dpestim import LogisticRegression, Ridge

    records = []
    for name, kind, X, y, Xt, yt in tasks():
        for eps in EPSILONS:
            for seed in range(args.seeds):
                rng = np.random.default_rng(seed)

                def make(e, seed=seed, kind=kind, y=y):
                    # the estimator's own centring off (on by default: Ridge
                    # since 7616e68, the classifiers since 875bff5)
                    if kind == "clf":
                        return LogisticRegression(
                            epsilon=e,
                            classes=np.unique(y),
                            random_state=seed,
                            feature_centring=None,
                        )
                    return Ridge(epsilon=e, random_state=seed, feature_centring=None)

                mu, scale = noisy_mean(X, SHARE * eps, rng)
                kept = np.where(np.abs(mu) > 3.0 * scale, mu, 0.0)
                shifts = {
                    "none": (0.0, eps),
                    "exact": (X.mean(axis=0), eps),
                    "laplace": (mu, (1 - SHARE) * eps),
                    "thresholded": (kept, (1 - SHARE) * eps),
                }
                for method, (shift, e) in shifts.items():
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        fit = make(e).fit(X - shift, y)
                        score = float(fit.score(Xt - shift, yt))
                    records.append(
                        dict(
                            task=name,
                            epsilon=eps,
                            seed=seed,
                            method=method,
                            score=score,
                        )
                    )
            print(name, eps, "done", flush=True)
    return records


def report(records, command, cpu_s, commit="?"):
    cells = {}
    for r in records:
        cells.setdefault((r["task"], r["epsilon"]), {}).setdefault(
            r["method"], []
        ).append(r["score"])
    rows = [
        [task, f"{eps:g}"] + [f"{np.median(m[k]):.3f}" for k in METHODS]
        for (task, eps), m in cells.items()
    ]
    return (
        "# What private feature centring would buy (a probe)\n\n"
        f"Command: `{command}` (code {commit}; {cpu_s:.0f} CPU s). Defaults "
        '(`solver="auto"`), test accuracy or R^2, median over the seeds. '
        "`exact` is not private (the upper bound); `laplace` and `thresholded` "
        f"spend {SHARE:.0%} of epsilon on the mean (their clip uses the exact "
        "median L1 norm: a prototype shortcut). See the script's docstring.\n\n"
        + markdown_table(["task", "eps", *METHODS], rows)
        + "\n"
    )


def main():
    p = result_parser(__doc__, "centring_probe.md", seeds=3)
    args = p.parse_args()
    run_and_save_stamped("centring_probe.py", args, run, report)


if __name__ == "__main__":
    main()
