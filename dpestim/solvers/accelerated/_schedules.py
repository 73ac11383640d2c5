"""Accounting and step schedules of the accelerated solvers.

Everything here is a function of public quantities (``n``, the batch size,
the budget, the public smoothness and strong convexity): the paper's
closed-form pure-DP accounting (:func:`pure_epsilon`), the multi-stage step
schedule and the error bound the "-opt" variants minimise. Used by
:mod:`dpestim.solvers.accelerated`.
"""

import math

import dp_accounting
import numpy as np
from dp_accounting import (
    ComposedDpEvent,
    LaplaceDpEvent,
    SampledWithoutReplacementDpEvent,
    SelfComposedDpEvent,
)

__all__ = [
    "error_bound_terms",
    "masg_schedule",
    "pure_epsilon",
    "select_n_iter",
]


# -- accounting -------------------------------------------------------------------


def _log1p_q_expm1(q, x):
    """``log(1 + q (e^x - 1))`` for ``0 < q <= 1``, ``x >= 0``, never overflowing.

    For ``x > 1`` it is ``x + log(q + (1 - q) e^-x)``, finite whenever ``x``
    is (``expm1`` alone overflows past ``x = 709``).
    """
    if x > 1.0:
        return x + math.log(q + (1.0 - q) * math.exp(-x))
    return math.log1p(q * math.expm1(x))


def pure_epsilon(event):
    """Pure-DP epsilon of a Laplace ``DpEvent`` by the paper's closed form.

    ``dp_accounting`` cannot account a Laplace mechanism under sampling
    without replacement, so this one small function implements the
    composition the paper (and spec 000, section 3.2) states:

    * ``LaplaceDpEvent(s)``: ``1 / s`` (Laplace mechanism, Dwork 2008);
    * ``SampledWithoutReplacementDpEvent(n, m, e)``:
      ``log1p((m / n) expm1(eps(e)))`` (Balle, Barthe, Gaboardi 2018, Thm 9,
      replace-one neighbouring);
    * ``SelfComposedDpEvent(e, k)``: ``k eps(e)``; ``ComposedDpEvent``: the
      sum (basic composition, Dwork and Roth, Cor. 3.15);
    * ``NoOpDpEvent``: 0.

    Any other event raises ``ValueError``. The result holds with delta = 0.
    """
    if isinstance(event, LaplaceDpEvent):
        s = event.noise_multiplier
        return math.inf if s <= 0 else 1.0 / s
    if isinstance(event, SampledWithoutReplacementDpEvent):
        eps = pure_epsilon(event.event)
        q = event.sample_size / event.source_dataset_size
        if q >= 1.0:
            return eps
        return _log1p_q_expm1(q, eps) if math.isfinite(eps) else math.inf
    if isinstance(event, SelfComposedDpEvent):
        return event.count * pure_epsilon(event.event)
    if isinstance(event, ComposedDpEvent):
        return math.fsum(pure_epsilon(e) for e in event.events)
    if isinstance(event, dp_accounting.NoOpDpEvent):
        return 0.0
    raise ValueError(f"pure_epsilon cannot account {event!r}.")


def _amplified(nm, n, m):
    """Epsilon of one subsampled Laplace step with noise multiplier ``nm``."""
    if nm <= 0:
        return math.inf
    if m >= n:
        return 1.0 / nm
    return _log1p_q_expm1(m / n, 1.0 / nm)


def _laplace_multiplier(eps_t, n, m):
    """Noise multiplier ``1 / eps0`` whose subsampled step costs ``eps_t``.

    ``eps0 = log1p(expm1(eps_t) n / m)`` inverts the amplification (paper
    eq. (12)-(13)); elementwise on arrays, ``inf`` budget gives 0.
    """
    eps_t = np.asarray(eps_t, dtype=np.float64)
    r = n / m
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        if m >= n:
            eps0 = eps_t
        else:
            # eps_t + log(r - (r - 1) e^-eps_t) for large eps_t: no overflow
            big = eps_t + np.log(r - (r - 1.0) * np.exp(-eps_t))
            eps0 = np.where(eps_t > 1.0, big, np.log1p(np.expm1(eps_t) * r))
        return np.where(np.isfinite(eps0), 1.0 / eps0, 0.0)


# -- schedules (public quantities only) -------------------------------------------


def masg_schedule(n_iter, smoothness, strong_convexity, step_scale=1.0, n1=None):
    """Step sizes and stages of the multi-stage accelerated method (p = 1).

    Stage 1 has ``n1`` iterations (default ``ceil(2 sqrt(kappa) ln
    sqrt(kappa))``, ``kappa = L / mu``) with step ``c / L``; stage ``k >= 2``
    has ``2^k C`` iterations, ``C = ceil(sqrt(kappa) ln 8)``, with step
    ``c / (4^k L)``. Truncated at ``n_iter``.

    Returns
    -------
    steps : ndarray of shape (n_iter,)
    stages : ndarray of int64, shape (n_iter,)
        1-based stage index of every iteration.
    n1, C : int
    """
    L, mu = float(smoothness), float(strong_convexity)
    kappa = L / mu
    if n1 is None:
        n1 = math.ceil(2.0 * math.sqrt(kappa) * math.log(math.sqrt(kappa)))
    n1 = max(1, int(n1))
    C = max(1, math.ceil(math.sqrt(kappa) * math.log(8.0)))
    steps = np.empty(n_iter)
    stages = np.empty(n_iter, dtype=np.int64)
    t, k, length = 0, 1, n1
    while t < n_iter:
        stop = min(n_iter, t + length)
        steps[t:stop] = step_scale / L if k == 1 else step_scale / (4.0**k * L)
        stages[t:stop] = k
        t, k = stop, k + 1
        length = 2**k * C
    return steps, stages, n1, C


def _nag_momentum(steps, mu):
    r = np.sqrt(mu * steps)
    return (1.0 - r) / (1.0 + r)


def error_bound_terms(steps, stages, smoothness, strong_convexity):
    """Log-domain pieces of the NAG / MASG error bound (paper Thm 4.1, 4.3).

    With ``P(t) = sum_{i <= t} log(1 - sqrt(mu alpha_i))`` and stages ``s_t``,
    ``log a_{tau,0} = P(tau) + (s_tau - 1) log 2`` and ``log a_{tau,t} =
    P(tau) + s_tau log 2 + q_t`` for ``t <= tau``, where ``q_t = log(alpha_t
    (1 + alpha_t L)) - P(t) - s_t log 2`` (paper's constants with ``s_0 :=
    1``, spec 000 section 6).

    Returns
    -------
    P, q : ndarray of shape (T,)
    """
    steps = np.asarray(steps, dtype=np.float64)
    root = np.sqrt(strong_convexity * steps)
    if np.any(root >= 1.0):
        raise ValueError(
            "strong_convexity * step must be < 1 for the error bound; lower "
            "step_scale or strong_convexity."
        )
    P = np.cumsum(np.log1p(-root))
    q = np.log(steps * (1.0 + steps * smoothness)) - P - stages * math.log(2.0)
    return P, q


def select_n_iter(P, q, stages, initial_error, noise_constant, power):
    """``argmin_tau`` of ``a_{tau,0} E0 + noise_constant (sum_t a_{tau,t}^{1/p})^p``.

    ``power = 3`` is the Laplace bound (32) of the paper (``noise_constant =
    d S1^2 / (n^2 eps^2)``), ``power = 2`` its Gaussian analogue. Returns the
    1-based number of iterations ``T*`` (the first minimiser).
    """
    base = P + stages * math.log(2.0)
    log_a0 = base - math.log(2.0) + math.log(initial_error)
    if math.isinf(noise_constant):
        return 1  # the noise term dominates: it grows with every iteration
    if noise_constant <= 0:
        log_bound = log_a0
    else:
        cum = np.logaddexp.accumulate(q / power)
        log_noise = math.log(noise_constant) + base + power * cum
        log_bound = np.logaddexp(log_a0, log_noise)
    return int(np.argmin(log_bound)) + 1


def _softmax(v):
    w = np.exp(v - v.max())
    return w / w.sum()
