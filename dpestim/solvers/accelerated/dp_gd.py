"""Private (stochastic) gradient descent, Laplace by default, Gaussian option."""

import math

import numpy as np

from ...losses import SQUARED
from .. import _policy
from ._docs import _COMMON_DOC
from .base import AcceleratedSolver

__all__ = ["DPGD"]


class DPGD(AcceleratedSolver):
    __doc__ = (
        """Noisy gradient descent (``solver="dp-gd"``; the paper's DP-GD).

    Every iteration takes a step of size ``step_scale / smoothness`` (by
    default the estimator's ``learning_rate``) on the noisy mean of the
    clipped per-example gradients of the batch plus the penalty gradient;
    ``max_iter`` is the number of iterations. It is the baseline of the
    accelerated methods (Kuru et al.) and shares their loop, noise and
    accounting (see :mod:`dpestim.solvers.accelerated`).

    By default (``noise="laplace"``) the guarantee is pure epsilon-DP under
    replace-one neighbouring, with ``clip_norm`` an L1 bound. With
    ``noise="gaussian"`` and the full batch this is the previous dp-gd of
    dpestim exactly: ``SelfComposedDpEvent(GaussianDpEvent(noise_multiplier),
    max_iter)`` under add/remove-one neighbouring, ``clip_norm`` an L2 bound.
"""
        + _COMMON_DOC
    )

    name = "dp-gd"
    #: Fewest iterations of a private classifier's ``"auto"`` plan whose steps
    #: decay linearly (see :meth:`resolve_hyperparameters`).
    decay_min_iter = 10
    #: Whether the resolved plan's steps decay (set by
    #: ``resolve_hyperparameters``, read by ``schedule``; public).
    _auto_decay = False

    def resolve_hyperparameters(self, plan, epsilon, delta):
        """The family's rule (see the base class), and the step schedule.

        A private classifier's ``"auto"`` step is the family's times the
        short-run factor ``max(1, min(100 / T, T))``, so that a run of few
        iterations travels as far from the public start as one of 100: on
        data whose optimum is near the start the constant large step
        overshoots and the last iterate oscillates around it (COMPAS,
        epsilon 1: 40 iterations at step 15, 0.584 against 0.627 at step 6).
        Where that factor is above 1 and ``T >= decay_min_iter`` (10, up to
        ``auto_travel_iter`` = 100 iterations) the steps then decay linearly
        to about 0, ``2 (1 - t / T) T / (T + 1)`` times the
        ``learning_rate`` (the same total travel), so the last iterate
        settles (decaying steps for the last iterate of noisy gradient
        descent: Jain, Nagaraj and Netrapalli, COLT 2019). Longer runs take
        the family's step, which needs no settling (a 4% minority at 316
        iterations with ``class_weight="balanced"`` lost 8.6 points of
        balanced accuracy with the decay). Measured at the defaults, pure
        DP, 5 seeds, paired (``benchmarks/utility/dpgd_decay.py``):
        COMPAS LogisticRegression / LinearSVC +3.6 / +8.7 points at epsilon
        0.5, +5.4 / +9.1 at 1, -0.6 / +0.1 at 2; phishing +2.3 / +5.1 at 0.5,
        -0.65 to +0.33 at 1 and 2; Adult +2.7 / +4.8 at 0.1, +0.5 / +0.1 at
        0.5; held out (Bank; California above its median) -1.1 to +4.1.
        Shorter runs (a few noisy gradients whose scale counts:
        breast cancer at epsilon 2, 5 iterations, lost 2.8 points with the
        decay), the squared loss (no short-run factor; California lost up to
        3 points of R^2), an explicit ``learning_rate`` (or ``smoothness``:
        the paper's constant step ``step_scale / L``, as its reproduction
        runs it) and non-private plans keep constant steps.
        """
        auto_lr = _policy.is_auto(plan.learning_rate)
        plan, resolved = super().resolve_hyperparameters(plan, epsilon, delta)
        self._auto_decay = bool(
            auto_lr
            and self.smoothness is None  # the step is the estimator's, not L's
            and math.isfinite(epsilon)
            and plan.loss != SQUARED
            and self.decay_min_iter <= plan.max_iter < self.auto_travel_iter
        )
        if self._auto_decay:
            resolved["step schedule"] = "linear decay, mean learning_rate"
        return plan, resolved

    def schedule(self, plan):
        L, _ = self._constants(plan)
        T = plan.max_iter
        steps = np.full(T, self.step_scale / L)
        if self._auto_decay:
            steps *= 2.0 * (1.0 - np.arange(T) / T) * T / (T + 1.0)
        return (
            steps,
            np.zeros(T),
            np.zeros(T, dtype=bool),
            np.ones(T, dtype=np.int64),
        )
