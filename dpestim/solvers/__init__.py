"""Private optimisation algorithms, one module per paper algorithm."""

from ._registry import SOLVERS, resolve_solver
from .adp_sgd import ADPSGD, ADPAdaGrad
from .base import BaseSolver, ERMPlan, SolverResult
from .dp_gd import DPGD
from .dp_lssgd import (
    DPLSSGD,
    laplacian_smooth,
    smoothed_noise_variance_factor,
    smoothing_eigenvalues,
)
from .dp_scd import DPSCD, SeqDPSCD
from .dp_sgd import DPSGD

__all__ = [
    "ADPAdaGrad",
    "ADPSGD",
    "DPGD",
    "DPSCD",
    "DPLSSGD",
    "DPSGD",
    "SOLVERS",
    "BaseSolver",
    "ERMPlan",
    "SeqDPSCD",
    "SolverResult",
    "laplacian_smooth",
    "resolve_solver",
    "smoothed_noise_variance_factor",
    "smoothing_eigenvalues",
]
