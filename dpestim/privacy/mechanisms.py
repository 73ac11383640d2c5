"""Additive noise mechanisms drawing from a ``numpy.random.Generator``.

The solvers draw their noise inside numba kernels from the same Generator;
these functions are the reference form of the same draws (one
``standard_normal`` / ``laplace`` call per coordinate, in C order), used by
the tests' NumPy twins and by code that adds noise outside a kernel.
"""

import numbers

import numpy as np

__all__ = ["gaussian_noise", "laplace_noise"]


def _check_scale(scale, name):
    if isinstance(scale, (bool, np.bool_)) or not isinstance(scale, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {scale!r}.")
    scale = float(scale)
    if not np.isfinite(scale) or scale < 0:
        raise ValueError(f"{name} must be a finite non-negative number, got {scale!r}.")
    return scale


def _check_draw(rng, shape, caller):
    """``shape`` as a tuple of non-negative ints; ``rng`` a Generator."""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            f"{caller}: rng must be a numpy.random.Generator, got {type(rng).__name__}."
        )
    dims = (shape,) if isinstance(shape, (numbers.Integral, np.integer)) else shape
    try:
        dims = tuple(dims)
    except TypeError:
        raise TypeError(
            f"{caller}: shape must be an int or a tuple of ints, got {shape!r}."
        ) from None
    for k in dims:
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, numbers.Integral):
            raise TypeError(
                f"{caller}: shape must be an int or a tuple of ints, got {shape!r}."
            )
        if k < 0:
            raise ValueError(
                f"{caller}: shape must have non-negative entries, got {shape!r}."
            )
    return tuple(int(k) for k in dims)


def gaussian_noise(rng, std, shape):
    """Draw ``N(0, std**2)`` noise of the given shape.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of randomness.
    std : float
        Standard deviation, ``noise_multiplier * l2_sensitivity``.
    shape : int or tuple of int
        Shape of the noise array (non-negative entries).

    Raises
    ------
    TypeError, ValueError
        On a non-Generator ``rng``, a non-real or negative scale, or a bad
        shape.

    Returns
    -------
    noise : ndarray of float64
    """
    std = _check_scale(std, "std")
    shape = _check_draw(rng, shape, "gaussian_noise")
    return std * rng.standard_normal(shape)


def laplace_noise(rng, scale, shape):
    """Draw Laplace noise with density ``exp(-|x| / scale) / (2 scale)``.

    ``scale`` is the Laplace *scale* ``b = l1_sensitivity / epsilon``, not the
    standard deviation (which is ``sqrt(2) * b``).

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of randomness.
    scale : float
        Laplace scale parameter ``b``.
    shape : int or tuple of int
        Shape of the noise array (non-negative entries).

    Raises
    ------
    TypeError, ValueError
        On a non-Generator ``rng``, a non-real or negative scale, or a bad
        shape.

    Returns
    -------
    noise : ndarray of float64
    """
    scale = _check_scale(scale, "scale")
    shape = _check_draw(rng, shape, "laplace_noise")
    return rng.laplace(0.0, scale, shape) if scale > 0 else np.zeros(shape)
