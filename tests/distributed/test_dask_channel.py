"""How a Dask fit talks to its workers: a direct channel, data sent once.

The steps go over a direct socket to a long-running task on each worker
(no task graph and no scheduling per step); an actor is the fallback, and
both give the in-memory fit. An in-memory array wrapped by
``dask.array.from_array`` is scattered to the workers once, so Dask does not
warn about large graphs.
"""

import warnings
import zlib

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
pytest.importorskip("distributed")

import dpestim._distributed._dask as dask_blocks  # noqa: E402
from dpestim import LogisticRegression  # noqa: E402
from dpestim._distributed._channel import DirectLink  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::dpestim.PrivacyBudgetWarning")


def _data(n=2000, d=5, seed="channel", dtype=np.float64):
    rng = np.random.default_rng(zlib.crc32(seed.encode()))
    X = rng.normal(size=(n, d)).astype(dtype)
    y = (X[:, 0] - X[:, 1] + 0.3 * rng.normal(size=n) > 0).astype(int)
    return X, y


KW = dict(
    classes=[0, 1], random_state=5, epsilon=None, noise_multiplier=0.7,
    max_iter=3, batch_size=200,
)  # fmt: skip


@pytest.mark.parametrize("channel", ["direct", "actor"])
def test_both_channels_give_the_in_memory_fit(client, monkeypatch, channel):
    X, y = _data()
    used = []
    start = dask_blocks.DaskBlocks._start_actors

    def spy(self):
        self.channel = channel
        start(self)
        used.append((self.channel, type(self.actors[0])))

    monkeypatch.setattr(dask_blocks.DaskBlocks, "_start_actors", spy)
    ref = LogisticRegression(**KW).fit(X, y)
    m = LogisticRegression(**KW).fit(da.from_array(X, chunks=(700, 5)), y)
    np.testing.assert_allclose(m.coef_, ref.coef_, rtol=0, atol=1e-10)
    np.testing.assert_allclose(m.intercept_, ref.intercept_, rtol=0, atol=1e-10)
    assert used[0][0] == channel
    assert (used[0][1] is DirectLink) == (channel == "direct")


def test_channel_that_cannot_connect_falls_back_to_actors(client, monkeypatch):
    X, y = _data(seed="fallback")

    def refuse(*args, **kwargs):
        raise ConnectionRefusedError("firewalled")

    monkeypatch.setattr(dask_blocks, "DirectLink", refuse)
    ref = LogisticRegression(**KW).fit(X, y)
    blocks = dask_blocks.DaskBlocks(da.from_array(X, chunks=(500, 5)), client)
    blocks.validate()
    assert blocks.channel == "actor"
    blocks.close()
    m = LogisticRegression(**KW).fit(da.from_array(X, chunks=(500, 5)), y)
    np.testing.assert_allclose(m.coef_, ref.coef_, rtol=0, atol=1e-10)


def test_tls_addresses_keep_actors():
    assert dask_blocks._plain_comms(["tcp://10.0.0.1:1", "inproc://1.2.3.4/5/6"])
    assert not dask_blocks._plain_comms(["tcp://10.0.0.1:1", "tls://10.0.0.2:1"])


def test_from_array_of_a_large_array_sends_no_large_graph(client):
    """12 MB in memory (above Dask's 10 MB warning): scattered, not in a graph.

    The labels' graph (1.2 MB of int64) is computed in the driver.
    """
    X, y = _data(n=150_000, d=10, seed="large")
    Xd = da.from_array(X, chunks=(40_000, 10))
    assert dask_blocks._embedded_bytes(Xd) == X.nbytes
    graph = dict(Xd.__dask_graph__())
    block = dask_blocks._local_block(Xd, graph, 1)
    assert np.shares_memory(block, graph[(Xd.name, 1, 0)])  # no copy
    kw = dict(KW, batch_size=20_000, max_iter=1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m = LogisticRegression(**kw).fit(Xd, da.from_array(y, chunks=40_000))
    assert not [w for w in caught if "large graph" in str(w.message)]
    ref = LogisticRegression(**kw).fit(X, y)
    np.testing.assert_allclose(m.coef_, ref.coef_, rtol=0, atol=1e-10)


def test_float32_blocks_stay_float32_and_match_the_in_memory_fit(client):
    X, y = _data(seed="f32", dtype=np.float32)
    ref = LogisticRegression(**KW).fit(X, y)  # the float32 kernel in memory
    m = LogisticRegression(**KW).fit(da.from_array(X, chunks=(700, 5)), y)
    assert m.coef_.dtype == np.float32
    # float32 products summed in other groups of rows: float32 rounding only
    np.testing.assert_allclose(m.coef_, ref.coef_, rtol=0, atol=1e-5)


def test_complex_blocks_are_refused_before_any_noise(client):
    X, y = _data(seed="complex")
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    with pytest.raises(ValueError, match="real numbers"):
        LogisticRegression(classes=[0, 1], random_state=rng).fit(
            da.from_array(X + 1j, chunks=(500, 5)), y
        )
    assert rng.bit_generator.state == state


@pytest.mark.parametrize("persist", [True, False])
def test_streamed_blocks_keep_actors(client, persist):
    """persist=False streams the blocks from their graph: actors, else direct."""
    X, _ = _data(seed="stream")  # 80 kB: below the scatter threshold
    blocks = dask_blocks.DaskBlocks(da.from_array(X, chunks=(500, 5)), client, persist)
    blocks.validate()
    assert blocks.channel == ("direct" if persist else "actor")
    blocks.close()
