"""Search over ``solver`` in :class:`PrivateSearchCV`: checks and calibration.

A candidate draws its solver from a public list (public coins, like its
other hyperparameters) and runs it with that solver's noise multiplier: a
mixture of mechanisms, whose RDP at each order is at most the largest of the
listed solvers' (:mod:`dpestim.privacy.mixture`). The search's event is
``RepeatAndSelectDpEvent(MaxRdpDpEvent([inner_1, ..., inner_m]), mean,
shape)``, ``inner_i`` one candidate with solver ``i``, accounted by
dp-accounting's repeat-and-select theorem on the pointwise-max curve.

Calibration: each solver ``i`` gets the noise ``s_i(t)`` with which the
search run with solver ``i`` alone meets ``(t, delta)``; the common target
``t <= epsilon`` is shrunk until the mixed search meets ``(epsilon,
delta)`` (its epsilon grows with ``t``: a bracket by rescaling, then regula
falsi on one scalar), verified by the accountant on the exact event.
"""

import math

import dp_accounting
from dp_accounting import dp_event
from sklearn.base import clone

from ..preprocessing._scale_plan import _pure_epsilon
from ..privacy import calibrate_noise, compute_epsilon
from ..privacy.charging import _targets
from ..privacy.mixture import MaxRdpDpEvent
from ..solvers import SOLVERS, resolve_solver
from ._search_rules import _final_private_step

__all__ = [
    "SearchEvents",
    "calibrate_mixture",
    "search_report",
    "searched_solvers",
    "solver_key",
]

#: Relative precision of the common target ``t`` (and step under a rescaling).
_TARGET_RTOL = 1e-3
#: Relative shortfall of the search's epsilon at which ``t`` is good enough.
_EPS_RTOL = 2e-3
#: Rescalings of ``t`` before giving up (each one costs a calibration per solver).
_MAX_STEPS = 30


def solver_key(estimator):
    """The name of the final private step's ``solver`` in a search space."""
    if hasattr(estimator, "steps"):
        return f"{estimator.steps[-1][0]}__solver"
    return "solver"


def searched_solvers(search, space):
    """The listed solvers of a search over ``solver`` (``None`` if none).

    Checked before any draw or read of the data: a list of registered names
    (not ``"auto"``, not solver objects) that the estimator accepts, for its
    loss, under one neighbouring relation; the RDP accountant (the profile
    bound does not cover mixtures) and a budget that composes with RDP.
    """
    key = solver_key(search.estimator)
    if key not in space:
        return None
    names = space[key]
    if isinstance(names, str) or hasattr(names, "rvs"):
        names = None
    else:
        names = list(names)
    if not names or not all(isinstance(n, str) for n in names):
        raise ValueError(
            f"param_distributions[{key!r}] must be a non-empty list of solver "
            f"names (one of {sorted(SOLVERS)}), got {space[key]!r}."
        )
    step = _final_private_step(search.estimator)
    relations = {}
    for name in names:
        if name not in SOLVERS:
            raise ValueError(
                f"param_distributions[{key!r}]: {name!r} is not a registered "
                f"solver; list names among {sorted(SOLVERS)} ('auto' is not "
                "searched: name the solvers)."
            )
        clone(step).set_params(solver=name)._validate_params()
        loss = getattr(step, "_loss_name", None)
        if isinstance(loss, str):
            resolve_solver(name).check_loss(loss)
        relations.setdefault(SOLVERS[name].neighbouring, []).append(name)
    if len(relations) > 1:
        raise ValueError(
            f"param_distributions[{key!r}] mixes neighbouring relations "
            f"({relations}): a search over solvers needs every listed solver "
            "under one relation."
        )
    if search.accountant in ("profile", "pld"):
        raise ValueError(
            f"accountant={search.accountant!r} cannot account a search over "
            "solvers (the privacy-profile bound does not cover a mixture of "
            "mechanisms); use accountant='rdp' or 'auto'."
        )
    budgets = [search.budget] + list(_targets())
    for budget in budgets:
        if getattr(budget, "accountant", "rdp") != "rdp":
            raise ValueError(
                "A search over solvers can be charged only to a PrivacyBudget "
                "with accountant='rdp' (its event has no PLD), got "
                f"accountant={budget.accountant!r}."
            )
    return tuple(dict.fromkeys(names))


def calibrate_mixture(search, make_alone, make_total, arms, relation, spent=()):
    """Noise multiplier of each solver of a search over solvers.

    Parameters
    ----------
    search : PrivateSearchCV
    make_alone : callable
        ``make_alone(arm, noise)``: the search's event with that solver alone.
    make_total : callable
        ``make_total({arm: noise})``: the event of the search over solvers.
    arms : sequence of str
    relation : str
    spent : sequence of DpEvent
        Earlier events of the budget the search spends the rest of
        (``epsilon=None``); the target is then the budget's epsilon.

    Returns
    -------
    noises : dict
        ``arm -> noise multiplier``, at which the epsilon of ``spent`` and
        ``make_total(noises)`` composed is at most the target (checked).
    """
    if search.epsilon is not None:
        target, delta = float(search.epsilon), float(search.delta)
    else:
        target, delta = float(search.budget.epsilon), float(search.budget.delta)

    def at(t):
        noises = {
            arm: calibrate_noise(
                lambda s, arm=arm: make_alone(arm, s),
                t,
                delta,
                accountant="rdp",
                neighbouring=relation,
                cache_key=("PrivateSearchCV", repr(make_alone(arm, 1.0))),
            )
            for arm in arms
        }
        event = dp_accounting.ComposedDpEvent(list(spent) + [make_total(noises)])
        return compute_epsilon(event, delta, "rdp", relation), noises

    # The mixed search's epsilon e(t) grows with t, close to proportionally
    # when alone. Bracket the largest t with e(t) <= target (rescale t by
    # target / e, squared once it missed), then regula falsi inside the
    # bracket until e(lo) is within _EPS_RTOL of the target or the bracket
    # is _TARGET_RTOL wide. Every returned noise is one checked by ``at``.
    hi, e_hi = None, None
    t, lo = target, None
    for step in range(_MAX_STEPS):
        eps, noises = at(t)
        if eps <= target:
            lo, e_lo, best = t, eps, noises
            if hi is None or eps >= target * (1 - _EPS_RTOL):
                return best
        else:
            hi, e_hi = t, eps
        if hi is not None and lo is not None and hi / lo <= 1 + _TARGET_RTOL:
            return best
        if lo is None:  # no point under the target yet
            power = 1 if step == 0 else 2
            ratio = (target / eps) ** power if math.isfinite(eps) else 0.25
            t *= min(ratio, 1.0) * (1 - _TARGET_RTOL)
            continue
        aim = target * (1 - _EPS_RTOL / 2)
        t = lo + (aim - e_lo) * (hi - lo) / (e_hi - e_lo)
        t = min(max(t, lo * (1 + _TARGET_RTOL / 2)), hi / (1 + _TARGET_RTOL / 2))
    if lo is not None:
        return best
    raise ValueError(
        f"The search over solvers cannot meet epsilon={target:g} "
        f"(delta={delta:g}); increase epsilon or list fewer solvers."
    )


class SearchEvents:
    """The search's ``DpEvent`` as a function of the arms' noise multipliers.

    ``charges[arm]``: the probed charges of one candidate with that arm's
    solver (``None``: the estimator's own), the last one the model's;
    ``full[arm]``: the same on all the rows (the refit), or ``None``.
    """

    def __init__(self, charges, score_event, mean, shape, full=None):
        self.charges, self.score_event, self.full = charges, score_event, full
        self.mean, self.shape = mean, shape

    @staticmethod
    def _events(charges, noise):
        """The probed ``charges`` in order, the model's at ``noise``."""
        return [c.dp_event for c in charges[:-1]] + [charges[-1].make_event(noise)]

    def fit(self, arm, noise):
        """The events one candidate of ``arm`` charges, in order."""
        return self._events(self.charges[arm], noise)

    def refit(self, arm, noise):
        """The events of the refit of ``arm`` on all the rows."""
        return self._events(self.full[arm], noise)

    def _inner(self, arm, noise):
        return dp_accounting.ComposedDpEvent(self.fit(arm, noise) + [self.score_event])

    def __call__(self, noises):
        """The search's event; with a solver list, the max-curve mixture."""
        if len(noises) == 1:
            ((arm, s),) = noises.items()
            event = dp_event.RepeatAndSelectDpEvent(
                self._inner(arm, s), self.mean, self.shape
            )
            if self.full is None:
                return event
            return dp_accounting.ComposedDpEvent([event] + self.refit(arm, s))
        mixture = MaxRdpDpEvent([self._inner(a, s) for a, s in noises.items()])
        event = dp_event.RepeatAndSelectDpEvent(mixture, self.mean, self.shape)
        if self.full is None:
            return event
        # the refit runs the selected solver: adaptive, bounded by the max curve
        refits = [
            dp_accounting.ComposedDpEvent(self.refit(a, s)) for a, s in noises.items()
        ]
        return dp_accounting.ComposedDpEvent([event, MaxRdpDpEvent(refits)])


def _estimated(search):
    """The names of what the search estimated (public: its plan)."""
    given = next(iter(search._scales.values()))
    return ", ".join(
        {
            "feature_centring": "column means",
            "feature_balance": "column scales",
            "feature_scale": "row scale",
            "y_bound": "target range",
            "class_prior": "class proportions",
            "class_weight": "balanced class weights",
        }[k]
        for k in given
        if k != "classes"
    )


def search_report(search):
    """The text of ``PrivateSearchCV.privacy_report``."""
    selection = search.dp_event_
    scale = ""
    if isinstance(selection, dp_accounting.ComposedDpEvent) and isinstance(
        selection.events[0], dp_accounting.ComposedDpEvent
    ):  # the search's private scale estimates, then the selection
        estimates = selection.events[0].events
        e0 = sum(map(_pure_epsilon, estimates))
        scale = (
            f" The estimator's private scales ({len(estimates)} pure-DP draws "
            f"of total epsilon {e0:.4g}: {_estimated(search)}) were estimated "
            "once before the candidates; every candidate fitted in their "
            "units, given them as public values; their epsilon is added to "
            "the selection's (basic composition)."
        )
        selection = selection.events[1]
    if isinstance(selection, dp_accounting.ComposedDpEvent):
        selection = selection.events[0]
    inner, solvers = selection.event, getattr(search, "noise_multipliers_", None)
    if isinstance(inner, MaxRdpDpEvent):
        inner = inner.events[0]
    score = inner.events[-1]
    refit = "; its parameters refitted on all the rows" if search.refit else ""
    fitted = f"fitted with noise multiplier {search.noise_multiplier_:.4g}"
    if solvers:
        fitted = (
            "fitted by a solver drawn uniformly from a public list, with its "
            "noise multiplier ("
            + ", ".join(f"{a}: {s:.4g}" for a, s in solvers.items())
            + "; RDP of the mixture at most the pointwise max of the "
            "solvers' curves)"
        )
    how = (
        "RDP accountant of dp-accounting"
        if search.accountant_ == "rdp"
        else "privacy-profile bound of Koskela, Redberg & Wang on dp-accounting's PLD"
    )
    return (
        "PrivateSearchCV (Papernot & Steinke 2022): secret random number of "
        f"candidates, {search.distribution} distribution of mean "
        f"{float(search.n_candidates):g}; each candidate {fitted} and scored "
        f"by a Gaussian noisy count (noise std {score.noise_multiplier:.4g}); "
        f"only the best is released{refit}.{scale}"
        f"\nEvent: {search.dp_event_!r}\nGuarantee: "
        f"epsilon={search.epsilon_:.4g}, delta={search.delta_:g} ({how}, "
        f"{search._relation.replace('_', ' ')} neighbouring)."
    )
