"""Public per-column constants of a fit: ``feature_centring`` and
``feature_balance`` given as arrays.

A user (or :class:`~dpestim.model_selection.PrivateSearchCV`, which
estimates them once for all its candidates) may fix the centre ``c`` and
the column scales ``sigma`` the fit runs in: the rows are ``(x - c) /
sigma``, a per-record map with public constants, so nothing is estimated,
nothing is spent and the solver's guarantee is unchanged. The released
model is mapped back as for the private estimates (``coef_ = w / sigma``,
``intercept_ = b' - coef_ . c``).
"""

import numbers

import numpy as np

__all__ = ["centred", "is_public_columns", "public_columns"]

#: Largest absolute value of a public centre or column scale (and smallest
#: column scale): rows whose squared norm could overflow float64 otherwise.
_LIMIT = 1e150


def is_public_columns(value):
    """Whether ``value`` (a ``feature_centring`` / ``feature_balance``
    parameter) is an array of public constants, not ``"auto"``, a bool or
    ``None``."""
    return value is not None and not isinstance(
        value, (str, bool, np.bool_, numbers.Number)
    )


def public_columns(value, name, n_features):
    """The public array of parameter ``name``, validated, or ``None``.

    Raises a ``ValueError`` naming the parameter for a shape other than
    ``(n_features,)``, non-numeric or non-finite values, values beyond
    ``1e150`` and, for ``feature_balance``, scales that are not positive or
    below ``1e-150``.
    """
    if not is_public_columns(value):
        return None
    try:
        if np.asarray(value).dtype.kind not in "iuf":  # no strings, bools, objects
            raise TypeError
        a = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"{name} given as an array must hold numbers (one public value per column)."
        ) from None
    if a.shape != (n_features,):
        raise ValueError(
            f"{name} given as an array must have shape (n_features,) = "
            f"({n_features},), got {a.shape}."
        )
    if not np.isfinite(a).all() or np.abs(a).max(initial=0.0) > _LIMIT:
        raise ValueError(
            f"{name} given as an array must be finite, within +-{_LIMIT:g}."
        )
    if name == "feature_balance" and not (a >= 1.0 / _LIMIT).all():
        raise ValueError(
            "feature_balance given as an array holds the columns' scales: they "
            f"must be positive (at least {1.0 / _LIMIT:g})."
        )
    return a.copy()


def centred(X, c):
    """``X - c`` of dense ``X`` (computed in float64, stored in ``X``'s
    dtype: no float64 copy of float32 rows), a new array."""
    Xc = np.empty_like(X, order="K")
    np.subtract(X, c, out=Xc, dtype=np.float64)
    return Xc
