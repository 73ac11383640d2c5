"""In-fit private centring (``feature_centring``): on against off, held out.

Every task is fitted at its defaults (``solver="auto"``) with
``feature_centring`` on and off (``"auto"``, on for every linear estimator
since the sixteenth session, against ``None``), same seeds, at total
epsilon 0.5 / 1 / 2; test R^2 or accuracy, median over the seeds;
``Ridge`` on the regression tasks, ``LogisticRegression`` and
``LinearSVC`` on the classification tasks. Where the public plan does not
run the centring (small ``n epsilon``) the two fits are identical and the
cell says so.

Derivation tasks (the shares and the detection rule were chosen on them,
with a prototype of the mechanism outside the estimator): California's
median income from the loader's other columns, a synthetic regression with
a year column, Adult plus a constant column of 100, digits (pixels / 16).
Held-out tasks: California (the loader), diabetes with its raw features,
Adult's age and hours, Bank's age and balance, COMPAS's prior count,
German's credit amount (the loaders' other columns), Bank's raw numeric
columns predicting the call duration (regression) and its label
(classification), Adult (the loader), breast cancer standardised and raw,
German's numeric file as given. Held out for the classifiers' default
(sixteenth session; tasks never used before): California's raw columns
predicting a house value above the median and the inland location (its
other location columns removed), Adult's dense loader (raw age, hours,
capital columns), an age-like column (mean 40, sd 13) beside four features
of order one with a linear label (balanced, and 27% positive).

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
    yield from classifier_tasks()


def classifier_tasks():
    """Held-out classification tasks of the classifiers' default (see above)."""
    from dpestim import datasets

    b = datasets.load_california_housing()
    X, names = np.asarray(b.data, dtype=np.float64), list(b.feature_names)
    value = (b.target > np.median(b.target)).astype(int)
    yield "california value > median", "clf", *_xy(_split(X, value))
    inland = X[:, names.index("ocean_proximity=INLAND")].astype(int)
    keep = [i for i, name in enumerate(names) if not name.startswith("ocean")]
    yield "california inland", "clf", *_xy(_split(X[:, keep], inland))
    b = datasets.load_adult()
    X = np.asarray(b.data, dtype=np.float64)
    yield "adult, dense loader", "clf", *_xy(_split(X, b.target))
    X, score = age_like()
    for name, cut in (("age-like column", 0.0), ("age-like column, 27% positive", 1.2)):
        y = (score > cut).astype(int)
        yield name, "clf", X[:9000], y[:9000], X[9000:], y[9000:]


def age_like(n=12000):
    """The user trial's age-like column (mean 40, sd 13) beside four features
    of order one, and a linear score of all five: ``(X, score)``, seeded."""
    rng = np.random.default_rng(11)
    Z = rng.normal(size=(n, 4))
    age = rng.normal(40, 13, n).clip(17, 90)
    score = Z @ [1, -1, 0.5, 0.25] + 0.08 * (age - 40) + 0.5 * rng.normal(size=n)
    return np.c_[Z, age], score


def _xy(split):
    """``(X, y, X_test, y_test)`` from ``train_test_split``'s order."""
    Xa, Xb, ya, yb = split
    return Xa, ya, Xb, yb


def run(args):
    from dpestim import LinearSVC, LogisticRegression, Ridge
    from dpestim.preprocessing import _centring

    if args.shares:
        _centring.CENTRING_SHARES = tuple(float(v) for v in args.shares.split(","))
    records = []
    for name, kind, X, y, Xt, yt in tasks(args.only_derive):
        if kind == "reg":
            estimators = {"Ridge": Ridge}
        else:
            estimators = {"LogisticRegression": LogisticRegression}
            if not args.only_derive:
                estimators["LinearSVC"] = LinearSVC
        for est_name, Est in estimators.items():
            kw = {} if kind == "reg" else {"classes": np.unique(y)}
            for eps in EPSILONS:
                for seed in range(args.seeds):
                    for method, centring in (("off", None), ("on", "auto")):
                        model = Est(
                            epsilon=eps,
                            random_state=seed,
                            feature_centring=centring,
                            **kw,
                        )
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            score = float(model.fit(X, y).score(Xt, yt))
                        records.append(
                            dict(
                                task=name,
                                kind=kind,
                                estimator=est_name,
                                split="derive" if name in DERIVE else "held out",
                                epsilon=eps,
                                seed=seed,
                                method=method,
                                score=score,
                                ran=model.feature_centre_ is not None,
                            )
                        )
                print(name, est_name, eps, "done", flush=True)
    return records


def report(records, command, cpu_s, commit="?"):
    cells = {}
    for r in records:
        key = (_estimator(r), r["split"], r["task"], r["epsilon"])
        cell = cells.setdefault(key, {"on": [], "off": [], "ran": []})
        cell[r["method"]].append(r["score"])
        if r["method"] == "on":
            cell["ran"].append(r["ran"])
    rows, gains = [], {}
    for (est, split, task, eps), m in sorted(cells.items()):
        on, off = float(np.median(m["on"])), float(np.median(m["off"]))
        ran = sum(m["ran"])
        if ran:
            gains.setdefault((est, split), []).append(on - off)
        rows.append(
            [
                est,
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
        f"- {est}, {split}: "
        f"{len(g)} cells where it ran, median change {np.median(g):+.3f}, "
        f"better by > 0.005 in {sum(x > 0.005 for x in g)}, worse by > 0.005 in "
        f"{sum(x < -0.005 for x in g)} (worst {min(g):+.3f}, best {max(g):+.3f})\n"
        for (est, split), g in sorted(gains.items())
    )
    return (
        "# In-fit private centring (`feature_centring`)\n\n"
        f"Command: `{command}` (code {commit}; {cpu_s:.0f} CPU s). Defaults "
        '(`solver="auto"`), test R^2 or accuracy, median over the seeds, with '
        'the centring off and on (`None` / `"auto"`). "ran": fits where the '
        "public plan ran it. See the script's docstring.\n\n"
        + summary
        + "\n"
        + markdown_table(
            ["estimator", "split", "task", "eps", "off", "on", "change", "ran"], rows
        )
        + "\n"
    )


def _estimator(record):
    """The record's estimator (records before the sixteenth session: by kind)."""
    if "estimator" in record:
        return record["estimator"]
    return "Ridge" if record["kind"] == "reg" else "LogisticRegression"


def main():
    p = result_parser(__doc__, "fit_centring.md", seeds=3)
    p.add_argument("--shares", default=None, help="radius,mean shares of epsilon")
    p.add_argument("--only-derive", action="store_true")
    args = p.parse_args()
    run_and_save_stamped("fit_centring.py", args, run, report)


if __name__ == "__main__":
    main()
