"""What a user may have done to the features before fitting (issue 25).

The preprocessings the benchmarks apply on top of a dataset's loader
(``defaults.load``): the defaults matrix's preprocessing axis
(``defaults.py --preprocessing``) and ``scale_invariance.py`` both use these
functions, so the two benchmarks measure the same transforms.

=============  ==============================================================
``loader``     the loader's features and target, unchanged
``unit-norm``  every row divided by its L2 norm (rows of norm 0 stay 0): the
               usual advice for DP (per-record, so private)
``x0.01``      ``X * 0.01`` (any ``x<k>`` is ``X * k``; per-record, private)
``x100``       ``X * 100``
``standard``   scikit-learn's ``StandardScaler`` fitted on the **training
               rows** (their mean and variance: **not private**, a reference
               for what a non-private pipeline would do); sparse inputs are
               made dense first (centring would densify them anyway)
``raw-target`` regression sets only: the target in its raw unit
               (California in dollars, the loader's $100k times 1e5;
               diabetes as scikit-learn ships it, the loader's target times
               100) and **no** ``y_bound`` given, so the estimator's default
               (``y_bound="auto"``, private) applies; not applicable to a
               classification set (``apply`` returns ``None``)
=============  ==============================================================
"""

import numpy as np
import scipy.sparse as sp

#: Every preprocessing of the axis, in run and report order.
PREPROCESSINGS = ("loader", "unit-norm", "x0.01", "x100", "standard", "raw-target")
LOADER = "loader"
#: Preprocessings fitted on the private training rows without DP.
NON_PRIVATE = frozenset({"standard"})
#: Raw target unit = loader target (``defaults.load``) times this factor.
RAW_TARGET = {"california": 1e5, "diabetes": 100.0}


def unit_rows(X):
    """Rows divided by their L2 norm; rows of norm 0 stay 0 (dense or CSR)."""
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64, copy=True)
        norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
        X.data /= np.repeat(np.where(norms > 0, norms, 1.0), np.diff(X.indptr))
        return X
    X = np.asarray(X, dtype=np.float64)
    norms = np.linalg.norm(X, axis=1)
    return X / np.where(norms > 0, norms, 1.0)[:, None]


def standardised(X, X_test):
    """``StandardScaler`` fitted on ``X`` (non-private), applied to both."""
    from sklearn.preprocessing import StandardScaler

    X, X_test = (A.toarray() if sp.issparse(A) else np.asarray(A) for A in (X, X_test))
    scaler = StandardScaler().fit(X)
    return scaler.transform(X), scaler.transform(X_test)


def label(name):
    """The report's name of a preprocessing (non-private ones marked)."""
    return f"{name} (non-private)" if name in NON_PRIVATE else name


def apply(name, dataset, X, y, X_test, y_test, extra):
    """``(X, y, X_test, y_test, extra)`` after preprocessing ``name``.

    ``extra`` is the loader's fit keywords (``y_bound`` of a regression set);
    a new dict is returned. ``None`` where ``name`` does not apply
    (``raw-target`` on a dataset without a raw target unit).
    """
    extra = dict(extra)
    if name == LOADER:
        return X, y, X_test, y_test, extra
    if name == "unit-norm":
        return unit_rows(X), y, unit_rows(X_test), y_test, extra
    if name == "standard":
        X, X_test = standardised(X, X_test)
        return X, y, X_test, y_test, extra
    if name == "raw-target":
        if dataset not in RAW_TARGET:
            return None
        k = RAW_TARGET[dataset]
        extra.pop("y_bound", None)
        return X, y * k, X_test, y_test * k, extra
    if name.startswith("x"):
        k = float(name[1:])
        return X * k, y, X_test * k, y_test, extra
    raise ValueError(f"unknown preprocessing {name!r}; one of {PREPROCESSINGS}")
