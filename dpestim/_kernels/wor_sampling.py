"""Uniform subsampling without replacement: exactly ``m`` distinct rows."""

import numba


@numba.njit(cache=True)
def sample_without_replacement(rng, n, m, perm, out):
    """Write a uniform random ``m``-subset of ``range(n)`` into ``out[:m]``.

    Partial Fisher-Yates shuffle on the scratch permutation ``perm`` (which
    must hold a permutation of ``range(n)``; it is left permuted, still a
    permutation). Draw ``r`` uses ``j = r + floor(U (n - r))`` with ``U =
    rng.random()``. Every ``m``-subset is equally likely, which is the
    sampling ``dp_accounting.SampledWithoutReplacementDpEvent(n, m, ...)`` and
    the amplification theorem (Balle et al. 2018, Thm 9) assume. For
    ``m >= n`` every row is taken and no randomness is consumed.

    Parameters
    ----------
    rng : numpy.random.Generator
    n, m : int
    perm : ndarray of int64, shape (n,)
        Scratch permutation.
    out : ndarray of int64, shape (>= m,)

    Returns
    -------
    m : int
        Number of rows written (``min(m, n)``).
    """
    if m >= n:
        for i in range(n):
            out[i] = i
        return n
    for r in range(m):
        j = r + int(rng.random() * (n - r))
        if j >= n:  # guard against rounding of U (n - r) up to n - r
            j = n - 1
        tmp = perm[r]
        perm[r] = perm[j]
        perm[j] = tmp
        out[r] = perm[r]
    return m
