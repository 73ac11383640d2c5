"""The noisy clipped gradient loop of the dp-sgd family (numba kernels).

One step: a Poisson sample (independent Bernoulli(q) per row), the sum of the
sample's clipped per-example gradients, Gaussian noise added once to that sum,
then a gradient step on ``mean_i loss_i + alpha / 2 ||W||^2``; the sum is
divided by the *expected* batch size ``q n`` (public), never by the realised
one. On sparse data the step costs O(nnz): see
:mod:`dpestim._kernels.lazy_noise`. The solvers
(:class:`~dpestim.solvers.sgd.dp_sgd.DPSGD` and its family) set the step sizes
and the noise and call :func:`noisy_gradient_descent`.
"""

import math

import numba
import numpy as np
import scipy.sparse as sp

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
from ...utils._progress import current_progress
from ...utils._rows import row_sq_norms
from ..base import BaseSolver, row_weights

__all__ = ["noisy_gradient_descent", "noisy_update"]

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
