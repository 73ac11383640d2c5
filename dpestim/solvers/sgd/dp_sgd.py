"""DP-SGD (Abadi et al., 2016): Poisson-subsampled, clipped, Gaussian noise.

The step is a map-reduce: a Poisson sample (independent Bernoulli(q) per row),
the sum of the sample's clipped per-example gradients, Gaussian noise added
once to that sum, then a gradient step on
``mean_i loss_i + alpha / 2 ||W||^2``. The sum is divided by the *expected*
batch size ``q n`` (public), never by the realised one. On sparse data the
step costs O(nnz): see :mod:`dpestim._kernels.lazy_noise`. The loop itself
(numba kernels) is in :mod:`dpestim.solvers.sgd._descent`; this module holds
the solver: its plan, step schedule, event and final intercept.
"""

import math

import numpy as np
from dp_accounting import GaussianDpEvent, PoissonSampledDpEvent, SelfComposedDpEvent

from ...losses._codes import SQUARED
from .. import _policy
from .._policy import ITERATIVE_SCALE_SHARE_CAP, ITERATIVE_SQUARED_SHARE_CAP
from ..base import BaseSolver, SolverResult
from ._descent import noisy_gradient_descent
from ._intercept import applies, noise_line, private_intercept, with_intercept_event

__all__ = ["DPSGD", "noisy_gradient_descent", "settling_rates"]


def settling_rates(learning_rate, steps):
    """Step sizes that settle: level, then a linear decay, mean ``learning_rate``.

    Step ``t`` of ``T`` has size proportional to ``min(1, 2 (T - t) / T)``
    (level for the first half, then linearly down to ``2 / T`` of the level
    at the last step), normalised so that the ``T`` steps travel as far as
    ``T`` steps of ``learning_rate`` (the level is about ``4 / 3`` of it).
    Public: a function of the plan only. The decaying tail lets the last
    iterate of a noisy, clipped run settle instead of oscillating around the
    optimum (decaying steps for the last iterate of SGD: Jain, Nagaraj and
    Netrapalli, COLT 2019); see :meth:`DPSGD.resolve_hyperparameters`.
    """
    t = np.arange(steps, dtype=np.float64)
    shape = np.minimum(1.0, 2.0 * (steps - t) / steps)
    return shape * (learning_rate * steps / shape.sum())


class DPSGD(BaseSolver):
    """Differentially private SGD with Poisson sampling (``solver="dp-sgd"``).

    Each step includes every training record independently with probability
    ``q = min(1, batch_size / n_samples)``, clips each per-example gradient
    (coefficients and intercept together) to L2 norm ``clip_norm``, sums,
    adds ``N(0, (noise_multiplier * clip_norm)^2)`` to every coordinate and
    takes a step of size ``learning_rate`` on the sum divided by the expected
    batch size ``q n`` plus the penalty gradient ``alpha W``. It runs
    ``ceil(max_iter / q)`` steps, fixed in advance.

    DpEvent: ``SelfComposedDpEvent(PoissonSampledDpEvent(q,
    GaussianDpEvent(noise_multiplier)), steps)`` under add/remove-one
    neighbouring.

    Sparse (CSR) ``X`` with ``q < 1`` runs in O(nnz) per step: the noise and
    L2 shrinkage of the coefficients are applied lazily per column, with
    exactly the distribution of the dense step (argument and closed form in
    :mod:`dpestim._kernels.lazy_noise`); the draws come in another order, so
    a sparse fit is reproducible for a fixed ``random_state`` but not
    bit-identical to the dense fit of the same data.

    ``clip_norm``, ``batch_size``, ``learning_rate`` and ``max_iter`` are
    estimator parameters.

    Parameters
    ----------
    final_intercept : bool, default=True
        End a squared-loss fit (``Ridge`` with a target range, in memory)
        with one Gaussian query that moves the intercept to the noisy mean
        clipped residual, where its error is small (about 2% of the budget;
        :ref:`the solver guide <final-intercept>`,
        :mod:`~dpestim.solvers.sgd._intercept`).
        ``False``: the run's own intercept (the fits before 2026-11-27).
        The family's other solvers take it too.
    """

    _parameter_constraints = {"final_intercept": ["boolean"]}

    def __init__(self, *, final_intercept=True):
        self.final_intercept = final_intercept

    def _final_intercept(self):
        """``final_intercept`` (True for a subclass that does not set it)."""
        return getattr(self, "final_intercept", True)

    name = "dp-sgd"
    #: The step is a clipped-gradient sum over rows: runs on Dask / out-of-core X.
    supports_blocked_data = True
    #: starts at the plan's intercept_init (the family's driver reads it)
    supports_initial_point = True
    #: weights each clipped gradient by plan.class_weights (<= 1)
    supports_class_weight = True
    #: small n: the private row scale may take up to this share of epsilon
    #: (35%; the squared loss up to ``squared_share_cap``, 25%: see _policy).
    #: (For a while the squared loss kept the default share:
    #: with a public ``y_bound`` only centred, diabetes fell to R^2 -0.05 at
    #: epsilon 1 with the raise. Since a public range is scaled to -+4 as the
    #: private one is, the raise is neutral on the loaders and removes the
    #: collapse under a feature rescaling: 331 rows, epsilon 1 / 2, X x 100,
    #: without / with the raise: diabetes -0.54 / -0.50 -> 0.10 / 0.19,
    #: California -5.96 / -3.21 -> 0.27 / 0.32, Adult's age -4.96 / -3.09 ->
    #: 0.22 / 0.30, Bank's age -5.83 / -16.2 -> 0.09 / 0.21; as loaded:
    #: diabetes 0.107 / 0.231 -> 0.112 / 0.178, California 0.25 / 0.37 ->
    #: 0.27 / 0.32, Adult's age 0.14 / 0.24 -> 0.22 / 0.31, Bank's age 0.18 /
    #: 0.27 -> 0.09 / 0.21; doc/benchmarks/public_target_bound.md.)
    scale_share_cap = ITERATIVE_SCALE_SHARE_CAP
    raises_balance_draws = True
    #: the squared loss keeps the former cap (see _policy)
    squared_share_cap = ITERATIVE_SQUARED_SHARE_CAP

    #: Whether a private squared-loss run with ``learning_rate="auto"`` takes
    #: :func:`settling_rates` (see :meth:`resolve_hyperparameters`); the
    #: family's solvers with schedules of their own keep theirs.
    settles_squared = True
    #: Whether the resolved plan's steps settle (set by
    #: ``resolve_hyperparameters``, read by ``learning_rates``; public).
    _settle = False

    #: LinearSVC with K > 2 classes: rows rescaled to the multi-output median
    #: norm 4.18, not 2.95 (issue 25; digits and MNIST, see
    #: dpestim.preprocessing._fit_scales.MULTIOUTPUT_HINGE_ROW_NORM_TARGET)
    multiclass_hinge_row_target = True
    supported_losses = frozenset(
        {"logistic", "squared", "hinge", "squared_hinge", "multinomial"}
    )
    accepts_float32 = True  # dense float32 computed in float32 (sgemm), CSR in float64

    def sampling_prob(self, plan):
        """Poisson sampling probability ``min(1, batch_size / n_samples)``."""
        return min(1.0, plan.batch_size / plan.n_samples)

    #: How :meth:`max_step_size` is computed, for error messages.
    _max_step_text = "learning_rate"

    def max_step_size(self, plan):
        """Largest step size of the run (public): ``learning_rate`` (the
        settling steps' level where they apply)."""
        if self._settle:
            return float(settling_rates(plan.learning_rate, self.n_steps(plan))[0])
        return plan.learning_rate

    def resolve_hyperparameters(self, plan, epsilon, delta):
        """The family's rule (see the base class), and the step schedule.

        A private ``Ridge`` run (the squared loss, finite ``epsilon``) with
        ``learning_rate="auto"`` takes :func:`settling_rates`: about ``4 /
        3`` of the ``learning_rate`` for the first half of its steps, then a
        linear decay to about 0, the same total travel. Its constant step
        suits rows whose norms sit near their median; where one column's
        spread dominates the rows' norms (an age or a year column after
        centring, a raw column in its own units), the curvature along it is
        several times the rules' and the last iterate of the constant steps
        oscillates across the optimum (an age-like column beside four
        features of order one, epsilon 1: R^2 0.659 against 0.930 with the
        settling steps). Measured at the defaults, 3 seeds, paired
        (``benchmarks/utility/ridge_settling.py``): derivation tasks
        (California, its median income, a year column, the age-like one)
        median +0.005 R^2 (one cell -0.008, California at epsilon 0.1),
        held-out tasks (California's latitude and house age, Adult's
        education years, COMPAS's age: raw loader columns) median +0.011,
        none worse (California's latitude at epsilon 0.5 0.883 -> 0.947);
        one loss found since, California's raw CSV columns (0.147 -> 0.121
        at epsilon 1, far from scikit-learn's 0.647 either way). A plan
        whose step the noise damped
        (:func:`~dpestim.solvers._policy.noise_damped_rate`: the noise
        dominates and the small constant steps keep the model near its
        public start) keeps them: 331-row diabetes at epsilon 0.1 lost up to
        0.17 R^2 with the settling steps there. Classifiers, an explicit
        ``learning_rate``, a non-private plan and the solvers with schedules
        of their own (``settles_squared = False``) keep constant steps, and
        so does a plan whose step a strong penalty capped at ``1 / alpha``
        (the level, ``4 / 3`` of an uncapped step, keeps the penalty's own
        step stable: ``4 / 3 x 0.5 x alpha < 2`` where ``0.5 alpha <= 1``).
        """
        auto_lr = _policy.is_auto(plan.learning_rate)
        plan, resolved = super().resolve_hyperparameters(plan, epsilon, delta)
        self._settle = bool(
            self.settles_squared
            and auto_lr
            and math.isfinite(epsilon)
            and plan.loss == SQUARED
            and plan.learning_rate >= _policy.POISSON_STEP  # not noise-damped
        )
        if self._settle:
            resolved["step schedule"] = (
                "level for half the steps, then linear decay (mean learning_rate)"
            )
        return plan, resolved

    def learning_rates(self, plan):
        """The step sizes of every step (public, fixed before fitting)."""
        steps = self.n_steps(plan)
        if self._settle:
            return settling_rates(plan.learning_rate, steps)
        return np.full(steps, plan.learning_rate)

    def check_plan(self, plan):
        """Bounded steps, and a step size the penalty alone does not diverge at."""
        super().check_plan(plan)
        step = self.max_step_size(plan)
        if step * plan.alpha >= 2.0:
            raise ValueError(
                f"solver={self.name!r}: {self._max_step_text} x alpha = {step:.4g} x "
                f"{plan.alpha:.4g} must be < 2, else the penalty step alone "
                "diverges; lower learning_rate or alpha."
            )

    def n_steps(self, plan):
        return max(1, math.ceil(plan.max_iter / self.sampling_prob(plan) - 1e-9))

    def event_inputs(self, plan):
        query = applies(plan, self._final_intercept())  # the final query's inputs
        return (
            plan.n_samples,
            plan.batch_size,
            plan.max_iter,
            query,
            plan.target_bound if query else None,
        )

    def make_event(self, noise_multiplier, plan):
        q = self.sampling_prob(plan)
        step = GaussianDpEvent(noise_multiplier)
        if q < 1.0:
            step = PoissonSampledDpEvent(q, step)
        steps = self.n_steps(plan)
        event = SelfComposedDpEvent(step, steps)
        return with_intercept_event(
            event, noise_multiplier, plan, q, steps, self._final_intercept()
        )

    def mechanism(self, plan):
        return (
            "Gaussian noise on the sum of per-example gradients clipped to L2 "
            f"norm {plan.clip_norm:g} (coefficients and intercept together)"
        )

    def added_noise(self, noise_multiplier, plan):
        q, steps = self.sampling_prob(plan), self.n_steps(plan)
        line = noise_line(plan, noise_multiplier, q, steps, self._final_intercept())
        return super().added_noise(noise_multiplier, plan) + line

    def finish(self, X, Y, W, b, plan, noise_multiplier, rng):
        """The run's final private intercept (the squared loss; see
        :mod:`~dpestim.solvers.sgd._intercept`)."""
        q = self.sampling_prob(plan)
        steps = self.n_steps(plan)
        return private_intercept(
            X, Y, W, b, plan, noise_multiplier, q, steps, rng, self._final_intercept()
        )

    def sampling(self, plan):
        q = self.sampling_prob(plan)
        if q >= 1.0:
            return "full batch (every record in every step)"
        return (
            f"Poisson, each record independently with probability q={q:.6g} "
            f"(expected batch {plan.batch_size}) in every step"
        )

    def solve(self, X, Y, plan, noise_multiplier, rng):
        steps = self.n_steps(plan)
        std = noise_multiplier * plan.clip_norm if noise_multiplier > 0 else 0.0
        stds = np.full(steps, std)
        rates = self.learning_rates(plan)
        q = self.sampling_prob(plan)
        W, b = noisy_gradient_descent(X, Y, plan, q, stds, rates, rng)
        b = self.finish(X, Y, W, b, plan, noise_multiplier, rng)
        return SolverResult(
            coef=W,
            intercept=b,
            n_iter=steps,
            dp_event=self.make_event(noise_multiplier, plan),
            noise_multiplier=noise_multiplier,
        )
