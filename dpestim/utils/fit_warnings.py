"""Warnings raised during one fit, kept for its privacy report.

The list lives in the fit (a context variable set for the duration of the
call), never on the estimator: fitting the same object from several threads
at once must not mix or delete another fit's warnings.
"""

import contextvars
import warnings
from contextlib import contextmanager

__all__ = ["collect_fit_warnings", "warn_in_fit"]

_CURRENT = contextvars.ContextVar("dpestim_fit_warnings", default=None)


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
    """Emit a warning and record ``"Category: message"`` for the current fit."""
    log = _CURRENT.get()
    if log is not None:
        log.append(f"{category.__name__}: {message}")
    warnings.warn(message, category, stacklevel=stacklevel + 1)
