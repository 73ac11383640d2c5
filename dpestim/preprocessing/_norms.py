"""Row-norm clipping: with a public bound, or a privately estimated one."""

import math
from numbers import Integral, Real

import dp_accounting
import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils._param_validation import Interval, validate_parameter_constraints
from sklearn.utils.validation import check_array, check_is_fitted

from ..utils.validation import data_errors_without_values, validate_private_data
from ._quantile import QUANTILE_CONSTRAINTS, private_quantile

__all__ = ["PrivateRowNormClipper", "RowNormClipper", "estimate_clip_norm"]


def _row_norms(X):
    if sp.issparse(X):
        return np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    return np.sqrt(np.einsum("ij,ij->i", X, X))


def _clip_rows(X, max_norm):
    norms = _row_norms(X)
    factor = np.minimum(1.0, max_norm / np.maximum(norms, np.finfo(float).tiny))
    if sp.issparse(X):
        return sp.diags(factor) @ X
    return X * factor[:, None]


class _BaseClipper(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    def transform(self, X):
        """Scale every row of L2 norm above ``max_norm_`` down to it.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        X_clipped : same type as X
        """
        check_is_fitted(self)
        X = validate_private_data(
            self, X, accept_sparse="csr", dtype=np.float64, reset=False
        )
        return _clip_rows(X, self.max_norm_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


class RowNormClipper(_BaseClipper):
    """Clip the L2 norm of every row to a public ``max_norm`` (no privacy cost).

    A data-independent, per-row map: it learns nothing from the data, so its
    event is ``NoOpDpEvent``. Downstream, a linear model's per-example
    gradient ``l'(x.w) (x, 1)`` then has norm at most
    ``|l'| sqrt(max_norm**2 + 1)`` (with an intercept), which tells which
    ``clip_norm`` leaves the gradient clipping inactive.

    Parameters
    ----------
    max_norm : float, default=1.0

    Attributes
    ----------
    max_norm_ : float
    dp_event_ : dp_accounting.NoOpDpEvent
    epsilon_, delta_ : float
        0 and 0.
    n_features_in_ : int
    """

    _parameter_constraints = {"max_norm": [Interval(Real, 0, None, closed="neither")]}

    def __init__(self, max_norm=1.0):
        self.max_norm = max_norm

    def fit(self, X, y=None):
        """Record the public bound (nothing is learnt from X).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self : object
        """
        self._validate_params()
        validate_private_data(self, X, accept_sparse="csr", dtype=np.float64)
        self.max_norm_ = float(self.max_norm)
        self.dp_event_ = dp_accounting.NoOpDpEvent()
        self.epsilon_, self.delta_ = 0.0, 0.0
        return self


class PrivateRowNormClipper(_BaseClipper):
    """Clip rows to a private quantile of their L2 norms.

    ``max_norm_`` is an ``epsilon``-DP estimate of the ``quantile`` of the row
    norms (:func:`private_quantile`, exponential mechanism over a geometric
    grid in ``bounds``); rows above it are scaled down to it.

    Parameters
    ----------
    quantile : float, default=0.9
    epsilon : float, default=0.1
    bounds : (float, float), default=(1e-3, 1e3)
        Public range of the candidate norms.
    n_grid : int, default=256
    random_state : None, int or numpy.random.Generator, default=None

    Attributes
    ----------
    max_norm_ : float
        The private quantile (covered by the guarantee).
    dp_event_ : DpEvent
        ``ExponentialMechanismDpEvent(epsilon)``.
    epsilon_, delta_ : float
        ``epsilon`` and 0 (pure DP).
    n_features_in_ : int
    """

    _parameter_constraints = {
        "quantile": [Interval(Real, 0, 1, closed="neither")],
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "bounds": [tuple, list],
        "n_grid": [Interval(Integral, 2, None, closed="left")],
        "random_state": ["random_state", np.random.Generator],
    }

    def __init__(
        self,
        quantile=0.9,
        epsilon=0.1,
        bounds=(1e-3, 1e3),
        n_grid=256,
        random_state=None,
    ):
        self.quantile = quantile
        self.epsilon = epsilon
        self.bounds = bounds
        self.n_grid = n_grid
        self.random_state = random_state

    def fit(self, X, y=None):
        """Estimate ``max_norm_`` privately.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self : object
        """
        self._validate_params()
        X = validate_private_data(self, X, accept_sparse="csr", dtype=np.float64)
        if math.isinf(self.epsilon):
            raise ValueError("epsilon must be finite (use RowNormClipper).")
        self.max_norm_, self.dp_event_ = private_quantile(
            _row_norms(X),
            self.quantile,
            self.epsilon,
            self.bounds,
            n_grid=self.n_grid,
            random_state=self.random_state,
            label=f"PrivateRowNormClipper(epsilon={self.epsilon:g})",
        )
        self.epsilon_, self.delta_ = float(self.epsilon), 0.0
        return self


def estimate_clip_norm(
    X,
    *,
    quantile=0.9,
    epsilon=0.1,
    bounds=(1e-3, 1e3),
    fit_intercept=True,
    n_grid=256,
    random_state=None,
):
    """A private ``clip_norm`` for a linear model: a quantile of ``||(x, 1)||``.

    For the logistic and hinge losses ``|l'| <= 1``, so
    the per-example gradient norm at any ``w`` is at most ``||(x, 1)||``
    (``||x||`` without intercept), with equality up to ``|l'|`` at
    ``w = 0`` (``1 / 2`` for the logistic loss). This returns an
    ``epsilon``-DP estimate of its ``quantile`` (:func:`private_quantile`),
    charged to the active budgets.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
    quantile : float, default=0.9
    epsilon : float, default=0.1
    bounds : (float, float), default=(1e-3, 1e3)
    fit_intercept : bool, default=True
    n_grid : int, default=256
        Number of candidates, in ``[2, 2**20]``.
    random_state : None, int or numpy.random.Generator, default=None

    Returns
    -------
    clip_norm : float
    dp_event : DpEvent
        ``ExponentialMechanismDpEvent(epsilon)``; compose it with the fit's.
    """
    params = {"quantile": quantile, "epsilon": epsilon, "bounds": bounds}
    params |= {"n_grid": n_grid, "random_state": random_state}
    validate_parameter_constraints(
        QUANTILE_CONSTRAINTS | {"fit_intercept": ["boolean"]},
        params | {"fit_intercept": fit_intercept},
        "estimate_clip_norm",
    )
    with data_errors_without_values():  # a 1-D X: a clear error, no values
        X = check_array(
            X, accept_sparse="csr", dtype=np.float64, ensure_all_finite=False
        )
    norms = np.hypot(_row_norms(X), 1.0 if fit_intercept else 0.0)
    return private_quantile(
        norms,
        quantile,
        epsilon,
        bounds,
        n_grid=n_grid,
        random_state=random_state,
        label=f"estimate_clip_norm(epsilon={epsilon:g})",
    )
