"""Differentially private ridge regression."""

import numpy as np
from sklearn.base import RegressorMixin

from ..losses import SQUARED
from ._base import BaseDPLinearModel
from ._docs import ATTRIBUTES, COMMON_TAIL, PRIVACY_PARAMS

__all__ = ["Ridge"]


class Ridge(RegressorMixin, BaseDPLinearModel):
    _loss_name = "squared"
    _validate_kwargs = {"multi_output": True, "y_numeric": True}

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
        return SQUARED, y.reshape(y.shape[0], -1)

    def _set_coef(self, coef, intercept):
        if self._single_target:
            self.coef_, self.intercept_ = coef[0], float(intercept[0])
        else:
            self.coef_, self.intercept_ = coef, intercept

    def predict(self, X):
        """Predict with the private linear model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,) or (n_samples, n_targets)
        """
        pred = self._decision(X)
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
    {COMMON_TAIL}

    Attributes
    ----------
    {ATTRIBUTES}

    See Also
    --------
    sklearn.linear_model.Ridge : the non-private estimator; its ``alpha``
        corresponds to ``alpha_dpestim * n_samples``.
    """
