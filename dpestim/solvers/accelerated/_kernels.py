"""Numba kernels of the accelerated solvers (:mod:`dpestim.solvers.accelerated`).

Module-level functions in the skglm style: the in-memory loop, the
evaluation point and the noisy update shared with the blocked / distributed
driver (:mod:`dpestim._distributed`), and the per-row norms the clipping
reads. NumPy twins live in ``tests/solvers/test_accelerated.py``.
"""

import numba
import numpy as np
import scipy.sparse as sp

from ..._kernels import (
    poisson_sample_range,
    sample_without_replacement,
    weighted_clipped_grad_sum,
    weighted_clipped_grad_sum_csr,
    weighted_l1_clipped_grad_sum,
    weighted_l1_clipped_grad_sum_csr,
)
from ..._kernels.discrete_laplace import snap_discrete_laplace
from ...utils._rows import row_sq_norms

# -- the loop ---------------------------------------------------------------------


@numba.njit(cache=True)
def _accelerated_loop(
    X,
    data,
    indices,
    indptr,
    sparse,
    Y,
    row_norms,
    loss,
    W,
    b,
    fit_intercept,
    clip_norm,
    l1,
    noise_scales,
    laplace,
    sampling,
    batch_size,
    steps,
    momenta,
    restarts,
    heavy_ball,
    alpha,
    rng,
    key,
    path_W,
    path_b,
    grids,
    grid_scales,
    weights,
):
    """Run ``len(steps)`` noisy (accelerated) steps in place on ``(W, b)``.

    ``noise_scales[t]``: Laplace scale (``laplace``) or Gaussian standard
    deviation of the noise added to every coordinate of the clipped-gradient
    sum at step ``t`` (zero skips the draw; drawn in C order over ``W`` then
    ``b``). ``sampling``: 0 full batch, 1 exactly ``batch_size`` rows without
    replacement, 2 Poisson with probability ``batch_size / n`` from the
    counter-based sampler under ``key`` (chunking-invariant). The sum is
    divided by ``batch_size`` (the expected size for Poisson). ``path_W`` /
    ``path_b`` receive the iterates when they have ``len(steps)`` rows.
    ``grids`` non-empty: exact discrete Laplace instead of ``laplace``, each
    coordinate snapped to ``grids[t]`` plus ``DLap(grid_scales[t])`` grid
    units (see :mod:`dpestim.privacy.discrete`). ``weights`` (empty: none)
    multiply each row's clipped gradient (``class_weight``; values in ``[0,
    1]``, so each weighted gradient keeps its norm bound ``clip_norm`` and
    the sum its sensitivity); with none the kernels run the unweighted
    arithmetic exactly.
    """
    exact = grids.shape[0] > 0
    # the update then adds no noise of its own
    draw_scales = np.zeros_like(noise_scales) if exact else noise_scales
    n = Y.shape[0]
    K, d = W.shape
    rows = np.empty(n, dtype=np.int64)
    perm = np.arange(n)
    W_prev = W.copy()
    b_prev = b.copy()
    PW = np.empty((K, d))
    pb = np.empty(K)
    G = np.zeros((K, d))
    g0 = np.zeros(K)
    z = np.empty(K)
    dz = np.empty(K)
    m_div = float(n) if sampling == 0 else float(batch_size)
    q = batch_size / n
    for t in range(steps.shape[0]):
        evaluation_point(t, restarts, momenta, heavy_ball, W, b, W_prev, b_prev, PW, pb)
        if sampling == 0:
            m = sample_without_replacement(rng, n, n, perm, rows)
        elif sampling == 1:
            m = sample_without_replacement(rng, n, batch_size, perm, rows)
        else:
            m = poisson_sample_range(key, t, q, 0, n, rows)
        G[:, :] = 0.0
        g0[:] = 0.0
        if l1:
            if sparse:
                weighted_l1_clipped_grad_sum_csr(
                    data, indices, indptr, Y, rows, m, PW, pb, loss, clip_norm,
                    row_norms, fit_intercept, G, g0, z, dz, weights,
                )  # fmt: skip
            else:
                weighted_l1_clipped_grad_sum(
                    X, Y, rows, m, PW, pb, loss, clip_norm, row_norms,
                    fit_intercept, G, g0, z, dz, weights,
                )  # fmt: skip
        else:
            if sparse:
                weighted_clipped_grad_sum_csr(
                    data, indices, indptr, Y, rows, m, PW, pb, loss, clip_norm,
                    row_norms, fit_intercept, G, g0, z, dz, weights,
                )  # fmt: skip
            else:
                weighted_clipped_grad_sum(
                    X, Y, rows, m, PW, pb, loss, clip_norm, row_norms,
                    fit_intercept, G, g0, z, dz, weights,
                )  # fmt: skip
        if exact and noise_scales[t] > 0.0:
            grid, scale = grids[t], grid_scales[t]
            for k in range(K):
                for j in range(d):
                    G[k, j] = snap_discrete_laplace(G[k, j], grid, scale, rng)
            if fit_intercept:
                for k in range(K):
                    g0[k] = snap_discrete_laplace(g0[k], grid, scale, rng)
        accelerated_update(
            t, G, g0, draw_scales, laplace, m_div, steps, momenta, heavy_ball,
            alpha, fit_intercept, rng, W, b, W_prev, b_prev, PW, pb, path_W,
            path_b,
        )  # fmt: skip


@numba.njit(cache=True)
def evaluation_point(t, restarts, momenta, heavy_ball, W, b, W_prev, b_prev, PW, pb):
    """Write the point ``(PW, pb)`` where iteration ``t`` takes the gradient.

    Restarts (``W_prev = W``) first when ``restarts[t]``; heavy ball
    evaluates at ``W``, the Nesterov methods at ``(1 + beta) W - beta
    W_prev``.
    """
    K, d = W.shape
    # element loops, not ``A[:, :] = B``: numba compiles a shape-mismatch
    # error message (string formatting) for every array-to-array assignment
    if restarts[t]:
        for k in range(K):
            for j in range(d):
                W_prev[k, j] = W[k, j]
            b_prev[k] = b[k]
    beta = momenta[t]
    if heavy_ball:
        for k in range(K):
            for j in range(d):
                PW[k, j] = W[k, j]
            pb[k] = b[k]
    else:
        for k in range(K):
            for j in range(d):
                PW[k, j] = (1.0 + beta) * W[k, j] - beta * W_prev[k, j]
            pb[k] = (1.0 + beta) * b[k] - beta * b_prev[k]


@numba.njit(cache=True)
def accelerated_update(
    t, G, g0, noise_scales, laplace, m_div, steps, momenta, heavy_ball, alpha,
    fit_intercept, rng, W, b, W_prev, b_prev, PW, pb, path_W, path_b,
):  # fmt: skip
    """Noise the clipped sum ``(G, g0)`` at ``(PW, pb)`` and take iteration ``t``.

    Shared by the in-memory loop and the blocked / distributed driver
    (:mod:`dpestim._distributed`). Noise is drawn from ``rng`` in C order
    over ``W`` then ``b``; the sum is divided by ``m_div``.
    """
    K, d = W.shape
    beta = momenta[t]
    s = noise_scales[t]
    if s > 0.0:
        for k in range(K):
            for j in range(d):
                if laplace:
                    G[k, j] += rng.laplace(0.0, s)
                else:
                    G[k, j] += s * rng.standard_normal()
        if fit_intercept:
            for k in range(K):
                if laplace:
                    g0[k] += rng.laplace(0.0, s)
                else:
                    g0[k] += s * rng.standard_normal()
    lr = steps[t]
    for k in range(K):
        for j in range(d):
            g = G[k, j] / m_div + alpha * PW[k, j]
            new = PW[k, j] - lr * g
            if heavy_ball:
                new += beta * (W[k, j] - W_prev[k, j])
            W_prev[k, j] = W[k, j]
            W[k, j] = new
        new0 = pb[k]
        if fit_intercept:
            new0 -= lr * g0[k] / m_div
        if heavy_ball:
            new0 += beta * (b[k] - b_prev[k])
        b_prev[k] = b[k]
        b[k] = new0
    if path_W.shape[0] == steps.shape[0]:
        for k in range(K):
            for j in range(d):
                path_W[t, k, j] = W[k, j]
            path_b[t, k] = b[k]


def _row_norms(X, l1):
    """``||x_i||_1`` (``l1``) or ``||x_i||^2`` of every row, in float64."""
    if not l1:
        return row_sq_norms(X)  # computed once per fit, see dpestim.utils._rows
    if sp.issparse(X):
        data = np.abs(np.asarray(X.data, dtype=np.float64))
        Y = sp.csr_matrix((data, X.indices, X.indptr), shape=X.shape)
        norms = np.asarray(Y.sum(axis=1), dtype=np.float64).ravel()
    else:
        norms = np.abs(X).sum(axis=1, dtype=np.float64)
    # read-only like row_sq_norms' result: one compiled signature of the
    # clipping kernels for both norms
    norms.flags.writeable = False
    return norms
