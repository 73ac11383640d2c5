"""Private feature centring without public bounds (:class:`PrivateCentrer`).

A column with a large offset (a year, a constant, pixel values in ``[0,
1]``, raw units) dominates the row norms that every estimator's rules read,
so its informative columns become tiny in the rules' units and the fit
suffers (``benchmarks/results/centring_probe.md``: exact centring moves Adult
plus a constant column from 0.764 to 0.851, a regression with a year column
from R^2 0.003 to 0.70). :class:`StandardScaler` centres privately but needs
public bounds per feature; this transformer needs none.

The mechanism refines a centre ``c`` (starting at 0) in ``n_rounds`` rounds,
in the spirit of CoinPress (Biswas, Dong, Kamath and Ullman, NeurIPS 2020):

1. ``r``: a private ``quantile`` of the norms ``||x_i - c||`` (the
   exponential mechanism over the public geometric grid of the estimators'
   row scale, :func:`~dpestim.preprocessing._grid_quantile.bin_quantile`;
   ``ExponentialMechanismDpEvent``), taken at the upper edge of the drawn
   bin (9% wide);
2. the sum of the differences ``x_i - c`` clipped to L2 norm ``r`` (a row
   whose norm is not finite adds nothing), plus Gaussian noise of standard
   deviation ``sigma r`` per coordinate (sensitivity ``r`` under add/remove
   one; ``n`` is public), divided by ``n``;
3. ``threshold=True``: a coordinate moves only where that noisy mean exceeds
   ``t`` noise standard deviations, ``t = sqrt(2 ln(2 d / 0.05))`` (a union
   bound over the ``d`` coordinates: a coordinate without an offset is moved
   by the noise with probability at most 5% per round, all coordinates
   together). Post-processing: it costs nothing, and keeps the noise from
   becoming an offset of its own where ``n epsilon`` is small (digits, 1,437
   rows and 64 columns: an unthresholded noisy mean at 3% of epsilon 0.5
   took accuracy from 0.74 to 0.17 in the probe).

Each round clips around the previous centre at a radius measured around it,
so a large offset is removed in the first round and the residual in the
next ones. The quantiles take ``quantile_share`` of ``epsilon`` (pure DP,
basic composition); the Gaussian sums take the rest with ``delta``, their
noise multiplier calibrated by dp-accounting for the ``n_rounds``-fold
composition. Dense input only (centring would fill a sparse matrix).
"""

import math
from numbers import Integral, Real

import dp_accounting
import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils._param_validation import Interval, Options
from sklearn.utils.validation import check_is_fitted

from .._kernels.clipping import clip_factors
from ..exceptions import UtilityWarning
from ..privacy import calibrate_noise, compute_epsilon, gaussian_noise
from ..privacy.charging import FitCharge, charge_fit
from ..solvers.saddle import ExponentialMechanismDpEvent
from ..utils import check_generator
from ..utils.fit_warnings import warn_in_fit
from ..utils.validation import validate_private_data
from ._fit_scales import MAX_DRAW_EPSILON
from ._grid_quantile import (
    BINS_PER_OCTAVE,
    FAILURE,
    bin_quantile,
    feasible,
    positive_edges,
)

__all__ = [
    "CENTRING_DETECT",
    "CENTRING_SHARES",
    "PrivateCentrer",
    "TOO_FEW_ROWS",
    "laplace_centre",
    "plan_centring",
    "laplace_move_threshold",
    "move_threshold",
]

#: From a bin's representative (its geometric midpoint) to its upper edge.
HALF_BIN = 2.0 ** (1.0 / (2 * BINS_PER_OCTAVE))

#: Chance, per round and over all coordinates together (a union bound), that
#: the noise moves a coordinate whose mean is 0 (``threshold=True``).
FALSE_MOVE = 0.05


def move_threshold(n_features):
    """``t``: noise standard deviations a coordinate's mean must exceed.

    ``sqrt(2 ln(2 d / FALSE_MOVE))``: ``P(|N(0, 1)| > t) <= 2 exp(-t^2 /
    2)``, so ``d`` such coordinates all stay below ``t`` except with
    probability :data:`FALSE_MOVE`. Public (``d``).
    """
    return math.sqrt(2.0 * math.log(2.0 * max(int(n_features), 1) / FALSE_MOVE))


#: Shares of ``epsilon`` of an estimator's in-fit centring
#: (``feature_centring``): the radius draw and the Laplace mean. Chosen on
#: the derivation tasks of ``benchmarks/utility/fit_centring.py`` (its
#: ``--shares``) among (1%, 2%), (2%, 3%) and (1%, 4%):
#: ``doc/benchmarks/private_centring.md``.
CENTRING_SHARES = (0.01, 0.02)
#: The in-fit centring runs only where its Laplace mean can detect an offset
#: of this share of the radius (public: ``n``, ``d``, ``epsilon``).
CENTRING_DETECT = 0.1


#: How :func:`plan_centring`'s notes begin where ``epsilon n`` is too small
#: (the estimators then balance the rows as given).
TOO_FEW_ROWS = "not run: epsilon x n_samples"


def plan_centring(epsilon, n_samples, n_features, sensitivity):
    """``(radius epsilon, mean epsilon, note)`` of the in-fit centring (public).

    ``None`` epsilons and a note when it does not run: the radius draw must
    be :func:`feasible` at its epsilon (the median of ``n`` L1 norms), and
    the Laplace mean must move a coordinate whose offset is
    :data:`CENTRING_DETECT` times the radius: ``mean_epsilon n >=
    sensitivity laplace_move_threshold(d) / CENTRING_DETECT``. Where either
    fails nothing runs and nothing is spent.
    """
    # capped as every scale draw (beyond it a draw is exact anyway, and the
    # accountant's epsilon^2 stays finite)
    radius_eps, mean_eps = (
        min(share * float(epsilon), MAX_DRAW_EPSILON) for share in CENTRING_SHARES
    )
    n_bins = positive_edges().shape[0] + 1
    need = sensitivity * laplace_move_threshold(n_features) / CENTRING_DETECT
    if not feasible(radius_eps, n_samples, 0.5, n_bins):
        return (
            None,
            None,
            f"{TOO_FEW_ROWS} too small for a reliable private "
            f"median of the rows' L1 norms at {CENTRING_SHARES[0]:g} x epsilon "
            "(about 5,070 needed; columns used as given)",
        )
    if mean_eps * n_samples < need:
        return (
            None,
            None,
            f"{TOO_FEW_ROWS} below {need / CENTRING_SHARES[1]:.0f}, "
            f"too small for the private column means to detect an offset of "
            f"{CENTRING_DETECT:g} x the rows' L1 norm (columns used as given)",
        )
    return radius_eps, mean_eps, None


def laplace_move_threshold(n_features):
    """``t`` of the Laplace mean: noise scales a coordinate's mean must exceed.

    ``ln(d / FALSE_MOVE)``: ``P(|Laplace(b)| > t b) = exp(-t)``, so ``d``
    coordinates without an offset all stay below ``t b`` except with
    probability :data:`FALSE_MOVE`. Public (``d``).
    """
    return math.log(max(int(n_features), 1) / FALSE_MOVE)


#: Values per chunk of the dense row loops below (8 MB in float64): a norm
#: or a clipped sum of a large ``X`` never holds a float64 copy of it (a
#: user trial: 1,000,000 x 20 rows, 981 MB at peak against scikit-learn's
#: 403).
CHUNK_VALUES = 2**20


def row_chunks(D):
    """Slices of the rows of 2-d ``D``, about :data:`CHUNK_VALUES` values
    each; one slice of every row unless ``D`` is C-ordered with two columns
    or more, where a column sum over chunks (:func:`add_rows`) is the sum
    over all rows bit for bit (NumPy adds the rows of a C-ordered array one
    after another; a single column or F-ordered rows it sums pairwise)."""
    n, d = D.shape
    step = n if d < 2 or not D.flags.c_contiguous else max(1, CHUNK_VALUES // d)
    return [slice(i, i + step) for i in range(0, n, max(step, 1))]


def add_rows(total, rows):
    """``total`` plus the rows of 2-d ``rows``, added one after another
    (``total`` ``None``: their column sum), so that chunks of the rows of
    a C-ordered array give the same float64 sum as one sum over all of
    them."""
    if total is None:
        return rows.sum(axis=0)
    return np.add.reduce(np.concatenate([total[None, :], rows]), axis=0)


def float64_rows(X, rows, divisor=None):
    """``X[rows]`` in float64, divided by the columns' ``divisor`` if given
    (the rows of ``np.divide(X, divisor, dtype=np.float64)``)."""
    if divisor is None:
        return np.asarray(X[rows], dtype=np.float64)
    return np.divide(X[rows], divisor, dtype=np.float64)


def _row_norms(D, ord, divisor=None):
    """float64 L2 (``ord=2``) or L1 norms of the rows of ``D`` (in float64,
    divided by the columns' ``divisor`` if given), chunk by chunk."""
    out = np.empty(D.shape[0])
    with np.errstate(over="ignore", invalid="ignore"):
        for rows in row_chunks(D):
            C = float64_rows(D, rows, divisor)
            if ord == 1:
                out[rows] = np.abs(C).sum(axis=1)
            else:
                out[rows] = np.sqrt(np.einsum("ij,ij->i", C, C))
    return out


def clipped_chunks(X, radius, ord=2, norms=None, divisor=None):
    """The rows of ``X`` (in float64, divided by the columns' ``divisor`` if
    given) clipped to L2 (``ord=2``) or L1 norm ``radius``, chunk by chunk
    (:func:`row_chunks`); a row whose norm is not finite is left out, the
    others scaled by rounding-safe factors
    (:func:`dpestim._kernels.clipping.clip_factors`). ``norms``: the rows'
    norms of that order, if computed."""
    if norms is None:
        norms = _row_norms(X, ord, divisor)
    factors = clip_factors(norms, radius, X.shape[1])
    for rows in row_chunks(X):
        keep = factors[rows] > 0
        yield float64_rows(X, rows, divisor)[keep] * factors[rows][keep, None]


def _clipped_sum(D, radius, ord=2, norms=None):
    """Sum of the rows of ``D`` clipped to L2 (``ord=2``) or L1 norm ``radius``.

    Computed in float64 (float32 rows converted: float32 norms summed in
    float32 could fall short of the true norm by about ``d 2^-24``). Each
    row's bound is rounding-safe and a row whose norm is not finite adds
    nothing (:func:`clipped_chunks`); the sum over rows is rounded as any
    float64 sum (``doc/privacy_model.rst``, "Rounding of the clipped sum"),
    chunk by chunk (:func:`add_rows`, the same sum). ``norms``: the rows'
    norms of that order, if computed.
    """
    total = None
    for clipped in clipped_chunks(D, radius, ord, norms):
        total = add_rows(total, clipped)
    return np.zeros(D.shape[1]) if total is None else total


def laplace_centre(X, radius_epsilon, mean_epsilon, sensitivity, rng):
    """``(centre, radius)``: a pure-DP column centre of dense ``X`` (one round).

    The radius ``R``: a ``radius_epsilon``-DP median of the rows' L1 norms
    (:func:`bin_quantile`, the upper edge of the drawn bin); the mean: the
    rows clipped to L1 norm ``R`` (:func:`_clipped_sum`), summed, plus
    Laplace noise of scale ``b = sensitivity R / mean_epsilon`` per
    coordinate, over ``n`` (public); a coordinate moves only where that mean
    exceeds ``laplace_move_threshold(d) b / n``. ``sensitivity``: 1 under
    add/remove one (a row's clipped vector, L1 norm at most ``R``), 2 under
    replace-one. Events: ``ExponentialMechanismDpEvent(radius_epsilon)``,
    ``LaplaceDpEvent(1 / mean_epsilon)`` (in units of the L1 sensitivity).
    ``radius_epsilon = mean_epsilon = inf``: the exact column means (the
    mechanism's limit: no noise, every nonzero mean moves).
    """
    n, d = X.shape
    if math.isinf(mean_epsilon):
        return X.mean(axis=0), math.inf
    l1 = _row_norms(X, 1)  # once: the radius draw's values and the clip's norms
    radius = bin_quantile(l1, 0.5, radius_epsilon, positive_edges(), rng) * HALF_BIN
    b = sensitivity * radius / mean_epsilon
    total = _clipped_sum(X, radius, ord=1, norms=l1)  # in float64, by chunks
    mean = (total + rng.laplace(scale=b, size=d)) / n
    t = laplace_move_threshold(d) * b / n
    return np.where(np.abs(mean) > t, mean, 0.0), radius


class PrivateCentrer(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Centre features with a private mean, without public bounds.

    Subtracts a private estimate of each column's mean, refined in
    ``n_rounds`` rounds of a private radius and a clipped Gaussian mean
    around the previous estimate (see the module docstring of
    ``dpestim.preprocessing._centring`` for the mechanism). Use it before an
    estimator when columns carry large offsets (a year, raw units, a
    constant) and no public bounds are at hand; with public bounds,
    :class:`StandardScaler` also scales. Neighbouring relation: add or
    remove one row (``n`` public).

    Parameters
    ----------
    epsilon : float, default=0.1
        Budget of the whole fit (``numpy.inf``: the exact column means, not
        private).
    delta : float, default=1e-6
        Of the Gaussian sums.
    n_rounds : int, default=1
        Refinement rounds (each a radius and a mean). More rounds help only
        at large ``n epsilon``: each round's radius draw gets a smaller share
        and must stay reliable (below).
    quantile : float, default=0.5
        Quantile of the distances ``||x_i - c||`` used as each round's clip
        radius (a higher one biases the clipped mean less, noises it more
        and needs a larger ``n epsilon`` for a reliable draw).
    quantile_share : float, default=0.2
        Share of ``epsilon`` spent on the radii (the rest on the means).
    threshold : bool, default=True
        Move a coordinate only where its noisy mean exceeds
        :func:`move_threshold` noise standard deviations (False: every
        coordinate by its noisy mean).
    accountant : {"rdp", "pld"}, default="rdp"
    random_state : None, int or numpy.random.Generator, default=None

    Attributes
    ----------
    mean_ : ndarray of shape (n_features,)
        The private centre (covered by the guarantee).
    radii_ : ndarray of shape (n_rounds,)
        The private clip radius of every round (covered by the guarantee).
    noise_multiplier_ : float
        Of each round's Gaussian sum (standard deviation over the radius).
    dp_event_ : dp_accounting.DpEvent
        ``ComposedDpEvent`` of the radii (``ExponentialMechanismDpEvent``)
        and the means (``GaussianDpEvent``), ``n_rounds`` each.
    epsilon_, delta_ : float
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from dpestim.preprocessing import PrivateCentrer
    >>> rng = np.random.default_rng(0)
    >>> X = np.c_[rng.normal(size=(20000, 3)), rng.integers(1990, 2021, 20000)]
    >>> c = PrivateCentrer(epsilon=0.1, random_state=0).fit(X)
    >>> np.round(c.mean_[3]), bool(np.all(c.mean_[:3] == 0))
    (np.float64(2005.0), True)
    """

    _parameter_constraints = {
        "epsilon": [
            Interval(Real, 0, None, closed="neither"),
            Options(Real, {math.inf}),
        ],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "n_rounds": [Interval(Integral, 1, 20, closed="both")],
        "quantile": [Interval(Real, 0, 1, closed="neither")],
        "quantile_share": [Interval(Real, 0, 1, closed="neither")],
        "threshold": ["boolean"],
        "accountant": [Options(str, {"rdp", "pld"})],
        "random_state": ["random_state", np.random.Generator],
    }

    def __init__(
        self,
        *,
        epsilon=0.1,
        delta=1e-6,
        n_rounds=1,
        quantile=0.5,
        quantile_share=0.2,
        threshold=True,
        accountant="rdp",
        random_state=None,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.n_rounds = n_rounds
        self.quantile = quantile
        self.quantile_share = quantile_share
        self.threshold = threshold
        self.accountant = accountant
        self.random_state = random_state

    def _events(self):
        """``(radius epsilon, noise multiplier, event)`` from public parameters."""
        T = int(self.n_rounds)
        # capped as every scale draw (the accountant's epsilon^2 stays finite)
        eps_r = min(self.quantile_share * self.epsilon / T, MAX_DRAW_EPSILON)
        eps_m = (1.0 - self.quantile_share) * self.epsilon

        def means(nm):
            return dp_accounting.SelfComposedDpEvent(
                dp_accounting.GaussianDpEvent(nm), T
            )

        nm = calibrate_noise(
            means,
            eps_m,
            self.delta,
            accountant=self.accountant,
            cache_key=("centring", T),
        )
        radii = dp_accounting.SelfComposedDpEvent(ExponentialMechanismDpEvent(eps_r), T)
        return eps_r, nm, dp_accounting.ComposedDpEvent([radii, means(nm)])

    def fit(self, X, y=None):
        """Estimate the column means privately.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Dense (a sparse matrix is refused: centring would fill it).
        y : ignored

        Returns
        -------
        self : object
        """
        self._validate_params()
        X = validate_private_data(self, X, dtype=np.float64)
        n, d = X.shape
        T = int(self.n_rounds)
        if math.isinf(self.epsilon):
            event = dp_accounting.NonPrivateDpEvent()
            eps_r, nm = math.inf, 0.0
        else:
            eps_r, nm, event = self._events()
            n_bins = positive_edges().shape[0] + 1
            if not feasible(eps_r, n, self.quantile, n_bins):
                # public: n, epsilon and the parameters
                warn_in_fit(
                    f"PrivateCentrer: each radius draw gets epsilon {eps_r:.3g}, "
                    f"too little at n_samples={n} for a reliable private "
                    f"{self.quantile:g}-quantile (a chance above "
                    f"{FAILURE:g} of landing outside the data); the centre may "
                    "barely move. Use fewer n_rounds, a larger quantile_share or "
                    "epsilon, or more rows.",
                    UtilityWarning,
                )
        charge_fit(
            FitCharge(event, "add_or_remove_one", f"PrivateCentrer(d={d})"),
            data=X,
            epsilon=self.epsilon,
            delta=self.delta,
        )
        if math.isinf(self.epsilon):
            self.mean_ = X.mean(axis=0)
            self.radii_ = np.full(T, np.nan)
            self.epsilon_ = math.inf
        else:
            self.mean_, self.radii_ = self._private_mean(X, eps_r, nm)
            gauss = compute_epsilon(event.events[1], self.delta, self.accountant)
            self.epsilon_ = float(eps_r * T + gauss)
        self.noise_multiplier_ = float(nm)
        self.dp_event_ = event
        self.delta_ = float(self.delta)
        return self

    def _private_mean(self, X, eps_r, nm):
        n, d = X.shape
        rng = check_generator(self.random_state)
        t = move_threshold(d) if self.threshold else 0.0
        centre = np.zeros(d)
        radii = np.empty(int(self.n_rounds))
        edges = positive_edges()
        for k in range(radii.shape[0]):
            D = X - centre
            dist = _row_norms(D, 2)
            # the drawn bin's upper edge: rows at the quantile are not clipped
            # (with the midpoint, rows of nearly equal norm, as under a large
            # offset, were all shrunk by up to half a bin, ~4%, and so was
            # the mean)
            r = bin_quantile(dist, self.quantile, eps_r, edges, rng) * HALF_BIN
            radii[k] = r
            noisy = _clipped_sum(D, r, norms=dist) + gaussian_noise(rng, nm * r, (d,))
            step = noisy / n
            centre = centre + np.where(np.abs(step) > t * nm * r / n, step, 0.0)
        return centre, radii

    def transform(self, X):
        """Subtract the private centre.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_centred : ndarray of shape (n_samples, n_features)
        """
        check_is_fitted(self)
        X = validate_private_data(self, X, dtype=np.float64, reset=False)
        return X - self.mean_

    def inverse_transform(self, X):
        """Add the centre back.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_original : ndarray of shape (n_samples, n_features)
        """
        check_is_fitted(self)
        X = validate_private_data(self, X, dtype=np.float64, reset=False)
        return X + self.mean_
