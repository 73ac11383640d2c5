"""Poisson subsampling: each row enters the batch independently with prob. q."""

import math

import numba


@numba.njit(cache=True)
def poisson_sample(rng, n, q, out):
    """Write the indices of a Poisson sample of ``range(n)`` into ``out``.

    Every index is included independently with probability ``q``, which is
    exactly the sampling ``dp_accounting.PoissonSampledDpEvent(q, ...)``
    assumes. Rather than ``n`` Bernoulli draws, the gaps between selected
    indices are drawn from the geometric distribution
    ``P(gap = k) = (1 - q)^k q`` by inversion, ``floor(log(U) / log(1 - q))``
    with ``U`` uniform on ``(0, 1]``: the same law, in ``O(q n)`` draws.

    Parameters
    ----------
    rng : numpy.random.Generator
    n : int
        Number of rows.
    q : float
        Sampling probability in ``(0, 1]``. For ``q >= 1`` every row is taken
        and no randomness is consumed.
    out : ndarray of int64, shape (n,)
        Output buffer.

    Returns
    -------
    m : int
        Batch size; the sample is ``out[:m]`` in increasing order.
    """
    if q >= 1.0:
        for i in range(n):
            out[i] = i
        return n
    log1mq = math.log1p(-q)
    m = 0
    i = -1
    while True:
        u = 1.0 - rng.random()  # uniform on (0, 1]
        gap = math.floor(math.log(u) / log1mq)
        if gap >= n - i - 1:
            break
        i += 1 + int(gap)
        out[m] = i
        m += 1
    return m
