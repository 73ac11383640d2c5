"""Privacy profile of private selection with a random number of runs.

The mechanism: run a base mechanism ``Q`` (here: fit a candidate and score
it with a noisy count) ``K`` times, ``K`` drawn from a public distribution and
kept secret, and release only the run with the best score (Liu & Talwar 2019;
Papernot & Steinke 2022). dp-accounting accounts it
(``RepeatAndSelectDpEvent``) with Renyi DP only. Koskela, Redberg and Wang
(ICML 2024) bound instead the *privacy profile* ``delta_A(epsilon)`` of the
selection by the privacy profile ``delta_Q`` of the base mechanism (the
hockey-stick divergence, which dp-accounting's PLD accountant computes), and
show that this is tighter than the RDP route. This module implements a bound
of that kind; its proof is given here in full so that it can be reviewed on
its own. No theorem number is claimed: the paper's statement could not be
consulted (searched again for issue 27: the stored copies of the paper hold
its abstract only, PMLR v235 ``koskela24a`` and arXiv 2402.06701, the
proceedings PDF is not readable here and no reference code of the authors
was found), so the bound below is derived and tested here, not checked
against theirs. Re-reviewed step by step for issue 27: the density of the
best of ``K`` runs, the use of ``phi'`` non-decreasing, the two event
inequalities (one per direction, which is why ``delta_Q`` must bound both
directions: dp-accounting's ``get_delta_for_epsilon`` is the maximum of the
remove and add divergences) and the two ratio bounds below.

**The bound.** Let ``P, P'`` be the output distributions of ``Q`` on
neighbouring datasets, ordered by the score (ties broken by an independent
uniform variable, which changes neither ``delta_Q`` nor the released
output), ``F(y) = P(<= y)``, ``S = 1 - F``, and ``phi(z) = E[z**K]``. The
released output has density ``phi'(F(y))`` with respect to ``P`` (the best
of ``K`` i.i.d. runs), so for
any ``epsilon``::

    H_{e^eps}(A || A') = int [phi'(F) dP - e^eps phi'(F') dP']_+
                      <= phi'(1) * H_{e^(eps - log R)}(P || P')

whenever ``phi'(F(y)) / phi'(F'(y)) <= R`` for every ``y`` (``phi'`` is
non-decreasing, so ``phi'(F) <= phi'(1) = E[K]``). The ratio is bounded with
the base profile itself: for every ``t >= 0``, ``F <= e^t F' + delta_Q(t)`` and
``S' <= e^t S + delta_Q(t)`` (events ``{score <= y}`` and ``{score > y}``).

* Truncated negative binomial of shape ``eta >= 0`` (``eta = 1`` geometric,
  ``eta = 0`` logarithmic) and parameter ``gamma``: ``phi'(z)`` is
  proportional to ``u(z)**-(eta + 1)`` with ``u = 1 - (1 - gamma) z =
  gamma + (1 - gamma) S >= gamma``, and ``u' <= e^t u + (1 - gamma)
  delta_Q(t)``, so ``log R = (eta + 1) log(e^t + (1 - gamma) delta_Q(t) /
  gamma)``.
* Poisson of mean ``mu``: ``phi'(z) = mu exp(mu (z - 1))`` and ``F - F' <=
  (e^t - 1) F' + delta_Q(t)``, so ``log R = mu (e^t - 1 + delta_Q(t))``.

* Binomial ``K ~ Bin(m, p)`` (issue 27; ``K = 0`` releases nothing, the
  same on both sides, which adds nothing to ``H`` at ``epsilon >= 0``):
  ``phi'(z) = m p (1 - p + p z)**(m - 1)`` and ``1 - p + p F <= e^t (1 - p +
  p F') + p delta_Q(t)``, so ``log R = (m - 1) log(e^t + p delta_Q(t) / (1 -
  p))`` and ``E[K] = m p`` (:func:`binomial_selection_delta`). Sound
  (brute-forced in the tests) but loose: for a Gaussian base of noise 2 or
  4 at delta 1e-5 it gives 20-35% more epsilon than the Poisson of the same
  mean with ``m = 2 E[K]`` and up to 2.5x with ``p = 0.9``, so the gain the
  paper reports for binomial runs needs its sharper analysis; not used by
  :class:`~dpestim.model_selection.PrivateSearchCV`.

Minimising over ``t`` gives ``L``, and the selection is ``(epsilon_Q(delta /
E[K]) + L, delta)``-DP, where ``epsilon_Q(d)`` is the base mechanism's
epsilon at ``d``. Both ``delta_Q`` and ``epsilon_Q`` come from dp-accounting's
PLD accountant (pessimistic discretisation: upper bounds), and every ``t`` of
the grid gives a valid bound, so the minimisation over a grid is
conservative. ``tests/privacy/test_repeat_select.py`` checks the bound
against the exact hockey-stick divergence of the selection of small discrete
mechanisms (randomized response and random pairs of distributions) and
against the RDP bound of dp-accounting.

References: A. Koskela, R. Redberg and Y.-X. Wang, "Privacy profiles for private
selection", ICML 2024, https://arxiv.org/abs/2402.06701.
N. Papernot and T. Steinke, "Hyperparameter tuning with Renyi differential
privacy", ICLR 2022.
"""

import math

import numpy as np
from dp_accounting import dp_event, pld
from dp_accounting.pld.common import DifferentialPrivacyParameters
from dp_accounting.rdp.rdp_privacy_accountant import (
    _gamma_truncated_negative_binomial,
)

from ._search import _root

__all__ = [
    "binomial_pgf",
    "binomial_ratio_bound",
    "binomial_selection_delta",
    "calibrate_selection",
    "pgf",
    "profile_epsilon",
    "ratio_bound",
    "selection_delta",
    "selection_epsilon",
]

#: Grid of the auxiliary epsilon ``t`` of the ratio bound (any point is valid).
_T_GRID = np.concatenate([[0.0], np.geomspace(1e-5, 30.0, 600)])
#: Discretisation of dp-accounting's PLD (pessimistic: an upper bound).
_PLD_INTERVAL = 1e-3


def _gamma(mean, shape):
    return float(_gamma_truncated_negative_binomial(shape, mean))


def pgf(z, mean, shape):
    """Probability generating function ``E[z**K]`` of the number of runs.

    The distributions of ``dp_accounting.RepeatAndSelectDpEvent(event, mean,
    shape)``: Poisson of mean ``mean`` for ``shape = inf``, else the
    negative binomial of shape ``shape`` truncated at ``K >= 1`` with mean
    ``mean`` (``shape = 0`` the logarithmic distribution). A ``mean <= 1``
    (finite shape) is the point mass at 1.

    Parameters
    ----------
    z : float or ndarray in [0, 1]
    mean : float
    shape : float

    Returns
    -------
    float or ndarray
    """
    z = np.asarray(z, float)
    if math.isinf(shape):
        return np.exp(mean * (z - 1.0))
    if mean <= 1.0:
        return z
    g = _gamma(mean, shape)
    if shape == 0:
        return np.log1p(-(1.0 - g) * z) / math.log(g)
    return ((1.0 - (1.0 - g) * z) ** -shape - 1.0) / (g**-shape - 1.0)


def ratio_bound(profile, mean, shape):
    """``L``: log of the bound on ``phi'(F) / phi'(F')`` (see the module).

    Parameters
    ----------
    profile : callable
        ``profile(t_array) -> delta_Q(t)`` (an upper bound on the base
        mechanism's privacy profile, both directions), vectorised.
    mean, shape : float
        Distribution of the number of runs (as ``RepeatAndSelectDpEvent``).

    Returns
    -------
    float
        ``L >= 0`` (``0`` for a single run).
    """
    if not math.isinf(shape) and mean <= 1.0:
        return 0.0
    d = np.minimum(np.asarray(profile(_T_GRID), float), 1.0)
    if math.isinf(shape):
        values = mean * (np.expm1(_T_GRID) + d)
    else:
        g = _gamma(mean, shape)
        values = (shape + 1.0) * np.log(np.exp(_T_GRID) + (1.0 - g) * d / g)
    return float(max(np.min(values), 0.0))


def _expected_runs(mean, shape):
    if not math.isinf(shape) and mean <= 1.0:
        return 1.0
    return float(mean)


def selection_delta(profile, epsilon, mean, shape):
    """Upper bound on ``delta_A(epsilon)`` of the selection.

    ``E[K] * delta_Q(epsilon - L)`` (capped at 1).

    Parameters
    ----------
    profile : callable
        ``profile(t_array) -> delta_Q(t)``, vectorised, defined for every
        real ``t`` that it is called with (``epsilon - L`` may be negative).
    epsilon : float
    mean, shape : float

    Returns
    -------
    float
    """
    shift = float(epsilon) - ratio_bound(profile, mean, shape)
    d = float(np.asarray(profile(np.array([shift])), float)[0])
    return min(1.0, _expected_runs(mean, shape) * d)


def binomial_pgf(z, m, p):
    """``E[z**K]`` of ``K ~ Bin(m, p)`` (``K = 0``: nothing released)."""
    return (1.0 - p + p * np.asarray(z, float)) ** int(m)


def binomial_ratio_bound(profile, m, p):
    """``L`` of the binomial number of runs (see the module)."""
    m, p = int(m), float(p)
    if not (m >= 1 and 0.0 < p < 1.0):
        raise ValueError(f"Binomial runs need m >= 1 and 0 < p < 1, got {m}, {p}.")
    if m == 1:
        return 0.0
    d = np.minimum(np.asarray(profile(_T_GRID), float), 1.0)
    values = (m - 1) * np.log(np.exp(_T_GRID) + p * d / (1.0 - p))
    return float(max(np.min(values), 0.0))


def binomial_selection_delta(profile, epsilon, m, p):
    """Upper bound on ``delta_A(epsilon)``, ``epsilon >= 0``, binomial runs.

    ``m p * delta_Q(epsilon - L)`` (capped at 1); ``profile`` as in
    :func:`selection_delta`.
    """
    if epsilon < 0:
        raise ValueError("binomial_selection_delta: epsilon must be >= 0.")
    shift = float(epsilon) - binomial_ratio_bound(profile, m, p)
    d = float(np.asarray(profile(np.array([shift])), float)[0])
    return min(1.0, int(m) * float(p) * d)


def _pld_of(event, neighbouring):
    acc = pld.PLDAccountant(
        neighboring_relation=_relation(neighbouring),
        value_discretization_interval=_PLD_INTERVAL,
    )
    if not acc.supports(event):
        raise ValueError(f"The PLD accountant does not support {event!r}.")
    return acc.compose(event)._pld


def _relation(neighbouring):
    from dp_accounting import NeighboringRelation

    if isinstance(neighbouring, NeighboringRelation):
        return neighbouring
    return {
        "add_or_remove_one": NeighboringRelation.ADD_OR_REMOVE_ONE,
        "replace_one": NeighboringRelation.REPLACE_ONE,
    }[neighbouring]


def _selection_parts(event, neighbouring):
    """``(base PLD, L, E[K])`` of a ``RepeatAndSelectDpEvent``."""
    mean, shape = float(event.mean), float(event.shape)
    base = _pld_of(event.event, neighbouring)
    return (
        base,
        ratio_bound(base.get_delta_for_epsilon, mean, shape),
        (_expected_runs(mean, shape)),
    )


def _selection_eps(parts, delta):
    base, shift, runs = parts
    level = min(float(delta) / runs, 1.0)
    return max(float(base.get_epsilon_for_delta(level)), 0.0) + shift


def selection_epsilon(event, delta, neighbouring="add_or_remove_one"):
    """Epsilon of a ``RepeatAndSelectDpEvent`` by the privacy-profile bound.

    Parameters
    ----------
    event : dp_accounting.RepeatAndSelectDpEvent
        The selection; its inner event must be supported by dp-accounting's
        PLD accountant.
    delta : float
    neighbouring : {"add_or_remove_one", "replace_one"}

    Returns
    -------
    float
        ``epsilon_Q(delta / E[K]) + L`` (``inf`` when unreachable).

    Raises
    ------
    ValueError
        If the inner event is not supported by the PLD accountant.
    """
    try:
        parts = _selection_parts(event, neighbouring)
    except (ZeroDivisionError, OverflowError):
        return math.inf
    return _selection_eps(parts, delta)


#: Shares of delta given to the selection when it is composed with other events.
_SPLITS = (0.5, 0.7, 0.8, 0.9, 0.95, 0.99)


def profile_epsilon(event, delta, neighbouring="add_or_remove_one"):
    """Epsilon of a selection, alone or composed with other mechanisms.

    ``event`` is a ``RepeatAndSelectDpEvent`` (:func:`selection_epsilon`) or
    a ``ComposedDpEvent`` of exactly one of them and of events that
    dp-accounting's PLD accountant supports (for example the refit of the
    selected candidate). The composition is the basic one: the selection at
    ``(epsilon_1, delta_1)`` and the rest, composed by the PLD accountant, at
    ``(epsilon_2, delta - delta_1)``, or the selection's canonical
    ``(epsilon_1, delta_1)`` pair composed with the rest's PLD by
    dp-accounting (optimal composition of an ``(epsilon_1, delta_1)``-DP
    mechanism), minimised over a few splits of delta.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        For any other event.
    """
    if isinstance(event, dp_event.RepeatAndSelectDpEvent):
        return selection_epsilon(event, delta, neighbouring)
    if not isinstance(event, dp_event.ComposedDpEvent):
        raise ValueError(f"profile_epsilon: not a selection: {event!r}.")
    selections = [
        e for e in event.events if isinstance(e, dp_event.RepeatAndSelectDpEvent)
    ]
    rest = [
        e for e in event.events if not isinstance(e, dp_event.RepeatAndSelectDpEvent)
    ]
    if len(selections) != 1:
        raise ValueError("profile_epsilon: needs exactly one selection event.")
    if not rest:
        return selection_epsilon(selections[0], delta, neighbouring)
    try:
        parts = _selection_parts(selections[0], neighbouring)
        other = _pld_of(dp_event.ComposedDpEvent(rest), neighbouring)
    except (ZeroDivisionError, OverflowError):
        return math.inf
    best = math.inf
    for share in _SPLITS:
        eps_sel = _selection_eps(parts, share * delta)
        # basic composition, and the optimal composition of the canonical
        # (eps_sel, share * delta) pair (which dominates every mechanism with
        # that guarantee) with the rest's PLD; both are valid, keep the smaller
        basic = eps_sel + max(
            float(other.get_epsilon_for_delta((1 - share) * delta)), 0
        )
        best = min(best, basic)
        if math.isfinite(eps_sel):
            canon = pld.privacy_loss_distribution.from_privacy_parameters(
                DifferentialPrivacyParameters(eps_sel, share * delta),
                value_discretization_interval=_PLD_INTERVAL,
            )
            joint = canon.compose(other)
            best = min(best, max(float(joint.get_epsilon_for_delta(delta)), 0.0))
    return best


def calibrate_selection(
    make_event,
    epsilon,
    delta,
    neighbouring="add_or_remove_one",
    *,
    rtol=1e-3,
    start=1.0,
    max_noise=1e6,
):
    """Smallest noise (to ``rtol``) whose selection meets ``(epsilon, delta)``.

    ``make_event(noise)`` returns an event accepted by
    :func:`profile_epsilon`. The root is found on :func:`profile_epsilon`
    and the returned noise is checked with it (and increased until it
    passes): the result always meets the budget.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If no noise up to ``max_noise`` meets the budget.
    """
    cache = {}

    def f(s):
        if s not in cache:
            cache[s] = profile_epsilon(make_event(s), delta, neighbouring)
        return cache[s]

    noise = _root(f, epsilon, start, rtol, max_noise)
    if noise is None:
        raise ValueError(
            f"No noise multiplier up to {max_noise:g} meets epsilon={epsilon} "
            f"at delta={delta} (privacy-profile bound of the selection)."
        )
    for _ in range(60):
        if f(noise) <= epsilon:
            return float(noise)
        noise *= 1.0 + rtol
    raise ValueError("calibrate_selection: could not verify the noise.")
