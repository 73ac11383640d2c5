"""One column in its own units among scaled ones: ``feature_balance`` on / off.

A user trial (2026-11-28) found the most harmful trap left at the defaults:
one numeric column left unscaled beside standardised and one-hot columns
sets the private row scale alone, and the fit learns nearly nothing at any
epsilon (Adult with its raw ``fnlwgt``: the majority rate). This script fits
every estimator at its defaults with the column balance on (``"auto"``, the
default) and off (``feature_balance=None``), same seeds, on:

* **derive** (the trial's cases, on which the rule was set): Adult with raw
  ``fnlwgt`` (``LogisticRegression``, ``LinearSVC``); California with raw
  ``population`` (``Ridge``, target in $100k);
* **held out** (never used to set it): California with raw ``total_rooms``
  (``Ridge``; ``LinearSVC`` for a value above the median), Adult with raw
  ``capital-gain``, Bank with raw ``balance``, COMPAS with raw ``age``
  (``LogisticRegression``), and the raw CSVs with every numeric column in
  its own units (``raw_columns.py``'s California and Adult: several columns
  on different scales, a cascade);
* **unchanged** (no column dominant: the balance should only cost its 1%):
  the project's loaders of Adult (dense), California, COMPAS and Bank.

The other numeric columns are standardised by scikit-learn's
``StandardScaler`` fitted on the training rows (the user's preprocessing,
not private), categorical columns one-hot. Epsilon 0.5 / 1 / 2 / inf,
median of the seeds; scikit-learn on the same features for reference.

    PYTHONPATH=. python benchmarks/utility/column_balance.py [--seeds 3] \\
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
from raw_columns import ADULT_COLUMNS, _adult, _california  # noqa: E402

EPSILONS = (0.5, 1.0, 2.0, float("inf"))


#: Columns of a summary of on-minus-off changes (:func:`change_row`).
CHANGE_HEAD = ["cells", "median change", "better > 0.005", "worse > 0.005",
               "worst", "best"]  # fmt: skip


def change_row(d):
    """The :data:`CHANGE_HEAD` cells of a list of on-minus-off changes."""
    if not d:
        return [str(len(d)), "-", "0", "0", "-", "-"]
    return [
        str(len(d)),
        f"{np.median(d):+.3f}",
        str(sum(x > 0.005 for x in d)),
        str(sum(x < -0.005 for x in d)),
        f"{min(d):+.3f}",
        f"{max(d):+.3f}",
    ]


def _frame_task(df, y, raw, numeric, categorical, seed=0):
    """``raw`` kept in its units, the other ``numeric`` columns standardised
    (fitted on the training rows), ``categorical`` one-hot; 75/25 split."""
    from sklearn.compose import ColumnTransformer
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    Xtr, Xte, ytr, yte = train_test_split(df, y, test_size=0.25, random_state=seed)
    ct = ColumnTransformer(
        [
            ("raw", "passthrough", [raw]),
            ("num", StandardScaler(), [c for c in numeric if c != raw]),
            (
                "cat",
                OneHotEncoder(handle_unknown="ignore", sparse_output=False),
                categorical,
            ),
        ]
    ).fit(Xtr)
    return ct.transform(Xtr), ytr, ct.transform(Xte), yte


def _home():
    from dpestim.datasets import get_data_home

    return Path(get_data_home())


def _adult_frame():
    import pandas as pd

    home = _home()
    read = dict(names=ADULT_COLUMNS, skipinitialspace=True, na_values="?")
    df = pd.concat(
        [
            pd.read_csv(home / "adult" / "adult.data", **read),
            pd.read_csv(home / "adult" / "adult.test", skiprows=1, **read),
        ]
    ).dropna(subset=["income"])
    y = df.pop("income").str.contains(">50K").to_numpy(int)
    numeric = ["age", "fnlwgt", "education-num", "capital-gain", "capital-loss",
               "hours-per-week"]  # fmt: skip
    categorical = [c for c in df.columns if c not in numeric]
    return df.fillna({c: "?" for c in categorical}), y, numeric, categorical


def _california_frame(label=False):
    import pandas as pd

    df = pd.read_csv(_home() / "california_housing" / "housing.csv.gz").dropna()
    y = df.pop("median_house_value").to_numpy(float) / 1e5
    if label:
        y = (y > np.median(y)).astype(int)
    numeric = [c for c in df.columns if c != "ocean_proximity"]
    return df, y, numeric, ["ocean_proximity"]


def _bank_frame():
    import pandas as pd

    df = pd.read_csv(_home() / "bank" / "bank.csv", sep=";")
    y = (df.pop("y") == "yes").to_numpy(int)
    numeric = ["age", "balance", "day", "duration", "campaign", "pdays", "previous"]
    return df, y, numeric, [c for c in df.columns if c not in numeric]


def _compas_frame():
    import pandas as pd

    df = pd.read_csv(_home() / "compas" / "compas-scores-two-years.csv")
    keep = (
        df.days_b_screening_arrest.between(-30, 30)
        & (df.is_recid != -1)
        & (df.c_charge_degree != "O")
    )
    df = df[keep]
    numeric = ["age", "juv_fel_count", "juv_misd_count", "juv_other_count",
               "priors_count"]  # fmt: skip
    categorical = ["sex", "race", "c_charge_degree"]
    return (
        df[numeric + categorical],
        df["two_year_recid"].to_numpy(int),
        numeric,
        (categorical),
    )


def _raw(frame, raw, **kw):
    def make():
        df, y, numeric, categorical = frame(**kw)
        return _frame_task(df, y, raw, numeric, categorical)

    return make


def _raw_csv(loader):
    def make():
        Xtr, ytr, Xte, yte, _ = loader(_home())
        return Xtr, ytr, Xte, yte

    return make


def _adult_dense():
    from sklearn.model_selection import train_test_split

    from dpestim.datasets import load_adult

    b = load_adult()
    X, Xt, y, yt = train_test_split(
        np.asarray(b.data, float), b.target, test_size=0.25, random_state=0
    )
    return X, y, Xt, yt


def _dense(A):
    return A.toarray() if hasattr(A, "toarray") else np.asarray(A)


def _loader(name):
    def make():
        X, y, Xt, yt, extra = load(name)
        X, Xt = (_dense(a) for a in (X, Xt))
        return X, y, Xt, yt

    return make


def tasks():
    """``(split, name, estimator name, make data)``."""
    c, r, s = "LogisticRegression", "Ridge", "LinearSVC"
    cal, adult = _california_frame, _adult_frame
    return [
        ("derive", "adult, raw fnlwgt", c, _raw(adult, "fnlwgt")),
        ("derive", "adult, raw fnlwgt", s, _raw(adult, "fnlwgt")),
        ("derive", "california, raw population", r, _raw(cal, "population")),
        ("held out", "california, raw total_rooms", r, _raw(cal, "total_rooms")),
        ("held out", "california (value > median), raw total_rooms", s,
         _raw(cal, "total_rooms", label=True)),
        ("held out", "adult, raw capital-gain", c, _raw(adult, "capital-gain")),
        ("held out", "bank, raw balance", c, _raw(_bank_frame, "balance")),
        ("held out", "compas, raw age", c, _raw(_compas_frame, "age")),
        ("held out", "california raw CSV (every column raw, $)", r,
         _raw_csv(_california)),
        ("held out", "adult raw CSV (every numeric column raw)", c, _raw_csv(_adult)),
        ("unchanged", "adult (dense loader)", c, _adult_dense),
        ("unchanged", "california (loader)", r, _loader("california")),
        ("unchanged", "compas (loader)", c, _loader("compas")),
        ("unchanged", "bank (loader)", c, _loader("bank")),
    ]  # fmt: skip


def run(args):
    import sklearn.linear_model as sk
    from sklearn.svm import LinearSVC as SkLinearSVC

    import dpestim

    records = []
    for split, name, est_name, make in tasks():
        try:
            Xtr, ytr, Xte, yte = make()
        except (OSError, KeyError, ValueError) as exc:  # missing data: say so
            print(f"skip {name}: {exc}", flush=True)
            continue
        Est = getattr(dpestim, est_name)
        kw = {} if est_name == "Ridge" else {"classes": np.unique(ytr)}
        if est_name == "Ridge" and np.ptp(ytr) > 1e3:  # dollars: scikit-learn's alpha
            ref = sk.Ridge(alpha=1e-3)
        else:
            ref = {"Ridge": sk.Ridge(), "LinearSVC": SkLinearSVC()}.get(
                est_name, sk.LogisticRegression(max_iter=3000)
            )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sk_score = float(ref.fit(Xtr, ytr).score(Xte, yte))
        for eps in EPSILONS:
            for balance in ("auto", None):
                seeds = range(1 if np.isinf(eps) else args.seeds)
                for seed in seeds:
                    model = Est(
                        epsilon=eps, random_state=seed, feature_balance=balance, **kw
                    )
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        model.fit(Xtr, ytr)
                    sigma = model.feature_balance_
                    records.append(
                        {
                            "split": split,
                            "task": name,
                            "estimator": est_name,
                            "epsilon": eps,
                            "balance": str(balance),
                            "seed": seed,
                            "score": float(model.score(Xte, yte)),
                            "sklearn": sk_score,
                            "scaled": 0 if sigma is None else int(np.sum(sigma != 1)),
                            "epsilon_spent": float(model.epsilon_),
                        }
                    )
            print(name, est_name, eps, flush=True)
    return records


def report(records, command, cpu_s, commit="?"):
    keys = []
    for r in records:
        key = (r["split"], r["task"], r["estimator"])
        if key not in keys:
            keys.append(key)
    rows, deltas = [], {"derive": [], "held out": [], "unchanged": []}
    for key in keys:
        sel = [r for r in records if (r["split"], r["task"], r["estimator"]) == key]
        row = [*key, f"{sel[0]['sklearn']:.3f}"]
        for eps in EPSILONS:
            on = [r for r in sel if r["epsilon"] == eps and r["balance"] == "auto"]
            off = [r for r in sel if r["epsilon"] == eps and r["balance"] == "None"]
            a = float(np.median([r["score"] for r in on]))
            b = float(np.median([r["score"] for r in off]))
            scaled = int(np.median([r["scaled"] for r in on]))
            row.append(f"{b:.3f} -> {a:.3f} ({scaled})")
            if np.isfinite(eps):
                deltas[key[0]].append(a - b)
        rows.append(row)
    head = ["split", "task", "estimator", "scikit-learn"] + [
        f"eps={e:g}: off -> on (columns scaled)" for e in EPSILONS
    ]
    summary = [[split, *change_row(d)] for split, d in deltas.items()]
    return "\n".join(
        [
            "# feature_balance: one column in its own units among scaled ones",
            "",
            f"Command: `{command}` (code {commit}; {cpu_s:.0f} CPU s). Defaults, "
            "test accuracy or R^2, median over the seeds (1 fit at eps=inf), "
            "the column balance off (`feature_balance=None`) -> on (the "
            "default); in brackets the columns it rescaled (median over the "
            "seeds). The other numeric columns standardised by scikit-learn on "
            "the training rows, categorical ones one-hot.",
            "",
            markdown_table(head, rows),
            "",
            "Private cells (eps 0.5 / 1 / 2), on minus off:",
            "",
            markdown_table(["split", *CHANGE_HEAD], summary),
            "",
        ]
    )


def main():
    p = result_parser(__doc__, "column_balance.md", seeds=3)
    args = p.parse_args()
    run_and_save_stamped("column_balance.py", args, run, report)


if __name__ == "__main__":
    main()
