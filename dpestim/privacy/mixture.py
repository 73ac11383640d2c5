"""RDP of a run that executes one of several mechanisms (a solver search).

A candidate of a search over solvers draws its solver from a public list with
public coins and runs it: its output law is the mixture ``sum_i w_i P_i``
(neighbour: ``sum_i w_i Q_i``) with the same public weights on both sides.
The Renyi divergence is jointly quasi-convex (van Erven and Harremoes,
"Renyi divergence and Kullback-Leibler divergence", IEEE Trans. Inf. Theory
60(7), 2014, Theorem 13): for every order ``alpha``,

    ``D_alpha(sum_i w_i P_i || sum_i w_i Q_i) <= max_i D_alpha(P_i || Q_i)``,

so the mixture is ``(alpha, max_i eps_i(alpha))``-RDP, ``eps_i`` the RDP curve
of mechanism ``i`` (each ordered pair of neighbours is bounded by the same
max, so the bound holds for both directions and every relation). The same
pointwise maximum bounds a mechanism chosen *adaptively* among the ``P_i``
(as a function of earlier outputs, e.g. a refit with the selected solver):
RDP composes adaptively with the per-step supremum over the choices
(Mironov 2017, Proposition 1).

dp-accounting has no event for this. :class:`MaxRdpDpEvent` states it, and
:class:`MaxRdpAccountant` is dp-accounting's ``RdpAccountant`` with that one
event added: each listed event's curve is computed by dp-accounting itself
(a fresh accountant on the same orders), their pointwise maximum is composed,
and every other event (``RepeatAndSelectDpEvent`` of a mixture included) is
left to dp-accounting's code: Papernot and Steinke's repeat-and-select
theorem needs only the per-order RDP curve of one run, which is that maximum.
"""

import attr
import numpy as np
from dp_accounting import DpEvent
from dp_accounting.rdp import RdpAccountant

__all__ = ["MaxRdpAccountant", "MaxRdpDpEvent"]


def _as_tuple(events):
    events = tuple(events)
    if not events or not all(isinstance(e, DpEvent) for e in events):
        raise ValueError("MaxRdpDpEvent needs a non-empty list of DpEvents.")
    return events


@attr.s(frozen=True, slots=True, auto_attribs=True)
class MaxRdpDpEvent(DpEvent):
    """One of ``events``, picked by public coins or by earlier outputs.

    Its RDP at every order is at most the largest RDP of ``events`` at that
    order (joint quasi-convexity of the Renyi divergence; see the module).
    Only :class:`MaxRdpAccountant` (the RDP accountant of
    :func:`dpestim.privacy.make_accountant`) supports it; PLD does not.

    Attributes
    ----------
    events : tuple of DpEvent
        The mechanisms the run may execute (all under one neighbouring
        relation).
    """

    events: tuple = attr.ib(converter=_as_tuple)


class MaxRdpAccountant(RdpAccountant):
    """dp-accounting's RDP accountant, plus :class:`MaxRdpDpEvent`.

    Every event other than :class:`MaxRdpDpEvent` is handled by
    ``RdpAccountant`` unchanged (its results are identical; tested). The
    hook is ``RdpAccountant._maybe_compose``, the traversal the public
    ``compose`` and ``supports`` call: dp-accounting exposes no other way to
    add an event to its traversal (inside ``RepeatAndSelectDpEvent``, say).
    """

    def _maybe_compose(self, event, count, do_compose):
        if not isinstance(event, MaxRdpDpEvent):
            return super()._maybe_compose(event, count, do_compose)
        curves = []
        for inner in event.events:
            sub = type(self)(
                orders=self._orders, neighboring_relation=self._neighboring_relation
            )
            error = sub._maybe_compose(inner, 1, do_compose)
            if error is not None:
                return error
            curves.append(sub._rdp)
        if do_compose:
            self._rdp = self._rdp + count * np.max(curves, axis=0)
        return None
