"""Laplacian smoothing: solve ``(I - s L) u = v`` for the periodic 1-D Laplacian.

``L`` is the periodic second-difference matrix (``L[i, i] = -2``,
``L[i, i +- 1 mod d] = 1``), so ``A_s = I - s L`` is symmetric circulant with
eigenvalues ``1 + 2 s - 2 s cos(2 pi k / d)`` (Wang et al., DP-LSSGD, eq. 3).
The paper applies ``A_s^{-1}`` with an FFT in ``O(d log d)``; numba has no
FFT, so the kernel uses the exact ``O(d)`` factorisation

    A_s = (s / w) (I - w S) (I - w S^{-1}),   w = 2 s / (2 s + 1 + sqrt(4 s + 1)),

with ``S`` the cyclic shift: one causal and one anti-causal periodic
first-order recursion, each started from its closed-form periodic initial
value. Both recursions contract (``0 < w < 1``), so the solve is stable for
every ``s >= 0`` and every ``d >= 1``; it agrees with the FFT form
(:func:`dpestim.solvers.laplacian_smooth`) to rounding error.
"""

import math

import numba


@numba.njit(cache=True)
def laplacian_smooth_inplace(v, smoothing):
    """Overwrite the 1-D array ``v`` with ``(I - smoothing * L)^{-1} v``.

    Parameters
    ----------
    v : ndarray of float64, shape (d,)
        Vector to smooth (periodic boundary: ``v[d - 1]`` neighbours
        ``v[0]``). Modified in place.
    smoothing : float
        Smoothing strength ``s >= 0``; ``0`` leaves ``v`` untouched.
    """
    d = v.shape[0]
    if smoothing == 0.0 or d == 0:
        return
    s = smoothing
    root = math.sqrt(4.0 * s + 1.0)
    w = 2.0 * s / (2.0 * s + 1.0 + root)
    scale = 2.0 / (2.0 * s + 1.0 + root)  # = w / s
    wd = 1.0 - w**d
    # causal pass y_i = v_i + w y_{i-1}, periodic start
    # y_0 = sum_j w^j v_{-j mod d} / (1 - w^d)
    acc = v[0]
    p = 1.0
    for j in range(1, d):
        p *= w
        acc += p * v[d - j]
    prev = acc / wd
    v[0] = prev
    for i in range(1, d):
        prev = v[i] + w * prev
        v[i] = prev
    # anti-causal pass z_i = y_i + w z_{i+1}, periodic start
    # z_{d-1} = sum_j w^j y_{(d-1+j) mod d} / (1 - w^d)
    acc = v[d - 1]
    p = 1.0
    for j in range(1, d):
        p *= w
        acc += p * v[j - 1]
    nxt = acc / wd
    v[d - 1] = scale * nxt
    for i in range(d - 2, -1, -1):
        nxt = v[i] + w * nxt
        v[i] = scale * nxt
