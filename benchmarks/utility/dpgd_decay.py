"""dp-gd's decaying steps on private classifiers (issues 25, 26).

dp-gd's ``"auto"`` step for a classifier is the family's step times the
short-run factor ``max(1, min(100 / T, T))`` (a run of few iterations
travels as far as one of 100). With ``T >= decay_min_iter`` (10) iterations
the steps now decay linearly to about 0 around that mean
(:meth:`dpestim.solvers.DPGD.resolve_hyperparameters`). This fits dp-gd at
its defaults with ``delta=0`` (pure DP, the ``"auto"`` pick there) and,
paired (same seeds), with the former constant steps (``decay_min_iter`` set
above any plan's ``T``). A cell whose plan does not decay is ``same plan``.

COMPAS, phishing, Adult, German credit, breast cancer, w8a and digits are the
derivation datasets (the preparation of ``benchmarks/utility/defaults.py``);
held out: UCI Bank Marketing and California housing as a classification
(the target above its training median). ``Ridge`` keeps constant steps.

Usage::

    PYTHONPATH=. nice -n 10 python benchmarks/utility/dpgd_decay.py --seeds 5

Writes ``benchmarks/results/dpgd_decay.json`` and ``.md``.
"""

import argparse
import json
import math
import sys
import warnings
from pathlib import Path
from unittest import mock

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from defaults import RESULTS, load, markdown_table, paired_cells, run_and_save  # noqa: E402

#: (dataset, split)
DATASETS = [
    ("compas", "derive"),
    ("phishing", "derive"),
    ("adult", "derive"),
    ("german", "derive"),
    ("breast_cancer", "derive"),
    ("w8a", "derive"),
    ("digits", "derive"),
    ("bank", "held-out"),
    ("california>median", "held-out"),
]
ESTIMATORS = ("LogisticRegression", "LinearSVC")


def _load(name):
    """``defaults.py``'s data; ``california>median``: its target binarised."""
    if name != "california>median":
        return load(name)
    X, y, Xt, yt, _ = load("california")
    threshold = np.median(y)
    return X, (y > threshold).astype(int), Xt, (yt > threshold).astype(int), {}


def _fits(est_name, data, eps, seeds, former=False):
    import dpestim
    from dpestim.solvers import DPGD

    X, y, Xt, yt, load_kw = data
    classes = np.unique(np.concatenate([y, yt]))  # public, as in defaults.py
    scores, steps = [], None
    min_iter = math.inf if former else DPGD.decay_min_iter
    with mock.patch.object(DPGD, "decay_min_iter", min_iter):
        for seed in range(seeds):
            est = getattr(dpestim, est_name)(
                epsilon=eps, delta=0.0, solver="dp-gd", random_state=seed,
                classes=classes, **load_kw,
            )  # fmt: skip
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est.fit(X, y)
            scores.append(float(est.score(Xt, yt)))
            hp = est.hyperparameters_
            steps = (hp["max_iter"], "step schedule" in hp)
    return dict(scores=scores, iterations=steps[0], decays=steps[1])


def run(args):
    records = []
    for name, split in DATASETS:
        data = _load(name)
        for est_name in ESTIMATORS:
            for eps in args.epsilons:
                rec = dict(data=name, split=split, estimator=est_name, epsilon=eps)
                rec["plan"] = _fits(est_name, data, eps, args.seeds)
                if rec["plan"]["decays"]:
                    rec["former"] = _fits(est_name, data, eps, args.seeds, former=True)
                records.append(rec)
                print(json.dumps(rec), flush=True)
    return records


def report(records, seeds, command, cpu_s):
    head = ["data", "split", "estimator", "eps", "iterations", "decaying", "constant"]
    head.append("change (points)")
    rows = []
    for r in records:
        plan = r["plan"]
        row = [r["data"], r["split"], r["estimator"], f"{r['epsilon']:g}"]
        row.append(str(plan["iterations"]))
        former = r.get("former")
        rows.append(row + paired_cells(plan["scores"], former and former["scores"]))
    return "\n".join(
        [
            "# dp-gd: linearly decaying steps on private classifiers",
            "",
            f"Command: `{command}` ({seeds} seeds, paired; CPU {cpu_s:.0f} s). "
            "Median test accuracy of dp-gd at its defaults with `delta=0` (pure "
            "DP): `decaying` the built plan, `constant` the former constant steps "
            "(same iterations and mean step); `same plan` where the plan keeps "
            "constant steps (fewer than 10 iterations).",
            "",
            markdown_table(head, rows),
            "",
        ]
    )


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--epsilons", nargs="+", type=float, default=[0.1, 0.5, 1.0, 2.0])
    p.add_argument("--out", default=str(RESULTS / "dpgd_decay"))
    args = p.parse_args()
    run_and_save(
        "dpgd_decay.py", args, run, lambda r, c, cpu: report(r, args.seeds, c, cpu)
    )


if __name__ == "__main__":
    main()
