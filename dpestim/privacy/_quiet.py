"""Scoped silencing of ``dp_accounting``'s log lines.

``dp_accounting``'s RDP accountant logs through ``absl`` (for example
``_compute_log_a_frac failed to converge`` while a calibration probes large
sampling rates at fractional orders). These lines describe the numerical
search, not a failure of the fit, and users read them as errors.

:func:`quiet_accounting` drops exactly the records that ``dp_accounting``'s
own modules emit, and only while the wrapped call runs: it attaches a filter
to the ``absl`` logger and removes it afterwards. The user's logging
configuration (levels, handlers, filters of any logger) is never changed, and
every other ``absl`` record passes through.
"""

import contextlib
import functools
import logging
import os
import threading

import dp_accounting

__all__ = ["quiet_accounting"]

_PACKAGE_DIR = os.path.dirname(os.path.abspath(dp_accounting.__file__)) + os.sep
_LOGGER_NAME = "absl"


class _DropAccountingRecords(logging.Filter):
    """Reject log records created in ``dp_accounting``'s source files."""

    def filter(self, record):
        return not os.path.abspath(record.pathname).startswith(_PACKAGE_DIR)


_FILTER = _DropAccountingRecords()
_lock = threading.Lock()
_depth = 0


@contextlib.contextmanager
def _quiet():
    global _depth
    logger = logging.getLogger(_LOGGER_NAME)
    with _lock:
        _depth += 1
        if _depth == 1:
            logger.addFilter(_FILTER)
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                logger.removeFilter(_FILTER)


def quiet_accounting(func=None):
    """Silence ``dp_accounting``'s log lines within a call or a ``with`` block.

    Use as a decorator (``@quiet_accounting``) or a context manager
    (``with quiet_accounting():``). Re-entrant and thread-safe; on exit the
    ``absl`` logger's filters are exactly as before.
    """
    if func is None:
        return _quiet()

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with _quiet():
            return func(*args, **kwargs)

    return wrapper
