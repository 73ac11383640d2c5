"""Private optimisation algorithms, one module per paper algorithm."""

from ._registry import SOLVERS, resolve_solver
from .base import BaseSolver, ERMPlan, SolverResult
from .dp_gd import DPGD
from .dp_sgd import DPSGD
from .dp_smd_sco import DPSMDSCO
from .saddle import DPSGDA, DPSMD, DPSMDBR, SADDLE_SOLVERS, SaddlePlan

__all__ = [
    "DPGD",
    "DPSGD",
    "DPSGDA",
    "DPSMD",
    "DPSMDBR",
    "DPSMDSCO",
    "SADDLE_SOLVERS",
    "SOLVERS",
    "BaseSolver",
    "ERMPlan",
    "SaddlePlan",
    "SolverResult",
    "resolve_solver",
]
