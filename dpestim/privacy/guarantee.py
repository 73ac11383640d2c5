"""The invariant every fit checks before its mechanism runs."""

import math

__all__ = ["EPSILON_RTOL", "check_guarantee"]

#: Relative tolerance on the accounted epsilon (floating-point rounding of
#: closed forms and accountants); anything above is a broken guarantee.
EPSILON_RTOL = 1e-9


def check_guarantee(spent, requested, *, what="the fit"):
    """``ValueError`` unless the accounted ``spent`` epsilon is within ``requested``.

    Called by the estimators after noise resolution and before the solver
    runs: a parameter that slipped past validation (or a solver whose event
    does not match its mechanism) must stop the fit, not release a model
    whose guarantee is weaker than the one asked for.

    Parameters
    ----------
    spent : float
        Epsilon of the event the solver will run.
    requested : float or None
        The user's epsilon; ``None`` (noise multiplier given) or ``inf``
        checks only that ``spent`` is a number.
    what : str
        Named in the message.
    """
    spent = float(spent)
    if requested is not None and math.isnan(requested):
        raise ValueError(f"{what}: the requested epsilon is not a number.")
    if math.isnan(spent):
        raise ValueError(
            f"{what}: the accounted epsilon is not a number; a parameter of the "
            "solver or estimator is out of range. The fit was not run."
        )
    if requested is None or math.isinf(requested):
        return
    if spent > requested * (1.0 + EPSILON_RTOL):
        raise ValueError(
            f"{what}: the mechanism would spend epsilon={spent:.6g}, more than the "
            f"requested epsilon={requested:.6g}; a parameter of the solver is out "
            "of range. The fit was not run."
        )
