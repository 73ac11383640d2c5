"""Where every private fit announces its mechanism before it runs.

Each dpestim estimator or transformer calls :func:`charge_fit` exactly once
per fit, after its ``DpEvent`` is known from public quantities and *before*
the mechanism touches the data. The call hands a :class:`FitCharge` to the
active charge targets (for example a :class:`dpestim.model_selection.
PrivacyBudget`), which may record it or refuse it by raising; a refusal
therefore stops the fit before any private computation.

Targets are found in three places, asked in this order:

- a per-thread stack (model selection's candidates);
- a process-wide stack filled by ``with target:`` blocks (innermost first);
- the environment variable ``DPESTIM_BUDGET_LEDGERS`` (file ledgers, ``os.
  pathsep``-separated), which child processes such as joblib's loky workers
  inherit, so that fits run by ``n_jobs > 1`` are charged too.

This module knows nothing about models or budgets: it only routes charges.
"""

import os
import threading
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "ENV_VAR",
    "IGNORED",
    "FitCharge",
    "charge_fit",
    "pop_target",
    "push_target",
    "restart_worker_pool",
]

#: Returned by a target that does not take a charge (a closed inherited
#: ledger): the fit is then not covered by that budget.
IGNORED = "ignored"

#: Environment variable listing the file ledgers charged in child processes.
ENV_VAR = "DPESTIM_BUDGET_LEDGERS"

_lock = threading.RLock()
_stack = []  # innermost last
_local = threading.local()  # .stack: this thread's targets, innermost last
_env_targets = {}  # path -> target rebuilt from the environment (workers)


@dataclass(frozen=True)
class FitCharge:
    """What one fit is about to spend.

    Attributes
    ----------
    dp_event : dp_accounting.DpEvent
        The event of the mechanism about to run (computed from public
        quantities only).
    neighbouring : str
        ``"add_or_remove_one"`` or ``"replace_one"``: the relation under which
        ``dp_event`` holds.
    label : str
        A readable name of the fit (estimator class and solver).
    estimator : object or None
        The estimator being fitted (for targets that inspect it; never
        stored by a ledger).
    make_event : callable or None
        ``make_event(noise_multiplier) -> DpEvent`` of the same mechanism with
        another noise multiplier, when the estimator has one; lets model
        selection calibrate a candidate without running it.
    plan : object or None
        The solver's frozen public plan (resolved hyperparameters), if any.
    """

    dp_event: Any
    neighbouring: str = "add_or_remove_one"
    label: str = ""
    estimator: Any = field(default=None, repr=False, compare=False)
    make_event: Any = field(default=None, repr=False, compare=False)
    plan: Any = field(default=None, repr=False, compare=False)


def push_target(target, thread_local=False):
    """Make ``target`` the innermost charge target of this process.

    With ``thread_local=True`` it sees only the fits of the calling thread
    (and is asked before the process-wide targets): model selection uses
    this for its candidates, so that fits in other threads are unaffected.
    """
    if thread_local:
        _local.__dict__.setdefault("stack", []).append(target)
        return
    with _lock:
        _stack.append(target)


def pop_target(target):
    """Remove ``target`` (pushed by :func:`push_target`) from its stack."""
    with _lock:
        for stack in (_local.__dict__.get("stack", []), _stack):
            for i in range(len(stack) - 1, -1, -1):
                if stack[i] is target:
                    del stack[i]
                    return
    raise RuntimeError("pop_target: target is not active.")


def _targets():
    """Active targets, innermost first: the stack, then inherited ledgers."""
    with _lock:
        stacked = list(reversed(_local.__dict__.get("stack", [])))
        stacked += list(reversed(_stack))
    paths = [p for p in os.environ.get(ENV_VAR, "").split(os.pathsep) if p]
    for path in reversed(paths):
        if path not in _env_targets:
            from .ledger import FileLedger

            _env_targets[path] = FileLedger(path, inherited=True)
        stacked.append(_env_targets[path])
    # A ledger entered twice (nested ``with`` of one budget, or seen both in
    # the stack and in the environment) is charged once.
    targets, seen = [], set()
    for target in stacked:
        key = getattr(target, "ledger_path", None) or id(target)
        if key not in seen:
            seen.add(key)
            targets.append(target)
    return targets


def restart_worker_pool():
    """Shut down joblib's reusable loky pool so new workers see ``os.environ``.

    Loky workers copy the environment when they start and are reused across
    ``Parallel`` calls; workers started before a budget was entered (or the
    composition registry was created) would not know it. The pool is
    rebuilt on the next ``n_jobs > 1`` call.
    """
    try:
        from joblib.externals.loky import reusable_executor
    except ImportError:  # pragma: no cover
        return
    executor = getattr(reusable_executor, "_executor", None)
    if executor is not None:
        executor.shutdown(wait=True)


def charge_fit(charge, extra=None, *, data=None, epsilon=None, delta=None):
    """Announce a fit to the active targets; any of them may refuse it.

    Targets are asked innermost first. A target returning ``False`` stops
    the propagation (model selection does this: it charges its own composed
    event once instead of every candidate's).

    A fit that is not part of an enclosing mechanism is then noted by the
    composition registry (:mod:`dpestim.privacy._composition`), which warns
    with a :class:`~dpestim.exceptions.PrivacyBudgetWarning` when the fit,
    outside any budget, uses records that earlier private fits used.

    Parameters
    ----------
    charge : FitCharge
    extra : object or None
        A target charged as the outermost one unless it is already active
        (an explicit ``budget=`` argument).
    data : ndarray or sparse matrix or None, default=None
        The records the mechanism reads, for the composition registry only
        (fingerprinted locally, never stored by a target nor released).
    epsilon, delta : float or None, default=None
        The fit's guarantee (its request), for the composition warning.

    Raises
    ------
    dpestim.exceptions.BudgetExceededError
        From a budget that the fit would exceed. Nothing has run yet.
    """
    targets = _targets()
    if extra is not None and getattr(extra, "ledger_path", None) not in {
        getattr(t, "ledger_path", None) for t in targets
    }:
        targets.append(extra)
    covered = False  # charged to a budget or to an enclosing search
    for target in targets:
        result = target.charge(charge)
        if result is False:
            return  # part of an enclosing mechanism (PrivateSearchCV's run)
        covered = covered or result != IGNORED
    if data is not None and epsilon is not None:
        from . import _composition

        _composition.note_fit(
            data,
            epsilon,
            0.0 if delta is None else delta,
            label=charge.label,
            warn=not covered,
        )
