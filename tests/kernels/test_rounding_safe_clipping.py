"""Clipping holds in exact arithmetic at the rounding edge (float64 and float32 X).

The kernel's scaled coefficients ``c`` of a single example are read back
exactly from the intercept accumulator (``g0 = 0 + c``), and the norm of the
per-example gradient ``c [x, 1]`` is computed with exact rationals. Rows are
built so that the unclipped norm is within a few ulps of ``clip_norm``, on
both sides, where rounding decides: float64 ulps, and for float32 ``X``
(computed in float32 arithmetic) also float32 ulps. The coefficient
accumulator of a one-row batch holds the per-example gradient *as computed*
(each product ``c_k x_j`` rounded once, in float32 for float32 ``X``), and
its exact norm together with ``c`` is checked too.
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


def _edge_rows(rng, dtype, n_rows, ulp=2.0**-52):
    """Rows, targets and clip norms with an unclipped norm at clip (1 +- ulps)."""
    for _ in range(n_rows):
        d = int(rng.integers(1, 200))
        scale = 10.0 ** rng.uniform(-3, 3)
        x = (rng.normal(size=d) * scale).astype(dtype)
        clip = float(10.0 ** rng.uniform(-2, 2))
        W = np.zeros((1, d))
        # squared loss, z = 0: dz = -y; |dz| sqrt(||x||^2 + 1) = clip (1 + e)
        norm_x = float(np.sqrt(np.sum(x.astype(np.float64) ** 2) + 1.0))
        e = float(rng.integers(-8, 9)) * ulp
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
    return G, g0  # g0 is exactly c: the accumulator started at 0


def _exact_sq_frobenius(G, g0):
    return sum(Fraction(float(v)) ** 2 for v in G.ravel()) + sum(
        Fraction(float(v)) ** 2 for v in g0
    )


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("sparse", [False, True])
def test_every_clipped_gradient_is_within_clip_norm_exactly(dtype, sparse):
    rng = np.random.default_rng(zlib.crc32(f"edge-{dtype.__name__}-{sparse}".encode()))
    ulps = [2.0**-52] if dtype == np.float64 else [2.0**-52, 2.0**-24]
    for ulp in ulps:
        for x, Y, W, clip in _edge_rows(rng, dtype, 300, ulp):
            G, c = _kernel_coefficients(x, Y, W, clip, sparse)
            assert _exact_sq_norm(c, x, True) <= Fraction(clip) ** 2
            # the products as computed (float32 products for float32 X)
            assert _exact_sq_frobenius(G, c) <= Fraction(clip) ** 2


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


def test_the_float32_edge_rows_break_a_margin_without_the_float32_terms():
    """Control for float32 X: coefficients from the float64 margin, rounded to
    nearest float32, and float32 products exceed clip_norm on the float32
    edge rows, so the float32 margin (``2^-22``) and the rounding toward
    zero are what the test above checks."""
    from dpestim._kernels.clipping import _safe_limit

    rng = np.random.default_rng(zlib.crc32(b"edge-control-float32"))
    violations = 0
    for x, Y, _, clip in _edge_rows(rng, np.float32, 300, 2.0**-24):
        dz = -Y[0]
        sq = row_sq_norms(x[None, :])[0]
        norm = abs(dz[0]) * np.sqrt(sq + 1.0)
        limit = _safe_limit(clip, 1, x.shape[0])
        c = dz * (limit / norm) if norm > limit else dz
        c32 = c.astype(np.float32)  # round to nearest
        P = (c32[:, None] * x[None, :]).astype(np.float32)  # float32 products
        violations += _exact_sq_frobenius(P, c32) > Fraction(clip) ** 2
    assert violations > 0


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_l1_clipping_at_the_rounding_edge_dense(dtype):
    """The L1 kernel (Laplace solvers) on rows whose unclipped L1 norm
    ``|dz| (||x||_1 + 1)`` is clip (1 +- ulps): the coefficient ``c`` and
    the products as computed stay within clip_norm in exact arithmetic."""
    from dpestim._kernels import l1_clipped_grad_sum

    rng = np.random.default_rng(zlib.crc32(f"edge-l1-{dtype.__name__}".encode()))
    ulps = [2.0**-52] if dtype == np.float64 else [2.0**-52, 2.0**-24]
    for ulp in ulps:
        for _ in range(200):
            d = int(rng.integers(1, 200))
            x = (rng.normal(size=d) * 10.0 ** rng.uniform(-3, 3)).astype(dtype)
            clip = float(10.0 ** rng.uniform(-2, 2))
            l1 = float(np.sum(np.abs(x.astype(np.float64)))) + 1.0
            y = -(clip / l1) * (1.0 + float(rng.integers(-8, 9)) * ulp)
            X, W = x[None, :], np.zeros((1, d))
            G, g0 = np.zeros_like(W), np.zeros(1)
            norms = np.abs(X.astype(np.float64)).sum(axis=1)
            l1_clipped_grad_sum(
                X, np.array([[y]]), np.zeros(1, dtype=np.int64), 1, W, np.zeros(1),
                SQUARED, clip, norms, True, G, g0, np.empty(1), np.empty(1),
            )  # fmt: skip
            c = Fraction(float(g0[0]))
            x_l1 = sum(abs(Fraction(float(v))) for v in x) + 1
            assert abs(c) * x_l1 <= Fraction(clip)
            computed = sum(abs(Fraction(float(v))) for v in G.ravel()) + abs(c)
            assert computed <= Fraction(clip)
