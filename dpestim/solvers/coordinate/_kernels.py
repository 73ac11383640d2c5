"""Numba kernels of DP-SCD and seqDP-SCD, and the driver that runs them.

The algorithm, its privacy argument and the solver classes are in
:mod:`~dpestim.solvers.coordinate.dp_scd`; this module holds the dual step
(:func:`dual_step`), the loop over steps (:func:`scd_loop`,
:func:`_scd_steps`) and :func:`_dual_run`, inside which the dual variables
live and die. The NumPy twin of :func:`scd_loop` is in
``tests/solvers/test_dp_scd.py``.

Layout: in the paper's notation the data matrix is ``X^T`` (features x
examples) and a coordinate is one of its *columns*. The kernels below work on
columns of ``X^T``: an F-ordered dense array (the transpose of scikit-learn's
C-ordered ``X``, no copy) or a CSC matrix (the transpose of a CSR ``X``, the
same three arrays). So each coordinate update reads one contiguous example.
"""

import math

import numba
import numpy as np
import scipy.sparse as sp

from ..._kernels import poisson_sample
from ..._kernels.clipping import _safe_limit
from ...losses import HINGE, SQUARED, SQUARED_HINGE
from ...utils._progress import current_progress

__all__ = ["LOGISTIC_BOX", "dual_step", "scd_loop"]

#: Box margin of the logistic dual variable, ``y alpha in [beta, 1 - beta]``.
LOGISTIC_BOX = 1e-4

_EMPTY_F = np.empty(0)
_EMPTY_I = np.empty(0, dtype=np.int32)
# F-ordered like the dense ``X.T`` (numba types an empty or 1 x 1 array as
# C-ordered, which would compile a second set of kernels); never read
_EMPTY_XT = np.zeros((2, 2), order="F")


@numba.njit(cache=True)
def dual_step(loss, y, a, m, s, c):
    """Unclipped minimiser ``zeta`` of one coordinate's dual subproblem.

    The coordinate's loss is ``c loss(.)`` (``class_weight``, ``c`` in
    ``[0, 1]``; 1 without weights); its dual term is the conjugate ``c
    loss*(-a / c)``: the box of the margin losses becomes ``y a in [0, c]``
    (hinge; ``[c beta, c (1 - beta)]`` logistic) and the quadratic terms of
    the squared losses are divided by ``c``. With ``c = 1`` the arithmetic is
    exactly the unweighted one (every product or quotient by ``c`` is exact).

    Parameters
    ----------
    loss : int
        Loss code (squared, logistic, hinge or squared hinge).
    y : float
        Target (real, or +-1 for the margin losses).
    a : float
        Current dual variable of the coordinate.
    m : float
        Current prediction ``x_j . v / (alpha n)``.
    s : float
        Curvature ``sigma' ||x_j||^2 / (alpha n)`` (positive).
    c : float
        Weight of the coordinate's loss, in ``[0, 1]``.

    Returns
    -------
    zeta : float
        Squared: ``(c (y - m) - a) / (1 + c s)``. Hinge: exact box-constrained
        minimiser, ``y alpha_new`` in [0, c]. Squared hinge:
        ``(c (y - m) - a / 2) / (1 / 2 + c s)``, then ``y alpha_new >= 0``.
        Logistic: one Newton step from the projection of ``a`` on ``y alpha in
        [c beta, c (1 - beta)]``, the result projected again (``c = 0``: the
        box is ``{0}``). ``zeta = alpha_new - a`` is measured from the stored
        ``a``.
    """
    if loss == SQUARED:
        return (c * (y - m) - a) / (1.0 + c * s)
    if loss == HINGE:
        b = y * a + (1.0 - y * m) / s
        return y * min(c, max(0.0, b)) - a
    if loss == SQUARED_HINGE:
        z = (c * (y - m) - 0.5 * a) / (0.5 + c * s)
        return y * max(0.0, y * (a + z)) - a
    # logistic, in b = y alpha / c (the weighted entropy c phi(b))
    if c <= 0.0:
        return -a
    beta = LOGISTIC_BOX
    b = min(1.0 - beta, max(beta, y * a / c))
    g = y * (math.log(b) - math.log1p(-b)) + m
    h = 1.0 / (c * b * (1.0 - b)) + s
    b_new = min(1.0 - beta, max(beta, b - y * g / (h * c)))
    return y * c * b_new - a


@numba.njit(cache=True)
def _col_dot(Xt, data, indices, indptr, sparse, j, v):
    """``Xt[:, j] . v`` for an F-ordered dense or a CSC ``Xt``."""
    acc = 0.0
    if sparse:
        for p in range(indptr[j], indptr[j + 1]):
            acc += data[p] * v[indices[p]]
    else:
        for f in range(Xt.shape[0]):
            acc += Xt[f, j] * v[f]
    return acc


@numba.njit(cache=True)
def _col_axpy(Xt, data, indices, indptr, sparse, j, c, v):
    """``v += c Xt[:, j]`` for an F-ordered dense or a CSC ``Xt``."""
    if sparse:
        for p in range(indptr[j], indptr[j + 1]):
            v[indices[p]] += c * data[p]
    else:
        for f in range(Xt.shape[0]):
            v[f] += c * Xt[f, j]


@numba.njit(cache=True)
def scd_loop(
    Xt,
    data,
    indices,
    indptr,
    sparse,
    y,
    sq_norms,
    loss,
    lam_n,
    sigma_prime,
    clip,
    noise_std,
    q,
    n_steps,
    sequential,
    cap,
    alpha,
    v,
    rng,
):
    """Run ``n_steps`` noisy (seq)DP-SCD steps in place on ``(alpha, v)``.

    Parameters
    ----------
    Xt : ndarray of shape (n_features, n_samples), F-ordered
        Examples as columns (unused when ``sparse``).
    data, indices, indptr : ndarrays
        CSC arrays of ``Xt`` (= CSR arrays of ``X``) when ``sparse``.
    sparse : bool
    y : ndarray of shape (n_samples,)
    sq_norms : ndarray of shape (n_samples,)
        ``||x_j||^2``.
    loss : int
    lam_n : float
        ``alpha * n_samples``.
    sigma_prime : float
        Curvature factor of the subproblem (``L`` for DP-SCD, 1 for seq).
    clip : float
        Bound ``C`` on each clipped update (and on ``||zeta_j x_j||``).
    noise_std : float
        Standard deviation of the Gaussian noise on ``alpha_B`` and on every
        coordinate of ``v``; 0 draws nothing.
    q : float
        Poisson sampling probability.
    n_steps : int
    sequential : bool
        False: all coordinates of a batch are updated against the same
        snapshot (DP-SCD). True: the batch is visited in a uniformly random
        order, truncated to its first ``cap`` examples, and each update is
        applied at once (seqDP-SCD).
    cap : int
        Largest batch processed when ``sequential``.
    alpha, v : ndarrays of shape (n_samples,), (n_features,)
        Dual variables and shared vector, updated in place.
    rng : numpy.random.Generator
        Draw order per step: the Poisson sample, (seq: the shuffle,) the
        noise on the dual variables (DP-SCD: after the updates, on
        ``alpha_B`` in batch order, over the whole sample before any
        truncation; seq: before each processed record is read, the summed
        noise it is owed), the noise on ``v``.
    """
    n = y.shape[0]
    # Each dual update is clipped to the rounding margin of the gradient
    # kernels (proof in dpestim._kernels.clipping, one output):
    # |zeta_j| ||x_j|| <= clip holds exactly, not only up to rounding.
    # seq: alpha[j] has received the end-of-step noise of steps < owed_from[j]
    owed_from = np.zeros(n, dtype=np.int64)
    _scd_steps(
        Xt, data, indices, indptr, sparse, y, sq_norms, loss, lam_n, sigma_prime,
        clip, noise_std, q, 0, n_steps, sequential, cap, alpha, v, owed_from, rng,
        _EMPTY_F,
    )  # fmt: skip


@numba.njit(cache=True)
def _scd_steps(
    Xt, data, indices, indptr, sparse, y, sq_norms, loss, lam_n, sigma_prime,
    clip, noise_std, q, t_start, n_steps, sequential, cap, alpha, v, owed_from, rng,
    weights,
):  # fmt: skip
    """Steps ``t_start, ..., t_start + n_steps - 1`` of :func:`scd_loop`.

    ``weights`` (empty: none, every weight 1): the weight ``c_j`` in ``[0,
    1]`` of each record's loss (``class_weight``), read by :func:`dual_step`.
    The update is clipped afterwards to ``c_j C / max(1, ||x_j||)`` (``C``
    without weights), so a record's term ``zeta_j x_j`` keeps its bound
    ``C`` whatever its weight, and the weights act even where the clip binds
    every update (with the clip at ``C`` for every record, w8a's balanced
    weights never reached the fit: balanced accuracy 0.506 weighted and
    unweighted).

    ``owed_from`` carries the lazy noise bookkeeping of the sequential variant
    between calls, so that a run split into chunks (to advance a progress
    bar) draws and computes exactly what one call does.
    """
    n = y.shape[0]
    d = v.shape[0]
    limit = _safe_limit(clip, 1, d)  # see scd_loop
    rows = np.empty(n, dtype=np.int64)
    zeta = np.empty(n)
    weighted = weights.shape[0] > 0
    for t in range(t_start, t_start + n_steps):
        sampled = poisson_sample(rng, n, q, rows)
        mb = sampled
        if sequential:
            for i in range(mb - 1, 0, -1):
                k = int(rng.random() * (i + 1))
                rows[i], rows[k] = rows[k], rows[i]
            mb = min(mb, cap)
        for p in range(mb):
            j = rows[p]
            if sequential and noise_std > 0.0 and owed_from[j] < t:
                # the noise of every step since alpha[j] was last read, summed
                owed = t - owed_from[j]
                alpha[j] += noise_std * math.sqrt(owed) * rng.standard_normal()
                owed_from[j] = t
            z = 0.0
            sq = sq_norms[j]
            if sq > 0.0:
                m = _col_dot(Xt, data, indices, indptr, sparse, j, v) / lam_n
                w = weights[j] if weighted else 1.0
                z = dual_step(loss, y[j], alpha[j], m, sigma_prime * sq / lam_n, w)
                # a weighted record's update is clipped to w C (w <= 1): the
                # bound C holds, and the weights act even where C binds
                c = w * limit / max(1.0, math.sqrt(sq))
                # a NaN update (an overflowed prediction) under a finite clip
                # is dropped: the clip would not bound it (an infinite one is
                # clipped to c); without clipping it is kept as computed
                if z == z:
                    z = min(c, max(-c, z))
                elif c < math.inf:
                    z = 0.0
            if sequential:
                alpha[j] += z
                _col_axpy(Xt, data, indices, indptr, sparse, j, z, v)
            else:
                zeta[p] = z
        if not sequential:
            for p in range(mb):
                j = rows[p]
                alpha[j] += zeta[p]
                _col_axpy(Xt, data, indices, indptr, sparse, j, zeta[p], v)
        if noise_std > 0.0:
            if not sequential:
                # noise on every sampled coordinate, also those a truncation
                # left out, so that neighbouring runs noise the same
                # coordinates but k
                for p in range(sampled):
                    alpha[rows[p]] += noise_std * rng.standard_normal()
            # seq: every dual variable gets this step's noise too, drawn
            # lazily (summed) when it is next read; see SeqDPSCD
            for f in range(d):
                v[f] += noise_std * rng.standard_normal()


def _dual_run(
    X, y, loss, lam, sigma_prime, clip, noise_std, q, n_steps, seq, cap, rng,
    weights=None,
):  # fmt: skip
    """Run one private dual coordinate descent and return the shared vector ``v``.

    ``X`` is C-ordered dense or CSR (n_samples, n_features). The dual
    variables live only inside this function. ``weights``: per-record loss
    weights in ``[0, 1]`` (``class_weight``), or ``None``.
    """
    n = X.shape[0]
    if sp.issparse(X):
        X = X.tocsr()
        sq = np.asarray(X.multiply(X).sum(axis=1), dtype=np.float64).ravel()
        args = (_EMPTY_XT, X.data, X.indices, X.indptr, True)
    else:
        X = np.ascontiguousarray(X, dtype=np.float64)
        sq = np.einsum("ij,ij->i", X, X)
        args = (X.T, _EMPTY_F, _EMPTY_I, _EMPTY_I, False)
    v = np.zeros(X.shape[1])
    alpha, owed_from = np.zeros(n), np.zeros(n, dtype=np.int64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    progress = current_progress()
    # one compiled call, or about one epoch per call when a bar is shown
    # (the same draws and arithmetic either way)
    chunks = [(0, int(n_steps))]
    if progress is not None:
        chunks = progress.chunks(int(n_steps), 1.0 / float(q))
    for start, stop in chunks:
        _scd_steps(
            *args, y, sq, loss, float(lam * n), float(sigma_prime), float(clip),
            float(noise_std), float(q), start, stop - start, bool(seq), int(cap),
            alpha, v, owed_from, rng, _EMPTY_F if weights is None else weights,
        )  # fmt: skip
        if progress is not None:
            progress.update(stop - start)
    return v
