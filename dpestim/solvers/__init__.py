"""Private optimisation algorithms, one module per paper algorithm."""

from ._registry import SOLVERS, resolve_solver
from .adp_sgd import ADPSGD, ADPAdaGrad
from .base import BaseSolver, ERMPlan, SolverResult
from .dp_gd import DPGD
from .dp_scd import DPSCD, SeqDPSCD
from .dp_sgd import DPSGD

__all__ = [
    "ADPAdaGrad",
    "ADPSGD",
    "DPGD",
    "DPSCD",
    "DPSGD",
    "SOLVERS",
    "BaseSolver",
    "ERMPlan",
    "SeqDPSCD",
    "SolverResult",
    "resolve_solver",
]
