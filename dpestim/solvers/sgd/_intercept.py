"""A final private intercept for the squared loss (the dp-sgd family).

Why: with the rows at the rules' scale and the targets scaled to
``-+ TARGET_HALF_RANGE``, nearly every per-example gradient of the squared
loss is clipped, and a clipped gradient step moves the intercept by the
*sign* of the residuals more than by their size: the run settles where
about as many residuals are positive as negative, the median of ``y - Xw``,
not its mean. On a skewed target the predictions are then biased by the
median-to-mean gap (California, in $100k: mean 2.07, median 1.80; the
dp-sgd fit's predictions averaged 1.81). The least-squares intercept for
the coefficients ``W`` the run released is the mean residual; this module
releases it with one Gaussian query after the run:

    b <- b + (sum_i clip(y_i - W x_i - b, R) + N(0, (sigma_b R)^2 I)) / n

where ``clip(., R)`` scales a residual row to L2 norm at most ``R = 2 x
target_bound`` (the public bound on a clipped, centred target row in the
solver's units: a residual of a prediction inside the target range is
never clipped). Under add/remove-one neighbouring the clipped sum moves by
at most ``R`` in L2: ``GaussianDpEvent(sigma_b)``, composed after the run's
event (adaptive composition; ``n`` is public, as everywhere in the plans).

``sigma_b = INTERCEPT_NOISE_FACTOR x sigma / (q sqrt(T))`` for a run of
``T`` steps at sampling rate ``q`` and noise multiplier ``sigma``: at small
``q`` the run's Renyi divergence of order ``a`` is about ``T q^2 a /
sigma^2`` and the query's ``a / (2 sigma_b^2)``, so the query takes about
``1 / (2 x 5^2) = 2%`` of the budget; the calibration of the run's noise
multiplier counts it exactly (the composed event). The resulting error of
the intercept is ``sigma_b R / n`` (California, 15,324 rows, epsilon 1:
about 0.003 target-range units).

Public conditions (:func:`corrects_intercept`): the squared loss, an
intercept, a target bound (``Ridge`` with a public or private ``y_bound``;
without one the targets are in their own units and no ``R`` is known),
in-memory data (blocked data keep the run's intercept), and a query precise
enough to be worth its noise: its standard error ``sigma_b R / n`` at most
:data:`INTERCEPT_MAX_ERROR` times the target bound. The last one reads the
calibrated ``sigma`` (public): the query is dropped where ``sigma`` is large,
so ``epsilon(sigma)`` stays non-increasing and the calibration's search
holds. Measured before the rule (``solver="auto"``, median of 3 seeds,
regression tasks of ``benchmarks/utility/public_target_bound.py``): at
3,000 rows and more, where the error is 0.01-0.14 of a half-range of 4, the
query gained up to 0.17 R^2 (California 3,000 rows, epsilon 1: 0.585 ->
0.614; COMPAS's age: -0.019 -> 0.067); at 331 and 750 rows (error
0.4-0.9) it lost up to 1.1 (diabetes, epsilon 2: 0.012 -> -0.518).
"""

import math

import numpy as np
from dp_accounting import ComposedDpEvent, GaussianDpEvent

from ..._kernels.clipping import clip_factors
from ...losses import SQUARED

__all__ = [
    "INTERCEPT_MAX_ERROR",
    "INTERCEPT_NOISE_FACTOR",
    "applies",
    "clipped_residual_sum",
    "corrects_intercept",
    "intercept_noise_multiplier",
    "noise_line",
    "private_intercept",
    "query_multiplier",
    "residual_bound",
    "with_intercept_event",
]

#: ``sigma_b`` in units of ``sigma / (q sqrt(T))``: the final query takes
#: about ``1 / (2 x 5^2) = 2%`` of the run's Renyi budget at small ``q``.
INTERCEPT_NOISE_FACTOR = 5.0
#: Largest standard error ``sigma_b R / n`` of the query, as a share of the
#: target bound, at which it runs (0.16 for one target scaled to -+ 4).
INTERCEPT_MAX_ERROR = 0.04


def applies(plan, enabled=True):
    """The plan's conditions of the query (public; any noise); ``enabled``:
    the solver's ``final_intercept``."""
    return (
        bool(enabled)
        and plan.loss == SQUARED
        and bool(plan.fit_intercept)
        and plan.target_bound is not None
        and not plan.blocked
    )


def query_multiplier(plan, noise_multiplier, sampling_prob, steps, enabled=True):
    """``sigma_b`` of the final query, or ``None`` where it does not run
    (public: the plan and the calibrated noise multiplier; see the module)."""
    if not applies(plan, enabled):
        return None
    sigma_b = intercept_noise_multiplier(noise_multiplier, sampling_prob, steps)
    error = sigma_b * residual_bound(plan) / plan.n_samples
    return sigma_b if error <= INTERCEPT_MAX_ERROR * float(plan.target_bound) else None


def corrects_intercept(plan, noise_multiplier, sampling_prob, steps, enabled=True):
    """Whether a run on ``plan`` with this noise ends with the private
    intercept (public: the plan and the calibrated noise multiplier)."""
    args = (plan, noise_multiplier, sampling_prob, steps, enabled)
    return query_multiplier(*args) is not None


def residual_bound(plan):
    """``R``, the L2 bound of a clipped residual row: twice the target bound."""
    return 2.0 * float(plan.target_bound)


def intercept_noise_multiplier(noise_multiplier, sampling_prob, steps):
    """``sigma_b`` of the final query (see the module docstring)."""
    if noise_multiplier <= 0:
        return 0.0
    return (
        INTERCEPT_NOISE_FACTOR
        * float(noise_multiplier)
        / (float(sampling_prob) * math.sqrt(int(steps)))
    )


def with_intercept_event(
    event, noise_multiplier, plan, sampling_prob, steps, enabled=True
):
    """The run's ``event``, followed by the intercept query when it runs."""
    sigma_b = query_multiplier(plan, noise_multiplier, sampling_prob, steps, enabled)
    if sigma_b is None:
        return event
    return ComposedDpEvent([event, GaussianDpEvent(sigma_b)])


def noise_line(plan, noise_multiplier, sampling_prob, steps, enabled=True):
    """The report's words on the query ("" where it does not apply)."""
    if not applies(plan, enabled):
        return ""
    sigma_b = query_multiplier(plan, noise_multiplier, sampling_prob, steps)
    if sigma_b is None:
        return (
            "; no final intercept query (its error would exceed "
            f"{INTERCEPT_MAX_ERROR:g} x the target bound at this noise)"
        )
    bound = residual_bound(plan)
    return (
        "; then the intercept moved to the noisy mean residual: one Gaussian "
        f"query on the residuals clipped to L2 norm {bound:.6g}, noise "
        f"multiplier {sigma_b:.6g} (standard deviation {sigma_b * bound:.6g} on "
        "the sum), about 2% of the budget (the clipped steps leave the "
        "intercept near the median residual)"
    )


def clipped_residual_sum(X, Y, W, b, bound, ord=2):
    """``sum_i clip(y_i - W x_i - b, bound)``: each residual row scaled to
    L2 (``ord=2``) or L1 (``ord=1``, the Laplace query) norm at most
    ``bound`` (the query's sensitivity, enforced here).

    Rounding-safe: rows are clipped to ``bound (1 - (K + 16) 2**-52)``, the
    limit of the gradient kernels (:mod:`dpestim._kernels.clipping`, with
    ``d = 0``), so a computed row never exceeds ``bound`` in exact
    arithmetic; a row with a non-finite residual (an overflowing prediction)
    contributes zero instead of NaN.
    """
    # no RuntimeWarning: whether one fires would depend on a record
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        R = np.asarray(Y, dtype=np.float64) - (np.asarray(X @ W.T) + b)
        R[~np.isfinite(R).all(axis=1)] = 0.0
        if ord == 1:
            norms = np.abs(R).sum(axis=1)
        else:
            norms = np.sqrt(np.einsum("ij,ij->i", R, R))
        return clip_factors(norms, bound, R.shape[1]) @ R


def private_intercept(
    X, Y, W, b, plan, noise_multiplier, sampling_prob, steps, rng, enabled=True
):
    """``b`` moved by the noisy mean clipped residual (in place; returns ``b``).

    A no-op unless :func:`corrects_intercept`. ``noise_multiplier`` is the
    run's (0 without noise: the exact mean of the clipped residuals).
    """
    sigma_b = query_multiplier(plan, noise_multiplier, sampling_prob, steps, enabled)
    if sigma_b is None:
        return b
    bound = residual_bound(plan)
    total = clipped_residual_sum(X, Y, W, b, bound)
    if sigma_b > 0:
        total = total + rng.normal(0.0, sigma_b * bound, size=total.shape)
    b += total / plan.n_samples
    return b
