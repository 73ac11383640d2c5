"""Sums of per-example gradients clipped in L2 norm, dense and CSR.

For one example with outputs ``z = W x + b`` and loss derivative ``dz``, the
per-example gradient with respect to ``(W, b)`` is ``dz [x, 1]`` (the ``1``
only when an intercept is fitted). Its Frobenius norm is
``||dz|| sqrt(||x||^2 + fit_intercept)``, so the whole per-example gradient,
coefficients and intercept together, is clipped to ``clip_norm`` without
forming it. Adding or removing one example changes the returned sum by at
most ``clip_norm`` in Frobenius norm: this is the L2 sensitivity the Gaussian
events of the gradient solvers assume.
"""

import math

import numba

from ..losses import dloss


@numba.njit(cache=True)
def _clip_scale(dz, row_sq_norm, fit_intercept, clip_norm):
    sq = 0.0
    for k in range(dz.shape[0]):
        sq += dz[k] * dz[k]
    norm = math.sqrt(sq) * math.sqrt(row_sq_norm + (1.0 if fit_intercept else 0.0))
    if norm > clip_norm:
        return clip_norm / norm
    return 1.0


@numba.njit(cache=True)
def clipped_grad_sum(
    X,
    Y,
    rows,
    n_rows,
    W,
    b,
    loss,
    clip_norm,
    row_sq_norms,
    fit_intercept,
    G,
    g0,
    z,
    dz,
):
    """Add the clipped gradients of ``X[rows[:n_rows]]`` to ``(G, g0)``.

    Parameters
    ----------
    X : ndarray of shape (n, d), C-contiguous float64
    Y : ndarray of shape (n, K)
        Encoded targets.
    rows : ndarray of int64
        Row indices of the batch; only the first ``n_rows`` are used.
    n_rows : int
    W : ndarray of shape (K, d)
    b : ndarray of shape (K,)
    loss : int
        Loss code.
    clip_norm : float
        L2 bound on each per-example gradient (``inf`` for no clipping).
    row_sq_norms : ndarray of shape (n,)
        ``||x_i||^2``.
    fit_intercept : bool
    G : ndarray of shape (K, d)
        Accumulator for the coefficient gradient (added to, not reset).
    g0 : ndarray of shape (K,)
        Accumulator for the intercept gradient.
    z, dz : ndarray of shape (K,)
        Work buffers.
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
        s = _clip_scale(dz, row_sq_norms[i], fit_intercept, clip_norm)
        for k in range(K):
            c = s * dz[k]
            if c != 0.0:
                for j in range(d):
                    G[k, j] += c * X[i, j]
                if fit_intercept:
                    g0[k] += c


@numba.njit(cache=True)
def clipped_grad_sum_csr(
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
    row_sq_norms,
    fit_intercept,
    G,
    g0,
    z,
    dz,
):
    """CSR twin of :func:`clipped_grad_sum`; ``X`` given as ``(data, indices,
    indptr)``. Work per example is proportional to its non-zeros."""
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
        s = _clip_scale(dz, row_sq_norms[i], fit_intercept, clip_norm)
        for k in range(K):
            c = s * dz[k]
            if c != 0.0:
                for p in range(start, end):
                    G[k, indices[p]] += c * data[p]
                if fit_intercept:
                    g0[k] += c
