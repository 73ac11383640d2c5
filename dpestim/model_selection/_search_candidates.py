"""The pieces of :class:`PrivateSearchCV` around one candidate.

A mixin: how a candidate is built (its own random stream), probed (its
mechanism read, nothing run), checked (a searched parameter must not move
the ``DpEvent``), scored (per-example scores of sensitivity 1) and the
noise of its score. :mod:`dpestim.model_selection._search` runs the search.
"""

import dataclasses

import numpy as np
from dp_accounting import dp_event
from sklearn.base import clone, is_classifier

from ..linear_model._scales import in_auto_units
from ..privacy import calibrate_noise
from ._search_rules import (
    _SHAPES,
    _final_private_step,
    _private_steps,
    _probe_charges,
    _probe_values,
)
from ._solver_search import solver_key
from ._space import resolve_relative

__all__ = []


def require_error_bound(estimator, error_bound):
    """Refuse to score a regressor without a public ``error_bound`` (public:
    checked before anything is charged or read)."""
    if not is_classifier(estimator) and error_bound is None:
        raise ValueError(
            "error_bound must be given (a public bound on the squared error) "
            "to score a regressor privately."
        )


class CandidateMixin:
    """Candidates of :class:`PrivateSearchCV`: build, probe, check, score."""

    def _shape(self):
        if self.distribution == "negative-binomial":
            return float(self.shape)
        return _SHAPES[self.distribution]

    def _candidate(self, params, seed=None):
        """A candidate; ``seed`` (a ``SeedSequence``) drives all its noise."""
        est = clone(self.estimator).set_params(**params)
        _final_private_step(est).set_params(epsilon=None)
        if self._in_search_units(est):
            # the search's private scales (DP releases): public values for
            # the candidate, whose clip norm is then in their units; in a
            # search over solvers, the row scale of the candidate's solver
            scales = self._scales
            arm = None if None in scales else params[solver_key(self.estimator)]
            est.set_params(**scales[arm])
        if seed is not None:
            # RepeatAndSelect needs independent runs: every private step of
            # every candidate gets its own stream, spawned from the search's
            # SeedSequence (an estimator's own random_state is overridden).
            for step in _private_steps(est):
                child = seed.spawn(1)[0]
                step.set_params(
                    random_state=np.random.Generator(np.random.PCG64(child))
                )
        return est

    def _probe(self, params, X, y, nm):
        """Charges of one candidate's fit, stopped before its model runs."""
        est = self._candidate(params)
        _final_private_step(est).set_params(noise_multiplier=nm)
        charges = _probe_charges(est, X, y)
        if not charges or charges[-1].make_event is None:
            raise TypeError("PrivateSearchCV: the estimator announced no private fit.")
        return charges

    def _check_mechanism_fixed(self, space, charges, X, y, drop=False, base=None):
        """Refuse, whatever the draw, a searched parameter that moves the DpEvent.

        Some parameters change the mechanism only with some solvers (the
        learning rate sets the noise of ``adp-sgd`` and the schedule of
        ``dp-nag-opt``; ``alpha`` or ``fit_intercept`` can set an ``"auto"``
        number of steps). Each searched parameter is probed (nothing runs)
        at values that do not depend on the random draw: every listed value,
        or the 0.001, 0.5 and 0.999 quantiles of a distribution. With
        ``drop=True`` (the default space) such a parameter is left out of
        the space instead (a public rule: solver, n, d); returns the space.
        ``base``: parameters every probe sets (a listed solver).
        """
        base = base or {}
        expected = [c.dp_event for c in charges]
        kept = dict(space)
        for name in sorted(space):
            for value in _probe_values(space[name]):
                params = resolve_relative(
                    {name: value}, charges[-1].plan, self.estimator
                )
                probed = self._probe({**base, **params}, X, y, 1.0)
                if [c.dp_event for c in probed] != expected and drop:
                    kept.pop(name)
                    break
                if [c.dp_event for c in probed] != expected:
                    step = _final_private_step(self.estimator)
                    solver = step.get_params(deep=False).get("solver")
                    solver = next(iter(base.values()), solver)
                    raise ValueError(
                        f"PrivateSearchCV cannot search {name!r} with "
                        f"{type(step).__name__}(solver={solver!r}): its value "
                        "changes the mechanism's DpEvent (e.g. "
                        f"{name}={params[name]!r}). "
                        "Fix it on the estimator (or set max_iter and batch_size "
                        "explicitly when an 'auto' schedule depends on it)."
                    )
        if not kept:
            raise ValueError(
                "PrivateSearchCV: every parameter of the default space changes "
                "the mechanism's DpEvent with this solver; give "
                "param_distributions."
            )
        return kept

    def _delta(self):
        return float(self.delta if self.epsilon is not None else self.budget.delta)

    def _restore_random_state(self, est):
        """Give ``est``'s steps back the estimator's own ``random_state``.

        A released model must not carry the stream of its noise: its state
        would let anyone regenerate the noise and subtract it.
        """
        for step, own in zip(_private_steps(est), _private_steps(self.estimator)):
            step.set_params(random_state=own.get_params(deep=False)["random_state"])
        if self._in_search_units(est):
            # the estimator's own values (its fitted feature_scale_,
            # feature_centre_, feature_balance_ and y_bound_ are the search's
            # releases)
            keys = next(iter(self._scales.values()))
            given = est.get_params(deep=False)
            own = self.estimator.get_params(deep=False)
            est.set_params(**{k: own[k] for k in keys})
            _name_search_estimates(est, {k: given[k] for k in keys})

    def _in_search_units(self, est):
        """Whether candidate ``est`` runs on the search's rescaled rows.

        The estimator's own rule (``_rows_estimated``): when the search
        estimated its scales and the candidate's clip norm is ``"auto"`` or
        :class:`~dpestim.model_selection.AutoUnits` (a drawn number is in
        the units of ``X``: that candidate keeps ``X``'s rows, as the
        estimator itself would; its ``DpEvent`` is the same).
        """
        if getattr(self, "_scales", None) is None:
            return False
        return in_auto_units(est.get_params(deep=False).get("clip_norm"))

    def _scores(self, est, X, y):
        """Per-example scores in [0, 1] (their sum has sensitivity 1)."""
        pred = est.predict(X)
        if is_classifier(est):
            return (pred == y).astype(float)
        require_error_bound(est, self.error_bound)
        b = float(self.error_bound)
        return 1.0 - np.minimum((np.asarray(y, float) - pred) ** 2, b) / b

    def _score_sigma(self, n_val):
        """Noise std of the summed validation score (its sensitivity is 1)."""
        if self.score_noise != "auto":
            return float(self.score_noise) * n_val
        if self.epsilon is not None:
            eps, delta = float(self.epsilon), float(self.delta)
        elif self.budget is not None:
            eps, delta = self.budget.remaining(), self.budget.delta
        else:
            raise ValueError(
                "epsilon=None spends the rest of budget=, and none was given: "
                "pass the PrivacyBudget as budget= (an active `with budget:` "
                "block is charged, but the search does not read its rest)."
            )
        if not eps > 0:
            raise ValueError(
                "epsilon=None spends the rest of budget=, which must be a "
                "PrivacyBudget with epsilon left."
            )
        return calibrate_noise(
            dp_event.GaussianDpEvent,
            eps / 10,
            delta,
            cache_key=("GaussianDpEvent",),
        )


#: The released model's notes on the search's estimates, which it was given
#: as public parameters.
_SEARCH_NOTES = {
    "feature_centring": "the search's private column means",
    "feature_balance": "the search's private column scales",
    "feature_scale": "the search's private median row norm",
    "y_bound": "the search's private target range",
    "class_prior": "the search's private class proportions",
    "class_weight": "balanced, from the search's private class counts",
}


def _name_search_estimates(est, given, who="PrivateSearchCV"):
    """Say in a fitted model's ``hyperparameters_`` which of its public
    parameters were the search's private estimates (``given``: name ->
    the value it was given; ``None`` or 1 are not estimates)."""
    notes = getattr(est, "hyperparameters_", None)
    if notes is None:
        return
    for key, value in given.items():
        if key not in _SEARCH_NOTES:  # e.g. classes, sorted: not an estimate
            continue
        if value is not None and not (key == "feature_scale" and value == 1.0):
            notes[key] = f"{_SEARCH_NOTES[key]} ({who})"
    report = getattr(est, "_report", None)
    if report is not None and hasattr(report, "hyperparameters"):
        est._report = dataclasses.replace(report, hyperparameters=dict(notes))


def quiet(estimator):
    """``estimator`` with every ``verbose`` parameter (nested too) set to 0."""
    off = {
        k: False if isinstance(v, bool) else 0
        for k, v in estimator.get_params(deep=True).items()
        if k == "verbose" or k.endswith("__verbose")
    }
    return estimator.set_params(**off) if off else estimator


def state_search_guarantee(best, event, epsilon, delta, accountant):
    """The released model states the search's guarantee, not its own fit's.

    ``epsilon_`` / ``delta_`` / ``dp_event_`` of the selected (or refitted)
    dpestim step become the whole search's (candidates, noisy scores, refit,
    row scale), and its privacy report says so, with its own fit's epsilon
    beside: a user who ships ``best_estimator_`` ships the search's release.
    """
    step = _final_private_step(best)
    own = getattr(step, "epsilon_", None)
    step.epsilon_, step.delta_, step.dp_event_ = epsilon, delta, event
    report = getattr(step, "_report", None)
    if report is None or not hasattr(report, "composition"):
        return
    note = (
        f"selected by PrivateSearchCV: the guarantee is the whole search's "
        f"(its candidates, noisy validation scores and refit, {accountant}); "
        + (f"this model's own fit alone is epsilon {own:.6g}; " if own else "")
        + f"its own steps: {report.composition}"
    )
    step._report = dataclasses.replace(
        report,
        epsilon=float(epsilon),
        delta=float(delta),
        dp_event=event,
        accountant=f"{accountant} (PrivateSearchCV)",
        composition=note,
    )
