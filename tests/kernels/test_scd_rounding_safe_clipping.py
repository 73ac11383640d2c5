"""dp-scd / seq-dp-scd clip each dual update within C in exact arithmetic.

The sensitivity of both solvers is ``||zeta_k x_k|| <= C`` for the clipped
dual update ``zeta_k`` of a record. The kernel (``scd_loop``) now clips to
the rounding-safe limit of the gradient kernels
(:func:`dpestim._kernels.clipping._safe_limit`, one output). A one-row,
one-step run without noise leaves ``alpha = 0 + zeta`` exactly, so the
update is read back and ``zeta^2 ||x||^2 <= C^2`` is checked with exact
rationals on rows whose norm is at the rounding edge (random dimension and
scale, norms just above and below 1, where the clip factor switches). The
control shows that the formula without the margin fails on the same rows.
"""

import math
import zlib
from fractions import Fraction

import numpy as np
import pytest

from dpestim.losses import SQUARED
from dpestim.solvers.coordinate import _kernels as _scd


def _rows(rng, n_rows):
    """Rows of random dimension and scale, some with a norm within ulps of 1."""
    for i in range(n_rows):
        d = int(rng.integers(1, 300))
        x = rng.normal(size=d)
        if i % 3 == 0:  # norm at 1 (1 +- a few ulps): c = C / max(1, ||x||)
            x = x / math.sqrt(float(np.dot(x, x)))
            x = x * (1.0 + float(rng.integers(-8, 9)) * 2.0**-52)
        else:
            x = x * 10.0 ** rng.uniform(-1, 3)
        clip = float(10.0 ** rng.uniform(-3, 3))
        yield x, clip


def _kernel_update(x, clip, sequential, sparse):
    """The dual update ``zeta`` of a one-row, one-step noiseless run."""
    y = np.array([1e30 * clip])  # far beyond the bound: zeta is clipped
    sq = np.array([float(np.einsum("i,i->", x, x))])
    alpha, v = np.zeros(1), np.zeros(x.shape[0])
    if sparse:
        X = (
            np.empty((0, 0), order="F"),
            x.copy(),
            np.arange(x.shape[0], dtype=np.int32),
            np.array([0, x.shape[0]], dtype=np.int32),
            True,
        )
    else:
        X = (
            np.asfortranarray(x[:, None]),
            np.empty(0),
            np.empty(0, dtype=np.int32),
            np.empty(0, dtype=np.int32),
            False,
        )
    _scd.scd_loop(
        *X, y, sq, SQUARED, 1.0, 1.0, clip, 0.0, 1.0, 1, sequential, 1, alpha, v,
        np.random.default_rng(0),
    )  # fmt: skip
    return float(alpha[0])


def _exact_sq(z, x):
    return Fraction(z) ** 2 * sum(Fraction(float(v)) ** 2 for v in x)


@pytest.mark.parametrize("sequential", [False, True])
@pytest.mark.parametrize("sparse", [False, True])
def test_every_clipped_dual_update_is_within_clip_exactly(sequential, sparse):
    rng = np.random.default_rng(zlib.crc32(f"scd-{sequential}-{sparse}".encode()))
    for x, clip in _rows(rng, 300):
        z = _kernel_update(x, clip, sequential, sparse)
        assert z > 0  # clipped at the bound, not zero
        assert _exact_sq(z, x) <= Fraction(clip) ** 2, (x.shape, clip)


def test_the_rows_break_the_formula_without_margin():
    """Control: ``C / max(1, sqrt(sq))`` exceeds C on some of the same rows."""
    rng = np.random.default_rng(zlib.crc32(b"scd-control"))
    violations = 0
    for x, clip in _rows(rng, 300):
        sq = float(np.einsum("i,i->", x, x))
        c = clip / max(1.0, math.sqrt(sq))
        violations += _exact_sq(c, x) > Fraction(clip) ** 2
    assert violations > 0
