"""Label handling shared by the private classifiers."""

import math
from numbers import Real

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets

from ..exceptions import PrivacyLeakWarning
from ..preprocessing import _fit_scales
from ..utils import check_label_values
from ._base import BaseDPLinearModel
from ._class_balance import ClassBalanceMixin
from ._utility_check import UtilityCheckMixin

__all__ = ["BaseDPLinearClassifier"]


class BaseDPLinearClassifier(
    UtilityCheckMixin, ClassBalanceMixin, ClassifierMixin, BaseDPLinearModel
):
    """Private linear classifier: label set handling and prediction."""

    _parameter_constraints = {
        **BaseDPLinearModel._parameter_constraints,
        "classes": ["array-like", None],
        "coef_bound": [
            Interval(Real, 0, None, closed="neither"),
            StrOptions({"auto"}),
            None,
        ],
        "class_prior": [StrOptions({"auto"}), "array-like", None],
        "class_weight": [StrOptions({"balanced"}), dict, None],
        "utility_check": [
            StrOptions({"auto"}),
            Interval(Real, 0, 1, closed="neither"),
            None,
        ],
    }
    _validate_kwargs = {}

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
        classes=None,
        coef_bound="auto",
        random_state=None,
        verbose=0,
        feature_scale="auto",
        scale_share=0.05,
        feature_centring="auto",
        feature_balance="auto",
        class_prior="auto",
        class_weight=None,
        utility_check="auto",
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
        self.classes = classes
        self.coef_bound = coef_bound
        self.class_prior = class_prior
        self.class_weight = class_weight
        self.utility_check = utility_check

    def _loss_at_zero(self, n_outputs):
        """Mean loss of the zero model (public: the loss and the outputs)."""
        raise NotImplementedError

    def _resolve_coef_bound(self, n_outputs):
        """The radius of ``coef_`` (Frobenius norm), or ``None``; public.

        ``"auto"``: ``sqrt(2 loss(0) / alpha)`` with ``alpha = alpha_`` (the
        fit's penalty in the units of ``X``, ``alpha="auto"`` resolved). The
        optimum ``(W*, b*)`` of ``mean_i loss_i + alpha / 2 ||W||^2`` has
        ``alpha / 2 ||W*||^2 <= F(W*, b*) <= F(0, 0) = loss(0)`` (losses are
        >= 0 and the intercept is not penalised), so this ball contains it. ``None`` for
        ``alpha = 0`` (no penalty, no such ball).
        """
        bound = self.coef_bound
        if bound is None:
            return None
        if isinstance(bound, str):
            alpha = self.alpha_
            if not alpha > 0:
                return None
            # with class weights the objective is mean w_i loss_i: at zero at
            # most max(w) loss(0) (w released or public: class_weight_)
            w = getattr(self, "class_weight_", None)
            wmax = 1.0 if w is None else float(np.max(w))
            radius = math.sqrt(2.0 * wmax * self._loss_at_zero(n_outputs) / alpha)
            # the penalty is on the coefficients of the balanced columns
            # (x_j / sigma_j): in X's units ||w|| <= ||w'|| / min(sigma), so a
            # column scale below 1 (a public feature_balance) widens the ball
            sigma = getattr(self, "feature_balance_", None)
            if sigma is not None:
                radius /= min(1.0, float(np.min(sigma)))
            return radius
        return float(bound)

    def _set_coef(self, coef, intercept):
        """Project ``coef`` on the ball of radius ``coef_bound_``.

        Post-processing of the released model (the intercept is kept): it
        costs no privacy. The ball is convex and, for ``"auto"``, contains
        the optimum, so the projection never moves the model away from it.
        """
        bound = self._resolve_coef_bound(coef.shape[0])
        self.coef_bound_ = bound
        self.hyperparameters_["coef_bound"] = bound
        if bound is not None:
            norm = float(np.sqrt(np.sum(np.square(coef, dtype=np.float64))))
            if norm > bound:
                shrunk = (coef * (bound / norm)).astype(coef.dtype, copy=False)
                centre = getattr(self, "feature_centre_", None)
                if centre is not None:
                    # the model is w . (x - c) + b': shrink w there, keep b'
                    # (intercept_ = b' - w . c)
                    intercept = (intercept + (coef - shrunk) @ centre).astype(
                        intercept.dtype, copy=False
                    )
                coef = shrunk
        super()._set_coef(coef, intercept)

    def _row_norm_target(self, y, solver):
        """Median row norm the rows are rescaled to (public: solver, loss, K).

        A solver's own ``row_norm_target`` wins. With more than two classes
        (public: the number of classes, as :meth:`_estimated_classes` reads
        it), :data:`~dpestim.preprocessing._fit_scales.MULTINOMIAL_ROW_NORM_TARGET`
        for the softmax of :class:`~dpestim.LogisticRegression` and
        :data:`~dpestim.preprocessing._fit_scales.MULTIOUTPUT_HINGE_ROW_NORM_TARGET`
        for the one-vs-rest (squared) hinge of :class:`~dpestim.LinearSVC`
        with a solver whose ``multiclass_hinge_row_target`` says so (the
        dp-sgd family); else (``None``)
        :data:`~dpestim.preprocessing._fit_scales.ROW_NORM_TARGET`.
        """
        if solver.row_norm_target is not None:
            return solver.row_norm_target
        if self._scale_fit[0].row_epsilon is None:  # no row scale estimated
            return None
        softmax = self._loss_name in ("logistic", "multinomial")
        if not softmax and not getattr(solver, "multiclass_hinge_row_target", False):
            return None
        if self.classes is None:
            check_label_values(y, "y")  # the clear error for mixed labels
            K = np.unique(y).size
        else:
            K = len(self.classes)
        if K <= 2:
            return None
        if softmax:
            return _fit_scales.MULTINOMIAL_ROW_NORM_TARGET
        return _fit_scales.MULTIOUTPUT_HINGE_ROW_NORM_TARGET

    def _resolve_classes(self, y):
        """Set ``classes_`` from ``classes=`` (public) or, with a warning, ``y``."""
        check_label_values(y, "y")
        check_classification_targets(y)
        if self.classes is None:
            classes = np.unique(y)
            self._warn(
                "classes=None: the label set is inferred from the private y and "
                "released through classes_. Pass classes=[...] (public knowledge) "
                "to avoid this leak.",
                PrivacyLeakWarning,
            )
        else:
            check_label_values(self.classes, "classes")
            given = np.asarray(self.classes)
            if given.ndim != 1:
                raise ValueError("classes must be a 1-d array-like of labels.")
            classes = np.unique(given)
            if classes.shape[0] != given.shape[0]:
                raise ValueError("classes must not contain duplicate labels.")
            unknown = ~np.isin(y, classes)
            if unknown.any():
                raise ValueError(
                    # no count or value of the unknown labels: those are private
                    f"y contains labels not in classes={classes.tolist()}."
                )
        if classes.shape[0] < 2:
            raise ValueError(
                "A classifier needs at least two classes; got 1 class "
                f"({classes.tolist()}). Pass the full label set with classes=."
            )
        self.classes_ = classes
        return np.searchsorted(classes, y)

    def decision_function(self, X):
        """Signed scores ``X @ coef_.T + intercept_``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            One column per class, or a single column (the positive class
            ``classes_[1]``) for binary problems.
        """
        scores = self._decision(X)
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict(self, X):
        """Predicted class labels.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        codes = self._class_codes(self._decision(X))  # checks the fit first
        return self.classes_[codes]

    @staticmethod
    def _class_codes(scores):
        """Predicted class codes (indices of ``classes_``) of 2-d ``scores``."""
        if scores.shape[1] == 1:
            return (scores[:, 0] > 0).astype(np.int64)
        return np.argmax(scores, axis=1)
