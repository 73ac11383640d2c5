"""DP-LSSGD (Wang et al., 2019): DP-SGD with Laplacian smoothing of the noisy gradient.

Each step is exactly a dp-sgd step (Poisson sample, per-example clipping of
the whole gradient, Gaussian noise on the clipped sum) followed by
``g <- (I - s L)^{-1} g`` on every row of the noisy coefficient gradient,
where ``L`` is the periodic 1-D discrete Laplacian and ``s = smoothing``.
That map is fixed and data independent, so it is post-processing of the
released noisy gradient: the privacy guarantee (the ``DpEvent``) is dp-sgd's.
"""

import math
from numbers import Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from ..._kernels import sampling_key
from ..base import SolverResult
from .dp_sgd import DPSGD, noisy_gradient_descent

__all__ = [
    "DPLSSGD",
    "laplacian_smooth",
    "smoothing_eigenvalues",
    "smoothed_noise_variance_factor",
]

_SCHEDULES = ("constant", "inv_t_epoch")


def smoothing_eigenvalues(n_features, smoothing):
    """Eigenvalues ``1 + 2s - 2s cos(2 pi k / d)`` of ``A_s = I - s L``.

    Parameters
    ----------
    n_features : int
        Length ``d >= 1`` of the smoothed vector.
    smoothing : float
        Smoothing strength ``s >= 0``.

    Returns
    -------
    ndarray of shape (n_features,)
        ``lambda_k`` for ``k = 0, ..., d - 1`` (the ``k``-th Fourier mode).
    """
    d = int(n_features)
    k = np.arange(d)
    return 1.0 + 2.0 * smoothing - 2.0 * smoothing * np.cos(2.0 * np.pi * k / d)


def laplacian_smooth(v, smoothing, axis=-1):
    """Apply ``(I - s L)^{-1}`` along ``axis`` with an FFT (``O(d log d)``).

    ``L`` is the periodic 1-D discrete Laplacian (``-2`` on the diagonal,
    ``1`` on the two cyclic neighbours), the operator of DP-LSSGD (Wang et
    al., eq. 3): ``irfft(rfft(v) / lambda)`` with ``lambda`` the circulant
    eigenvalues. The training loop computes the same map with an exact
    ``O(d)`` recursion (:func:`dpestim._kernels.laplacian_smooth_inplace`)
    because numba has no FFT; this NumPy form is the reference.

    Smoothing assumes that neighbouring coordinates are related (pixels in
    row-major order, time samples, spectra); the first and last coordinates
    are neighbours.

    Parameters
    ----------
    v : array-like
        Vector(s) to smooth.
    smoothing : float
        ``s >= 0``; ``0`` returns a copy of ``v``.
    axis : int, default=-1
        Axis of the smoothed coordinates.

    Returns
    -------
    ndarray
        The smoothed array, same shape as ``v``.
    """
    v = np.asarray(v, dtype=np.float64)
    d = v.shape[axis]
    if smoothing == 0 or d <= 1:
        return v.copy()
    lam = smoothing_eigenvalues(d, smoothing)[: d // 2 + 1]
    shape = [1] * v.ndim
    shape[axis] = lam.shape[0]
    spec = np.fft.rfft(v, axis=axis) / lam.reshape(shape)
    return np.fft.irfft(spec, n=d, axis=axis)


def smoothed_noise_variance_factor(n_features, smoothing):
    """Per-coordinate variance of smoothed white noise, relative to unsmoothed.

    For ``n ~ N(0, nu^2 I_d)``, every coordinate of ``(I - s L)^{-1} n`` has
    variance ``nu^2 beta`` with ``beta = (1/d) sum_k 1 / lambda_k^2`` (the
    matrix is circulant). This returns ``beta`` in the closed form of Wang et
    al. (Proposition 2): with ``w = 2s / (2s + 1 + sqrt(4s + 1))`` and
    ``xi = -sqrt(1 + 4s) / s``,

    ``beta = (2 w^(2d+1) - xi w^(2d) + 2 xi d w^d - 2 w + xi)
    / (s^2 xi^3 (1 - w^d)^2)``,

    which tends to ``(1 + 2s) / (1 + 4s)^(3/2)`` as ``d`` grows (0.268 at
    ``s = 1``, 0.149 at ``s = 3``).

    Parameters
    ----------
    n_features : int
        Length ``d >= 1``.
    smoothing : float
        ``s >= 0``.

    Returns
    -------
    float
    """
    d = int(n_features)
    s = float(smoothing)
    if s == 0.0 or d == 1:
        return 1.0
    w = 2.0 * s / (2.0 * s + 1.0 + math.sqrt(4.0 * s + 1.0))
    xi = -math.sqrt(1.0 + 4.0 * s) / s
    wd = w**d
    num = 2.0 * w ** (2 * d + 1) - xi * w ** (2 * d) + 2.0 * xi * d * wd - 2.0 * w + xi
    return num / (s**2 * xi**3 * (1.0 - wd) ** 2)


#: Most ``"auto"`` epochs of an unclipped (non-private) dp-lssgd run.
_UNCLIPPED_MAX_EPOCHS = 1000


class DPLSSGD(DPSGD):
    """DP-SGD with Laplacian smoothing (``solver="dp-lssgd"``; Wang et al., 2019).

    Every step is a :class:`DPSGD` step (Poisson sample with probability
    ``q = min(1, batch_size / n_samples)``, per-example clipping of the whole
    gradient, coefficients and intercept together, to ``clip_norm``, and
    ``N(0, (noise_multiplier * clip_norm)^2)`` on every coordinate of the
    clipped sum). Then each row of the noisy coefficient gradient (the
    coefficient vector of one class, or of one target) is replaced by
    ``(I - smoothing * L)^{-1} g`` with ``L`` the periodic 1-D discrete
    Laplacian, before the step ``W <- W - eta_t (g / (q n) + alpha W)``. The
    penalty gradient is added after smoothing (as in the authors' code). The
    intercept gradient is not smoothed: the order of the classes carries no
    neighbourhood.

    DpEvent: identical to dp-sgd's, ``SelfComposedDpEvent(PoissonSampledDpEvent(
    q, GaussianDpEvent(noise_multiplier)), steps)`` under add/remove-one
    neighbouring: the smoothing is a fixed linear map of the released noisy
    gradient (post-processing), so it costs no privacy.

    Smoothing divides the per-coordinate noise variance by up to
    ``(1 + 4s)^{3/2} / (1 + 2s)`` (:func:`smoothed_noise_variance_factor`)
    but also damps the high-frequency part of the true gradient. It helps
    only when the feature order is meaningful (neighbouring features such as
    pixels, time samples or spectra have similar coefficients) and the noise
    dominates; with shuffled features or little noise it can hurt.

    Parameters
    ----------
    smoothing : float, default=0.5
        Laplacian smoothing strength ``s >= 0`` (the paper's sigma). ``0`` is
        dp-sgd, bit for bit for the same random state. The paper uses 1 to 3;
        at most ``1e6`` (beyond, the smoothing is numerically the projection
        on the mean).
    schedule : {"constant", "inv_t_epoch"}, default="constant"
        Step size. ``"constant"``: the estimator's ``learning_rate`` at every
        step. ``"inv_t_epoch"``: ``learning_rate / (1 + e * m)`` during epoch
        ``e = 0, 1, ...`` with ``m = ceil(1 / q)`` steps per epoch, the
        piecewise ``1/t`` schedule of the paper's MNIST experiment. Both are
        public and fixed in advance.
    record_path : bool, default=False
        Store the iterate at the end of every epoch in the fitted attributes
        ``coef_path_`` (shape ``(n_epochs, n_outputs, n_features)``) and
        ``intercept_path_``, in the released model's units (row scale,
        column centre, ``Ridge``'s target scale). Every iterate is
        post-processing of the released noisy gradients, so this costs no
        privacy; it only uses memory.
    final_intercept : bool, default=True
        See :class:`~dpestim.solvers.DPSGD` (the squared loss's final private
        intercept; the recorded path holds the run's own iterates).
    """

    name = "dp-lssgd"
    #: its ``schedule`` parameter sets its steps
    settles_squared = False
    _parameter_constraints = {
        **DPSGD._parameter_constraints,
        # Past ~1e6 the smoothing is numerically the projection on the mean
        # (1 - w^d loses all its digits near 1e32 d^2 and divides by zero).
        "smoothing": [Interval(Real, 0, 1e6, closed="both")],
        "schedule": [StrOptions(set(_SCHEDULES))],
        "record_path": ["boolean"],
    }

    def __init__(
        self,
        smoothing=0.5,
        schedule="constant",
        record_path=False,
        *,
        final_intercept=True,
    ):
        self.final_intercept = final_intercept
        self.smoothing = smoothing
        self.schedule = schedule
        self.record_path = record_path

    def unclipped_epochs(self, epochs):
        """``(1 + 4 smoothing)`` times dp-sgd's epochs, at most 1,000.

        The smoothing divides the step along the high-frequency directions
        by up to ``1 + 4 smoothing`` (the largest eigenvalue of ``I -
        smoothing * L``): a noiseless run needs that many more passes than
        dp-sgd to reach the optimum.
        """
        base = super().unclipped_epochs(epochs)
        factor = 1.0 + 4.0 * float(self.smoothing)
        return int(min(_UNCLIPPED_MAX_EPOCHS, max(base, math.ceil(base * factor))))

    def _check_params(self):
        s = self.smoothing
        if isinstance(s, bool) or not isinstance(s, Real) or not (0 <= s < math.inf):
            raise ValueError(
                f"smoothing must be a finite real number >= 0 (0 is dp-sgd), got {s!r}."
            )
        if self.schedule not in _SCHEDULES:
            raise ValueError(
                f"schedule must be one of {list(_SCHEDULES)}, got {self.schedule!r}."
            )
        if not isinstance(self.record_path, (bool, np.bool_)):
            raise TypeError(
                f"record_path must be a bool, got {type(self.record_path).__name__}."
            )

    def check_loss(self, loss):
        self._check_params()
        return super().check_loss(loss)

    def calibration_key(self, plan):
        """dp-sgd's key: the event depends on none of this solver's parameters
        but ``final_intercept``."""
        return DPSGD(final_intercept=self._final_intercept()).calibration_key(plan)

    def steps_per_epoch(self, plan):
        """Steps of one pass in expectation, ``ceil(1 / q)`` (public)."""
        return max(1, math.ceil(1.0 / self.sampling_prob(plan) - 1e-9))

    def learning_rates(self, plan):
        """The step sizes of every step (public, fixed before fitting)."""
        steps = self.n_steps(plan)
        if self.schedule == "constant":
            return np.full(steps, plan.learning_rate)
        m = self.steps_per_epoch(plan)
        epoch = np.arange(steps) // m
        return plan.learning_rate / (1.0 + epoch * m)

    def mechanism(self, plan):
        return (
            super().mechanism(plan) + f", then periodic Laplacian smoothing "
            f"(strength {float(self.smoothing):g}) of each row of the noisy "
            "coefficient gradient (post-processing)"
        )

    def solve(self, X, Y, plan, noise_multiplier, rng):
        self._check_params()
        steps = self.n_steps(plan)
        std = noise_multiplier * plan.clip_norm if noise_multiplier > 0 else 0.0
        stds = np.full(steps, std)
        rates = self.learning_rates(plan)
        q = self.sampling_prob(plan)
        s = float(self.smoothing)
        if not self.record_path:
            W, b = noisy_gradient_descent(X, Y, plan, q, stds, rates, rng, smoothing=s)
            attributes = {}
        else:
            W, b = self.initial_point(plan)
            m = self.steps_per_epoch(plan)
            key = sampling_key(rng)
            coef_path, intercept_path = [], []
            for start in range(0, steps, m):
                sl = slice(start, min(start + m, steps))
                noisy_gradient_descent(
                    X,
                    Y,
                    plan,
                    q,
                    stds[sl],
                    rates[sl],
                    rng,
                    smoothing=s,
                    coef_init=W,
                    intercept_init=b,
                    key=key,
                    first_step=start,
                )
                coef_path.append(W.copy())
                intercept_path.append(b.copy())
            attributes = {
                "coef_path_": np.array(coef_path),
                "intercept_path_": np.array(intercept_path),
            }
        b = self.finish(X, Y, W, b, plan, noise_multiplier, rng)
        return SolverResult(
            coef=W,
            intercept=b,
            n_iter=steps,
            dp_event=self.make_event(noise_multiplier, plan),
            noise_multiplier=noise_multiplier,
            attributes=attributes,
        )
