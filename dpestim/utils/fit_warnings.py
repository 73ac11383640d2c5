"""Warnings raised during one fit, kept for its privacy report.

The list lives in the fit (a context variable set for the duration of the
call), never on the estimator: fitting the same object from several threads
at once must not mix or delete another fit's warnings.
"""

import contextvars
import os
import sys
import warnings
from contextlib import contextmanager

import sklearn

__all__ = ["collect_fit_warnings", "warn_in_fit", "warn_outside"]

_CURRENT = contextvars.ContextVar("dpestim_fit_warnings", default=None)
#: Directories (with a separator) of the frames a warning is not attributed
#: to: dpestim's, and scikit-learn's (its fit wrapper, its meta-estimators).
_INSIDE = (
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep,
    os.path.dirname(os.path.abspath(sklearn.__file__)) + os.sep,
)


@contextmanager
def collect_fit_warnings():
    """Collect the warnings of :func:`warn_in_fit` in this thread; yields the list."""
    log = []
    token = _CURRENT.set(log)
    try:
        yield log
    finally:
        _CURRENT.reset(token)


def warn_in_fit(message, category, stacklevel=2):
    """Emit a warning and record ``"Category: message"`` for the current fit.

    The warning is attributed to the first frame outside dpestim and
    scikit-learn (the user's line that called ``fit``, directly or through a
    pipeline or search), whatever the depth of the call inside them;
    ``stacklevel`` is used only when no such frame is found.
    """
    log = _CURRENT.get()
    if log is not None:
        log.append(f"{category.__name__}: {message}")
    warnings.warn(message, category, stacklevel=_outside_level(stacklevel + 1))


def warn_outside(message, category):
    """Emit a warning attributed to the user's line (as :func:`warn_in_fit`),
    without recording it in the current fit's report."""
    warnings.warn(message, category, stacklevel=_outside_level(2))


def _outside_level(default):
    """``stacklevel`` (``warnings.warn``'s, from this function's caller) of
    the first frame outside dpestim and scikit-learn."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(_INSIDE):
        frame, level = frame.f_back, level + 1
    return default if frame is None else level
