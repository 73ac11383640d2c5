"""In-fit private centring (``feature_centring``): on against off, held out.

Every task is fitted at its defaults (``solver="auto"``) with
``feature_centring`` on and off (``Ridge``: ``"auto"`` against ``None``;
the classifiers: ``True`` against ``"auto"`` = off), same seeds, at total
epsilon 0.5 / 1 / 2; test R^2 or accuracy, median over the seeds. Where the
public plan does not run the centring (small ``n epsilon``) the two fits
are identical and the cell says so.

Derivation tasks (the shares and the detection rule were chosen on them,
with a prototype of the mechanism outside the estimator): California's
median income from the loader's other columns, a synthetic regression with
a year column, Adult plus a constant column of 100, digits (pixels / 16).
Held-out tasks: California (the loader), diabetes with its raw features,
Adult's age and hours, Bank's age and balance, COMPAS's prior count,
German's credit amount (the loaders' other columns), Bank's raw numeric
columns predicting the call duration (regression) and its label
(classification), Adult (the loader), breast cancer standardised and raw,
German's numeric file as given.

    PYTHONPATH=. python benchmarks/utility/fit_centring.py [--seeds 3] \\
        [--shares R,M] [--only-derive] [--commit C] [--out FILE]

``--shares R,M``: the radius and mean shares of epsilon (default the
library's ``CENTRING_SHARES``, 1% and 2%; set on the module for this run:
how the default was chosen on the derivation tasks).
"""

import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from centring_probe import tasks as probe_tasks  # noqa: E402
from defaults import markdown_table, result_parser, run_and_save_stamped  # noqa: E402
from private_centring import _split, bank_csv, heldout_tasks  # noqa: E402
from public_target_bound import _task  # noqa: E402

EPSILONS = (0.5, 1.0, 2.0)
DERIVE = ("adult + constant 100", "california income", "synthetic + year", "digits")
#: Regression tasks from the loaders: a column predicted from the others.
COLUMN_TASKS = {
    "adult-age": ("load_adult", "age"),
    "adult-hours": ("load_adult", "hours-per-week"),
    "bank-age": ("load_bank", "age"),
    "bank-balance": ("load_bank", "balance"),
    "compas-priors": ("load_compas", "priors_count"),
    "german-amount": ("load_german", "credit_amount"),
}


def tasks(only_derive=False):
    """``(name, kind, X, y, X_test, y_test)`` of every task."""
    for task in probe_tasks():
        if task[0] in DERIVE or not only_derive:
            yield task
    if only_derive:
        return
    yield from heldout_tasks()
    for name, (loader, column) in COLUMN_TASKS.items():
        X, y, _ = _task(loader, column)
        Xa, Xb, ya, yb = _split(X, y)
        yield name, "reg", Xa, ya, Xb, yb
    cols = ("age", "balance", "day", "campaign", "pdays", "previous")
    raw = bank_csv()
    X = np.column_stack([raw[c].astype(float) for c in cols])
    Xa, Xb, ya, yb = _split(X, raw["duration"].astype(float))
    yield "bank raw -> duration", "reg", Xa, ya, Xb, yb


def run(args):
    from dpestim import LogisticRegression, Ridge
    from dpestim.preprocessing import _centring

    if args.shares:
        _centring.CENTRING_SHARES = tuple(float(v) for v in args.shares.split(","))
    records = []
    for name, kind, X, y, Xt, yt in tasks(args.only_derive):
        on, off = ("auto", None) if kind == "reg" else (True, "auto")
        for eps in EPSILONS:
            for seed in range(args.seeds):
                for method, centring in (("off", off), ("on", on)):
                    if kind == "reg":
                        model = Ridge(
                            epsilon=eps, random_state=seed, feature_centring=centring
                        )
                    else:
                        model = LogisticRegression(
                            epsilon=eps,
                            classes=np.unique(y),
                            random_state=seed,
                            feature_centring=centring,
                        )
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        score = float(model.fit(X, y).score(Xt, yt))
                    records.append(
                        dict(
                            task=name,
                            kind=kind,
                            split="derive" if name in DERIVE else "held out",
                            epsilon=eps,
                            seed=seed,
                            method=method,
                            score=score,
                            ran=model.feature_centre_ is not None,
                        )
                    )
            print(name, eps, "done", flush=True)
    return records


def report(records, command, cpu_s, commit="?"):
    cells = {}
    for r in records:
        key = (r["kind"], r["split"], r["task"], r["epsilon"])
        cell = cells.setdefault(key, {"on": [], "off": [], "ran": []})
        cell[r["method"]].append(r["score"])
        if r["method"] == "on":
            cell["ran"].append(r["ran"])
    rows, gains = [], {}
    for (kind, split, task, eps), m in sorted(cells.items()):
        on, off = float(np.median(m["on"])), float(np.median(m["off"]))
        ran = sum(m["ran"])
        if ran:
            gains.setdefault((kind, split), []).append(on - off)
        rows.append(
            [
                "Ridge" if kind == "reg" else "LogisticRegression",
                split,
                task,
                f"{eps:g}",
                f"{off:.3f}",
                f"{on:.3f}",
                f"{on - off:+.3f}" if ran else "(not run)",
                f"{ran}/{len(m['ran'])}",
            ]
        )
    summary = "".join(
        f"- {'Ridge' if kind == 'reg' else 'LogisticRegression'}, {split}: "
        f"{len(g)} cells where it ran, median change {np.median(g):+.3f}, "
        f"better by > 0.005 in {sum(x > 0.005 for x in g)}, worse by > 0.005 in "
        f"{sum(x < -0.005 for x in g)} (worst {min(g):+.3f}, best {max(g):+.3f})\n"
        for (kind, split), g in sorted(gains.items())
    )
    return (
        "# In-fit private centring (`feature_centring`)\n\n"
        f"Command: `{command}` (code {commit}; {cpu_s:.0f} CPU s). Defaults "
        '(`solver="auto"`), test R^2 or accuracy, median over the seeds, with '
        'the centring off and on (`Ridge`: `None` / `"auto"`; '
        '`LogisticRegression`: `"auto"` (off) / `True`). "ran": fits where the '
        "public plan ran it. See the script's docstring.\n\n"
        + summary
        + "\n"
        + markdown_table(
            ["estimator", "split", "task", "eps", "off", "on", "change", "ran"], rows
        )
        + "\n"
    )


def main():
    p = result_parser(__doc__, "fit_centring.md", seeds=3)
    p.add_argument("--shares", default=None, help="radius,mean shares of epsilon")
    p.add_argument("--only-derive", action="store_true")
    args = p.parse_args()
    run_and_save_stamped("fit_centring.py", args, run, report)


if __name__ == "__main__":
    main()
