"""PrivateCentrer before the defaults: what private centring buys, held out.

Each task is fitted at its defaults (``solver="auto"``; the estimator's own
centring off, ``feature_centring=None``, so that the step alone is measured)
at total epsilon ``eps``: on ``X`` as given (``none``), on ``X`` minus its exact means
(``exact``, not private: the upper bound), and in a pipeline
``PrivateCentrer(epsilon=S eps) -> estimator(epsilon=(1 - S) eps)``
(``centrer``: the same total budget, basic composition). Test accuracy or
R^2, median over the seeds.

Derivation tasks (the probe's, ``centring_probe.py``, on which the
threshold and the share were chosen): Adult plus a constant column of 100,
California's median income from the loader's other columns, a synthetic
regression with a year column, digits (pixels / 16). Held-out tasks (not
looked at before the share was fixed): Adult and California (the loaders),
breast cancer standardised and raw, diabetes with its raw features
(``load_diabetes(scaled=False)``, raw target), Bank's seven raw numeric
columns (age, balance, day, duration, campaign, pdays, previous), German
credit's numeric file as given.

    PYTHONPATH=. python benchmarks/utility/private_centring.py [--seeds 3] \\
        [--share 0.05] [--quantile Q] [--rounds R] [--only-derive] \\
        [--commit C] [--out FILE]
"""

import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from centring_probe import tasks as probe_tasks  # noqa: E402
from defaults import (  # noqa: E402
    markdown_table,
    result_parser,
    run_and_save_stamped,
)

EPSILONS = (0.5, 1.0, 2.0)
DERIVE = ("adult + constant 100", "california income", "synthetic + year", "digits")
METHODS = ("none", "exact", "centrer")


def _split(X, y, seed=0):
    from sklearn.model_selection import train_test_split

    return train_test_split(X, y, test_size=0.25, random_state=seed)


def _home():
    import os

    return Path(os.environ.get("DPESTIM_DATA", "../shared/datasets"))


def bank_csv():
    """Bank's CSV as read: a structured array, columns by name, raw units."""
    return np.genfromtxt(
        _home() / "bank" / "bank.csv", delimiter=";", names=True, dtype=None,
        encoding="utf-8",
    )  # fmt: skip


def heldout_tasks():
    """``(name, kind, X, y, X_test, y_test)`` of the held-out tasks."""
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True, scaled=False)
    Xa, Xb, ya, yb = _split(X, y)
    yield "diabetes, raw", "reg", Xa, ya, Xb, yb
    cols = ("age", "balance", "day", "duration", "campaign", "pdays", "previous")
    raw = bank_csv()
    X = np.column_stack([raw[c].astype(float) for c in cols])
    y = (raw["y"] == '"yes"').astype(int)
    Xa, Xb, ya, yb = _split(X, y)
    yield "bank, raw numeric", "clf", Xa, ya, Xb, yb
    G = np.loadtxt(_home() / "german" / "german.data-numeric")
    Xa, Xb, ya, yb = _split(G[:, :-1], (G[:, -1] == 2).astype(int))
    yield "german, numeric file", "clf", Xa, ya, Xb, yb


def all_tasks(only_derive=False):
    for task in probe_tasks():
        if task[0] in DERIVE or not only_derive:
            yield task
    if not only_derive:
        yield from heldout_tasks()


def run(args):
    from sklearn.pipeline import make_pipeline

    from dpestim import LogisticRegression, Ridge
    from dpestim.preprocessing import PrivateCentrer

    centrer_kw = {}
    if args.quantile is not None:
        centrer_kw["quantile"] = args.quantile
    if args.rounds is not None:
        centrer_kw["n_rounds"] = args.rounds
    records = []
    for name, kind, X, y, Xt, yt in all_tasks(args.only_derive):
        for eps in EPSILONS:
            for seed in range(args.seeds):

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

                mu = X.mean(axis=0)
                fits = {
                    "none": (make(eps), X, Xt),
                    "exact": (make(eps), X - mu, Xt - mu),
                    "centrer": (
                        make_pipeline(
                            PrivateCentrer(
                                epsilon=args.share * eps,
                                random_state=seed,
                                **centrer_kw,
                            ),
                            make((1 - args.share) * eps),
                        ),
                        X,
                        Xt,
                    ),
                }
                for method, (model, A, At) in fits.items():
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        score = float(model.fit(A, y).score(At, yt))
                    records.append(
                        dict(
                            task=name,
                            split="derive" if name in DERIVE else "held out",
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
        key = (r["split"], r["task"], r["epsilon"])
        cells.setdefault(key, {}).setdefault(r["method"], []).append(r["score"])
    rows, gains = [], {"derive": [], "held out": []}
    for (split, task, eps), m in sorted(cells.items(), key=lambda kv: kv[0][0]):
        med = {k: float(np.median(v)) for k, v in m.items()}
        gains[split].append(med["centrer"] - med["none"])
        rows.append(
            [split, task, f"{eps:g}"]
            + [f"{med[k]:.3f}" for k in METHODS]
            + [f"{med['centrer'] - med['none']:+.3f}"]
        )
    summary = "".join(
        f"- {split}: {len(g)} cells, median change {np.median(g):+.3f}, "
        f"better by > 0.005 in {sum(x > 0.005 for x in g)}, worse by > 0.005 in "
        f"{sum(x < -0.005 for x in g)} (worst {min(g):+.3f}, best {max(g):+.3f})\n"
        for split, g in gains.items()
        if g
    )
    return (
        "# PrivateCentrer before the defaults\n\n"
        f"Command: `{command}` (code {commit}; {cpu_s:.0f} CPU s). Defaults "
        '(`solver="auto"`), test accuracy or R^2, median over the seeds; '
        "`centrer` spends the share of the total epsilon on `PrivateCentrer` "
        "(its defaults otherwise) and the rest on the estimator; `exact` is not "
        "private (the upper bound). See the script's docstring.\n\n"
        "Change `centrer - none`:\n\n"
        + summary
        + "\n"
        + markdown_table(["split", "task", "eps", *METHODS, "change"], rows)
        + "\n"
    )


def main():
    p = result_parser(__doc__, "private_centring.md", seeds=3)
    p.add_argument("--share", type=float, default=0.05)
    p.add_argument("--quantile", type=float, default=None)
    p.add_argument("--rounds", type=int, default=None)
    p.add_argument("--only-derive", action="store_true")
    args = p.parse_args()
    run_and_save_stamped("private_centring.py", args, run, report)


if __name__ == "__main__":
    main()
