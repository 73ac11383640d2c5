"""Work on one block of rows: validation and the clipped partial sum.

Shared by the in-process streaming backend (:mod:`._local`) and the Dask
workers (:mod:`._dask`). A block holds the rows ``[start, stop)`` of X in
global numbering; the Poisson sample of a step is drawn for exactly those
rows by the counter-based sampler, so it does not depend on how X is split.
"""

import numpy as np

from .._kernels import clipped_grad_sum, poisson_sample_range

__all__ = ["block_problem", "block_sum", "read_rows", "row_sq_norms"]


def row_sq_norms(X):
    """``||x_i||^2`` of every row, as the in-memory solvers compute it."""
    return np.einsum("ij,ij->i", X, X)


def read_rows(source, start, stop, local=None):
    """Rows ``start + local`` (all of ``[start, stop)`` if ``local`` is None).

    ``source`` is any 2-d array-like with numpy slicing (``numpy.memmap``,
    zarr, h5py); only the rows asked for are read (zarr reads the chunks
    that hold them). Returned as a C-contiguous float64 array.
    """
    if local is None:
        out = source[start:stop]
    elif hasattr(source, "oindex"):  # zarr: orthogonal (row) selection
        out = source.oindex[start + local, :]
    else:
        out = source[start + local]
    return np.ascontiguousarray(out, dtype=np.float64)


def block_problem(X, *, kind_only=False, sq=None):
    """Why block ``X`` cannot be used (a message), or ``None``.

    Checked on every block before the first step, so that bad input raises
    before any noise is drawn. The message names no row or value.
    ``kind_only``: check the shape and dtype only. ``sq``: the block's
    squared row norms (float64), already computed; if they are all finite,
    so is every value (a NaN or infinity, or an overflow, makes its row's
    norm NaN or infinite), and the values are not read again.
    """
    X = np.asarray(X)
    if X.ndim != 2:
        return f"X must be 2-d, got a block of shape {X.shape}."
    if not np.issubdtype(X.dtype, np.number) or np.issubdtype(
        X.dtype, np.complexfloating
    ):
        return f"X must hold real numbers, got dtype {X.dtype}."
    if kind_only or (sq is not None and np.isfinite(sq).all()):
        return None
    with np.errstate(over="ignore", invalid="ignore"):
        if not np.isfinite(X).all():
            return "Input X contains NaN or infinity."
        sq = row_sq_norms(np.asarray(X, dtype=np.float64))
    if not np.isfinite(sq).all():
        return (
            "Input X has rows whose squared L2 norm overflows float64 (values "
            "above about 1e154); rescale X by a public constant."
        )
    return None


def block_sum(X, Y, norms, start, local, key, step, q, W, b, plan, rows=None):
    """Clipped-gradient sum of the step's Poisson sample within one block.

    Parameters
    ----------
    X : ndarray of shape (stop - start, d) or callable
        The block (float64, C order), or ``X(local_rows)`` returning the
        sampled rows only (streamed blocks; ``norms`` is then ignored).
    Y : ndarray of shape (stop - start, K)
        Encoded targets of the block.
    norms : ndarray of shape (stop - start,) or None
        Squared row norms of the block.
    start : int
        Global index of the block's first row.
    local : ndarray of int64, shape (>= stop - start,)
        Scratch buffer for the sample.
    key, step, q
        Sampling key, step index and probability (see
        :func:`~dpestim._kernels.poisson_sample_range`).
    W, b : ndarrays
        Point where the gradients are taken.
    plan : ERMPlan

    Returns
    -------
    G : ndarray of shape (K, d)
    g0 : ndarray of shape (K,)
    """
    n_rows = Y.shape[0]
    K, d = W.shape
    G = np.zeros((K, d))
    g0 = np.zeros(K)
    m = poisson_sample_range(key, step, q, start, start + n_rows, local)
    if m == 0:
        return G, g0
    sel = local[:m]
    sel -= start
    if callable(X):
        Xs = X(None if m == n_rows else sel)
        if m != n_rows:
            Y, sel = np.ascontiguousarray(Y[sel]), np.arange(m)
        norms = row_sq_norms(Xs)
    else:
        Xs = X
    clipped_grad_sum(
        Xs, Y, sel, m, W, b, plan.loss, plan.clip_norm, norms, plan.fit_intercept,
        G, g0, np.empty(K), np.empty(K),
    )  # fmt: skip
    return G, g0
