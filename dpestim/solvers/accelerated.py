"""Private accelerated gradient methods (Kuru, Birbil, Gurbuzbalaban, Yildirim).

"Differentially Private Accelerated Optimization Algorithms" (SIAM J. Optim.
2022) gives pure epsilon-DP versions of gradient descent (DP-GD), heavy ball
(DP-HB), Nesterov's method (DP-NAG) and the multi-stage accelerated method
(DP-MASG), and "-opt" variants that split the budget unevenly over the
iterations and pick the number of iterations by minimising the paper's error
bound. The library's versions differ from the paper in one respect that
matters for privacy: the paper assumes bounded data, the library enforces the
sensitivity by clipping each per-example gradient in L1 norm (Laplace) or L2
norm (Gaussian option) to the public ``clip_norm``.

One iteration ``t`` (0-based below; the paper's ``t + 1``):

* optional restart (MASG stage start): ``x_prev = x``;
* evaluation point ``p = x`` (heavy ball) or ``p = (1 + beta_t) x - beta_t
  x_prev`` (Nesterov, MASG; ``beta_t = 0`` is gradient descent);
* batch: all ``n`` records, or exactly ``m`` drawn uniformly without
  replacement (Laplace), or a Poisson sample of expected size ``m``
  (Gaussian);
* ``g = (sum of clipped per-example gradients at p + noise_t) / m +
  alpha p_W`` (the penalty gradient is data-independent and not noised);
* heavy ball ``x, x_prev = x - step_t g + beta_t (x - x_prev), x``; otherwise
  ``x, x_prev = p - step_t g, x``.

Privacy (``noise="laplace"``, the paper's mechanism): datasets neighbour by
replacing one record. The sum of L1-clipped gradients moves by at most
``2 clip_norm`` in L1 norm, so Laplace noise of scale ``nm_t 2 clip_norm``
on every coordinate is ``1 / nm_t``-DP for the batch; without-replacement
subsampling amplifies it to ``log(1 + (m / n) (exp(1 / nm_t) - 1))``
(Balle, Barthe, Gaboardi 2018, Thm 9) and basic composition adds the
iterations. ``dp_accounting`` has no accountant for Laplace events under
without-replacement sampling, so this closed form is computed by
:func:`pure_epsilon` on the ``DpEvent`` the solver states. With
``noise="gaussian"`` the mechanism is the Gaussian one under add/remove-one
neighbouring, Poisson sampling for mini-batches, and the ``dp_accounting``
accountant chosen on the estimator.
"""

import math
from numbers import Integral, Real

import dp_accounting
import numba
import numpy as np
import scipy.sparse as sp
from dp_accounting import (
    ComposedDpEvent,
    GaussianDpEvent,
    LaplaceDpEvent,
    NoOpDpEvent,
    PoissonSampledDpEvent,
    SampledWithoutReplacementDpEvent,
    SelfComposedDpEvent,
)
from sklearn.utils._param_validation import Interval, StrOptions

from .._kernels import (
    clipped_grad_sum,
    clipped_grad_sum_csr,
    l1_clipped_grad_sum,
    l1_clipped_grad_sum_csr,
    poisson_sample_range,
    sample_without_replacement,
    sampling_key,
)
from .._kernels.discrete_laplace import snap_discrete_laplace
from ..privacy.discrete import discrete_laplace_grid
from ..utils._rows import row_sq_norms
from .base import BaseSolver, SolverResult

__all__ = [
    "DPHB",
    "DPMASG",
    "DPMASGOpt",
    "DPNAG",
    "DPNAGOpt",
    "AcceleratedSolver",
    "error_bound_terms",
    "masg_schedule",
    "pure_epsilon",
    "select_n_iter",
]

_FULL, _WOR, _POISSON = 0, 1, 2
#: Smallest share of the budget (relative to the largest) an "-opt" iteration
#: may get and still be run.
_MIN_SHARE = 1e-16
_EMPTY_F = np.empty(0)
_EMPTY_I = np.empty(0, dtype=np.int64)
_EMPTY_X = np.empty((0, 0))
_EMPTY_P = np.empty((0, 0, 0))
_EMPTY_K = np.zeros(2, dtype=np.uint64)
_EMPTY_T = np.empty(0, dtype=np.int64)


# -- accounting -------------------------------------------------------------------


def _log1p_q_expm1(q, x):
    """``log(1 + q (e^x - 1))`` for ``0 < q <= 1``, ``x >= 0``, never overflowing.

    For ``x > 1`` it is ``x + log(q + (1 - q) e^-x)``, finite whenever ``x``
    is (``expm1`` alone overflows past ``x = 709``).
    """
    if x > 1.0:
        return x + math.log(q + (1.0 - q) * math.exp(-x))
    return math.log1p(q * math.expm1(x))


def pure_epsilon(event):
    """Pure-DP epsilon of a Laplace ``DpEvent`` by the paper's closed form.

    ``dp_accounting`` cannot account a Laplace mechanism under sampling
    without replacement, so this one small function implements the
    composition the paper (and spec 000, section 3.2) states:

    * ``LaplaceDpEvent(s)``: ``1 / s`` (Laplace mechanism, Dwork 2008);
    * ``SampledWithoutReplacementDpEvent(n, m, e)``:
      ``log1p((m / n) expm1(eps(e)))`` (Balle, Barthe, Gaboardi 2018, Thm 9,
      replace-one neighbouring);
    * ``SelfComposedDpEvent(e, k)``: ``k eps(e)``; ``ComposedDpEvent``: the
      sum (basic composition, Dwork and Roth, Cor. 3.15);
    * ``NoOpDpEvent``: 0.

    Any other event raises ``ValueError``. The result holds with delta = 0.
    """
    if isinstance(event, LaplaceDpEvent):
        s = event.noise_multiplier
        return math.inf if s <= 0 else 1.0 / s
    if isinstance(event, SampledWithoutReplacementDpEvent):
        eps = pure_epsilon(event.event)
        q = event.sample_size / event.source_dataset_size
        if q >= 1.0:
            return eps
        return _log1p_q_expm1(q, eps) if math.isfinite(eps) else math.inf
    if isinstance(event, SelfComposedDpEvent):
        return event.count * pure_epsilon(event.event)
    if isinstance(event, ComposedDpEvent):
        return math.fsum(pure_epsilon(e) for e in event.events)
    if isinstance(event, dp_accounting.NoOpDpEvent):
        return 0.0
    raise ValueError(f"pure_epsilon cannot account {event!r}.")


def _amplified(nm, n, m):
    """Epsilon of one subsampled Laplace step with noise multiplier ``nm``."""
    if nm <= 0:
        return math.inf
    if m >= n:
        return 1.0 / nm
    return _log1p_q_expm1(m / n, 1.0 / nm)


def _laplace_multiplier(eps_t, n, m):
    """Noise multiplier ``1 / eps0`` whose subsampled step costs ``eps_t``.

    ``eps0 = log1p(expm1(eps_t) n / m)`` inverts the amplification (paper
    eq. (12)-(13)); elementwise on arrays, ``inf`` budget gives 0.
    """
    eps_t = np.asarray(eps_t, dtype=np.float64)
    r = n / m
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        if m >= n:
            eps0 = eps_t
        else:
            # eps_t + log(r - (r - 1) e^-eps_t) for large eps_t: no overflow
            big = eps_t + np.log(r - (r - 1.0) * np.exp(-eps_t))
            eps0 = np.where(eps_t > 1.0, big, np.log1p(np.expm1(eps_t) * r))
        return np.where(np.isfinite(eps0), 1.0 / eps0, 0.0)


# -- schedules (public quantities only) -------------------------------------------


def masg_schedule(n_iter, smoothness, strong_convexity, step_scale=1.0, n1=None):
    """Step sizes and stages of the multi-stage accelerated method (p = 1).

    Stage 1 has ``n1`` iterations (default ``ceil(2 sqrt(kappa) ln
    sqrt(kappa))``, ``kappa = L / mu``) with step ``c / L``; stage ``k >= 2``
    has ``2^k C`` iterations, ``C = ceil(sqrt(kappa) ln 8)``, with step
    ``c / (4^k L)``. Truncated at ``n_iter``.

    Returns
    -------
    steps : ndarray of shape (n_iter,)
    stages : ndarray of int64, shape (n_iter,)
        1-based stage index of every iteration.
    n1, C : int
    """
    L, mu = float(smoothness), float(strong_convexity)
    kappa = L / mu
    if n1 is None:
        n1 = math.ceil(2.0 * math.sqrt(kappa) * math.log(math.sqrt(kappa)))
    n1 = max(1, int(n1))
    C = max(1, math.ceil(math.sqrt(kappa) * math.log(8.0)))
    steps = np.empty(n_iter)
    stages = np.empty(n_iter, dtype=np.int64)
    t, k, length = 0, 1, n1
    while t < n_iter:
        stop = min(n_iter, t + length)
        steps[t:stop] = step_scale / L if k == 1 else step_scale / (4.0**k * L)
        stages[t:stop] = k
        t, k = stop, k + 1
        length = 2**k * C
    return steps, stages, n1, C


def _nag_momentum(steps, mu):
    r = np.sqrt(mu * steps)
    return (1.0 - r) / (1.0 + r)


def error_bound_terms(steps, stages, smoothness, strong_convexity):
    """Log-domain pieces of the NAG / MASG error bound (paper Thm 4.1, 4.3).

    With ``P(t) = sum_{i <= t} log(1 - sqrt(mu alpha_i))`` and stages ``s_t``,
    ``log a_{tau,0} = P(tau) + (s_tau - 1) log 2`` and ``log a_{tau,t} =
    P(tau) + s_tau log 2 + q_t`` for ``t <= tau``, where ``q_t = log(alpha_t
    (1 + alpha_t L)) - P(t) - s_t log 2`` (paper's constants with ``s_0 :=
    1``, spec 000 section 6).

    Returns
    -------
    P, q : ndarray of shape (T,)
    """
    steps = np.asarray(steps, dtype=np.float64)
    root = np.sqrt(strong_convexity * steps)
    if np.any(root >= 1.0):
        raise ValueError(
            "strong_convexity * step must be < 1 for the error bound; lower "
            "step_scale or strong_convexity."
        )
    P = np.cumsum(np.log1p(-root))
    q = np.log(steps * (1.0 + steps * smoothness)) - P - stages * math.log(2.0)
    return P, q


def select_n_iter(P, q, stages, initial_error, noise_constant, power):
    """``argmin_tau`` of ``a_{tau,0} E0 + noise_constant (sum_t a_{tau,t}^{1/p})^p``.

    ``power = 3`` is the Laplace bound (32) of the paper (``noise_constant =
    d S1^2 / (n^2 eps^2)``), ``power = 2`` its Gaussian analogue. Returns the
    1-based number of iterations ``T*`` (the first minimiser).
    """
    base = P + stages * math.log(2.0)
    log_a0 = base - math.log(2.0) + math.log(initial_error)
    if math.isinf(noise_constant):
        return 1  # the noise term dominates: it grows with every iteration
    if noise_constant <= 0:
        log_bound = log_a0
    else:
        cum = np.logaddexp.accumulate(q / power)
        log_noise = math.log(noise_constant) + base + power * cum
        log_bound = np.logaddexp(log_a0, log_noise)
    return int(np.argmin(log_bound)) + 1


def _softmax(v):
    w = np.exp(v - v.max())
    return w / w.sum()


# -- the loop ---------------------------------------------------------------------


@numba.njit(cache=True)
def _accelerated_loop(
    X,
    data,
    indices,
    indptr,
    sparse,
    Y,
    row_norms,
    loss,
    W,
    b,
    fit_intercept,
    clip_norm,
    l1,
    noise_scales,
    laplace,
    sampling,
    batch_size,
    steps,
    momenta,
    restarts,
    heavy_ball,
    alpha,
    rng,
    key,
    path_W,
    path_b,
    grids,
    grid_scales,
):
    """Run ``len(steps)`` noisy (accelerated) steps in place on ``(W, b)``.

    ``noise_scales[t]``: Laplace scale (``laplace``) or Gaussian standard
    deviation of the noise added to every coordinate of the clipped-gradient
    sum at step ``t`` (zero skips the draw; drawn in C order over ``W`` then
    ``b``). ``sampling``: 0 full batch, 1 exactly ``batch_size`` rows without
    replacement, 2 Poisson with probability ``batch_size / n`` from the
    counter-based sampler under ``key`` (chunking-invariant). The sum is
    divided by ``batch_size`` (the expected size for Poisson). ``path_W`` /
    ``path_b`` receive the iterates when they have ``len(steps)`` rows.
    ``grids`` non-empty: exact discrete Laplace instead of ``laplace``, each
    coordinate snapped to ``grids[t]`` plus ``DLap(grid_scales[t])`` grid
    units (see :mod:`dpestim.privacy.discrete`).
    """
    exact = grids.shape[0] > 0
    # the update then adds no noise of its own
    draw_scales = np.zeros_like(noise_scales) if exact else noise_scales
    n = Y.shape[0]
    K, d = W.shape
    rows = np.empty(n, dtype=np.int64)
    perm = np.arange(n)
    W_prev = W.copy()
    b_prev = b.copy()
    PW = np.empty((K, d))
    pb = np.empty(K)
    G = np.zeros((K, d))
    g0 = np.zeros(K)
    z = np.empty(K)
    dz = np.empty(K)
    m_div = float(n) if sampling == 0 else float(batch_size)
    q = batch_size / n
    for t in range(steps.shape[0]):
        evaluation_point(t, restarts, momenta, heavy_ball, W, b, W_prev, b_prev, PW, pb)
        if sampling == 0:
            m = sample_without_replacement(rng, n, n, perm, rows)
        elif sampling == 1:
            m = sample_without_replacement(rng, n, batch_size, perm, rows)
        else:
            m = poisson_sample_range(key, t, q, 0, n, rows)
        G[:, :] = 0.0
        g0[:] = 0.0
        if l1:
            if sparse:
                l1_clipped_grad_sum_csr(
                    data, indices, indptr, Y, rows, m, PW, pb, loss, clip_norm,
                    row_norms, fit_intercept, G, g0, z, dz,
                )  # fmt: skip
            else:
                l1_clipped_grad_sum(
                    X, Y, rows, m, PW, pb, loss, clip_norm, row_norms,
                    fit_intercept, G, g0, z, dz,
                )  # fmt: skip
        else:
            if sparse:
                clipped_grad_sum_csr(
                    data, indices, indptr, Y, rows, m, PW, pb, loss, clip_norm,
                    row_norms, fit_intercept, G, g0, z, dz,
                )  # fmt: skip
            else:
                clipped_grad_sum(
                    X, Y, rows, m, PW, pb, loss, clip_norm, row_norms,
                    fit_intercept, G, g0, z, dz,
                )  # fmt: skip
        if exact and noise_scales[t] > 0.0:
            grid, scale = grids[t], grid_scales[t]
            for k in range(K):
                for j in range(d):
                    G[k, j] = snap_discrete_laplace(G[k, j], grid, scale, rng)
            if fit_intercept:
                for k in range(K):
                    g0[k] = snap_discrete_laplace(g0[k], grid, scale, rng)
        accelerated_update(
            t, G, g0, draw_scales, laplace, m_div, steps, momenta, heavy_ball,
            alpha, fit_intercept, rng, W, b, W_prev, b_prev, PW, pb, path_W,
            path_b,
        )  # fmt: skip


@numba.njit(cache=True)
def evaluation_point(t, restarts, momenta, heavy_ball, W, b, W_prev, b_prev, PW, pb):
    """Write the point ``(PW, pb)`` where iteration ``t`` takes the gradient.

    Restarts (``W_prev = W``) first when ``restarts[t]``; heavy ball
    evaluates at ``W``, the Nesterov methods at ``(1 + beta) W - beta
    W_prev``.
    """
    K, d = W.shape
    if restarts[t]:
        W_prev[:, :] = W
        b_prev[:] = b
    beta = momenta[t]
    if heavy_ball:
        PW[:, :] = W
        pb[:] = b
    else:
        for k in range(K):
            for j in range(d):
                PW[k, j] = (1.0 + beta) * W[k, j] - beta * W_prev[k, j]
            pb[k] = (1.0 + beta) * b[k] - beta * b_prev[k]


@numba.njit(cache=True)
def accelerated_update(
    t, G, g0, noise_scales, laplace, m_div, steps, momenta, heavy_ball, alpha,
    fit_intercept, rng, W, b, W_prev, b_prev, PW, pb, path_W, path_b,
):  # fmt: skip
    """Noise the clipped sum ``(G, g0)`` at ``(PW, pb)`` and take iteration ``t``.

    Shared by the in-memory loop and the blocked / distributed driver
    (:mod:`dpestim._distributed`). Noise is drawn from ``rng`` in C order
    over ``W`` then ``b``; the sum is divided by ``m_div``.
    """
    K, d = W.shape
    beta = momenta[t]
    s = noise_scales[t]
    if s > 0.0:
        for k in range(K):
            for j in range(d):
                if laplace:
                    G[k, j] += rng.laplace(0.0, s)
                else:
                    G[k, j] += s * rng.standard_normal()
        if fit_intercept:
            for k in range(K):
                if laplace:
                    g0[k] += rng.laplace(0.0, s)
                else:
                    g0[k] += s * rng.standard_normal()
    lr = steps[t]
    for k in range(K):
        for j in range(d):
            g = G[k, j] / m_div + alpha * PW[k, j]
            new = PW[k, j] - lr * g
            if heavy_ball:
                new += beta * (W[k, j] - W_prev[k, j])
            W_prev[k, j] = W[k, j]
            W[k, j] = new
        new0 = pb[k]
        if fit_intercept:
            new0 -= lr * g0[k] / m_div
        if heavy_ball:
            new0 += beta * (b[k] - b_prev[k])
        b_prev[k] = b[k]
        b[k] = new0
    if path_W.shape[0] == steps.shape[0]:
        path_W[t] = W
        path_b[t] = b


def _row_norms(X, l1):
    """``||x_i||_1`` (``l1``) or ``||x_i||^2`` of every row, in float64."""
    if not l1:
        return row_sq_norms(X)  # computed once per fit, see dpestim.utils._rows
    if sp.issparse(X):
        data = np.abs(np.asarray(X.data, dtype=np.float64))
        Y = sp.csr_matrix((data, X.indices, X.indptr), shape=X.shape)
        return np.asarray(Y.sum(axis=1), dtype=np.float64).ravel()
    return np.abs(X).sum(axis=1, dtype=np.float64)


# -- solvers ----------------------------------------------------------------------


class _ByNoise:
    """Class metadata that depends on the ``noise`` parameter of an instance.

    On the class it gives the value of the default (Laplace) mechanism; on an
    instance, the value for its ``noise``: ``privacy_notion`` is ``"pure"``
    (delta = 0 allowed) for Laplace and ``"approx"`` for Gaussian;
    ``neighbouring`` is ``"replace_one"`` (the paper's relation) for Laplace
    and ``"add_or_remove_one"`` for Gaussian.
    """

    def __init__(self, laplace, gaussian):
        self.laplace, self.gaussian = laplace, gaussian

    def __get__(self, obj, cls=None):
        if obj is None or obj._laplace():
            return self.laplace
        return self.gaussian


class AcceleratedSolver(BaseSolver):
    """Shared machinery of dp-gd, dp-hb, dp-nag, dp-masg and the "-opt" variants.

    Not registered itself; see the subclasses. Parameters are documented on
    each subclass.
    """

    supported_losses = frozenset(
        {"logistic", "squared", "squared_hinge", "multinomial"}
    )
    accepts_float32 = True  # the kernels gather rows into float64 blocks
    heavy_ball = False
    optimise_budget = False

    _parameter_constraints = {
        "noise": [StrOptions({"laplace", "gaussian", "discrete_laplace"})],
        "batch_size": [Interval(Integral, 1, None, closed="left"), None],
        "smoothness": [Interval(Real, 0, None, closed="neither"), None],
        "strong_convexity": [Interval(Real, 0, None, closed="left"), None],
        "step_scale": [Interval(Real, 0, None, closed="neither")],
        # A data-independent start; beyond this the iterates (and the scores
        # x . coef of any record) are astronomical.
        "coef_init": [Interval(Real, -1e6, 1e6, closed="both")],
        "store_path": ["boolean"],
    }

    def __init__(
        self,
        *,
        noise="laplace",
        batch_size=None,
        smoothness=None,
        strong_convexity=None,
        step_scale=1.0,
        coef_init=0.0,
        store_path=False,
    ):
        self.noise = noise
        self.batch_size = batch_size
        self.smoothness = smoothness
        self.strong_convexity = strong_convexity
        self.step_scale = step_scale
        self.coef_init = coef_init
        self.store_path = store_path

    # -- privacy metadata ----------------------------------------------------------

    privacy_notion = _ByNoise("pure", "approx")
    neighbouring = _ByNoise("replace_one", "add_or_remove_one")
    #: Dask / out-of-core X: Gaussian only (Poisson sampling, L2 clipping).
    supports_blocked_data = _ByNoise(False, True)

    def _laplace(self):
        if self.noise not in ("laplace", "gaussian", "discrete_laplace"):
            raise ValueError(
                "noise must be 'laplace', 'gaussian' or 'discrete_laplace', got "
                f"{self.noise!r}."
            )
        return self.noise != "gaussian"

    def _exact_grids(self, nms, plan):
        """Per-step grid and integer scale of ``noise="discrete_laplace"``."""
        if self.noise != "discrete_laplace":
            return _EMPTY_F, _EMPTY_T
        grids, scales = np.zeros(len(nms)), np.ones(len(nms), dtype=np.int64)
        d, m = self._n_noisy(plan), self._batch(plan)
        for t, nm in enumerate(nms):
            if nm > 0:
                grids[t], scales[t] = discrete_laplace_grid(
                    nm * 2.0 * plan.clip_norm, nm, d, m
                )
        return grids, scales

    def guarantee_delta(self, delta):
        """Delta of the reported guarantee: 0 for the Laplace mechanism."""
        return 0.0 if self._laplace() else delta

    # -- public constants ----------------------------------------------------------

    def _batch(self, plan):
        m = self.batch_size
        if m is None:
            return plan.n_samples
        if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 1:
            raise ValueError(f"batch_size must be None or an int >= 1, got {m!r}.")
        return min(int(m), plan.n_samples)

    def _constants(self, plan):
        """``(L, mu)`` from the solver parameters or public defaults."""
        L = self.smoothness
        if L is None:
            L = 1.0 / plan.learning_rate
        if not (isinstance(L, (int, float)) and math.isfinite(L) and L > 0):
            raise ValueError(f"smoothness must be a positive finite number, got {L!r}.")
        mu = self.strong_convexity
        if mu is None:
            mu = plan.alpha
        if not (isinstance(mu, (int, float)) and math.isfinite(mu) and mu >= 0):
            raise ValueError(
                f"strong_convexity must be a finite number >= 0, got {mu!r}."
            )
        c = self.step_scale
        if not (isinstance(c, (int, float)) and math.isfinite(c) and c > 0):
            raise ValueError(f"step_scale must be a positive finite number, got {c!r}.")
        if not (
            isinstance(self.coef_init, (int, float)) and math.isfinite(self.coef_init)
        ):
            raise ValueError(
                f"coef_init must be a finite number, got {self.coef_init!r}."
            )
        return float(L), float(mu)

    def check_plan(self, plan):
        """Bounded steps, and a step size the penalty alone does not diverge at."""
        super().check_plan(plan)
        L, _ = self._constants(plan)
        step = self.step_scale / L
        if step * plan.alpha >= 2.0:
            raise ValueError(
                f"solver={self.name!r}: step size x alpha = {step:.4g} x "
                f"{plan.alpha:.4g} must be < 2 (the step is step_scale / smoothness, "
                "by default step_scale * learning_rate), else the penalty step "
                "alone diverges; lower learning_rate, step_scale or alpha."
            )

    def _needs_mu(self, mu, step):
        if mu <= 0:
            raise ValueError(
                f"solver={self.name!r} needs strong_convexity > 0 (set alpha > 0 "
                "on the estimator or strong_convexity on the solver)."
            )
        if mu * step >= 1:
            raise ValueError(
                "strong_convexity * step_scale / smoothness must be < 1; lower "
                "step_scale or strong_convexity."
            )

    def schedule(self, plan):
        """Per-iteration ``(steps, momenta, restarts, stages)`` for ``max_iter``.

        Public quantities only. Overridden by each method.
        """
        raise NotImplementedError

    # -- noise schedule ------------------------------------------------------------

    def _n_noisy(self, plan):
        return plan.n_outputs * (plan.n_features + int(plan.fit_intercept))

    def noise_schedule(self, noise_multiplier, plan):
        """``(T, per-iteration noise multipliers, per-iteration epsilons)``.

        Uniform methods: ``max_iter`` iterations of ``noise_multiplier``. For
        the "-opt" methods ``noise_multiplier`` fixes the total budget (that of
        the uniform run over ``max_iter`` iterations) and this returns the
        paper's allocation over the selected ``T*``, without the iterations
        whose share of the budget is below ``1e-16`` of the largest share
        (their noise would be ``1e16`` times larger, infinite once the share
        underflows): they are not run, never read the data and are not
        accounted; ``n_iter_`` counts the iterations run.
        Epsilons are ``None`` for the Gaussian mechanism.
        """
        kept, nms, eps = self._allocation(noise_multiplier, plan)
        return kept.shape[0], nms, eps

    def _allocation(self, noise_multiplier, plan):
        """``(indices of the iterations run in the max_iter schedule, nms, eps)``."""
        T, n, m = plan.max_iter, plan.n_samples, self._batch(plan)
        nm = float(noise_multiplier)
        laplace = self._laplace()
        if not self.optimise_budget:
            nms = np.full(T, nm)
            eps = np.full(T, _amplified(nm, n, m)) if laplace else None
            return np.arange(T), nms, eps
        E0 = self.initial_error
        if not (isinstance(E0, (int, float)) and math.isfinite(E0) and E0 > 0):
            raise ValueError(
                f"initial_error must be a positive finite number, got {E0!r}."
            )
        steps, _, _, stages = self.schedule(plan)
        L, mu = self._constants(plan)
        P, q = error_bound_terms(steps, stages, L, mu)
        d = self._n_noisy(plan)
        with np.errstate(over="ignore"):
            # numpy floats: an overflow gives inf (handled), never an exception
            if laplace:
                total = T * _amplified(nm, n, m)
                const = (
                    0.0
                    if math.isinf(total)
                    else d * (2 * np.float64(plan.clip_norm) / (n * total)) ** 2
                )
                power = 3
            else:
                R = math.inf if nm <= 0 else T / np.float64(nm) ** 2
                clip = np.float64(plan.clip_norm)
                const = 0.0 if math.isinf(R) else d * (clip / m) ** 2 / R
                power = 2
        T_star = select_n_iter(P, q, stages, E0, float(const), power)
        if not self.select_n_iter:
            T_star = T
        w = _softmax(q[:T_star] / power)
        # An iteration whose share of the budget is below 1e-16 of the largest
        # would add noise over 1e16 times larger (infinite once the share
        # underflows): its gradient carries nothing, and in float64 it breaks
        # the iterate. It is dropped: never run, never reads the data, not
        # accounted.
        kept = np.flatnonzero(w >= _MIN_SHARE * w.max())
        w = w[kept]
        if laplace:
            eps = total * w
            return kept, _laplace_multiplier(eps, n, m), eps
        with np.errstate(divide="ignore"):
            nms = np.where(np.isinf(R), 0.0, 1.0 / np.sqrt(R * w))
        return kept, nms, None

    # -- contract hooks ------------------------------------------------------------

    def event_inputs(self, plan):
        if self.optimise_budget:
            return plan  # T* and the allocation use the whole public plan
        return (plan.n_samples, plan.max_iter)

    def n_steps(self, plan):
        """Planned number of iterations ``max_iter`` (an upper bound for "-opt")."""
        return plan.max_iter

    def make_event(self, noise_multiplier, plan):
        T, nms, _ = self.noise_schedule(noise_multiplier, plan)
        n, m = plan.n_samples, self._batch(plan)

        def step(s):
            if math.isinf(s):
                return NoOpDpEvent()  # infinite noise: releases nothing
            if self._laplace():
                e = LaplaceDpEvent(float(s))
                return e if m >= n else SampledWithoutReplacementDpEvent(n, m, e)
            e = GaussianDpEvent(float(s))
            return e if m >= n else PoissonSampledDpEvent(m / n, e)

        if not self.optimise_budget:
            return SelfComposedDpEvent(step(noise_multiplier), T)
        return ComposedDpEvent([step(s) for s in nms])

    def calibrate(self, epsilon, delta, plan, *, accountant):
        if not self._laplace():
            return super().calibrate(epsilon, delta, plan, accountant=accountant)
        n, m, T = plan.n_samples, self._batch(plan), plan.max_iter
        nm = float(_laplace_multiplier(epsilon / T, n, m))
        # Closed form up to rounding: never report more than the target. The
        # relative step doubles, so the loop ends within a few iterations.
        step = 1e-15
        for _ in range(60):
            if pure_epsilon(self.make_event(nm, plan)) <= epsilon:
                return nm
            nm *= 1.0 + step
            step *= 2.0
        raise ValueError(
            f"could not calibrate the Laplace noise of solver={self.name!r} to "
            f"epsilon={epsilon!r}; choose a smaller epsilon."
        )

    def spent_epsilon(self, event, delta, *, accountant):
        if self._laplace():
            return pure_epsilon(event)
        return super().spent_epsilon(event, delta, accountant=accountant)

    def mechanism(self, plan):
        if self._laplace():
            return (
                "Laplace noise (pure epsilon-DP, delta = 0) of scale noise "
                "multiplier x 2 x clip_norm on the sum of per-example gradients "
                f"clipped to L1 norm {plan.clip_norm:g} (coefficients and intercept "
                "together); 2 x clip_norm is the L1 sensitivity under replacement"
            )
        return (
            "Gaussian noise on the sum of per-example gradients clipped to L2 "
            f"norm {plan.clip_norm:g} (coefficients and intercept together)"
        )

    def added_noise(self, noise_multiplier, plan):
        laplace = self._laplace()
        kind, what = ("Laplace", "scale") if laplace else ("Gaussian", "std")
        if self.noise == "discrete_laplace":
            kind = (
                "exact discrete Laplace on a power-of-two grid (scale about 0.1% "
                "above the continuous one, see dpestim.privacy.discrete)"
            )
        unit = (2.0 if laplace else 1.0) * plan.clip_norm
        unit_text = f"{'2 x ' if laplace else ''}clip norm {plan.clip_norm:.6g}"
        if not self.optimise_budget:
            return (
                f"{kind}, {what} noise multiplier {noise_multiplier:.6g} x "
                f"{unit_text} = {noise_multiplier * unit:.6g} per coordinate"
            )
        _, nms, _ = self.noise_schedule(noise_multiplier, plan)
        return (
            f"{kind}, per-iteration {what} iteration_noise_multipliers_[t] x "
            f"{unit_text}: {nms[0] * unit:.6g} per coordinate at the first "
            f"iteration, {nms[-1] * unit:.6g} at the last"
        )

    def accounting(self, accountant):
        if self._laplace():
            return (
                "closed form (pure epsilon-DP: amplification by sampling "
                "without replacement, basic composition; not dp_accounting)"
            )
        return super().accounting(accountant)

    def sampling(self, plan):
        n, m = plan.n_samples, self._batch(plan)
        if m >= n:
            return "full batch (every record in every iteration)"
        if self._laplace():
            return (
                f"exactly {m} of {n} records drawn uniformly without replacement, "
                "independently in every iteration"
            )
        return (
            f"Poisson, each record independently with probability q={m / n:.6g} "
            f"(expected batch {m}) in every iteration"
        )

    def composition(self, plan):
        what = (
            "per-iteration budgets chosen by the paper's allocation, number of "
            "iterations T* (n_iter_) chosen from public quantities only, at most "
            f"{plan.max_iter}"
            if self.optimise_budget
            else f"{plan.max_iter} iterations with equal budgets"
        )
        if self._laplace():
            return (
                f"{what}; amplification by sampling without replacement "
                "log(1 + (m/n)(e^eps0 - 1)) and basic composition (sum of "
                "per-iteration epsilons, iteration_epsilons_)"
            )
        return f"{what}; composed by the accountant (dp_accounting) on the DpEvent"

    def _blocked_loop(
        self, X, Y, plan, W, b, noise_scales, laplace, sampling, m, steps,
        momenta, restarts, heavy_ball, alpha, rng, key, path_W, path_b,
    ):  # fmt: skip
        """:func:`_accelerated_loop` with the clipped sums of a ``BlockedData``."""
        if laplace:
            raise ValueError(
                f"solver={self.name!r} runs on Dask or out-of-core data only with "
                "noise='gaussian' (Poisson sampling and L2 clipping)."
            )
        n = plan.n_samples
        q = 1.0 if sampling == _FULL else m / n
        m_div = float(n) if sampling == _FULL else float(m)
        W_prev, b_prev = W.copy(), b.copy()
        PW, pb = np.empty_like(W), np.empty_like(b)
        with X.gradient_oracle(Y, plan) as clipped_sum:
            for t in range(steps.shape[0]):
                evaluation_point(
                    t, restarts, momenta, heavy_ball, W, b, W_prev, b_prev, PW, pb
                )
                G, g0 = clipped_sum(key, t, q, PW, pb)
                accelerated_update(
                    t, G, g0, noise_scales, laplace, m_div, steps, momenta,
                    heavy_ball, alpha, plan.fit_intercept, rng, W, b, W_prev,
                    b_prev, PW, pb, path_W, path_b,
                )  # fmt: skip

    def solve(self, X, Y, plan, noise_multiplier, rng):
        L, mu = self._constants(plan)
        laplace = self._laplace()
        kept, nms, eps = self._allocation(noise_multiplier, plan)
        T = kept.shape[0]
        steps, momenta, restarts, _ = self.schedule(plan)
        # a restart inside a run of dropped iterations moves to the next one run
        restarts = np.diff(np.cumsum(restarts)[kept], prepend=0) > 0
        steps, momenta = steps[kept], momenta[kept]
        n, m = plan.n_samples, self._batch(plan)
        unit = 2.0 * plan.clip_norm if laplace else plan.clip_norm
        with np.errstate(invalid="ignore"):
            sum_scales = np.where(nms > 0, nms * unit, 0.0)
        sampling = _FULL if m >= n else (_WOR if laplace else _POISSON)
        K, d = plan.n_outputs, plan.n_features
        W = np.full((K, d), float(self.coef_init))
        b = np.full(K, float(self.coef_init)) if plan.fit_intercept else np.zeros(K)
        if self.store_path:
            path_W, path_b = np.empty((T, K, d)), np.empty((T, K))
        else:
            path_W, path_b = _EMPTY_P, _EMPTY_X
        key = sampling_key(rng) if sampling == _POISSON else _EMPTY_K
        loop_args = (
            np.ascontiguousarray(sum_scales, dtype=np.float64),
            laplace,
            sampling,
            m,
            np.ascontiguousarray(steps, dtype=np.float64),
            np.ascontiguousarray(momenta, dtype=np.float64),
            np.ascontiguousarray(restarts, dtype=np.bool_),
            self.heavy_ball,
            plan.alpha,
            rng,
            key,
            path_W,
            path_b,
        )
        if getattr(X, "_dpestim_blocked", False):
            self._blocked_loop(X, Y, plan, W, b, *loop_args)
        else:
            if sp.issparse(X):
                args = (_EMPTY_X, X.data, X.indices, X.indptr, True)
            else:
                args = (X, _EMPTY_F, _EMPTY_I, _EMPTY_I, False)
            _accelerated_loop(
                *args,
                Y,
                _row_norms(X, laplace),
                plan.loss,
                W,
                b,
                plan.fit_intercept,
                plan.clip_norm,
                laplace,
                *loop_args,
                *self._exact_grids(nms, plan),
            )
        attributes = {
            "noise_scales_": sum_scales / m,
            "iteration_noise_multipliers_": np.asarray(nms, dtype=np.float64),
            "step_sizes_": np.asarray(steps, dtype=np.float64),
            "momenta_": np.asarray(momenta, dtype=np.float64),
        }
        if eps is not None:
            attributes["iteration_epsilons_"] = np.asarray(eps, dtype=np.float64)
        if self.store_path:
            attributes["coef_path_"] = path_W
            attributes["intercept_path_"] = path_b
        return SolverResult(
            coef=W,
            intercept=b,
            n_iter=T,
            dp_event=self.make_event(noise_multiplier, plan),
            noise_multiplier=noise_multiplier,
            attributes=attributes,
        )


_COMMON_DOC = """
    Parameters
    ----------
    noise : {"laplace", "gaussian", "discrete_laplace"}, default="laplace"
        ``"laplace"``: the paper's pure epsilon-DP mechanism (``delta = 0``
        allowed; the estimator's ``delta`` is ignored and reported as 0),
        ``clip_norm`` bounds the L1 norm of each per-example gradient,
        neighbouring by replacing one record. ``"gaussian"``:
        ``clip_norm`` is an L2 bound, add/remove-one neighbouring, accounted
        by ``dp_accounting`` (needs ``delta > 0``). ``"discrete_laplace"``:
        the Laplace mechanism with a guarantee that holds in floating point:
        each coordinate of the clipped-gradient sum is rounded to a
        power-of-two grid and exact discrete Laplace noise (Canonne, Kamath
        and Steinke, 2020), sampled from uniform integers only, is added;
        the scale is about 0.1% larger than ``"laplace"``'s to cover the
        rounding, and the accounting is the same (see
        :mod:`dpestim.privacy.discrete`). In-memory data only.
    batch_size : int or None, default=None
        ``None``: full batch. An int ``m < n``: exactly ``m`` records drawn
        without replacement (Laplace) or a Poisson sample of expected size
        ``m`` (Gaussian) in every iteration. The estimator's ``batch_size`` is
        not used.
    smoothness : float or None, default=None
        Public smoothness constant ``L``; the step is ``step_scale / L``.
        ``None`` means ``1 / learning_rate`` of the estimator, so that the
        step is ``step_scale * learning_rate``. Never estimate it from the
        private data.
    strong_convexity : float or None, default=None
        Public ``mu``; ``None`` means the estimator's ``alpha``.
    step_scale : float, default=1.0
        The paper's ``c``.
    coef_init : float, default=0.0
        Data-independent initial value of every coefficient (and intercept),
        in ``[-1e6, 1e6]``.
    store_path : bool, default=False
        Keep every iterate as ``coef_path_`` / ``intercept_path_`` (released
        iterates: post-processing, no extra privacy cost).
"""


class DPHB(AcceleratedSolver):
    __doc__ = (
        """Private heavy ball (``solver="dp-hb"``; paper's DP-HB / DP-SHB).

    ``x_{t+1} = x_t - step (g_t + noise_t) + beta (x_t - x_{t-1})`` with the
    gradient at ``x_t`` and ``x_{-1} = x_0``. Same noise and accounting as
    dp-gd: the momentum is post-processing.
"""
        + _COMMON_DOC
        + """    momentum : float or None, default=None
        ``beta``; ``None`` gives the paper's experimental choice ``(1 -
        sqrt(mu step)) / (1 + sqrt(mu step))``.
    """
    )

    name = "dp-hb"
    heavy_ball = True
    _parameter_constraints = {
        **AcceleratedSolver._parameter_constraints,
        "momentum": [Interval(Real, 0, 1, closed="left"), None],
    }

    def __init__(
        self,
        *,
        noise="laplace",
        batch_size=None,
        smoothness=None,
        strong_convexity=None,
        step_scale=1.0,
        momentum=None,
        coef_init=0.0,
        store_path=False,
    ):
        super().__init__(
            noise=noise,
            batch_size=batch_size,
            smoothness=smoothness,
            strong_convexity=strong_convexity,
            step_scale=step_scale,
            coef_init=coef_init,
            store_path=store_path,
        )
        self.momentum = momentum

    def schedule(self, plan):
        L, mu = self._constants(plan)
        T = plan.max_iter
        step = self.step_scale / L
        if self.momentum is None:
            self._needs_mu(mu, step)
            beta = float(_nag_momentum(step, mu))
        else:
            beta = self.momentum
            if not (isinstance(beta, (int, float)) and 0 <= beta < 1):
                raise ValueError(f"momentum must be in [0, 1), got {beta!r}.")
        return (
            np.full(T, step),
            np.full(T, float(beta)),
            np.zeros(T, dtype=bool),
            np.ones(T, dtype=np.int64),
        )


class DPNAG(AcceleratedSolver):
    __doc__ = (
        """Private Nesterov accelerated gradient (``solver="dp-nag"``).

    ``z_t = (1 + beta) x_t - beta x_{t-1}``, ``x_{t+1} = z_t - step (g(z_t) +
    noise_t)``, ``beta = (1 - sqrt(mu step)) / (1 + sqrt(mu step))``,
    ``x_{-1} = x_0``. Uniform budget ``epsilon / max_iter`` per iteration.
"""
        + _COMMON_DOC
    )

    name = "dp-nag"

    def schedule(self, plan):
        L, mu = self._constants(plan)
        T = plan.max_iter
        step = self.step_scale / L
        self._needs_mu(mu, step)
        return (
            np.full(T, step),
            np.full(T, float(_nag_momentum(step, mu))),
            np.zeros(T, dtype=bool),
            np.ones(T, dtype=np.int64),
        )


class _OptMixin:
    optimise_budget = True
    _OPT_CONSTRAINTS = {
        "initial_error": [Interval(Real, 0, None, closed="neither")],
        "select_n_iter": ["boolean"],
    }


class DPNAGOpt(_OptMixin, DPNAG):
    __doc__ = (
        """DP-NAG with the paper's budget allocation (``solver="dp-nag-opt"``).

    The per-iteration epsilons are ``eps_t = eps a_{T,t}^{1/3} / sum_j
    a_{T,j}^{1/3}`` (paper Prop. 4.2; they sum to ``eps``), so noise is larger
    early, and the number of iterations ``T*`` (``n_iter_``, at most
    ``max_iter``) minimises the error bound (32) given the public guess
    ``initial_error`` of ``F(x_0) - F*``. With mini-batches the epsilons are
    kept and the noise inverted exactly through the amplification formula.
    With ``noise="gaussian"`` the analogous allocation ``sigma_t propto
    a_t^{-1/4}`` keeps the total zero-concentrated budget of the uniform run.
"""
        + _COMMON_DOC
        + """    initial_error : float, default=10.0
        Public guess ``E0`` of the initial suboptimality (never computed from
        the data).
    select_n_iter : bool, default=True
        Choose ``T*``; ``False`` runs ``max_iter`` iterations.
    """
    )

    name = "dp-nag-opt"
    _parameter_constraints = {
        **DPNAG._parameter_constraints,
        **_OptMixin._OPT_CONSTRAINTS,
    }

    def __init__(
        self,
        *,
        noise="laplace",
        batch_size=None,
        smoothness=None,
        strong_convexity=None,
        step_scale=1.0,
        coef_init=0.0,
        initial_error=10.0,
        select_n_iter=True,
        store_path=False,
    ):
        super().__init__(
            noise=noise,
            batch_size=batch_size,
            smoothness=smoothness,
            strong_convexity=strong_convexity,
            step_scale=step_scale,
            coef_init=coef_init,
            store_path=store_path,
        )
        self.initial_error = initial_error
        self.select_n_iter = select_n_iter


class DPMASG(AcceleratedSolver):
    __doc__ = (
        """Private multi-stage accelerated method (``solver="dp-masg"``).

    Nesterov steps in stages (:func:`masg_schedule`): stage 1 of ``n1``
    iterations with step ``c / L``, then stages of ``2^k C`` iterations with
    step ``c / (4^k L)``; momentum ``(1 - sqrt(mu step)) / (1 + sqrt(mu
    step))`` and a restart (``x_prev = x``) at each stage start.
"""
        + _COMMON_DOC
        + """    masg_n1 : int or None, default=None
        Length of stage 1; ``None``: ``ceil(2 sqrt(kappa) ln sqrt(kappa))``.
    """
    )

    name = "dp-masg"
    _parameter_constraints = {
        **AcceleratedSolver._parameter_constraints,
        "masg_n1": [Interval(Integral, 1, None, closed="left"), None],
    }

    def __init__(
        self,
        *,
        noise="laplace",
        batch_size=None,
        smoothness=None,
        strong_convexity=None,
        step_scale=1.0,
        masg_n1=None,
        coef_init=0.0,
        store_path=False,
    ):
        super().__init__(
            noise=noise,
            batch_size=batch_size,
            smoothness=smoothness,
            strong_convexity=strong_convexity,
            step_scale=step_scale,
            coef_init=coef_init,
            store_path=store_path,
        )
        self.masg_n1 = masg_n1

    def schedule(self, plan):
        L, mu = self._constants(plan)
        self._needs_mu(mu, self.step_scale / L)
        n1 = self.masg_n1
        if n1 is not None and (
            isinstance(n1, bool) or not isinstance(n1, (int, np.integer)) or n1 < 1
        ):
            raise ValueError(f"masg_n1 must be None or an int >= 1, got {n1!r}.")
        steps, stages, _, _ = masg_schedule(plan.max_iter, L, mu, self.step_scale, n1)
        restarts = np.zeros(plan.max_iter, dtype=bool)
        restarts[1:] = stages[1:] != stages[:-1]
        return steps, _nag_momentum(steps, mu), restarts, stages


class DPMASGOpt(_OptMixin, DPMASG):
    __doc__ = (
        """DP-MASG with the paper's budget allocation (``solver="dp-masg-opt"``).

    As :class:`DPNAGOpt`, with the weights ``a_{T,t}`` of the multi-stage
    bound (paper Thm 4.3, stage factors ``2^{s_T - s_t}``).
"""
        + _COMMON_DOC
        + """    masg_n1 : int or None, default=None
    initial_error : float, default=10.0
    select_n_iter : bool, default=True
    """
    )

    name = "dp-masg-opt"
    _parameter_constraints = {
        **DPMASG._parameter_constraints,
        **_OptMixin._OPT_CONSTRAINTS,
    }

    def __init__(
        self,
        *,
        noise="laplace",
        batch_size=None,
        smoothness=None,
        strong_convexity=None,
        step_scale=1.0,
        masg_n1=None,
        coef_init=0.0,
        initial_error=10.0,
        select_n_iter=True,
        store_path=False,
    ):
        super().__init__(
            noise=noise,
            batch_size=batch_size,
            smoothness=smoothness,
            strong_convexity=strong_convexity,
            step_scale=step_scale,
            masg_n1=masg_n1,
            coef_init=coef_init,
            store_path=store_path,
        )
        self.initial_error = initial_error
        self.select_n_iter = select_n_iter
