"""Shared machinery of the private linear estimators.

Estimators validate input, resolve the solver, calibrate noise, call
``solver.solve`` and set fitted attributes. They contain no loops.
"""

import math
from dataclasses import replace
from numbers import Integral, Real

import dp_accounting
import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, _fit_context
from sklearn.utils._param_validation import Interval, Options, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._distributed import BlockedArray, as_blocked, prepare_blocked
from ..exceptions import FitDivergedError, UtilityWarning
from ..preprocessing import _fit_scales as _scales
from ..privacy import ACCOUNTANTS, PrivacyReport
from ..privacy.charging import FitCharge, charge_fit
from ..privacy.report import seed_warnings
from ..solvers import SOLVERS, BaseSolver, _policy, resolve_solver
from ..solvers._auto import choose_solver, public_facts
from ..solvers._policy import AUTO
from ..utils import check_generator
from ..utils._progress import fit_progress, plan_line
from ..utils._rows import row_sq_norms
from ..utils.fit_warnings import collect_fit_warnings, warn_in_fit
from ..utils.validation import int32_indices, validate_private_data
from ._planning import MAX_NOISE_MULTIPLIER, PlanMixin
from ._scales import PrivateScalesMixin

__all__ = ["BaseDPLinearModel"]


#: scikit-learn parameters of the linear models that dpestim spells differently.
_SKLEARN_HINTS = {
    "C": (
        "dpestim takes the L2 penalty as alpha, in the objective mean loss + "
        "alpha / 2 ||w||^2: scikit-learn's C (C * sum of losses + ||w||^2 / 2) "
        "is alpha = 1 / (C * n_samples) (an explicit alpha is in the units of "
        "X as given; the default alpha='auto' is 1e-4 in the units of the "
        "privately rescaled rows)"
    ),
    "penalty": (
        "only the L2 penalty is supported (set its strength with alpha; "
        "alpha=0 for none)"
    ),
    "l1_ratio": "elastic-net (l1_ratio) is not supported: only the L2 penalty alpha",
    "tol": "the number of steps is max_iter (no data-dependent stopping rule: "
    "stopping on the private loss would leak it)",
    "n_jobs": "fits are single-process (wrap the estimator in joblib yourself)",
}


def _unknown_parameter_message(cls, names):
    hints = [f"{n}: {_SKLEARN_HINTS[n]}." for n in names if n in _SKLEARN_HINTS]
    message = (
        f"{cls.__name__}.__init__() got unexpected keyword argument(s) "
        f"{', '.join(repr(n) for n in names)}."
    )
    if hints:
        message += " " + " ".join(hints)
    return message + f" Valid parameters: {', '.join(cls._get_param_names())}."


class BaseDPLinearModel(PrivateScalesMixin, PlanMixin, BaseEstimator):
    """Common parameters, privacy resolution and fitting of dpestim models.

    Subclasses implement ``_loss_name`` (the nominal loss, known before any
    data is read) and ``_encode_targets(y)`` returning ``(loss_code, Y)``.
    """

    _parameter_constraints = {
        "epsilon": [
            Interval(Real, 0, None, closed="neither"),
            Options(Real, {math.inf}),
            None,
        ],
        "delta": [Interval(Real, 0, 1, closed="left")],
        # The upper limit keeps dp_accounting's alpha / (2 s^2) from overflowing.
        "noise_multiplier": [
            Interval(Real, 0, MAX_NOISE_MULTIPLIER, closed="both"),
            None,
        ],
        "clip_norm": [
            Interval(Real, 0, MAX_NOISE_MULTIPLIER, closed="right"),
            Options(Real, {math.inf}),
            StrOptions({AUTO}),
        ],
        "alpha": [Interval(Real, 0, None, closed="left"), StrOptions({AUTO})],
        "fit_intercept": ["boolean"],
        "max_iter": [Interval(Integral, 1, None, closed="left"), StrOptions({AUTO})],
        "batch_size": [Interval(Integral, 1, None, closed="left"), StrOptions({AUTO})],
        "learning_rate": [
            Interval(Real, 0, None, closed="neither"),
            StrOptions({AUTO}),
        ],
        "solver": [StrOptions(set(SOLVERS) | {AUTO}), BaseSolver],
        "accountant": [StrOptions(set(ACCOUNTANTS))],
        "random_state": ["random_state", np.random.Generator],
        "verbose": ["verbose"],
        "feature_scale": [
            Interval(Real, 0, MAX_NOISE_MULTIPLIER, closed="neither"),
            StrOptions({AUTO}),
            None,
        ],
        "scale_share": [Interval(Real, 0, 1, closed="neither")],
        "feature_centring": [StrOptions({AUTO}), "boolean", "array-like", None],
        "feature_balance": [StrOptions({AUTO}), "boolean", "array-like", None],
    }

    def __new__(cls, *args, **kwargs):
        # scikit-learn forbids **kwargs in __init__ (get_params reads its
        # signature), so unknown keywords are caught here, before __init__,
        # to name the public class and translate scikit-learn's parameters.
        if args:
            raise TypeError(
                f"{cls.__name__}() takes keyword arguments only, e.g. "
                f"{cls.__name__}(epsilon=1.0); got {len(args)} positional."
            )
        unknown = [k for k in kwargs if k not in cls._get_param_names()]
        if unknown:
            raise TypeError(_unknown_parameter_message(cls, unknown))
        return super().__new__(cls)

    def __init__(
        self,
        *,
        epsilon=1.0,
        delta=1e-5,
        noise_multiplier=None,
        clip_norm="auto",
        alpha="auto",
        fit_intercept=True,
        max_iter="auto",
        batch_size="auto",
        learning_rate="auto",
        solver="auto",
        accountant="rdp",
        random_state=None,
        verbose=0,
        feature_scale="auto",
        scale_share=_scales.SCALE_SHARE,
        feature_centring="auto",
        feature_balance="auto",
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.noise_multiplier = noise_multiplier
        self.clip_norm = clip_norm
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.solver = solver
        self.accountant = accountant
        self.random_state = random_state
        self.verbose = verbose
        self.feature_scale = feature_scale
        self.scale_share = scale_share
        self.feature_centring = feature_centring
        self.feature_balance = feature_balance

    # -- helpers ---------------------------------------------------------------

    def _warn(self, message, category):
        """Emit a warning and remember it for :meth:`privacy_report`."""
        warn_in_fit(message, category, stacklevel=3)

    def _validate_X_y(self, X, y, *, dtype=np.float64, **kwargs):
        # No separate finiteness pass: the squared row norms (needed by the
        # solvers anyway, and remembered for them) are finite iff every entry
        # is finite and no row overflows.
        X, y = validate_private_data(
            self,
            X,
            y,
            accept_sparse="csr",
            dtype=dtype,
            order="C",
            ensure_all_finite=False,
            **kwargs,
        )
        # Kernels always get writeable arrays: a read-only one (memmap, pandas
        # copy-on-write) would make numba compile a second set of kernels.
        if sp.issparse(X):
            if not (X.data.flags.writeable and X.indices.flags.writeable):
                X = X.copy()
        elif not X.flags.writeable:
            X = X.copy()
        if sp.issparse(X):
            X = int32_indices(X)
        if sp.issparse(X) and not X.has_canonical_format:
            # Duplicate entries would make the per-row norms used for clipping
            # disagree with the gradients actually summed.
            X = X.copy()
            X.sum_duplicates()
        if not np.isfinite(row_sq_norms(X, reuse=False)).all():
            values = X.data if sp.issparse(X) else X
            if np.isnan(values).any():
                raise ValueError("Input X contains NaN.")
            if not np.isfinite(values).all():
                raise ValueError("Input X contains infinity.")
            # The clipping factor of such a row would underflow to 0 and its
            # gradient be silently dropped.
            raise ValueError(
                "Input X has rows whose squared L2 norm overflows float64 (values "
                "above about 1e154); rescale X by a public constant."
            )
        return X, y

    # -- fitting ---------------------------------------------------------------

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit the model privately.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data. Sparse input is used in CSR form.
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
            Class labels (classifiers; all in ``classes`` when it is given) or
            targets (:class:`~dpestim.Ridge`, where several targets are fitted
            in one private run with their gradients clipped together).

        Returns
        -------
        self : object
            The fitted estimator.
        """
        return self._fit(X, y)

    def _fit(self, X, y):
        # Always, even under sklearn's skip_parameter_validation (nested
        # estimators): an unchecked epsilon or clip_norm would break privacy.
        self._validate_params()
        with collect_fit_warnings() as fit_warnings:
            return self._fit_logged(X, y, fit_warnings)

    def _fit_logged(self, X, y, fit_warnings):
        auto = None
        if _policy.is_auto(self.solver):  # a public rule table (solvers/_auto.py)
            blocked = as_blocked(X) is not None
            auto = choose_solver(public_facts(self, X, blocked))
        solver = resolve_solver(auto[0] if auto else self.solver)
        solver.check_loss(self._loss_name)
        if (blocked := as_blocked(X)) is not None:  # Dask, memmap, zarr
            # Blocks are read in float64; coef_ follows the stored dtype.
            coef_dtype = np.result_type(
                getattr(getattr(X, "X", X), "dtype", np.float64), np.float32
            )
            X, y = prepare_blocked(self, blocked, y, solver)
        else:
            if sp.issparse(X) and not solver.accepts_sparse:
                raise TypeError(
                    f"solver={solver.name!r} does not support sparse input X."
                )
            # float32 X is kept as is (no float64 copy) for solvers that read
            # it so.
            dtype = [np.float64, np.float32] if solver.accepts_float32 else np.float64
            X, y = self._validate_X_y(X, y, dtype=dtype, **self._validate_kwargs)
            coef_dtype = X.dtype
        n, d = X.shape
        rng = check_generator(self.random_state)
        # The policy step: private scales the "auto" rules need (public plan,
        # charged before any of them reads the data).
        scale_plan = self._plan_scales(n, y, blocked is not None, solver)
        # classifiers: a private check of the fit's accuracy, after it
        scale_plan.check_epsilon = self._plan_check(
            n, blocked is not None, solver, scale_plan
        )
        # private column means first (feature_centring; public plan)
        self._plan_centring(
            scale_plan, n, d, sp.issparse(X), blocked is not None, solver
        )
        scale_events = scale_plan.events()
        if scale_events:
            what = "scale estimates" + (
                "" if scale_plan.check_epsilon is None else " and utility check"
            )
            charge_fit(
                FitCharge(
                    dp_accounting.ComposedDpEvent(scale_events),
                    solver.neighbouring,
                    f"{type(self).__name__}({what}, n={n})",
                )
            )
        self._scale_fit = (scale_plan, rng)
        X_given = X  # the records as given (the composition registry's key)
        X, centre, balance_scales, centre_notes = self._apply_centring(
            X, scale_plan, rng
        )
        X, row_scale, scale_notes = self._apply_feature_scale(
            X,
            scale_plan,
            rng,
            self._row_norm_target(y, solver),
            owned=X is not X_given,  # a centred or balanced copy: divided in place
        )
        # alpha="auto": 1e-4 in the units of the rescaled rows (public rule)
        alpha_user, alpha_rules = _policy.resolve_alpha(self.alpha, row_scale)
        loss, Y = self._encode_targets(y)
        if not np.isfinite(np.einsum("ij,ij->i", Y, Y)).all():
            raise ValueError(
                "Input y has values whose square overflows float64 (above about "
                "1e154); rescale y by a public constant."
            )
        solver.check_loss(loss)
        # classifiers: private class counts -> initial intercept, class weights
        balance = self._class_balance(Y, scale_plan, rng, solver)
        weight_max = 1.0 if balance is None else balance.weight_max
        clip_norm = self._clip_norm(blocked=blocked is not None)
        norms = (
            (None, None)
            if blocked is not None
            else self._nonprivate_row_norms(X, clip_norm)
        )
        plan, hyperparameters = self._resolve_plan(
            solver,
            n,
            d,
            Y.shape[1],
            loss,
            clip_norm=clip_norm,
            norms=norms,
            # rows in units of s: alpha / s^2 (explicit alpha); class
            # weights normalised to a largest value of 1: the objective
            # divided by it (same optimum)
            alpha=alpha_rules / weight_max,
            blocked=blocked is not None,
        )
        if _policy.is_auto(self.clip_norm):
            hyperparameters = {"clip_norm": clip_norm, **hyperparameters}
        if _policy.is_auto(self.alpha):
            # public: in the rescaled rows' units, as clip_norm (alpha_ is in
            # X's units); a solver's own entry (its ridge) is kept
            hyperparameters.setdefault("alpha", alpha_rules)
        hyperparameters.update(centre_notes)
        hyperparameters.update(scale_notes)
        if balance is not None:
            hyperparameters.update(balance.notes)
        hyperparameters.update(getattr(self, "_target_notes", {}))
        if auto is not None:
            hyperparameters = {"solver": f"{auto[0]} ('auto': {auto[1]})"} | (
                hyperparameters
            )
        if norms[0] is not None:
            # non-private fit only: say that its step rule read the data
            hyperparameters["row norms (max, rms; read from the data: not private)"] = (
                norms
            )
        if balance is not None:
            # post-processing of a DP release (or public values): not part of
            # the event (the plan's equality and hash ignore both)
            plan = replace(
                plan,
                intercept_init=balance.intercept_init,
                class_weights=balance.class_weights,
            )
        # for model selection's Relative(alpha) (not part of the event)
        plan = replace(plan, user_alpha=alpha_user)
        solver.check_plan(plan)
        nm, epsilon, event = self._resolve_noise(solver, plan, spent=scale_plan.epsilon)
        # Budgets / model selection see the mechanism before it runs (and may refuse).
        charge_fit(
            FitCharge(
                event,
                solver.neighbouring,
                f"{type(self).__name__}(solver={solver.name!r}, n={n})",
                self,
                lambda noise: solver.make_event(noise, plan),
                plan,
            ),
            data=X_given if blocked is None else None,  # composition warning only
            # the whole fit: the solver's run and the scale estimates
            epsilon=epsilon + scale_plan.epsilon if scale_events else epsilon,
            delta=solver.guarantee_delta(self.delta),
        )
        n_steps = solver.n_steps(plan)
        diagnosis = [
            *solver.utility_warnings(plan, nm),
            *(balance.warnings if balance is not None else ()),
        ]
        if scale_plan.check_epsilon is None:
            for message in diagnosis:
                self._warn(message, UtilityWarning)
        if self.verbose:
            print(plan_line(self, solver, plan, n_steps, nm, epsilon), flush=True)
        with fit_progress(self.verbose, n_steps, f"{solver.name} fit"):
            result = solver.solve(
                X, np.require(Y, np.float64, ["C", "W"]), plan, nm, rng
            )
        self._scale_fit = None
        if not (np.isfinite(result.coef).all() and np.isfinite(result.intercept).all()):
            # Post-processing of the released model: raising costs no privacy.
            raise FitDivergedError(
                "The fit diverged (non-finite coefficients): reduce learning_rate, "
                "or rescale X and y by public constants."
            )
        self.solver_ = solver
        self.n_iter_ = result.n_iter
        self.noise_multiplier_ = nm
        self.delta_ = float(solver.guarantee_delta(self.delta))
        dp_event = result.dp_event
        if scale_events:
            dp_event = dp_accounting.ComposedDpEvent([*scale_events, dp_event])
            epsilon = self._total_epsilon(solver, scale_events, dp_event, epsilon)
        self.epsilon_ = epsilon
        self.dp_event_ = dp_event
        self.feature_scale_ = row_scale
        # the ridge the solver used, in X's units: objective perturbation
        # raises it for its privacy proof (public: n, epsilon, delta)
        planned = alpha_rules / weight_max
        self.alpha_ = (
            alpha_user
            if plan.alpha == planned
            else float(plan.alpha) * weight_max * row_scale**2
        )
        self.hyperparameters_ = hyperparameters
        self.clip_norm_ = plan.clip_norm
        self.max_iter_ = plan.max_iter
        self.batch_size_ = plan.batch_size
        self.learning_rate_ = plan.learning_rate
        # scikit-learn's convention: coefficients in the dtype of X.
        # coefficients back to the user's units (x' = x / s, w = w' / s)
        coef = result.coef / row_scale if row_scale != 1.0 else result.coef
        if balance_scales is not None:  # x' = x / sigma per column
            coef = coef / balance_scales
        intercept = result.intercept
        if centre is not None:  # w . (x - c) + b' = w . x + (b' - w . c)
            intercept = intercept - coef @ centre
        self.feature_centre_ = centre
        self.feature_balance_ = balance_scales
        self._set_coef(
            coef.astype(coef_dtype, copy=False),
            intercept.astype(coef_dtype, copy=False),
        )
        attributes = dict(result.attributes)
        if "coef_path_" in attributes:  # iterates in the user's units too
            path_w = attributes["coef_path_"] / row_scale
            if balance_scales is not None:
                path_w = path_w / balance_scales
            path_b = attributes.get("intercept_path_")
            if path_b is not None and centre is not None:
                path_b = path_b - np.einsum("...kd,d->...k", path_w, centre)
            attributes["coef_path_"], path_b = self._map_path(path_w, path_b)
            if path_b is not None:
                attributes["intercept_path_"] = path_b
        for name, value in attributes.items():
            setattr(self, name, value)
        if scale_plan.check_epsilon is not None:
            # the public diagnosis is given only with a measured failure
            for message in self._utility_check(
                X_given,
                Y,
                scale_plan.check_epsilon,
                solver.neighbouring,
                rng,
                diagnosis,
                balance,
            ):
                self._warn(message, UtilityWarning)
        elif math.isinf(self._policy_epsilon()) and blocked is None:
            # in memory only: blocked X (Dask, memmap, zarr) is not read again
            for message in self._exact_check(X_given, Y):
                self._warn(message, UtilityWarning)
        self._report = PrivacyReport(
            estimator=type(self).__name__,
            solver=solver.name,
            mechanism=solver.mechanism(plan),
            sampling=solver.sampling(plan),
            composition=solver.composition(plan),
            n_steps=result.n_iter,
            noise_multiplier=nm,
            clip_norm=plan.clip_norm,
            neighbouring=solver.neighbouring,
            accountant=solver.accounting(self.accountant),
            noise=(
                solver.added_noise(nm, plan)
                if nm > 0
                else "none (noise multiplier 0: not private)"
            ),
            epsilon=epsilon,
            delta=self.delta_,
            dp_event=dp_event,
            estimates=_scales.estimates_line(scale_plan, self.epsilon),
            hyperparameters=dict(hyperparameters),
            warnings=tuple(fit_warnings) + seed_warnings(self.random_state),
            requested_delta=float(self.delta),
        )
        return self

    def _map_path(self, coef_path, intercept_path):
        """Recorded iterates ``(T, K, d)``, ``(T, K)`` in the released model's
        units (after the row scale and the centre): the targets' units too
        (:class:`~dpestim.Ridge` overrides this; classifiers: as they are)."""
        return coef_path, intercept_path

    def _class_balance(self, Y, scale_plan, rng, solver):
        """The classifiers' class prior and weights (``None`` here)."""
        return None

    def _plan_check(self, n, blocked, solver, scale_plan):
        """Epsilon of the classifiers' utility check (``None`` here)."""
        return None

    def _exact_check(self, X, Y):
        """The classifiers' check of a non-private fit (``[]`` here)."""
        return []

    def _set_coef(self, coef, intercept):
        self.coef_ = coef
        self.intercept_ = intercept

    def privacy_report(self):
        """The privacy guarantee of the fitted model.

        Returns
        -------
        report : PrivacyReport
            Mechanism, sampling, number of steps, neighbouring relation,
            accountant, ``(epsilon, delta)``, the ``DpEvent`` and every
            warning raised during fit. ``print(report)`` gives a readable
            statement.
        """
        check_is_fitted(self)
        return self._report

    def _decision(self, X):
        check_is_fitted(self)
        if isinstance(X, BlockedArray):  # marks X for block-wise fitting only
            X = X.X
        X = validate_private_data(
            self, X, accept_sparse="csr", dtype=np.float64, reset=False
        )
        return self._scores(X)

    def _scores(self, X):
        """``X @ coef_.T + intercept_`` (2-d) on validated ``X``."""
        return np.asarray(X @ np.atleast_2d(self.coef_).T) + self.intercept_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
