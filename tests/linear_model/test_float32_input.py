"""float32 input without a float64 copy; row norms computed once per fit."""

import zlib

import numpy as np
import pytest
import scipy.sparse as sp

from dpestim import LogisticRegression, Ridge
from dpestim.solvers import SOLVERS
from dpestim.utils import _rows

FLOAT32_SOLVERS = sorted(n for n, c in SOLVERS.items() if c.accepts_float32)


def _data(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(300, 6))
    y = (X[:, 0] - X[:, 1] > 0).astype(int)
    return X.astype(np.float32), y


@pytest.mark.parametrize("solver", FLOAT32_SOLVERS)
@pytest.mark.parametrize("sparse", [False, True])
def test_float32_is_used_as_is_and_matches_float64(solver, sparse, monkeypatch):
    X32, y = _data(zlib.crc32(solver.encode()))
    X64 = X32.astype(np.float64)  # the same values
    make = sp.csr_matrix if sparse else np.asarray
    seen = []
    cls = SOLVERS[solver]
    original = cls.solve

    def spy(self, X, *args, **kwargs):
        seen.append(X.dtype)
        return original(self, X, *args, **kwargs)

    monkeypatch.setattr(cls, "solve", spy)
    # feature_scale=None: X / s would round to float32 in the float32 fit only
    # (rescaled formats: tests/linear_model/test_private_scales.py)
    params = dict(
        solver=solver, classes=[0, 1], random_state=0, max_iter=3, feature_scale=None
    )
    a = LogisticRegression(**params).fit(make(X32), y)
    b = LogisticRegression(**params).fit(make(X64), y)
    assert seen == [np.float32, np.float64]  # no float64 copy of float32 X
    assert a.coef_.dtype == np.float32 and a.intercept_.dtype == np.float32
    assert b.coef_.dtype == np.float64
    if sparse:  # CSR float32 is computed in float64 arithmetic
        np.testing.assert_allclose(a.coef_, b.coef_.astype(np.float32), rtol=1e-6)
    else:  # dense float32 in float32 arithmetic (sgemm): float32 accuracy
        scale = np.abs(b.coef_).max()
        np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-4, atol=1e-5 * scale)
    assert a.epsilon_ == b.epsilon_


def test_other_solvers_convert_float32_to_float64(monkeypatch):
    X32, y = _data(1)
    cls = SOLVERS["dp-scd"]
    original, seen = cls.solve, []

    def spy(self, X, *args, **kwargs):
        seen.append(X.dtype)
        return original(self, X, *args, **kwargs)

    monkeypatch.setattr(cls, "solve", spy)
    est = LogisticRegression(solver="dp-scd", classes=[0, 1], random_state=0)
    est.fit(X32, y)
    assert seen == [np.float64]
    assert est.coef_.dtype == np.float64  # the dtype it was fitted in


def test_ridge_float32_coefficients():
    X32, y = _data(2)
    est = Ridge(random_state=0).fit(X32, y.astype(np.float32))
    assert est.coef_.dtype == np.float32


def test_row_norms_are_computed_once_per_fit(monkeypatch):
    calls = []
    compute = _rows._compute

    def counting(X):
        calls.append(X.shape)
        return compute(X)

    monkeypatch.setattr(_rows, "_compute", counting)
    X32, y = _data(3)
    LogisticRegression(classes=[0, 1], random_state=0, feature_scale=None).fit(X32, y)
    assert len(calls) == 1
    # with the private row scale: once for X, once for the rescaled X / s
    calls.clear()
    est = LogisticRegression(classes=[0, 1], random_state=0).fit(X32, y)
    assert est.feature_scale_ != 1.0 and len(calls) == 2


@pytest.mark.parametrize("bad,match", [(np.nan, "NaN"), (np.inf, "infinity")])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_non_finite_x_is_still_rejected(bad, match, dtype):
    X, y = _data(4)
    X = X.astype(dtype)
    X[5, 2] = bad
    with pytest.raises(ValueError, match=match):
        LogisticRegression(classes=[0, 1]).fit(X, y)
    with pytest.raises(ValueError, match=match):
        LogisticRegression(classes=[0, 1]).fit(sp.csr_matrix(X), y)


def test_overflowing_rows_are_still_rejected():
    X, y = _data(5)
    X = X.astype(np.float64)
    X[0, :] = 1e300
    with pytest.raises(ValueError, match="overflows"):
        LogisticRegression(classes=[0, 1]).fit(X, y)


def test_row_norm_cache_never_serves_another_array():
    a = np.ones((3, 2))
    first = _rows.row_sq_norms(a)
    b = np.full((3, 2), 2.0)
    assert np.array_equal(_rows.row_sq_norms(b), [8.0, 8.0, 8.0])
    assert np.array_equal(first, [2.0, 2.0, 2.0])
    assert not first.flags.writeable


def test_an_array_changed_in_place_between_fits_is_read_again():
    X, y = _data(6)
    X = X.astype(np.float64)
    est = LogisticRegression(classes=[0, 1], random_state=0).fit(X, y)
    X[3, 1] = np.nan  # same object, new content
    with pytest.raises(ValueError, match="NaN"):
        est.fit(X, y)


def test_discrete_laplace_mode_gets_float64(monkeypatch):
    """The exact mode's sensitivity bound is derived for float64 sums: float32
    X is converted for it, and kept as is for the continuous noises."""
    from dpestim.solvers import DPGD

    X32, y = _data(2)
    seen = []
    original = DPGD.solve

    def spy(self, X, *args, **kwargs):
        seen.append(X.dtype)
        return original(self, X, *args, **kwargs)

    monkeypatch.setattr(DPGD, "solve", spy)
    for noise in ("discrete_laplace", "laplace", "gaussian"):
        est = LogisticRegression(solver=DPGD(noise=noise), classes=[0, 1], max_iter=2)
        est.set_params(random_state=0).fit(X32, y)
    assert seen == [np.float64, np.float32, np.float32]
