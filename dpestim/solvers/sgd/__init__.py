"""DP-SGD family: Poisson-sampled DP-SGD with per-example clipping and its
adaptive-noise (adp-sgd, adp-adagrad) and Laplacian-smoothing (dp-lssgd)
variants, all on one shared noisy-gradient loop."""

from .adp_sgd import ADPSGD, ADPAdaGrad
from .dp_lssgd import (
    DPLSSGD,
    laplacian_smooth,
    smoothed_noise_variance_factor,
    smoothing_eigenvalues,
)
from .dp_sgd import DPSGD

__all__ = [
    "ADPAdaGrad",
    "ADPSGD",
    "DPLSSGD",
    "DPSGD",
    "laplacian_smooth",
    "smoothed_noise_variance_factor",
    "smoothing_eigenvalues",
]
