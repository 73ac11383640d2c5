"""Sums of per-example gradients clipped in L2 (or L1) norm, dense and CSR.

For one example with outputs ``z = W x + b`` and loss derivative ``dz``, the
per-example gradient with respect to ``(W, b)`` is ``dz [x, 1]`` (the ``1``
only when an intercept is fitted). Its Frobenius norm is
``||dz|| sqrt(||x||^2 + fit_intercept)``, so the whole per-example gradient,
coefficients and intercept together, is clipped to ``clip_norm`` without
forming it. Adding or removing one example changes the returned sum by at
most ``clip_norm`` in Frobenius norm: this is the L2 sensitivity the Gaussian
events of the gradient solvers assume. An example whose gradient norm is not
finite (outputs that overflowed, e.g. at an absurd learning rate) adds
nothing, so that the bound holds in floating point too (``clip_norm / inf``
times an infinite derivative would add NaN, and whether the sum is NaN would
depend on that one example); the other kernels that bound one example's
contribution (dual coordinate updates, the saddle solvers' clips and clamps)
drop NaN the same way. The L1 variant
(:mod:`dpestim._kernels.l1_clipping`) shares these loops with the scale
``||dz||_1 (||x||_1 + fit_intercept)``.

The dense loop works on blocks of ``_BLOCK`` sampled rows (float32: the
batch split into equal blocks of at most ``_BLOCK32``): it gathers them
(or, when a block's rows are consecutive, as in a full batch, reads them in
place without a copy), computes their outputs with one matrix product
(BLAS), scales each row's ``dz`` by its own clip factor and adds ``C^T X_B``
with a second product.
This is the same sum as the row-by-row loop (up to floating-point
summation order) at BLAS speed; MNIST-sized steps (250 x 784 x 10) run
about 3.5x faster than scalar loops.

float32 ``X`` is computed in float32 (both products by ``sgemm``, on a
float32 copy of ``W`` and float32 blocks of rows), with the per-example
scalars (outputs, loss derivative, clip factor) in float64 and each block's
``C^T X_B`` added to a float64 accumulator; see "float32 arithmetic" below
for what this guarantees. For a clip norm outside ``[2^-60, 2^60]`` (and
``inf``, no clipping) float32 rows are converted to float64 blocks instead.
"""

import math

import numba
import numpy as np
from numba import types
from numba.extending import overload

from ..losses._kernels import dloss_only

#: Rows per block of the dense kernel (a 128 x d gather buffer).
_BLOCK = 128
#: Largest block of the float32 kernel (256 x d float32: the size in bytes
#: of a 128-row float64 block); a batch is split into equal blocks.
_BLOCK32 = 256

# Rounding-safe clipping. The kernels clip to ``limit = clip_norm * rho`` with
# ``rho = 1 - (K + d + 16) 2**-52`` (:func:`_safe_limit`). Claim: for every
# example the scaled coefficients ``c_k = fl(s dz_k)`` that the kernel uses
# satisfy, in exact arithmetic on these released float64 values,
# ``||c|| sqrt(||x||^2 + fit_intercept) <= clip_norm`` (L2), and likewise
# ``||c||_1 (||x||_1 + fit_intercept) <= clip_norm`` (L1), where ``x`` is the
# row as stored (float64, or float32 values, which float64 holds exactly).
# Proof (u = 2**-53, all terms non-negative, gamma_n = n u / (1 - n u)):
# ``S = fl(sum_k dz_k^2)`` and the row norm ``R`` (a float64 sum of d
# non-negative float64 products, any order) have relative errors at most
# gamma_K and gamma_d; adding the intercept's 1, each sqrt and the product of
# the two square roots add one rounding each. So the computed norm is
# ``N >= N* (1 - (K + d + 7) u)``, with ``N*`` the exact norm of ``dz [x, 1]``
# (the L1 case has fewer roundings). If ``N <= limit`` the factor is 1 and
# ``N* <= limit / (1 - (K + d + 7) u) <= clip_norm``. Otherwise
# ``s = fl(limit / N) <= (limit / N)(1 + u)`` and ``|c_k| <= s |dz_k| (1 + u)``,
# so ``||c|| sqrt(.) <= s (1 + u) N* <= limit (1 + u)^2 N* / N
# <= clip_norm rho (1 + u)^2 / (1 - (K + d + 7) u) <= clip_norm`` because
# ``rho = 1 - 2 (K + d + 16) u``. Rows are shrunk by at most ~1e-15 (K + d)
# relative, invisible next to the noise. What the claim does not cover is the
# rounding of the *sum* over examples (the BLAS product); the Gaussian
# mechanism's sensitivity is stated for exact sums, as for any float64
# implementation.
#
# float32 arithmetic (float32 X, 2^-60 <= clip_norm <= 2^60). Per example the
# kernel computes in float64, exactly as above, the outputs (from the float32
# product), ``dz``, the factor ``s`` and ``c64_k = fl(s dz_k)``, with the
# limit ``limit32 = clip_norm rho32``, ``rho32 = 1 - (K + d + 16) 2**-52 -
# 2**-22`` (:func:`_safe_limit32`). It then stores ``c_k`` = ``c64_k``
# rounded toward zero to float32 (:func:`_store_toward_zero`): for
# ``2**-125 <= |c64_k| < 2**127``, ``c_k = fl32(fl64(c64_k (1 - 2**-24)))``,
# a float32 in the normal range, so ``|c_k| <= |c64_k| (1 - 2**-24)
# (1 + 2**-53)(1 + 2**-24) < |c64_k|``; ``0`` below (no underflow to a
# larger subnormal), ``+-2**127`` above. Claim 1: ``|c_k| <= |c64_k|``, so
# the claim above holds for ``c`` (``limit32 <= limit``): ``||c||
# ||[x, 1]|| <= clip_norm`` exactly, for the float32 ``c`` and row that
# ``sgemm`` multiplies and sums; the intercept accumulator receives the same
# ``c`` (exactly, in float64). Claim 2: the per-example gradient *as
# computed* in float32, ``P_kj = fl32(c_k x_j)`` (one rounding: FMA-based
# sgemm forms each product once; a block of one row returns exactly these),
# also satisfies ``||(P, c)||_F <= clip_norm``. Proof (u32 = 2**-24, u =
# 2**-53, A = (K + d + 7) u): ``|fl32(p)| <= |p| (1 + u32) + 2**-150`` (the
# absolute term only if ``p`` underflows), so ``||(P, c)|| <= (1 + u32)
# ||c|| ||[x, 1]|| + sqrt(K d) 2**-150``, and ``sqrt(K d) <= 2**31`` (memory)
# with ``clip_norm >= 2**-60`` makes the last term ``<= 2**-59 clip_norm``.
# By the proof above ``||c|| ||[x, 1]|| <= clip_norm rho32 (1 + u)^2 /
# (1 - A)``. With ``rho32 = 1 - 2A - 18u - 4u32`` and ``(1 + u)^2 <= 1 + 3u``:
# ``(1 + u32)(1 + 3u) rho32 <= 1 - 2A - 14u - 3u32`` (the cross terms are
# negative), and ``(1 - 2A - δ) / (1 - A) <= 1 - A - δ`` for ``δ >= 0``, so
# ``||(P, c)|| <= clip_norm (1 - A - 14u - 3u32 + 2**-59) <= clip_norm``.
# The L1 case is the same with L1 norms (fewer roundings; the absolute term
# is ``K d 2**-150 <= 2**-28 clip_norm``, still below ``3 u32 clip_norm``).
# The upper bound 2**60 on clip_norm keeps a block's sum (<= 256 clip_norm)
# far from float32 overflow.
# The sum (where float64 accumulation is needed): sgemm adds the m <= 256
# products of a block in float32 (any order, FMA or not): entrywise error
# <= gamma32_m sum_r |c_rk x_rj|, gamma32_m = m u32 / (1 - m u32), so in
# Frobenius norm a block's sum is within gamma32_256 (~1.5e-5) x the sum of
# its per-example norms (<= m clip_norm) of the exact sum. Blocks are added
# to a float64 accumulator (u = 2**-53): summed in float32 instead, a full
# batch of n rows would be off by up to gamma32_n (n = 60,000: ~3.6e-3) x
# its norms; in float64 the error stays at the per-block bound. The
# intercept sums, the noise and the step are float64 too. As for float64
# (the same bound with u = 2**-53), the mechanism's sensitivity is stated
# for the exact sum of the clipped per-example gradients, which Claim 1
# bounds; doc/privacy_model.rst ("Floating-point noise") states what this
# means for the guarantee.

#: Range of ``clip_norm`` computed in float32 arithmetic for float32 ``X``.
_F32_CLIP_MIN = 2.0**-60
_F32_CLIP_MAX = 2.0**60


@numba.njit(cache=True)
def _safe_limit(clip_norm, K, d):
    """``clip_norm`` shrunk so that rounding never lets a row exceed it."""
    return clip_norm * (1.0 - (K + d + 16) * 2.0**-52)


def clip_factors(norms, bound, n_cols):
    """Per-row factors ``min(1, limit / norm)`` clipping rows to ``bound`` (NumPy).

    For the continuous queries on whole rows computed outside the kernels
    (the final intercept's residuals, the private column centre): ``norms``
    are the rows' float64 L2 or L1 norms, ``n_cols`` their length, and
    ``limit`` is the kernels' rounding-safe :func:`_safe_limit` (``K =
    n_cols``, ``d = 0``), so a clipped row never exceeds ``bound`` in exact
    arithmetic on the values used. A row whose norm is not finite gets ``0``
    (it adds nothing, as in the kernels).
    """
    limit = _safe_limit(float(bound), n_cols, 0)
    tiny = np.finfo(np.float64).tiny
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        factors = np.minimum(1.0, limit / np.maximum(norms, tiny))
    return np.where(np.isfinite(norms), factors, 0.0)


@numba.njit(cache=True)
def _safe_limit32(clip_norm, K, d):
    """The limit of the float32 kernel (float32 products, see above)."""
    return clip_norm * (1.0 - (K + d + 16) * 2.0**-52 - 2.0**-22)


def _store_toward_zero(C, r, k, c):
    """Store ``c`` in ``C[r, k]``, rounded toward zero; return the stored value.

    Exact for float64 ``C``. float32 ``C``: ``fl32(c (1 - 2^-24))`` for
    ``2^-125 <= |c| < 2^127`` (the float32 rounding error, at most ``2^-24``
    relative in that range, cannot undo the shrink: ``|stored| < |c|``),
    ``0`` below, ``+-2^127`` above. Branches that are rarely taken, unlike
    a ``nextafter`` after a comparison. numba only: compiled through the
    overload.
    """
    raise NotImplementedError  # pragma: no cover


@overload(_store_toward_zero, jit_options={"cache": True})
def _store_toward_zero_impl(C, r, k, c):
    if C.dtype == types.float32:

        def store32(C, r, k, c):
            a = abs(c)
            if a < 2.0**-125:
                v = np.float32(0.0)
            elif a >= 2.0**127:
                v = np.float32(math.copysign(2.0**127, c))
            else:
                v = np.float32(c * (1.0 - 2.0**-24))
            C[r, k] = v
            return np.float64(v)

        return store32

    def store(C, r, k, c):
        C[r, k] = c
        return c

    return store


def _block_rows(X, rows, start, m, Xb):
    """Rows ``rows[start:start + m]`` of ``X`` as a block of ``Xb``'s dtype.

    A view of ``X`` when they are consecutive and ``X`` has ``Xb``'s dtype
    (no copy), otherwise gathered (and converted) into ``Xb``. numba only.
    """
    raise NotImplementedError  # pragma: no cover - compiled through the overload


@numba.njit(cache=True)
def _gather(X, rows, start, m, Xb):
    for r in range(m):
        i = rows[start + r]
        for j in range(X.shape[1]):
            Xb[r, j] = X[i, j]
    return Xb[:m]


@overload(_block_rows, jit_options={"cache": True})
def _block_rows_impl(X, rows, start, m, Xb):
    if X.dtype != Xb.dtype:  # float32 rows, float64 arithmetic: convert

        def gather(X, rows, start, m, Xb):
            return _gather(X, rows, start, m, Xb)

        return gather

    def view_or_gather(X, rows, start, m, Xb):
        i0 = rows[start]
        if i0 + m <= X.shape[0]:
            consecutive = True
            for r in range(1, m):
                if rows[start + r] != i0 + r:
                    consecutive = False
                    break
            if consecutive:  # e.g. a full batch: read X where it is
                return X[i0 : i0 + m]
        return _gather(X, rows, start, m, Xb)

    return view_or_gather


@numba.njit(cache=True)
def _clip_scale(dz, row_norm, fit_intercept, clip_norm, l1):
    """Factor that clips ``dz [x, 1]`` to ``clip_norm``.

    ``row_norm`` is ``||x||^2`` (L2) or ``||x||_1`` (``l1=True``). ``0``
    when the norm is not finite (an output or a loss derivative that
    overflowed, e.g. at an absurd learning rate) and ``clip_norm`` is: the
    example then adds nothing (:func:`clipped_coefficient`), which keeps the
    bound ``clip_norm`` in floating point, where ``clip_norm / inf`` times an
    infinite ``dz`` would add NaN and make the sum depend on that one row.
    Without clipping (``clip_norm = inf``, a non-private run) the gradient
    is used as computed, so that a diverging run is still seen to diverge.
    """
    extra = 1.0 if fit_intercept else 0.0
    s = 0.0
    if l1:
        for k in range(dz.shape[0]):
            s += abs(dz[k])
        norm = s * (row_norm + extra)
    else:
        for k in range(dz.shape[0]):
            s += dz[k] * dz[k]
        norm = math.sqrt(s) * math.sqrt(row_norm + extra)
    if norm <= clip_norm:
        return 1.0
    if norm < math.inf:
        return clip_norm / norm
    if clip_norm < math.inf:
        return 0.0  # inf or NaN under a finite clip: the example adds nothing
    return 1.0  # NaN without clipping (a non-private run): as computed


@numba.njit(cache=True)
def clipped_coefficient(s, dz_k):
    """``s dz_k``, and ``0`` for a factor ``s = 0`` (:func:`_clip_scale`).

    A zero factor marks an example whose gradient norm is not finite (or a
    zero weight): its ``dz_k`` may be infinite or NaN, and ``0 x inf`` is
    NaN, so the product is not formed.
    """
    if s > 0.0:
        return s * dz_k
    return 0.0


def dense_clipped_sum(
    X, Y, rows, n_rows, W, b, loss, clip_norm, row_norms, fit_intercept, G, g0,
    z, dz, l1, weights,
):  # fmt: skip
    """Blocked dense loop of :func:`clipped_grad_sum` (``l1`` picks the norm).

    ``weights``: per-row weights in ``[0, 1]`` applied after clipping (see
    :func:`weighted_clipped_grad_sum`), or an empty array (none).

    float64 ``X`` is computed in float64; float32 ``X`` in float32 (see the
    module docstring). numba only: compiled through the overload.
    """
    raise NotImplementedError  # pragma: no cover


@overload(dense_clipped_sum, jit_options={"cache": True})
def _dense_clipped_sum_impl(
    X, Y, rows, n_rows, W, b, loss, clip_norm, row_norms, fit_intercept, G, g0,
    z, dz, l1, weights,
):  # fmt: skip
    if X.dtype == types.float32:

        def float32_rows(
            X, Y, rows, n_rows, W, b, loss, clip_norm, row_norms, fit_intercept,
            G, g0, z, dz, l1, weights,
        ):  # fmt: skip
            if _F32_CLIP_MIN <= clip_norm <= _F32_CLIP_MAX:
                _dense_float32(
                    X, Y, rows, n_rows, W, b, loss, clip_norm, row_norms,
                    fit_intercept, G, g0, z, dz, l1, weights,
                )  # fmt: skip
            else:
                _dense_float64(
                    X, Y, rows, n_rows, W, b, loss, clip_norm, row_norms,
                    fit_intercept, G, g0, z, dz, l1, weights,
                )  # fmt: skip

        return float32_rows

    def float64_rows(
        X, Y, rows, n_rows, W, b, loss, clip_norm, row_norms, fit_intercept, G,
        g0, z, dz, l1, weights,
    ):  # fmt: skip
        _dense_float64(
            X, Y, rows, n_rows, W, b, loss, clip_norm, row_norms, fit_intercept,
            G, g0, z, dz, l1, weights,
        )  # fmt: skip

    return float64_rows


@numba.njit(cache=True)
def _dense_float64(
    X, Y, rows, n_rows, W, b, loss, clip_norm, row_norms, fit_intercept, G, g0,
    z, dz, l1, weights,
):  # fmt: skip
    """Blocks of float64 rows (float32 rows converted while gathered)."""
    K, d = W.shape
    B = max(1, min(n_rows, _BLOCK))
    _dense_blocks(
        X, Y, rows, n_rows, W.T, b, loss, _safe_limit(clip_norm, K, d),
        row_norms, fit_intercept, G, g0, z, dz, l1, np.empty((B, d)),
        np.empty((B, K)), np.empty((K, d)), weights,
    )  # fmt: skip


@numba.njit(cache=True)
def _dense_float32(
    X, Y, rows, n_rows, W, b, loss, clip_norm, row_norms, fit_intercept, G, g0,
    z, dz, l1, weights,
):  # fmt: skip
    """Blocks of float32 rows, float32 products (sgemm)."""
    K, d = W.shape
    n_blocks = max(1, -(-n_rows // _BLOCK32))
    B = max(1, -(-n_rows // n_blocks))  # equal blocks: no small remainder
    f32 = np.float32
    _dense_blocks(
        X, Y, rows, n_rows, W.astype(f32).T, b, loss,
        _safe_limit32(clip_norm, K, d), row_norms, fit_intercept, G, g0, z, dz,
        l1, np.empty((B, d), f32), np.empty((B, K), f32), np.empty((d, K), f32),
        weights,
    )  # fmt: skip


@numba.njit(cache=True)
def _dense_blocks(
    X, Y, rows, n_rows, Wt, b, loss, limit, row_norms, fit_intercept, G, g0,
    z, dz, l1, Xb, Cb, Gb, weights,
):  # fmt: skip
    """The blocked loop in the dtype of the buffers ``Xb``, ``Cb``, ``Gb``.

    ``limit`` is the already shrunk clip norm; ``G`` and ``g0`` are float64.
    ``Gb`` has the shape of ``G`` (float64) or of its transpose (float32).
    ``weights`` (empty: none) multiply each row's clip factor.
    """
    K = Cb.shape[1]
    B = Xb.shape[0]
    Yb = np.empty((B, K), dtype=Y.dtype)
    nb = np.empty(B)
    wb = np.ones(B)
    weighted = weights.shape[0] > 0
    for start in range(0, n_rows, B):
        m = min(B, n_rows - start)
        Xm = _block_rows(X, rows, start, m, Xb)
        Cm = Cb[:m]
        np.dot(Xm, Wt, Cm)  # outputs without intercept
        for r in range(m):  # the block's targets and norms, read in a tight
            i = rows[start + r]  # loop (many cache misses in flight at once)
            nb[r] = row_norms[i]
            if weighted:
                wb[r] = weights[i]
            for k in range(K):
                Yb[r, k] = Y[i, k]
        for r in range(m):
            for k in range(K):
                z[k] = Cm[r, k] + b[k]
            dloss_only(loss, z, Yb[r], dz)  # the value is not needed
            # a weight w <= 1 after the clip: fl(s w) <= s (rounding is
            # monotone), so the rounding-safe claim above still holds
            s = _clip_scale(dz, nb[r], fit_intercept, limit, l1) * wb[r]
            for k in range(K):
                c = _store_toward_zero(Cm, r, k, clipped_coefficient(s, dz[k]))
                if fit_intercept:
                    g0[k] += c
        _add_block_sum(Cm, Xm, Gb, G)


def _add_block_sum(Cm, Xm, Gb, G):
    """Add ``Cm^T Xm`` (one BLAS product into ``Gb``) to float64 ``G``.

    float64: ``Gb = Cm^T Xm``. float32: ``Gb = Xm^T Cm`` (the same sum of
    products; this orientation runs ~20% faster in sgemm), added transposed.
    numba only: compiled through the overload.
    """
    raise NotImplementedError  # pragma: no cover


@overload(_add_block_sum, jit_options={"cache": True})
def _add_block_sum_impl(Cm, Xm, Gb, G):
    if Cm.dtype == types.float32:

        def add_transposed(Cm, Xm, Gb, G):
            np.dot(Xm.T, Cm, Gb)
            for k in range(G.shape[0]):
                for j in range(G.shape[1]):
                    G[k, j] += Gb[j, k]

        return add_transposed

    def add(Cm, Xm, Gb, G):
        np.dot(Cm.T, Xm, Gb)
        for k in range(G.shape[0]):
            for j in range(G.shape[1]):
                G[k, j] += Gb[k, j]

    return add


@numba.njit(cache=True)
def csr_clipped_sum(
    data, indices, indptr, Y, rows, n_rows, W, b, loss, clip_norm, row_norms,
    fit_intercept, G, g0, z, dz, l1, weights,
):  # fmt: skip
    """CSR loop of :func:`clipped_grad_sum_csr` (``l1`` picks the norm;
    ``weights``, empty for none, multiply each row's clip factor)."""
    K = W.shape[0]
    limit = _safe_limit(clip_norm, K, W.shape[1])
    weighted = weights.shape[0] > 0
    for r in range(n_rows):
        i = rows[r]
        start, end = indptr[i], indptr[i + 1]
        for k in range(K):
            acc = b[k]
            for p in range(start, end):
                acc += data[p] * W[k, indices[p]]
            z[k] = acc
        dloss_only(loss, z, Y[i], dz)
        s = _clip_scale(dz, row_norms[i], fit_intercept, limit, l1)
        if weighted:
            s *= weights[i]
        for k in range(K):
            c = clipped_coefficient(s, dz[k])
            if c != 0.0:
                for p in range(start, end):
                    G[k, indices[p]] += c * data[p]
                if fit_intercept:
                    g0[k] += c


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
    X : ndarray of shape (n, d), C-contiguous float64 or float32
    Y : ndarray of shape (n, K)
        Encoded targets.
    rows : ndarray of int64
        Row indices of the batch; only the first ``n_rows`` are used.
    n_rows : int
    W : ndarray of shape (K, d), C-contiguous
    b : ndarray of shape (K,)
    loss : int
        Loss code.
    clip_norm : float
        L2 bound on each per-example gradient (``inf`` for no clipping).
    row_sq_norms : ndarray of shape (n,)
        ``||x_i||^2``, computed in float64.
    fit_intercept : bool
    G : ndarray of shape (K, d)
        Accumulator for the coefficient gradient (added to, not reset).
    g0 : ndarray of shape (K,)
        Accumulator for the intercept gradient.
    z, dz : ndarray of shape (K,)
        Work buffers.
    """
    dense_clipped_sum(
        X, Y, rows, n_rows, W, b, loss, clip_norm, row_sq_norms, fit_intercept,
        G, g0, z, dz, False, np.empty(0),
    )  # fmt: skip


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
    csr_clipped_sum(
        data, indices, indptr, Y, rows, n_rows, W, b, loss, clip_norm,
        row_sq_norms, fit_intercept, G, g0, z, dz, False, np.empty(0),
    )  # fmt: skip


@numba.njit(cache=True)
def weighted_clipped_grad_sum(
    X, Y, rows, n_rows, W, b, loss, clip_norm, row_sq_norms, fit_intercept, G,
    g0, z, dz, weights,
):  # fmt: skip
    """:func:`clipped_grad_sum` with row ``i``'s clipped gradient times ``weights[i]``.

    The weights (per-example, e.g. ``class_weight``) must lie in ``[0, 1]``
    (the caller normalises them by their largest value): each weighted
    clipped gradient then has norm at most ``clip_norm``, the sensitivity
    the Gaussian events assume. An empty ``weights`` is no weighting.
    """
    dense_clipped_sum(
        X, Y, rows, n_rows, W, b, loss, clip_norm, row_sq_norms, fit_intercept,
        G, g0, z, dz, False, weights,
    )  # fmt: skip


@numba.njit(cache=True)
def weighted_clipped_grad_sum_csr(
    data, indices, indptr, Y, rows, n_rows, W, b, loss, clip_norm, row_sq_norms,
    fit_intercept, G, g0, z, dz, weights,
):  # fmt: skip
    """CSR twin of :func:`weighted_clipped_grad_sum`."""
    csr_clipped_sum(
        data, indices, indptr, Y, rows, n_rows, W, b, loss, clip_norm,
        row_sq_norms, fit_intercept, G, g0, z, dz, False, weights,
    )  # fmt: skip
