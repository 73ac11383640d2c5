"""A differentially private RobustScaler: no bounds needed."""

import math
import warnings
from numbers import Integral, Real

import dp_accounting
import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils._param_validation import Interval, Options, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ..exceptions import UtilityWarning
from ..privacy.charging import FitCharge, charge_fit
from ..solvers.saddle import ExponentialMechanismDpEvent
from ..utils import check_generator
from ._fit_scales import CENTRE_STAGES
from ._grid_quantile import bin_quantile, feasible, signed_edges

__all__ = ["RobustScaler"]


class RobustScaler(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Centre and scale each feature by private quantiles, without bounds.

    The private counterpart of scikit-learn's ``RobustScaler`` for data whose
    ranges are not public (raw columns in dollars, counts, coordinates): for
    each feature ``j``, ``center_[j]`` is a private median and ``scale_[j]``
    a private interquartile range (``quantile_range``), and ``transform``
    returns ``(X - center_) / scale_``.

    Every statistic is one draw of the exponential mechanism over the public
    geometric grid of the private scales (bins of about 9% relative width
    for magnitudes ``1e-12`` to ``1e12``, mirrored for negative values, a
    bin around 0): utility minus the number of values to move for a bin to
    hold the quantile, sensitivity 1 under both neighbouring relations. The
    median is refined in ``centre_stages`` draws, each the median of ``x_j -
    c`` around the previous estimate ``c`` (the grid's resolution then
    applies to the distance from ``c``, not to ``|x_j|``: a column such as a
    longitude near -120 with an IQR of 4 keeps its IQR), and both quartiles
    are drawn from ``x_j - c``. An IQR of 0 (the two quartiles in one bin,
    e.g. a mostly-zero column) gives ``scale_ = 1``, scikit-learn's
    convention.

    Privacy: ``d (centre_stages + 2)`` draws (``d`` features; ``2`` without
    centring, ``centre_stages`` without scaling), each ``epsilon / draws``-DP;
    by basic composition the fit is ``(epsilon, 0)``-DP, its event the
    composition of the draws' ``ExponentialMechanismDpEvent``. ``n`` is
    public. ``epsilon=inf`` computes the exact median and quantiles
    (scikit-learn's ``RobustScaler``, no event).

    Parameters
    ----------
    epsilon : float, default=0.1
        Budget of the whole fit (all features), or ``numpy.inf``.
    with_centering : bool, default=True
    with_scaling : bool, default=True
    quantile_range : (float, float), default=(25.0, 75.0)
        Percentiles ``0 < q_min < q_max < 100`` whose difference is the scale.
    centre_stages : "auto" or int in [1, 4], default="auto"
        Draws of each median. ``"auto"``: the most (up to 4) at which every
        draw is reliable at this ``n`` and ``epsilon`` (the test of the
        private scales: a draw lands outside the data's range with
        probability at most 0.2%); 1 when none is, with a
        :class:`~dpestim.UtilityWarning` (public: ``n``, ``d``, ``epsilon``).
    random_state : None, int or numpy.random.Generator, default=None

    Attributes
    ----------
    center_, scale_ : ndarray of shape (n_features,)
        Private estimates (covered by the guarantee).
    centre_stages_ : int
        Draws of each median.
    dp_event_ : dp_accounting.DpEvent
    epsilon_, delta_ : float
        ``epsilon`` and 0 (pure DP).
    n_features_in_ : int

    See Also
    --------
    StandardScaler : mean and variance by the Gaussian mechanism, for
        features with public bounds.

    Examples
    --------
    >>> import numpy as np
    >>> from dpestim.preprocessing import RobustScaler
    >>> rng = np.random.default_rng(0)
    >>> X = np.column_stack([rng.normal(-120, 2, 20000), rng.lognormal(8, 1, 20000)])
    >>> sc = RobustScaler(epsilon=0.5, random_state=0).fit(X)
    >>> bool(abs(sc.center_[0] + 120) < 0.2 and abs(sc.scale_[0] / 2.698 - 1) < 0.1)
    True
    """

    _parameter_constraints = {
        "epsilon": [
            Interval(Real, 0, None, closed="neither"),
            Options(Real, {math.inf}),
        ],
        "with_centering": ["boolean"],
        "with_scaling": ["boolean"],
        "quantile_range": [tuple, list],
        "centre_stages": [
            StrOptions({"auto"}),
            Interval(Integral, 1, CENTRE_STAGES, closed="both"),
        ],
        "random_state": ["random_state", np.random.Generator],
    }

    def __init__(
        self,
        *,
        epsilon=0.1,
        with_centering=True,
        with_scaling=True,
        quantile_range=(25.0, 75.0),
        centre_stages="auto",
        random_state=None,
    ):
        self.epsilon = epsilon
        self.with_centering = with_centering
        self.with_scaling = with_scaling
        self.quantile_range = quantile_range
        self.centre_stages = centre_stages
        self.random_state = random_state

    def _quantiles(self):
        try:
            q_min, q_max = (float(q) for q in self.quantile_range)
        except (TypeError, ValueError):
            q_min = q_max = math.nan
        if not 0 < q_min < q_max < 100:
            raise ValueError(
                "quantile_range must be a pair (q_min, q_max) with 0 < q_min < "
                f"q_max < 100, got {self.quantile_range!r}."
            )
        return q_min / 100.0, q_max / 100.0

    def _stages(self, n, d, q_tail):
        """Centre stages (public: ``n``, ``d``, ``epsilon``, the options)."""
        if not self.with_centering:
            return 0
        if self.centre_stages != "auto":
            return int(self.centre_stages)
        n_bins = signed_edges().shape[0] + 1
        for stages in range(CENTRE_STAGES, 0, -1):
            each = self.epsilon / (d * (stages + 2 * self.with_scaling))
            q = q_tail if self.with_scaling else 0.5
            if feasible(each, n, q, n_bins):
                return stages
        warnings.warn(
            f"RobustScaler: epsilon={self.epsilon:g} over {d} feature(s) of "
            f"{n} rows is too little for reliable quantiles (a draw may land "
            "far outside the data); raise epsilon or scale fewer columns.",
            UtilityWarning,
            stacklevel=3,
        )
        return 1

    def fit(self, X, y=None):
        """Estimate ``center_`` and ``scale_`` privately.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Dense; every value finite.
        y : ignored

        Returns
        -------
        self : object
        """
        self._validate_params()
        q_min, q_max = self._quantiles()
        X = validate_data(self, X, dtype=np.float64)
        n, d = X.shape
        if not (self.with_centering or self.with_scaling):
            stages, per_feature = 0, 0
        else:
            stages = self._stages(n, d, min(q_min, 1.0 - q_max))
            per_feature = stages + 2 * self.with_scaling
        private = math.isfinite(self.epsilon)
        if private and per_feature:
            each = float(self.epsilon) / (d * per_feature)
            event = dp_accounting.ComposedDpEvent(
                [ExponentialMechanismDpEvent(each)] * (d * per_feature)
            )
        else:
            each = math.inf
            event = dp_accounting.NonPrivateDpEvent()
            if not per_feature:
                event = dp_accounting.NoOpDpEvent()
        charge_fit(
            FitCharge(event, "add_or_remove_one", f"RobustScaler(d={d})"),
            data=X,
            epsilon=self.epsilon if per_feature else 0.0,
            delta=0.0,
        )
        rng = check_generator(self.random_state)
        center, scale = np.zeros(d), np.ones(d)
        for j in range(d):
            center[j], scale[j] = self._column(X[:, j], stages, each, q_min, q_max, rng)
        self.center_ = center if self.with_centering else None
        self.scale_ = scale if self.with_scaling else None
        self.centre_stages_ = int(stages)
        self.dp_event_ = event
        self.epsilon_ = float(self.epsilon) if per_feature else 0.0
        self.delta_ = 0.0
        return self

    def _column(self, x, stages, each, q_min, q_max, rng):
        """``(centre, scale)`` of one feature (``(0, 1)`` where not estimated)."""
        if math.isinf(each):  # the non-private limit: scikit-learn's statistics
            c = float(np.median(x)) if self.with_centering else 0.0
            lo, hi = np.quantile(x, [q_min, q_max]) if self.with_scaling else (0, 0)
            return c, _scale(float(hi) - float(lo))
        edges = signed_edges()
        c = 0.0
        for _ in range(stages):
            c += bin_quantile(x - c, 0.5, each, edges, rng)
        if not self.with_scaling:
            return c, 1.0
        lo = bin_quantile(x - c, q_min, each, edges, rng)
        hi = bin_quantile(x - c, q_max, each, edges, rng)
        return c, _scale(hi - lo)

    def transform(self, X):
        """Centre and scale (no clipping).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_scaled : ndarray of shape (n_samples, n_features)
        """
        check_is_fitted(self, "dp_event_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        if self.with_centering:
            X = X - self.center_
        return X / self.scale_ if self.with_scaling else X

    def inverse_transform(self, X):
        """Undo the centring and scaling."""
        check_is_fitted(self, "dp_event_")
        X = np.asarray(X, dtype=np.float64)
        X = X * self.scale_ if self.with_scaling else X
        return X + self.center_ if self.with_centering else X


def _scale(iqr):
    """The scale of an interquartile range: 1 where it is not positive."""
    return iqr if iqr > 0 and math.isfinite(iqr) else 1.0
