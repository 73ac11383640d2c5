"""The ``"auto"`` hyperparameters of the accelerated family (issue 14).

A mixin of :class:`~dpestim.solvers.AcceleratedSolver`: the rule that turns
``max_iter="auto"`` and ``learning_rate="auto"`` into numbers from public
quantities only (n, d, loss, epsilon, delta, clip_norm), and the
``UtilityWarning`` of a plan that cannot learn. It reads the solver's batch,
noise schedule and mechanism (``_batch``, ``_n_noisy``, ``_laplace``,
``noise_schedule``) and nothing else.
"""

import math
from dataclasses import replace

import numpy as np

from ...losses import SQUARED, SQUARED_HINGE
from .. import _policy

__all__ = ["AutoPolicyMixin"]

#: Curvature the ``"auto"`` step uses instead of the loss's own: the squared
#: hinge's derivative at the start (2) is 4x the logistic's, so clipping
#: shrinks its gradients 4x more and ``1.5 / 2`` was measured too small
#: (LinearSVC dp-gd on Adult, epsilon = 1: 0.78 with 0.75, 0.83 with 3).
_CLIPPED_SMOOTHNESS = {SQUARED_HINGE: 0.5}


class AutoPolicyMixin:
    """``resolve_hyperparameters`` and ``utility_warnings`` of the family."""

    #: Largest ``"auto"`` step (L1 clip: the clipped gradient of a row is
    #: shrunk by about its L1 norm, so the step is larger than dp-sgd's).
    #: Momentum methods multiply the step by about ``1 / (1 - momentum)``
    #: and take a smaller one.
    auto_step = 10.0
    #: ``"auto"`` step of an unclipped (non-private) plan, in units of ``1 /
    #: L`` (``L`` the smoothness of the mean loss): gradient descent is
    #: stable below ``2 / L``; the momentum methods take ``1 / L``.
    unclipped_step = 1.5
    #: ``"auto"`` iterations of an unclipped (non-private) plan: the
    #: problem's conditioning (``L / alpha`` up to ~1e5 on the benchmark
    #: data), not the noise, sets how many it needs.
    unclipped_max_iter = 5000
    #: ``"auto"`` iterations bounds: at least ``auto_min_iter``; at most
    #: ``auto_max_iter`` (also the non-private number).
    auto_min_iter = 1
    auto_max_iter = 1000
    #: Below this many iterations the ``"auto"`` step grows like ``1 / T``
    #: (at most ``T``-fold), so that a short run can travel as far as one of
    #: this many iterations.
    auto_travel_iter = 100
    #: Momentum methods only (``uses_momentum``), private ``"auto"`` step:
    #: ``1 - beta = min(0.9, auto_momentum_settle / T)`` and the effective
    #: step ``step / (1 - beta)`` is ``auto_momentum_travel`` (regression:
    #: ``auto_momentum_travel_regression``) times dp-gd's ``"auto"`` step,
    #: through the momentum's strong-convexity constant (see
    #: :meth:`_momentum_plan`).
    auto_momentum_travel = 1.0
    auto_momentum_travel_regression = 3.0
    auto_momentum_settle = 4.0
    uses_momentum = False
    #: The strong-convexity floor the rule chose (0: none); set by
    #: ``resolve_hyperparameters``, read by ``_constants``.
    _auto_mu = 0.0

    # -- "auto" hyperparameters ----------------------------------------------------

    def resolve_hyperparameters(self, plan, epsilon, delta):
        """``max_iter`` and ``learning_rate`` of the run, from public quantities.

        ``max_iter`` counts iterations; in the default full-batch mode an
        iteration is one pass over the data, so it counts epochs as for the
        mini-batch solvers. ``"auto"``: the number of iterations at which the
        noise of one iteration's mean gradient reaches 0.1 x ``clip_norm``
        (:func:`dpestim.solvers._policy.full_batch_steps`: ``T = 0.1 epsilon
        n / (2 sqrt(2 D))`` for the Laplace mechanism, whose budget is split
        evenly over the iterations), clipped to ``[auto_min_iter,
        auto_max_iter]``, ``auto_max_iter`` without noise. For the "-opt"
        methods this is the largest ``T`` and the paper's ``T*`` is chosen
        below it.
        ``learning_rate="auto"`` is ``min(auto_step, 1.5 / L)`` with ``L`` the
        loss's largest curvature along the (unclipped) intercept (1/4
        logistic, 1 squared, 1/2 multinomial; gradient descent is stable
        below ``2 / L``; the squared hinge uses 1/2, not its 2: clipping
        shrinks its larger gradients more), times ``max(1, min(100 / T, T))``
        (``auto_travel_iter = 100``: a run of few iterations takes larger
        steps, so that it can move as far from the public start as a run of
        100; at most ``T``-fold, since a run of 1-3 steps is a noisy first
        gradient, which a large step mostly scales; classification losses
        only: a regression's scale counts, and on California at epsilon =
        0.1 the larger step gave R^2 -3 to -5.5), shrunk like ``1 / r^2``
        when the iteration's noise-to-signal ratio ``r`` exceeds 0.1 (only
        when ``max_iter`` is at its floor, ``auto_min_iter = 1``; 5 for
        regression). The
        estimator's ``batch_size`` is not used (this solver's ``batch_size``
        is). Measured (2-3 seeds, epsilon = 1): phishing dp-gd 0.58 -> 0.87
        (35 iterations, step 6 -> 17), LinearSVC dp-gd on Adult 0.78 ->
        0.83, digits 0.03-0.23 -> 0.2-0.38 (1 iteration instead of 5);
        Adult unchanged (103 iterations, step 6).
        A private momentum plan (dp-hb, dp-nag, dp-masg and "-opt", with
        ``strong_convexity`` and ``momentum`` unset) starts from dp-gd's step
        ``g`` and takes ``1 - beta = min(0.9, 4 / T)`` with the step ``g (1 -
        beta)`` (Ridge: ``3 g (1 - beta)``, at most 1.5), the effective step
        ``step / (1 - beta)`` of dp-gd, through the strong-convexity constant
        of its momentum (:meth:`_momentum_plan`, reported as
        ``strong_convexity (momentum)``).
        An unclipped non-private plan (``clip_norm = inf``) takes
        ``unclipped_max_iter`` iterations and the step ``unclipped_step / L``
        instead, ``L`` the smoothness of the (batch's) mean loss from the
        data's row norms (:func:`~dpestim.solvers._policy.unclipped_smoothness`;
        only for ``epsilon = inf``).
        """
        m = self._batch(plan)
        smooth = _policy.unclipped_smoothness(plan, m)
        T = plan.max_iter
        if _policy.is_auto(T):
            hi = self.auto_max_iter if smooth is None else self.unclipped_max_iter
            T = _policy.full_batch_steps(
                plan.n_samples,
                self._n_noisy(plan),
                epsilon,
                delta,
                laplace=self._laplace(),
                lo=min(self._min_iter(plan), hi),
                hi=hi,
            )
        lr = plan.learning_rate
        if _policy.is_auto(lr) and smooth is not None:
            lr = self.unclipped_step / smooth  # non-private, unclipped
        elif _policy.is_auto(lr):
            private = math.isfinite(epsilon)
            momentum = private and self._auto_momentum(plan)
            # a private momentum plan starts from dp-gd's step (see below)
            lr = self._clipped_step(
                plan, AutoPolicyMixin.auto_step if momentum else self.auto_step, T
            )
            if private:
                ratio = self._noise_ratio(plan, epsilon, delta, T)
                lr = _policy.noise_damped_rate(lr, ratio, _policy.NOISE_TO_SIGNAL)
            if plan.alpha > 0:  # a strong penalty's own step stays stable
                lr = min(lr, 1.0 / (plan.alpha * getattr(self, "step_scale", 1.0)))
            if momentum:
                lr, self._auto_mu = self._momentum_plan(plan, lr, T)
        plan = replace(plan, max_iter=int(T), batch_size=m, learning_rate=float(lr))
        resolved = {"max_iter": plan.max_iter, "learning_rate": plan.learning_rate}
        if self._auto_mu > plan.alpha:
            resolved["strong_convexity (momentum)"] = self._auto_mu
        if m < plan.n_samples:
            resolved["batch_size (solver)"] = m
        return plan, resolved

    @staticmethod
    def _curvature(plan):
        return _CLIPPED_SMOOTHNESS.get(plan.loss, _policy.LOSS_SMOOTHNESS[plan.loss])

    def _clipped_step(self, plan, largest, T):
        """``min(largest, 1.5 / L)``, times the short-run factor for classifiers."""
        lr = min(largest, 1.5 / self._curvature(plan))
        if plan.loss != SQUARED:  # classifiers: only the direction counts
            lr *= max(1.0, min(self.auto_travel_iter / T, T))
        return lr

    def _auto_momentum(self, plan):
        """Whether the private ``"auto"`` rule sets this method's momentum."""
        return (
            self.uses_momentum
            and self.strong_convexity is None
            and getattr(self, "momentum", None) is None
        )

    def _momentum_plan(self, plan, gd_step, T):
        """``(step, strong-convexity constant)`` of a private momentum plan.

        With ``mu = alpha`` (1e-4 by default) the momentum ``beta = (1 -
        sqrt(mu step)) / (1 + sqrt(mu step))`` of the Nesterov and heavy-ball
        schedules is ~0.99: each noisy gradient is repeated for ~90
        iterations (the noise left on the iterate grows with the effective
        step ``step / (1 - beta)``) and the stiff directions (the intercept)
        oscillate with a period of ``~2 pi / sqrt(step L)`` iterations, damped
        only by ``beta^(t / 2)``, so the last iterate lands at a phase set by
        ``T``, which the rule sets from epsilon: the utility was not
        monotone in epsilon (Ridge on diabetes, epsilon 1 / 2: R^2 0.0 /
        -0.86; California dp-hb 0.26 / -0.06; LinearSVC dp-hb on Adult 0.818
        / 0.792). The private rule instead takes ``1 - beta = min(0.9,
        auto_momentum_settle / T)`` (the oscillation of a run of ``T``
        iterations decays by ``beta^(T / 2) <= e^(-settle / 2)``: the last
        iterate has settled; ``beta >= 0.1`` keeps ``mu step < 1``) and
        the step ``step = H (1 - beta)``, so that the effective step
        ``step / (1 - beta)`` is ``H = auto_momentum_travel x`` dp-gd's
        ``"auto"`` step ``gd_step`` for the same plan (regression:
        ``auto_momentum_travel_regression = 3`` x, the step at most ``1.5 /
        L``): the momentum averages the noisy gradients of its last ``1 / (1
        - beta)`` iterations instead of amplifying them. The constant is the
        ``mu`` that gives this ``beta``: ``sqrt(mu step) = (1 - beta) / (1 +
        beta)``. Public: the plan's loss, ``T`` and dp-gd's step.
        """
        # at most 0.9 (beta >= 0.1): the schedules need mu step < 1
        one_minus_beta = min(0.9, self.auto_momentum_settle / T)
        travel = self.auto_momentum_travel
        if plan.loss == SQUARED:
            travel = self.auto_momentum_travel_regression
        step = travel * gd_step * one_minus_beta
        if plan.loss == SQUARED:
            step = min(step, 1.5 / self._curvature(plan))
        r = one_minus_beta / (2.0 - one_minus_beta)
        return step, r * r / (step * self.step_scale)

    def _min_iter(self, plan):
        """``auto_min_iter`` (1) for classifiers, 5 for regression.

        A classifier's first noisy gradient already orders the classes
        (digits: 0.2-0.38 with 1 iteration, 0.03-0.23 with 5); a regression's
        scale counts and its few-iteration runs were measured worse
        (diabetes, epsilon = 0.5, momentum methods: R^2 -0.29 with 1-2
        iterations against -0.2 with 5).
        """
        return self.auto_min_iter if plan.loss != SQUARED else 5

    def _noise_ratio(self, plan, epsilon, delta, T):
        """Noise-to-signal ratio of an iteration of a uniform ``T``-step run.

        The approximations of :func:`~dpestim.solvers._policy.full_batch_steps`.
        """
        n, D = plan.n_samples, self._n_noisy(plan)
        if self._laplace():
            return 2.0 * math.sqrt(2.0 * D) * T / (epsilon * n)
        log_d = math.log(1.0 / max(delta, 1e-300))
        return math.sqrt(T * D * log_d) / (epsilon * n)

    #: Fewest noise-damped iterations a budget must afford before the rule
    #: expects a model that learns more than the intercept (see
    #: ``utility_warnings``).
    few_iterations = 5.0

    def utility_warnings(self, plan, noise_multiplier):
        """Warn when the budget cannot buy a plan that learns.

        Two public checks (n, d, outputs, epsilon, the noise schedule):

        * one iteration's noise exceeds the largest clipped mean gradient;
        * the whole budget affords fewer than ``few_iterations`` (5)
          iterations whose noise stays at 0.1 x the clipped signal (the
          number :func:`~dpestim.solvers._policy.full_batch_steps` would
          give, before its floor). Measured: German credit (750 rows, 63
          features; 1.7 / 3.3 such iterations at epsilon 0.5 / 1): every
          setting of an oracle grid over ``max_iter`` x ``learning_rate``
          (dp-gd, dp-nag, 3 seeds) stays at or below the majority rate;
          diabetes Ridge (331 rows; 1.8 / 3.5) at R^2 ~0; digits (about 0.3
          per unit of epsilon) well below the non-private model.
        """
        if noise_multiplier <= 0:
            return []
        _, nms, _ = self.noise_schedule(noise_multiplier, plan)
        nms = np.asarray(nms, dtype=float)
        m = self._batch(plan)
        D = self._n_noisy(plan)
        unit = 2.0 * math.sqrt(2.0) if self._laplace() else 1.0
        out = []
        ratio = float(np.min(nms)) * unit * math.sqrt(D) / m
        if ratio > 1.0:
            out.append(
                f"the noise of each iteration has about {ratio:.3g} times the norm "
                "of the largest clipped mean gradient: reduce max_iter (or use "
                "max_iter='auto'), or increase epsilon."
            )
        target = _policy.NOISE_TO_SIGNAL * m / math.sqrt(D)
        with np.errstate(divide="ignore"):
            if self._laplace():  # pure DP: the budget adds up like 1 / nm
                afford = float(np.sum(1.0 / nms)) * target / unit
            else:  # zCDP: like 1 / nm^2
                afford = float(np.sum(1.0 / nms**2)) * target**2
        if afford < self.few_iterations:
            out.append(
                f"epsilon affords only about {afford:.2g} full-batch iterations "
                f"whose noise stays at {_policy.NOISE_TO_SIGNAL:g} x the clipped "
                f"signal at n={plan.n_samples} and {D} noised coordinates: expect "
                "a model that learns little beyond its intercept (e.g. the "
                "majority class); increase epsilon, or use more rows or fewer "
                "features."
            )
        return out
