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

Class weights (``plan.class_weights``): record ``i``'s clipped gradient is
multiplied by its class's weight ``w_i in [0, 1]`` (rounding-safe: ``fl(s
w_i) <= s``, :mod:`dpestim._kernels.clipping`), so its L1 (L2 for Gaussian)
norm stays at most ``clip_norm``. Replacing ``i`` by ``i'``, whatever their
classes, moves the sum by ``w_i g_i - w_i' g_i'``: at most ``2 clip_norm`` in
L1 (``clip_norm`` in L2 for add/remove), the unweighted sensitivity, noise,
``DpEvent`` and accounting. The weights are public or a release of the class
histogram, accounted for separately by the estimator.
"""

import math
from numbers import Integral, Real

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

from ..._kernels import (
    sampling_key,
)
from ...privacy.discrete import discrete_laplace_grid
from .._policy import ITERATIVE_SCALE_SHARE_CAP, ITERATIVE_SQUARED_SHARE_CAP
from ..base import BaseSolver, SolverResult, row_weights
from ._intercept import (
    laplace_query,
    private_intercept_laplace,
    query_applies,
    run_multiplier,
    with_laplace_event,
)
from ._kernels import (
    _accelerated_loop,
    _row_norms,
    accelerated_update,
    evaluation_point,
)
from ._policy import AutoPolicyMixin
from ._report import AcceleratedReportMixin
from ._schedules import (
    _amplified,
    _laplace_multiplier,
    _softmax,
    error_bound_terms,
    masg_schedule,
    pure_epsilon,
    select_n_iter,
)

__all__ = [
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
# int32 like the index arrays of CSR input (canonicalised in validation): the
# dense and sparse calls of one kernel share one compiled signature
_EMPTY_I = np.empty(0, dtype=np.int32)
_EMPTY_X = np.empty((0, 0))
_EMPTY_P = np.empty((0, 0, 0))
_EMPTY_K = np.zeros(2, dtype=np.uint64)
_EMPTY_T = np.empty(0, dtype=np.int64)


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


class _Float32UnlessExact:
    """``accepts_float32``: true, except on an instance with
    ``noise="discrete_laplace"``, whose floating-point sensitivity bound
    (:mod:`dpestim.privacy.discrete`) is derived for float64 sums; that mode
    gets float64 ``X`` (a copy of float32 input)."""

    def __get__(self, obj, cls=None):
        return obj is None or obj.noise != "discrete_laplace"


class AcceleratedSolver(AcceleratedReportMixin, AutoPolicyMixin, BaseSolver):
    """Shared machinery of dp-gd, dp-hb, dp-nag, dp-masg and the "-opt" variants.

    Not registered itself; see the subclasses. Parameters are documented on
    each subclass.
    """

    supported_losses = frozenset(
        {"logistic", "squared", "squared_hinge", "multinomial"}
    )
    #: dense float32 computed in float32 (sgemm), CSR in float64; not with
    #: noise="discrete_laplace" (float64 sums, see _Float32UnlessExact)
    accepts_float32 = _Float32UnlessExact()
    heavy_ball = False
    optimise_budget = False
    #: the intercept starts at the plan's intercept_init when it is set
    supports_initial_point = True
    #: clipped gradients times plan.class_weights (<= 1; see the module)
    supports_class_weight = True
    #: small n: the private row scale may take up to this share of epsilon
    scale_share_cap = ITERATIVE_SCALE_SHARE_CAP
    squared_share_cap = ITERATIVE_SQUARED_SHARE_CAP
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
        "final_intercept": ["boolean"],
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
        final_intercept=True,
    ):
        self.noise = noise
        self.batch_size = batch_size
        self.smoothness = smoothness
        self.strong_convexity = strong_convexity
        self.step_scale = step_scale
        self.coef_init = coef_init
        self.store_path = store_path
        self.final_intercept = final_intercept

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
            # the "auto" rule's floor (private momentum plans; 0 otherwise)
            mu = max(plan.alpha, self._auto_mu)
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

    def _query(self, noise_multiplier, plan):
        """``nm_b`` of the final Laplace intercept query, or ``None`` (see
        :mod:`~dpestim.solvers.accelerated._intercept`)."""
        return laplace_query(
            self, plan, noise_multiplier, plan.max_iter, self._batch(plan)
        )

    def event_inputs(self, plan):
        if self.optimise_budget:
            return plan  # T* and the allocation use the whole public plan
        query = query_applies(self, plan)  # the final query's inputs
        return (
            plan.n_samples,
            plan.max_iter,
            query,
            plan.target_bound if query else None,
        )

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
            event = SelfComposedDpEvent(step(noise_multiplier), T)
        else:
            event = ComposedDpEvent([step(s) for s in nms])
        return with_laplace_event(event, self._query(noise_multiplier, plan))

    def calibrate(self, epsilon, delta, plan, *, accountant):
        if not self._laplace():
            return super().calibrate(epsilon, delta, plan, accountant=accountant)
        m, T = self._batch(plan), plan.max_iter
        nm = run_multiplier(self, plan, epsilon, T, m)
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
        if plan.intercept_init is not None and plan.fit_intercept:
            # the class prior (post-processing of a DP release) replaces coef_init
            b = self.initial_point(plan)[1]
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
        weights = row_weights(plan, Y)
        if getattr(X, "_dpestim_blocked", False):
            if weights is not None:  # refused by the estimator before
                raise ValueError("class_weight is not supported on blocked X.")
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
                _EMPTY_F if weights is None else weights,
            )
            b = private_intercept_laplace(
                X, Y, W, b, plan, self._query(noise_multiplier, plan), rng
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
