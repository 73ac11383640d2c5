"""Loaders for the offline benchmark datasets.

All preprocessing here is **data-independent**: numeric columns are scaled by
fixed public constants written in this file (documented value ranges, census
top-codes or round bounds) and clipped, and categorical columns are one-hot
encoded with category lists copied from the datasets' documentation.  Nothing is
fitted on the data (no min/max, mean/std or category discovery), because any
statistic computed from the private records would itself leak information that
the differential-privacy accounting of the estimators does not cover.  The
clipping also gives every row a known norm bound.
"""

import csv
import gzip

import numpy as np
from sklearn.utils import Bunch

from ._bunch import finish
from ._home import _paths


# ----------------------------------------------------------------- helpers
def _one_hot(values, categories, prefix):
    """One-hot encode ``values`` against a fixed category list."""
    index = {c: i for i, c in enumerate(categories)}
    unknown = set(values) - set(index)
    if unknown:
        raise ValueError(f"{prefix}: unexpected categories {sorted(unknown)}")
    out = np.zeros((len(values), len(categories)))
    out[np.arange(len(values)), [index[v] for v in values]] = 1.0
    return out, [f"{prefix}={c}" for c in categories]


def _split(names):
    """Split a documentation-style ``"a, b, c"`` list."""
    return names.split(", ")


def _lin(lo, hi):
    """Scale linearly from ``[lo, hi]`` to ``[0, 1]`` and clip."""
    return lambda x: np.clip((x - lo) / (hi - lo), 0.0, 1.0)


def _log(hi):
    """``log1p(x) / log1p(hi)`` for ``x >= 0`` (negatives -> 0), clipped."""
    return lambda x: np.clip(np.log1p(np.maximum(x, 0)) / np.log1p(hi), 0, 1)


def _slog(hi):
    """Signed log scaling to ``[-1, 1]``."""
    return lambda x: np.clip(np.sign(x) * np.log1p(np.abs(x)) / np.log1p(hi), -1.0, 1.0)


def _table(header, rows):
    """Column name -> string array (the first of duplicate names wins)."""
    table = {}
    for j, name in enumerate(header):
        table.setdefault(name, np.array([r[j] for r in rows]))
    return table


def _encode(table, numeric, categorical):
    """Dense float64 design matrix from fixed numeric and one-hot specs."""
    blocks, names = [], []
    for col, scale in numeric:
        blocks.append(scale(table[col].astype(np.float64))[:, None])
        names.append(col)
    for col, cats in categorical:
        block, block_names = _one_hot(table[col], cats, col)
        blocks.append(block)
        names += block_names
    return np.hstack(blocks), names


def _read_csv(path, **kwargs):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", newline="") as f:
        rows = [r for r in csv.reader(f, **kwargs) if r]
    return rows[0], rows[1:]


# ------------------------------------------------------------------ Adult
# fmt: off
_ADULT_COLUMNS = _split(
    "age, workclass, fnlwgt, education, education-num, marital-status, "
    "occupation, relationship, race, sex, capital-gain, capital-loss, "
    "hours-per-week, native-country, income"
)
# Census top-code of the capital columns (99999).
_ADULT_NUMERIC = [
    ("age", _lin(0, 100)),
    ("education-num", _lin(0, 16)),
    ("capital-gain", _log(99999)),
    ("capital-loss", _log(99999)),
    ("hours-per-week", _lin(0, 100)),
]
# Category lists copied from adult.names; "?" (missing) is its own category
# in the three columns that have missing values.
_ADULT_CATEGORICAL = [
    ("workclass", _split(
        "Private, Self-emp-not-inc, Self-emp-inc, Federal-gov, Local-gov, "
        "State-gov, Without-pay, Never-worked, ?"
    )),
    ("education", _split(
        "Bachelors, Some-college, 11th, HS-grad, Prof-school, Assoc-acdm, "
        "Assoc-voc, 9th, 7th-8th, 12th, Masters, 1st-4th, 10th, Doctorate, "
        "5th-6th, Preschool"
    )),
    ("marital-status", _split(
        "Married-civ-spouse, Divorced, Never-married, Separated, Widowed, "
        "Married-spouse-absent, Married-AF-spouse"
    )),
    ("occupation", _split(
        "Tech-support, Craft-repair, Other-service, Sales, Exec-managerial, "
        "Prof-specialty, Handlers-cleaners, Machine-op-inspct, Adm-clerical, "
        "Farming-fishing, Transport-moving, Priv-house-serv, Protective-serv, "
        "Armed-Forces, ?"
    )),
    ("relationship", _split(
        "Wife, Own-child, Husband, Not-in-family, Other-relative, Unmarried"
    )),
    ("race", _split("White, Asian-Pac-Islander, Amer-Indian-Eskimo, Other, Black")),
    ("sex", _split("Female, Male")),
    ("native-country", _split(
        "United-States, Cambodia, England, Puerto-Rico, Canada, Germany, "
        "Outlying-US(Guam-USVI-etc), India, Japan, Greece, South, China, Cuba, "
        "Iran, Honduras, Philippines, Italy, Poland, Jamaica, Vietnam, Mexico, "
        "Portugal, Ireland, France, Dominican-Republic, Laos, Ecuador, Taiwan, "
        "Haiti, Columbia, Hungary, Guatemala, Nicaragua, Scotland, Thailand, "
        "Yugoslavia, El-Salvador, Trinadad&Tobago, Peru, Hong, "
        "Holand-Netherlands, ?"
    )),
]
# fmt: on

#: Public schema of the raw Adult files (``adult.names``): the column names in
#: file order, and each categorical column's category list.
ADULT_COLUMNS = tuple(_ADULT_COLUMNS)
ADULT_CATEGORIES = {name: list(cats) for name, cats in _ADULT_CATEGORICAL}


def _adult_file(path):
    with open(path, newline="") as f:
        rows = [
            r
            for r in csv.reader(f, skipinitialspace=True)
            if r and not r[0].startswith("|")
        ]
    bad = [r for r in rows if len(r) != len(_ADULT_COLUMNS)]
    if bad:
        raise ValueError(f"{path}: malformed row {bad[0]!r}")
    table = _table(_ADULT_COLUMNS, rows)
    X, names = _encode(table, _ADULT_NUMERIC, _ADULT_CATEGORICAL)
    y = (np.char.rstrip(table["income"], ".") == ">50K").astype(np.int64)
    return X, y, {"sex": table["sex"], "race": table["race"]}, names


def load_adult(*, data_home=None, return_X_y=False, as_frame=False):
    """Load raw UCI Adult (adult.data / adult.test) as dense features.

    Numeric columns are scaled by fixed public constants and clipped to
    [0, 1]: ``age / 100``, ``education-num / 16``, ``hours-per-week / 100``,
    ``log1p(capital-gain) / log1p(99999)`` and the same for capital-loss
    (99999 is the census top-code).  ``fnlwgt`` (a sampling weight) is
    dropped.  The 8 categorical columns are one-hot encoded with the category
    lists of ``adult.names``; missing values ``?`` form their own category.
    Privacy reason: no statistic is fitted on the (private) data, so the
    encoding spends no privacy budget and leaks nothing.

    The data come from UCI Adult (Becker and Kohavi, 1996; CC BY 4.0), files
    ``adult/adult.data`` and ``adult/adult.test`` of the data home (md5 equal to
    UCI's published values; see the data home's README). Nothing is downloaded: the
    file must be in the folder given by :func:`get_data_home`.

    Parameters
    ----------
    data_home : path-like, default=None
        Folder holding the datasets; defaults to :func:`get_data_home`.
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of the Bunch.
    as_frame : bool, default=False
        Give ``data`` (and ``data_test``) as a pandas DataFrame and the
        targets as Series (needs pandas; sparse data become sparse columns).

    Returns
    -------
    sklearn.utils.Bunch
        ``data`` (32561 x 107 float64), ``target`` ({0, 1}, 1 = >50K),
        ``data_test`` (16281 x 107), ``target_test``, ``feature_names``,
        ``sensitive`` / ``sensitive_test`` (``{"sex", "race"}`` string
        arrays), ``DESCR``.
    """
    train, test = _paths("adult", data_home)
    X, y, sens, names = _adult_file(train)
    X_test, y_test, sens_test, _ = _adult_file(test)
    bunch = Bunch(
        data=X,
        target=y,
        data_test=X_test,
        target_test=y_test,
        feature_names=names,
        sensitive=sens,
        sensitive_test=sens_test,
        DESCR="UCI Adult (raw), fixed public scaling; 1 = >50K.",
    )
    return finish(bunch, return_X_y, as_frame)


# ----------------------------------------------------- California housing
def load_california_housing(*, data_home=None, return_X_y=False, as_frame=False):
    """Load California housing (1990 census, handson-ml2 copy).

    The 207 rows with a missing ``total_bedrooms`` are dropped (20433 rows
    remain).  Features, scaled by fixed public constants and clipped:
    longitude/latitude linearly over California's bounding box
    ([-124.5, -114] x [32.5, 42]), ``housing_median_age / 52`` (census
    top-code), ``log1p(count) / log1p(1e5)`` for total_rooms,
    total_bedrooms, population and households, ``median_income / 15``
    (top-code, in $10k), then one-hot ``ocean_proximity`` (5 fixed
    categories).  Nothing is fitted on the data (see the module docstring).

    The data come from California housing (Pace and Barry, 1997; 1990 census), file
    ``california_housing/housing.csv.gz`` of the data home, copied from
    ``ageron/handson-ml2`` (commit and checksum in the data home's README). Nothing
    is downloaded: the file must be in the folder given by :func:`get_data_home`.

    Parameters
    ----------
    data_home : path-like, default=None
        Folder holding the datasets; defaults to :func:`get_data_home`.
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of the Bunch.
    as_frame : bool, default=False
        Give ``data`` (and ``data_test``) as a pandas DataFrame and the
        targets as Series (needs pandas; sparse data become sparse columns).

    Returns
    -------
    sklearn.utils.Bunch
        ``data`` (20433 x 13 float64, all rows), ``target`` (median house
        value in $100k, capped at 5.00001), the fixed public split
        ``data_train`` / ``target_train`` (16347 rows) and ``data_test`` /
        ``target_test`` (4086 rows, see :func:`california_test_rows`),
        ``feature_names``, ``DESCR``. With ``return_X_y=True``:
        ``(data, target)``, all rows.
    """
    (path,) = _paths("california_housing", data_home)
    header, rows = _read_csv(path)
    rows = [r for r in rows if r[header.index("total_bedrooms")] != ""]
    table = _table(header, rows)
    counts = ("total_rooms", "total_bedrooms", "population", "households")
    numeric = [
        ("longitude", _lin(-124.5, -114.0)),
        ("latitude", _lin(32.5, 42.0)),
        ("housing_median_age", _lin(0, 52)),
    ]
    numeric += [(c, _log(1e5)) for c in counts]
    numeric += [("median_income", _lin(0, 15))]
    cats = [
        ("ocean_proximity", ["<1H OCEAN", "INLAND", "ISLAND", "NEAR BAY", "NEAR OCEAN"])
    ]
    X, names = _encode(table, numeric, cats)
    y = table["median_house_value"].astype(np.float64) / 1e5
    test = california_test_rows(X.shape[0])
    bunch = Bunch(
        data=X,
        target=y,
        data_train=X[~test],
        target_train=y[~test],
        data_test=X[test],
        target_test=y[test],
        feature_names=names,
        DESCR="California housing; target in $100k; rows with "
        "missing total_bedrooms dropped.",
    )
    return finish(bunch, return_X_y, as_frame)


def california_test_rows(n_rows=20433):
    """The fixed public test split of California housing (a boolean mask).

    The dataset has no official split. This one depends only on the row
    count: the first ``n_rows // 5`` positions of the permutation
    ``numpy.random.default_rng(20433).permutation(n_rows)``, so it is the
    same on every machine and reveals nothing about the records.

    Parameters
    ----------
    n_rows : int, default=20433
        Number of rows (20433 after dropping the rows with a missing value).

    Returns
    -------
    mask : ndarray of bool of shape (n_rows,)
        True for test rows.
    """
    mask = np.zeros(n_rows, dtype=bool)
    mask[np.random.default_rng(20433).permutation(n_rows)[: n_rows // 5]] = True
    return mask


# ----------------------------------------------------------------- COMPAS
_COMPAS_RACES = _split(
    "African-American, Caucasian, Hispanic, Other, Asian, Native American"
)


def load_compas(*, data_home=None, return_X_y=False, as_frame=False):
    """Load ProPublica COMPAS two-year recidivism with the standard filter.

    Rows are kept when ``|days_b_screening_arrest| <= 30`` (non-empty),
    ``is_recid != -1``, ``c_charge_degree != "O"`` and
    ``score_text != "N/A"`` (6172 rows).  Features, scaled by fixed
    constants and clipped: ``age / 100``, ``log1p(priors_count) / log1p(50)``,
    ``log1p(juv_*_count) / log1p(20)``, then one-hot ``c_charge_degree``
    (F, M), ``sex`` and ``race`` (6 fixed categories).  No score columns are
    used.

    The data come from ProPublica COMPAS two-year recidivism ("Machine Bias", 2016),
    file ``compas/compas-scores-two-years.csv`` of the data home, unmodified from
    ``propublica/compas-analysis`` (commit in the data home's README). Nothing is
    downloaded: the file must be in the folder given by :func:`get_data_home`.

    Parameters
    ----------
    data_home : path-like, default=None
        Folder holding the datasets; defaults to :func:`get_data_home`.
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of the Bunch.
    as_frame : bool, default=False
        Give ``data`` (and ``data_test``) as a pandas DataFrame and the
        targets as Series (needs pandas; sparse data become sparse columns).

    Returns
    -------
    sklearn.utils.Bunch
        ``data`` (6172 x 15 float64), ``target`` (``two_year_recid``),
        ``feature_names``, ``sensitive`` (``{"race", "sex"}`` string arrays),
        ``DESCR``.
    """
    (path,) = _paths("compas", data_home)
    header, rows = _read_csv(path)
    col = {
        name: header.index(name)
        for name in (
            "days_b_screening_arrest",
            "is_recid",
            "c_charge_degree",
            "score_text",
        )
    }

    def keep(r):
        days = r[col["days_b_screening_arrest"]]
        return (
            days != ""
            and abs(float(days)) <= 30
            and r[col["is_recid"]] != "-1"
            and r[col["c_charge_degree"]] != "O"
            and r[col["score_text"]] != "N/A"
        )

    table = _table(header, [r for r in rows if keep(r)])
    numeric = [("age", _lin(0, 100)), ("priors_count", _log(50))]
    numeric += [(f"juv_{k}_count", _log(20)) for k in ("fel", "misd", "other")]
    cats = [
        ("c_charge_degree", ["F", "M"]),
        ("sex", ["Female", "Male"]),
        ("race", _COMPAS_RACES),
    ]
    X, names = _encode(table, numeric, cats)
    bunch = Bunch(
        data=X,
        target=table["two_year_recid"].astype(np.int64),
        feature_names=names,
        sensitive={"race": table["race"], "sex": table["sex"]},
        DESCR="ProPublica COMPAS, standard filter; 1 = recidivated within two years.",
    )
    return finish(bunch, return_X_y, as_frame)


# ----------------------------------------------------------------- German
def _codes(attr, n, start=0):
    return [f"A{attr}{i}" for i in range(start, start + n)]


_GERMAN_COLUMNS = [
    ("checking", _codes(1, 4, 1)),
    ("duration", _lin(0, 72)),
    ("credit_history", _codes(3, 5)),
    ("purpose", _codes(4, 10) + ["A410"]),
    ("credit_amount", _log(1e5)),
    ("savings", _codes(6, 5, 1)),
    ("employment", _codes(7, 5, 1)),
    ("installment_rate", _lin(0, 4)),
    ("personal_status_sex", _codes(9, 5, 1)),
    ("other_debtors", _codes(10, 3, 1)),
    ("residence_since", _lin(0, 4)),
    ("property", _codes(12, 4, 1)),
    ("age", _lin(0, 100)),
    ("other_installments", _codes(14, 3, 1)),
    ("housing", _codes(15, 3, 1)),
    ("existing_credits", _lin(0, 4)),
    ("job", _codes(17, 4, 1)),
    ("people_liable", _lin(0, 2)),
    ("telephone", _codes(19, 2, 1)),
    ("foreign_worker", _codes(20, 2, 1)),
]


def load_german(*, data_home=None, return_X_y=False, as_frame=False):
    """Load UCI Statlog German Credit from the symbolic ``german.data``.

    The 7 numeric attributes are scaled by fixed constants and clipped:
    ``duration / 72`` (months), ``log1p(credit_amount) / log1p(1e5)`` (DM),
    ``installment_rate / 4``, ``residence_since / 4``, ``age / 100``,
    ``existing_credits / 4``, ``people_liable / 2``.  The 13 qualitative
    attributes are one-hot encoded with the code lists of ``german.doc``.

    The data come from UCI Statlog German Credit (Hofmann; CC BY 4.0), file
    ``german/german.data`` of the data home (provenance in its README). Nothing is
    downloaded: the file must be in the folder given by :func:`get_data_home`.

    Parameters
    ----------
    data_home : path-like, default=None
        Folder holding the datasets; defaults to :func:`get_data_home`.
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of the Bunch.
    as_frame : bool, default=False
        Give ``data`` (and ``data_test``) as a pandas DataFrame and the
        targets as Series (needs pandas; sparse data become sparse columns).

    Returns
    -------
    sklearn.utils.Bunch
        ``data`` (1000 x 63 float64), ``target`` ({0, 1}, 1 = good credit,
        700 of them), ``feature_names``, ``sensitive`` (``"sex"`` from
        attribute 9 as "female"/"male" strings, ``"age"`` in years),
        ``DESCR``.
    """
    (path,) = _paths("german", data_home)
    with open(path) as f:
        rows = [line.split() for line in f if line.strip()]
    names = [c for c, _ in _GERMAN_COLUMNS]
    table = _table(names + ["class"], rows)
    numeric = [(c, s) for c, s in _GERMAN_COLUMNS if callable(s)]
    cats = [(c, s) for c, s in _GERMAN_COLUMNS if not callable(s)]
    X, feature_names = _encode(table, numeric, cats)
    female = np.isin(table["personal_status_sex"], ["A92", "A95"])
    bunch = Bunch(
        data=X,
        target=(table["class"] == "1").astype(np.int64),
        feature_names=feature_names,
        sensitive={
            "sex": np.where(female, "female", "male"),
            "age": table["age"].astype(np.float64),
        },
        DESCR="UCI Statlog German Credit; 1 = good credit risk.",
    )
    return finish(bunch, return_X_y, as_frame)


# ------------------------------------------------------------------- Bank
def load_bank(*, data_home=None, return_X_y=False, as_frame=False):
    """Load UCI Bank Marketing, ``bank.csv`` (the 10% sample, 4521 rows).

    Numeric columns, scaled by fixed constants and clipped: ``age / 100``,
    signed ``log1p(|balance|) / log1p(1e5)`` (euros, in [-1, 1]),
    ``day / 31``, ``log1p(campaign) / log1p(100)``,
    ``log1p(pdays) / log1p(1000)`` (``-1`` = never contacted -> 0),
    ``log1p(previous) / log1p(300)``.  ``duration`` is dropped: as
    ``bank-names.txt`` notes, it is only known after the call and nearly
    determines the target.  Categorical columns are one-hot encoded with
    the lists of ``bank-names.txt``.

    The data come from UCI Bank Marketing 10% sample (Moro, Cortez and Rita, 2014;
    CC BY 4.0), file ``bank/bank.csv`` of the data home (provenance in its README).
    Nothing is downloaded: the file must be in the folder given by
    :func:`get_data_home`.

    Parameters
    ----------
    data_home : path-like, default=None
        Folder holding the datasets; defaults to :func:`get_data_home`.
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of the Bunch.
    as_frame : bool, default=False
        Give ``data`` (and ``data_test``) as a pandas DataFrame and the
        targets as Series (needs pandas; sparse data become sparse columns).

    Returns
    -------
    sklearn.utils.Bunch
        ``data`` (4521 x 50 float64), ``target`` ({0, 1}, 1 = subscribed),
        ``feature_names``, ``sensitive`` (``"age"`` in years, ``"marital"``
        strings), ``DESCR``.
    """
    (path,) = _paths("bank", data_home)
    header, rows = _read_csv(path, delimiter=";")
    table = _table(header, rows)
    numeric = [
        ("age", _lin(0, 100)),
        ("balance", _slog(1e5)),
        ("day", _lin(0, 31)),
        ("campaign", _log(100)),
        ("pdays", _log(1000)),
        ("previous", _log(300)),
    ]
    no_yes = ["no", "yes"]
    # fmt: off
    cats = [
        ("job", _split(
            "admin., unknown, unemployed, management, housemaid, entrepreneur, "
            "student, blue-collar, self-employed, retired, technician, services"
        )),
        ("marital", _split("married, divorced, single")),
        ("education", _split("unknown, secondary, primary, tertiary")),
        ("default", no_yes), ("housing", no_yes), ("loan", no_yes),
        ("contact", _split("unknown, telephone, cellular")),
        ("month", _split(
            "jan, feb, mar, apr, may, jun, jul, aug, sep, oct, nov, dec"
        )),
        ("poutcome", _split("unknown, other, failure, success")),
    ]
    # fmt: on
    X, names = _encode(table, numeric, cats)
    bunch = Bunch(
        data=X,
        target=(table["y"] == "yes").astype(np.int64),
        feature_names=names,
        sensitive={"age": table["age"].astype(np.float64), "marital": table["marital"]},
        DESCR="UCI Bank Marketing (bank.csv, 10% sample); "
        "1 = subscribed a term deposit.",
    )
    return finish(bunch, return_X_y, as_frame)
