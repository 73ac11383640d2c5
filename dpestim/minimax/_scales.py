"""The policy step of the minimax estimators: private scales before the solver.

The step of :mod:`dpestim.linear_model._scales` (one place for the plan, the
row scale and the report line), run by
:class:`~dpestim.minimax._base.BaseMinimaxModel` between validation and the
saddle solver: the draws take ``scale_share`` of ``epsilon`` first (charged
before they read the data), the proportions and the solver share the rest,
and the draws' events are composed into ``dp_event_`` (basic composition).
"""

import math
import threading
from dataclasses import replace
from types import SimpleNamespace

import dp_accounting

from ..linear_model._scales import PrivateScalesMixin
from ..preprocessing import _fit_scales as _scales
from ..privacy import check_guarantee
from ..privacy.charging import FitCharge, charge_fit
from ..privacy.ledger import composed_epsilon
from ..solvers.saddle.sgda import NoisySGDA

__all__ = ["MinimaxScalesMixin"]

#: The working state of the fits running in each thread, by estimator id: not
#: an attribute of the estimator (nothing private is left on it, and fits of
#: one object from several threads do not share it).
_LOCAL = threading.local()


class MinimaxScalesMixin(PrivateScalesMixin):
    """Private row scale (all) and target range (the regressor)."""

    #: ``epsilon = inf``: the row scale is the grid bin of the 90th percentile
    #: of each row's largest ``|x_ij|``, brought to ``feature_bound``: at most
    #: a tenth of the rows have a coordinate clipped, and the non-private fit
    #: is the saddle point of the problem on ``X / s`` (its ``feature_bound``
    #: and ``l1_radius``), the same at any feature scale. ``s = 1`` (before)
    #: put ``MinimaxLogisticRegression`` on Adult ``X x 0.01`` at the
    #: majority rate and let ``MinimaxRegressor`` diverge on California ``X x
    #: 100``. Quantiles 0.5 / 0.9 / 0.99 / 1 at ``X x 1``
    #: (``benchmarks/utility/minimax_scale.py --epsilon inf``, scratch):
    #: California after StandardScaler R^2 0.645 / 0.675 / 0.670 / 0.213,
    #: Adult after StandardScaler 0.843 / 0.843 / 0.818 / 0.764 (the maximum
    #: is an outlier's: one-hot columns of rare categories reach 173), as
    #: loaded equal; private fits keep the median (a 90th percentile needs
    #: five times the budget for the same reliability).
    _exact_row_quantile = 0.9
    #: The row scale of the minimax estimators: the median of each row's
    #: largest ``|x_j|`` brought to ``feature_bound`` (they clip every
    #: coordinate at ``feature_bound``, an L-inf bound). The L2 median at 2.95
    #: clipped dense low-dimensional rows (``MinimaxRegressor`` at epsilon 1,
    #: 3 seeds: 3 uniform features R^2 0.803 -> 0.905; California after
    #: StandardScaler 0.595 -> 0.642; Adult and COMPAS as loaded within
    #: 0.002; benchmarks/utility/minimax_scale.py, results/minimax_scale.md).
    _row_statistic = (_scales.row_max_abs, "row max |x_j|")
    #: ``feature_centring`` is opt-in here (``True``; no ``"auto"``): it made
    #: ``FairLogisticRegression``'s equalized-odds fits on COMPAS fall to a
    #: constant (see ``feature_centring`` in the estimators' docstrings).
    _centring_default = False

    @property
    def _fs(self):
        """This thread's working state of the running fit."""
        states = _LOCAL.__dict__.setdefault("states", {})
        return states.setdefault(id(self), SimpleNamespace())

    def _end_fit_state(self):
        """Drop the working state (at the end of ``fit``, however it ends)."""
        _LOCAL.__dict__.get("states", {}).pop(id(self), None)

    def _rows_estimated(self, blocked):
        """The row scale is estimated with ``feature_scale="auto"``."""
        return isinstance(self.feature_scale, str) and self.feature_scale == "auto"

    def _scale_target(self, target):
        """Hook of the regressor (its ``target_bound="auto"``); identity here."""
        return target

    def _check_epsilon(self, n, solver):
        """The utility check's epsilon (the classifiers: ``._check``); none."""
        return None

    def _run_utility_check(self, rng):
        """The classifiers' check, after the fit (``._check``); nothing here."""

    def _budget(self):
        """``(epsilon, delta)`` left to the proportions and the solver."""
        return float(self.epsilon) - self._fs.scale_plan.epsilon, float(self.delta)

    def _run_scales(self, X, y, target, solver, rng):
        """Plan, charge and run the estimates; ``(X', target', s, c, sigma,
        notes)`` with ``X' = (X - c) / sigma / s``: the linear estimators'
        column balance (``feature_balance``; every coordinate is clipped at
        ``feature_bound``, so a column in its own units, Adult's ``fnlwgt``,
        would set the row unit alone), on the rows as given, or after their
        in-fit centring with ``feature_centring=True``; then the row unit
        ``s``. ``c`` / ``sigma`` are ``None`` when not run or nothing was
        moved."""
        n, d = X.shape
        self._fs.scale_plan = plan = self._plan_scales(n, y, False)
        if self._centring_requested():
            self._plan_centring(plan, n, d, False, False, solver)
        else:
            self._plan_balance_as_given(plan, n, solver)
        # the classifiers' utility check, reserved and charged with them
        plan.check_epsilon = self._check_epsilon(n, solver)
        events = plan.events()
        if events:
            charge_fit(
                FitCharge(
                    dp_accounting.ComposedDpEvent(events),
                    solver.neighbouring,
                    f"{type(self).__name__}(scale estimates, n={n})",
                )
            )
        self._fs.scale_fit = (plan, rng)
        X_given = X
        if self._centring_requested():
            X, centre, sigma, notes = self._apply_centring(X, plan, rng)
        else:
            centre = None
            X, _, sigma, notes = self._apply_balance_as_given(X, plan, rng)
        X, row_scale, scale_notes = self._apply_feature_scale(
            X,
            plan,
            rng,
            target=float(self.feature_bound),
            owned=X is not X_given,  # a centred or balanced copy
        )
        self._fs.target_notes = {}
        target = self._scale_target(target)
        self._fs.scale_fit = None
        notes = {**notes, **scale_notes, **self._fs.target_notes}
        return X, target, row_scale, centre, sigma, notes

    def _whole_epsilon(self, solver, solver_event, solver_epsilon):
        """Epsilon of the estimates composed with the solver's run: basic
        composition, or dp-accounting's composition of the whole event where
        it is smaller (noisy-sgda's RDP event with a Laplace count among the
        estimates; dp-smd's filter has no dp-accounting event: basic)."""
        plan = self._fs.scale_plan
        basic = plan.epsilon + solver_epsilon
        if not plan.events() or not isinstance(solver, NoisySGDA):
            return float(basic)
        try:
            accounted = composed_epsilon(
                [dp_accounting.ComposedDpEvent([*plan.events(), solver_event])],
                float(self.delta),
                "rdp",
                solver.neighbouring,
            )
        except (ValueError, TypeError, NotImplementedError):
            accounted = math.inf
        return float(min(basic, accounted))

    def _compose_estimates(self, solver, notes):
        """The estimates' events composed into ``dp_event_``, ``epsilon_``, report.

        The smaller of basic composition (the draws' epsilons plus the
        solver's) and dp-accounting's bound (:meth:`_whole_epsilon`), at most
        the request (the solver was given the rest).
        """
        plan = self._fs.scale_plan
        events = plan.events()
        if events:
            event = dp_accounting.ComposedDpEvent([*events, self.dp_event_])
            total = self._whole_epsilon(solver, self.dp_event_, self.epsilon_)
            check_guarantee(total, float(self.epsilon), what=f"solver={solver.name!r}")
            self.epsilon_ = float(total)
            self.dp_event_ = event
            self._report = replace(
                self._report,
                epsilon=self.epsilon_,
                dp_event=event,
                composition=self._report.composition
                + "; after the private scale estimates (basic composition)",
                estimates=_scales.estimates_line(plan, self.epsilon),
            )
        if notes:  # beside the solver's own entry (solver="auto")
            self.hyperparameters_ = {**getattr(self, "hyperparameters_", {}), **notes}
            self._report = replace(
                self._report, hyperparameters=dict(self.hyperparameters_)
            )
