"""DP-SGDA: projected noisy gradient descent-ascent, the saddle baseline."""

import math
from numbers import Integral, Real

import numpy as np
from dp_accounting import GaussianDpEvent, NonPrivateDpEvent
from sklearn.utils._param_validation import Interval

from .base import BaseSaddleSolver, BilinearGame, SaddleResult

__all__ = ["DPSGDA", "project_simplex"]


def project_simplex(v):
    """Euclidean projection of ``v`` onto the probability simplex."""
    u = np.sort(v)[::-1]
    css = np.cumsum(u) - 1.0
    idx = np.arange(1, v.size + 1)
    rho = np.nonzero(u - css / idx > 0)[0][-1]
    return np.maximum(v - css[rho] / (rho + 1.0), 0.0)


class DPSGDA(BaseSaddleSolver):
    """Baseline: projected noisy stochastic gradient descent-ascent (Gaussian).

    ``solver="dp-sgda"``, for :class:`BilinearGame` problems (the Euclidean
    baseline of the spec's Experiment A). Single pass over disjoint batches of
    ``B = n // T`` rows; each per-example gradient ``(A(z) y, A(z)^T x)`` is
    clipped jointly to L2 norm ``clip_norm``; the batch sum receives
    ``N(0, (2 sigma clip_norm)^2)`` noise per coordinate (replace-one
    sensitivity ``2 clip_norm``); then Euclidean projected steps of size
    ``learning_rate / sqrt(T)``. The output is the average iterate.

    Privacy: every row is used in exactly one step, so by parallel composition
    the run is as private as one Gaussian mechanism,
    ``GaussianDpEvent(sigma)`` (accounted with ``dp_accounting``).

    Parameters
    ----------
    max_iter : int or None, default=None
        ``T``; ``None`` uses ``n // 100`` (batches of about 100 rows).
    clip_norm : float or None, default=None
        ``None``: the public bound ``sqrt(d_x + d_y) L0`` (no clipping).
    learning_rate : float, default=0.5
    """

    name = "dp-sgda"
    _parameter_constraints = {
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
        # upper limits keep noise x step far from float64 overflow
        "clip_norm": [Interval(Real, 0, 1e100, closed="right"), None],
        "learning_rate": [Interval(Real, 0, 1e100, closed="right")],
    }

    def __init__(self, max_iter=None, clip_norm=None, learning_rate=0.5):
        self.max_iter = max_iter
        self.clip_norm = clip_norm
        self.learning_rate = learning_rate

    def resolve(self, epsilon, delta, plan):
        from ...privacy import calibrate_noise

        n = plan.n_samples
        T = max(1, n // 100) if self.max_iter is None else int(self.max_iter)
        if not 1 <= T <= n:
            raise ValueError(f"max_iter must be in [1, n_samples={n}], got {T}.")
        clip = self.clip_norm
        if clip is None:
            clip = math.sqrt(plan.dim_x + plan.dim_y) * plan.lipschitz
        sigma = 0.0
        if math.isfinite(epsilon):
            sigma = calibrate_noise(
                GaussianDpEvent, epsilon, delta, neighbouring="replace_one"
            )
        return dict(
            max_iter=T,
            batch_size=n // T,
            clip_norm=float(clip),
            noise_multiplier=sigma,
            step_size=float(self.learning_rate) / math.sqrt(T),
        )

    def make_event(self, params):
        if params["noise_multiplier"] == 0:
            return NonPrivateDpEvent()
        return GaussianDpEvent(params["noise_multiplier"])

    def mechanism(self, params):
        return "Gaussian noise on clipped per-example gradient sums (disjoint batches)"

    def solve(self, problem, plan, params, rng):
        if not isinstance(problem, BilinearGame):
            raise TypeError("dp-sgda supports BilinearGame problems only.")
        dx, dy = problem.dims
        T, B, clip = params["max_iter"], params["batch_size"], params["clip_norm"]
        std = 2.0 * params["noise_multiplier"] * clip
        eta = params["step_size"]
        perm = rng.permutation(plan.n_samples)
        x = np.full(dx, 1.0 / dx)
        y = np.full(dy, 1.0 / dy)
        xs = np.zeros(dx)
        ys = np.zeros(dy)
        A0, u, v = problem.A0, problem.u, problem.v
        for t in range(T):
            xs += x
            ys += y
            s = problem.s[perm[t * B : (t + 1) * B]]
            a, bx = A0 @ y, u * (v @ y)  # grad_x = a + s bx
            c, by = A0.T @ x, v * (u @ x)  # grad_y = c + s by
            sq = (
                a @ a + c @ c
                + 2 * s * (a @ bx + c @ by)
                + s**2 * (bx @ bx + by @ by)
            )  # fmt: skip
            scale = np.minimum(1.0, clip / np.sqrt(np.maximum(sq, 1e-300)))
            gx = scale.sum() * a + (scale * s).sum() * bx
            gy = scale.sum() * c + (scale * s).sum() * by
            if std > 0:
                gx = gx + std * rng.standard_normal(dx)
                gy = gy + std * rng.standard_normal(dy)
            x = project_simplex(x - eta * gx / B)
            y = project_simplex(y + eta * gy / B)
        event = self.make_event(params)
        return SaddleResult(
            x=xs / T, y=ys / T, n_iter=T, dp_event=event, epsilon=None, params=params
        )


#: Registry of the saddle-point solvers (``solver=`` of the minimax estimators).
