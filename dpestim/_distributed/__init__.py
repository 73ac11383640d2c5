"""Fitting on data that is not one in-memory array: Dask, memory maps, zarr.

The gradient solvers' step is a map-reduce over row blocks: each block draws
its part of the step's Poisson sample from the counter-based sampler (keyed
by seed, step and global row index, so the sample does not depend on the
blocks), returns the sum of its clipped per-example gradients, and the
driver adds the sums in a fixed order, draws the noise once and takes the
step. :func:`as_blocked` recognises the inputs that take this path; the
estimators only dispatch to it, and the solvers run the same steps as in
memory (:func:`dpestim.solvers.sgd.dp_sgd.noisy_gradient_descent`).
"""

from ._local import LocalBlocks
from ._wrap import BlockedArray, as_blocked, check_blocked_solver, prepare_blocked

__all__ = [
    "BlockedArray",
    "LocalBlocks",
    "as_blocked",
    "check_blocked_solver",
    "prepare_blocked",
]
