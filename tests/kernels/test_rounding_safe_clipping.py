"""Clipping holds in exact arithmetic at the rounding edge (float64 and float32 X).

The kernel's scaled coefficients ``c`` of a single example are read back
exactly from the intercept accumulator (``g0 = 0 + c``), and the norm of the
per-example gradient ``c [x, 1]`` is computed with exact rationals. Rows are
built so that the unclipped norm is within a few ulps of ``clip_norm``, on
both sides, where rounding decides.
"""

import zlib
from fractions import Fraction

import numpy as np
import pytest

from dpestim._kernels import clipped_grad_sum, clipped_grad_sum_csr
from dpestim.losses import SQUARED
from dpestim.utils._rows import row_sq_norms


def _exact_sq_norm(c, x, fit_intercept):
    cc = sum(Fraction(float(v)) ** 2 for v in c)
    xx = sum(Fraction(float(v)) ** 2 for v in x) + (1 if fit_intercept else 0)
    return cc * xx


def _edge_rows(rng, dtype, n_rows):
    """Rows, targets and clip norms with an unclipped norm at clip (1 +- ulps)."""
    for _ in range(n_rows):
        d = int(rng.integers(1, 200))
        scale = 10.0 ** rng.uniform(-3, 3)
        x = (rng.normal(size=d) * scale).astype(dtype)
        clip = float(10.0 ** rng.uniform(-2, 2))
        W = np.zeros((1, d))
        # squared loss, z = 0: dz = -y; |dz| sqrt(||x||^2 + 1) = clip (1 + e)
        norm_x = float(np.sqrt(np.sum(x.astype(np.float64) ** 2) + 1.0))
        e = float(rng.integers(-8, 9)) * 2.0**-52
        y = -(clip / norm_x) * (1.0 + e)
        yield x, np.array([[y]]), W, clip


def _kernel_coefficients(x, Y, W, clip, sparse):
    X = x[None, :]
    G, g0 = np.zeros_like(W), np.zeros(1)
    z, dz = np.empty(1), np.empty(1)
    rows = np.zeros(1, dtype=np.int64)
    sq = row_sq_norms(X)
    if sparse:
        data, indices = X[0], np.arange(X.shape[1], dtype=np.int32)
        indptr = np.array([0, X.shape[1]], dtype=np.int32)
        clipped_grad_sum_csr(
            data, indices, indptr, Y, rows, 1, W, np.zeros(1), SQUARED, clip, sq,
            True, G, g0, z, dz,
        )  # fmt: skip
    else:
        clipped_grad_sum(
            X, Y, rows, 1, W, np.zeros(1), SQUARED, clip, sq, True, G, g0, z, dz
        )  # fmt: skip
    return g0  # exactly c: the accumulator started at 0


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("sparse", [False, True])
def test_every_clipped_gradient_is_within_clip_norm_exactly(dtype, sparse):
    rng = np.random.default_rng(zlib.crc32(f"edge-{dtype.__name__}-{sparse}".encode()))
    for x, Y, W, clip in _edge_rows(rng, dtype, 400):
        c = _kernel_coefficients(x, Y, W, clip, sparse)
        assert _exact_sq_norm(c, x, True) <= Fraction(clip) ** 2


def test_the_edge_rows_break_the_unguarded_formula():
    """Control: the same rows clipped by ``clip / norm`` (no safety margin)
    exceed clip_norm in exact arithmetic, so the test above can fail."""
    rng = np.random.default_rng(zlib.crc32(b"edge-control"))
    violations = 0
    for x, Y, _, clip in _edge_rows(rng, np.float64, 400):
        dz = -Y[0]
        norm = np.sqrt(dz[0] * dz[0]) * np.sqrt(row_sq_norms(x[None, :])[0] + 1.0)
        c = dz * (clip / norm) if norm > clip else dz
        violations += _exact_sq_norm(c, x, True) > Fraction(clip) ** 2
    assert violations > 0
