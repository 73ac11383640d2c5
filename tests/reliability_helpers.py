"""Helpers of the reliability tests: a per-case time limit and error checks."""

import signal
import threading
from contextlib import contextmanager


class CaseTimeout(Exception):
    """A case ran past its time limit (a hang)."""


@contextmanager
def time_limit(seconds):
    """Raise :class:`CaseTimeout` if the block uses more than ``seconds`` of CPU.

    Process CPU time (``ITIMER_PROF``), not wall time, so that a machine
    shared with other jobs does not fail a case. Main thread, POSIX only: a
    Python loop is interrupted; a numba loop when it returns, so the case
    still fails.
    """
    if not hasattr(signal, "setitimer") or threading.current_thread() is not (
        threading.main_thread()
    ):
        yield
        return

    def handler(signum, frame):
        raise CaseTimeout(f"case ran longer than {seconds} s")

    old = signal.signal(signal.SIGPROF, handler)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, old)


def is_clean_error(exc):
    """A ValueError/TypeError raised by dpestim, scikit-learn or NumPy checks,
    never from numba internals, with a message."""
    return (
        isinstance(exc, ValueError | TypeError)
        and not isinstance(exc, CaseTimeout)
        and "numba" not in type(exc).__module__
        and bool(str(exc))
    )
