"""Recognise blocked inputs and prepare them for a fit (no Dask import unless used)."""

import sys

import numpy as np

from ._local import LocalBlocks

__all__ = ["BlockedArray", "as_blocked", "check_blocked_solver", "prepare_blocked"]


class BlockedArray:
    """Mark ``X`` for block-wise fitting and choose how it is read.

    Passing a Dask array or DataFrame or a zarr array to ``fit`` already
    takes the blocked path with default settings; wrap it to set them. A
    ``numpy.memmap`` takes it only when wrapped: scikit-learn and joblib
    hand memory maps to estimators on their own, and those are fitted in
    memory as before. With ``batch_size="auto"``, the DP-SGD family takes at
    most 200 larger steps on blocked data (each step is a round trip to the
    workers or a pass over the blocks; see the "Scaling out" guide).

    Parameters
    ----------
    X : dask array or DataFrame, numpy.memmap, zarr array, or 2-d array-like
        Rows are records.
    block_size : int or None, default=None
        Rows per block. Memory-mapped / zarr / array-like X (and a Dask
        array without a distributed client): at most this many rows are in
        memory at a time (default: about 64 MiB of float64, rounded to whole
        chunks of a zarr array; choose a multiple of the store's chunk rows,
        as a block that cuts a chunk decodes it again). A Dask array on
        a cluster is rechunked to blocks of this many rows (default: its
        chunks).
    persist : bool, default=True
        Dask arrays on a cluster only: ``True`` loads each worker's blocks
        into its memory once; ``False`` re-reads them from their source at
        every step (for data larger than the workers' memory; the Dask array
        should read from a store, e.g. ``dask.array.from_zarr``).
    client : distributed.Client or None, default=None
        Client of the cluster; ``None`` uses the current one
        (``distributed.get_client()``) when there is one.

    Examples
    --------
    >>> import numpy as np
    >>> from dpestim import LogisticRegression
    >>> from dpestim.scaling import BlockedArray
    >>> X = np.load("X.npy", mmap_mode="r")  # doctest: +SKIP
    >>> clf = LogisticRegression(classes=[0, 1]).fit(
    ...     BlockedArray(X, block_size=100_000), y)  # doctest: +SKIP
    """

    def __init__(self, X, *, block_size=None, persist=True, client=None):
        if block_size is not None and (
            isinstance(block_size, bool)
            or not isinstance(block_size, (int, np.integer))
            or block_size < 1
        ):
            raise ValueError(
                f"block_size must be None or an int >= 1, got {block_size!r}."
            )
        if not isinstance(persist, (bool, np.bool_)):
            raise ValueError(f"persist must be a bool, got {persist!r}.")
        self.X = X
        self.block_size = block_size
        self.persist = bool(persist)
        self.client = client

    @property
    def shape(self):
        return self.X.shape


def _is_dask(X):
    return type(X).__module__.split(".")[0] in ("dask", "dask_expr")


def _is_zarr(X):
    return type(X).__module__.split(".")[0] == "zarr"


def as_blocked(X):
    """The blocked-data object for ``X``, or ``None`` for in-memory input.

    Blocked inputs: Dask arrays and DataFrames, zarr arrays, and
    :class:`BlockedArray` (e.g. around a ``numpy.memmap``). Nothing is read
    here.
    """
    if isinstance(X, BlockedArray):
        spec = X
    elif _is_dask(X) or _is_zarr(X):
        spec = BlockedArray(X)
    else:
        return None
    X = spec.X
    if _is_dask(X):
        return _dask_blocks(X, spec)
    if not hasattr(X, "shape") or len(X.shape) != 2:
        raise ValueError("X must be a 2-d array (rows are records).")
    return LocalBlocks(X, spec.block_size)


def _dask_blocks(X, spec):
    import dask.array as da

    if not isinstance(X, da.Array):  # DataFrame of numeric columns
        if not hasattr(X, "to_dask_array"):
            raise TypeError(f"Unsupported Dask collection for X: {type(X).__name__}.")
        from pandas.api.types import is_numeric_dtype

        bad = [c for c, t in X.dtypes.items() if not is_numeric_dtype(t)]
        if bad:
            raise TypeError(f"X must have numeric columns only; got {bad[:5]}.")
        X = X.to_dask_array(lengths=True)
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-d Dask array, got {X.ndim} dimensions.")
    if any(np.isnan(c) for c in X.chunks[0]) or any(np.isnan(s) for s in X.shape):
        raise ValueError(
            "X has unknown chunk sizes: call X.compute_chunk_sizes() (or "
            "DataFrame.to_dask_array(lengths=True)) before fitting, so that the "
            "number of records and the row blocks are known."
        )
    if spec.block_size is not None:
        X = X.rechunk({0: spec.block_size, 1: -1})
    client = spec.client
    if client is None and "distributed" in sys.modules:
        from distributed import get_client

        try:
            client = get_client()
        except ValueError:
            client = None
    if client is None:
        block = spec.block_size or max(X.chunks[0])
        return LocalBlocks(X, block)
    from ._dask import DaskBlocks

    return DaskBlocks(X, client, persist=spec.persist)


def _supported_names():
    from ..solvers import SOLVERS

    plain, gaussian = [], []
    for name, cls in SOLVERS.items():
        if getattr(cls(), "supports_blocked_data", False):
            plain.append(name)
        elif "noise" in cls().get_params() and getattr(
            cls(noise="gaussian"), "supports_blocked_data", False
        ):
            gaussian.append(name)
    return plain, gaussian


def check_blocked_solver(solver, estimator=None):
    """Raise ``ValueError`` unless ``solver`` can run on blocked data.

    ``estimator`` (optional): when its ``solver`` is ``"auto"`` and it asks
    ``delta=0``, the message says that no pure-DP solver runs on blocked data
    (the rule picked the pure-DP solver, not the user).
    """
    if getattr(solver, "supports_blocked_data", False):
        return
    plain, gaussian = _supported_names()
    picked = ""
    if estimator is not None and getattr(estimator, "solver", None) == "auto":
        picked = f"solver='auto' picked {solver.name!r}"
        if getattr(estimator, "delta", None) == 0:
            picked += (
                " for delta=0 (pure DP), and no pure-DP solver runs on Dask, "
                "memory-mapped or zarr data: pass delta > 0 (the Gaussian "
                "dp-sgd family runs block-wise) or fit in memory. "
            )
        else:
            picked += ". "
    raise ValueError(
        picked
        + f"solver={solver.name!r} cannot fit Dask, memory-mapped or zarr data: its "
        "step is not a sum of clipped per-example gradients over rows. Supported: "
        f"{', '.join(plain)}; and with noise='gaussian': {', '.join(gaussian)} "
        "(for example solver=DPGD(noise='gaussian'), a Gaussian solver: delta > 0)."
    )


def prepare_blocked(estimator, X, y, solver):
    """Validate blocked ``X`` and ``y`` for ``estimator`` before any noise.

    Checks the solver, every block of X (finite, norms representable) and
    y (read into memory: it holds one label per record), and sets
    ``n_features_in_``. Returns ``(X, y)``.
    """
    from sklearn.utils.validation import _check_y

    check_blocked_solver(solver, estimator)
    n, d = X.shape
    name = type(estimator).__name__
    if n < 1 or d < 1:  # the messages of scikit-learn's check_array
        what = "sample(s)" if n < 1 else "feature(s)"
        raise ValueError(
            f"Found blocked array with 0 {what} (shape={X.shape}) while a minimum "
            f"of 1 is required by {name}."
        )
    if _is_dask(y):
        from ._dask import _EMBEDDED_BYTES, _embedded_bytes

        # y comes to this process anyway: if its graph carries in-memory
        # data (from_array), compute it here rather than ship that graph
        local = _embedded_bytes(y) >= _EMBEDDED_BYTES
        y = y.compute(scheduler="sync") if local else y.compute()
    y = _check_y(y, estimator=estimator, **estimator._validate_kwargs)
    if y.shape[0] != n:
        raise ValueError(f"X has {n} records but y has {y.shape[0]}.")
    X.validate()
    estimator.n_features_in_ = d
    if hasattr(estimator, "feature_names_in_"):
        del estimator.feature_names_in_
    return X, y
