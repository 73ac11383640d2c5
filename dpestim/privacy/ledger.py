"""A file-backed ledger of ``DpEvent`` s with a limit, shared across processes.

The ledger is one small file: a JSON header (the limit and the accountant)
followed by one line per accepted charge (the pickled event, its neighbouring
relation and a label), and ``open`` / ``closed`` lines marking when the owning
budget's ``with`` block is active (the last one holds). Child processes that
inherited the ledger through the environment charge it only while it is
open; the owner charges it directly at any time. A charge is checked and
appended under an exclusive ``fcntl`` lock, so that fits running at the same
time in joblib worker processes cannot together overshoot the limit.

The spent epsilon is always dp-accounting's value for the
``ComposedDpEvent`` of every accepted event (never a sum of epsilons).
Events that no dp-accounting accountant knows are translated to an event it
knows that holds for them:

- the saddle solvers' ``ExponentialMechanismDpEvent(eps)`` (a pure
  ``eps``-DP draw) becomes ``ZCDpEvent(eps**2 / 2)``: an ``eps``-DP mechanism
  is ``eps**2 / 2``-zCDP (Bun & Steinke 2016, Proposition 1.4). The RDP
  accountant handles zCDP; PLD does not. That translation is loose for a few
  such draws, so :func:`composed_epsilon` also bounds them by basic
  composition and keeps the smaller of the two valid bounds;
- objective perturbation's ``ObjectivePerturbationDpEvent`` becomes the
  ``ZCDpEvent(rho, xi)`` that holds for it
  (:func:`dpestim.privacy.objective_perturbation.zcdp_event`).
"""

import base64
import json
import math
import os
import pickle
import threading

import dp_accounting

from ..exceptions import BudgetExceededError
from .accounting import compute_epsilon

try:  # POSIX; elsewhere only threads of one process are serialised
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None

__all__ = ["FileLedger", "accountable_event", "composed_epsilon"]

_thread_lock = threading.RLock()


def accountable_event(event):
    """``event`` with pure-DP draws written as events dp-accounting knows."""
    name = type(event).__name__
    if name == "ExponentialMechanismDpEvent":
        eps = float(event.epsilon)
        if math.isinf(eps):
            return dp_accounting.NonPrivateDpEvent()
        return dp_accounting.ZCDpEvent(eps**2 / 2)
    if name == "ObjectivePerturbationDpEvent":
        from .objective_perturbation import zcdp_event

        return zcdp_event(event)
    if isinstance(event, dp_accounting.SelfComposedDpEvent):
        return dp_accounting.SelfComposedDpEvent(
            accountable_event(event.event), event.count
        )
    if isinstance(event, dp_accounting.ComposedDpEvent):
        return dp_accounting.ComposedDpEvent(
            [accountable_event(e) for e in event.events]
        )
    return event


def _leaves(event):
    if isinstance(event, dp_accounting.ComposedDpEvent):
        return [leaf for e in event.events for leaf in _leaves(e)]
    return [event]


def _pure_epsilon(event):
    """Epsilon of a pure-DP leaf (exponential-mechanism draws, Laplace), else None.

    ``LaplaceDpEvent(s)`` is ``1 / s``-DP in dp-accounting's units (the noise
    scale is ``s`` times the L1 sensitivity of the relation in use); the PLD
    accountant refuses it under replace-one, basic composition does not.
    """
    if type(event).__name__ == "ExponentialMechanismDpEvent":
        return float(event.epsilon)
    if isinstance(event, dp_accounting.LaplaceDpEvent) and event.noise_multiplier > 0:
        return 1.0 / float(event.noise_multiplier)
    if isinstance(event, dp_accounting.SelfComposedDpEvent):
        inner = _pure_epsilon(event.event)
        return None if inner is None else inner * event.count
    return None


def composed_epsilon(events, delta, accountant="rdp", neighbouring="add_or_remove_one"):
    """Epsilon at ``delta`` of the composition of ``events``, by dp-accounting.

    The composition is accounted by dp-accounting on ``ComposedDpEvent`` of
    the :func:`accountable_event` s. When some events are pure-DP draws that
    dp-accounting has no event for, a second valid bound is also computed:
    their epsilons composed by the basic composition theorem, plus
    dp-accounting's epsilon for all other events; the smaller bound is
    returned (the zCDP translation is loose for a few pure-DP draws, basic
    composition for many).
    """
    leaves = [leaf for e in events for leaf in _leaves(e)]
    if not leaves:
        return 0.0
    bounds = []
    try:
        bounds.append(
            compute_epsilon(
                dp_accounting.ComposedDpEvent([accountable_event(e) for e in leaves]),
                delta,
                accountant,
                neighbouring,
            )
        )
    except ValueError:
        pass  # e.g. zCDP events under PLD
    pure = [_pure_epsilon(e) for e in leaves]
    if any(p is not None for p in pure):
        rest = [accountable_event(e) for e, p in zip(leaves, pure) if p is None]
        try:
            eps_rest = (
                compute_epsilon(
                    dp_accounting.ComposedDpEvent(rest), delta, accountant, neighbouring
                )
                if rest
                else 0.0
            )
            bounds.append(sum(p for p in pure if p is not None) + eps_rest)
        except ValueError:
            pass  # e.g. objective perturbation's zCDP translation under PLD
    op = [e for e in events if _is_objective_perturbation(e)]
    if op:
        # objective perturbation's own closed form, basic composition with
        # the rest (delta split evenly between the approximate-DP parts; the
        # pure-DP draws need none): tighter than its zCDP translation
        from .objective_perturbation import amp_epsilon

        rest = [
            leaf
            for e in events
            if not _is_objective_perturbation(e)
            for leaf in _leaves(e)
        ]
        eps_pure = sum(p for p in map(_pure_epsilon, rest) if p is not None)
        rest = [e for e in rest if _pure_epsilon(e) is None]
        share = delta / (len(op) + bool(rest))
        try:
            eps_rest = (
                compute_epsilon(
                    dp_accounting.ComposedDpEvent([accountable_event(e) for e in rest]),
                    share,
                    accountant,
                    neighbouring,
                )
                if rest
                else 0.0
            )
            bounds.append(
                sum(amp_epsilon(e, share, accountant) for e in op) + eps_pure + eps_rest
            )
        except ValueError:
            pass
    if not bounds:
        raise ValueError(f"The {accountant!r} accountant cannot compose {events!r}.")
    return min(bounds)


def _is_objective_perturbation(event):
    inner = (
        event.event if isinstance(event, dp_accounting.SelfComposedDpEvent) else event
    )
    if isinstance(inner, dp_accounting.ComposedDpEvent) and inner.events:
        inner = inner.events[0]
    return type(inner).__name__ == "ObjectivePerturbationDpEvent"


class _Locked:
    """Exclusive (or shared) lock on an open file, plus a process-local lock."""

    def __init__(self, fh, exclusive):
        self.fh, self.exclusive = fh, exclusive

    def __enter__(self):
        _thread_lock.acquire()
        if fcntl is not None:
            fcntl.flock(self.fh, fcntl.LOCK_EX if self.exclusive else fcntl.LOCK_SH)
        return self.fh

    def __exit__(self, *exc):
        if fcntl is not None:
            fcntl.flock(self.fh, fcntl.LOCK_UN)
        _thread_lock.release()


class FileLedger:
    """A privacy ledger stored in the file ``path`` (see the module docstring).

    Parameters
    ----------
    path : str
        An existing ledger file (made by :meth:`create`).

    inherited : bool, default=False
        ``True`` for a ledger found through the environment by a child
        process: it then ignores charges while the ledger is closed.
    """

    def __init__(self, path, inherited=False):
        self.ledger_path = os.fspath(path)
        self.inherited = inherited

    @classmethod
    def create(cls, path, epsilon, delta, accountant="rdp"):
        """Write a fresh ledger file with limit ``(epsilon, delta)``."""
        header = {"epsilon": float(epsilon), "delta": float(delta)}
        header["accountant"] = accountant
        with open(path, "w", encoding="ascii") as fh:
            fh.write(json.dumps(header) + "\n")
        return cls(path)

    # -- reading ------------------------------------------------------------

    def _parse(self, lines):
        header = json.loads(lines[0])
        records, closed = [], True
        for line in lines[1:]:
            line = line.strip()
            if line in ("open", "closed"):
                closed = line == "closed"
            elif line:
                records.append(pickle.loads(base64.b64decode(line)))
        return header, records, closed

    def read(self):
        """``(header, records, closed)``; records are ``(event, relation, label)``."""
        with open(self.ledger_path, encoding="ascii") as fh, _Locked(fh, False):
            return self._parse(fh.readlines())

    @staticmethod
    def _relation(records):
        relations = {r[1] for r in records}
        if len(relations) > 1:
            raise ValueError(
                "Cannot compose fits accounted under different neighbouring "
                f"relations ({sorted(relations)}) in one budget."
            )
        return relations.pop() if relations else "add_or_remove_one"

    @staticmethod
    def composed_event(records):
        """The ``ComposedDpEvent`` of the records' (accountable) events."""
        return dp_accounting.ComposedDpEvent([accountable_event(r[0]) for r in records])

    def epsilon_of(self, records, header=None):
        """dp-accounting's epsilon of ``records`` composed, at the ledger's delta."""
        header = header or self.read()[0]
        return composed_epsilon(
            [r[0] for r in records],
            header["delta"],
            header["accountant"],
            self._relation(records),
        )

    # -- writing ------------------------------------------------------------

    def charge(self, charge):
        """Record ``charge`` (a :class:`~dpestim.privacy.charging.FitCharge`).

        Raises :class:`~dpestim.exceptions.BudgetExceededError` without
        recording anything when the composition would exceed the limit. An
        inherited ledger ignores charges while it is closed.
        """
        record = (charge.dp_event, charge.neighbouring, charge.label)
        line = base64.b64encode(pickle.dumps(record)).decode("ascii")
        with open(self.ledger_path, "r+", encoding="ascii") as fh, _Locked(fh, True):
            header, records, closed = self._parse(fh.readlines())
            if closed and self.inherited:
                from .charging import IGNORED

                return IGNORED
            try:
                eps = self.epsilon_of(records + [record], header)
            except ValueError as exc:
                raise ValueError(f"{charge.label}: {exc}") from None
            if not eps <= header["epsilon"]:
                spent = self.epsilon_of(records, header)
                raise BudgetExceededError(
                    f"{charge.label} would bring the spent epsilon from "
                    f"{spent:.4g} to {eps:.4g} at delta={header['delta']:g}, "
                    f"above the budget epsilon={header['epsilon']:g}; the fit was "
                    "refused before it ran."
                )
            fh.seek(0, os.SEEK_END)
            fh.write(line + "\n")
            fh.flush()
        return None

    def set_open(self, is_open):
        """Mark the ledger open (charged by child processes) or closed."""
        with open(self.ledger_path, "a", encoding="ascii") as fh, _Locked(fh, True):
            fh.write("open\n" if is_open else "closed\n")
