"""Privacy accounting and noise calibration through ``dp_accounting``.

Every solver describes the mechanism it runs as a ``dp_accounting.DpEvent``.
This module turns an event into an epsilon (:func:`compute_epsilon`) and
finds the smallest noise multiplier meeting a target budget
(:func:`calibrate_noise`). No accountant is written here: the RDP and PLD
accountants are the ones of Google's ``dp_accounting`` package.
"""

import math
from collections import OrderedDict

import dp_accounting
from dp_accounting import pld, rdp

from ._quiet import quiet_accounting

__all__ = ["ACCOUNTANTS", "calibrate_noise", "compute_epsilon", "make_accountant"]

#: Names accepted by ``accountant=``.
ACCOUNTANTS = ("rdp", "pld")

_NEIGHBOURING = {
    "add_or_remove_one": dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE,
    "replace_one": dp_accounting.NeighboringRelation.REPLACE_ONE,
}

# Largest noise multiplier the calibration will consider; a budget that needs
# more than this is reported as unreachable rather than silently capped.
_MAX_NOISE = 1e6
_CACHE_SIZE = 256
_calibration_cache = OrderedDict()
_epsilon_cache = OrderedDict()


def make_accountant(accountant="rdp", neighbouring="add_or_remove_one"):
    """Return a fresh, empty ``dp_accounting`` accountant.

    Parameters
    ----------
    accountant : {"rdp", "pld"}, default="rdp"
        Renyi-DP accountant (default orders of ``dp_accounting``) or the
        privacy-loss-distribution accountant (tighter, slower).
    neighbouring : {"add_or_remove_one", "replace_one"}, default="add_or_remove_one"
        Neighbouring relation under which the guarantee holds.

    Returns
    -------
    accountant : dp_accounting.PrivacyAccountant
    """
    if neighbouring not in _NEIGHBOURING:
        raise ValueError(
            f"neighbouring must be one of {sorted(_NEIGHBOURING)}, "
            f"got {neighbouring!r}."
        )
    relation = _NEIGHBOURING[neighbouring]
    if accountant == "rdp":
        return rdp.RdpAccountant(neighboring_relation=relation)
    if accountant == "pld":
        return pld.PLDAccountant(neighboring_relation=relation)
    raise ValueError(f"accountant must be one of {ACCOUNTANTS}, got {accountant!r}.")


@quiet_accounting
def compute_epsilon(event, delta, accountant="rdp", neighbouring="add_or_remove_one"):
    """Epsilon of ``event`` at ``delta`` according to ``accountant``.

    Parameters
    ----------
    event : dp_accounting.DpEvent
        The mechanism, for example
        ``SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(s)), T)``.
    delta : float
        Target delta in ``[0, 1)``.
    accountant : {"rdp", "pld"}, default="rdp"
    neighbouring : {"add_or_remove_one", "replace_one"}, default="add_or_remove_one"

    Returns
    -------
    epsilon : float
        ``inf`` for a non-private event (for example zero noise).

    Notes
    -----
    Results are cached on ``(event, delta, accountant, neighbouring)``
    (``DpEvent`` objects are frozen and hashable), so that repeated fits of
    the same configuration (cross-validation, audits) account once.
    """
    try:
        key = (event, float(delta), accountant, neighbouring)
        hash(key)
    except TypeError:
        # Events holding lists (ComposedDpEvent) are unhashable; their repr
        # is exact (dataclass fields, floats printed round-trip) and serves.
        key = (repr(event), float(delta), accountant, neighbouring)
    if key in _epsilon_cache:
        _epsilon_cache.move_to_end(key)
        return _epsilon_cache[key]
    acc = make_accountant(accountant, neighbouring)
    if not acc.supports(event):
        raise ValueError(f"The {accountant!r} accountant does not support {event!r}.")
    try:
        epsilon = float(acc.compose(event).get_epsilon(delta))
    except (ZeroDivisionError, OverflowError):
        # Noise so small that the accountant's arithmetic underflows (e.g. a
        # noise multiplier of 1e-190, whose square is 0): no finite epsilon
        # can be certified, and inf is the honest upper bound.
        epsilon = math.inf
    _epsilon_cache[key] = epsilon
    if len(_epsilon_cache) > _CACHE_SIZE:
        _epsilon_cache.popitem(last=False)
    return epsilon


@quiet_accounting
def calibrate_noise(
    make_event,
    epsilon,
    delta,
    *,
    accountant="rdp",
    neighbouring="add_or_remove_one",
    rtol=1e-4,
    cache_key=None,
):
    """Smallest noise multiplier whose event meets ``(epsilon, delta)``.

    The root is bracketed by doubling, refined by ``dp_accounting``'s
    calibration (Brent's method) to relative precision ``rtol``, and then
    *verified*: the returned value ``s`` always satisfies
    ``compute_epsilon(make_event(s), delta) <= epsilon``. If the root finder
    lands on the wrong side, ``s`` is increased until it does. Calibration
    therefore never overshoots the budget; it may spend up to ``rtol``
    (relative, in noise) less than the whole budget.

    Parameters
    ----------
    make_event : callable
        ``make_event(noise_multiplier) -> DpEvent``; epsilon must decrease as
        the noise multiplier grows. It must not touch private data.
    epsilon : float
        Target epsilon, ``> 0``.
    delta : float
        Target delta, in ``[0, 1)``.
    accountant : {"rdp", "pld"}, default="rdp"
    neighbouring : {"add_or_remove_one", "replace_one"}, default="add_or_remove_one"
    rtol : float, default=1e-4
        Relative precision of the returned noise multiplier.
    cache_key : hashable or None, default=None
        If given, the result is cached under
        ``(cache_key, epsilon, delta, accountant, neighbouring, rtol)``, so that
        repeated identical fits (cross-validation, grid search) calibrate once.
        The key must determine ``make_event`` completely.

    Returns
    -------
    noise_multiplier : float
    """
    epsilon = float(epsilon)
    delta = float(delta)
    if not epsilon > 0 or math.isinf(epsilon) or math.isnan(epsilon):
        raise ValueError(f"epsilon must be a positive finite number, got {epsilon!r}.")
    if not 0 <= delta < 1:
        raise ValueError(f"delta must be in [0, 1), got {delta!r}.")
    key = None
    if cache_key is not None:
        key = (cache_key, epsilon, delta, accountant, neighbouring, rtol)
        if key in _calibration_cache:
            _calibration_cache.move_to_end(key)
            return _calibration_cache[key]

    def eps_of(noise):
        return compute_epsilon(make_event(noise), delta, accountant, neighbouring)

    hi = 1.0
    while eps_of(hi) > epsilon:
        hi *= 2.0
        if hi > _MAX_NOISE:
            raise ValueError(
                f"The privacy budget epsilon={epsilon}, delta={delta} cannot be met "
                f"with a noise multiplier below {_MAX_NOISE:g}; increase epsilon, "
                "delta or the dataset size, or reduce the number of steps."
            )
    lo = hi / 2.0
    while lo > 1e-8 and eps_of(lo) <= epsilon:
        hi, lo = lo, lo / 2.0

    if eps_of(lo) <= epsilon:
        # Even the smallest noise searched meets the (huge) budget: no root
        # to bracket, and ``lo`` is a conservative answer.
        noise = lo
    else:
        noise = dp_accounting.calibrate_dp_mechanism(
            lambda: make_accountant(accountant, neighbouring),
            make_event,
            epsilon,
            delta,
            dp_accounting.ExplicitBracketInterval(lo, hi),
            tol=rtol * lo,
        )
    noise = min(float(noise), hi)
    # Verification: never return a noise whose epsilon exceeds the target.
    step = rtol * noise
    while eps_of(noise) > epsilon:
        noise += step
        step *= 2.0
    if key is not None:
        _calibration_cache[key] = noise
        if len(_calibration_cache) > _CACHE_SIZE:
            _calibration_cache.popitem(last=False)
    return noise
