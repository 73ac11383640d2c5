"""Private optimisation algorithms, one module per paper algorithm."""

from ._registry import SOLVERS, resolve_solver
from .accelerated import (
    DPHB,
    DPMASG,
    DPNAG,
    AcceleratedSolver,
    DPMASGOpt,
    DPNAGOpt,
)
from .base import BaseSolver, ERMPlan, SolverResult
from .dp_gd import DPGD
from .dp_sgd import DPSGD

__all__ = [
    "DPGD",
    "DPHB",
    "DPMASG",
    "DPMASGOpt",
    "DPNAG",
    "DPNAGOpt",
    "DPSGD",
    "SOLVERS",
    "AcceleratedSolver",
    "BaseSolver",
    "ERMPlan",
    "SolverResult",
    "resolve_solver",
]
