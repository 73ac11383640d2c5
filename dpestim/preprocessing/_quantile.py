"""A private quantile by the exponential mechanism on a public grid."""

import math

import numpy as np

from ..privacy.charging import FitCharge, charge_fit
from ..solvers.saddle import ExponentialMechanismDpEvent
from ..utils import check_generator

__all__ = ["private_quantile"]


def _check_bounds(bounds):
    try:
        lo, hi = (float(b) for b in bounds)
    except (TypeError, ValueError):
        raise ValueError(
            f"bounds must be a pair (lower, upper), got {bounds!r}."
        ) from None
    if not 0 < lo < hi < math.inf:
        raise ValueError(
            f"bounds must satisfy 0 < lower < upper < inf, got {bounds!r}."
        )
    return lo, hi


def private_quantile(
    values, quantile, epsilon, bounds, *, n_grid=256, random_state=None, label=None
):
    """An ``epsilon``-DP estimate of a quantile of non-negative ``values``.

    The exponential mechanism (Smith 2011) over ``n_grid`` public candidates
    spaced geometrically in ``bounds``, with utility ``-|#{v <= c} - q n|``.
    Adding or removing one value changes every utility by at most 1, so the
    mechanism is ``epsilon``-DP (add/remove) with selection probabilities
    ``exp(epsilon * u / 2)``. Its event is
    ``ExponentialMechanismDpEvent(epsilon)`` (pure DP; budgets account it as
    ``epsilon**2 / 2``-zCDP).

    Parameters
    ----------
    values : array-like of shape (n_samples,)
        One value per record (e.g. row or gradient norms).
    quantile : float in (0, 1)
    epsilon : float > 0
    bounds : (float, float)
        Public range ``0 < lower < upper`` of the candidates.
    n_grid : int, default=256
    random_state : None, int or numpy.random.Generator
    label : str or None
        Name of the charge announced to active budgets.

    Returns
    -------
    value : float
        The selected candidate.
    dp_event : DpEvent
    """
    if not 0 < quantile < 1:
        raise ValueError(f"quantile must be in (0, 1), got {quantile!r}.")
    epsilon = float(epsilon)
    if not 0 < epsilon < math.inf:
        raise ValueError(f"epsilon must be positive and finite, got {epsilon!r}.")
    lo, hi = _check_bounds(bounds)
    if int(n_grid) < 2:
        raise ValueError(f"n_grid must be >= 2, got {n_grid!r}.")
    event = ExponentialMechanismDpEvent(epsilon)
    values = np.asarray(values, dtype=np.float64).ravel()
    charge_fit(
        FitCharge(event, "add_or_remove_one", label or "private_quantile"),
        data=values,
        epsilon=epsilon,
        delta=0.0,
    )
    values = np.sort(values)
    grid = np.geomspace(lo, hi, int(n_grid))
    counts = np.searchsorted(values, grid, side="right")
    utility = -np.abs(counts - quantile * values.shape[0])
    logits = epsilon * utility / 2.0
    gumbel = check_generator(random_state).gumbel(size=grid.shape[0])
    return float(grid[np.argmax(logits + gumbel)]), event
