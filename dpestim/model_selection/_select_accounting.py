"""Which accountant certifies a private search (RDP or the privacy profile).

Both bounds hold for the same mechanism (the ``RepeatAndSelectDpEvent`` of
the search, composed with the refit's events with ``refit=True``): RDP by
dp-accounting's RDP accountant, the privacy profile by
:mod:`dpestim.privacy.repeat_select`. ``accountant="auto"`` calibrates with
both and keeps the smaller noise, and the reported epsilon is the smaller of
the two bounds at that noise.
"""

import dp_accounting

from ..privacy import calibrate_noise, compute_epsilon
from ..privacy.charging import _targets
from ..privacy.ledger import accountable_event
from ..privacy.repeat_select import calibrate_selection, profile_epsilon

__all__ = ["budget_spent", "calibrate_search", "rdp_calibration", "search_epsilon"]


def rdp_calibration(search, make_event, relation):
    """Noise of every candidate: the search alone, or the budget's remainder."""
    if search.epsilon is not None:
        return calibrate_noise(
            make_event,
            search.epsilon,
            search.delta,
            accountant="rdp",
            neighbouring=relation,
            cache_key=("PrivateSearchCV", repr(make_event(1.0))),
        )
    budget, spent = search.budget, budget_spent(search, relation)

    def make_total(noise):
        return dp_accounting.ComposedDpEvent(spent + [make_event(noise)])

    return calibrate_noise(
        make_total,
        budget.epsilon,
        budget.delta,
        accountant="rdp",
        neighbouring=relation,
    )


def budget_spent(search, relation):
    """The events already charged to the budget that ``epsilon=None`` spends."""
    budget = search.budget
    if budget is None or budget.accountant != "rdp":
        raise ValueError(
            "epsilon=None spends the rest of budget=, which must be a "
            "PrivacyBudget with accountant='rdp'."
        )
    if {r[1] for r in budget.records} - {relation}:
        raise ValueError("The budget holds fits under another relation.")
    return [accountable_event(r[0]) for r in budget.records]


def _accountants(search):
    """The accountants to calibrate ``search`` with (see its ``accountant``)."""
    name = "profile" if search.accountant == "pld" else search.accountant
    if name == "profile" and search.epsilon is None:
        raise ValueError(
            "accountant='profile' needs epsilon (epsilon=None spends a "
            "budget with its RDP accountant)."
        )
    if name != "auto":
        return (name,)
    if search.epsilon is None or search.budget is not None or _targets():
        # a budget composes with its own RDP accountant: a profile-calibrated
        # search would be charged more than the requested epsilon there
        return ("rdp",)
    return ("rdp", "profile")


def calibrate_search(search, make_event, relation):
    """``(noise, accountant)``: the smallest noise an accountant certifies.

    ``rdp_calibration(search, make_event, relation)`` is the RDP calibration (the
    search alone, or the rest of its budget).
    """
    results = []
    for name in _accountants(search):
        if name == "rdp":
            try:
                noise = rdp_calibration(search, make_event, relation)
            except ValueError as exc:
                if "does not support" not in str(exc):
                    raise
                raise ValueError(
                    "PrivateSearchCV cannot account this search: a candidate's "
                    "mechanism holds an event the RDP accountant does not "
                    "support inside RepeatAndSelect (for instance the pure-DP "
                    "exponential mechanism of a PrivateRowNormClipper or "
                    "PrivateCentrer step). Fit that step once outside the search "
                    "(its output is a public transform for the candidates) or "
                    "give it public constants (RowNormClipper, StandardScaler "
                    "with public bounds)."
                ) from exc
            results.append((noise, name))
            continue
        try:
            noise = calibrate_selection(
                make_event, search.epsilon, search.delta, relation
            )
        except ValueError:
            if search.accountant == "auto":
                continue  # the PLD does not support the event: RDP alone
            raise
        results.append((noise, name))
    return min(results)


def search_epsilon(event, delta, relation, accountant):
    """``(accountant, epsilon)``: the smaller bound (RDP always computed)."""
    eps = {"rdp": compute_epsilon(event, delta, "rdp", relation)}
    if accountant == "profile":
        eps["profile"] = profile_epsilon(event, delta, relation)
    best = min(eps, key=eps.get)
    return best, float(eps[best])
