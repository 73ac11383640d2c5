"""The target's private range (``Ridge``'s ``y_bound="auto"``,
``MinimaxRegressor``'s ``target_bound="auto"``).

A private centre (a median refined around itself) and a private spread
(the 75th percentile of ``|y - c|`` where the plan affords it, else the
median absolute deviation), each one exponential-mechanism draw of
:mod:`~dpestim.preprocessing._grid_quantile`; the range is mapped to
``-+ TARGET_HALF_RANGE`` for the solver (:func:`target_map`). Which draws run
and at which epsilons is the plan's (:mod:`~dpestim.preprocessing._fit_scales`).
"""

import math

import numpy as np

from ..exceptions import UtilityWarning
from ..utils.fit_warnings import warn_in_fit
from ._grid_quantile import (
    beyond_range,
    bin_quantile,
    positive_edges,
    signed_edges,
    warn_beyond_range,
)
from ._scale_plan import CENTRE_STAGES, ROBUST_SPREAD_UNITS

__all__ = [
    "COLLAPSED",
    "FENCE",
    "FENCES",
    "SPREAD_QUANTILES",
    "TARGET_HALF_RANGE",
    "exact_target_range",
    "private_target_range",
    "target_map",
    "target_note",
]

#: The quantile of ``|y - c|`` a target's spread ``m`` is, by the spread
#: draw's units (``ScalePlan.spread_units``). The median absolute deviation
#: (1 unit) is 0 when more than half of the targets share one value (counts,
#: hours per week, ratings) and tiny when the draws of a two-valued target
#: land between the values: the range collapsed and the fit predicted nearly
#: a constant (synthetic targets in {0, 1, 2}, 2,000 rows, epsilon 1:
#: training R^2 0.05 and -0.00 in 2 of 5 fits, scikit-learn 0.73; a count
#: zero in 68% of rows, 3,000 rows: R^2 -0.30 at every epsilon, scikit-learn
#: 0.52, now 0.07-0.09; ``benchmarks/utility/target_spread.py``). The 75th
#: percentile is 0 only when three quarters share a value, but it needs twice
#: the epsilon (:data:`~dpestim.preprocessing._scale_plan.ROBUST_SPREAD_UNITS`),
#: so it runs only where the full plan (four centre stages) affords it, and
#: the median where the budget is short (``doc/benchmarks/
#: private_target_range.md``).
SPREAD_QUANTILES = {1: 0.5, ROBUST_SPREAD_UNITS: 0.75}
#: A spread below this is a collapsed range (a ``UtilityWarning``,
#: post-processing of the released spread):
#: the quantile is 0 when three quarters of the targets (half, for the
#: median absolute deviation) share one value, and its draw then lands in
#: the grid's lowest bins (Adult's income as a 0/1 target: a spread of
#: 2e-10 at epsilon 1, R^2 -0.31 against scikit-learn's 0.376; a user
#: trial). Taking the quantile over the targets off the centre instead was
#: measured and dropped: few targets carry the spread then, and the draw
#: on them was unreliable at the target range's share (R^2 down to -1e22,
#: ``benchmarks/utility/target_spread.py``, the ``rare`` and
#: ``adult-income`` rows). Where ``epsilon n`` is large the collapsed draw
#: lands in the grid's lowest bin or at about the centre's own error (up to
#: 1e-5 on Adult's income, every fit warned); where it is small, the bins
#: between 0 and the rare value's deviation have nearly equal utility and
#: the draw may land anywhere among them (a synthetic 0/1 target, 3,000
#: rows: 0.007, not warned), so the warning is sure, not complete. An
#: absolute bar, in the target's units: the invariance tests' smallest
#: spread (``10 ** -3``) is 8 times above it; a bar relative to the centre
#: cannot tell a collapse onto a value ``v != 0`` (the centre's error, about
#: ``|v| 4e-6`` after four stages) from a target shifted by ``10 ** 4``
#: times its spread; such a collapse is not warned.
COLLAPSED = 1e-4
#: How each estimator's parameter takes a public bound (the warnings' advice).
_PUBLIC_BOUND = {
    "y_bound": "y_bound=(low, high)",
    "target_bound": "target_bound (a bound on |y|)",
}
#: The target range is the centre -+ ``FENCES[units] m``: 5 median absolute
#: deviations, or ``5 x 0.6745 / 1.1503 = 2.93`` 75th percentiles of ``|y -
#: c|``, both about 3.4 standard deviations of a normal target either way.
FENCES = {1: 5.0, ROBUST_SPREAD_UNITS: 5.0 * 0.6744897501960817 / 1.1503493803760079}
#: The fence of the median absolute deviation.
FENCE = FENCES[1]
#: Half-width the estimated target range is scaled to (see Ridge's
#: ``y_bound="auto"``). Chosen in the flat part of R^2 against the effective
#: half-range ``TARGET_HALF_RANGE * m / m_hat`` (``m_hat / m``, the private
#: spread's error, is 0.89-1.20 at epsilon 1 and 0.76-1.40 at 0.5, 1st-99th
#: percentiles, California): below about 3 dp-sgd's default step becomes
#: unstable on the squared loss (the clip no longer caps the residuals; the
#: cliff is there at epsilon 1e6 too), above it clipping costs a little.
#: Measured on California in $100k with the exact (non-private) range,
#: epsilon 1, dp-sgd, 20 seeds, test R^2 mean (sd): 2 -> 0.18 (0.14), 2.5 ->
#: 0.50 (0.12), 3 -> 0.619 (0.021), 4 -> 0.622 (0.019), 5 -> 0.618 (0.013),
#: 8 -> 0.608 (0.007). With the private range, the target ``k y + c`` (k in
#: 1e-3 .. 1e3, c in -1e4 .. 1e4, y in $100k and in dollars, 5 seeds): 3 ->
#: single fits 0.41-0.64, cells up to 0.05 from ``k = 1, c = 0``; 4 -> fits
#: 0.615-0.638, every cell within 0.003
#: (``benchmarks/utility/scale_invariance.py --parts california``).
TARGET_HALF_RANGE = 4.0


def private_target_range(
    y, epsilon, rng, stages=CENTRE_STAGES, spread_units=1, param="y_bound"
):
    """An ``(low, high)`` range of one target from ``stages + 1`` private draws.

    The centre ``c`` is a private median of ``y`` on the signed grid, refined
    ``stages - 1`` times (:data:`CENTRE_STAGES` - 1 where the budget affords
    it, :func:`affordable_stages`) by a private median of ``y - c`` (the
    grid's relative resolution, about 4.4% either way, then applies to the
    distance from the previous centre, not to ``|y|``: each stage divides the
    centre's error by about 20, so an offset ``10^4`` times the spread does
    not swamp it); the spread ``m`` is a private quantile of ``|y - c|`` (on
    the positive grid): the median (the median absolute deviation) with
    ``spread_units = 1``, the 75th percentile with two
    (:data:`SPREAD_QUANTILES`). The range is ``c -+ FENCES[spread_units] m``
    (about 3.4 standard deviations of a normal target). Each centre draw is
    ``epsilon``-DP, the spread's ``spread_units x epsilon``-DP. ``param``:
    the estimator's parameter the warnings name.
    """
    y = np.asarray(y, dtype=np.float64)
    signed = signed_edges()
    c = 0.0
    for _ in range(stages):
        c += bin_quantile(y - c, 0.5, epsilon, signed, rng)
    q = SPREAD_QUANTILES[spread_units]
    m = bin_quantile(np.abs(y - c), q, spread_units * epsilon, positive_edges(), rng)
    if m < COLLAPSED:
        warn_in_fit(
            f"{param}='auto': the private spread of the target ({m:.3g}) is "
            f"below {COLLAPSED:.2g}, so the target range has most likely "
            "collapsed onto one value and the fit predicts nearly a constant. "
            "This happens when three quarters or more of the targets share one "
            f"value (a 0/1 target, a zero-inflated amount). Pass a public "
            f"{_PUBLIC_BOUND.get(param, param)} (or, for a target whose spread "
            "is truly that small, rescale it by a public constant).",
            UtilityWarning,
            stacklevel=3,
        )
    elif not math.isinf(epsilon) and beyond_range(m):
        warn_beyond_range(
            f"the private spread of the target ({param}='auto')",
            "y",
            "the target range is built from that edge, so the targets are "
            "clipped to, or fitted within, a range far from their own",
        )
    return _fenced(c, m, FENCES[spread_units])


def exact_target_range(y):
    """The limit of :func:`private_target_range` at large ``epsilon n``, read
    exactly (a non-private fit): the robust spread."""
    y = np.asarray(y, dtype=np.float64)
    c = float(np.median(y))
    q = SPREAD_QUANTILES[ROBUST_SPREAD_UNITS]
    m = float(np.quantile(np.abs(y - c), q))
    return _fenced(c, m, FENCES[ROBUST_SPREAD_UNITS])


def _fenced(c, m, fence):
    """``(c - fence m, c + fence m)``, never empty."""
    low, high = c - fence * m, c + fence * m
    if not high > low:  # a spread below the centre's float resolution
        low, high = np.nextafter(c, -np.inf), np.nextafter(c, np.inf)
    return float(low), float(high)


def target_map(low, high, fit_intercept, half_range=TARGET_HALF_RANGE):
    """``(centre, scale)`` mapping an estimated target range to ``-+ half_range``.

    Public post-processing of the private ``(low, high)`` arrays: a target
    ``y`` clipped to the range is fitted as ``(y - centre) / scale`` and the
    coefficients and intercept are mapped back (``w = scale w'``, ``b = centre
    + scale b'``). Without an intercept the target is not centred (centring
    would change the model) and ``scale = max(|low|, |high|) / half_range``.
    """
    low, high = np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64)
    if fit_intercept:
        return (low + high) / 2.0, (high - low) / 2.0 / half_range
    return 0.0 * low, np.maximum(np.abs(low), np.abs(high)) / half_range


def target_note(plan):
    """The ``hyperparameters_`` note of the target range a plan estimates."""
    units = plan.spread_units
    spread = (
        "median absolute deviations"
        if units == 1
        else "75th percentiles of the absolute deviations"
    )
    return (
        f"private range (median -+ {FENCES[units]:.3g} {spread}), "
        f"{plan.centre_stages + 1} draws per target: {plan.centre_stages} for "
        f"the centre of epsilon {plan.target_epsilon:.4g} each, the spread's "
        f"of {units * plan.target_epsilon:.4g}"
    )
