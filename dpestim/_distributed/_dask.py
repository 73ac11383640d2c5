"""The gradient step on a Dask cluster: blocks stay on the workers.

Each worker holds its row blocks of X (in memory, or as Dask graphs re-read
from their store at every step) and the matching encoded targets for the
whole fit, in a :class:`BlockActor`. A step is one call per worker with the
current weights: each worker returns the clipped-gradient sum of the step's
Poisson sample in each of its blocks, the driver adds them in the global
block order, draws the noise once from its own generator and takes the
step. No task graph is built and nothing is scheduled per step: the calls
go over a direct socket to a long-running task on each worker
(:mod:`._channel`; one small message each way per worker and step), or to
a Dask actor when the cluster's comms are encrypted, when that socket
cannot be opened, or when the blocks are streamed from their store
(``persist=False``, where a step is a pass over the store).

An array whose graph carries in-memory data (``dask.array.from_array`` of a
NumPy array) is not shipped inside task graphs: its blocks are computed in
the driver, where the data already is, and scattered once to their workers.
"""

import contextlib
import os
import uuid

import numpy as np

from ..utils._rows import row_sq_norms
from ._blocks import block_problem, block_sum
from ._channel import DirectLink, open_channel, serve

#: Bytes of in-memory data in a Dask graph above which its blocks are
#: computed in the driver and scattered (see :func:`_embedded_bytes`).
_EMBEDDED_BYTES = 2**20

__all__ = ["BlockActor", "DaskBlocks"]


class _Graph:
    """Opaque holder, so that Dask does not compute a block when shipping it."""

    def __init__(self, array):
        self.array = array

    def load(self):
        return np.asarray(self.array.compute(scheduler="sync"))


class BlockActor:
    """Row blocks of X living on one Dask worker for the duration of a fit.

    Parameters
    ----------
    starts : list of int
        Global index of the first row of each block.
    *blocks : ndarrays, or :class:`_Graph` when streaming
        The blocks, in the order of ``starts``.
    """

    def __init__(self, starts, *blocks):
        self.starts = list(starts)
        self.stream = bool(blocks) and isinstance(blocks[0], _Graph)
        self.problems = None
        if self.stream:
            self.blocks = list(blocks)
            self.norms = [None] * len(blocks)
        else:
            # float32 stays float32 (the in-memory kernels' float32 path,
            # half the memory); anything else is read as float64. The norms
            # (float64) are computed once and serve validation too.
            self.problems, self.blocks, self.norms = [], [], []
            for B in blocks:
                B = np.asarray(B)
                problem = block_problem(B, kind_only=True)
                if problem is None:
                    dtype = np.float32 if B.dtype == np.float32 else np.float64
                    B = np.ascontiguousarray(B, dtype=dtype)
                    self.norms.append(row_sq_norms(B, reuse=False))
                    problem = block_problem(B, sq=self.norms[-1])
                else:
                    self.norms.append(None)
                self.problems.append(problem)
                self.blocks.append(B)
        self.Y = None
        size = max((self._rows(i) for i in range(len(blocks))), default=0)
        self.local = np.empty(size, dtype=np.int64)

    def _rows(self, i):
        if self.stream:
            return int(self.blocks[i].array.shape[0])
        return self.blocks[i].shape[0]

    def validate(self):
        """Problems found in the blocks (messages naming no row or value)."""
        if not self.stream:
            return [p for p in self.problems if p is not None]
        problems = []
        for B in self.blocks:
            problem = block_problem(B.load() if self.stream else B)
            if problem is not None:
                problems.append(problem)
        return problems

    def set_targets(self, Ys):
        """Keep the encoded targets of every block (``None`` releases them)."""
        self.Y = None if Ys is None else [np.ascontiguousarray(Y) for Y in Ys]

    def clipped_sums(self, key, step, q, W, b, plan):
        """Per-block clipped-gradient sums of the step's Poisson sample.

        Returns
        -------
        G : ndarray of shape (n_blocks, K, d)
        g0 : ndarray of shape (n_blocks, K)
        """
        K, d = W.shape
        G = np.empty((len(self.blocks), K, d))
        g0 = np.empty((len(self.blocks), K))
        for i, (B, start) in enumerate(zip(self.blocks, self.starts)):
            if self.stream:

                def rows(sel, B=B):
                    X = np.ascontiguousarray(B.load(), dtype=np.float64)
                    return X if sel is None else np.ascontiguousarray(X[sel])

                X = rows
            else:
                X = B
            G[i], g0[i] = block_sum(
                X, self.Y[i], self.norms[i], start, self.local, key, step, q, W, b,
                plan,
            )  # fmt: skip
        return G, g0


class DaskBlocks:
    """A row-chunked Dask array fitted on a ``dask.distributed`` cluster.

    Parameters
    ----------
    X : dask.array.Array of shape (n_samples, n_features)
        Known chunk sizes; the columns are gathered into one chunk.
    client : distributed.Client
    persist : bool, default=True
        ``True``: each worker loads its blocks into memory once. ``False``:
        each worker re-reads its blocks from their source (e.g.
        ``dask.array.from_zarr``) at every step, one block at a time, so that
        a worker's memory holds one block, not its share of X.
    """

    _dpestim_blocked = True

    def __init__(self, X, client, persist=True):
        self.X = X.rechunk({1: -1}) if X.numblocks[1] > 1 else X
        self.client = client
        self.persist = bool(persist)
        self.shape = tuple(int(s) for s in X.shape)
        sizes = self.X.chunks[0]
        self.starts = [int(s) for s in np.concatenate([[0], np.cumsum(sizes)[:-1]])]
        self.stops = [s + int(c) for s, c in zip(self.starts, sizes)]
        self.actors = None
        self._tasks = []
        #: ``"direct"`` (sockets to long-running worker tasks, when the comms
        #: are plain TCP or in-process) or ``"actor"``; set to the one used.
        self.channel = "direct"

    def _start_actors(self):
        client = self.client
        # one scheduler call: the client's cached ``scheduler_info()`` is
        # overwritten by a periodic refresh that carries no per-worker entries
        # (distributed 2026.8), so it may read as "no workers" under load
        workers = sorted(client.nthreads())
        if not workers:
            raise RuntimeError("The Dask cluster has no workers.")
        n_blocks = len(self.starts)
        owner = [workers[i * len(workers) // n_blocks] for i in range(n_blocks)]
        blocks = self._blocks(owner)
        mine = {w: [i for i in range(n_blocks) if owner[i] == w] for w in workers}
        mine = {w: m for w, m in mine.items() if m}
        self.actors, self.layout, self._tasks = None, list(mine.values()), []
        args = {
            w: ([self.starts[i] for i in m], *[blocks[i] for i in m])
            for w, m in mine.items()
        }
        # streamed blocks (persist=False from a store) keep actors, the
        # issue-17 path: a step there reads the store (seconds), so the round
        # trip does not count (one A/B measured less worker CPU per epoch
        # through actors, a rerun did not confirm it: BENCHMARKS.md)
        streamed = bool(blocks) and isinstance(blocks[0], _Graph)
        if self.channel == "direct" and not streamed and _plain_comms(workers):
            with contextlib.suppress(Exception):
                self.actors = self._start_direct(args)
        if self.actors is None:
            self.channel = "actor"
            self.actors = [
                client.submit(
                    BlockActor, *args[w], actor=True, workers=[w],
                    allow_other_workers=False, pure=False,
                ).result()
                for w in mine
            ]  # fmt: skip
        self._keep = blocks  # the chunk futures live as long as the fit

    def _start_direct(self, args):
        """One :func:`serve` task per worker and a :class:`DirectLink` to each."""
        client, links = self.client, []
        token, secret = uuid.uuid4().hex, os.urandom(32)
        opened = {
            w: client.submit(
                open_channel, token, workers=[w], allow_other_workers=False, pure=False
            )
            for w in args
        }
        addresses = {w: f.result() for w, f in opened.items()}
        try:
            self._tasks = [
                client.submit(
                    serve, token, secret, BlockActor, *args[w], workers=[w],
                    allow_other_workers=False, pure=False,
                )
                for w in args
            ]  # fmt: skip
            for w, task in zip(args, self._tasks):
                links.append(DirectLink(tuple(addresses[w]), secret, task))
        except BaseException:
            for link in links:
                link.close()
            for task in self._tasks:
                task.cancel()
            self._tasks = []
            raise
        return links

    def _blocks(self, owner):
        """The blocks as worker-held futures (or :class:`_Graph` holders)."""
        client, n_blocks = self.client, len(self.starts)
        if _embedded_bytes(self.X) >= _EMBEDDED_BYTES:
            # the graph carries the data (from_array of an in-memory array):
            # compute the blocks here and send them once, straight to their
            # worker (one scatter per worker)
            futures, graph = [None] * n_blocks, dict(self.X.__dask_graph__())
            for w in dict.fromkeys(owner):
                mine = [i for i in range(n_blocks) if owner[i] == w]
                data = [_local_block(self.X, graph, i) for i in mine]
                sent = client.scatter(data, workers=[w], hash=False, direct=True)
                for i, future in zip(mine, sent):
                    futures[i] = future
            return futures
        if self.persist:
            delayed = self.X.to_delayed().ravel()
            return [
                client.compute(delayed[i], workers=[owner[i]], allow_other_workers=True)
                for i in range(n_blocks)
            ]
        return [_Graph(self.X.blocks[i]) for i in range(n_blocks)]

    def validate(self):
        """Load the blocks onto the workers and check them all (before noise)."""
        if self.actors is None:
            self._start_actors()
        for found in _results(lambda a: a.validate(), self.actors, "validating X"):
            if found:
                self.close()
                raise ValueError(found[0])

    def close(self):
        """Stop the workers' tasks (or actors) and release the blocks."""
        direct = self.channel == "direct" and self.actors is not None
        stopped = [
            task for link, task in zip(self.actors or (), self._tasks) if link.close()
        ] if direct else []  # fmt: skip
        if stopped:  # let the tasks return, rather than cancel them running
            from distributed import wait

            with contextlib.suppress(Exception):
                wait(stopped, timeout=5)
        self.actors = None
        self._keep = None
        self._tasks = []

    @contextlib.contextmanager
    def gradient_oracle(self, Y, plan):
        """Yield ``clipped_sum(key, step, q, W, b) -> (G, g0)`` over the cluster."""
        if self.actors is None:
            self.validate()
        targets = {
            id(a): [Y[self.starts[i] : self.stops[i]] for i in mine]
            for a, mine in zip(self.actors, self.layout)
        }
        _results(lambda a: a.set_targets(targets[id(a)]), self.actors, "sending y")
        n_blocks = len(self.starts)

        def clipped_sum(key, step, q, W, b):
            sums = _results(
                lambda a: a.clipped_sums(key, step, q, W, b, plan),
                self.actors,
                f"computing step {step}",
            )
            G = np.empty((n_blocks,) + W.shape)
            g0 = np.empty((n_blocks,) + b.shape)
            for (Gs, gs), mine in zip(sums, self.layout):
                G[mine], g0[mine] = Gs, gs
            # fixed reduction order: the global block order, whatever the workers
            return G.sum(axis=0), g0.sum(axis=0)

        try:
            yield clipped_sum
        finally:
            self.close()


def _results(call, actors, what):
    """``call(actor)`` on every actor at once, then all the results.

    A lost worker (or any failure) aborts the fit with a clear error before
    the driver uses any partial sum of the step: a step is computed from
    every block or not taken at all.
    """
    try:
        return [f.result() for f in [call(a) for a in actors]]
    except Exception as exc:  # a worker died, a comm closed, ...
        raise RuntimeError(
            f"A Dask worker failed while {what} ({type(exc).__name__}: {exc}). "
            "The private fit was aborted before applying this step: no step was "
            "applied with a partial sum and no model was released. Fit again "
            "(the same random_state reproduces the same run)."
        ) from exc


def _plain_comms(workers):
    """Whether every worker address is plain TCP or in-process (no TLS)."""
    return all(w.split("://", 1)[0] in ("tcp", "inproc") for w in workers)


def _local_block(X, graph, i):
    """Row block ``i`` of ``X`` (its task graph ``graph``), in this process.

    The array held in the graph itself when the block is one (no copy, no
    scheduler), else the block computed with the synchronous scheduler.
    """
    from dask._task_spec import DataNode

    value = graph.get((X.name, i, 0))
    if isinstance(value, DataNode):
        value = value.value
    if isinstance(value, np.ndarray) and value.shape == (X.chunks[0][i], X.shape[1]):
        return value
    return np.asarray(X.blocks[i].compute(scheduler="sync"))


def _embedded_bytes(X):
    """Bytes of NumPy data held in the task graph of Dask array ``X``."""
    from dask._task_spec import DataNode

    total = 0
    for value in dict(X.__dask_graph__()).values():
        if isinstance(value, DataNode):
            value = value.value
        if isinstance(value, np.ndarray):
            total += value.nbytes
    return total
