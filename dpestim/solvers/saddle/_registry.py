"""Saddle-solver registry: names, resolution, planning and the guarded run."""

import math

from dp_accounting import NonPrivateDpEvent
from sklearn.base import clone

from ._accounting import event_epsilon
from .base import DPSMD, DPSMDBR, BaseSaddleSolver, SaddleResult
from .dp_sgda import DPSGDA
from .sgda import NoisySGDA

__all__ = ["SADDLE_SOLVERS", "plan_saddle", "resolve_saddle_solver", "run_saddle"]

#: Registry name -> saddle solver class.
SADDLE_SOLVERS = {cls.name: cls for cls in (DPSMD, DPSMDBR, DPSGDA, NoisySGDA)}


def resolve_saddle_solver(solver, allowed=None):
    """Fresh saddle solver instance from a registry name or a solver object."""
    if isinstance(solver, str):
        if solver not in SADDLE_SOLVERS or (allowed and solver not in allowed):
            names = sorted(allowed or SADDLE_SOLVERS)
            raise ValueError(f"solver={solver!r} is not one of {names}.")
        solver = SADDLE_SOLVERS[solver]()
        solver.validate_params()
        return solver
    if isinstance(solver, BaseSaddleSolver):
        if allowed and solver.name not in allowed:
            raise ValueError(f"solver {solver.name!r} is not one of {sorted(allowed)}.")
        solver = clone(solver)
        solver.validate_params()
        return solver
    raise TypeError(
        "solver must be a saddle solver name (str) or a saddle solver object, "
        f"got {type(solver).__name__}."
    )


def plan_saddle(solver, plan, epsilon, delta):
    """``(params, event, epsilon of the event)`` from public quantities only.

    What :func:`run_saddle` will run and account, before any data is read.
    """
    params = solver.resolve(epsilon, delta, plan)
    event = solver.make_event(params)
    if isinstance(event, NonPrivateDpEvent):
        return params, event, math.inf
    if isinstance(solver, DPSGDA):
        from ...privacy import compute_epsilon

        return params, event, compute_epsilon(event, delta, "rdp", "replace_one")
    return params, event, event_epsilon(event, delta)


def run_saddle(solver, problem, plan, epsilon, delta, rng):
    """Resolve parameters, check the guarantee, run ``solver`` on ``problem``.

    Raises ``ValueError`` before the run if the accounted epsilon is not a
    number or exceeds ``epsilon`` (see :func:`dpestim.privacy.check_guarantee`).
    """
    from ...privacy import check_guarantee

    params, event, eps = plan_saddle(solver, plan, epsilon, delta)
    check_guarantee(eps, epsilon, what=f"solver={solver.name!r}")
    result = solver.solve(problem, plan, params, rng)
    return SaddleResult(result.x, result.y, result.n_iter, result.dp_event, eps, params)
