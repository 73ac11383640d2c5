"""Class balance (issue 25, item 4): constant predictors, class_weight, Adult.

Three tables, ``delta = 1e-5``, ``--seeds`` seeds each (paired across
settings):

* **Defaults** on w8a (97% negatives) and COMPAS, each a 75/25 split of the
  loader (``random_state=0``; w8a's loader holds LIBSVM's train part),
  epsilon 1 and 2, ``LogisticRegression`` with
  every Gaussian-family solver (dp-sgd, dp-lssgd, adp-sgd, adp-adagrad,
  dp-scd, seq-dp-scd) at its defaults (the class prior on), and the same with
  ``class_prior=None`` (the former default): the predicted positive rate on
  the test set, accuracy and balanced accuracy; a cell is a *constant
  predictor* when every test prediction is one class.
* **class_weight="balanced"** on the same cells (``--weighted``; default
  the dp-sgd family, the solvers that took weights when the probe was
  written: dp-scd and seq-dp-scd take them too), against scikit-learn's
  ``LogisticRegression`` with ``class_weight="balanced"`` and the same
  objective (``C = 1 / (alpha n)``; non-private): balanced accuracy, target
  within 5 points.
* **Adult** (``load_adult``, the loader's scaling) at epsilon 1, default
  solver: test accuracy with the new default (``class_prior="auto"``) and
  with ``class_prior=None`` (main's behaviour bit for bit: no histogram, the
  whole ``scale_share`` on the row scale); the cost must be at most 0.3 point.

Usage::

    PYTHONPATH=. nice -n 10 python benchmarks/utility/imbalance_probe.py --seeds 2

Writes ``benchmarks/results/imbalance.json`` and ``.md``. ``--datasets bank
--skip-adult --out imbalance_bank``: the same tables on UCI Bank Marketing
(11.5% positives, the same 75/25 split), a held-out set
(``benchmarks/results/bank_heldout.md``).
"""

import argparse
import json
import os
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression as SkLogistic
from sklearn.metrics import balanced_accuracy_score
from sklearn.model_selection import train_test_split

from dpestim import LogisticRegression, UtilityWarning
from dpestim.datasets import load_adult, load_bank, load_compas, load_w8a

RESULTS = Path(
    os.environ.get("DPESTIM_BENCH_RESULTS")
    or Path(__file__).resolve().parents[1] / "results"
)
GAUSSIAN = ["dp-sgd", "dp-lssgd", "adp-sgd", "adp-adagrad", "dp-scd", "seq-dp-scd"]
WEIGHTED = ["dp-sgd", "dp-lssgd", "adp-sgd", "adp-adagrad"]
ALPHA = 1e-4


def _data(name):
    loaders = {"w8a": load_w8a, "compas": load_compas, "adult": load_adult}
    loaders["bank"] = load_bank  # held-out check (bank_heldout.md)
    b = loaders[name]()
    if "data_test" in b:
        return b.data, b.target, b.data_test, b.target_test
    X, Xt, y, yt = train_test_split(b.data, b.target, test_size=0.25, random_state=0)
    return X, y, Xt, yt


def sklearn_balanced(X, y, Xt, yt, max_iter=2000):
    """Test balanced accuracy of scikit-learn's ``class_weight="balanced"``
    optimum of the same objective (``C = 1 / (ALPHA n)``, non-private)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sk = SkLogistic(
            C=1.0 / (ALPHA * X.shape[0]), class_weight="balanced", max_iter=max_iter
        ).fit(X, y)
    return float(balanced_accuracy_score(yt, sk.predict(Xt)))


def _scores(model, Xt, yt):
    p = model.predict(Xt)
    return {
        "positive_rate": float(np.mean(p)),
        "accuracy": float(np.mean(p == yt)),
        "balanced_accuracy": float(balanced_accuracy_score(yt, p)),
        "constant": bool(np.unique(p).size == 1),
    }


def _fit(X, y, Xt, yt, seed, **kw):
    t = time.process_time()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m = LogisticRegression(classes=[0, 1], alpha=ALPHA, random_state=seed, **kw)
        m.fit(X, y)
    out = _scores(m, Xt, yt)
    out["utility_warning"] = any(issubclass(w.category, UtilityWarning) for w in caught)
    out["epsilon_"] = float(m.epsilon_)
    out["cpu_s"] = round(time.process_time() - t, 2)
    return out


def _mean(rows, key):
    return float(np.mean([r[key] for r in rows]))


def imbalance_rows(seeds, epsilons, solvers, datasets, weighted=WEIGHTED):
    out = []
    for name in datasets:
        X, y, Xt, yt = _data(name)
        sk_bal = sklearn_balanced(X, y, Xt, yt)
        print(f"{name}: scikit-learn balanced {sk_bal:.3f}", flush=True)
        for eps in epsilons:
            for solver in solvers:
                settings = [
                    ("default", {}),
                    ("class_prior=None", {"class_prior": None}),
                ]
                if solver in weighted:
                    settings.append(("balanced", {"class_weight": "balanced"}))
                for label, kw in settings:
                    runs = [
                        _fit(X, y, Xt, yt, s, epsilon=eps, solver=solver, **kw)
                        for s in range(seeds)
                    ]
                    row = {
                        "dataset": name,
                        "epsilon": eps,
                        "solver": solver,
                        "setting": label,
                        "seeds": seeds,
                        "constant_predictors": int(sum(r["constant"] for r in runs)),
                        "utility_warnings": int(
                            sum(r["utility_warning"] for r in runs)
                        ),
                        "positive_rate": _mean(runs, "positive_rate"),
                        "true_positive_rate": float(np.mean(yt)),
                        "accuracy": _mean(runs, "accuracy"),
                        "balanced_accuracy": _mean(runs, "balanced_accuracy"),
                        "max_epsilon_": max(r["epsilon_"] for r in runs),
                        "sklearn_balanced_accuracy": sk_bal,
                        "runs": runs,
                    }
                    out.append(row)
                    print(
                        f"{name} eps={eps} {solver:12s} {label:17s} constant "
                        f"{row['constant_predictors']}/{seeds}, pos "
                        f"{row['positive_rate']:.3f}, acc {row['accuracy']:.3f}, "
                        f"bal {row['balanced_accuracy']:.3f} (sk {sk_bal:.3f})",
                        flush=True,
                    )
    return out


def adult_rows(seeds):
    X, y, Xt, yt = _data("adult")
    out = []
    for label, kw in (("class_prior='auto' (new default)", {}),
                      ("class_prior=None (main)", {"class_prior": None})):  # fmt: skip
        runs = [_fit(X, y, Xt, yt, s, epsilon=1.0, **kw) for s in range(seeds)]
        row = {
            "setting": label,
            "seeds": seeds,
            "accuracy": _mean(runs, "accuracy"),
            "accuracy_sd": float(np.std([r["accuracy"] for r in runs])),
            "runs": runs,
        }
        out.append(row)
        print(f"adult eps=1 {label}: accuracy {row['accuracy']:.4f}", flush=True)
    return out


def write_markdown(res, path):
    lines = [
        "# Class balance (issue 25, item 4)",
        "",
        f"Command: `{res['command']}` ({res['seeds']} seeds, paired; "
        f"delta 1e-5, alpha {ALPHA:g}; CPU {res['cpu_s']:.0f} s).",
        "",
        "## Defaults and class_weight='balanced' (LogisticRegression, test set)",
        "",
        "A cell is a constant predictor when every test prediction is one class "
        "(count over seeds); `UtilityWarning`: fits where one fired (count). "
        "scikit-learn: `LogisticRegression(C=1/(alpha n), "
        "class_weight='balanced')`, non-private.",
        "",
        "| data | eps | solver | setting | constant | UtilityWarning | positive rate "
        "(true) | accuracy | balanced acc. | sklearn balanced | gap (points) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in res["imbalance"]:
        gap = 100 * (r["sklearn_balanced_accuracy"] - r["balanced_accuracy"])
        lines.append(
            f"| {r['dataset']} | {r['epsilon']:g} | {r['solver']} | {r['setting']} | "
            f"{r['constant_predictors']}/{r['seeds']} | "
            f"{r['utility_warnings']}/{r['seeds']} | {r['positive_rate']:.3f} "
            f"({r['true_positive_rate']:.3f}) | {r['accuracy']:.3f} | "
            f"{r['balanced_accuracy']:.3f} | {r['sklearn_balanced_accuracy']:.3f} | "
            f"{gap:+.1f} |"
        )
    if not res["adult"]:  # --skip-adult
        path.write_text("\n".join(lines) + "\n")
        return
    lines += [
        "",
        "## Adult, epsilon 1, default solver (the new default's cost)",
        "",
        "| setting | test accuracy (mean, sd over seeds) |",
        "|---|---|",
    ]
    for r in res["adult"]:
        lines.append(
            f"| {r['setting']} | {r['accuracy']:.4f} ({r['accuracy_sd']:.4f}) |"
        )
    path.write_text("\n".join(lines) + "\n")


def _nondefault(ap, a):
    """The options other than the seeds that differ from their defaults."""
    out = ""
    for name in ("epsilons", "solvers", "weighted", "datasets", "skip_adult", "out"):
        value = getattr(a, name)
        if value == ap.get_default(name):
            continue
        flag = "--" + name.replace("_", "-")
        if isinstance(value, bool):
            out += f" {flag}"
        elif isinstance(value, list):
            out += f" {flag} " + " ".join(
                f"{v:g}" if isinstance(v, float) else v for v in value
            )
        else:
            out += f" {flag} {value}"
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--adult-seeds", type=int, default=5)
    ap.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 2.0])
    ap.add_argument("--solvers", nargs="+", default=GAUSSIAN)
    ap.add_argument(
        "--weighted",
        nargs="+",
        default=WEIGHTED,
        help="solvers also fitted with class_weight='balanced'",
    )
    ap.add_argument("--datasets", nargs="+", default=["w8a", "compas"])
    ap.add_argument("--skip-adult", action="store_true")
    ap.add_argument("--quick", action="store_true", help="one seed, epsilon 1")
    ap.add_argument("--out", default="imbalance")
    a = ap.parse_args()
    if a.quick:
        a.seeds, a.adult_seeds, a.epsilons = 1, 1, [1.0]
    t = time.process_time()
    res = {
        "command": "PYTHONPATH=. nice -n 10 python "
        "benchmarks/utility/imbalance_probe.py "
        f"--seeds {a.seeds} --adult-seeds {a.adult_seeds}" + _nondefault(ap, a),
        "seeds": a.seeds,
        "imbalance": imbalance_rows(
            a.seeds, a.epsilons, a.solvers, a.datasets, a.weighted
        ),
        "adult": [] if a.skip_adult else adult_rows(a.adult_seeds),
    }
    res["cpu_s"] = time.process_time() - t
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{a.out}.json").write_text(json.dumps(res, indent=1))
    write_markdown(res, RESULTS / f"{a.out}.md")
    print(f"wrote {RESULTS / a.out}.json/.md")


if __name__ == "__main__":
    main()
