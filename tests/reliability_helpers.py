"""Helpers of the reliability tests: a per-case time limit and error checks."""

import signal
import threading
from contextlib import contextmanager


class CaseTimeout(Exception):
    """A case ran past its time limit (a hang)."""


@contextmanager
def time_limit(seconds):
    """Raise :class:`CaseTimeout` if the block runs longer than ``seconds``.

    Uses ``SIGALRM`` (main thread, POSIX): a Python loop is interrupted; a
    numba loop is interrupted when it returns, so the case still fails.
    """
    if not hasattr(signal, "setitimer") or threading.current_thread() is not (
        threading.main_thread()
    ):
        yield
        return

    def handler(signum, frame):
        raise CaseTimeout(f"case ran longer than {seconds} s")

    old = signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def is_clean_error(exc):
    """A ValueError/TypeError raised by dpestim, scikit-learn or NumPy checks,
    never from numba internals, with a message."""
    return (
        isinstance(exc, ValueError | TypeError)
        and not isinstance(exc, CaseTimeout)
        and "numba" not in type(exc).__module__
        and bool(str(exc))
    )
