"""The private row scale on sparse data with many empty rows (issue 25).

``feature_scale="auto"`` divides the rows by a private median row norm. An
empty row (all zeros, common in sparse data: a document with no word of the
vocabulary, a user with no event) says nothing of the scale; with more than
half the rows empty the median of all the norms is 0, below the scale grid:
the exponential mechanism's best bin is the grid's lowest (open) one, so the
rows were scaled up by about ``1e12`` (``feature_scale_`` 3e-13, with a
``UtilityWarning`` since aaf14ee). Since 1cee017 the median is that of the
nonzero rows.

Fewer empty rows did harm too, at a small draw epsilon: the bins between the
grid's lowest edge and the smallest nonzero norm all miss the median by only
the empty rows' share of ranks, so the draw often landed there.

This fits ``LogisticRegression`` and ``LinearSVC`` at their defaults
(``epsilon`` 1 and 2) on Adult as a9a (sparse binary rows, the loader's
train / test files) with a share of the training and test rows emptied by a
public coin (0 / 40 / 60 / 80%), ``Ridge`` at its defaults on a synthetic
regression with the same shares emptied (6,000 training rows; its plan gives
the row scale about 0.009 of epsilon 1), and the classifiers on w8a (8% of
its rows empty, the defaults matrix's split), against scikit-learn at its
defaults on the same features (test accuracy; R^2 for ``Ridge``). Run it
from a ``git archive`` snapshot of each commit to compare.

    PYTHONPATH=. python benchmarks/utility/empty_rows.py [--seeds 5] \\
        [--commit C] [--out FILE]
"""

import sys
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from defaults import (  # noqa: E402
    load,
    markdown_table,
    result_parser,
    run_and_save_stamped,
)

EPSILONS = (1.0, 2.0)
EMPTY = (0.0, 0.4, 0.6, 0.8)


def _emptied(X, share, rng):
    """``X`` (CSR) with each row emptied with probability ``share``."""
    keep = (rng.random(X.shape[0]) >= share).astype(np.float64)
    X = sp.csr_matrix(sp.diags(keep) @ sp.csr_matrix(X, dtype=np.float64))
    X.eliminate_zeros()
    return X


CLASSIFIERS = ("LogisticRegression", "LinearSVC")


def _regression(share, n=8000, d=5):
    """A synthetic regression (``y = x_0 + x_1 + noise``, rows of norm about
    45) with a share of the rows emptied; the last quarter is the test part."""
    rng = np.random.default_rng(1000 + int(100 * share))
    X = 20.0 * rng.normal(size=(n, d))
    X[rng.random(n) < share] = 0.0
    y = X[:, 0] + X[:, 1] + rng.normal(size=n)
    cut = 3 * n // 4
    return X[:cut], y[:cut], X[cut:], y[cut:]


def tasks():
    """``(name, estimators, X, y, X_test, y_test)``: a9a and a synthetic
    regression at each share, then w8a."""
    X, y, Xt, yt, _ = load("adult")
    for share in EMPTY:
        rng = np.random.default_rng(int(100 * share))
        Xe, Xte = _emptied(X, share, rng), _emptied(Xt, share, rng)
        yield f"a9a, {share:.0%} emptied", CLASSIFIERS, Xe, y, Xte, yt
    for share in EMPTY:
        yield f"regression, {share:.0%} emptied", ("Ridge",), *_regression(share)
    X, y, Xt, yt, _ = load("w8a")
    yield "w8a (8% empty)", CLASSIFIERS, X, y, Xt, yt


def run(args):
    import sklearn.linear_model as skl
    import sklearn.svm as sks

    import dpestim

    sklearn = {
        "LogisticRegression": lambda: skl.LogisticRegression(max_iter=2000),
        "LinearSVC": sks.LinearSVC,
        "Ridge": skl.Ridge,
    }
    records = []
    for name, estimators, X, y, Xt, yt in tasks():
        empty = float(np.mean(np.diff(sp.csr_matrix(X).indptr) == 0))
        for est in estimators:
            ref = sklearn[est]().fit(X, y).score(Xt, yt)
            kw = {} if est == "Ridge" else {"classes": sorted(np.unique(y).tolist())}
            for eps in EPSILONS:
                for seed in range(args.seeds):
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        m = getattr(dpestim, est)(
                            epsilon=eps, random_state=seed, **kw
                        ).fit(X, y)
                    records.append(
                        dict(
                            task=name,
                            empty=empty,
                            estimator=est,
                            epsilon=eps,
                            seed=seed,
                            accuracy=float(m.score(Xt, yt)),
                            feature_scale=float(m.feature_scale_),
                            sklearn=float(ref),
                        )
                    )
            print(name, est, "done", flush=True)
    return records


def report(records, command, cpu_s, commit="?"):
    head = ["data", "empty rows", "estimator", "scikit-learn"]
    head += [f"eps={e:g}" for e in EPSILONS] + ["feature_scale_ (eps=1)"]
    cells = {}
    for r in records:
        cells.setdefault((r["task"], r["estimator"]), []).append(r)
    rows = []
    for (task, est), rs in cells.items():
        row = [task, f"{rs[0]['empty']:.0%}", est, f"{rs[0]['sklearn']:.3f}"]
        for e in EPSILONS:
            acc = [r["accuracy"] for r in rs if r["epsilon"] == e]
            row.append(f"{np.median(acc):.3f} (min {np.min(acc):.3f})")
        s = [r["feature_scale"] for r in rs if r["epsilon"] == EPSILONS[0]]
        row.append(f"{np.min(s):.3g} .. {np.max(s):.3g}")
        rows.append(row)
    return (
        "# The private row scale on sparse data with many empty rows\n\n"
        f"Command: `{command}` (code {commit}; {cpu_s:.0f} CPU s). The "
        "estimators at their defaults, test accuracy (R^2 for `Ridge`), median "
        "(and minimum) over the seeds; scikit-learn at its defaults on the "
        "same features.\n\n" + markdown_table(head, rows) + "\n"
    )


def main():
    p = result_parser(__doc__, "empty_rows.md", seeds=5)
    args = p.parse_args()
    run_and_save_stamped("empty_rows.py", args, run, report)


if __name__ == "__main__":
    main()
