"""numba kernels of the Euclidean private saddle solver (``noisy-sgda``).

The linear Lagrangian problems of the minimax estimators share one shape:
record ``i`` has features ``x_i`` (clipped, intercept column included), an
encoded target ``y_i`` (``+-1`` for classification), and a *cell* ``k_i``
(its group, or its (group, label) pair). A public matrix ``M`` of shape
``(n_cells, n_dual)`` maps a cell to its coefficients in the dual variable
``u``. With score ``s = theta . x_i`` and ``c_i = M[k_i] . u``:

``WORST_GROUP``
    ``f_i = c_i loss(s, y_i)`` (``M`` the identity: ``u = w`` are group
    weights). Gradients: ``c_i loss'(s) x_i`` in ``theta`` and
    ``M[k_i] loss(s)`` in ``u``.
``FAIR_REDUCTION``
    The cost-sensitive reduction of fairlearn's exponentiated gradient:
    predicting ``+1`` costs ``1{y_i = -1} + c_i``, predicting ``-1`` costs
    ``1{y_i = +1}``; with ``cost = (cost(+1) - cost(-1))`` the primal gradient
    is that of the weighted logistic surrogate ``|cost| log(1 + exp(-t s))``
    with ``t = -sign(cost)``, and the dual gradient is the constraint
    statistic ``M[k_i] 1{s > 0}``.

The joint per-example gradient ``(g_i x_i, v_i)`` is clipped to L2 norm
``clip_norm`` as one vector, so adding or removing one record moves the pair
of sums ``(sum g x, sum v)`` by at most ``clip_norm``: the sensitivity of the
Poisson-subsampled Gaussian the solver accounts for. Rows are clipped to the
rounding-safe limit of :mod:`dpestim._kernels.clipping` (``clip_norm`` shrunk
by about 1e-15 relative). No ``fastmath``.
"""

import math

import numba
import numpy as np

from ..._kernels.clipping import _safe_limit
from ..._kernels.counter_sampling import poisson_sample_range
from ...losses import LOGISTIC, dloss

__all__ = [
    "DUAL_BOX",
    "DUAL_WEIGHTS",
    "FAIR_REDUCTION",
    "WORST_GROUP",
    "joint_clipped_sum",
    "project_dual",
    "sgda_loop",
]

WORST_GROUP = 0
FAIR_REDUCTION = 1

#: Dual set ``{w >= 0, sum_g p_g w_g = 1}`` (group weights).
DUAL_WEIGHTS = 0
#: Dual set ``[-B, B]^m`` with an l1 term ``- sum_k b_k |u_k|`` (multipliers).
DUAL_BOX = 1


@numba.njit(cache=True)
def joint_clipped_sum(
    X, target, cells, rows, n_rows, theta, dual, kind, loss, M, clip_norm, row_sq,
    Gx, Gy, z, yb, dz,
):  # fmt: skip
    """Add the jointly clipped (primal, dual) gradients of ``rows[:n_rows]``.

    ``Gx`` (n_features,) and ``Gy`` (n_dual,) are accumulated into (not
    reset); ``row_sq[i] = ||x_i||^2``; ``z``, ``yb``, ``dz`` are work buffers
    of length 1. ``clip_norm = inf`` disables clipping.
    """
    d = X.shape[1]
    m = M.shape[1]
    # rounding-safe limit of dpestim._kernels.clipping (its proof, with the
    # m dual coordinates and the scalar product counted as extra outputs)
    limit = _safe_limit(clip_norm, m + 2, d)
    for r in range(n_rows):
        i = rows[r]
        k = cells[i]
        s = 0.0
        for j in range(d):
            s += X[i, j] * theta[j]
        z[0] = s
        c = 0.0
        for q in range(m):
            c += M[k, q] * dual[q]
        if kind == WORST_GROUP:
            yb[0] = target[i]
            h = dloss(loss, z, yb, dz)
            g = c * dz[0]
        else:
            cost = (1.0 if target[i] < 0 else -1.0) + c
            yb[0] = -1.0 if cost > 0 else 1.0
            dloss(LOGISTIC, z, yb, dz)
            g = abs(cost) * dz[0]
            h = 1.0 if s > 0 else 0.0
        sq = g * g * row_sq[i]
        for q in range(m):
            v = M[k, q] * h
            sq += v * v
        norm = math.sqrt(sq)
        if norm <= limit:
            scale = 1.0
        elif norm < math.inf:
            scale = limit / norm
        elif limit < math.inf:  # overflowed (inf or NaN): the row adds nothing
            continue
        else:  # no clipping (a non-private run): as computed
            scale = 1.0
        gs = scale * g
        for j in range(d):
            Gx[j] += gs * X[i, j]
        hs = scale * h
        for q in range(m):
            Gy[q] += hs * M[k, q]


@numba.njit(cache=True)
def project_dual(u, dual_kind, props, bound, thresh):
    """Project ``u`` in place onto the dual set (see ``DUAL_*``).

    ``DUAL_WEIGHTS``: Euclidean projection onto ``{w >= 0, props . w = 1}``,
    ``w = max(u - tau props, 0)`` with ``tau`` found by bisection.
    ``DUAL_BOX``: soft-threshold by ``thresh`` (the prox of the l1 slack
    term), then clip to ``[-bound, bound]``.
    """
    m = u.shape[0]
    if dual_kind == DUAL_BOX:
        for q in range(m):
            v = u[q]
            t = thresh[q]
            v = v - t if v > t else (v + t if v < -t else 0.0)
            u[q] = min(max(v, -bound), bound)
        return
    sq = 0.0
    lo = math.inf
    hi = -math.inf
    for q in range(m):
        sq += props[q] * props[q]
        r = u[q] / props[q]
        lo = min(lo, r)
        hi = max(hi, r)
    lo -= 1.0 / sq  # there props . w >= 1
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        tot = 0.0
        for q in range(m):
            tot += props[q] * max(u[q] - mid * props[q], 0.0)
        if tot > 1.0:
            lo = mid
        else:
            hi = mid
    tau = 0.5 * (lo + hi)
    tot = 0.0
    for q in range(m):
        u[q] = max(u[q] - tau * props[q], 0.0)
        tot += props[q] * u[q]
    if not tot > 0.0:  # bisection lost to rounding (extreme props): uniform
        for q in range(m):
            u[q] = 1.0
        tot = 0.0
        for q in range(m):
            tot += props[q]
    for q in range(m):
        u[q] /= tot


@numba.njit(cache=True)
def sgda_loop(
    X, target, cells, kind, loss, M, row_sq, n_steps, q, clip_norm, noise_std,
    lr_x, lr_y, alpha, dual_kind, props, bound, thresh, burn_in, key, rng,
    theta, dual, theta_avg, dual_avg,
):  # fmt: skip
    """Run ``n_steps`` noisy projected SGDA steps in place.

    Each step: Poisson sample with probability ``q`` (the chunking-invariant
    counter-based sampler under ``key``, as dp-sgd); jointly clipped sums
    ``(Gx, Gy)``; ``N(0, noise_std^2)`` added to every coordinate (``Gx``
    then ``Gy``, in order; skipped when ``noise_std = 0``); division by the
    expected batch size ``q n``; a descent step on ``theta`` (plus ``alpha
    theta``) and a projected ascent step on the dual. ``theta_avg`` and
    ``dual_avg`` receive the average of the iterates after step
    ``burn_in`` (public), the released output.
    """
    n, d = X.shape
    m = M.shape[1]
    rows = np.empty(n, dtype=np.int64)
    Gx = np.zeros(d)
    Gy = np.zeros(m)
    z = np.empty(1)
    yb = np.empty(1)
    dz = np.empty(1)
    denom = q * n
    for j in range(d):
        theta_avg[j] = 0.0
    for k in range(m):
        dual_avg[k] = 0.0
    n_avg = 0
    for t in range(n_steps):
        b = poisson_sample_range(key, t, q, 0, n, rows)
        Gx[:] = 0.0
        Gy[:] = 0.0
        joint_clipped_sum(
            X, target, cells, rows, b, theta, dual, kind, loss, M, clip_norm,
            row_sq, Gx, Gy, z, yb, dz,
        )  # fmt: skip
        if noise_std > 0.0:
            for j in range(d):
                Gx[j] += noise_std * rng.standard_normal()
            for k in range(m):
                Gy[k] += noise_std * rng.standard_normal()
        for j in range(d):
            theta[j] -= lr_x * (Gx[j] / denom + alpha * theta[j])
        for k in range(m):
            dual[k] += lr_y * Gy[k] / denom
        project_dual(dual, dual_kind, props, bound, thresh)
        if t >= burn_in:
            n_avg += 1
            for j in range(d):
                theta_avg[j] += (theta[j] - theta_avg[j]) / n_avg
            for k in range(m):
                dual_avg[k] += (dual[k] - dual_avg[k]) / n_avg
