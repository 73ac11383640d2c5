"""Shared machinery of the private minimax / fairness estimators.

These estimators solve a saddle point ``min_theta max_lam E f(theta, lam; z)``.
With the default solver ``"auto"``, i.e. ``"noisy-sgda"``
(:mod:`dpestim.solvers.saddle.sgda`)
``theta`` is unconstrained and the dual lives on group weights or bounded
multipliers (add/remove neighbouring, Gaussian, dp_accounting); with the
vertex-sampling solvers of :mod:`dpestim.solvers.saddle` ``theta`` is on the
l1-ball of radius ``l1_radius`` (lifted to a simplex of ``2 p`` vertices) and
``lam`` on a simplex (replace-one). Everything the privacy guarantee depends
on is public: ``l1_radius``, ``feature_bound`` (features are clipped to it),
``target_bound``, the group list, the group proportions' floor and the
solvers' parameters.
"""

import dataclasses
import math
from numbers import Real

import dp_accounting
import numpy as np
from dp_accounting import GaussianDpEvent
from sklearn.base import BaseEstimator, _fit_context
from sklearn.utils._param_validation import Interval, Options, StrOptions
from sklearn.utils.validation import check_is_fitted

from ..exceptions import FitDivergedError, PrivacyBudgetWarning, PrivacyLeakWarning
from ..losses import SQUARED
from ..preprocessing import _fit_scales as _scales
from ..privacy import PrivacyReport, calibrate_noise, check_guarantee, compute_epsilon
from ..privacy.charging import FitCharge, charge_fit
from ..privacy.report import seed_warnings
from ..solvers._auto import SADDLE_AUTO
from ..solvers.saddle import (
    MAX_SCORE_BOUND,
    BaseSaddleSolver,
    SaddlePlan,
    plan_saddle,
    resolve_saddle_solver,
)
from ..solvers.saddle._sgda_kernels import DUAL_WEIGHTS
from ..solvers.saddle.sgda import NoisySGDA, SGDAPlan
from ..utils import check_generator
from ..utils.fit_warnings import collect_fit_warnings, warn_in_fit
from ..utils.validation import validate_private_data
from ._proportions import GroupProportionsMixin
from ._scales import MinimaxScalesMixin

#: Largest public Lipschitz constant: the step sizes scale with its inverse.
_MAX_LIPSCHITZ = 1e200
#: Parameters the Lipschitz constants depend on (named in errors).
_BOUND_PARAMS = (
    "l1_radius",
    "feature_bound",
    "target_bound",
    "multiplier_bound",
    "difference_bound",
    "min_group_proportion",
    "group_proportions",
)

__all__ = ["BaseMinimaxModel"]

# Solvers that run on linear-model saddle problems (dp-sgda is games only).
_LINEAR_SOLVERS = ("noisy-sgda", "dp-smd", "dp-smd-br")


def _is_missing(value):
    """``None``, a float NaN, NaT or ``pandas.NA`` (which refuses ``bool``)."""
    if value is None:
        return True
    try:
        return bool(value != value)
    except (TypeError, ValueError):
        return True


def _sensitive_codes(sensitive_features, n):
    a = np.asarray(sensitive_features, dtype=object)
    if a.size and any(_is_missing(v) for v in a.ravel()):
        # a missing label would silently become a group of its own ("nan");
        # the message names no value (the labels are private)
        raise ValueError(
            "sensitive_features has missing values (None / NaN): give those "
            "rows a group label of their own (e.g. 'unknown') or drop them."
        )
    if a.ndim == 2:
        a = np.array(["|".join(map(str, row)) for row in a], dtype=object)
    if a.ndim != 1 or a.shape[0] != n:
        raise ValueError(
            f"sensitive_features must have one entry (or row) per sample: expected "
            f"{n}, got shape {np.shape(sensitive_features)}."
        )
    return a


class BaseMinimaxModel(MinimaxScalesMixin, GroupProportionsMixin, BaseEstimator):
    """Parameters, group handling, privacy budget and fitting.

    Subclasses implement ``_encode_target(y)``, ``_n_cells(n_groups)``,
    ``_cells(codes, target)`` (the cells whose proportions are needed, e.g.
    groups or group x label) and ``_problem(Xc, target, cells, pi, pi_min)``
    returning ``(LinearSaddleProblem, L0, L1, L2)``, and ``_release(x, y)``
    setting the fitted attributes from the solver's released output.
    """

    _parameter_constraints = {
        "epsilon": [
            Interval(Real, 0, None, closed="neither"),
            Options(Real, {math.inf}),
        ],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "l1_radius": [Interval(Real, 0, MAX_SCORE_BOUND, closed="right")],
        "feature_bound": [Interval(Real, 0, MAX_SCORE_BOUND, closed="right")],
        "fit_intercept": ["boolean"],
        "groups": ["array-like", None],
        "group_proportions": [StrOptions({"uniform", "private"}), "array-like"],
        "proportions_budget": [Interval(Real, 0, 1, closed="neither")],
        "min_group_proportion": [Interval(Real, 0, 1, closed="right"), None],
        "solver": [StrOptions({*_LINEAR_SOLVERS, "auto"}), BaseSaddleSolver],
        "random_state": ["random_state", np.random.Generator],
        "feature_scale": [
            StrOptions({"auto"}),
            Interval(Real, 0, None, closed="neither"),
            None,
        ],
        "scale_share": [Interval(Real, 0, 1, closed="neither")],
        "feature_centring": ["boolean", None],
        "feature_balance": [StrOptions({"auto"}), "boolean", None],
    }

    def __init__(
        self,
        *,
        epsilon=1.0,
        delta=1e-5,
        l1_radius=4.0,
        feature_bound=1.0,
        fit_intercept=True,
        groups=None,
        group_proportions="private",
        proportions_budget=0.1,
        min_group_proportion=None,
        solver="auto",
        random_state=None,
        feature_scale="auto",
        scale_share=_scales.SCALE_SHARE,
        feature_centring=None,
        feature_balance="auto",
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.l1_radius = l1_radius
        self.feature_bound = feature_bound
        self.fit_intercept = fit_intercept
        self.groups = groups
        self.group_proportions = group_proportions
        self.proportions_budget = proportions_budget
        self.min_group_proportion = min_group_proportion
        self.solver = solver
        self.random_state = random_state
        self.feature_scale = feature_scale
        self.scale_share = scale_share
        self.feature_centring = feature_centring
        self.feature_balance = feature_balance

    # -- helpers ----------------------------------------------------------------

    def _warn(self, message, category):
        warn_in_fit(message, category, stacklevel=3)

    def _score_bound(self):
        """Public bound on the scores ``|theta . x|`` (and residuals)."""
        return float(self.l1_radius) * float(self.feature_bound)

    def _check_public_params(self):
        """Checks of the public parameters that need more than their own
        constraint; before any data is read."""
        if self.groups is not None and len(np.atleast_1d(self.groups)) == 0:
            raise ValueError("groups must list at least one group, got [].")
        gp = self.group_proportions
        if not isinstance(gp, str):
            self._proportion_array(gp)
            if self.groups is not None:
                given = [str(g) for g in np.atleast_1d(self.groups)]
                if given != sorted(given):
                    # the cells are in the order of groups_ (sorted); public
                    # proportions in the order of an unsorted groups= were
                    # silently given to the wrong groups
                    raise ValueError(
                        "group_proportions are read one per cell in the order "
                        f"of groups_, which is sorted: {sorted(given)}; groups "
                        f"was given as {given}. Pass groups in sorted order "
                        "(with group_proportions in that order)."
                    )
        bound = self._score_bound()
        if not bound <= MAX_SCORE_BOUND:
            names = "l1_radius * feature_bound" + (
                " + target_bound" if hasattr(self, "target_bound") else ""
            )
            raise ValueError(
                f"{names} = {bound:.4g} must be <= {MAX_SCORE_BOUND:g}: it bounds the "
                "scores, and the Lipschitz constants grow with its cube. Lower "
                "l1_radius or feature_bound."
            )

    def _resolve_groups(self, a):
        if self.groups is None:
            self._warn(
                "groups=None: the set of sensitive groups is inferred from the "
                "private sensitive_features and released through groups_. Pass "
                "groups=[...] (public knowledge) to avoid this leak.",
                PrivacyLeakWarning,
            )
            groups = np.unique(a.astype(str))
        else:
            groups = np.unique(np.asarray(self.groups, dtype=object).astype(str))
        codes = np.searchsorted(groups, a.astype(str))
        codes = np.minimum(codes, groups.shape[0] - 1)
        unknown = groups[codes] != a.astype(str)
        if unknown.any():
            raise ValueError(
                # no count or value of the unknown entries: those are private
                f"sensitive_features contains values not in groups={groups.tolist()}"
                " (values and groups are compared as strings, str(value): a "
                "float code 0.0 is '0.0', not '0'; pass the labels as they "
                "appear in sensitive_features)."
            )
        return groups, codes

    def _clip_X(self, X):
        b = float(self.feature_bound)
        Xc = np.clip(X, -b, b)
        if self.fit_intercept:
            Xc = np.hstack([Xc, np.full((Xc.shape[0], 1), b)])
        return np.ascontiguousarray(Xc)

    # -- fitting ----------------------------------------------------------------

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, *, sensitive_features=None):
        """Fit the model privately.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features; clipped to ``[-feature_bound, feature_bound]``.
        y : array-like of shape (n_samples,)
        sensitive_features : array-like of shape (n_samples,) or (n_samples, k)
            Group membership of each sample (rows of a 2-d array are combined
            into one group label, the values joined by ``"|"``). Required: a
            worst-group or fairness model without groups is an error (use
            :class:`~dpestim.LogisticRegression` for a model of the average
            loss). Routed by scikit-learn's metadata
            routing (``set_fit_request``) inside
            :class:`~sklearn.pipeline.Pipeline` and
            :class:`~sklearn.model_selection.GridSearchCV`.

        Returns
        -------
        self : object
        """
        # Always, even under sklearn's skip_parameter_validation (nested
        # estimators): an unchecked epsilon or bound would break privacy.
        self._validate_params()
        try:
            with collect_fit_warnings() as fit_warnings:
                return self._fit_logged(X, y, sensitive_features, fit_warnings)
        finally:  # the fit's working state is not part of the model
            self._end_fit_state()

    def _fit_logged(self, X, y, sensitive_features, fit_warnings):
        auto = isinstance(self.solver, str) and self.solver == "auto"
        name, reason = SADDLE_AUTO if auto else (self.solver, None)
        solver = resolve_saddle_solver(name, allowed=_LINEAR_SOLVERS)
        self._check_public_params()
        if sensitive_features is None:
            raise ValueError(
                f"{type(self).__name__}.fit requires sensitive_features (one group "
                "label per sample): fit(X, y, sensitive_features=a). Without groups "
                "there is no worst group or fairness constraint; use "
                "dpestim.LogisticRegression / Ridge for the average loss."
            )
        X, y = validate_private_data(
            self, X, y, dtype=np.float64, order="C", y_numeric=False
        )
        n = X.shape[0]
        groups, codes = self._resolve_groups(_sensitive_codes(sensitive_features, n))
        target = self._encode_target(y)
        self._fs.target = target  # the labels as given (the utility check)
        rng = check_generator(self.random_state)
        eps, delta = float(self.epsilon), float(self.delta)
        private = math.isfinite(eps)
        if private and delta >= 1.0 / n:
            self._warn(
                f"delta={delta:g} >= 1/n_samples={1.0 / n:.3g}; choose delta well "
                "below 1/n_samples.",
                PrivacyBudgetWarning,
            )
        self._fs.rows_given = X  # the records as given (composition warning)
        # The policy step (._scales): private row scale and target range,
        # planned from public quantities and charged before they read the
        # data; the proportions and the solver run on the rest of epsilon.
        X, target, row_scale, centre, sigma, notes = self._run_scales(
            X, y, target, solver, rng
        )
        n_cells = self._n_cells(groups.shape[0])
        cells = self._cells(codes, target)
        Xc = self._clip_X(X)
        fit = self._fit_sgda if isinstance(solver, NoisySGDA) else self._fit_smd
        theta, dual = fit(solver, Xc, target, cells, n_cells, rng, fit_warnings)
        if not (np.isfinite(theta).all() and np.isfinite(dual).all()):
            # Post-processing of the released model (the budget was charged
            # when the mechanism ran): refusing it costs no privacy.
            self._forget_fit()
            raise FitDivergedError(
                "The fit diverged (non-finite coefficients): lower the solver's "
                "learning_rate or alpha (e.g. solver=NoisySGDA(learning_rate=0.05)),"
                " or lower feature_bound / l1_radius (and rescale X by public "
                "constants)."
            )
        self.groups_ = groups
        self.solver_ = solver
        # solver="auto": the choice and its reason, as the linear estimators
        self.hyperparameters_ = (
            {"solver": f"{solver.name} ('auto': {reason})"} if auto else {}
        )
        self._report = dataclasses.replace(
            self._report, hyperparameters=dict(self.hyperparameters_)
        )
        if self.fit_intercept:
            coef, intercept = theta[:-1], theta[-1] * float(self.feature_bound)
        else:
            coef, intercept = theta, 0.0
        # back to the user's units: x' = (x - c) / sigma / s, so w = w' /
        # (sigma s) and b = b' - w . c, and feature j is clipped at c_j -+
        # sigma_j s feature_bound
        self.feature_scale_ = row_scale
        self.feature_balance_ = sigma
        self.feature_centre_ = centre
        if row_scale != 1.0:
            coef = coef / row_scale
        if sigma is not None:
            coef = coef / sigma
        if centre is not None:
            intercept = intercept - float(coef @ centre)
        self._compose_estimates(solver, notes)
        self._release(coef, intercept, dual)
        self._run_utility_check(rng)  # the classifiers: lift_, after the fit
        self._report = dataclasses.replace(
            self._report,
            warnings=tuple(fit_warnings) + seed_warnings(self.random_state),
        )
        return self

    def _forget_fit(self):
        """Drop every fitted attribute (a refused fit leaves no model)."""
        for name in [
            k for k in vars(self) if k.endswith("_") and not k.startswith("_")
        ]:
            delattr(self, name)
        self.__dict__.pop("_report", None)

    def _estimate_proportions(self):
        return isinstance(self.group_proportions, str) and (
            self.group_proportions == "private"
        )

    def _fit_smd(self, solver, Xc, target, cells, n_cells, rng, fit_warnings):
        """Vertex-sampling solvers (replace-one, Laplace proportions)."""
        n = Xc.shape[0]
        eps, delta = self._budget()
        private = math.isfinite(eps)
        estimate = self._estimate_proportions()
        eps_prop = eps * self.proportions_budget if estimate else 0.0
        eps_saddle = eps - eps_prop if private else math.inf
        pi, pi_min = self._proportions(cells, n_cells, eps_prop, rng)
        problem, L0, L1, L2 = self._problem(Xc, target, cells, pi, pi_min)
        if not all(0 < v <= _MAX_LIPSCHITZ for v in (L0, L1)) or not (
            0 <= L2 <= _MAX_LIPSCHITZ
        ):
            names = [p for p in _BOUND_PARAMS if p in self.get_params()]
            raise ValueError(
                f"The public Lipschitz constants ({L0:.3g}, {L1:.3g}, {L2:.3g}), set "
                f"by {', '.join(names)} (the smallest group proportion), exceed "
                f"{_MAX_LIPSCHITZ:g}; raise min_group_proportion or lower the bounds."
            )
        dx, dy = problem.dims
        plan = SaddlePlan(
            n_samples=n,
            dim_x=dx,
            dim_y=dy,
            lipschitz=float(L0),
            smoothness=float(L1),
            second_order=float(L2),
        )
        params, event, eps_run = plan_saddle(solver, plan, eps_saddle, delta)
        spent = eps_run + eps_prop if private else math.inf
        # The invariant: never run a mechanism accounted above the request.
        check_guarantee(spent, eps, what=f"solver={solver.name!r}")
        # Budgets see the mechanism before the saddle solver runs (and may
        # refuse; the noisy proportions are then dropped unreleased).
        events = [event]
        if estimate and private:
            events.append(dp_accounting.LaplaceDpEvent(1.0 / eps_prop))
        label = f"{type(self).__name__}(solver={solver.name!r}, n={n})"
        charge_fit(
            FitCharge(
                dp_accounting.ComposedDpEvent(events), solver.neighbouring, label
            ),
            **self._registry_entry(solver, event, spent),
            delta=delta,
        )
        result = solver.solve(problem, plan, params, rng)
        self.group_proportions_ = pi
        self.n_iter_ = result.n_iter
        self.epsilon_ = spent
        self.delta_ = delta
        self.dp_event_ = result.dp_event
        self.dp_params_ = dict(result.params, lipschitz=float(L0))
        self._report = PrivacyReport(
            estimator=type(self).__name__,
            solver=solver.name,
            mechanism=solver.mechanism(result.params),
            sampling="single pass over disjoint batches of a public random permutation",
            composition=(
                "Whitehouse et al. fully adaptive composition of the vertex samples"
                + (
                    f", plus a Laplace histogram of group proportions "
                    f"(epsilon {eps_prop:.4g}, basic composition)"
                    if estimate and private
                    else ""
                )
            ),
            n_steps=result.n_iter,
            noise_multiplier=math.nan,
            clip_norm=math.nan,
            neighbouring=solver.neighbouring,
            accountant="Whitehouse et al. filter (closed form, spec 001 section "
            "4.3; not dp_accounting)",
            noise=(
                "none added: privacy comes from sampling vertices of the "
                "iterates (exponential mechanism), see dp_params_"
                + (
                    "; Laplace noise on the histogram of group counts"
                    if estimate
                    else ""
                )
                if private
                else "none (epsilon = inf: not private)"
            ),
            epsilon=self.epsilon_,
            delta=delta,
            dp_event=result.dp_event,
            warnings=tuple(fit_warnings) + seed_warnings(self.random_state),
        )
        theta = float(self.l1_radius) * (result.x[: dx // 2] - result.x[dx // 2 :])
        return theta, result.y

    def _registry_entry(self, solver, event, spent):
        """The composition warning's key and epsilon: the rows as given
        (those a plain estimator's fit of the same records reads; the
        transformed rows were recognised as other records: a user trial) and
        the whole fit's epsilon (the solver's ``event`` of epsilon ``spent``
        with the scale estimates, as ``epsilon_``)."""
        return {
            "data": self._fs.rows_given,
            "epsilon": self._whole_epsilon(solver, event, spent),
        }

    def _fit_sgda(self, solver, Xc, target, cells, n_cells, rng, fit_warnings):
        """Euclidean noisy SGDA (add/remove, Gaussian proportions, one RDP)."""
        n, d = Xc.shape
        eps, delta = self._budget()
        private = math.isfinite(eps)
        estimate = self._estimate_proportions()
        prior, sigma_h = None, 0.0
        if estimate and private:
            # one record changes one cell count by 1: L2 sensitivity 1
            sigma_h = calibrate_noise(
                GaussianDpEvent, eps * self.proportions_budget, delta,
                cache_key=("gaussian",),
            )  # fmt: skip
            prior = GaussianDpEvent(sigma_h)
        pi, counts_public = self._gaussian_proportions(cells, n_cells, sigma_h, rng)
        problem = self._lagrangian(Xc, target, cells, pi)
        smooth = None
        if not private:  # a non-private fit reads the data: a stable step
            curvature = 1.0 if problem.loss == SQUARED else 0.25
            smooth = curvature * float(np.mean(np.einsum("ij,ij->i", Xc, Xc)))
        plan = SGDAPlan(n, d, problem.M.shape[1], prior, smooth)
        params = solver.resolve(eps, delta, plan, problem.dual_kind)
        event = solver.make_event(params, plan)
        spent = compute_epsilon(event, delta) if private else math.inf
        # The invariant: never run a mechanism accounted above the request.
        check_guarantee(spent, eps, what=f"solver={solver.name!r}")
        self._check_group_sizes(pi, n, params, sigma_h, counts_public)
        # Budgets see the mechanism (proportions included) before it runs.
        label = f"{type(self).__name__}(solver={solver.name!r}, n={n})"
        charge_fit(
            FitCharge(event, solver.neighbouring, label),
            **self._registry_entry(solver, event, spent),
            delta=delta,
        )
        result = solver.solve(problem, plan, params, rng)
        self.group_proportions_ = pi
        self.n_iter_ = result.n_iter
        self.epsilon_ = spent
        self.delta_ = delta
        self.dp_event_ = event
        self.dp_params_ = dict(params, proportions_noise_multiplier=sigma_h)
        self.noise_multiplier_ = params["noise_multiplier"]
        self._report = PrivacyReport(
            estimator=type(self).__name__,
            solver=solver.name,
            mechanism=solver.mechanism(params),
            sampling=solver.sampling(params),
            composition=(
                f"{params['max_iter']} Poisson-subsampled Gaussian steps"
                + (
                    ", composed (RDP) with a Gaussian histogram of the cell counts "
                    f"(noise multiplier {sigma_h:.4g}, sensitivity 1)"
                    if prior is not None
                    else ""
                )
            ),
            n_steps=result.n_iter,
            noise_multiplier=params["noise_multiplier"],
            clip_norm=params["clip_norm"],
            neighbouring=solver.neighbouring,
            accountant="dp_accounting RDP",
            noise=(
                f"noise multiplier {params['noise_multiplier']:.6g} x clip norm "
                f"{params['clip_norm']:.6g} on every step"
                if private
                else "none (epsilon = inf: not private)"
            ),
            epsilon=self.epsilon_,
            delta=delta,
            dp_event=event,
            warnings=tuple(fit_warnings) + seed_warnings(self.random_state),
        )
        dual = result.y
        if problem.dual_kind == DUAL_WEIGHTS:
            dual = pi * dual  # group weights w -> the simplex point lam = pi w
        else:  # multipliers mu -> (mu+, mu-, slack) / B, the dp-smd layout
            dual = np.concatenate([np.maximum(dual, 0), np.maximum(-dual, 0), [0.0]])
            dual = dual / problem.bound
        return result.x, dual

    def privacy_report(self):
        """The privacy guarantee of the fitted model (a :class:`PrivacyReport`)."""
        check_is_fitted(self)
        return self._report

    def decision_function(self, X):
        """Linear score ``clip(X) @ coef_.T + intercept_``.

        Features are clipped to ``feature_bound`` (times ``feature_scale_``,
        and feature ``j`` times ``feature_balance_[j]`` where the balance
        rescaled it, around ``feature_centre_[j]`` where the centring ran)
        exactly as in training.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        X = validate_private_data(self, X, dtype=np.float64, reset=False)
        b = float(self.feature_bound) * self.feature_scale_
        sigma = getattr(self, "feature_balance_", None)
        if sigma is not None:
            b = b * sigma
        c = getattr(self, "feature_centre_", None)
        c = 0.0 if c is None else c
        return (
            np.clip(X, c - b, c + b) @ np.ravel(self.coef_)
            + np.ravel(self.intercept_)[0]
        )


_DOC_COMMON = """epsilon : float, default=1.0
        Total privacy budget (``numpy.inf``: non-private limit). Must satisfy
        ``epsilon < 8 ln(1/delta)`` (the composition theorem used).
    delta : float, default=1e-5
        In ``(0, 1)``; keep it well below ``1 / n_samples``.
    l1_radius : float, default=4.0
        ``R``: with the dp-smd solvers, the coefficients (and the intercept,
        see ``fit_intercept``) are constrained to ``||theta||_1 <= R``.
        Public; enters their privacy calibration. Not used by
        ``"noisy-sgda"``. ``R X_inf`` (plus ``target_bound`` for least
        squares) bounds the scores and must be at most ``1e50``; the
        Lipschitz constants it sets (divided by the smallest group
        proportion) must stay below ``1e200``.
    feature_bound : float, default=1.0
        ``X_inf``: features are clipped to ``[-X_inf, X_inf]`` in ``fit`` and
        in prediction. Public; enters the privacy calibration.
    fit_intercept : bool, default=True
        Adds a constant feature equal to ``feature_bound``; its coefficient
        lives inside the l1 budget ``R``.
    groups : array-like or None, default=None
        The public list of sensitive groups, compared as strings and kept
        sorted (``groups_``; public ``group_proportions`` are read in that
        order, and an unsorted ``groups`` beside them is refused). With a
        2-d ``sensitive_features`` (intersections), a group is the row's
        values joined by ``"|"``: ``groups=["Female|Black", "Female|White",
        ...]``. ``None`` infers it from ``sensitive_features`` with a
        :class:`~dpestim.PrivacyLeakWarning`.
    group_proportions : {"private", "uniform"} or array-like, default="private"
        Proportions ``pi`` used to turn group-conditional risks into
        expectations: a private histogram spending ``proportions_budget *
        epsilon`` (Gaussian, composed with the solver by RDP, for
        ``"noisy-sgda"``; Laplace, basic composition, for dp-smd; then
        clipped below at ``min_group_proportion``), uniform, or public
        values (one per cell, summing to 1). With ``"private"`` or public
        values, a cell with too few rows for the budget raises a
        :class:`~dpestim.PrivacyBudgetWarning` giving the number needed
        (from public quantities; compared with the released or public
        proportions, never with a private count).
    proportions_budget : float, default=0.1
        Share of ``epsilon`` spent on the private proportions.
    min_group_proportion : float or None, default=None
        Public floor of the estimated proportions. ``None``: one row
        (``1 / n_samples``) with ``solver="noisy-sgda"``, whose sensitivity
        does not depend on the proportions; half the uniform proportion
        (``0.5 / n_cells``) with the dp-smd solvers, whose Lipschitz bound,
        hence step size, scales with ``1 / min_group_proportion``.
    solver : {"auto", "noisy-sgda", "dp-smd", "dp-smd-br"} or saddle solver \
object, default="auto"
        ``"auto"`` (the default) is ``"noisy-sgda"``, the one
        general-purpose solver of this family (its choice and reason are in
        ``hyperparameters_["solver"]`` and the privacy report).
        ``"noisy-sgda"`` (:class:`~dpestim.solvers.NoisySGDA`): Euclidean
        noisy stochastic gradient descent-ascent, Poisson sampling, joint
        primal-dual clipping, Gaussian noise accounted by dp_accounting under
        add/remove-one; ``theta`` is unconstrained (``l1_radius`` is not
        used), hyperparameters ``"auto"`` from public quantities. ``"dp-smd"``
        / ``"dp-smd-br"``: Algorithm 1 / 3 of González et al. (vertex
        sampling on the l1 ball, replace-one), far less accurate at
        real-data sizes (see ``BENCHMARKS.md``); pass e.g.
        ``DPSMD(max_iter="theory", n_vertex_samples=8)`` to set their
        parameters.
    random_state : int, Generator or None, default=None
    feature_scale : "auto", float or None, default="auto"
        Unit of the rows: the fit runs on ``X / s`` (clipped to
        ``feature_bound``), ``coef_`` is divided by ``s`` and prediction
        clips ``X`` at ``s * feature_bound``. ``"auto"``: ``s`` is a private
        median of each row's largest ``|x_j|`` divided by ``feature_bound``
        (one exponential-mechanism draw from ``scale_share``; see "Private
        scales measured in fit" in the solvers guide), so that about half
        the rows have no coordinate clipped, for a private fit with ``n``
        large enough, otherwise 1; at ``epsilon=inf`` (nothing private) the
        exact 90th percentile of that statistic (a tenth of the rows have a
        coordinate clipped), so the non-private fit is the same at any
        feature scale. A float is a public unit; ``None`` uses ``X`` as
        given.
    scale_share : float, default=0.05
        Share of ``epsilon`` spent on the private scale estimates (split
        equally between the draws; the rest goes to the proportions and the
        solver); counted inside ``epsilon``.
    feature_centring : bool or None, default=None
        ``True``: the linear estimators' in-fit centring
        (:class:`~dpestim.LogisticRegression`'s ``feature_centring``), run
        before the row unit: a private median L1 row norm and a Laplace mean
        of the rows clipped to it (3% of ``epsilon``, under the solver's
        neighbouring relation), subtracted from the columns it moves; the
        fit runs on ``x - c``, clipped to ``c -+ s feature_bound`` per
        column in the user's units, and ``intercept_`` carries ``-coef_ .
        c``; the column balance then runs on the centred rows. It helps
        where an offset far from 0 fills the clip (``MinimaxRegressor`` on
        California's loader, R^2 0.616 -> 0.630; ``MinimaxLogisticRegression``
        on Adult's, 0.834 -> 0.841) but made ``FairLogisticRegression``'s
        equalized-odds fits on COMPAS fall to a constant in 4 of 5 fits at
        epsilon 2 and 4 (0 of 5 without), so it is off by default. Where it
        runs: ``fit_intercept``, the row unit estimated, ``epsilon n`` of
        about 5,070 or more; ``epsilon = inf``: the exact means.
    feature_balance : "auto", bool or None, default="auto"
        Columns that dominate the rows' norms (a column in its own units
        beside scaled ones: a raw CSV's weights, counts, ages), found and
        rescaled privately before the row unit: the linear estimators' rule
        and rounds (:class:`~dpestim.LogisticRegression`'s
        ``feature_balance``) on the rows as given (not centred, as sparse
        rows are there): a private median L2 row norm (1% of ``epsilon``),
        the Laplace mean squares of the rows clipped to it (1%), and 1% more
        per later round where ``epsilon n`` affords it (about 10,100); on
        the centred rows with ``feature_centring=True``. All counted in
        ``epsilon`` and ``dp_event_``; needs ``epsilon n`` of about 5,070
        (the saddle solvers keep the shares, ``raises_balance_draws``).
        A column found is divided by its root mean square (offset and spread
        together). Columns on comparable scales are used as given. ``None``
        or ``False``: off (the former fit bit for bit)."""

_DOC_ATTRIBUTES = """coef_ : ndarray
        ``theta = R (x+ - x-)`` from the average of the released vertex
        samples (at most ``n_iter_`` nonzeros, multiples of ``R / n_iter_``).
    intercept_ : float or ndarray of shape (1,)
    groups_ : ndarray
    group_proportions_ : ndarray
        Proportions used (public, uniform or privately estimated: released).
    n_iter_ : int
    epsilon_ : float
        Total epsilon spent (scale estimates, the classifiers' utility check,
        proportions and solver): basic composition, or dp-accounting's bound
        of the whole event where smaller (noisy-sgda), at most ``epsilon``.
    delta_ : float
    dp_event_ : DpEvent
    dp_params_ : dict
        Resolved public parameters: steps, vertex samples, batch size, step
        size, per-sample epsilon, number of samples, Lipschitz bound.
    feature_scale_ : float
        The row unit ``s`` used (private when estimated; 1 when not).
    feature_centre_ : ndarray of shape (n_features,) or None
        The private centre ``c`` of ``feature_centring`` (released: the
        prediction clips each feature around it), ``None`` when not run.
    feature_balance_ : ndarray of shape (n_features,) or None
        The column scales ``sigma`` of ``feature_balance`` (the fit ran on
        ``(X - c) / sigma / s``; ``coef_`` is in the user's units), ``None``
        when no column was rescaled.
    hyperparameters_ : dict
        With ``solver="auto"``, ``{"solver": "<name> ('auto': <reason>)"}``
        (no ``"solver"`` key for an explicit solver), and how the private
        scales were resolved (``"feature_scale"``, ``"target_bound"``); also
        in the privacy report."""
