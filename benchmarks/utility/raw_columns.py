"""Columns on very different scales: the raw CSVs of California and Adult.

The private row scale (``feature_scale="auto"``) is one number per row; a
column in thousands beside features of order one dominates every row's norm.
This script fits the shared raw CSVs as a user would read them (numeric
columns in their natural units, categorical columns one-hot), at the
estimators' defaults, and through a pipeline whose first step is
:class:`dpestim.preprocessing.StandardScaler` with public per-column bounds
(documented ranges, below) at a tenth of the total epsilon:

* California housing (``housing.csv.gz``, rows with a missing value
  dropped), ``Ridge``, target in dollars, R^2;
* Adult (``adult.data`` / ``adult.test``), ``LogisticRegression``,
  accuracy.

Adult also at ``delta=0`` (pure DP: ``"auto"`` picks dp-gd), with the
estimator's own column centring on (the default) and off
(``feature_centring=None``): the loss a user trial found there (sixteenth
session). Total epsilon 0.5 / 1 / 2, median of 3 seeds; scikit-learn on the same
columns for reference (California: ``Ridge(alpha=1e-3)``; Adult:
``LogisticRegression(max_iter=2000)`` on the raw columns).

    PYTHONPATH=. python benchmarks/utility/raw_columns.py [--seeds 3] [--commit C]

Writes ``benchmarks/results/raw_columns.md`` (or ``--out``).
"""

import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from defaults import _commit, result_parser, write_table  # noqa: E402

EPSILONS = (0.5, 1.0, 2.0)
#: Public bounds of California's numeric columns (the census block ranges,
#: rounded out), in the CSV's order.
CALIFORNIA_BOUNDS = {
    "longitude": (-125.0, -114.0),
    "latitude": (32.0, 42.0),
    "housing_median_age": (0.0, 52.0),
    "total_rooms": (0.0, 40000.0),
    "total_bedrooms": (0.0, 7000.0),
    "population": (0.0, 40000.0),
    "households": (0.0, 6000.0),
    "median_income": (0.0, 15.0),
}
#: Public bounds of Adult's numeric columns (adult.names' ranges).
ADULT_BOUNDS = {
    "age": (17.0, 90.0),
    "fnlwgt": (0.0, 1.5e6),
    "education-num": (1.0, 16.0),
    "capital-gain": (0.0, 99999.0),
    "capital-loss": (0.0, 4356.0),
    "hours-per-week": (1.0, 99.0),
}
ADULT_COLUMNS = [
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status",
    "occupation", "relationship", "race", "sex", "capital-gain", "capital-loss",
    "hours-per-week", "native-country", "income",
]  # fmt: skip


def _bounds(numeric, n_categorical):
    """``(low, high)`` arrays: the numeric columns' table, then ``[0, 1]``."""
    low = [b[0] for b in numeric.values()] + [0.0] * n_categorical
    high = [b[1] for b in numeric.values()] + [1.0] * n_categorical
    return np.array(low), np.array(high)


def _california(home):
    import pandas as pd
    from sklearn.model_selection import train_test_split

    df = pd.read_csv(home / "california_housing" / "housing.csv.gz").dropna()
    num = list(CALIFORNIA_BOUNDS)
    X = pd.get_dummies(df[num + ["ocean_proximity"]], columns=["ocean_proximity"])
    X = X.astype(float)
    bounds = _bounds(CALIFORNIA_BOUNDS, X.shape[1] - len(num))
    y = df["median_house_value"].to_numpy(float)
    Xtr, Xte, ytr, yte = train_test_split(X.to_numpy(), y, random_state=0)
    return Xtr, ytr, Xte, yte, bounds


def _adult(home):
    import pandas as pd
    from sklearn.compose import ColumnTransformer
    from sklearn.preprocessing import OneHotEncoder

    read = dict(names=ADULT_COLUMNS, skipinitialspace=True, na_values="?")
    tr = pd.read_csv(home / "adult" / "adult.data", **read)
    te = pd.read_csv(home / "adult" / "adult.test", skiprows=1, **read)
    num = list(ADULT_BOUNDS)
    cat = [c for c in ADULT_COLUMNS[:-1] if c not in num]
    ct = ColumnTransformer(
        [("num", "passthrough", num)]
        + [("cat", OneHotEncoder(handle_unknown="ignore", sparse_output=False), cat)]
    )
    Xtr = ct.fit_transform(tr[ADULT_COLUMNS[:-1]].fillna("?"))
    Xte = ct.transform(te[ADULT_COLUMNS[:-1]].fillna("?"))
    bounds = _bounds(ADULT_BOUNDS, Xtr.shape[1] - len(num))
    ytr = tr["income"].str.contains(">50K").to_numpy(int)
    yte = te["income"].str.contains(">50K").to_numpy(int)
    return Xtr, ytr, Xte, yte, bounds


def main():
    from sklearn.linear_model import LogisticRegression as SkLR
    from sklearn.linear_model import Ridge as SkRidge
    from sklearn.pipeline import make_pipeline

    from dpestim import LogisticRegression, Ridge
    from dpestim.datasets import get_data_home
    from dpestim.preprocessing import StandardScaler

    p = result_parser(__doc__, "raw_columns.md", seeds=3)
    args = p.parse_args()
    home = Path(get_data_home())
    lines = [
        f"Median of {args.seeds} seeds; eps = the total budget (scaler and "
        f"model); code "
        f"{args.commit or _commit()} (benchmarks/utility/raw_columns.py).",
        "",
        "| data | model | scikit-learn | eps=0.5 | eps=1 | eps=2 |",
        "|---|---|---|---|---|---|",
    ]
    pure = {"delta": 0.0}
    tasks = (
        ("california (R^2)", _california, Ridge, SkRidge(alpha=1e-3), {}, ()),
        ("adult (accuracy)", _adult, LogisticRegression, SkLR(max_iter=2000),
         {"classes": [0, 1]},
         (("defaults, delta=0", pure, False),
          ("defaults, delta=0, feature_centring=None",
           {**pure, "feature_centring": None}, False),
          ("private StandardScaler (Gaussian, delta 1e-6), then defaults, delta=0",
           pure, True))),
    )  # fmt: skip
    for name, loader, Est, ref, kw, extra_rows in tasks:
        try:
            Xtr, ytr, Xte, yte, bounds = loader(home)
        except OSError as exc:  # missing data: skip, say so
            print(f"skip {name}: {exc}", flush=True)
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sk = ref.fit(Xtr, ytr).score(Xte, yte)
        rows = (
            ("defaults", {}, False),
            ("private StandardScaler, then defaults", {}, True),
            *extra_rows,
        )
        for label, est_kw, scaled in rows:
            row = []
            for eps in EPSILONS:
                scores = []
                for seed in range(args.seeds):
                    if not scaled:
                        model = Est(epsilon=eps, random_state=seed, **kw, **est_kw)
                    else:
                        model = make_pipeline(
                            StandardScaler(
                                bounds=bounds, epsilon=0.1 * eps, random_state=seed
                            ),
                            Est(epsilon=0.9 * eps, random_state=seed, **kw, **est_kw),
                        )
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        scores.append(model.fit(Xtr, ytr).score(Xte, yte))
                row.append(f"{np.median(scores):.3f}")
            line = f"| {name} | {label} | {sk:.3f} | " + " | ".join(row) + " |"
            print(line, flush=True)
            lines.append(line)
    write_table(args.out, lines)


if __name__ == "__main__":
    main()
