"""Sums of per-example gradients clipped in L1 norm, dense and CSR.

The L1 twin of :mod:`dpestim._kernels.clipping`, for the Laplace mechanism.
For one example with outputs ``z = W x + b`` and loss derivative ``dz`` the
per-example gradient with respect to ``(W, b)`` is ``dz [x, 1]``; its entrywise
L1 norm is ``||dz||_1 (||x||_1 + fit_intercept)``, so the whole per-example
gradient is clipped to L1 norm ``clip_norm`` without forming it. The bound is
data-independent: replacing one example changes the returned sum by at most
``2 clip_norm`` in L1 norm (``clip_norm`` for adding or removing one).
"""

import numba

from ..losses import dloss


@numba.njit(cache=True)
def _l1_clip_scale(dz, row_l1_norm, fit_intercept, clip_norm):
    s = 0.0
    for k in range(dz.shape[0]):
        s += abs(dz[k])
    norm = s * (row_l1_norm + (1.0 if fit_intercept else 0.0))
    if norm > clip_norm:
        return clip_norm / norm
    return 1.0


@numba.njit(cache=True)
def l1_clipped_grad_sum(
    X,
    Y,
    rows,
    n_rows,
    W,
    b,
    loss,
    clip_norm,
    row_l1_norms,
    fit_intercept,
    G,
    g0,
    z,
    dz,
):
    """Add the L1-clipped gradients of ``X[rows[:n_rows]]`` to ``(G, g0)``.

    Same arguments as :func:`dpestim._kernels.clipped_grad_sum`, except that
    ``clip_norm`` bounds the L1 norm of each per-example gradient
    (coefficients and intercept together) and ``row_l1_norms[i]`` is
    ``||x_i||_1``.
    """
    K, d = W.shape
    for r in range(n_rows):
        i = rows[r]
        for k in range(K):
            acc = b[k]
            for j in range(d):
                acc += X[i, j] * W[k, j]
            z[k] = acc
        dloss(loss, z, Y[i], dz)
        s = _l1_clip_scale(dz, row_l1_norms[i], fit_intercept, clip_norm)
        for k in range(K):
            c = s * dz[k]
            if c != 0.0:
                for j in range(d):
                    G[k, j] += c * X[i, j]
                if fit_intercept:
                    g0[k] += c


@numba.njit(cache=True)
def l1_clipped_grad_sum_csr(
    data,
    indices,
    indptr,
    Y,
    rows,
    n_rows,
    W,
    b,
    loss,
    clip_norm,
    row_l1_norms,
    fit_intercept,
    G,
    g0,
    z,
    dz,
):
    """CSR twin of :func:`l1_clipped_grad_sum`; ``X`` given as ``(data,
    indices, indptr)``."""
    K = W.shape[0]
    for r in range(n_rows):
        i = rows[r]
        start, end = indptr[i], indptr[i + 1]
        for k in range(K):
            acc = b[k]
            for p in range(start, end):
                acc += data[p] * W[k, indices[p]]
            z[k] = acc
        dloss(loss, z, Y[i], dz)
        s = _l1_clip_scale(dz, row_l1_norms[i], fit_intercept, clip_norm)
        for k in range(K):
            c = s * dz[k]
            if c != 0.0:
                for p in range(start, end):
                    G[k, indices[p]] += c * data[p]
                if fit_intercept:
                    g0[k] += c
