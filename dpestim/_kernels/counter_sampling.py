"""Chunking-invariant Poisson sampling from a counter-based generator.

Row ``i`` enters the batch of step ``t`` independently with probability
``q``: exactly the sampling ``dp_accounting.PoissonSampledDpEvent(q, ...)``
assumes. The randomness is a function of ``(key, t, i)`` only, so the sample
is the same however the rows are split into chunks or workers, and any
process holding rows ``[start, stop)`` draws their part of the sample
without communicating.

Rows are grouped in fixed *sampling blocks* of :data:`SAMPLING_BLOCK`
consecutive global indices (independent of how the data is chunked). Block
``j`` of step ``t`` has its own stream of uniforms: the outputs of the
Philox4x64-10 counter-based generator (Salmon et al., SC 2011) with the
128-bit ``key`` and the counter ``(c, j, t, 0)``, ``c = 1, 2, ...``, four
64-bit words per counter value. This is exactly the stream of
``numpy.random.Philox(key=key, counter=[0, j, t, 0]).random_raw()``, which
the tests use as the reference. Inside a block the gaps between selected
rows are geometric, ``P(gap = k) = (1 - q)^k q``, drawn by inversion
``floor(log(U) / log(1 - q))`` with ``U = (w >> 11 + 1) 2^-53`` uniform on
``(0, 1]``: each row of the block is an independent Bernoulli(q), and blocks
and steps use disjoint counters, hence independent streams. The cost of a
sample of rows ``[start, stop)`` is ``O(q (stop - start))`` draws plus one
generator call per block touched.
"""

import math

import numba
import numpy as np

__all__ = ["SAMPLING_BLOCK", "philox4x64", "poisson_sample_range", "sampling_key"]

#: Rows per sampling block (global, independent of the data's chunking).
SAMPLING_BLOCK = 4096

_M32 = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)
_S11 = np.uint64(11)
_ONE = np.uint64(1)
_ZERO = np.uint64(0)
_PHILOX_M0 = np.uint64(0xD2E7470EE14C6C93)
_PHILOX_M1 = np.uint64(0xCA5A826395121157)
_PHILOX_W0 = np.uint64(0x9E3779B97F4A7C15)
_PHILOX_W1 = np.uint64(0xBB67AE8584CAA73B)
_TWO_M53 = 2.0**-53


def sampling_key(rng):
    """Draw the 128-bit sampling key of one fit from ``rng`` (two uint64)."""
    return rng.integers(0, 2**64 - 1, size=2, dtype=np.uint64, endpoint=True)


@numba.njit(cache=True)
def _mulhilo(a, b):
    """``(high, low)`` 64-bit words of the 128-bit product ``a * b``."""
    a_lo = a & _M32
    a_hi = a >> _S32
    b_lo = b & _M32
    b_hi = b >> _S32
    p0 = a_lo * b_lo
    p1 = a_lo * b_hi
    p2 = a_hi * b_lo
    p3 = a_hi * b_hi
    mid = (p0 >> _S32) + (p1 & _M32) + (p2 & _M32)
    hi = p3 + (p1 >> _S32) + (p2 >> _S32) + (mid >> _S32)
    return hi, a * b


@numba.njit(cache=True)
def philox4x64(c0, c1, c2, c3, k0, k1, out):
    """Philox4x64-10 of counter ``(c0, c1, c2, c3)`` and key ``(k0, k1)``.

    Writes the four 64-bit output words into ``out`` (uint64, length 4).
    """
    for r in range(10):
        if r > 0:
            k0 = k0 + _PHILOX_W0
            k1 = k1 + _PHILOX_W1
        hi0, lo0 = _mulhilo(_PHILOX_M0, c0)
        hi1, lo1 = _mulhilo(_PHILOX_M1, c2)
        c0, c1, c2, c3 = hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0
    out[0] = c0
    out[1] = c1
    out[2] = c2
    out[3] = c3


@numba.njit(cache=True)
def poisson_sample_range(key, step, q, start, stop, out):
    """Write the rows of ``[start, stop)`` in the Poisson sample of ``step``.

    Parameters
    ----------
    key : ndarray of uint64, shape (2,)
        Sampling key of the fit (:func:`sampling_key`).
    step : int
        Step index ``t >= 0``.
    q : float
        Sampling probability in ``(0, 1]``; ``q >= 1`` takes every row and
        draws nothing.
    start, stop : int
        Global row range.
    out : ndarray of int64, shape (>= stop - start,)
        Output buffer.

    Returns
    -------
    m : int
        Number of sampled rows; ``out[:m]`` holds their *global* indices in
        increasing order.
    """
    if q >= 1.0:
        for i in range(start, stop):
            out[i - start] = i
        return stop - start
    log1mq = math.log1p(-q)
    k0 = key[0]
    k1 = key[1]
    words = np.empty(4, dtype=np.uint64)
    ct = np.uint64(step)
    m = 0
    first = start // SAMPLING_BLOCK
    for j in range(first, (stop + SAMPLING_BLOCK - 1) // SAMPLING_BLOCK):
        lo = j * SAMPLING_BLOCK
        hi = min(lo + SAMPLING_BLOCK, stop)
        cj = np.uint64(j)
        counter = _ZERO
        used = 4
        i = lo - 1
        while True:
            if used == 4:
                counter = counter + _ONE
                philox4x64(counter, cj, ct, _ZERO, k0, k1, words)
                used = 0
            w = words[used]
            used += 1
            u = float((w >> _S11) + _ONE) * _TWO_M53  # uniform on (0, 1]
            gap = math.floor(math.log(u) / log1mq)
            if gap >= hi - i - 1:
                break
            i += 1 + int(gap)
            if i >= start:
                out[m] = i
                m += 1
    return m
