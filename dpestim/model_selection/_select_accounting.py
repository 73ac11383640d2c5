"""Which accountant certifies a private search (RDP or the privacy profile).

Both bounds hold for the same mechanism (the ``RepeatAndSelectDpEvent`` of
the search, composed with the refit's events with ``refit=True``): RDP by
dp-accounting's RDP accountant, the privacy profile by
:mod:`dpestim.privacy.repeat_select`. ``accountant="auto"`` calibrates with
both and keeps the smaller noise, and the reported epsilon is the smaller of
the two bounds at that noise.
"""

from ..privacy import compute_epsilon
from ..privacy.charging import _targets
from ..privacy.repeat_select import calibrate_selection, profile_epsilon

__all__ = ["calibrate_search", "search_epsilon"]


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

    ``search._calibrate(make_event, relation)`` is the RDP calibration (the
    search alone, or the rest of its budget).
    """
    results = []
    for name in _accountants(search):
        if name == "rdp":
            results.append((search._calibrate(make_event, relation), name))
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
