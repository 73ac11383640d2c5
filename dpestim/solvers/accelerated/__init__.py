"""Accelerated full-batch family (paper 000): dp-gd and the momentum methods
dp-hb, dp-nag, dp-nag-opt, dp-masg, dp-masg-opt, pure epsilon-DP by default.

``dpestim.solvers.accelerated`` was one module before the family became a
package; its public names are re-exported here.
"""

from ._schedules import error_bound_terms, masg_schedule, pure_epsilon, select_n_iter
from .base import AcceleratedSolver
from .dp_gd import DPGD
from .momentum import DPHB, DPMASG, DPNAG, DPMASGOpt, DPNAGOpt

__all__ = [
    "DPGD",
    "DPHB",
    "DPMASG",
    "DPMASGOpt",
    "DPNAG",
    "DPNAGOpt",
    "AcceleratedSolver",
    "error_bound_terms",
    "masg_schedule",
    "pure_epsilon",
    "select_n_iter",
]
