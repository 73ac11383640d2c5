"""Accounting of the vertex-sampling saddle solvers (spec 001, section 4.3).

Every vertex sample of :mod:`dpestim.solvers.saddle` is an exponential
mechanism; ``dp_accounting`` has no event for it nor for the fully adaptive
advanced composition of Whitehouse et al. (2023), so the closed forms live
here, with :class:`ExponentialMechanismDpEvent` describing the events.
"""

import math

import attr
from dp_accounting import (
    ComposedDpEvent,
    DpEvent,
    NonPrivateDpEvent,
    SelfComposedDpEvent,
)

#: Smallest per-sample epsilon: below it the step size underflows.
_MIN_SAMPLE_EPSILON = 1e-150


# -- accounting --


@attr.s(frozen=True, slots=True, auto_attribs=True)
class ExponentialMechanismDpEvent(DpEvent):
    """One ``epsilon``-DP exponential-mechanism draw (pure DP).

    Not supported by the ``dp_accounting`` accountants; dpestim composes
    these events with :func:`composed_epsilon`.
    """

    epsilon: float


def check_budget(epsilon, delta):
    """``ValueError`` unless ``0 < delta < 1`` and ``epsilon < 8 ln(1/delta)``."""
    if math.isinf(epsilon):
        return
    if not 0 < delta < 1:
        raise ValueError(
            f"delta must be in (0, 1) for the vertex-sampling solvers (advanced "
            f"composition gives (epsilon, delta)-DP), got delta={delta!r}."
        )
    if not 0 < epsilon < 8 * math.log(1 / delta):
        raise ValueError(
            f"epsilon must be in (0, 8 ln(1/delta)) = "
            f"(0, {8 * math.log(1 / delta):.4g}) "
            f"for the composition theorem used, got epsilon={epsilon!r}."
        )


def per_sample_epsilon(epsilon, delta, n_mechanisms):
    """Largest per-sample ``eps0`` with ``m`` samples composing to ``epsilon``.

    Exact solution of the Whitehouse filter ``sqrt(2 Lg m eps0^2) +
    m eps0^2 / 2 = epsilon``: ``(sqrt(2 Lg + 2 epsilon) - sqrt(2 Lg)) /
    sqrt(m)`` with ``Lg = ln(1/delta)`` (rounded down so that the composed
    epsilon never exceeds ``epsilon``). ``inf`` for ``epsilon = inf``.
    """
    if math.isinf(epsilon):
        return math.inf
    lg = math.log(1 / delta)
    # sqrt(a + 2 eps) - sqrt(a) without cancellation for tiny eps
    root = math.sqrt(2 * lg + 2 * epsilon) + math.sqrt(2 * lg)
    e0 = 2 * epsilon / root / math.sqrt(n_mechanisms)
    if not e0 >= _MIN_SAMPLE_EPSILON:
        raise ValueError(
            f"epsilon={epsilon!r} is too small for {n_mechanisms} vertex samples: "
            f"each would get epsilon {e0:.3g} < {_MIN_SAMPLE_EPSILON:g} and the "
            "step size would underflow; raise epsilon."
        )
    # never overshoot epsilon through floating-point rounding (bounded loop:
    # the relative decrement starts at one ulp and doubles)
    step = 2.0**-52
    for _ in range(100):
        if composed_epsilon(n_mechanisms * e0**2, delta) <= epsilon:
            return e0
        e0 *= 1 - step
        step = min(2 * step, 0.5)
    raise ValueError(f"could not split epsilon={epsilon!r} over the vertex samples.")


def composed_epsilon(sum_sq, delta):
    """Epsilon of pure-DP mechanisms with ``sum eps_m^2 = sum_sq`` at ``delta``."""
    if math.isinf(sum_sq):
        return math.inf
    return math.sqrt(2 * math.log(1 / delta) * sum_sq) + sum_sq / 2


def _sum_sq(event):
    if isinstance(event, NonPrivateDpEvent):
        return math.inf
    if isinstance(event, ExponentialMechanismDpEvent):
        return event.epsilon**2
    if isinstance(event, SelfComposedDpEvent):
        return event.count * _sum_sq(event.event)
    if isinstance(event, ComposedDpEvent):
        return sum(_sum_sq(e) for e in event.events)
    raise ValueError(f"cannot compose {event!r} with the Whitehouse filter.")


def event_epsilon(event, delta):
    """Epsilon at ``delta`` of a (composition of) exponential-mechanism events."""
    return composed_epsilon(_sum_sq(event), delta)
