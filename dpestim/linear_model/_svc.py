"""Differentially private linear support vector classifier."""

import numpy as np
from sklearn.utils._param_validation import StrOptions

from ..losses import HINGE, SQUARED_HINGE
from ._classifier import BaseDPLinearClassifier
from ._docs import (
    ATTRIBUTES,
    CLASS_PRIOR_ATTRIBUTE,
    CLASS_PRIOR_PARAM,
    CLASSES_PARAM,
    COEF_BOUND_PARAM,
    COMMON_TAIL,
    PRIVACY_PARAMS,
)

__all__ = ["LinearSVC"]

_LOSSES = {"hinge": HINGE, "squared_hinge": SQUARED_HINGE}


class LinearSVC(BaseDPLinearClassifier):
    _parameter_constraints = {
        **BaseDPLinearClassifier._parameter_constraints,
        "loss": [StrOptions(set(_LOSSES))],
    }

    def __init__(
        self,
        *,
        loss="squared_hinge",
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
            classes=classes,
            coef_bound=coef_bound,
            random_state=random_state,
            verbose=verbose,
            feature_scale=feature_scale,
            scale_share=scale_share,
            feature_centring=feature_centring,
            feature_balance=feature_balance,
            class_prior=class_prior,
            class_weight=class_weight,
            utility_check=utility_check,
        )
        self.loss = loss

    @property
    def _loss_name(self):
        return self.loss

    def _loss_at_zero(self, n_outputs):
        # (squared) hinge of a zero score is 1, for each one-vs-rest output
        return float(n_outputs)

    def _prior_intercept(self, p):
        """``2 p_k - 1`` per one-vs-rest output (binary: ``2 p_1 - 1``).

        The optimum of the squared hinge of a constant score with labels
        ``+1`` at rate ``p``, ``p (1 - b)^2 + (1 - p) (1 + b)^2``; for the
        hinge loss the constant optimum is only the sign (``-+1``), and
        ``2 p - 1`` is used as its interpolation (a public mapping of the
        released proportions).
        """
        return [2.0 * p[1] - 1.0] if p.shape[0] == 2 else 2.0 * p - 1.0

    def _encode_targets(self, y):
        idx = self._resolve_classes(y)
        n_classes = self.classes_.shape[0]
        if n_classes == 2:
            Y = np.where(idx == 1, 1.0, -1.0)[:, None]
        else:
            Y = np.full((idx.shape[0], n_classes), -1.0)
            Y[np.arange(idx.shape[0]), idx] = 1.0
        return _LOSSES[self.loss], Y


LinearSVC.__doc__ = f"""Differentially private linear support vector classifier.

    Minimises ``mean_i loss_i + alpha / 2 ||coef||^2`` with the hinge or
    squared hinge loss. With more than two classes the model is one-vs-rest,
    ``loss_i = sum_k loss(y_ik z_ik)``, trained in a single private run: the
    per-example gradient of all classes is clipped together, so there is one
    mechanism to account for rather than one per class.

    Parameters
    ----------
    loss : {{"hinge", "squared_hinge"}}, default="squared_hinge"
        ``max(0, 1 - y z)`` or its square. ``solver="objective-perturbation"``
        needs a loss with bounded first and second derivatives and fits a
        smooth surrogate instead: the Huber hinge for ``"hinge"``, the
        modified Huber loss for ``"squared_hinge"``
        (:class:`~dpestim.solvers.ObjectivePerturbation`).
    {PRIVACY_PARAMS}
    {CLASSES_PARAM}
    {COEF_BOUND_PARAM}
    {COMMON_TAIL}
    {CLASS_PRIOR_PARAM}

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    coef_bound_ : float or None
        The radius ``coef_`` was projected on (``coef_bound`` resolved).
    {CLASS_PRIOR_ATTRIBUTE}
    {ATTRIBUTES}

    See Also
    --------
    sklearn.svm.LinearSVC : the non-private estimator; ``C`` corresponds to
        ``alpha = 1 / (C * n_samples)`` (scikit-learn also penalises the
        intercept, dpestim does not).
    """
