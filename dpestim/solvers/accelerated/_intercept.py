"""A final pure-DP intercept for the squared loss (the accelerated family).

The same trap as the dp-sgd family's (:mod:`dpestim.solvers.sgd._intercept`):
with the rows at the rules' scale and the targets scaled to
``-+ TARGET_HALF_RANGE``, the clipped squared-loss gradients move the
intercept by the sign of the residuals more than by their size, so the run
leaves it near the median residual, not the mean. With ``noise="laplace"``
(the default of the family and of ``delta = 0``) the fit ends with one
Laplace query of the mean clipped residual:

    b <- b + (sum_i clip_1(y_i - W x_i - b, R) + Lap(nm_b 2 R)^K) / n

where ``clip_1(., R)`` scales a residual row to L1 norm at most ``R = 2 x
target_bound`` (for one output, the absolute value). Replacing one record
moves the clipped sum by at most ``2 R`` in L1 norm, so the query is
``1 / nm_b``-DP: ``LaplaceDpEvent(nm_b)``, composed after the run's event
(basic composition, :func:`~dpestim.solvers.accelerated.pure_epsilon`).

Budget: the query takes :data:`INTERCEPT_LAPLACE_SHARE` of the epsilon,
``1 / nm_b = share / (1 - share) x T eps_step(nm)`` for a run of ``T``
iterations whose uniform steps would cost ``eps_step(nm)`` each; the
calibration gives the run ``(1 - share) epsilon`` when the query runs. Its
conditions are the dp-sgd family's (:func:`~dpestim.solvers.sgd._intercept.
applies`: the squared loss, an intercept, a target bound, in-memory data)
and ``noise="laplace"`` (``"discrete_laplace"``'s guarantee holds in
floating point, which this continuous query would not; ``"gaussian"`` keeps
the run's intercept), and the same precision rule: the standard error
``sqrt(2) nm_b 2 R / n`` of the mean at most
:data:`~dpestim.solvers.sgd._intercept.INTERCEPT_MAX_ERROR` times the target
bound. The rule reads the noise multiplier (public); it drops the query at
large noise, where the epsilon then falls, so ``epsilon(nm)`` stays
non-increasing. In the narrow band of epsilon where the query would run at
the whole epsilon but not at ``(1 - share)`` of it, the calibration gives
the run the threshold :func:`min_run_epsilon` and no query.

With several outputs the L1 clip at twice the target bound (an L2 bound on
a target row) can also shrink residuals of predictions inside the range, a
small bias towards the run's intercept; the sensitivity is unchanged. The
clip is rounding-safe and a non-finite residual row contributes zero
(:func:`~dpestim.solvers.sgd._intercept.clipped_residual_sum`).
"""

import math

from dp_accounting import ComposedDpEvent, LaplaceDpEvent

from ..sgd._intercept import (
    INTERCEPT_MAX_ERROR,
    applies,
    clipped_residual_sum,
    residual_bound,
)
from ._schedules import _amplified, _laplace_multiplier

__all__ = [
    "INTERCEPT_LAPLACE_SHARE",
    "laplace_noise_line",
    "laplace_query",
    "min_run_epsilon",
    "private_intercept_laplace",
    "query_applies",
    "run_multiplier",
    "with_laplace_event",
]

#: Share of epsilon the final Laplace query takes when it runs. Chosen on
#: the derivation tasks of ``benchmarks/utility/final_intercept.py --pure
#: --only-derive`` (3 seeds; change of R^2 in the cells where it ran): 2%
#: ran on California's 15,324 rows only, +0.002 / +0.020 / +0.040 at
#: epsilon 0.5 / 1 / 2, none worse; 5% also ran at 3,000 rows and epsilon
#: 2 (median +0.007, worst -0.011, California at 0.5 -0.006); 10% ran in
#: 15 cells, median -0.003, worst -0.029.
INTERCEPT_LAPLACE_SHARE = 0.02


def query_applies(solver, plan):
    """The query's conditions on the solver and plan (public; any noise)."""
    return solver.noise == "laplace" and applies(plan, solver.final_intercept)


def laplace_query(solver, plan, noise_multiplier, n_iter, batch):
    """``nm_b`` of the final query (0 without noise), or ``None`` where it
    does not run (public: the plan, the solver and the noise multiplier of
    the run's uniform steps; ``n_iter`` iterations on batches of ``batch``)."""
    if not query_applies(solver, plan):
        return None
    if noise_multiplier <= 0:
        return 0.0
    run = n_iter * _amplified(float(noise_multiplier), plan.n_samples, batch)
    if not run >= min_run_epsilon(plan):  # also infinite noise: run = 0
        return None
    share = INTERCEPT_LAPLACE_SHARE
    return (1.0 - share) / (share * run)


def min_run_epsilon(plan):
    """The run's epsilon below which the query is dropped (public): its
    standard error ``sqrt(2) nm_b 2 R / n``, with ``nm_b = (1 - share) /
    (share x run)``, is at most ``INTERCEPT_MAX_ERROR`` times the target
    bound from there on."""
    share = INTERCEPT_LAPLACE_SHARE
    largest_nm_b = (
        INTERCEPT_MAX_ERROR
        * float(plan.target_bound)
        * plan.n_samples
        / (math.sqrt(2.0) * 2.0 * residual_bound(plan))
    )
    return (1.0 - share) / (share * largest_nm_b)


def run_multiplier(solver, plan, epsilon, n_iter, batch):
    """The closed-form noise multiplier of a run of ``n_iter`` uniform steps
    on batches of ``batch`` within ``epsilon``, the query included: the
    whole of ``epsilon`` where the query does not run, ``(1 - share)`` of
    it where it does, and in the band where the rule would then drop it,
    just below :func:`min_run_epsilon` (no query)."""
    n = plan.n_samples
    nm = float(_laplace_multiplier(epsilon / n_iter, n, batch))
    if laplace_query(solver, plan, nm, n_iter, batch) is None:
        return nm
    share = INTERCEPT_LAPLACE_SHARE
    nm = float(_laplace_multiplier((1.0 - share) * epsilon / n_iter, n, batch))
    if laplace_query(solver, plan, nm, n_iter, batch) is None:
        floor = min_run_epsilon(plan)
        nm = float(_laplace_multiplier(floor / n_iter, n, batch)) * (1.0 + 1e-12)
    return nm


def with_laplace_event(event, nm_b):
    """The run's ``event``, followed by the query when it runs."""
    if nm_b is None:
        return event
    return ComposedDpEvent([event, LaplaceDpEvent(nm_b)])


def laplace_noise_line(solver, plan, nm_b):
    """The report's words on the query ("" where it does not apply)."""
    if not query_applies(solver, plan):
        return ""
    if nm_b is None:
        return (
            "; no final intercept query (its error would exceed "
            f"{INTERCEPT_MAX_ERROR:g} x the target bound at this noise)"
        )
    bound = residual_bound(plan)
    return (
        "; then the intercept moved to the noisy mean residual: one Laplace "
        f"query on the residuals clipped to L1 norm {bound:.6g}, noise "
        f"multiplier {nm_b:.6g} (scale {nm_b * 2.0 * bound:.6g} on the sum, "
        f"2 x {bound:.6g} its sensitivity under replacement), "
        f"{INTERCEPT_LAPLACE_SHARE:.0%} of epsilon (the clipped steps leave "
        "the intercept near the median residual)"
    )


def private_intercept_laplace(X, Y, W, b, plan, nm_b, rng):
    """``b`` moved by the noisy mean L1-clipped residual (in place; returns
    ``b``); a no-op when ``nm_b`` is ``None``."""
    if nm_b is None:
        return b
    bound = residual_bound(plan)
    total = clipped_residual_sum(X, Y, W, b, bound, ord=1)
    if nm_b > 0:
        total = total + rng.laplace(0.0, nm_b * 2.0 * bound, size=total.shape)
    b += total / plan.n_samples
    return b
