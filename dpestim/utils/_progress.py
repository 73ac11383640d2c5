"""Progress bars (tqdm) for fits and long commands, in one place.

An estimator fitted with ``verbose >= 1`` opens a :func:`fit_progress` bar
over the solver's noisy steps. Solvers whose loop can be run in pieces (the
gradient family, through
:func:`~dpestim.solvers.sgd.dp_sgd.noisy_gradient_descent`) read the open bar
with :func:`current_progress` and advance it chunk by chunk; the others leave
it to be completed when ``solve`` returns. Progress never changes a result:
a chunked run draws exactly the same random numbers as one call.

The bar shows only public quantities (step counts, fixed in advance). The
per-epoch training loss printed at ``verbose >= 2`` is computed from the
training data and is therefore labelled non-private.
"""

import contextlib
import contextvars
import sys

from tqdm import tqdm  # not tqdm.auto: no ipywidgets warning in notebooks

__all__ = ["current_progress", "fit_progress", "progress_bar"]

_current = contextvars.ContextVar("dpestim_fit_progress", default=None)

NON_PRIVATE_LOSS = (
    "NON-PRIVATE diagnostic (computed on the training data, not covered by the "
    "privacy guarantee; verbose=2 only)"
)


def progress_bar(
    iterable=None, *, total=None, desc=None, unit="it", disable=False, leave=True
):
    """A tqdm progress bar on standard error, the one style used by dpestim."""
    return tqdm(
        iterable,
        total=total,
        desc=desc,
        unit=unit,
        disable=disable,
        file=sys.stderr,
        dynamic_ncols=True,
        leave=leave,
    )


class _FitProgress:
    """The open bar of one fit, with the verbosity it was opened at."""

    def __init__(self, bar, verbose):
        self.bar = bar
        self.verbose = verbose

    def update(self, n_steps):
        self.bar.update(n_steps)

    def chunks(self, n_steps, steps_per_epoch, multiple_of=1):
        """``(start, stop)`` pieces of a run of ``n_steps``: about one epoch each.

        At most about 200 pieces (the bar's resolution), each a multiple of
        ``multiple_of`` steps (a solver whose step rule has a period).
        """
        size = max(1, round(steps_per_epoch), -(-n_steps // 200))
        size = multiple_of * max(1, -(-size // multiple_of))
        return [(lo, min(lo + size, n_steps)) for lo in range(0, n_steps, size)]

    @property
    def wants_loss(self):
        """Whether the per-epoch (non-private) training loss is printed."""
        return self.verbose >= 2

    def report_loss(self, epoch, loss):
        """Print a per-epoch training loss, labelled non-private (verbose >= 2)."""
        if self.wants_loss:
            self.bar.write(
                f"  epoch {epoch}: training loss {loss:.6g}  [{NON_PRIVATE_LOSS}]",
                file=sys.stderr,
            )


@contextlib.contextmanager
def fit_progress(verbose, total, desc):
    """Open a bar over ``total`` steps when ``verbose >= 1``; yield it or None."""
    if not verbose:
        token = _current.set(None)
        try:
            yield None
        finally:
            _current.reset(token)
        return
    progress = _FitProgress(
        progress_bar(total=int(total), desc=desc, unit="step"), int(verbose)
    )
    token = _current.set(progress)
    try:
        yield progress
        # Solvers that run their whole loop in one compiled call finish here.
        progress.bar.update(max(0, progress.bar.total - progress.bar.n))
    finally:
        _current.reset(token)
        progress.bar.close()


def current_progress():
    """The bar of the fit running in this context, or None (not verbose)."""
    return _current.get()


def plan_line(estimator, solver, plan, n_steps, noise_multiplier, epsilon):
    """The one-line plan printed by a verbose fit (public quantities only)."""
    delta = solver.guarantee_delta(estimator.delta)
    if delta == 0 and estimator.delta:
        delta_text = f"delta=0 (pure DP; delta={estimator.delta:g} ignored)"
    else:
        delta_text = f"delta={delta:g}"
    return (
        f"[{type(estimator).__name__}] solver={solver.name} n={plan.n_samples} "
        f"d={plan.n_features} steps={n_steps} noise_multiplier={noise_multiplier:.4g} "
        f"epsilon={epsilon:.4g} {delta_text}"
    )
