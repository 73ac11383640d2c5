"""Worst-group (minimax) logistic and least-squares regression."""

import math
from numbers import Real

import numpy as np
from scipy.special import expit
from sklearn.base import ClassifierMixin, RegressorMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from ..exceptions import PrivacyLeakWarning, UtilityWarning
from ..losses import LOGISTIC, SQUARED
from ..preprocessing import _fit_scales as _scales
from ..solvers.saddle import MAX_SCORE_BOUND, LinearSaddleProblem
from ..solvers.saddle._sgda_kernels import DUAL_WEIGHTS, WORST_GROUP
from ..solvers.saddle.sgda import LagrangianProblem
from ..utils import check_label_values
from ..utils.fit_warnings import warn_in_fit
from ._base import _DOC_ATTRIBUTES, _DOC_COMMON, BaseMinimaxModel
from ._check import _DOC_CHECK_ATTR, _DOC_CHECK_PARAM, MinimaxUtilityCheckMixin

__all__ = ["MinimaxLogisticRegression", "MinimaxRegressor"]


def _group_problem(Xc, target, cells, pi, loss, center, radius, clamp_x, clamp_y):
    """``f = sum_g lam_g 1{a = g} / pi_g (l - center)`` (spec 2.5, estimator A)."""
    n, G = Xc.shape[0], pi.shape[0]
    A = np.zeros((n, G))
    A[np.arange(n), cells] = 1.0 / pi[cells]
    return LinearSaddleProblem(
        X=Xc,
        target=np.ascontiguousarray(target, dtype=np.float64),
        A=A,
        B=np.zeros((n, G)),
        C=np.zeros(G),
        a0=0.0,
        center=center,
        loss=loss,
        radius=radius,
        clamp_x=clamp_x,
        clamp_y=clamp_y,
    )


class _GroupCells:
    def _n_cells(self, n_groups):
        return n_groups

    def _cells(self, codes, target):
        return codes

    def _lagrangian(self, Xc, target, cells, pi):
        """noisy-sgda: ``min_theta max_w E[w_a loss]``, ``w >= 0, pi . w = 1``.

        Written on weights ``w_g = lam_g / pi_g`` rather than on the simplex
        ``lam``: a record's dual gradient is ``loss e_a`` (its group's *sum*,
        O(1) whatever the group's size) instead of ``loss e_a / pi_a``.
        """
        G = pi.shape[0]
        return LagrangianProblem(
            X=Xc,
            target=np.ascontiguousarray(target, dtype=np.float64),
            cells=np.ascontiguousarray(cells, dtype=np.int64),
            kind=WORST_GROUP,
            loss=self._loss_code,
            M=np.eye(G),
            dual_kind=DUAL_WEIGHTS,
            props=pi,
            bound=math.inf,
            slack=np.zeros(G),
            dual_init=np.ones(G) / pi.sum(),
        )


class BinaryLinearClassifierMixin(MinimaxUtilityCheckMixin, ClassifierMixin):
    """Labels, prediction, probabilities and the utility check of a binary
    linear classifier."""

    def _encode_target(self, y):
        check_label_values(y, "y")
        check_classification_targets(y)
        if self.classes is None:
            self._warn(
                "classes=None: the label set is inferred from the private y and "
                "released through classes_. Pass classes=[...] to avoid this leak.",
                PrivacyLeakWarning,
            )
            classes = np.unique(y)
        else:
            check_label_values(self.classes, "classes")
            classes = np.unique(np.asarray(self.classes))
            if (~np.isin(y, classes)).any():
                raise ValueError(
                    f"y contains labels not in classes={classes.tolist()}."
                )
        if classes.shape[0] != 2:
            raise ValueError(
                f"{type(self).__name__} is a binary classifier; got "
                f"{classes.shape[0]} classes."
            )
        self.classes_ = classes
        return np.where(y == classes[1], 1.0, -1.0)

    def predict(self, X):
        """Predicted class labels.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        return self.classes_[(self.decision_function(X) > 0).astype(int)]

    def predict_proba(self, X):
        """Sigmoid of the decision function, columns in ``classes_`` order.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, 2)
        """
        p = expit(self.decision_function(X))
        return np.column_stack([1.0 - p, p])


class MinimaxLogisticRegression(
    _GroupCells, BinaryLinearClassifierMixin, BaseMinimaxModel
):
    _loss_code = LOGISTIC
    _parameter_constraints = {
        **BaseMinimaxModel._parameter_constraints,
        "classes": ["array-like", None],
        "utility_check": [
            StrOptions({"auto"}),
            Interval(Real, 0, 1, closed="neither"),
            None,
        ],
    }

    def __init__(
        self,
        *,
        epsilon=1.0,
        delta=1e-5,
        l1_radius=4.0,
        feature_bound=1.0,
        fit_intercept=True,
        classes=None,
        groups=None,
        group_proportions="private",
        proportions_budget=0.1,
        min_group_proportion=None,
        solver="auto",
        random_state=None,
        feature_scale="auto",
        scale_share=0.05,
        feature_centring=None,
        feature_balance="auto",
        utility_check="auto",
    ):
        super().__init__(
            epsilon=epsilon,
            delta=delta,
            l1_radius=l1_radius,
            feature_bound=feature_bound,
            fit_intercept=fit_intercept,
            groups=groups,
            group_proportions=group_proportions,
            proportions_budget=proportions_budget,
            min_group_proportion=min_group_proportion,
            solver=solver,
            random_state=random_state,
            feature_scale=feature_scale,
            scale_share=scale_share,
            feature_centring=feature_centring,
            feature_balance=feature_balance,
        )
        self.utility_check = utility_check
        self.classes = classes

    def _problem(self, Xc, target, cells, pi, pi_min):
        R, b = float(self.l1_radius), float(self.feature_bound)
        rb = R * b
        # centring c = [ln(1+e^RX) + ln(1+e^-RX)] / 2 halves the y-block bound
        center = 0.5 * (np.logaddexp(0, rb) + np.logaddexp(0, -rb))
        L0 = rb / pi_min  # x block: R X / pi; y block: (R X / 2) / pi
        L1 = (rb**2 / 4 + rb) / pi_min
        L2 = (rb**3 / (6 * math.sqrt(3)) + rb**2 / 4) / pi_min
        problem = _group_problem(
            Xc, target, cells, pi, LOGISTIC, center, R, 1.0 / pi_min, L0
        )
        return problem, L0, L1, L2

    def _release(self, coef, intercept, y):
        self.coef_ = coef[None, :]
        self.intercept_ = np.array([intercept])
        self.group_weights_ = y


class MinimaxRegressor(_GroupCells, RegressorMixin, BaseMinimaxModel):
    _loss_code = SQUARED
    _parameter_constraints = {
        **BaseMinimaxModel._parameter_constraints,
        "target_bound": [
            Interval(Real, 0, MAX_SCORE_BOUND, closed="right"),
            StrOptions({"auto"}),
        ],
    }
    #: ``target_bound="auto"``: the estimated range is mapped to ``-+`` this
    #: (public) and the solver's bound on the target is this.
    #: (measured on California housing, noisy-sgda, epsilon 1, 2 seeds, test
    #: R^2: 1 -> 0.47 / 0.50, 3 -> 0.59 / 0.59; Ridge's value).
    _TARGET_HALF_RANGE = _scales.TARGET_HALF_RANGE
    #: ``target_bound="auto"`` without an estimate (epsilon = inf, or too few
    #: rows for the budget): the targets are clipped to ``-+`` this, as before.
    _FALLBACK_TARGET_BOUND = 1.0

    def __init__(
        self,
        *,
        epsilon=1.0,
        delta=1e-5,
        l1_radius=4.0,
        feature_bound=1.0,
        target_bound="auto",
        fit_intercept=True,
        groups=None,
        group_proportions="private",
        proportions_budget=0.1,
        min_group_proportion=None,
        solver="auto",
        random_state=None,
        feature_scale="auto",
        scale_share=0.05,
        feature_centring=None,
        feature_balance="auto",
    ):
        super().__init__(
            epsilon=epsilon,
            delta=delta,
            l1_radius=l1_radius,
            feature_bound=feature_bound,
            fit_intercept=fit_intercept,
            groups=groups,
            group_proportions=group_proportions,
            proportions_budget=proportions_budget,
            min_group_proportion=min_group_proportion,
            solver=solver,
            random_state=random_state,
            feature_scale=feature_scale,
            scale_share=scale_share,
            feature_centring=feature_centring,
            feature_balance=feature_balance,
        )
        self.target_bound = target_bound

    def _auto_target(self):
        return isinstance(self.target_bound, str) and self.target_bound == "auto"

    def _public_target_bound(self):
        """The bound on the solver's targets ``|y'|`` (public)."""
        if self._auto_target():
            return max(self._TARGET_HALF_RANGE, self._FALLBACK_TARGET_BOUND)
        return float(self.target_bound)

    def _score_bound(self):
        return super()._score_bound() + self._public_target_bound()

    def _estimated_targets(self, y):
        return 1 if self._auto_target() else 0

    def _encode_target(self, y):
        y = np.asarray(y, dtype=np.float64)
        if y.ndim != 1:
            raise ValueError("MinimaxRegressor supports a single target (1-d y).")
        self._fs.y_center, self._fs.y_scale, self.target_range_ = 0.0, 1.0, None
        if self._auto_target():
            if not np.isfinite(y).all():
                raise ValueError("y must be finite for target_bound='auto'.")
            return y  # clipped and scaled once the range is estimated
        self._fs.target_bound = t = float(self.target_bound)
        return np.clip(y, -t, t)

    def _scale_target(self, y):
        """``target_bound="auto"``: the private range, then ``y' in -+ H``.

        ``(low, high)`` is :func:`~dpestim.preprocessing._fit_scales.
        private_target_range` (up to five exponential-mechanism draws, part of
        ``scale_share``); each target is clipped to it, centred on its
        midpoint and scaled so the range is ``-+ _TARGET_HALF_RANGE``
        (per-record maps with private constants: inside the privacy
        argument); ``coef_`` and ``intercept_`` are mapped back.
        """
        if not self._auto_target():
            return y
        plan, rng = self._fs.scale_fit
        if not math.isfinite(float(self.epsilon)):
            # not private: the exact centre and spread (said so in the notes)
            low, high = _scales.exact_target_range(y)
            note = "read from the data (epsilon = inf: not private)"
            return self._map_target(y, float(low), float(high), note)
        if plan.target_epsilon is None:
            note = plan.notes.get("y_bound", "not estimated (epsilon = inf)")
            self._fs.target_notes = {
                "target_bound": f"{note}; clipped to -+ {self._FALLBACK_TARGET_BOUND:g}"
            }
            self._fs.target_bound = t = self._FALLBACK_TARGET_BOUND
            # public: n, epsilon and the share decide it, never the targets
            warn_in_fit(
                "target_bound='auto': the private target range was not "
                f"estimated ({note}), so the targets are clipped to -+ {t:g} "
                "in their own units; a target far from that scale is fitted "
                "poorly (its R^2 may be negative). Pass a public "
                "target_bound, or a larger epsilon.",
                UtilityWarning,
            )
            return np.clip(y, -t, t)
        low, high = _scales.private_target_range(
            y,
            plan.target_epsilon,
            rng,
            plan.centre_stages,
            plan.spread_units,
            param="target_bound",
        )
        return self._map_target(y, low, high, _scales.target_note(plan))

    def _map_target(self, y, low, high, note):
        """Clip ``y`` to ``(low, high)`` and map that range to ``-+ H``."""
        c, scale = _scales.target_map(
            low, high, self.fit_intercept, self._TARGET_HALF_RANGE
        )
        self._fs.y_center, self._fs.y_scale = float(c), float(scale)
        self.target_range_ = (low, high)
        self._fs.target_bound = self._TARGET_HALF_RANGE
        self._fs.target_notes = {"target_bound": note}
        y = (np.clip(y, low, high) - self._fs.y_center) / self._fs.y_scale
        # float rounding: keep the solver's public bound exact
        t = self._TARGET_HALF_RANGE
        return np.clip(y, -t, t)

    def _problem(self, Xc, target, cells, pi, pi_min):
        R, b, Y = (
            float(self.l1_radius),
            float(self.feature_bound),
            float(self._fs.target_bound),
        )
        rb = R * b
        top = rb + Y  # |theta.x - y| <= R X + Y
        center = top**2 / 4  # loss in [0, top^2 / 2]
        L0 = max(top * rb, top**2 / 4) / pi_min
        L1 = (rb**2 + top * rb) / pi_min
        L2 = rb**2 / pi_min
        problem = _group_problem(
            Xc, target, cells, pi, SQUARED, center, R, top / pi_min, top**2 / 4 / pi_min
        )
        return problem, L0, L1, L2

    def _release(self, coef, intercept, y):
        if self._fs.y_scale != 1.0 or self._fs.y_center != 0.0:
            # back to the user's units: y = centre + scale y'
            coef = coef * self._fs.y_scale
            intercept = self._fs.y_center + self._fs.y_scale * intercept
        self.coef_ = coef
        self.intercept_ = float(intercept)
        self.group_weights_ = y

    def predict(self, X):
        """Predicted targets ``decision_function(X)``.

        Clipped to ``target_range_`` when the range was estimated
        (``target_bound="auto"``; post-processing of the released model).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        pred = self.decision_function(X)
        if getattr(self, "target_range_", None) is not None:
            pred = np.clip(pred, *self.target_range_)
        return pred


MinimaxLogisticRegression.__doc__ = f"""Private worst-group logistic regression.

    Minimises the largest group-conditional logistic risk
    ``max_g E[log(1 + exp(-y theta.x)) | a = g]``. With the default
    ``solver="auto"`` (``"noisy-sgda"``) it is the saddle point ``min_theta max_w
    E[w_a log(1 + exp(-y theta.x))]`` over group weights ``w >= 0``,
    ``sum_g pi_g w_g = 1`` (a record's dual gradient is its loss, O(1)
    whatever its group's size), solved by noisy SGDA (Gaussian, add/remove,
    dp_accounting). With ``solver="dp-smd"`` it is spec 001's estimator A
    on the l1 ball ``||theta||_1 <= R``, ``min_theta max_(lam in simplex)
    sum_g lam_g E[1{{a = g}} / pi_g (l - c)]`` with the loss centring ``c``,
    solved by private stochastic mirror descent with vertex sampling (no
    added noise; the sampling is an exponential mechanism). Binary
    classification only.

    With ``pi_g`` equal to the true proportions the saddle point is the
    minimax-risk model; with other ``pi`` (e.g. ``"uniform"``) it is that of
    ``sum_g lam_g P(a = g) / pi_g R_g``.

    Parameters
    ----------
    {_DOC_COMMON}
    classes : array-like or None, default=None
        The public label set (two labels); ``None`` infers it from ``y``
        with a :class:`~dpestim.PrivacyLeakWarning`.
    {_DOC_CHECK_PARAM}

    Attributes
    ----------
    {_DOC_ATTRIBUTES}
    classes_ : ndarray of shape (2,)
    {_DOC_CHECK_ATTR}
    group_weights_ : ndarray of shape (n_groups,)
        The released dual variable on the simplex (``pi * w`` for
        noisy-sgda; the average of the vertex samples for dp-smd), a
        post-processing of the private run. Large weights mark the groups
        with the largest risk.

    Examples
    --------
    >>> import numpy as np
    >>> from dpestim import MinimaxLogisticRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(5000, 3))
    >>> a = rng.choice(["f", "m"], size=5000)
    >>> y = (X[:, 0] > 0).astype(int)
    >>> clf = MinimaxLogisticRegression(epsilon=1.0, classes=[0, 1], groups=["f", "m"],
    ...                                 random_state=0)
    >>> clf = clf.fit(X, y, sensitive_features=a)
    >>> clf.group_weights_.shape
    (2,)
    """

MinimaxRegressor.__doc__ = f"""Private worst-group least squares.

    Minimises ``max_g E[(theta.x - y)^2 / 2 | a = g]`` over
    ``||theta||_1 <= R`` (spec 001, estimator B) by private stochastic
    mirror descent with vertex sampling; targets are clipped to
    ``[-target_bound, target_bound]``, or, by default, to a private range
    and mapped to ``-+ {_scales.TARGET_HALF_RANGE:g}`` (``target_bound="auto"``).

    Parameters
    ----------
    {_DOC_COMMON}
    target_bound : "auto" or float, default="auto"
        Public bound ``Y`` on ``|y|``; targets are clipped to it. ``"auto"``: a
        private range ``c -+ 2.93 m`` (``c`` a private median of ``y``, refined
        three times, ``m`` a private 75th percentile of ``|y - c|``, or the
        median absolute deviation with a fence of 5 where the budget is short:
        five exponential-mechanism draws from ``scale_share``, the estimator of
        :class:`~dpestim.Ridge`'s ``y_bound="auto"``); targets are clipped to it
        and mapped to ``-+ {_scales.TARGET_HALF_RANGE:g}`` (the solver's bound),
        ``coef_`` and ``intercept_`` are mapped back and predictions clipped to
        the range, so the fit is the same at any unit or offset of ``y``.
        Without a reliable estimate (``n`` too small for the budget; the privacy
        report says so) targets are clipped to ``-+1``; at ``epsilon=inf`` the
        median and the 75th percentile of ``|y - c|`` are read from the data
        (not private). (Before issue 25 the default was ``1.0``.)

    Attributes
    ----------
    {_DOC_ATTRIBUTES}
    group_weights_ : ndarray of shape (n_groups,)
        The released (private) dual variable.
    target_range_ : tuple of float or None
        The private ``(low, high)`` range of ``target_bound="auto"``, or
        ``None``.
    """
