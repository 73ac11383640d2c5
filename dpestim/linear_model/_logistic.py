"""Differentially private logistic regression."""

import math

import numpy as np
from scipy.special import expit, log_softmax, softmax

from ..losses import LOGISTIC, MULTINOMIAL
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

__all__ = ["LogisticRegression"]


class LogisticRegression(BaseDPLinearClassifier):
    _loss_name = "logistic"

    def _loss_at_zero(self, n_outputs):
        # log 2 for the binary score, log K for the softmax over K classes
        return math.log(2.0 if n_outputs == 1 else float(n_outputs))

    def _prior_intercept(self, p):
        """The intercept-only optimum at class proportions ``p``.

        Binary: the log-odds ``log(p_1 / p_0)``; multinomial: ``log p_k``
        centred (softmax is invariant to a common shift).
        """
        logp = np.log(p)
        if p.shape[0] == 2:
            return [logp[1] - logp[0]]
        return logp - logp.mean()

    def _encode_targets(self, y):
        idx = self._resolve_classes(y)
        n_classes = self.classes_.shape[0]
        if n_classes == 2:
            return LOGISTIC, np.where(idx == 1, 1.0, -1.0)[:, None]
        Y = np.zeros((idx.shape[0], n_classes))
        Y[np.arange(idx.shape[0]), idx] = 1.0
        return MULTINOMIAL, Y

    def predict_proba(self, X):
        """Class probabilities (sigmoid for binary, softmax for multinomial).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        scores = self._decision(X)
        if scores.shape[1] == 1:
            # expit(-s), not 1 - expit(s): no underflow to 0 for s > 37
            return np.column_stack([expit(-scores[:, 0]), expit(scores[:, 0])])
        return softmax(scores, axis=1)

    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`, computed stably.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
        """
        scores = self._decision(X)
        if scores.shape[1] == 1:
            s = scores[:, 0]
            return np.column_stack([-np.logaddexp(0, s), -np.logaddexp(0, -s)])
        return log_softmax(scores, axis=1)


LogisticRegression.__doc__ = f"""Differentially private logistic regression.

    Minimises ``mean_i loss_i + alpha / 2 ||coef||^2`` with a private
    algorithm chosen by ``solver=``. Binary problems use the logistic loss on
    a single score (positive class ``classes_[1]``); more than two classes use
    the multinomial (softmax) loss, with the per-example gradient of all
    classes clipped together, so one private run covers every class.

    Parameters
    ----------
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
    sklearn.linear_model.LogisticRegression : the non-private estimator; its
        ``C`` corresponds to ``alpha = 1 / (C * n_samples)``.

    Examples
    --------
    >>> import numpy as np
    >>> from dpestim import LogisticRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 5)) / np.sqrt(5)
    >>> y = (X[:, 0] > 0).astype(int)
    >>> clf = LogisticRegression(epsilon=1.0, classes=[0, 1], random_state=0)
    >>> clf = clf.fit(X, y)
    >>> clf.epsilon_ <= 1.0
    True
    """
