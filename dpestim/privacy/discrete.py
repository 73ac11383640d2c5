"""Discrete Laplace noise whose guarantee holds in floating point.

The continuous samplers behind ``noise="laplace"`` (NumPy's and numba's
``laplace``: ``scale * log(2 U)`` with ``U`` uniform on a ``2^-53`` grid)
take at most ``2^53`` values, never exceed ``36.04`` scales in magnitude, and
the floating-point sum ``value + noise`` is rounded; the sets of outputs
reachable from two neighbouring datasets then differ, so the pure
epsilon-DP guarantee accounted for the ideal real-valued mechanism is not
proven for what the computer runs (Mironov, "On significance of the least
significant bits for differential privacy", CCS 2012).

``noise="discrete_laplace"`` on the Laplace solvers releases instead, for
every coordinate of the clipped-gradient sum ``v`` of a step,

    ``(round(v / g) + Z) * g``,   ``Z ~ DLap(t)``: ``P(Z = z) ∝ exp(-|z| / t)``,

with ``g`` a power of two and ``t`` an integer, ``Z`` drawn exactly from
uniform integers (:mod:`dpestim._kernels.discrete_laplace`). Why this is
``1 / nm``-DP for a step whose continuous counterpart is Laplace of scale
``b = nm * 2 * clip_norm``:

1. *Floating-point sensitivity.* Each clipped per-example gradient has L1
   norm at most ``clip_norm (1 + delta1)``, ``delta1 = 2 (D + 4) u``
   (``D`` coordinates, ``u = 2^-53``: rounding of the norm and the scaling).
   A floating-point sum of ``m`` such gradients, in any order and with the
   blocked float64 accumulation of the kernels (this mode converts float32
   ``X`` to float64: the float32 kernel's sums have ``u = 2^-24``; at most
   ``2 m + 2`` terms per
   coordinate), is within ``gamma_{2m+2} m clip_norm (1 + delta1)`` of the
   exact sum in L1 norm (``gamma_k = k u / (1 - k u)``, Higham, *Accuracy
   and Stability of Numerical Algorithms*, 2002, section 3.1). Replacing
   one record therefore moves the computed sum by at most
   ``2 clip_norm (1 + rho)`` in L1 norm, ``1 + rho = (1 + delta1)(1 + m
   gamma_{2m+2})``.
2. *Grid.* Dividing by a power of two is exact; rounding and clamping are
   1-Lipschitz up to one grid unit each, so the integer indices of the two
   neighbours differ by at most ``2 clip_norm (1 + rho) / g + D`` in L1 norm.
3. *Discrete Laplace.* ``DLap(t)`` added to integer vectors at L1 distance
   ``Delta`` is ``Delta / t``-DP (the ratio of the probabilities of any
   integer is at most ``exp(Delta / t)``), exactly, since ``Z`` is sampled
   exactly. The released float ``(index + Z) * g`` is post-processing.
4. *Parameters.* :func:`discrete_laplace_grid` picks ``t >= D nm 2^10`` (and
   ``>= 2^20``) and then ``g``, ``t`` with ``t g >= b (1 + rho) / (1 -
   eta)``, ``eta = D nm / t <= 2^-10``: the step is at most ``(1 - eta) / nm
   + eta / nm = 1 / nm``-DP, the epsilon the accountant already uses. The
   noise is larger than the continuous one by the factor ``t g / b``, at most
   ``(1 + rho)(1 + 2^-19) / (1 - 2^-10)``: about 0.1%.

So the accounting (``LaplaceDpEvent(nm)`` per step, amplification by sampling
without replacement, basic composition) is unchanged, and the guarantee it
reports holds for the floating-point program, given exact uniform integers
from the bit generator. What remains outside it: the bit generator itself
(PCG64 is not a cryptographic generator) and timing side channels.
"""

import math

import numpy as np

__all__ = [
    "discrete_laplace_grid",
    "discrete_laplace_numpy",
    "discrete_laplace_pmf",
    "np_snap",
    "sum_rounding_factor",
]

_U = 2.0**-53


def sum_rounding_factor(n_coords, n_rows):
    """``1 + rho``: bound on the floating-point inflation of the L1 sensitivity.

    Parameters
    ----------
    n_coords : int
        Coordinates of one per-example gradient (``D``).
    n_rows : int
        Largest number of gradients summed in one step (``m``).
    """
    k = 2 * int(n_rows) + 2
    if k * _U >= 0.5:
        raise ValueError(
            f"n_rows={n_rows} is too large for the floating-point sensitivity "
            "bound of noise='discrete_laplace'."
        )
    gamma = k * _U / (1.0 - k * _U)
    delta1 = 2.0 * (int(n_coords) + 4) * _U
    # Rounded up: this bound must never be under-estimated.
    return math.nextafter((1.0 + delta1) * (1.0 + n_rows * gamma), math.inf)


def discrete_laplace_grid(scale, noise_multiplier, n_coords, n_rows):
    """Grid ``g`` (a power of two) and integer scale ``t`` for one step.

    Parameters
    ----------
    scale : float
        Scale ``b`` of the continuous Laplace noise the step replaces
        (``noise_multiplier * 2 * clip_norm``), ``> 0``.
    noise_multiplier : float
        ``nm``: the step is accounted as ``1 / nm``-DP.
    n_coords, n_rows : int
        See :func:`sum_rounding_factor`.

    Returns
    -------
    grid : float
    t : int
        ``t * grid >= scale * (1 + rho) / (1 - eta)``, ``eta = n_coords * nm
        / t <= 2^-10``.
    """
    scale, nm = float(scale), float(noise_multiplier)
    if not (math.isfinite(scale) and scale > 0 and math.isfinite(nm) and nm > 0):
        raise ValueError(f"scale and noise_multiplier must be positive, got {scale!r}.")
    k = max(20, math.ceil(math.log2(n_coords * nm)) + 10)
    if k > 50:
        raise ValueError(
            f"noise_multiplier={nm:g} with {n_coords} coordinates needs a grid "
            "finer than noise='discrete_laplace' supports (2^-50 of the scale); "
            "use fewer iterations or a larger epsilon."
        )
    eta = n_coords * nm / 2.0**k
    target = scale * sum_rounding_factor(n_coords, n_rows) / (1.0 - eta)
    target = math.nextafter(target, math.inf)
    grid = 2.0 ** math.floor(math.log2(target / 2.0**k))
    t = math.ceil(target / grid)
    while t * grid < target:  # guard against rounding in the division
        t += 1
    return grid, int(t)


def discrete_laplace_pmf(z, t):
    """``P(Z = z)`` of the discrete Laplace law of integer scale ``t``."""
    r = math.exp(-1.0 / t)
    return (1.0 - r) / (1.0 + r) * np.exp(-np.abs(np.asarray(z)) / t)


def _bernoulli_exp_neg(rng, num, den):
    k = 1
    while rng.integers(0, den) < num and rng.integers(0, k) == 0:
        k += 1
    return k % 2 == 1


def discrete_laplace_numpy(rng, t):
    """NumPy twin of :func:`dpestim._kernels.discrete_laplace.discrete_laplace`.

    The same integer draws in the same order, so the same ``Generator`` state
    gives the same value.
    """
    while True:
        u = int(rng.integers(0, t))
        if not _bernoulli_exp_neg(rng, u, t):
            continue
        v = 0
        while _bernoulli_exp_neg(rng, 1, 1):
            v += 1
        x = u + t * v
        negative = rng.integers(0, 2) == 1
        if negative and x == 0:
            continue
        return -x if negative else x


def np_snap(value, grid, t, rng):
    """NumPy twin of :func:`dpestim._kernels.discrete_laplace.snap_discrete_laplace`."""
    x = value / grid
    x = 0.0 if np.isnan(x) else float(np.clip(np.rint(x), -(2.0**52), 2.0**52))
    return float(int(x) + discrete_laplace_numpy(rng, t)) * grid
