"""A private quantile by the exponential mechanism on a public grid."""

import math
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import (
    Interval,
    validate_parameter_constraints,
)

from ..privacy.charging import FitCharge, charge_fit
from ..solvers.saddle import ExponentialMechanismDpEvent
from ..utils import check_generator

__all__ = ["private_quantile"]

#: Largest public grid (8 MiB of candidates): finer grids cost memory and
#: time for no accuracy (the bounds' geometric spacing is then below 1e-5
#: relative for any bounds within 1e-3 .. 1e3).
MAX_GRID = 2**20

#: Constraints shared with :func:`~dpestim.preprocessing.estimate_clip_norm`
#: (scikit-learn's parameter-validation style, always checked: they guard
#: the privacy guarantee).
QUANTILE_CONSTRAINTS = {
    "quantile": [Interval(Real, 0, 1, closed="neither")],
    "epsilon": [Interval(Real, 0, math.inf, closed="neither")],
    "bounds": [tuple, list, np.ndarray],
    "n_grid": [Interval(Integral, 2, MAX_GRID, closed="both")],
    "random_state": ["random_state", np.random.Generator],
}


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
        Number of candidates, in ``[2, 2**20]``.
    random_state : None, int or numpy.random.Generator
    label : str or None
        Name of the charge announced to active budgets.

    Returns
    -------
    value : float
        The selected candidate.

    Raises
    ------
    ValueError, TypeError
        On an invalid parameter (checked before anything is charged or read),
        in scikit-learn's ``InvalidParameterError`` style.
    dp_event : DpEvent
    """
    params = {"quantile": quantile, "epsilon": epsilon, "bounds": bounds}
    params |= {"n_grid": n_grid, "random_state": random_state, "label": label}
    validate_parameter_constraints(
        QUANTILE_CONSTRAINTS | {"label": [str, None]}, params, "private_quantile"
    )
    epsilon = float(epsilon)
    lo, hi = _check_bounds(bounds)
    event = ExponentialMechanismDpEvent(epsilon)
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 1:
        # one value per record: a 2-D input would let one record move a
        # whole row of values, beyond the event's sensitivity
        raise ValueError(
            "private_quantile needs values of shape (n_samples,), one per "
            f"record; got an array of shape {values.shape} (reduce each record "
            "to one value first, for example its row norm)."
        )
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
