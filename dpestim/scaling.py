"""Fit on data beyond one process's memory: Dask clusters and out-of-core arrays.

``fit`` accepts, besides in-memory arrays, a row-chunked ``dask.array``, a
``dask.dataframe`` of numeric columns, a ``numpy.memmap`` (``numpy.load(path,
mmap_mode="r")``) and a zarr array, for the solvers whose step is a sum of
clipped per-example gradients (dp-sgd, dp-lssgd, adp-sgd, adp-adagrad, and
dp-gd / dp-hb / dp-nag / dp-masg and their "-opt" variants with
``noise="gaussian"``). The fit is the in-memory algorithm run block by
block: the same ``random_state`` gives the same model for any chunking, up
to floating-point summation order. :class:`BlockedArray` sets the block
size and how a Dask cluster holds the data. See the "Scaling out" guide.
"""

from ._distributed import BlockedArray

__all__ = ["BlockedArray"]
