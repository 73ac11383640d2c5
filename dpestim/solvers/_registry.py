"""Solver registry: ``solver="name"`` resolves here."""

from sklearn.base import clone

from .accelerated.dp_gd import DPGD
from .accelerated.momentum import DPHB, DPMASG, DPNAG, DPMASGOpt, DPNAGOpt
from .base import BaseSolver
from .coordinate.dp_scd import DPSCD
from .coordinate.seq_dp_scd import SeqDPSCD
from .oneshot import AdaSSP, ObjectivePerturbation
from .saddle.dp_smd_sco import DPSMDSCO
from .sgd.adp_sgd import ADPSGD, ADPAdaGrad
from .sgd.dp_lssgd import DPLSSGD
from .sgd.dp_sgd import DPSGD

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
