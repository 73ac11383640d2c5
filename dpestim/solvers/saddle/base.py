"""Private saddle-point solvers by entropic mirror descent with vertex sampling.

González, Guzmán and Paquette, *Mirror Descent Algorithms with Nearly
Dimension-Independent Rates for Differentially-Private Stochastic
Saddle-Point Problems* (spec ``001_saddle_point.md``).

There is no added noise: drawing a vertex from an entropic mirror-descent
iterate ``softmax(h)`` is an exponential mechanism whose score is the
cumulative gradient, and the step size ``tau`` is the privacy knob. One
example changes a batch-mean gradient coordinate by at most ``2 L0 / B``, so
every vertex sample is ``eps0 = 4 tau L0 / B``-DP (replace-one neighbouring).
The ``m`` samples compose by the fully adaptive advanced composition of
Whitehouse et al. (2023), whose exact filter ``sqrt(2 ln(1/delta) m eps0^2) +
m eps0^2 / 2 <= epsilon`` is solved in closed form (spec section 4.3).
``dp_accounting`` has no event for a generic pure-DP exponential mechanism nor
this composition theorem, so the closed form is implemented here
(:func:`composed_epsilon`, :func:`per_sample_epsilon`); events are described by
:class:`ExponentialMechanismDpEvent` for the record.
"""

import math
from numbers import Integral, Real

import numpy as np
from dp_accounting import (
    NonPrivateDpEvent,
    SelfComposedDpEvent,
)
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval, StrOptions

from . import _kernels as _k
from ._accounting import (
    ExponentialMechanismDpEvent,
    check_budget,
    composed_epsilon,
    per_sample_epsilon,
)
from ._problems import (
    BilinearGame,
    LinearSaddleProblem,
    SaddlePlan,
    SaddleResult,
)

__all__ = [
    "DPSMD",
    "DPSMDBR",
    "BaseSaddleSolver",
    "BilinearGame",
    "ExponentialMechanismDpEvent",
    "LinearSaddleProblem",
    "SaddlePlan",
    "SaddleResult",
    "composed_epsilon",
    "per_sample_epsilon",
]

#: Largest public bound on the scores ``|theta . x|`` (radius x feature bound,
#: plus the target bound for least squares): the Lipschitz constants grow
#: with its square and cube, which must stay far from float64 overflow.
MAX_SCORE_BOUND = 1e50
#: Largest number of vertex samples one fit may draw (each is a loop step).
MAX_VERTEX_SAMPLES = 10**8


# -- solvers --


def _int_or(value, default):
    return default if value is None else int(value)


class BaseSaddleSolver(BaseEstimator):
    """Base class of the saddle-point solvers (``problem = "saddle"``).

    ``resolve(epsilon, delta, plan)`` computes every run parameter from public
    quantities; ``solve(problem, plan, params, rng)`` runs and returns a
    :class:`SaddleResult`.
    """

    name = None
    problem = "saddle"
    neighbouring = "replace_one"
    privacy_notion = "approx"
    #: Constraints of the solver's parameters (see :meth:`validate_params`).
    _parameter_constraints: dict = {}

    def validate_params(self):
        """``InvalidParameterError`` naming a parameter outside its constraints.

        Called by :func:`resolve_saddle_solver`, before any data is read.
        """
        self._validate_params()

    def resolve(self, epsilon, delta, plan):
        raise NotImplementedError

    def solve(self, problem, plan, params, rng):
        raise NotImplementedError

    def mechanism(self, params):
        raise NotImplementedError

    def make_event(self, params):
        """``m`` exponential-mechanism samples, each ``eps_per_sample``-DP."""
        e0 = params["eps_per_sample"]
        if math.isinf(e0):
            return NonPrivateDpEvent()
        return SelfComposedDpEvent(
            ExponentialMechanismDpEvent(e0), params["n_mechanisms"]
        )


#: Multiplier of the utility step ``tau_u`` of dp-smd at ``epsilon = inf``
#: (a public constant: on Adult/sex the default step reached a worst-group
#: log-loss 0.575 against the l1-ball optimum 0.500; 30x reaches 0.506).
_NONPRIVATE_STEP_FACTOR = 30.0


def _bound(T, K, tau, plan):
    """Explicit gap bound of Algorithm 1 (proof of Theorem 3.1, spec 3.1)."""
    L0, L1, L2, ell = plan.lipschitz, plan.smoothness, plan.second_order, plan.log_dim
    if L2 == 0 and K == 1:
        bias = 0.0
    elif L2 > 0:
        bias = 2 * L2 / K
    else:
        bias = 2 * math.sqrt(2) * L1 / math.sqrt(K)
    return 8 * L1 * math.sqrt(ell / T) + 2 * ell / (tau * T) + 5 * tau * L0**2 + bias


class DPSMD(BaseSaddleSolver):
    """Private stochastic mirror descent with vertex sampling (Algorithm 1).

    ``solver="dp-smd"``. Single pass over disjoint batches of ``B = n // T``
    rows; per step ``K`` vertex samples of each iterate for the gradient and
    one for the output; the output is the average of the output samples.

    Privacy: each sample is ``4 tau L0 / B``-DP (exponential mechanism); the
    ``m = 2 T (K + 1)`` samples compose by the exact Whitehouse filter, which
    caps ``tau`` at ``tau_priv = eps0 B / (4 L0)``.

    Parameters
    ----------
    max_iter : int, {"auto", "theory"} or None, default=None
        Number of steps ``T``. ``"theory"`` is Theorem 3.1's ``T`` for the
        regime (``min(n, n eps / sqrt(ell Lg))`` when ``L2 = 0``,
        ``min(n, (n eps)^(4/5) / (ell^(1/5) Lg^(2/5)))`` otherwise);
        ``"auto"`` minimises the explicit gap bound of the proof of Theorem
        3.1 over a grid of ``T`` (data-independent, costs no privacy).
        ``None``: ``"auto"`` for bilinear / quadratic problems (``L2 = 0``;
        1.3-3x smaller gaps than ``"theory"`` on the spec's Experiment A) and
        ``"theory"`` otherwise (better on Experiment B). ``T = n`` when
        non-private.
    n_vertex_samples : int or None, default=None
        ``K``. ``None``: 1 for bilinear / quadratic problems (``L2 = 0``),
        otherwise 4 (the spec measured the theory ``K ~ sqrt(T / ell)`` to be
        far worse).
    step_size : float or None, default=None
        ``tau``; ``None`` uses ``min(tau_u, tau_priv)`` with the utility step
        ``tau_u = sqrt(2 ell / (5 T)) / L0`` (``30 tau_u`` at ``epsilon =
        inf``, where the worst-case ``L0`` made the non-private limit stop
        far from the optimum). A given value is capped at ``tau_priv``.
    """

    name = "dp-smd"
    _parameter_constraints = {
        "max_iter": [
            Interval(Integral, 1, None, closed="left"),
            StrOptions({"auto", "theory"}),
            None,
        ],
        "n_vertex_samples": [Interval(Integral, 1, None, closed="left"), None],
        "step_size": [Interval(Real, 0, None, closed="neither"), None],
    }

    def __init__(self, max_iter=None, n_vertex_samples=None, step_size=None):
        self.max_iter = max_iter
        self.n_vertex_samples = n_vertex_samples
        self.step_size = step_size

    def _K(self, plan):
        if self.n_vertex_samples is not None:
            K = int(self.n_vertex_samples)
            if K < 1:
                raise ValueError(f"n_vertex_samples must be >= 1, got {K}.")
            return K
        return 1 if plan.second_order == 0 else 4

    def _tau(self, T, K, epsilon, delta, plan):
        n = plan.n_samples
        B = n // T
        tau_u = math.sqrt(2 * plan.log_dim / (5 * T)) / plan.lipschitz
        eps0 = per_sample_epsilon(epsilon, delta, 2 * T * (K + 1))
        # (1 - 1e-12): 4 tau L0 / B must not round above eps0
        tau_p = eps0 * B / (4 * plan.lipschitz) * (1 - 1e-12)
        if self.step_size is not None:
            tau = float(self.step_size)
        elif math.isinf(epsilon):
            # non-private: no privacy cap, and the worst-case L0 (with its
            # 1 / pi_min factor) makes tau_u far too short for real data
            tau = _NONPRIVATE_STEP_FACTOR * tau_u
        else:
            tau = tau_u
        return min(tau, tau_p), eps0

    def _theory_T(self, epsilon, delta, plan):
        n, ell = plan.n_samples, plan.log_dim
        if math.isinf(epsilon):
            return n
        lg = math.log(1 / delta)
        if plan.second_order == 0:
            T = n * epsilon / math.sqrt(ell * lg)
        else:
            T = (n * epsilon) ** 0.8 / (ell**0.2 * lg**0.4)
        return int(max(1, min(n, T)))

    def resolve(self, epsilon, delta, plan):
        check_budget(epsilon, delta)
        n = plan.n_samples
        K = self._K(plan)
        mode = self.max_iter
        if mode is None:
            mode = "auto" if plan.second_order == 0 else "theory"
        if isinstance(mode, str):
            if mode not in ("auto", "theory"):
                raise ValueError(
                    "max_iter must be an int, 'auto' or 'theory', got "
                    f"{self.max_iter!r}."
                )
            T = self._theory_T(epsilon, delta, plan)
            if mode == "auto" and math.isfinite(epsilon):
                grid = np.unique(np.geomspace(1, n, 60).astype(int))
                T = int(
                    min(
                        grid,
                        key=lambda t: _bound(
                            t, K, self._tau(t, K, epsilon, delta, plan)[0], plan
                        ),
                    )
                )
        else:
            T = int(self.max_iter)
            if not 1 <= T <= n:
                raise ValueError(f"max_iter must be in [1, n_samples={n}], got {T}.")
        m = 2 * T * (K + 1)
        if m > MAX_VERTEX_SAMPLES:
            raise ValueError(
                f"dp-smd would draw 2 max_iter (n_vertex_samples + 1) = {m} vertex "
                f"samples; at most {MAX_VERTEX_SAMPLES} are allowed. Lower "
                "n_vertex_samples or max_iter."
            )
        tau, eps0 = self._tau(T, K, epsilon, delta, plan)
        B = n // T
        eps_sample = (
            4 * tau * plan.lipschitz / B if math.isfinite(epsilon) else math.inf
        )
        return dict(
            max_iter=T,
            n_vertex_samples=K,
            batch_size=B,
            step_size=tau,
            eps_per_sample=eps_sample,
            n_mechanisms=m,
        )

    def mechanism(self, params):
        return (
            "exponential mechanism: vertex samples of entropic mirror-descent "
            f"iterates, each {params['eps_per_sample']:.4g}-DP (4 tau L0 / B)"
        )

    def solve(self, problem, plan, params, rng):
        dx, dy = problem.dims
        cnt_x = np.zeros(dx, dtype=np.int64)
        cnt_y = np.zeros(dy, dtype=np.int64)
        T, B = params["max_iter"], params["batch_size"]
        perm = rng.permutation(plan.n_samples).astype(np.int64)
        kind, prob = problem.kernel_args()
        _k.smd_loop(
            kind, T, B, params["n_vertex_samples"], params["step_size"], perm,
            prob, dx, dy, rng, cnt_x, cnt_y,
        )  # fmt: skip
        event = self.make_event(params)
        return SaddleResult(
            x=cnt_x / T,
            y=cnt_y / T,
            n_iter=T,
            dp_event=event,
            epsilon=None,
            params=params,
        )


def br_sample_epsilon(tau, alpha, M, L0):
    """Corrected per-sample epsilon of Algorithm 3 (spec 4.3, fix A3).

    ``eps0 = 2 tau L0 max_N (4 w_N + 2) / b_N`` with ``w_N = C_M 2^N``,
    ``C_M = 2 - 2^-M`` and ``b_N = max(1, ceil(2^N / alpha))``.
    """
    C_M = 2.0 - 0.5**M
    worst = max(
        (4 * C_M * 2**N + 2) / max(1, math.ceil(2**N / alpha)) for N in range(M + 1)
    )
    return 2 * tau * L0 * worst


class DPSMDBR(BaseSaddleSolver):
    """Private SMD with bias-reduced vertex sampling (Algorithm 3).

    ``solver="dp-smd-br"``. Each step draws ``N ~ TG(1/2, M)``, takes
    ``2^(N+1)`` vertex samples of each iterate and a batch of
    ``ceil(2^N / alpha)`` fresh rows, and uses the multilevel (Blanchet-Glynn)
    gradient ``w_N (g_+ - g_-) + g_1`` with ``w_N = C_M 2^N``,
    ``C_M = 2 - 2^-M`` (fix A2). Stops once ``sum 2^N_t`` would exceed
    ``U - 2^M`` or the data runs out (data-independent).

    Privacy: the corrected sensitivity (fix A3)
    ``eps0 = 2 tau L0 max_N (4 w_N + 2) / b_N`` per sample, at most
    ``6 U`` samples, composed by the Whitehouse filter; ``U`` is the largest
    value with ``sqrt(12 Lg U eps0^2) + 3 U eps0^2 <= epsilon``.

    Parameters
    ----------
    budget_scale : float, default=1.0
        Multiplies Theorem 3.14's ``U`` before the privacy cap.
    """

    name = "dp-smd-br"
    _parameter_constraints = {
        "budget_scale": [Interval(Real, 0, None, closed="neither")],
    }

    def __init__(self, budget_scale=1.0):
        self.budget_scale = budget_scale

    def resolve(self, epsilon, delta, plan):
        check_budget(epsilon, delta)
        n, ell = plan.n_samples, plan.log_dim
        L0, L1, L2 = plan.lipschitz, plan.smoothness, plan.second_order
        private = math.isfinite(epsilon)
        lg = math.log(1 / delta) if private else 1.0
        kappa = 20.0
        M = max(1, int(math.floor(0.5 * math.log2(max(n / 2, 4)))))
        for _ in range(50):
            C = L0**2 + L2**2 + ell * M * L1**2
            if private:
                U = (
                    n
                    * epsilon
                    * math.sqrt(C)
                    / (math.sqrt(4 * 48 * kappa**2 * ell * lg) * L0)
                )
                U = min(U, n / 2)
            else:
                U = n / 2
            # every unit of U consumes at least one row (b_N >= 2^N), so a
            # budget past n + 2^M never binds: capping keeps U an int64
            U = min(max(4.0, U * float(self.budget_scale)), n + 2.0**M)
            M_new = max(1, int(math.floor(math.log2(math.sqrt(U)))))
            if M_new == M:
                break
            M = min(M, M_new)
        C = L0**2 + L2**2 + ell * M * L1**2
        tau = math.sqrt(ell / (C * U))
        if private:
            alpha = (2 * epsilon**2 / (48 * kappa**2 * lg * (tau * L0) ** 2 * n)) ** (
                1 / 3
            )
            alpha = min(alpha, 1.0)
            if not alpha * n >= 1.0:
                raise ValueError(
                    f"dp-smd-br: epsilon={epsilon!r} is too small for n_samples={n}: "
                    "one batch of ceil(1 / alpha) rows would exceed the data; raise "
                    "epsilon or use solver='dp-smd'."
                )
            eps0 = br_sample_epsilon(tau, alpha, M, L0)
            # largest U meeting the exact filter with 6 U samples
            a = 6 * eps0**2
            root = (
                -math.sqrt(2 * lg * a) + math.sqrt(2 * lg * a + 2 * a * epsilon)
            ) / a
            U = min(U, root**2)
        else:
            alpha = min(1.0, 2 * U / n)
            eps0 = math.inf
        U = int(math.floor(U))
        if U < 2**M + 1:
            raise ValueError(
                "dp-smd-br: the privacy budget leaves fewer than 2^M + 1 vertex-sample "
                "units (U); increase epsilon or n_samples, or use solver='dp-smd'."
            )
        return dict(
            budget_u=U,
            tg_max_level=M,
            alpha_batch=alpha,
            step_size=tau,
            eps_per_sample=eps0,
            n_mechanisms=6 * U,  # at most
        )

    def mechanism(self, params):
        return (
            "exponential mechanism: vertex samples of entropic mirror-descent "
            f"iterates, each {params['eps_per_sample']:.4g}-DP (corrected "
            "Algorithm 3 sensitivity), at most 6 U samples"
        )

    def solve(self, problem, plan, params, rng):
        dx, dy = problem.dims
        cnt_x = np.zeros(dx, dtype=np.int64)
        cnt_y = np.zeros(dy, dtype=np.int64)
        perm = rng.permutation(plan.n_samples).astype(np.int64)
        kind, prob = problem.kernel_args()
        steps = _k.smd_br_loop(
            kind, params["budget_u"], params["tg_max_level"], params["alpha_batch"],
            params["step_size"], perm, prob, dx, dy, rng, cnt_x, cnt_y,
        )  # fmt: skip
        if steps == 0:
            raise ValueError(
                f"dp-smd-br took no step: its first batch of ceil(2^N / alpha) rows "
                f"(alpha={params['alpha_batch']:.3g}) exceeded n_samples="
                f"{plan.n_samples}; use more data, a larger epsilon or "
                "solver='dp-smd'."
            )
        event = self.make_event(params)
        return SaddleResult(
            x=cnt_x / steps,
            y=cnt_y / steps,
            n_iter=int(steps),
            dp_event=event,
            epsilon=None,
            params=params,
        )
