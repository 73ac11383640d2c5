"""Differentially private ridge regression."""

import math
from dataclasses import replace
from numbers import Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import RegressorMixin
from sklearn.utils._param_validation import StrOptions

from ..exceptions import PrivacyLeakWarning, UtilityWarning
from ..losses import SQUARED
from ..preprocessing import _fit_scales as _scales
from ._base import BaseDPLinearModel
from ._docs import ATTRIBUTES, COMMON_TAIL, PRIVACY_PARAMS

__all__ = ["EXACT_CHECK_GAP", "EXACT_CHECK_SHARE", "Ridge"]

#: At ``epsilon = inf``, a training R^2 below scikit-learn's on standardised
#: columns by more than ``EXACT_CHECK_GAP`` and below ``EXACT_CHECK_SHARE``
#: of it warns (:meth:`Ridge._exact_check`).
EXACT_CHECK_GAP = 0.05
EXACT_CHECK_SHARE = 0.5


class Ridge(RegressorMixin, BaseDPLinearModel):
    _loss_name = "squared"
    _validate_kwargs = {"multi_output": True, "y_numeric": True}
    _parameter_constraints = {
        **BaseDPLinearModel._parameter_constraints,
        "y_bound": [Real, tuple, list, np.ndarray, StrOptions({"data", "auto"}), None],
    }

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
        y_bound="auto",
        random_state=None,
        verbose=0,
        feature_scale="auto",
        scale_share=0.05,
        feature_centring="auto",
        feature_balance="auto",
    ):
        super().__init__(
            epsilon=epsilon,
            delta=delta,
            noise_multiplier=noise_multiplier,
            clip_norm=clip_norm,
            alpha=alpha,
            fit_intercept=fit_intercept,
            max_iter=max_iter,
            batch_size=batch_size,
            learning_rate=learning_rate,
            solver=solver,
            accountant=accountant,
            random_state=random_state,
            verbose=verbose,
            feature_scale=feature_scale,
            scale_share=scale_share,
            feature_centring=feature_centring,
            feature_balance=feature_balance,
        )
        self.y_bound = y_bound

    def _estimated_targets(self, y):
        if not (isinstance(self.y_bound, str) and self.y_bound == "auto"):
            return 0
        return 1 if np.ndim(y) == 1 else int(np.shape(y)[1])

    def _private_y_bound(self, Y):
        """``y_bound="auto"``: private ranges of the targets, or None."""
        plan, rng = self._scale_fit
        if plan.target_epsilon is None:
            self._target_notes = {k: v for k, v in plan.notes.items() if k == "y_bound"}
            if math.isfinite(self._policy_epsilon()):  # public: n, epsilon, share
                self._warn(
                    "y_bound='auto': the private target range was not estimated "
                    f"({self._target_notes.get('y_bound', 'no budget to share')}), "
                    "so the targets are fitted in their own units with no bound; "
                    "a private fit on targets far from clip_norm's scale learns "
                    "little: targets far from 0 (a mean of 150, say) give an R^2 far "
                    "below 0, worse than predicting their mean. Pass a public "
                    "y_bound=(low, high), or a larger epsilon.",
                    UtilityWarning,
                )
            return None
        ranges = [
            _scales.private_target_range(
                Y[:, k], plan.target_epsilon, rng, plan.centre_stages, plan.spread_units
            )
            for k in range(Y.shape[1])
        ]
        low = np.array([r[0] for r in ranges])
        high = np.array([r[1] for r in ranges])
        self._target_notes = {"y_bound": _scales.target_note(plan)}
        return low, high

    def _resolve_y_bound(self, Y):
        """``(low, high)`` arrays of shape (n_targets,), or None (no bound)."""
        self._target_notes = {}
        if self.y_bound is None:
            return None
        if isinstance(self.y_bound, str) and self.y_bound == "auto":
            return self._private_y_bound(Y)
        if isinstance(self.y_bound, str):
            self._warn(
                "y_bound='data': the target range is taken from the private y "
                "(its minimum and maximum) and released through y_bound_ and the "
                "clipped predictions. Pass y_bound=(low, high) from public "
                "knowledge (a documented range or top-code) to avoid this leak, "
                "or y_bound=None for no bound.",
                PrivacyLeakWarning,
            )
            return Y.min(axis=0), Y.max(axis=0)
        if isinstance(self.y_bound, Real):
            b = float(self.y_bound)
            if not (np.isfinite(b) and b > 0):
                raise ValueError(f"y_bound must be a positive finite number, got {b}.")
            bounds = (-b, b)
        else:
            bounds = self.y_bound
        try:
            low, high = (np.asarray(v, dtype=np.float64) for v in bounds)
        except (TypeError, ValueError):
            raise ValueError(
                "y_bound must be None, 'data', a positive number or a pair "
                f"(low, high); got {self.y_bound!r}."
            ) from None
        K = Y.shape[1]
        low, high = np.broadcast_to(low, (K,)), np.broadcast_to(high, (K,))
        if not (np.isfinite(low).all() and np.isfinite(high).all()) or np.any(
            low >= high
        ):
            raise ValueError(
                f"y_bound=(low, high) needs finite low < high, got {self.y_bound!r}."
            )
        return low.copy(), high.copy()

    def _validate_X_y(self, X, y, **kwargs):
        dtype = np.asarray(y).dtype
        bad = dtype.kind in "US"
        if dtype.kind == "O":
            try:
                np.asarray(y, dtype=np.float64)
            except (TypeError, ValueError):
                bad = True
        if bad:
            raise ValueError(
                f"Ridge needs numeric targets y, got non-numeric values (dtype "
                f"{dtype}); convert them to numbers, or use a classifier for labels."
            )
        return super()._validate_X_y(X, y, **kwargs)

    def _encode_targets(self, y):
        self._single_target = y.ndim == 1
        Y = y.reshape(y.shape[0], -1)
        bounds = self._resolve_y_bound(Y)
        self.y_bound_ = bounds
        if bounds is None:
            self._y_center, self._y_scale = np.zeros(Y.shape[1]), np.ones(Y.shape[1])
            return SQUARED, Y
        low, high = bounds  # arrays of shape (n_targets,)
        # a per-record map with public (or privately estimated) constants:
        # clip each target to the range, centre it (with an intercept; the
        # centre is added back to it) and scale the range to
        # -+ TARGET_HALF_RANGE, the targets' scale the rules assume (the
        # objective divided by scale^2: same minimiser); predictions are
        # clipped to the range (post-processing). Any range is scaled, a public
        # one too: only centred, a target of spread 0.1 in [0, 1] met noise
        # calibrated to clip_norm = 1 (R^2 -1.6 to -10 on regression tasks built
        # from Adult and Bank; doc/benchmarks/public_target_bound.md).
        self._y_center, self._y_scale = _scales.target_map(
            low, high, self.fit_intercept
        )
        return SQUARED, (np.clip(Y, low, high) - self._y_center) / self._y_scale

    def _resolve_plan(self, *args, **kwargs):
        # the public bound on a clipped, centred target row (L2 over the
        # targets), for solvers that need one (sufficient statistics)
        plan, resolved = super()._resolve_plan(*args, **kwargs)
        bound = None
        if self.y_bound_ is not None:
            low, high = self.y_bound_
            c = self._y_center
            # in the units the solver sees: clipped, centred and divided by
            # the target scale (every range is scaled to -+ TARGET_HALF_RANGE)
            half = np.maximum(abs(low - c), abs(high - c)) / self._y_scale
            bound = float(np.sqrt(np.sum(half**2)))
        return replace(plan, target_bound=bound), resolved

    def _exact_check(self, X, Y):
        """The check of a non-private fit (``epsilon = inf``): exact, no noise.

        A non-private fit may read its data: its training R^2 is compared
        with scikit-learn's ``Ridge`` on standardised columns (``alpha = 1e-4
        x n``, the default's strength in the rules' units); it warns, with
        ``alpha="auto"`` only (an explicit ``alpha`` is the user's
        objective), when the fit explains less than half as much
        (:data:`EXACT_CHECK_SHARE`) and at least :data:`EXACT_CHECK_GAP`
        less. Its usual cause is a column with a large offset or scale (a
        year, a constant of 2020) that sets the row scale, and with it
        ``alpha="auto"`` and the steps: the other columns barely move the
        model (R^2 0.012 against 0.969 with a year column). Measured by a
        helper session on 5,278 fits at ``epsilon = inf`` (the shared
        datasets' regression tasks, synthetic sets, n 50-5,000, six
        preprocessings, seven solvers): the half rule fires on 782 of the 861
        fits that an offset, constant or x1000 column made worse, and on 95
        of 4,382 fits without one, 11 of which were as good on test rows;
        the gap alone fired on 494 of those, 310 of them fine on test rows
        (the reference overfits at n <= 200).
        """
        if not (isinstance(self.alpha, str) and self.alpha == "auto"):
            return []
        from sklearn.linear_model import Ridge as SkRidge
        from sklearn.metrics import r2_score
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        # R^2 is invariant to the targets' affine map: compare in its units
        P = (np.reshape(self.predict(X), Y.shape) - self._y_center) / self._y_scale
        scaler = StandardScaler(with_mean=not sp.issparse(X))
        ref = make_pipeline(scaler, SkRidge(alpha=1e-4 * Y.shape[0])).fit(X, Y)
        ref_r2 = r2_score(Y, np.reshape(ref.predict(X), Y.shape))
        r2 = r2_score(Y, P)
        if ref_r2 - r2 <= EXACT_CHECK_GAP or r2 >= EXACT_CHECK_SHARE * ref_r2:
            return []
        if self.feature_centre_ is not None:  # centred: the scales remain
            cause = (
                "columns on very different scales (a count in thousands beside "
                "features of order one) set the row scale, and with it "
                "alpha='auto' and the steps; rescale the columns by public "
                "constants (or dpestim.preprocessing.StandardScaler with public "
                "bounds)"
            )
        else:
            cause = (
                "a column with a large offset or scale (a year, a constant) "
                "sets the row scale, and with it alpha='auto' and the steps; "
                "centre and rescale the columns by public constants (or "
                "dpestim.preprocessing.StandardScaler with public bounds; "
                "feature_centring='auto' centres them privately)"
            )
        return [
            "the non-private fit (epsilon=inf) explains less than half as much "
            "of y on its training rows as scikit-learn's Ridge on standardised "
            f"columns (an exact check, not private). Usual cause: {cause} "
            "before fitting, or raise max_iter."
        ]

    def _set_coef(self, coef, intercept):
        if not (self._y_scale == 1.0).all():
            scale = self._y_scale.astype(coef.dtype)
            coef, intercept = coef * scale[:, None], intercept * scale
        intercept = intercept + self._y_center
        if self._single_target:
            self.coef_, self.intercept_ = coef[0], float(intercept[0])
        else:
            self.coef_, self.intercept_ = coef, intercept

    def _map_path(self, coef_path, intercept_path):
        """The recorded iterates through the targets' scale and centre, as
        :meth:`_set_coef` maps the final model."""
        scale = self._y_scale.astype(coef_path.dtype)
        coef_path = coef_path * scale[:, None]
        if intercept_path is not None:
            intercept_path = intercept_path * scale + self._y_center
        return coef_path, intercept_path

    def predict(self, X):
        """Predict with the private linear model.

        Predictions are clipped to ``y_bound_`` when a bound is set
        (post-processing of the released model).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,) or (n_samples, n_targets)
        """
        pred = self._decision(X)
        if self.y_bound_ is not None:
            pred = np.clip(pred, *self.y_bound_)
        return pred[:, 0] if self._single_target else pred

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags


Ridge.__doc__ = f"""Differentially private ridge regression.

    Minimises ``mean_i (y_i - x_i . coef - intercept)^2 / 2 + alpha / 2
    ||coef||^2``. The residual is unbounded, so clipping (``clip_norm``) is what
    bounds each record's influence; scale targets and features by public
    constants so that typical per-example gradients are near ``clip_norm``.

    Parameters
    ----------
    {PRIVACY_PARAMS}
    y_bound : "auto", (low, high), float, "data" or None, default="auto"
        Range of the targets. Each training target is clipped to it and, with
        ``fit_intercept=True``, centred on its midpoint (a per-record map,
        inside the privacy argument), the midpoint is added back to the
        intercept, and predictions are clipped to the range (post-processing),
        so a noisy model never predicts far outside it. ``"auto"``: a private
        range, ``c -+ 2.93 m`` with ``c`` a private median of ``y`` (refined
        three times around itself) and ``m`` a private 75th percentile of
        ``|y - c|`` (five exponential-mechanism draws per target, the last at
        twice the others' epsilon, part of ``scale_share``; about 3.4 standard
        deviations of a normal target either way, and it does not collapse
        when up to three quarters of the targets share one value, a count's
        zero say); the targets are also scaled to
        ``-+ {_scales.TARGET_HALF_RANGE:g}`` for the solver and the coefficients
        and intercept mapped back, so the rules see the same problem at any
        unit or offset of ``y``. Only for a private fit with ``epsilon`` given
        and ``n`` large enough for reliable draws (about ``epsilon n >= 6420``,
        7490 with the row scale, at the default share; below that the share
        is raised up to half of ``epsilon``: ``epsilon n >= 750`` with the row
        scale; below that the spread is the median absolute deviation, ``c -+
        5 m``, at the others' epsilon, with fewer refinements of the centre,
        down to one, where four do not fit: ``epsilon n >= 321`` with the row
        scale); otherwise no bound (as ``None``; ``hyperparameters_`` says
        why). The private range is a robust one: a target with heavy tails
        (a few values thousands of times its median) is fitted, and
        predicted, as clipped to it at every finite ``epsilon``, however
        large (a user trial: ``exp(3 z)`` on California's features, R^2
        -0.06 at epsilon 1 to 1000 against 0.29 for scikit-learn and for
        ``epsilon=inf``, which fits exactly); fit such a target on a public
        transform (its logarithm) or pass its public range. A float ``b`` means
        ``(-b, b)``; pairs may hold one value per target: a public range (a
        documented top-code, a physical range) is used as given, and scaled
        to ``-+ {_scales.TARGET_HALF_RANGE:g}`` for the solver as the private
        one is (without an intercept: ``max(|low|, |high|)`` to
        ``{_scales.TARGET_HALF_RANGE:g}``), so the result does not depend on
        the target's unit. ``"data"`` takes the range from the private ``y`` (its
        minimum and maximum), which leaks them: an explicit opt-in, with a
        :class:`~dpestim.PrivacyLeakWarning`. ``None``: no bound, no centring.
        (Solvers that penalise the intercept, dp-scd, then shrink it towards the
        midpoint rather than towards 0.) With a range and an intercept, the
        dp-sgd family ends the fit with one Gaussian query that moves the
        intercept to the noisy mean residual where its error is small (its
        clipped steps leave it near the median residual, a bias on skewed
        targets; about 2% of the budget, in ``dp_event_``; see the solver
        guide's "final intercept", and ``final_intercept=False`` on the
        solver); under pure DP the accelerated family (``noise="laplace"``)
        ends it with one Laplace query at 2% of epsilon.
    {COMMON_TAIL}

    Attributes
    ----------
    {ATTRIBUTES}
    y_bound_ : tuple of ndarray of shape (n_targets,) or None
        The ``(low, high)`` range used (private when estimated).

    See Also
    --------
    sklearn.linear_model.Ridge : the non-private estimator; its ``alpha``
        corresponds to ``alpha_dpestim * n_samples``.

    Notes
    -----
    A non-private fit (``epsilon=inf``) with ``alpha="auto"`` is checked
    exactly (it may read its data): a :class:`~dpestim.UtilityWarning` fires
    when its training R^2 is less than half, and at least 0.05 below, that
    of scikit-learn's ``Ridge`` (``alpha = 1e-4 n``) on standardised columns.
    Its usual cause is a column with a large offset or scale (a year, a
    constant) that dominates the row norms, and with them the private row
    scale, ``alpha="auto"`` and the steps; centre and rescale such columns
    by public constants (or :class:`dpestim.preprocessing.StandardScaler`
    with public bounds) before a private fit too.
    """
