"""Deliberately broken variants of dp-sgd that a privacy audit must catch.

Test-only. Each variant reports the DpEvent of correct DP-SGD (so the
estimator reports the budget it was asked for) but runs something else.
"""

import dataclasses
import math

import numpy as np

from dpestim._kernels import clipped_grad_sum
from dpestim.solvers import DPGD, DPSGD, SolverResult
from dpestim.solvers.dp_sgd import _row_sq_norms, noisy_gradient_descent

__all__ = [
    "BROKEN_SOLVERS",
    "DoubledSensitivity",
    "HalfNoise",
    "LaplaceDoubledSensitivity",
    "LaplaceHalfNoise",
    "NoClipping",
    "ShuffledAsPoisson",
]


class NoClipping(DPSGD):
    """Per-example gradients are not clipped; noise still scaled to clip_norm."""

    name = "broken-no-clipping"

    def solve(self, X, Y, plan, noise_multiplier, rng):
        steps = self.n_steps(plan)
        stds = np.full(steps, noise_multiplier * plan.clip_norm)
        unclipped = dataclasses.replace(plan, clip_norm=math.inf)
        W, b = noisy_gradient_descent(
            X,
            Y,
            unclipped,
            self.sampling_prob(plan),
            stds,
            np.full(steps, plan.learning_rate),
            rng,
        )
        return SolverResult(
            W, b, steps, self.make_event(noise_multiplier, plan), noise_multiplier
        )


class HalfNoise(DPSGD):
    """Adds half the calibrated noise, reports the calibrated event."""

    name = "broken-half-noise"

    def solve(self, X, Y, plan, noise_multiplier, rng):
        result = super().solve(X, Y, plan, noise_multiplier / 2, rng)
        return dataclasses.replace(
            result,
            dp_event=self.make_event(noise_multiplier, plan),
            noise_multiplier=noise_multiplier,
        )


class ShuffledAsPoisson(DPSGD):
    """Shuffles once per epoch into fixed batches; accounts as Poisson."""

    name = "broken-shuffled-as-poisson"

    def solve(self, X, Y, plan, noise_multiplier, rng):
        n = plan.n_samples
        q = self.sampling_prob(plan)
        per_epoch = max(1, round(1 / q))
        steps = self.n_steps(plan)
        K, d = plan.n_outputs, plan.n_features
        W, b = np.zeros((K, d)), np.zeros(K)
        G, g0, z, dz = np.zeros((K, d)), np.zeros(K), np.empty(K), np.empty(K)
        row_sq = _row_sq_norms(X)
        Xd = X.toarray() if hasattr(X, "toarray") else X
        std = noise_multiplier * plan.clip_norm
        batches = []
        for _ in range(steps):
            if not batches:
                batches = list(np.array_split(rng.permutation(n), per_epoch))
            rows = np.ascontiguousarray(batches.pop(), dtype=np.int64)
            G[:], g0[:] = 0.0, 0.0
            clipped_grad_sum(
                Xd, Y, rows, rows.shape[0], W, b, plan.loss, plan.clip_norm,
                row_sq, plan.fit_intercept, G, g0, z, dz,
            )  # fmt: skip
            if std > 0:
                G += std * rng.standard_normal((K, d))
                g0 += std * rng.standard_normal(K)
            W -= plan.learning_rate * (G / (q * n) + plan.alpha * W)
            if plan.fit_intercept:
                b -= plan.learning_rate * g0 / (q * n)
        return SolverResult(
            W, b, steps, self.make_event(noise_multiplier, plan), noise_multiplier
        )


class DoubledSensitivity(DPSGD):
    """Clips at 2 x clip_norm, adds the noise (and reports the event) of clip_norm."""

    name = "broken-doubled-sensitivity"

    def solve(self, X, Y, plan, noise_multiplier, rng):
        wide = dataclasses.replace(plan, clip_norm=2.0 * plan.clip_norm)
        result = super().solve(X, Y, wide, noise_multiplier / 2, rng)
        return dataclasses.replace(
            result,
            dp_event=self.make_event(noise_multiplier, plan),
            noise_multiplier=noise_multiplier,
        )


class LaplaceHalfNoise(DPGD):
    """dp-gd (Laplace) adding half the calibrated noise."""

    name = "broken-laplace-half-noise"

    def solve(self, X, Y, plan, noise_multiplier, rng):
        result = super().solve(X, Y, plan, noise_multiplier / 2, rng)
        return dataclasses.replace(
            result,
            dp_event=self.make_event(noise_multiplier, plan),
            noise_multiplier=noise_multiplier,
        )


class LaplaceDoubledSensitivity(DPGD):
    """dp-gd (Laplace) clipping at 2 x clip_norm with the noise of clip_norm."""

    name = "broken-laplace-doubled-sensitivity"

    def solve(self, X, Y, plan, noise_multiplier, rng):
        wide = dataclasses.replace(plan, clip_norm=2.0 * plan.clip_norm)
        result = super().solve(X, Y, wide, noise_multiplier / 2, rng)
        return dataclasses.replace(
            result,
            dp_event=self.make_event(noise_multiplier, plan),
            noise_multiplier=noise_multiplier,
        )


BROKEN_SOLVERS = {
    cls.name: cls
    for cls in (
        NoClipping,
        HalfNoise,
        ShuffledAsPoisson,
        DoubledSensitivity,
        LaplaceHalfNoise,
        LaplaceDoubledSensitivity,
    )
}
"""Every broken variant by registry-like name."""

#: Broken variant per solver family, with the audit settings of that family.
BROKEN_BY_FAMILY = {
    "gaussian (dp-sgd)": (HalfNoise, DoubledSensitivity),
    "laplace (dp-gd)": (LaplaceHalfNoise, LaplaceDoubledSensitivity),
}
