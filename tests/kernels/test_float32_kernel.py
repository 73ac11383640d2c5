"""The dense kernel's float32 arithmetic (float32 X): NumPy twin, rounding, sensitivity.

float32 rows are multiplied in float32 (``sgemm``), the per-example scalars
are computed in float64, each clipped coefficient is stored rounded toward
zero to float32 and the block sums are added in float64
(:mod:`dpestim._kernels.clipping`). The twin below does the same with NumPy,
block by block; the exact-arithmetic edge cases are in
``test_rounding_safe_clipping.py``.
"""

import zlib
from fractions import Fraction

import numba
import numpy as np
import pytest
from twins import make_targets, np_dloss

from dpestim._kernels import clipped_grad_sum
from dpestim._kernels.clipping import _BLOCK32, _safe_limit32, _store_toward_zero
from dpestim.losses import HINGE, LOGISTIC, MULTINOMIAL, SQUARED, SQUARED_HINGE
from dpestim.utils._rows import row_sq_norms

LOSSES = [LOGISTIC, SQUARED, HINGE, SQUARED_HINGE, MULTINOMIAL]


def np_toward_zero32(c):
    """float32 of ``c`` rounded toward zero (exact reference, via nextafter)."""
    v = np.float32(c)
    if abs(float(v)) > abs(c):
        v = np.nextafter(v, np.float32(0.0))
    return v


def np_clipped_grad_sum32(X, Y, rows, W, b, loss, clip_norm, fit_intercept):
    """NumPy twin of the float32 kernel: float32 products per block (the
    batch split into equal blocks of at most ``_BLOCK32`` rows), float64
    scalars, the factor from ``_safe_limit32``, float64 block sums."""
    K, d = W.shape
    W32 = W.astype(np.float32)
    sq = np.einsum("ij,ij->i", X, X, dtype=np.float64)
    limit = _safe_limit32(clip_norm, K, d)
    G, g0 = np.zeros((K, d)), np.zeros(K)
    n_blocks = -(-len(rows) // _BLOCK32)
    size = -(-len(rows) // n_blocks)
    for start in range(0, len(rows), size):
        block = rows[start : start + size]
        Xb = X[block]
        C = Xb @ W32.T  # float32
        for r, i in enumerate(block):
            dz = np_dloss(loss, C[r].astype(np.float64) + b, Y[i])
            norm = np.linalg.norm(dz) * np.sqrt(sq[i] + fit_intercept)
            s = limit / norm if norm > limit else 1.0
            C[r] = [np_toward_zero32(s * v) for v in dz]
            if fit_intercept:
                g0 += C[r].astype(np.float64)
        G += (C.T @ Xb).astype(np.float64)
    return G, g0


def _kernel(X, Y, rows, W, b, loss, clip_norm, fit_intercept):
    K = W.shape[0]
    G, g0 = np.zeros_like(W), np.zeros(K)
    rows = np.asarray(rows, dtype=np.int64)
    clipped_grad_sum(
        X, Y, rows, rows.shape[0], W, b, loss, clip_norm, row_sq_norms(X),
        fit_intercept, G, g0, np.empty(K), np.empty(K),
    )  # fmt: skip
    return G, g0


def _problem(loss, rng, n=400, d=30):
    K = 1 if loss in (LOGISTIC, HINGE, SQUARED_HINGE) else 3
    X = (rng.normal(size=(n, d)) * rng.uniform(0.1, 3.0, size=(n, 1))).astype(
        np.float32
    )
    W = rng.normal(size=(K, d)) * 0.3
    return X, make_targets(loss, n, K, rng), W, rng.normal(size=K)


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_float32_kernel_matches_numpy_twin(loss, fit_intercept):
    rng = np.random.default_rng(zlib.crc32(f"f32-twin-{loss}-{fit_intercept}".encode()))
    X, Y, W, b = _problem(loss, rng)
    rows = np.sort(rng.choice(X.shape[0], 300, replace=False))  # 2 blocks
    for clip in (0.05, 1.0):
        G, g0 = _kernel(X, Y, rows, W, b, loss, clip, fit_intercept)
        G2, g02 = np_clipped_grad_sum32(X, Y, rows, W, b, loss, clip, fit_intercept)
        scale = clip * len(rows)
        # float32 products: NumPy's and numba's sgemm may sum in other orders
        np.testing.assert_allclose(G, G2, rtol=1e-5, atol=1e-6 * scale)
        np.testing.assert_allclose(g0, g02, rtol=1e-5, atol=1e-6 * scale)
        # and float32 arithmetic is float64's result to float32 accuracy
        X64 = X.astype(np.float64)
        G64, g064 = _kernel(X64, Y, rows, W, b, loss, clip, fit_intercept)
        np.testing.assert_allclose(G, G64, rtol=1e-4, atol=1e-5 * scale)
        np.testing.assert_allclose(g0, g064, rtol=1e-4, atol=1e-5 * scale)


def test_clip_norms_outside_the_float32_range_use_float64_arithmetic():
    """``inf`` (no clipping), and clip norms beyond ``[2^-60, 2^60]``, gather
    float32 rows into float64 blocks: the float64 kernel's result (up to the
    summation order of the row norms)."""
    rng = np.random.default_rng(zlib.crc32(b"f32-range"))
    X, Y, W, b = _problem(SQUARED, rng, n=200)
    rows = np.arange(0, 200, 2)
    for clip in (np.inf, 2.0**61, 2.0**-61):
        G, g0 = _kernel(X, Y, rows, W, b, SQUARED, clip, True)
        G64, g064 = _kernel(X.astype(np.float64), Y, rows, W, b, SQUARED, clip, True)
        np.testing.assert_allclose(G, G64, rtol=1e-12, atol=0)
        np.testing.assert_allclose(g0, g064, rtol=1e-12, atol=0)


@numba.njit
def _store_all(values):
    C = np.empty((1, 1), dtype=np.float32)
    out = np.empty(values.shape[0], dtype=np.float32)
    back = np.empty(values.shape[0])
    for i in range(values.shape[0]):
        back[i] = _store_toward_zero(C, 0, 0, values[i])
        out[i] = C[0, 0]
    return out, back


def test_store_toward_zero_never_rounds_up():
    rng = np.random.default_rng(zlib.crc32(b"toward-zero"))
    f32 = np.finfo(np.float32)
    ties = np.nextafter(np.float32(1.5), np.float32(2)).astype(np.float64)
    ties = (ties + 1.5) / 2  # exactly between two float32: nearest rounds up
    special = [
        2.0**-125, np.nextafter(2.0**-125, 0), 2.0**-149, 0.7 * 2.0**-149, 2.0**127,
        np.nextafter(2.0**127, 0), float(f32.max), 1e300, 0.0, ties, 1.0, 3.0,
    ]  # fmt: skip
    values = np.concatenate(
        [
            rng.normal(size=20000) * 2.0 ** rng.uniform(-160, 140, size=20000),
            special,
            -np.asarray(special),
        ]
    )
    stored, back = _store_all(values)
    stored = stored.astype(np.float64)
    assert np.array_equal(stored, back)  # the value returned is the value stored
    assert np.all(np.abs(stored) <= np.abs(values))
    assert np.all(np.sign(stored) * np.sign(values) >= 0)  # never changes sign
    normal = (np.abs(values) >= 2.0**-125) & (np.abs(values) < 2.0**127)
    rel = np.abs(stored[normal] - values[normal]) / np.abs(values[normal])
    assert rel.max() <= 2.0**-22
    # exact comparison on the tie (nearest would round it up)
    assert Fraction(float(_store_all(np.array([ties]))[0][0])) < Fraction(ties)


def test_float32_sensitivity_on_random_neighbouring_datasets():
    """Removing one record moves the float32 kernel's sum by <= clip_norm,
    up to the float32 rounding of the sum (relative ~1e-6 here)."""
    rng = np.random.default_rng(zlib.crc32(b"f32-neighbours"))
    worst = 0.0
    for trial in range(40):
        loss = LOSSES[trial % len(LOSSES)]
        clip = float(rng.choice([0.01, 1.0, 7.0]))
        X, Y, W, b = _problem(loss, rng, n=150, d=12)
        X *= np.float32(rng.choice([1e-3, 1.0, 1e3]))
        full = np.arange(X.shape[0])
        removed = np.delete(full, rng.integers(X.shape[0]))
        G, g0 = _kernel(X, Y, full, W, b, loss, clip, bool(trial % 2))
        H, h0 = _kernel(X, Y, removed, W, b, loss, clip, bool(trial % 2))
        diff = np.sqrt(np.sum((G - H) ** 2) + np.sum((g0 - h0) ** 2))
        worst = max(worst, diff / clip)
        assert diff <= clip * (1 + 1e-4)
    assert worst > 0.99
