"""Solver registry: ``solver="name"`` resolves here."""

from sklearn.base import clone

from .adp_sgd import ADPSGD, ADPAdaGrad
from .base import BaseSolver
from .dp_gd import DPGD
from .dp_lssgd import DPLSSGD
from .dp_scd import DPSCD
from .dp_sgd import DPSGD
from .dp_smd_sco import DPSMDSCO
from .momentum import DPHB, DPMASG, DPNAG, DPMASGOpt, DPNAGOpt
from .oneshot import AdaSSP, ObjectivePerturbation
from .seq_dp_scd import SeqDPSCD

__all__ = ["SOLVERS", "resolve_solver"]

#: Registry name -> solver class.
SOLVERS = {
    cls.name: cls
    for cls in (
        DPSGD,
        DPGD,
        DPHB,
        DPNAG,
        DPNAGOpt,
        DPMASG,
        DPMASGOpt,
        ADPSGD,
        ADPAdaGrad,
        DPLSSGD,
        DPSCD,
        SeqDPSCD,
        DPSMDSCO,
        AdaSSP,
        ObjectivePerturbation,
    )
}


def resolve_solver(solver):
    """Return a fresh solver instance for a registry name or a solver object.

    A solver object is cloned, so that fitting never mutates the parameter the
    user passed, and its parameters are validated (``ValueError`` /
    ``TypeError`` naming the parameter) before any data is read.
    """
    if isinstance(solver, str):
        if solver not in SOLVERS:
            raise ValueError(
                f"solver={solver!r} is not a known solver; choose one of "
                f"{sorted(SOLVERS)} or pass a solver object."
            )
        solver = SOLVERS[solver]()
        solver.validate_params()
        return solver
    if isinstance(solver, BaseSolver):
        solver = clone(solver)
        solver.validate_params()
        return solver
    raise TypeError(
        "solver must be a registry name (str) or a dpestim solver object, got "
        f"{type(solver).__name__}."
    )
