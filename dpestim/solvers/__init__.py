"""Private optimisation algorithms, one module per paper algorithm."""

from ._registry import SOLVERS, resolve_solver
from .adp_sgd import ADPSGD, ADPAdaGrad
from .base import BaseSolver, ERMPlan, SolverResult
from .dp_gd import DPGD
from .dp_sgd import DPSGD

__all__ = [
    "ADPAdaGrad",
    "ADPSGD",
    "DPGD",
    "DPSGD",
    "SOLVERS",
    "BaseSolver",
    "ERMPlan",
    "SolverResult",
    "resolve_solver",
]
