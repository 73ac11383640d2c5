"""Private optimisation algorithms, one module per paper algorithm."""

from ._registry import SOLVERS, resolve_solver
from .accelerated import AcceleratedSolver
from .adp_sgd import ADPSGD, ADPAdaGrad
from .base import BaseSolver, ERMPlan, SolverResult
from .dp_gd import DPGD
from .dp_lssgd import (
    DPLSSGD,
    laplacian_smooth,
    smoothed_noise_variance_factor,
    smoothing_eigenvalues,
)
from .dp_scd import DPSCD
from .dp_sgd import DPSGD
from .dp_smd_sco import DPSMDSCO
from .momentum import DPHB, DPMASG, DPNAG, DPMASGOpt, DPNAGOpt
from .oneshot import AdaSSP, ObjectivePerturbation
from .saddle import DPSGDA, DPSMD, DPSMDBR, SADDLE_SOLVERS, SaddlePlan
from .seq_dp_scd import SeqDPSCD
from .sgda import NoisySGDA

__all__ = [
    "AdaSSP",
    "ObjectivePerturbation",
    "ADPAdaGrad",
    "ADPSGD",
    "DPGD",
    "DPSCD",
    "DPLSSGD",
    "DPHB",
    "DPMASG",
    "DPMASGOpt",
    "DPNAG",
    "DPNAGOpt",
    "DPSGD",
    "DPSGDA",
    "DPSMD",
    "DPSMDBR",
    "DPSMDSCO",
    "NoisySGDA",
    "SADDLE_SOLVERS",
    "SOLVERS",
    "AcceleratedSolver",
    "BaseSolver",
    "ERMPlan",
    "SeqDPSCD",
    "SaddlePlan",
    "SolverResult",
    "laplacian_smooth",
    "resolve_solver",
    "smoothed_noise_variance_factor",
    "smoothing_eigenvalues",
]
