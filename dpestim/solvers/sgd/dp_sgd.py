"""DP-SGD (Abadi et al., 2016): Poisson-subsampled, clipped, Gaussian noise.

The step is a map-reduce: a Poisson sample (independent Bernoulli(q) per row),
the sum of the sample's clipped per-example gradients, Gaussian noise added
once to that sum, then a gradient step on
``mean_i loss_i + alpha / 2 ||W||^2``. The sum is divided by the *expected*
batch size ``q n`` (public), never by the realised one. On sparse data the
step costs O(nnz): see :mod:`dpestim._kernels.lazy_noise`.
"""

import math

import numba
import numpy as np
import scipy.sparse as sp
from dp_accounting import GaussianDpEvent, PoissonSampledDpEvent, SelfComposedDpEvent

from ..._kernels import (
    laplacian_smooth_inplace,
    poisson_sample_range,
    sampling_key,
    weighted_clipped_grad_sum,
    weighted_clipped_grad_sum_csr,
)
from ..._kernels.lazy_noise import (
    lazy_flush,
    lazy_is_eager,
    lazy_segment_length,
    lazy_sparse_sgd,
    lazy_state,
)
from ...losses import loss_value
from ...losses._codes import SQUARED
from ...utils._progress import current_progress
from ...utils._rows import row_sq_norms
from .. import _policy
from .._policy import ITERATIVE_SCALE_SHARE_CAP, ITERATIVE_SQUARED_SHARE_CAP
from ..base import BaseSolver, SolverResult, row_weights
from ._intercept import applies, noise_line, private_intercept, with_intercept_event

__all__ = ["DPSGD", "noisy_gradient_descent", "settling_rates"]

_EMPTY_F = np.empty(0)
# int32 like the index arrays of CSR input (canonicalised in validation): the
# dense and sparse calls of one kernel share one compiled signature
_EMPTY_I = np.empty(0, dtype=np.int32)
_EMPTY_X = np.empty((0, 0))
_NO_KEY = np.zeros(2, dtype=np.uint64)


@numba.njit(cache=True)
def _noisy_sgd_loop(
    X,
    data,
    indices,
    indptr,
    sparse,
    Y,
    row_sq_norms,
    loss,
    W,
    b,
    fit_intercept,
    clip_norm,
    noise_stds,
    sampling_prob,
    learning_rates,
    alpha,
    rng,
    step_rule,
    smoothing,
    key,
    first_step,
    weights,
):
    """Run ``len(learning_rates)`` noisy clipped steps in place on ``(W, b)``.

    ``weights`` (empty: none) multiply each row's clipped gradient (values
    in ``[0, 1]``: the sum's sensitivity stays ``clip_norm``).

    Step ``t`` samples rows with :func:`poisson_sample_range` under the
    sampling ``key`` and step index ``first_step + t`` (chunking-invariant,
    draws nothing from ``rng``), sums their clipped gradients and applies
    :func:`noisy_update`, which draws the noise from ``rng``.
    """
    n = Y.shape[0]
    K, d = W.shape
    rows = np.empty(n, dtype=np.int64)
    G = np.zeros((K, d))
    g0 = np.zeros(K)
    z = np.empty(K)
    dz = np.empty(K)
    for t in range(learning_rates.shape[0]):
        m = poisson_sample_range(key, first_step + t, sampling_prob, 0, n, rows)
        G[:, :] = 0.0
        g0[:] = 0.0
        if sparse:
            weighted_clipped_grad_sum_csr(
                data, indices, indptr, Y, rows, m, W, b, loss, clip_norm,
                row_sq_norms, fit_intercept, G, g0, z, dz, weights,
            )  # fmt: skip
        else:
            weighted_clipped_grad_sum(
                X, Y, rows, m, W, b, loss, clip_norm, row_sq_norms,
                fit_intercept, G, g0, z, dz, weights,
            )  # fmt: skip
        noisy_update(
            G, g0, W, b, t, noise_stds, sampling_prob * n, learning_rates,
            alpha, rng, step_rule, smoothing, fit_intercept,
        )  # fmt: skip


@numba.njit(cache=True)
def noisy_update(
    G, g0, W, b, t, noise_stds, denom, learning_rates, alpha, rng, step_rule,
    smoothing, fit_intercept,
):  # fmt: skip
    """Noise the clipped-gradient sum ``(G, g0)`` and step ``(W, b)`` in place.

    The part of a step after the sum, shared by the in-memory loop and the
    blocked / distributed driver (:mod:`dpestim._distributed`), so that both
    are one algorithm. ``noise_stds[t]`` is the standard deviation of the
    Gaussian noise added to the sum (noise multiplier x clip norm); zero
    skips the draw. Noise is drawn from ``rng`` in C order over ``W`` then
    over ``b``. ``denom`` is the expected batch size ``q n``.
    ``step_rule`` empty: the step has size ``learning_rates[t]``; otherwise
    see :func:`_step_size` (a post-processing of the noisy gradient only).
    ``smoothing > 0`` (dp-lssgd) replaces each row of the noisy ``W``
    gradient plus penalty gradient by its Laplacian smoothing
    (post-processing); ``0`` is dp-sgd.
    """
    K, d = W.shape
    std = noise_stds[t]
    if std > 0.0:
        for k in range(K):
            for j in range(d):
                G[k, j] += std * rng.standard_normal()
        if fit_intercept:
            for k in range(K):
                g0[k] += std * rng.standard_normal()
    if smoothing > 0.0:
        # smooth the whole noisy gradient, penalty included (the update
        # below adds alpha W back): A^{-1} is then a fixed preconditioner
        for k in range(K):
            for j in range(d):
                G[k, j] += denom * alpha * W[k, j]
            laplacian_smooth_inplace(G[k], smoothing)
            for j in range(d):
                G[k, j] -= denom * alpha * W[k, j]
    lr = _step_size(step_rule, learning_rates, t, std, G, g0, fit_intercept, denom)
    for k in range(K):
        for j in range(d):
            W[k, j] -= lr * (G[k, j] / denom + alpha * W[k, j])
        if fit_intercept:
            b[k] -= lr * g0[k] / denom


@numba.njit(cache=True)
def _step_size(step_rule, learning_rates, t, std, G, g0, fit_intercept, denom):
    """Size of step ``t``: the schedule, or AdaGrad-norm on the *noisy* gradient.

    ``step_rule`` empty: ``learning_rates[t]``. Otherwise ``step_rule =
    [1, b_sq, nu, beta, period, debias]`` (adp-adagrad): with the released
    noisy mean gradient ``g = (G, g0) / denom`` (``G`` already holds the
    noise) and ``D`` its number of coordinates,
    ``b_sq += max(beta_t * (||g||^2 - debias * D * (std / denom)^2), nu)``
    with ``beta_t = max(beta / (t % period + 1), 1)``; the step is
    ``learning_rates[t] / sqrt(b_sq)``. ``b_sq`` is updated in
    ``step_rule[1]`` and the step taken is written back to
    ``learning_rates[t]``. Only the noisy gradient and public constants are
    read, so the step sizes are post-processing of the Gaussian mechanism.
    """
    if step_rule.shape[0] == 0:
        return learning_rates[t]
    K, d = G.shape
    sq = 0.0
    for k in range(K):
        for j in range(d):
            sq += G[k, j] * G[k, j]
    n_coords = K * d
    if fit_intercept:
        n_coords += K
        for k in range(K):
            sq += g0[k] * g0[k]
    sq = (sq - step_rule[5] * n_coords * std * std) / (denom * denom)
    beta_t = max(step_rule[3] / (t % int(step_rule[4]) + 1), 1.0)
    step_rule[1] += max(beta_t * sq, step_rule[2])
    lr = learning_rates[t] / math.sqrt(step_rule[1])
    learning_rates[t] = lr
    return lr


def _row_sq_norms(X):
    return row_sq_norms(X)  # computed once per fit, see dpestim.utils._rows


def noisy_gradient_descent(
    X,
    Y,
    plan,
    sampling_prob,
    noise_stds,
    learning_rates,
    rng,
    *,
    step_rule=None,
    smoothing=0.0,
    coef_init=None,
    intercept_init=None,
    key=None,
    first_step=0,
    lazy=True,
):
    """Run clipped noisy (stochastic) gradient descent.

    The run starts from :meth:`~dpestim.solvers.BaseSolver.initial_point`
    (zero coefficients, the plan's ``intercept_init`` or zero), unless
    ``coef_init`` / ``intercept_init`` are given.

    The shared driver of the gradient solvers: one step per entry of
    ``learning_rates``, each on a fresh Poisson sample with probability
    ``sampling_prob``. ``step_rule`` (default: none, the step sizes are
    ``learning_rates``) selects a data-adaptive step rule computed from the
    noisy gradient, see :func:`_step_size`; the steps taken are then written
    back into ``learning_rates``, which must be a float64 array.
    ``smoothing > 0`` Laplacian-smooths each row of the noisy coefficient
    gradient (dp-lssgd). ``coef_init`` / ``intercept_init``
    (updated in place when given) continue a run: consecutive calls on the
    same ``rng``, the same sampling ``key`` and ``first_step`` advanced by
    the steps already taken reproduce one long call bit for bit.

    The Poisson samples come from the counter-based sampler
    :func:`~dpestim._kernels.poisson_sample_range` under ``key`` (by default
    drawn from ``rng`` first, :func:`~dpestim._kernels.sampling_key`, when
    ``sampling_prob < 1``; the full batch draws no key); the
    noise is drawn from ``rng``. ``X`` may also be a
    :class:`~dpestim._distributed.BlockedData` (Dask, memory-mapped or zarr
    data): the same steps then run with the clipped sums computed block by
    block, giving the same model up to floating-point summation order.

    Sparse (CSR) ``X`` with ``sampling_prob < 1``, no ``step_rule`` and no
    ``smoothing`` (dp-sgd, adp-sgd) runs in O(nnz) per step: the
    coefficients' noise and L2 shrinkage are applied lazily per column
    (:mod:`dpestim._kernels.lazy_noise`). The released ``(coef, intercept)``
    has exactly the distribution of the dense step's, hence the same
    guarantee, but the draws are made in another order: a sparse fit is
    reproducible for a fixed ``rng``, not bit-identical to the dense fit of
    the same data, and consecutive calls (``coef_init``) agree with one long
    call in distribution only (each call flushes its pending noise).
    ``lazy=False`` keeps the dense per-step noise on sparse data.

    Returns
    -------
    coef : ndarray of shape (n_outputs, n_features)
    intercept : ndarray of shape (n_outputs,)
    """
    if step_rule is not None and not (
        isinstance(learning_rates, np.ndarray)
        and learning_rates.dtype == np.float64
        and learning_rates.flags.c_contiguous
    ):
        raise TypeError("learning_rates must be a C-contiguous float64 array.")
    W0, b0 = BaseSolver.initial_point(plan)
    W = W0 if coef_init is None else coef_init
    b = b0 if intercept_init is None else intercept_init
    if key is None:
        key = sampling_key(rng) if sampling_prob < 1.0 else _NO_KEY
    stds = np.ascontiguousarray(noise_stds, dtype=np.float64)
    rates = np.ascontiguousarray(learning_rates, dtype=np.float64)
    rule = _EMPTY_F if step_rule is None else step_rule
    progress = current_progress()
    weights = row_weights(plan, Y)
    if weights is not None and getattr(X, "_dpestim_blocked", False):
        raise ValueError(
            "class_weight is not supported on blocked X (Dask, memory-mapped "
            "or zarr data); fit in memory or set class_weight=None."
        )
    if getattr(X, "_dpestim_blocked", False):
        q, denom = float(sampling_prob), sampling_prob * plan.n_samples
        with X.gradient_oracle(Y, plan) as clipped_sum:
            for t in range(rates.shape[0]):
                G, g0 = clipped_sum(key, first_step + t, q, W, b)
                noisy_update(
                    G, g0, W, b, t, stds, denom, rates, plan.alpha, rng, rule,
                    float(smoothing), plan.fit_intercept,
                )  # fmt: skip
                if progress is not None:
                    progress.update(1)
        return W, b
    if sp.issparse(X) and not X.has_canonical_format:
        # duplicates summed (a copy): the row norms must be those of the rows
        # the kernels sum, and the lazy kernel needs distinct columns per row
        X = X.copy()
        X.sum_duplicates()
    row_sq = _row_sq_norms(X)
    if sp.issparse(X):
        args = (_EMPTY_X, X.data, X.indices, X.indptr, True)
    else:
        args = (X, _EMPTY_F, _EMPTY_I, _EMPTY_I, False)
    n_steps = rates.shape[0]
    if progress is None:
        pieces = [(0, n_steps)]
    else:  # epoch-sized pieces of one run: the same draws, bit for bit
        period = 1 if step_rule is None else int(step_rule[4])
        pieces = progress.chunks(n_steps, 1.0 / sampling_prob, multiple_of=period)
    sparse_lazy = (
        rule.shape[0] == 0
        and smoothing == 0.0
        and sampling_prob < 1.0
        and weights is None  # the lazy kernel has no weights: per-step noise
    )
    if lazy and sparse_lazy and sp.issparse(X):  # O(nnz) steps, same distribution
        _lazy_descent(
            X, Y, plan, sampling_prob, stds, rates, rng, W, b, key, first_step,
            row_sq, pieces, progress, lazy,
        )  # fmt: skip
        return W, b
    for lo, hi in pieces:
        _noisy_sgd_loop(
            *args,
            Y,
            row_sq,
            plan.loss,
            W,
            b,
            plan.fit_intercept,
            plan.clip_norm,
            stds[lo:hi],
            float(sampling_prob),
            rates[lo:hi],
            plan.alpha,
            rng,
            rule,
            float(smoothing),
            key,
            first_step + lo,
            _EMPTY_F if weights is None else weights,
        )
        if progress is not None:
            progress.update(hi - lo)
            if progress.wants_loss:
                epoch = round(hi * sampling_prob, 2)
                progress.report_loss(epoch, _objective(X, Y, W, b, plan))
    return W, b


def _lazy_descent(
    X, Y, plan, q, stds, rates, rng, W, b, key, first_step, row_sq, pieces, progress,
    mode,
):  # fmt: skip
    """The steps of :func:`noisy_gradient_descent` on CSR ``X`` in O(nnz).

    Noise and L2 shrinkage of the coefficients are applied lazily per column
    (:mod:`dpestim._kernels.lazy_noise`, which states why the released
    ``(W, b)`` has exactly the distribution of the dense step's). ``W`` is
    updated in place; the pending noise is flushed after the last step.
    ``X`` must be in canonical format (distinct columns per row). ``mode``:
    ``True`` chooses between per-entry tracking and bringing every column up
    to date at every step from public sizes
    (:func:`~dpestim._kernels.lazy_noise.lazy_is_eager`); ``"entries"`` or
    ``"eager"`` force one (tests).
    """
    n_steps = rates.shape[0]
    denom = q * plan.n_samples
    unit = float(np.max(rates * stds)) / denom if n_steps else 0.0
    unit = unit if unit > 0.0 and math.isfinite(unit) else 1.0
    segment = lazy_segment_length(n_steps, W.size)
    state = lazy_state(W, segment)
    eager = lazy_is_eager(W.size, denom) if mode is True else mode == "eager"
    for lo, hi in pieces:
        lazy_sparse_sgd(
            X.data, X.indices, X.indptr, Y, row_sq, plan.loss, W, b,
            plan.fit_intercept, plan.clip_norm, stds[lo:hi], float(q), rates[lo:hi],
            plan.alpha, rng, key, first_step + lo, unit, eager, *state,
        )  # fmt: skip
        if progress is not None:
            progress.update(hi - lo)
            if progress.wants_loss:  # needs W itself: flush (same distribution)
                lazy_flush(state[0], state[1], W, *state[2:], unit, rng)
                epoch = round(hi * q, 2)
                progress.report_loss(epoch, _objective(X, Y, W, b, plan))
    lazy_flush(state[0], state[1], W, *state[2:], unit, rng)


def _objective(X, Y, W, b, plan):
    """Penalised mean training loss (read only by the non-private diagnostic)."""
    Z = np.ascontiguousarray(X @ W.T + b)
    return loss_value(plan.loss, Z, Y) + 0.5 * plan.alpha * float(np.sum(W * W))


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
