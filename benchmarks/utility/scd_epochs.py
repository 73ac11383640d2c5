"""dp-scd's epochs where the batch floor binds (issues 25 item 4, 26).

dp-scd's ``"auto"`` plan (:func:`~dpestim.solvers.coordinate._policy.scd_plan`)
takes 10 epochs and the smallest batch that leaves noise ``SCD_NOISE`` on the
coefficients, at least the Poisson rule's batch ``1.5 sqrt(n)``. Where that
floor binds (large ``n`` or ``epsilon``) the noise left is below the target;
the plan now spends the slack on epochs at the same batch, and takes at
least ``10 / (alpha n)`` epochs, the passes dual coordinate ascent needs
(both at most ``SCD_MAX_EPOCHS``). This fits dp-scd at its defaults and, paired (same
seeds) with ``SCD_MAX_EPOCHS`` set to 10: the former plan (the same batch,
10 epochs). A cell where both plans agree is marked ``same plan``.

w8a, Adult, phishing, COMPAS and California (``Ridge``) are the derivation
datasets; UCI Bank Marketing (11.5% positives) is held out. Also reported:
fits that predict one class for every test row (``constant``).

Usage::

    PYTHONPATH=. nice -n 10 python benchmarks/utility/scd_epochs.py --seeds 5

Writes ``benchmarks/results/scd_epochs.json`` and ``.md``.
"""

import argparse
import json
import sys
import warnings
from pathlib import Path
from unittest import mock

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from defaults import RESULTS, load, markdown_table, paired_cells, run_and_save  # noqa: E402

#: (dataset, estimators, split)
DATASETS = [
    ("w8a", ("LogisticRegression", "LinearSVC"), "derive"),
    ("adult", ("LogisticRegression", "LinearSVC"), "derive"),
    ("phishing", ("LogisticRegression", "LinearSVC"), "derive"),
    ("compas", ("LogisticRegression", "LinearSVC"), "derive"),
    ("california", ("Ridge",), "derive"),
    ("bank", ("LogisticRegression", "LinearSVC"), "held-out"),
]


def _fits(est_name, data, eps, seeds, former=False):
    import dpestim
    from dpestim.solvers.coordinate import _policy

    X, y, Xt, yt, load_kw = data
    scores, constant, epochs = [], 0, None
    cap = _policy.MIN_EPOCHS if former else _policy.SCD_MAX_EPOCHS
    with mock.patch.object(_policy, "SCD_MAX_EPOCHS", cap):
        for seed in range(seeds):
            est = getattr(dpestim, est_name)(
                epsilon=eps, solver="dp-scd", random_state=seed, **load_kw
            )
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est.fit(X, y)
            scores.append(float(est.score(Xt, yt)))
            if est_name != "Ridge":
                constant += int(np.unique(est.predict(Xt)).size == 1)
            epochs = est.hyperparameters_["max_iter"]
    return dict(scores=scores, constant=constant, epochs=epochs)


def run(args):
    records = []
    for name, estimators, split in DATASETS:
        data = load(name)
        for est_name in estimators:
            for eps in args.epsilons:
                rec = dict(data=name, split=split, estimator=est_name, epsilon=eps)
                rec["plan"] = _fits(est_name, data, eps, args.seeds)
                former = _fits(est_name, data, eps, 1, former=True)
                if former["epochs"] != rec["plan"]["epochs"]:
                    rec["former"] = _fits(est_name, data, eps, args.seeds, former=True)
                records.append(rec)
                print(json.dumps(rec), flush=True)
    return records


def report(records, seeds, command, cpu_s):
    head = ["data", "split", "estimator", "eps", "plan epochs", "plan", "former"]
    head += ["change (points)", "constant: plan / former"]
    rows = []
    for r in records:
        plan = r["plan"]
        row = [r["data"], r["split"], r["estimator"], f"{r['epsilon']:g}"]
        old = r.get("former")
        row.append(str(plan["epochs"]))
        row += paired_cells(plan["scores"], old and old["scores"])
        constant = f"{plan['constant']}" + (f" / {old['constant']}" if old else "")
        rows.append(row + [constant])
    return "\n".join(
        [
            "# dp-scd: the batch floor's slack and the dual's conditioning in epochs",
            "",
            f"Command: `{command}` ({seeds} seeds, paired; CPU {cpu_s:.0f} s). "
            "Median test accuracy (R^2 for california) of dp-scd at its "
            "defaults (`plan`) and with the former plan (`SCD_MAX_EPOCHS` = 10: "
            "the same batch, 10 epochs); a point is 0.01 R^2. `constant`: "
            "fits predicting one class for every test row, of the seeds.",
            "",
            markdown_table(head, rows),
            "",
        ]
    )


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--epsilons", nargs="+", type=float, default=[0.5, 1.0, 2.0])
    p.add_argument("--out", default=str(RESULTS / "scd_epochs"))
    args = p.parse_args()
    run_and_save(
        "scd_epochs.py", args, run, lambda r, c, cpu: report(r, args.seeds, c, cpu)
    )


if __name__ == "__main__":
    main()
