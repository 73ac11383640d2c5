"""DP-SCD and seqDP-SCD (Damaskinos et al., AAAI 2021): private dual coordinate descent.

Stochastic dual coordinate descent on ``mean_i loss_i(x_i . theta) + alpha / 2
||theta||^2``. Each step Poisson-samples a batch ``B`` of examples (expected
size ``L``); every dual coordinate ``j`` in ``B`` takes the exact (squared,
hinge, squared hinge) or one-Newton-step (logistic) minimiser ``zeta_j`` of the
CoCoA+ subproblem with curvature factor ``sigma' = L``, clipped to
``|zeta_j| <= C / max(1, ||x_j||)``; the shared vector ``v = sum_j alpha_j x_j``
moves by ``sum_j zeta_j x_j``, and Gaussian noise is added to ``v`` (all
coordinates) and to ``alpha_B``. The released model is ``theta = v / (alpha
n)``, never the dual variables: they stay local to
:func:`~dpestim.solvers.coordinate._kernels._dual_run` and are dropped when
it returns.

Privacy (add/remove-one neighbouring). Treat the noisy ``v`` of every step
as released (the model is a post-processing of the last one). Given the
released history ``v_0, ..., v_t``, the dual variable of a record other than
``k`` is a function of that history, of its own record and of its own noise
only (its updates read ``v`` and itself, never another dual variable), and
whether it is sampled does not depend on ``k``. So adding or removing ``k``
changes step ``t``'s ``v_{t+1} - v_t`` only by ``k``'s own term ``zeta_k
x_k``, of L2 norm at most ``C`` (``|zeta_k| <= C / max(1, ||x_k||)``) when
``k`` is sampled: each step is a Poisson-subsampled Gaussian mechanism of
sensitivity ``C`` and noise ``noise_multiplier * C``, composed adaptively
over the steps. The dual variables are never released: releasing ``alpha``
would publish each sampled record's own dual variable, which no noise
calibrated here protects, so the argument must not (and does not) count
them. The noise the paper also adds to ``alpha_B`` is kept (Algorithm 1),
with the same standard deviation; the guarantee does not rely on it.

Class weights (``plan.class_weights``): the primal ``mean_i c_i loss_i +
alpha / 2 ||theta||^2`` (``c_i`` in ``[0, 1]``) has dual terms ``c_i
loss_i*(-alpha_i / c_i)`` (boxes ``[0, c_i]``,
:func:`~dpestim.solvers.coordinate._kernels.dual_step`) and the same ``theta
= v / (alpha n)``. The argument above does not use the form of the
update: record ``j``'s is a function of its own record (hence ``c_j``; the
class weights are public or a separately accounted release), its own dual
variable and the released ``v``, clipped after it is computed (to ``c_j C``,
at most ``C``). So neither the sensitivity ``C`` nor the event changes (nor
seq's bound).

The numba kernels (the dual step, the loop over steps) and the driver that
holds the dual variables are in :mod:`~dpestim.solvers.coordinate._kernels`.
"""

import math
from dataclasses import replace

import numpy as np
import scipy.sparse as sp
from dp_accounting import GaussianDpEvent, PoissonSampledDpEvent, SelfComposedDpEvent
from sklearn.utils._param_validation import StrOptions

from ...losses import LOGISTIC, MULTINOMIAL
from .. import _policy
from ..base import BaseSolver, SolverResult, row_weights
from ..sgd.dp_sgd import DPSGD
from . import _policy as _coordinate_policy
from ._kernels import _dual_run

__all__ = ["DPSCD"]


def _with_intercept_column(X, fit_intercept):
    """``X`` with a constant-1 column appended when ``fit_intercept``."""
    if not fit_intercept:
        return X
    if sp.issparse(X):
        ones = sp.csr_matrix(np.ones((X.shape[0], 1)))
        return sp.hstack([X, ones], format="csr")
    return np.hstack([X, np.ones((X.shape[0], 1))])


class DPSCD(BaseSolver):
    """Differentially private stochastic dual coordinate descent (``solver="dp-scd"``).

    Algorithm 1 of Damaskinos et al. (AAAI 2021). Each of the
    ``T = ceil(max_iter / q)`` steps includes every record independently with
    probability ``q = min(1, batch_size / n_samples)``; each sampled dual
    coordinate takes the minimiser of its CoCoA+ subproblem against the same
    snapshot, with curvature factor ``sigma' = L = q n`` (the *expected*
    batch size, public, never the realised one): exact for the squared, hinge
    and squared hinge losses, one Newton step in the box
    ``y alpha in [1e-4, 1 - 1e-4]`` for the logistic loss. Each update is
    clipped to ``|zeta_j| <= C / max(1, ||x_j||)`` and Gaussian noise of
    standard deviation ``noise_multiplier * C`` is added to the shared vector
    ``v`` (every coordinate) and to the sampled dual variables. Only ``coef =
    v / (alpha n)`` is released.

    Given the released history of ``v``, one record changes a step's ``v``
    by at most ``C`` in L2 (add/remove-one neighbours; the other records'
    updates depend only on that history and on themselves; see the module
    docstring), so the DpEvent is ``SelfComposedDpEvent(PoissonSampledDpEvent(q,
    GaussianDpEvent(noise_multiplier)), T)``. With ``K > 1`` outputs
    (one-vs-rest classes or several regression targets) the solver runs ``K``
    independent problems and the event is that run composed ``K`` times; the
    noise is calibrated for the whole composition.

    With ``fit_intercept=True`` a constant feature 1 is appended, so the
    intercept is penalised by ``alpha`` like the coefficients (as in
    liblinear); the learning rate is not used.

    Parameters
    ----------
    clip_mode : {"relative", "absolute"}, default="relative"
        How the estimator's ``clip_norm`` sets the bound ``C`` on each dual
        update. ``"absolute"``: ``C = clip_norm``, the paper's parameter.
        ``"relative"``: ``C = clip_norm * alpha * n_samples / L``. The
        unclipped update is about ``alpha n / L`` times a residual, so this
        makes ``clip_norm`` a bound in residual units, and a record's
        contribution to ``coef`` per step is at most ``clip_norm / L``, the
        scale of dp-sgd's clipped gradient over the expected batch.
    """

    name = "dp-scd"
    #: Which dual variables get noise in every step (for the report).
    _noised_duals = "the sampled dual variables"
    #: Rows of scikit-learn's X (= columns of the paper's X^T): C order / CSR.
    data_order = "C"
    supported_losses = frozenset(
        {"squared", "logistic", "hinge", "squared_hinge", "multinomial"}
    )
    #: Sequential (seqDP-SCD) updates inside a batch?
    _sequential = False
    #: record j's loss weighted by plan.class_weights[class of j] (in [0, 1])
    #: in its dual update, clipped afterwards: the sensitivity is unchanged
    #: (see the module docstring)
    supports_class_weight = True

    _parameter_constraints = {"clip_mode": [StrOptions({"relative", "absolute"})]}

    def __init__(self, clip_mode="relative"):
        self.clip_mode = clip_mode

    # -- public quantities -------------------------------------------------------

    #: The clip modes this solver accepts.
    _clip_modes = ("relative", "absolute")

    def _check(self, plan):
        if self.clip_mode not in self._clip_modes:
            modes = ", ".join(repr(m) for m in self._clip_modes)
            raise ValueError(
                f"clip_mode must be one of {modes}, got {self.clip_mode!r}."
            )
        if not plan.alpha > 0:
            raise ValueError(
                f"solver={self.name!r} needs alpha > 0 (the dual problem is "
                f"defined through 1 / alpha); got alpha={plan.alpha!r}."
            )

    def resolve_hyperparameters(self, plan, epsilon, delta):
        """``batch_size`` and ``max_iter`` by the family's ``scd_plan``.

        See :func:`~dpestim.solvers.coordinate._policy.scd_plan`.

        The noise dp-scd leaves on the coefficients falls with the batch
        (see that function): ``"auto"`` takes 10 epochs and the smallest
        expected batch ``L`` (also the curvature factor) that keeps it near
        0.3 x ``clip_norm``, at least the Poisson rule's ``1.5 sqrt(n)``
        (more epochs where that floor leaves less noise, and at least ``10 /
        (alpha n)``, the passes the dual needs; at most 30),
        and at least ``min(200, 2 tau)`` steps on small data
        (:func:`~dpestim.solvers._policy.travel`);
        without noise, the Poisson rule (at least 100 epochs when the plan
        does not clip: the conditioning, not the noise, limits such a run).
        The learning rate is not used by dual coordinate descent and is not
        reported.
        """
        E, B = _coordinate_policy.scd_plan(
            plan.n_samples,
            epsilon,
            delta,
            loss=plan.loss,
            n_outputs=plan.n_outputs,
            alpha=plan.alpha,
        )
        if not _policy.is_auto(plan.batch_size):
            B = plan.batch_size
            if _policy.is_auto(plan.max_iter):
                steps = _policy.MAX_STEPS if math.isinf(epsilon) else _policy.MIN_EPOCHS
                E = _policy.poisson_epochs(plan.n_samples, B, steps)
        if not _policy.is_auto(plan.max_iter):
            E = plan.max_iter
        elif _policy.unclipped_smoothness(plan) is not None:
            E = self.unclipped_epochs(E)  # non-private, unclipped
        lr = 0.5 if _policy.is_auto(plan.learning_rate) else plan.learning_rate
        plan = replace(plan, max_iter=int(E), batch_size=int(B), learning_rate=lr)
        return plan, {"max_iter": plan.max_iter, "batch_size": plan.batch_size}

    def batch(self, plan):
        """Expected batch size ``L = min(batch_size, n_samples)``."""
        return min(plan.batch_size, plan.n_samples)

    def sampling_prob(self, plan):
        """Poisson sampling probability ``L / n_samples``."""
        return self.batch(plan) / plan.n_samples

    def clip_bound(self, plan):
        """The bound ``C`` on each dual update (see ``clip_mode``)."""
        self._check(plan)
        if self.clip_mode == "absolute":
            return plan.clip_norm
        if self.clip_mode == "auto":
            return plan.clip_norm * plan.learning_rate
        return plan.clip_norm * plan.alpha * plan.n_samples / self.batch(plan)

    def sensitivity(self, plan):
        """L2 sensitivity ``C`` of one step's ``v`` given the released history.

        The dual variables are never released, so they do not count (the
        previous ``sqrt(2) C``, covering ``(alpha_B, v)``, added ``sqrt(2)``
        times too much noise; see the module docstring).
        """
        return self.clip_bound(plan)

    def sigma_prime(self, plan):
        """Curvature factor of the subproblem: the expected batch size."""
        return float(self.batch(plan))

    def steps_per_output(self, plan):
        """``T = ceil(max_iter / q)`` noisy steps for each output."""
        q = self.sampling_prob(plan)
        return max(1, math.ceil(plan.max_iter / q - 1e-9))

    def n_steps(self, plan):
        return plan.n_outputs * self.steps_per_output(plan)

    def event_inputs(self, plan):
        return (plan.n_samples, plan.batch_size, plan.max_iter, plan.n_outputs)

    def make_event(self, noise_multiplier, plan):
        self._check(plan)
        q = self.sampling_prob(plan)
        step = GaussianDpEvent(noise_multiplier)
        if q < 1.0:
            step = PoissonSampledDpEvent(q, step)
        run = SelfComposedDpEvent(step, self.steps_per_output(plan))
        if plan.n_outputs > 1:
            return SelfComposedDpEvent(run, plan.n_outputs)
        return run

    def mechanism(self, plan):
        return (
            f"Gaussian noise on the shared vector v (and {self._noised_duals}) "
            f"of dual coordinate updates clipped to |zeta| <= "
            f"C/max(1, ||x||), C={self.clip_bound(plan):.4g}; L2 sensitivity "
            f"{self.sensitivity(plan):.4g} per step; only coef = v/(alpha n) is "
            "released"
        )

    def sampling(self, plan):
        return DPSGD.sampling(self, plan)  # the same Poisson sampling

    def added_noise(self, noise_multiplier, plan):
        std = self._noise_std(noise_multiplier, plan)
        return (
            f"Gaussian, standard deviation noise multiplier {noise_multiplier:.6g} "
            f"x L2 sensitivity {self.sensitivity(plan):.6g} = {std:.6g} per "
            "coordinate (noise_std_)"
        )

    def composition(self, plan):
        T, K = self.steps_per_output(plan), plan.n_outputs
        if K == 1:
            return super().composition(plan)
        return (
            f"{K} independent runs (one per output, one-vs-rest) of {T} steps, "
            "composed by the accountant (dp_accounting) on the DpEvent below"
        )

    # -- the algorithm -----------------------------------------------------------

    def _noise_std(self, noise_multiplier, plan):
        if noise_multiplier <= 0:
            return 0.0
        return noise_multiplier * self.sensitivity(plan)

    def _cap(self, plan):
        return plan.n_samples

    def solve(self, X, Y, plan, noise_multiplier, rng):
        self._check(plan)
        loss = plan.loss
        # each record's weight, from its class (before the one-vs-rest split)
        weights = row_weights(plan, Y)
        if loss == MULTINOMIAL:  # one-vs-rest logistic on +-1 targets
            loss, Y = LOGISTIC, 2.0 * Y - 1.0
        Xa = _with_intercept_column(X, plan.fit_intercept)
        d = plan.n_features
        coef = np.zeros((plan.n_outputs, d))
        intercept = np.zeros(plan.n_outputs)
        std = self._noise_std(noise_multiplier, plan)
        for k in range(plan.n_outputs):
            v = _dual_run(
                Xa,
                Y[:, k],
                loss,
                plan.alpha,
                self.sigma_prime(plan),
                self.clip_bound(plan),
                std,
                self.sampling_prob(plan),
                self.steps_per_output(plan),
                self._sequential,
                self._cap(plan),
                rng,
                weights,
            )
            theta = v / (plan.alpha * plan.n_samples)
            coef[k] = theta[:d]
            if plan.fit_intercept:
                intercept[k] = theta[d]
        return SolverResult(
            coef=coef,
            intercept=intercept,
            n_iter=self.n_steps(plan),
            dp_event=self.make_event(noise_multiplier, plan),
            noise_multiplier=noise_multiplier,
            attributes={"noise_std_": std},
        )


def __getattr__(name):
    # ``from dpestim.solvers.coordinate.dp_scd import SeqDPSCD``, the import path of the
    # sequential variant before it had its own module, without an import circle.
    if name == "SeqDPSCD":
        from .seq_dp_scd import SeqDPSCD

        return SeqDPSCD
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
