"""numba kernels: loss value and derivative with respect to the outputs."""

import math

import numba
import numpy as np

from ._codes import HINGE, LOGISTIC, MULTINOMIAL, SQUARED, SQUARED_HINGE


@numba.njit(cache=True)
def _log1pexp(t):
    # log(1 + exp(t)) without overflow.
    if t > 0:
        return t + math.log1p(math.exp(-t))
    return math.log1p(math.exp(t))


@numba.njit(cache=True)
def _sigmoid(t):
    if t >= 0:
        return 1.0 / (1.0 + math.exp(-t))
    e = math.exp(t)
    return e / (1.0 + e)


@numba.njit(cache=True)
def dloss(loss, z, y, dz):
    """Write d loss / d z into ``dz``; return the loss value.

    Parameters
    ----------
    loss : int
        Loss code (see :mod:`dpestim.losses`).
    z : ndarray of shape (K,)
        Model outputs for one example.
    y : ndarray of shape (K,)
        Encoded target of that example.
    dz : ndarray of shape (K,)
        Output buffer.
    """
    return _dloss(loss, z, y, dz, True)


@numba.njit(cache=True)
def dloss_only(loss, z, y, dz):
    """:func:`dloss` without the loss value (skips its ``exp``/``log``).

    Writes the same ``dz``, bit for bit; returns nothing.
    """
    _dloss(loss, z, y, dz, False)


@numba.njit(cache=True, inline="always")
def _dloss(loss, z, y, dz, with_value):
    K = z.shape[0]
    value = 0.0
    if loss == MULTINOMIAL:
        zmax = z[0]
        for k in range(1, K):
            if z[k] > zmax:
                zmax = z[k]
        total = 0.0
        for k in range(K):
            dz[k] = math.exp(z[k] - zmax)
            total += dz[k]
        for k in range(K):
            dz[k] = dz[k] / total - y[k]
        if with_value:
            for k in range(K):
                value -= y[k] * z[k]
            value += zmax + math.log(total)
        return value
    for k in range(K):
        if loss == LOGISTIC:
            m = y[k] * z[k]
            if with_value:
                value += _log1pexp(-m)
            dz[k] = -y[k] * _sigmoid(-m)
        elif loss == SQUARED:
            r = z[k] - y[k]
            value += 0.5 * r * r
            dz[k] = r
        elif loss == HINGE:
            m = 1.0 - y[k] * z[k]
            if m > 0:
                value += m
                dz[k] = -y[k]
            else:
                dz[k] = 0.0
        elif loss == SQUARED_HINGE:
            m = 1.0 - y[k] * z[k]
            if m > 0:
                value += m * m
                dz[k] = -2.0 * y[k] * m
            else:
                dz[k] = 0.0
        else:
            dz[k] = np.nan
            value = np.nan
    return value


@numba.njit(cache=True)
def loss_value(loss, Z, Y):
    """Mean loss over rows of ``Z`` (n, K) against encoded targets ``Y``."""
    n, K = Z.shape
    dz = np.empty(K)
    total = 0.0
    for i in range(n):
        total += dloss(loss, Z[i], Y[i], dz)
    return total / max(n, 1)
