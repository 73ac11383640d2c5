"""Validation helpers: random state -> Generator, label sets, CSR indices,
and scikit-learn's ``validate_data`` without data in its messages."""

import contextlib
import math
import numbers

import numpy as np
from sklearn.utils.validation import validate_data

__all__ = [
    "check_generator",
    "check_label_values",
    "data_errors_without_values",
    "int32_indices",
    "validate_private_data",
]

#: Messages of scikit-learn's / NumPy's validation that quote the data (the
#: whole array for complex input, the offending cell for text, the array
#: for a 1-D or scalar ``X``), and the messages that replace them: an
#: exception text lands in logs, and the rows are private (user trials,
#: 2026-11-28). ``None``: keep the message's first line up to its colon
#: and its last line (scikit-learn's advice), drop the quoted array.
_QUOTING_MESSAGES = (
    (
        "Complex data not supported",
        "Complex data not supported: the input has complex values (not "
        "printed: the data are private).",
    ),
    (
        "could not convert",
        "the input has a value that is not a number (not printed: the data "
        "are private); encode text or categorical columns first (e.g. "
        "sklearn.preprocessing.OneHotEncoder).",
    ),
    ("Expected 2D array", None),
)


def _without_values(text):
    """The message replacing ``text`` (:data:`_QUOTING_MESSAGES`), or
    ``None`` when ``text`` quotes no data."""
    for start, replacement in _QUOTING_MESSAGES:
        if text.startswith(start):
            if replacement is not None:
                return replacement
            lines = text.strip().splitlines()
            head = lines[0].split(":")[0]
            return f"{head} (not printed: the data are private). {lines[-1]}"
    return None


@contextlib.contextmanager
def data_errors_without_values():
    """Raise a validation error that would quote the data again, same type,
    with a message that names the problem and not the values
    (:func:`_without_values`), and without the original as its context (a
    traceback would print it)."""
    try:
        yield
    except (ValueError, TypeError) as exc:
        text = _without_values(str(exc))
        if text is None:
            raise
        raise type(exc)(text) from None


def validate_private_data(estimator, *args, **kwargs):
    """scikit-learn's ``validate_data``, its errors without data values.

    The same checks and results; an error whose message would quote the
    data (:data:`_QUOTING_MESSAGES`) is raised again, same type, with a
    message that names the problem and not the values
    (:func:`data_errors_without_values`).
    """
    with data_errors_without_values():
        return validate_data(estimator, *args, **kwargs)


def int32_indices(X):
    """``X`` (CSR) with int32 ``indices`` and ``indptr`` when they fit.

    scipy builds CSR matrices with int32 or int64 index arrays depending on
    how they were made (a loader, ``hstack``, a product), and numba compiles
    every kernel that takes them once per index dtype. Passing int32 whenever
    the sizes allow keeps one compiled signature per kernel (the dense paths
    pass int32 placeholders too). Only the index arrays are converted (the
    values are unchanged); matrices too large for int32 are returned as they
    are.

    Parameters
    ----------
    X : scipy.sparse CSR matrix or array

    Returns
    -------
    X : the same type as ``X``
    """
    if X.indices.dtype == np.int32 and X.indptr.dtype == np.int32:
        return X
    limit = np.iinfo(np.int32).max
    if X.nnz > limit or max(X.shape) > limit:
        return X
    return type(X)(
        (X.data, X.indices.astype(np.int32), X.indptr.astype(np.int32)),
        shape=X.shape,
    )


def check_label_values(values, name):
    """Refuse labels that cannot be sorted and matched consistently.

    Class labels are sorted (``np.unique``) and matched by equality, so they
    must be all strings or all numbers, and never NaN (``nan != nan``: a NaN
    class could never be predicted as itself).

    Parameters
    ----------
    values : array-like
        Labels (``y`` or ``classes``).
    name : str
        Parameter named in the error.
    """
    a = np.asarray(values)
    if a.dtype == object:
        flat = a.ravel()
        is_str = [isinstance(v, str) for v in flat]
        if any(is_str) and not all(is_str):
            kinds = sorted({type(v).__name__ for v in flat})
            raise TypeError(
                f"{name} mixes strings with other types ({kinds}); labels must be "
                "all strings or all numbers."
            )
        if any(isinstance(v, numbers.Real) and math.isnan(v) for v in flat):
            raise ValueError(f"{name} contains NaN, which cannot be a class label.")
    elif a.dtype.kind == "f" and np.isnan(a).any():
        raise ValueError(f"{name} contains NaN, which cannot be a class label.")


def check_generator(random_state):
    """Turn ``random_state`` into a ``numpy.random.Generator``.

    Parameters
    ----------
    random_state : None, int, numpy.random.Generator or numpy.random.RandomState
        ``None`` draws fresh entropy from the operating system (the right
        choice for a release: the noise must be unpredictable); an int gives
        bit-reproducible fits; a Generator is used as is (and advanced); a
        legacy RandomState seeds a new Generator from its stream.

    Returns
    -------
    rng : numpy.random.Generator
    """
    if random_state is None:
        return np.random.default_rng()
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, numbers.Integral) and not isinstance(
        random_state, bool
    ):
        return np.random.default_rng(int(random_state))
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**32, size=4))
    raise TypeError(
        "random_state must be None, an int, a numpy.random.Generator or a "
        f"numpy.random.RandomState, got {type(random_state).__name__}."
    )
