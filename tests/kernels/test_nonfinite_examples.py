"""An example whose gradient overflows adds nothing: the bound holds in floating point.

Every kernel bounds one example's contribution (``clip_norm`` for the
gradient sums, ``C`` for a dual update, the clamps of the saddle solvers).
At an absurd learning rate or with an extreme row, the outputs ``W x + b``
of one example can overflow: its loss derivative is then infinite or NaN,
and ``clip_norm / inf`` times ``inf`` used to add NaN to the sum, so that
the released sum (NaN or not) depended on that one row. The kernels now
drop such an example (its contribution is 0, within every bound).

Each test builds two neighbouring batches that differ in one row, the
overflowing row against a zero row, and checks that the kernel's sum is
finite and moves by at most the bound the solver's event assumes (here
exactly 0 in the coefficients: the zero row and the dropped row both add
nothing there). The lazy sparse dp-sgd loop, the fourth clipping site, is
checked in ``tests/solvers/test_lazy_sparse.py``.
"""

import numpy as np
import pytest
import scipy.sparse as sp

from dpestim._kernels import (
    weighted_clipped_grad_sum,
    weighted_clipped_grad_sum_csr,
    weighted_l1_clipped_grad_sum,
    weighted_l1_clipped_grad_sum_csr,
)
from dpestim.losses import HINGE, LOGISTIC, SQUARED
from dpestim.utils._rows import row_sq_norms

#: Coefficients and row entries whose product overflows: float64 (1e200 x
#: 1e200) and float32 (1e30 x 1e30, in the float32 products of the dense
#: kernel; float32 holds at most ~3.4e38).
BIG = {np.float64: 1e200, np.float32: 1e30}


def _batch(kind, big, d=4):
    """``(X, X_neighbour)``: a normal row plus an overflowing or a zero row."""
    normal = np.linspace(0.5, 1.0, d)
    if kind == "inf":
        bad = np.full(d, big)
    else:  # "nan": +inf and -inf added in the product with W
        bad = np.r_[big, -big, np.zeros(d - 2)]
    return np.vstack([normal, bad]), np.vstack([normal, np.zeros(d)])


def _sum(X, loss, clip, l1, sparse, dtype):
    d = X.shape[1]
    X = X.astype(dtype)
    W = np.full((1, d), BIG[dtype])
    Y = np.array([[1.0], [1.0]])
    rows = np.arange(2, dtype=np.int64)
    norms = np.abs(X.astype(np.float64)).sum(axis=1) if l1 else row_sq_norms(X)
    G, g0 = np.zeros((1, d)), np.zeros(1)
    args = (Y, rows, 2, W, np.zeros(1), loss, clip, norms, True, G, g0)
    work = (np.empty(1), np.empty(1), np.ones(2))
    if sparse:
        A = sp.csr_matrix(X)
        kernel = (
            weighted_l1_clipped_grad_sum_csr if l1 else weighted_clipped_grad_sum_csr
        )
        kernel(A.data, A.indices, A.indptr, *args, *work)
    else:
        kernel = weighted_l1_clipped_grad_sum if l1 else weighted_clipped_grad_sum
        kernel(X, *args, *work)
    return G, g0


@pytest.mark.parametrize("kind", ["inf", "nan"])
@pytest.mark.parametrize("loss", [SQUARED, LOGISTIC, HINGE])
@pytest.mark.parametrize("l1", [False, True], ids=["l2", "l1"])
@pytest.mark.parametrize(
    "sparse,dtype",
    [(False, np.float64), (True, np.float64), (False, np.float32)],
    ids=["dense", "csr", "dense-float32"],
)
def test_gradient_sums_drop_an_overflowing_example(kind, loss, l1, sparse, dtype):
    clip = 1.0
    X, Xn = _batch(kind, BIG[dtype])
    G, g0 = _sum(X, loss, clip, l1, sparse, dtype)
    Gn, g0n = _sum(Xn, loss, clip, l1, sparse, dtype)
    assert np.isfinite(G).all() and np.isfinite(g0).all()
    # the overflowing row adds nothing; the zero row adds only to g0
    np.testing.assert_array_equal(G, Gn)
    assert abs(g0[0] - g0n[0]) <= clip


@pytest.mark.parametrize("sequential", [False, True])
def test_dual_coordinate_update_drops_a_nan_prediction(sequential):
    from dpestim.solvers.coordinate import _kernels as _scd

    x = np.array([1.0, -1.0])
    v = np.array([1e308, 1e308])  # x . v = inf - inf = NaN
    alpha = np.zeros(1)
    _scd.scd_loop(
        np.asfortranarray(x[:, None] * 1e10), np.empty(0), np.empty(0, np.int32),
        np.empty(0, np.int32), False, np.array([1.0]), np.array([2e20]), SQUARED,
        1.0, 1.0, 1.0, 0.0, 1.0, 1, sequential, 1, alpha, v,
        np.random.default_rng(0),
    )  # fmt: skip
    assert alpha[0] == 0.0


def test_saddle_joint_clip_drops_an_overflowing_example():
    from dpestim.solvers.saddle._sgda_kernels import WORST_GROUP, joint_clipped_sum

    d = 3
    X = np.vstack([np.ones(d), np.full(d, BIG[np.float64])])
    theta = np.full(d, BIG[np.float64])
    M = np.ones((1, 1))
    out = []
    for Xb in (X, np.vstack([np.ones(d), np.zeros(d)])):
        Gx, Gy = np.zeros(d), np.zeros(1)
        joint_clipped_sum(
            Xb, np.array([1.0, 1.0]), np.zeros(2, np.int64), np.arange(2), 2,
            theta, np.ones(1), WORST_GROUP, SQUARED, M, 1.0, row_sq_norms(Xb),
            Gx, Gy, np.empty(1), np.empty(1), np.empty(1),
        )  # fmt: skip
        assert np.isfinite(Gx).all() and np.isfinite(Gy).all()
        out.append((Gx, Gy))
    # the dropped row adds nothing; the zero row adds only its dual part
    np.testing.assert_array_equal(out[0][0], out[1][0])
    assert np.linalg.norm(out[0][1] - out[1][1]) <= 1.0


def test_saddle_clamp_maps_nan_to_zero():
    from dpestim.solvers.saddle._kernels import _clamp

    assert _clamp(np.nan, 2.0) == 0.0
    assert _clamp(np.inf, 2.0) == 2.0
    assert _clamp(-np.inf, 2.0) == -2.0
    assert _clamp(0.5, 2.0) == 0.5
    assert np.isnan(_clamp(np.nan, np.inf))  # no bound: as computed


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_without_clipping_an_overflow_is_kept_so_divergence_shows(sparse):
    """``clip_norm = inf`` (a non-private run) has no bound to keep: the
    overflowing example's gradient is used as computed (NaN here), so a
    diverging run is still seen to diverge."""
    X, _ = _batch("nan", BIG[np.float64])
    G, g0 = _sum(X, SQUARED, np.inf, False, sparse, np.float64)
    assert not np.isfinite(G).all()
