"""A differentially private StandardScaler with public feature bounds."""

import math
from numbers import Real

import dp_accounting
import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils._param_validation import Interval, Options
from sklearn.utils.validation import check_is_fitted

from ..privacy import calibrate_noise, compute_epsilon, gaussian_noise
from ..privacy.charging import FitCharge, charge_fit
from ..utils import check_generator
from ..utils.validation import validate_private_data

__all__ = ["StandardScaler"]

#: Floor of the estimated variance, in units of the squared half-range of
#: the bounds (a public constant: keeps near-constant features finite).
VAR_FLOOR = 1e-4

# Range of the half-range of the bounds whose variance floor and square are
# normal finite floats (validated in ``_bounds``).
_TINY = float(np.finfo(np.float64).tiny)
_MAX_HALF = math.sqrt(float(np.finfo(np.float64).max))
_MIN_HALF = math.sqrt(_TINY / VAR_FLOOR)


class StandardScaler(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Standardise features with a private mean and variance.

    Each feature is clipped to public bounds ``[lower_j, upper_j]`` and mapped
    to ``z_j = (x_j - m_j) / r_j`` in ``[-1, 1]`` (``m`` the midpoint, ``r``
    the half-range). One Gaussian mechanism releases the sums of ``z`` and of
    ``z**2 - 1/2`` over the rows: one record moves that ``2 d`` vector by at
    most ``sqrt(1.25 d)`` in L2 norm (``sqrt(d)`` without ``with_std``), the
    sensitivity the noise is scaled to. The event is
    ``GaussianDpEvent(noise_multiplier_)``, calibrated by dp-accounting to
    ``(epsilon, delta)`` under add/remove-one neighbouring; ``n`` is public.
    The variance is floored at ``1e-4 r**2`` and capped at ``r**2``.

    Parameters
    ----------
    bounds : (lower, upper)
        Public bounds: finite scalars or arrays of shape (n_features,), with
        ``lower < upper`` and a half-range ``(upper - lower) / 2`` between
        about ``1.5e-152`` and ``1.3e154`` (so that the released variance and
        its floor are normal floats). Values outside are clipped (in fit and
        transform).
    epsilon : float, default=0.1
        ``numpy.inf`` gives the non-private (clipped) statistics.
    delta : float, default=1e-6
    with_mean : bool, default=True
    with_std : bool, default=True
    accountant : {"rdp", "pld"}, default="rdp"
    random_state : None, int or numpy.random.Generator, default=None

    Attributes
    ----------
    mean_, scale_, var_ : ndarray of shape (n_features,)
        Private estimates (covered by the guarantee).
    noise_multiplier_ : float
    dp_event_ : dp_accounting.DpEvent
    epsilon_, delta_ : float
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from dpestim.preprocessing import StandardScaler
    >>> X = np.random.default_rng(0).uniform(0, 10, size=(5000, 2))
    >>> sc = StandardScaler(bounds=(0, 10), epsilon=0.5, random_state=0).fit(X)
    >>> bool(np.all(np.abs(sc.mean_ - 5) < 0.2))
    True
    """

    _parameter_constraints = {
        "bounds": [tuple, list],
        "epsilon": [
            Interval(Real, 0, None, closed="neither"),
            Options(Real, {math.inf}),
        ],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "with_mean": ["boolean"],
        "with_std": ["boolean"],
        "accountant": [Options(str, {"rdp", "pld"})],
        "random_state": ["random_state", np.random.Generator],
    }

    def __init__(
        self,
        bounds,
        *,
        epsilon=0.1,
        delta=1e-6,
        with_mean=True,
        with_std=True,
        accountant="rdp",
        random_state=None,
    ):
        self.bounds = bounds
        self.epsilon = epsilon
        self.delta = delta
        self.with_mean = with_mean
        self.with_std = with_std
        self.accountant = accountant
        self.random_state = random_state

    def _bounds(self, d):
        if len(self.bounds) != 2:
            raise ValueError("bounds must be a pair (lower, upper).")
        try:
            lo, hi = (
                np.broadcast_to(np.asarray(b, float), (d,)).copy() for b in self.bounds
            )
        except ValueError:
            shapes = [np.shape(b) for b in self.bounds]
            raise ValueError(
                f"bounds must be scalars or arrays of shape ({d},), one value per "
                f"feature of X; got shapes {shapes}."
            ) from None
        if not (np.isfinite(lo).all() and np.isfinite(hi).all() and (lo < hi).all()):
            raise ValueError(
                "bounds must be finite with lower < upper for every feature "
                f"(scalars or arrays of length n_features={d})."
            )
        with np.errstate(over="ignore", under="ignore"):
            mid, half = (lo + hi) / 2, (hi - lo) / 2
            floor = VAR_FLOOR * half**2  # the smallest released variance
        if not (np.isfinite(mid).all() and np.isfinite(floor).all()):
            raise ValueError(
                "bounds are too wide: the half-range (upper - lower) / 2 must be "
                f"below {_MAX_HALF:.3g} (its square must be finite); rescale X by "
                "a public constant."
            )
        if not (floor >= _TINY).all():
            raise ValueError(
                f"bounds are too narrow: the half-range (upper - lower) / 2 must be "
                f"at least {_MIN_HALF:.3g} (the variance floor 1e-4 * half**2 must "
                "be a normal float); rescale X by a public constant."
            )
        return lo, hi

    def fit(self, X, y=None):
        """Estimate the mean and variance privately.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self : object
        """
        self._validate_params()
        X = validate_private_data(self, X, dtype=np.float64)
        n, d = X.shape
        lo, hi = self._bounds(d)
        private = math.isfinite(self.epsilon)
        if private:
            nm = calibrate_noise(
                dp_accounting.GaussianDpEvent,
                self.epsilon,
                self.delta,
                accountant=self.accountant,
                cache_key=("GaussianDpEvent",),
            )
            event = dp_accounting.GaussianDpEvent(nm)
        else:
            nm, event = 0.0, dp_accounting.NonPrivateDpEvent()
        charge_fit(
            FitCharge(event, "add_or_remove_one", f"StandardScaler(d={d})"),
            data=X,
            epsilon=self.epsilon,
            delta=self.delta,
        )
        mid, half = (lo + hi) / 2, (hi - lo) / 2
        Z = (np.clip(X, lo, hi) - mid) / half
        stats = np.concatenate([Z.sum(axis=0), (Z * Z - 0.5).sum(axis=0)])
        sensitivity = math.sqrt(1.25 * d if self.with_std else d)
        if not self.with_std:
            stats = stats[:d]
        noise = gaussian_noise(
            check_generator(self.random_state), nm * sensitivity, stats.shape
        )
        stats = stats + noise
        mean_z = np.clip(stats[:d] / n, -1.0, 1.0) if self.with_mean else np.zeros(d)
        if self.with_std:
            second = stats[d:] / n + 0.5
            var_z = np.clip(second - mean_z**2, VAR_FLOOR, 1.0)
        else:
            var_z = np.ones(d)
        self.mean_ = mid + half * mean_z
        self.var_ = var_z * half**2
        self.scale_ = np.sqrt(self.var_)
        self.lower_, self.upper_ = lo, hi
        self.noise_multiplier_ = float(nm)
        self.dp_event_ = event
        self.epsilon_ = (
            compute_epsilon(event, self.delta, self.accountant) if private else math.inf
        )
        self.delta_ = float(self.delta)
        return self

    def transform(self, X):
        """Clip to the bounds, centre and scale.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_scaled : ndarray of shape (n_samples, n_features)
        """
        check_is_fitted(self)
        X = validate_private_data(self, X, dtype=np.float64, reset=False)
        X = np.clip(X, self.lower_, self.upper_)
        if self.with_mean:
            X = X - self.mean_
        return X / self.scale_ if self.with_std else X

    def inverse_transform(self, X):
        """Undo the centring and scaling (not the clipping)."""
        check_is_fitted(self)
        X = np.asarray(X, dtype=np.float64)
        X = X * self.scale_ if self.with_std else X
        return X + self.mean_ if self.with_mean else X
