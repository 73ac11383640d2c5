"""Exact discrete Laplace noise on a grid, from uniform integers only.

The samplers of Canonne, Kamath and Steinke ("The Discrete Gaussian for
Differential Privacy", NeurIPS 2020, Algorithms 1 and 2) use nothing but
uniform integer draws (``rng.integers``: Lemire's rejection method, exact)
and integer arithmetic, so the law of their output is *exactly* the discrete
Laplace law: no floating-point rounding, no truncated support. The NumPy
twins are in :mod:`dpestim.privacy.discrete`.
"""

import numba
import numpy as np

__all__ = ["bernoulli_exp_neg", "discrete_laplace", "snap_discrete_laplace"]

# Grid indices are kept within +-2^52, where float64 holds every integer.
_INDEX_BOUND = float(2**52)


@numba.njit(cache=True)
def bernoulli_exp_neg(rng, num, den):
    """``True`` with probability ``exp(-num / den)``, ``0 <= num <= den``.

    CKS Algorithm 1: draw ``A_k ~ Bernoulli(num / (den k))`` for ``k = 1,
    2, ...`` until the first failure at ``k = K``; ``K`` is odd with
    probability ``exp(-num / den)``. ``Bernoulli(num / (den k))`` is drawn as
    ``Bernoulli(num / den)`` and ``Bernoulli(1 / k)`` (independent integer
    draws, so ``den * k`` never overflows).
    """
    k = 1
    while rng.integers(0, den) < num and rng.integers(0, k) == 0:
        k += 1
    return k % 2 == 1


@numba.njit(cache=True)
def discrete_laplace(rng, t):
    """``Z`` with ``P(Z = z) = (1 - e^{-1/t}) / (1 + e^{-1/t}) e^{-|z| / t}``.

    CKS Algorithm 2 with ``s = 1``: ``t`` is a positive integer (the scale in
    grid units); ``u ~ U{0..t-1}`` accepted with probability ``e^{-u/t}``,
    ``v ~ Geometric(1 - e^{-1})``, ``|Z| = u + t v``, a fair sign, and
    ``-0`` rejected.
    """
    while True:
        u = rng.integers(0, t)
        if not bernoulli_exp_neg(rng, u, t):
            continue
        v = 0
        while bernoulli_exp_neg(rng, 1, 1):
            v += 1
        x = u + t * v
        negative = rng.integers(0, 2) == 1
        if negative and x == 0:
            continue
        return -x if negative else x


@numba.njit(cache=True)
def snap_discrete_laplace(value, grid, t, rng):
    """``(round(value / grid) + Z) * grid`` with ``Z`` discrete Laplace(``t``).

    ``grid`` is a power of two, so ``value / grid`` is exact; the index is
    rounded to the nearest integer and clamped to ``+-2^52`` (both
    1-Lipschitz, so two values ``a``, ``b`` give indices at most
    ``|a - b| / grid + 1`` apart); a NaN value (never produced by clipped
    gradients) gives index 0. The released value is a function of the
    integer ``index + Z`` only.
    """
    x = value / grid
    if x != x:
        x = 0.0
    x = min(max(np.rint(x), -_INDEX_BOUND), _INDEX_BOUND)
    k = np.int64(x) + discrete_laplace(rng, t)
    return float(k) * grid
