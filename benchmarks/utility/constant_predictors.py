"""Constant predictors at the true defaults, both classifiers, one dataset.

``imbalance_probe.py`` fits ``LogisticRegression`` with ``alpha=1e-4``
given; this fits ``LogisticRegression`` and ``LinearSVC`` with **every**
hyperparameter at its default (``alpha="auto"``, ``solver`` named or
``"auto"``), the data of ``defaults.py``'s ``load`` (the 75/25 split), and
reports per (estimator, epsilon, solver, setting) over ``--seeds`` seeds:
constant predictors (every test prediction one class), fits where a
:class:`~dpestim.UtilityWarning` fired, the predicted positive rate,
accuracy and balanced accuracy. ``class_weight="balanced"`` for the solvers
that take weights, against scikit-learn with the same weights and the
objective of the fit's ``alpha_`` (``C = 1 / (alpha_ n)``, non-private).

    PYTHONPATH=. nice -n 10 python benchmarks/utility/constant_predictors.py \
        --dataset bank --seeds 5 --out benchmarks/results/constant_bank.md

Writes ``--out`` (markdown) and the same name with ``.json``.
"""

import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.metrics import balanced_accuracy_score

sys.path.insert(0, str(Path(__file__).resolve().parent))
from defaults import _int32_indices, load, result_parser, write_table  # noqa: E402

SOLVERS = ["auto", "dp-sgd", "dp-lssgd", "adp-sgd", "adp-adagrad", "dp-scd"]
SOLVERS += ["seq-dp-scd", "objective-perturbation"]
#: Gaussian-family solvers that take ``class_weight`` (the others refuse it).
WEIGHTED = ["auto", "dp-sgd", "dp-lssgd", "adp-sgd", "adp-adagrad", "dp-scd"]
WEIGHTED += ["seq-dp-scd"]


def _fit(Est, X, y, Xt, yt, **kw):
    from dpestim import UtilityWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m = Est(classes=[0, 1], **kw).fit(X, y)
    p = m.predict(Xt)
    return dict(
        constant=bool(np.unique(p).size == 1),
        utility_warning=any(issubclass(w.category, UtilityWarning) for w in caught),
        positive_rate=float(np.mean(p)),
        accuracy=float(np.mean(p == yt)),
        balanced_accuracy=float(balanced_accuracy_score(yt, p)),
        alpha_=float(m.alpha_),
        picked=m.solver_.name,
        # the private utility check's release (None: no check ran)
        lift=getattr(m, "lift_", None),
    )


def _sklearn_balanced(est_name, alpha, X, y, Xt, yt):
    import sklearn.linear_model as skl
    import sklearn.svm as sks

    C = 1.0 / (alpha * X.shape[0])
    X, Xt = _int32_indices(X, Xt)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if est_name == "LogisticRegression":
            m = skl.LogisticRegression(C=C, class_weight="balanced", max_iter=5000)
        else:
            m = sks.LinearSVC(C=C, class_weight="balanced", max_iter=20000)
        m.fit(X, y)
    return float(balanced_accuracy_score(yt, m.predict(Xt)))


def main():
    p = result_parser(__doc__, "constant_predictors.md", seeds=5)
    p.add_argument("--dataset", default="bank")
    p.add_argument("--epsilons", nargs="+", type=float, default=[1.0, 2.0])
    a = p.parse_args()
    from dpestim import LinearSVC, LogisticRegression

    X, y, Xt, yt, extra = load(a.dataset)
    t0 = time.process_time()
    rows = []
    for Est in (LogisticRegression, LinearSVC):
        name = Est.__name__
        alpha = Est(epsilon=np.inf, classes=[0, 1]).fit(X, y).alpha_
        sk = _sklearn_balanced(name, alpha, X, y, Xt, yt)
        for eps in a.epsilons:
            for solver in SOLVERS:
                settings = [("default", {})]
                if solver in WEIGHTED:
                    settings.append(("balanced", {"class_weight": "balanced"}))
                for label, kw in settings:
                    runs = [
                        _fit(Est, X, y, Xt, yt, solver=solver, epsilon=eps,
                             random_state=s, **extra, **kw)
                        for s in range(a.seeds)
                    ]  # fmt: skip
                    row = dict(
                        estimator=name, epsilon=eps, solver=solver, setting=label,
                        seeds=a.seeds, sklearn_balanced=sk, alpha_=alpha,
                        constant=sum(r["constant"] for r in runs),
                        utility_warning=sum(r["utility_warning"] for r in runs),
                        picked=sorted({r["picked"] for r in runs}),
                        runs=runs,
                    )  # fmt: skip
                    for k in ("positive_rate", "accuracy", "balanced_accuracy"):
                        row[k] = float(np.mean([r[k] for r in runs]))
                    rows.append(row)
                    print(
                        f"{name} eps={eps:g} {solver:22s} {label:8s} constant "
                        f"{row['constant']}/{a.seeds} warn {row['utility_warning']} "
                        f"pos {row['positive_rate']:.3f} acc {row['accuracy']:.3f} "
                        f"bal {row['balanced_accuracy']:.3f} (sk {sk:.3f})",
                        flush=True,
                    )
    cmd = "python benchmarks/utility/constant_predictors.py " + " ".join(sys.argv[1:])
    majority = float(max(np.mean(yt), 1 - np.mean(yt)))
    meta = dict(command=cmd, commit=a.commit, dataset=a.dataset, majority=majority,
                true_positive_rate=float(np.mean(yt)), n=int(X.shape[0]),
                cpu_s=time.process_time() - t0)  # fmt: skip
    out = Path(a.out)
    out.with_suffix(".json").write_text(
        json.dumps(dict(meta=meta, rows=rows), indent=1)
    )
    lines = [
        f"# Constant predictors at the defaults: {a.dataset}",
        "",
        f"`{cmd}` (commit {a.commit}; {a.seeds} seeds; test majority rate "
        f"{majority:.4f}, true positive rate {np.mean(yt):.3f}; CPU "
        f"{meta['cpu_s']:.0f} s). Every hyperparameter at its default "
        f"(`alpha_` {rows[0]['alpha_']:.3g}); scikit-learn balanced: the same "
        "estimator with `class_weight='balanced'` and `C = 1 / (alpha_ n)`.",
        "",
        "| estimator | eps | solver | setting | constant | UtilityWarning | positive "
        "rate | accuracy | balanced acc. | sklearn balanced | gap (points) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        solver = r["solver"] + (
            f" ({', '.join(r['picked'])})" if r["solver"] == "auto" else ""
        )
        lines.append(
            f"| {r['estimator']} | {r['epsilon']:g} | {solver} | {r['setting']} | "
            f"{r['constant']}/{r['seeds']} | {r['utility_warning']}/{r['seeds']} | "
            f"{r['positive_rate']:.3f} | {r['accuracy']:.3f} | "
            f"{r['balanced_accuracy']:.3f} | {r['sklearn_balanced']:.3f} | "
            f"{100 * (r['sklearn_balanced'] - r['balanced_accuracy']):+.1f} |"
        )
    write_table(out, lines)


if __name__ == "__main__":
    main()
