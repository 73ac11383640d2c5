"""Out-of-core fitting on one machine: memory maps and zarr, streamed in blocks.

The blocked fit is the in-memory algorithm: the same ``random_state`` gives
the same model for any block size, up to floating-point summation order.
"""

import tracemalloc
import zlib

import numpy as np
import pytest

from dpestim import LinearSVC, LogisticRegression, Ridge
from dpestim.scaling import BlockedArray
from dpestim.solvers import DPGD, DPNAG, SOLVERS

pytestmark = pytest.mark.filterwarnings("ignore::dpestim.PrivacyBudgetWarning")


def _data(n=3000, d=6, seed="ooc"):
    rng = np.random.default_rng(zlib.crc32(seed.encode()))
    X = rng.normal(size=(n, d))
    y = (X[:, 0] - X[:, 1] + 0.5 * rng.normal(size=n) > 0).astype(int)
    return X, y


def _memmap(tmp_path, X, name="X.npy"):
    np.save(tmp_path / name, X)
    return np.load(tmp_path / name, mmap_mode="r")


CASES = [
    (LogisticRegression, "dp-sgd", {"classes": [0, 1]}),
    (LogisticRegression, "dp-lssgd", {"classes": [0, 1]}),
    (LogisticRegression, "adp-adagrad", {"classes": [0, 1]}),
    (LogisticRegression, "adp-sgd", {"classes": [0, 1]}),
    (LinearSVC, "dp-sgd", {"classes": [0, 1]}),
    (Ridge, DPGD(noise="gaussian"), {}),
    (Ridge, DPNAG(noise="gaussian", batch_size=300), {}),
]


@pytest.mark.parametrize("est,solver,kw", CASES)
def test_memmap_fit_equals_in_memory_fit_for_three_block_sizes(
    tmp_path, est, solver, kw
):
    X, y = _data()
    target = y if est is not Ridge else X @ np.arange(6.0)
    params = dict(
        solver=solver, random_state=7, max_iter=3, batch_size=200, epsilon=None,
        noise_multiplier=1.0, **kw,
    )  # fmt: skip
    ref = est(**params).fit(X, target)
    Xm = _memmap(tmp_path, X)
    for block in (250, 1111, 5000):
        m = est(**params).fit(BlockedArray(Xm, block_size=block), target)
        np.testing.assert_allclose(m.coef_, ref.coef_, rtol=0, atol=1e-10)
        np.testing.assert_allclose(m.intercept_, ref.intercept_, rtol=0, atol=1e-10)
        assert m.dp_event_ == ref.dp_event_ and m.epsilon_ == ref.epsilon_
        assert m.n_features_in_ == X.shape[1]


def test_default_block_of_a_zarr_array_is_whole_chunks(tmp_path):
    # a block cutting a chunk would make every block decode that chunk again
    zarr = pytest.importorskip("zarr")
    from dpestim._distributed._local import LocalBlocks

    z = zarr.create_array(
        tmp_path / "c.zarr", shape=(50, 6), chunks=(700, 6), dtype="f8"
    )
    big = zarr.create_array(
        tmp_path / "b.zarr", shape=(50, 6), chunks=(3_000_000, 6), dtype="f8"
    )
    assert LocalBlocks(z).block_size % 700 == 0
    assert LocalBlocks(big).block_size == 3_000_000
    assert LocalBlocks(z, block_size=123).block_size == 123  # the user's wins


def test_zarr_array_is_streamed_and_equals_in_memory_fit(tmp_path):
    zarr = pytest.importorskip("zarr")
    X, y = _data(seed="zarr")
    z = zarr.create_array(
        tmp_path / "X.zarr", shape=X.shape, chunks=(700, 6), dtype="f8"
    )
    z[:] = X
    # feature_scale=None: blocked X is not rescaled (its row norms would take
    # another pass over the blocks), in-memory X would be by default
    params = dict(
        classes=[0, 1], random_state=3, max_iter=2, batch_size=150, feature_scale=None
    )
    ref = LogisticRegression(utility_check=None, **params).fit(X, y)
    m = LogisticRegression(utility_check=None, **params).fit(
        zarr.open_array(tmp_path / "X.zarr"), y
    )
    np.testing.assert_allclose(m.coef_, ref.coef_, rtol=0, atol=1e-10)
    # float32 on disk is read block by block as float64
    m32 = LogisticRegression(utility_check=None, **params).fit(
        BlockedArray(
            _memmap(tmp_path, X.astype(np.float32), "X32.npy"), block_size=900
        ),
        y,
    )
    # (in memory, float32 X is computed in float32: the reference is the
    # same float32 values in float64)
    X32_as_64 = X.astype(np.float32).astype(np.float64)
    ref32 = LogisticRegression(utility_check=None, **params).fit(X32_as_64, y)
    assert m32.coef_.dtype == np.float32  # X's dtype; values float64's, rounded
    np.testing.assert_allclose(m32.coef_, ref32.coef_, rtol=1e-7, atol=1e-10)


def _peak_bytes(fit):
    tracemalloc.start()
    try:
        fit()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_peak_memory_is_bounded_by_the_block_size(tmp_path):
    """Full-batch fit on a float32 memory map: peak allocations follow the block.

    Each block is read and converted to float64 on its own; X (8 MB as
    float32, 16 MB as float64) is never in memory as a whole.
    """
    rng = np.random.default_rng(zlib.crc32(b"peak"))
    n, d = 40_000, 50
    X = rng.normal(size=(n, d)).astype(np.float32)
    y = X[:, 0].astype(np.float64)
    Xm = _memmap(tmp_path, X)
    del X
    solver = DPGD(noise="gaussian")
    params = dict(solver=solver, max_iter=2, epsilon=None, noise_multiplier=1.0)

    def fit(block):
        return lambda: Ridge(**params).fit(BlockedArray(Xm, block_size=block), y)

    fit(500)()  # warm-up: numba's first compilation allocates far more than X
    small, large = _peak_bytes(fit(500)), _peak_bytes(fit(8000))
    x_bytes = n * d * 8
    # a few float64 copies of one block, plus O(n) vectors (y, encoded targets)
    assert small < 4 * 500 * d * 8 + 6 * n * 8 < x_bytes / 3
    assert small + 0.8 * 8000 * d * 8 < large < 4 * 8000 * d * 8 + 6 * n * 8
    in_memory = _peak_bytes(lambda: Ridge(**params).fit(np.asarray(Xm), y))
    # in memory, the read-only float32 map is copied whole (as float32: DPGD
    # takes float32 X without a float64 copy)
    assert in_memory > x_bytes / 2 > 2 * small


def test_nan_in_a_late_block_raises_before_any_noise(tmp_path):
    X, y = _data(seed="nan")
    X[-3, 2] = np.nan
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    est = LogisticRegression(classes=[0, 1], random_state=rng)
    with pytest.raises(ValueError, match="NaN"):
        est.fit(BlockedArray(_memmap(tmp_path, X), block_size=500), y)
    assert rng.bit_generator.state == state  # nothing drawn: no noise released
    X[-3, 2] = 1e200  # squared norm overflows
    with pytest.raises(ValueError, match="overflows"):
        est.fit(BlockedArray(_memmap(tmp_path, X, "big.npy"), block_size=500), y)
    assert rng.bit_generator.state == state


def test_unsupported_solvers_raise_naming_the_supported_ones(tmp_path):
    X, y = _data(seed="unsupported")
    Xb = BlockedArray(_memmap(tmp_path, X))
    for solver in ("dp-scd", "dp-gd", "dp-smd-sco"):
        if solver not in SOLVERS:
            continue
        with pytest.raises(ValueError, match="Supported: dp-sgd.*noise='gaussian'"):
            LogisticRegression(classes=[0, 1], solver=solver).fit(Xb, y)


def test_bad_arguments_raise_clear_errors(tmp_path):
    X, y = _data(seed="bad")
    with pytest.raises(ValueError, match="block_size"):
        BlockedArray(X, block_size=0)
    with pytest.raises(ValueError, match="persist"):
        BlockedArray(X, persist="yes")
    with pytest.raises(ValueError, match="records"):
        LogisticRegression(classes=[0, 1]).fit(
            BlockedArray(_memmap(tmp_path, X)), y[:-1]
        )
    with pytest.raises(ValueError, match="2-d"):
        LogisticRegression(classes=[0, 1]).fit(BlockedArray(X[:, 0]), y)


def test_plain_memmap_is_fitted_in_memory_as_before(tmp_path):
    """scikit-learn and joblib pass memory maps themselves: no change for them."""
    X, y = _data(seed="plain")
    params = dict(classes=[0, 1], solver="dp-scd", random_state=0, max_iter=1)
    a = LogisticRegression(**params).fit(_memmap(tmp_path, X), y)
    b = LogisticRegression(**params).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)


def test_predict_and_score_take_the_blocked_wrapper(tmp_path):
    """BlockedArray marks X for block-wise fitting; predict, predict_proba
    and score on the same wrapper read the wrapped array (a TypeError
    before)."""
    X, y = _data()
    Xm = _memmap(tmp_path, X)
    clf = LogisticRegression(
        classes=[0, 1], feature_scale=None, utility_check=None, random_state=0
    ).fit(BlockedArray(Xm, block_size=1000), y)
    np.testing.assert_array_equal(clf.predict(BlockedArray(Xm)), clf.predict(X))
    assert clf.predict_proba(BlockedArray(Xm)).shape == (len(y), 2)
    assert clf.score(BlockedArray(Xm), y) == clf.score(X, y)
