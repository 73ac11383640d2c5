"""Private optimisation algorithms, grouped by family.

* :mod:`~dpestim.solvers.sgd`: DP-SGD and its adaptive / smoothed variants;
* :mod:`~dpestim.solvers.accelerated`: full-batch dp-gd and momentum methods;
* :mod:`~dpestim.solvers.coordinate`: dual coordinate descent;
* :mod:`~dpestim.solvers.saddle`: mirror descent and SGDA for saddle problems.

The solver contract (:mod:`~dpestim.solvers.base`), the registry behind
``solver="name"`` and the ``"auto"`` rules shared by every family
(:mod:`~dpestim.solvers._policy`) sit at this level; each family keeps its
own rules beside its solvers.
"""

from . import _aliases
from ._registry import SOLVERS, resolve_solver
from .accelerated import (
    DPGD,
    DPHB,
    DPMASG,
    DPNAG,
    AcceleratedSolver,
    DPMASGOpt,
    DPNAGOpt,
)
from .base import BaseSolver, ERMPlan, SolverResult
from .coordinate import DPSCD, SeqDPSCD
from .oneshot import AdaSSP, ObjectivePerturbation
from .saddle import (
    DPSGDA,
    DPSMD,
    DPSMDBR,
    DPSMDSCO,
    SADDLE_SOLVERS,
    NoisySGDA,
    SaddlePlan,
)
from .sgd import (
    ADPSGD,
    DPLSSGD,
    DPSGD,
    ADPAdaGrad,
    laplacian_smooth,
    smoothed_noise_variance_factor,
    smoothing_eigenvalues,
)

_aliases.install()

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
