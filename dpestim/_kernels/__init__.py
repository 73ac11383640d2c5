"""Shared numba loops: Poisson sampling, clipped per-example gradient sums.

Kernels are module-level ``@numba.njit(cache=True)`` functions on arrays,
scalars and a ``numpy.random.Generator``. Dense (C-order rows) and CSR twins
share one name stem. None uses ``fastmath``: clipping, norms and noise must be
computed exactly as analysed.
"""

from .clipping import (
    clipped_grad_sum,
    clipped_grad_sum_csr,
    weighted_clipped_grad_sum,
    weighted_clipped_grad_sum_csr,
)
from .counter_sampling import SAMPLING_BLOCK, poisson_sample_range, sampling_key
from .l1_clipping import (
    l1_clipped_grad_sum,
    l1_clipped_grad_sum_csr,
    weighted_l1_clipped_grad_sum,
    weighted_l1_clipped_grad_sum_csr,
)
from .sampling import poisson_sample
from .smoothing import laplacian_smooth_inplace
from .wor_sampling import sample_without_replacement

__all__ = [
    "SAMPLING_BLOCK",
    "clipped_grad_sum",
    "clipped_grad_sum_csr",
    "l1_clipped_grad_sum",
    "l1_clipped_grad_sum_csr",
    "weighted_clipped_grad_sum",
    "weighted_clipped_grad_sum_csr",
    "weighted_l1_clipped_grad_sum",
    "weighted_l1_clipped_grad_sum_csr",
    "laplacian_smooth_inplace",
    "poisson_sample",
    "poisson_sample_range",
    "sampling_key",
    "sample_without_replacement",
]
