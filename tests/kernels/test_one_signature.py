"""Dense and sparse fits share one compiled signature per kernel.

numba compiles a kernel once per argument type (dtype, layout, read-only
flag). The solvers pass placeholders for the unused dense or CSR arguments
and validation gives CSR input int32 indices, so that a dense and a sparse fit
(and a CSR matrix built with int64 indices) call each kernel with the same
types: one compilation each on a cold cache. These tests pin the types; the
values of the fits must not depend on the index dtype.
"""

import numba
import numpy as np
import pytest
import scipy.sparse as sp

from dpestim import LogisticRegression
from dpestim.solvers.accelerated import _kernels as accel_kernels
from dpestim.solvers.accelerated import base as accel_base
from dpestim.solvers.coordinate import _kernels as dp_scd_kernels
from dpestim.solvers.sgd import _descent as dp_sgd_descent
from dpestim.utils._rows import row_sq_norms
from dpestim.utils.validation import int32_indices


def _csr64(rng, n=60, d=7):
    X = sp.random(n, d, density=0.4, random_state=rng, format="csr")
    X.indices = X.indices.astype(np.int64)
    X.indptr = X.indptr.astype(np.int64)
    return X


@pytest.mark.parametrize("cls", [sp.csr_matrix, sp.csr_array])
def test_int32_indices_converts_index_arrays_only(cls):
    rng = np.random.default_rng(0)
    X64 = cls(_csr64(rng))
    assert X64.indices.dtype == np.int64
    X32 = int32_indices(X64)
    assert type(X32) is cls
    assert X32.indices.dtype == np.int32 and X32.indptr.dtype == np.int32
    assert X32.shape == X64.shape
    np.testing.assert_array_equal(X32.toarray(), X64.toarray())
    assert int32_indices(X32) is X32  # already int32: returned as is


def test_fit_on_int64_indices_equals_int32_and_dense():
    rng = np.random.default_rng(1)
    X64 = _csr64(rng, n=200, d=6)
    y = (rng.random(200) < 0.5).astype(int)
    X32 = sp.csr_matrix(
        (X64.data, X64.indices.astype(np.int32), X64.indptr.astype(np.int32)),
        shape=X64.shape,
    )
    fits = [
        LogisticRegression(
            epsilon=1.0, delta=1e-5, classes=[0, 1], solver="dp-sgd", random_state=3
        ).fit(X, y)
        for X in (X64, X32)
    ]
    np.testing.assert_array_equal(fits[0].coef_, fits[1].coef_)
    np.testing.assert_array_equal(fits[0].intercept_, fits[1].intercept_)


def test_placeholders_typed_like_real_inputs():
    csr = int32_indices(_csr64(np.random.default_rng(2)))
    index_type = numba.typeof(csr.indices)
    for module in (accel_base, dp_sgd_descent, dp_scd_kernels):
        assert numba.typeof(module._EMPTY_I) == index_type, module.__name__
    # dp-scd's dense argument is X.T (F-ordered) for dense input
    dense_xt = np.ascontiguousarray(np.ones((5, 3))).T
    assert numba.typeof(dp_scd_kernels._EMPTY_XT) == numba.typeof(dense_xt)


@pytest.mark.parametrize("sparse", [False, True])
def test_l1_and_l2_row_norms_share_one_type(sparse):
    X = np.random.default_rng(3).normal(size=(20, 4))
    if sparse:
        X = sp.csr_matrix(X)
    l1 = accel_kernels._row_norms(X, True)
    l2 = row_sq_norms(X, reuse=False)
    assert numba.typeof(l1) == numba.typeof(l2)
    np.testing.assert_allclose(
        l1, np.abs(np.asarray(sp.csr_matrix(X).todense())).sum(1)
    )
