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
import numpy as np

from .clipping import csr_clipped_sum, dense_clipped_sum


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
    dense_clipped_sum(
        X, Y, rows, n_rows, W, b, loss, clip_norm, row_l1_norms, fit_intercept,
        G, g0, z, dz, True, np.empty(0),
    )  # fmt: skip


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
    csr_clipped_sum(
        data, indices, indptr, Y, rows, n_rows, W, b, loss, clip_norm,
        row_l1_norms, fit_intercept, G, g0, z, dz, True, np.empty(0),
    )  # fmt: skip


@numba.njit(cache=True)
def weighted_l1_clipped_grad_sum(
    X, Y, rows, n_rows, W, b, loss, clip_norm, row_l1_norms, fit_intercept, G,
    g0, z, dz, weights,
):  # fmt: skip
    """:func:`l1_clipped_grad_sum`, row ``i``'s clipped gradient times ``weights[i]``.

    The weights (per-example, e.g. ``class_weight``) must lie in ``[0, 1]``:
    each weighted clipped gradient then has L1 norm at most ``clip_norm``
    (the rounding-safe claim of :mod:`dpestim._kernels.clipping` holds, since
    ``fl(s w) <= s``), so replacing one example still moves the sum by at most
    ``2 clip_norm`` in L1 norm, the sensitivity the Laplace events assume. An
    empty ``weights`` is no weighting (the same arithmetic as
    :func:`l1_clipped_grad_sum`).
    """
    dense_clipped_sum(
        X, Y, rows, n_rows, W, b, loss, clip_norm, row_l1_norms, fit_intercept,
        G, g0, z, dz, True, weights,
    )  # fmt: skip


@numba.njit(cache=True)
def weighted_l1_clipped_grad_sum_csr(
    data, indices, indptr, Y, rows, n_rows, W, b, loss, clip_norm, row_l1_norms,
    fit_intercept, G, g0, z, dz, weights,
):  # fmt: skip
    """CSR twin of :func:`weighted_l1_clipped_grad_sum`."""
    csr_clipped_sum(
        data, indices, indptr, Y, rows, n_rows, W, b, loss, clip_norm,
        row_l1_norms, fit_intercept, G, g0, z, dz, True, weights,
    )  # fmt: skip
