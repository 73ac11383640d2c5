"""The dense row loops by chunks: the same sums as over all rows, bit for bit.

The in-fit centring, the column balance and the row scale read ``X`` chunk
by chunk (``_centring.row_chunks``) and divide the fit's own copy in place,
so a fit never holds more than one float64 copy of ``X`` (a user trial:
1,000,000 x 20 rows, 981 MB at peak against scikit-learn's 403). These
tests pin the NumPy twins (the one-shot expressions of earlier versions)
and that the caller's array is never written.
"""

import zlib

import numpy as np
import pytest

from dpestim import LogisticRegression, MinimaxLogisticRegression, Ridge
from dpestim.preprocessing import _balance, _centring
from dpestim.utils._rows import forget_row_norms, row_sq_norms


def _seed(name):
    return zlib.crc32(name.encode())


def _rows(n, d, name, order="C"):
    rng = np.random.default_rng(_seed(name))
    X = rng.standard_normal((n, d)) * rng.lognormal(0.0, 2.0, d)
    X[3, 0] = np.inf  # a row whose norm is not finite adds nothing
    return np.asarray(X, order=order)


def _twin_clipped(D, radius, ord, divisor=None):
    """The one-shot expressions the chunked loops replace."""
    D = np.asarray(D, dtype=np.float64)
    if divisor is not None:
        D = np.divide(D, divisor, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        l2 = np.sqrt(np.einsum("ij,ij->i", D, D))
        norms = np.abs(D).sum(axis=1) if ord == 1 else l2
    factors = _balance.clip_factors(norms, radius, D.shape[1])
    keep = factors > 0
    clipped = D[keep] * factors[keep, None]
    return norms, clipped.sum(axis=0), np.einsum("ij,ij->j", clipped, clipped)


@pytest.mark.parametrize("d", [1, 2, 7, 40])
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_chunked_sums_equal_the_one_shot_sums(monkeypatch, d, order, dtype):
    monkeypatch.setattr(_centring, "CHUNK_VALUES", 3 * d + 1)  # many chunks
    X = _rows(1_000, d, f"chunks-{d}-{order}", order).astype(dtype)
    divisor = np.linspace(0.5, 3.0, d)
    for ord in (1, 2):
        norms, total, squares = _twin_clipped(X, 2.0, ord)
        np.testing.assert_array_equal(_centring._row_norms(X, ord), norms)
        np.testing.assert_array_equal(
            _centring._clipped_sum(X, 2.0, ord=ord, norms=norms), total
        )
        np.testing.assert_array_equal(
            _balance._clipped_squares(X, 2.0, ord, norms), squares
        )
    norms, _, squares = _twin_clipped(X, 2.0, 2, divisor)
    np.testing.assert_array_equal(_balance._norms(X, 2, divisor), norms)
    np.testing.assert_array_equal(
        _balance._clipped_squares(X, 2.0, 2, None, divisor), squares
    )


def test_row_chunks_cover_every_row_once(monkeypatch):
    monkeypatch.setattr(_centring, "CHUNK_VALUES", 10)
    X = np.zeros((23, 3))
    seen = np.concatenate([np.arange(23)[s] for s in _centring.row_chunks(X)])
    np.testing.assert_array_equal(seen, np.arange(23))
    # one column or F-ordered rows: one chunk (NumPy sums those pairwise)
    assert len(_centring.row_chunks(X[:, :1].copy())) == 1
    assert len(_centring.row_chunks(np.asfortranarray(X))) == 1


def _offsets_and_a_raw_column(n, name):
    rng = np.random.default_rng(_seed(name))
    X = rng.standard_normal((n, 6))
    X[:, 0] += 40.0  # an offset: the in-fit centring runs
    X[:, 1] = X[:, 1] * 5e3 + 1e5  # a raw column: the balance scales it
    y = (X[:, 2] + 0.001 * (X[:, 1] - 1e5) > 0).astype(int)
    return X, y


@pytest.mark.parametrize(
    "make",
    [
        lambda: LogisticRegression(epsilon=2.0, classes=[0, 1], random_state=0),
        lambda: Ridge(epsilon=2.0, random_state=0),
        lambda: MinimaxLogisticRegression(
            epsilon=2.0, classes=[0, 1], groups=[0, 1], random_state=0
        ),
    ],
    ids=["LogisticRegression", "Ridge", "MinimaxLogisticRegression"],
)
def test_fits_never_write_the_callers_rows(make, monkeypatch):
    """The fit's copy (centred, balanced) is divided in place; the caller's
    ``X`` is read only (made read-only here: any write raises)."""
    monkeypatch.setattr(_centring, "CHUNK_VALUES", 4_096)
    X, y = _offsets_and_a_raw_column(30_000, "read-only")
    before = X.copy()
    X.flags.writeable = False
    est = make()
    kw = {"sensitive_features": np.arange(len(y)) % 2} if "Minimax" in repr(est) else {}
    target = X[:, 2] * 3.0 if isinstance(est, Ridge) else y
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, target, **kw)
    np.testing.assert_array_equal(X, before)
    assert np.isfinite(est.coef_).all()


def test_forget_row_norms_drops_the_remembered_norms():
    X = np.ones((5, 2))
    first = row_sq_norms(X)
    assert row_sq_norms(X) is first  # remembered for this very object
    forget_row_norms(X)
    X *= 2.0
    np.testing.assert_array_equal(row_sq_norms(X), np.full(5, 8.0))
