"""Saddle-point family: private mirror descent (dp-smd, dp-smd-br, dp-smd-sco),
the DP-SGDA baseline and Euclidean noisy SGDA (the minimax estimators' default).

``dpestim.solvers.saddle`` was one module before the family became a package;
the names it held are re-exported here, so that import path keeps working.
"""

from ._accounting import composed_epsilon, per_sample_epsilon
from ._problems import BilinearGame, LinearSaddleProblem, SaddlePlan, SaddleResult
from ._registry import SADDLE_SOLVERS, plan_saddle, resolve_saddle_solver, run_saddle
from .base import (
    DPSMD,
    DPSMDBR,
    MAX_SCORE_BOUND,
    MAX_VERTEX_SAMPLES,
    BaseSaddleSolver,
    ExponentialMechanismDpEvent,
)
from .dp_sgda import DPSGDA, project_simplex
from .dp_smd_sco import DPSMDSCO
from .sgda import NoisySGDA

__all__ = [
    "DPSGDA",
    "DPSMD",
    "DPSMDBR",
    "DPSMDSCO",
    "MAX_SCORE_BOUND",
    "MAX_VERTEX_SAMPLES",
    "SADDLE_SOLVERS",
    "BaseSaddleSolver",
    "BilinearGame",
    "ExponentialMechanismDpEvent",
    "LinearSaddleProblem",
    "NoisySGDA",
    "SaddlePlan",
    "SaddleResult",
    "composed_epsilon",
    "per_sample_epsilon",
    "plan_saddle",
    "project_simplex",
    "resolve_saddle_solver",
    "run_saddle",
]
