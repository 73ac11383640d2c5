"""Euclidean private saddle solver: noisy SGDA with Poisson sampling.

``solver="noisy-sgda"``, the default of the minimax and fairness estimators.
Each step draws a Poisson sample (every record independently with
probability ``q``), sums the per-example *joint* gradients ``(d theta, d u)``
clipped together to L2 norm ``clip_norm`` (:mod:`._sgda_kernels`), adds
``N(0, (noise_multiplier clip_norm)^2)`` to every coordinate, and takes a
gradient step in ``theta`` and a projected ascent step in the dual ``u``.

Privacy: adding or removing one record changes the pair of clipped sums by
at most ``clip_norm`` in L2 norm, so one step is the Poisson-subsampled
Gaussian mechanism and ``T`` steps are
``SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(sigma)), T)``,
accounted by ``dp_accounting`` (RDP) under add/remove-one neighbouring, with
``n`` public (it sets ``q``, the step count and the division by ``q n``).
When the estimator first releases private group proportions, their event
is composed with this one *before* calibration, so the whole fit meets
``(epsilon, delta)``. The dual state and per-example quantities are never
released; the output is the average of the iterates after a public burn-in.

Every hyperparameter left at ``"auto"`` is resolved in :meth:`NoisySGDA.resolve`
from the public plan only (``n``, dimensions, ``epsilon``, ``delta``).
"""

import math
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from dp_accounting import (
    ComposedDpEvent,
    GaussianDpEvent,
    NonPrivateDpEvent,
    PoissonSampledDpEvent,
    SelfComposedDpEvent,
)
from sklearn.utils._param_validation import Interval, StrOptions

from ..._kernels.counter_sampling import sampling_key
from .. import _policy
from . import _sgda_kernels as _k
from .base import BaseSaddleSolver, SaddleResult

__all__ = ["LagrangianProblem", "NoisySGDA", "SGDAPlan"]

#: Fewest steps of the "auto" policy: the game needs steps more than epochs
#: (on COMPAS, 4,320 rows, 170 steps left the fairness multipliers far from
#: equilibrium at any epsilon).
_MIN_STEPS = 1000


@dataclass(frozen=True)
class SGDAPlan:
    """Public quantities of one ``noisy-sgda`` fit.

    Attributes
    ----------
    n_samples : int
        Public (add/remove neighbouring with ``n`` public, as dp-sgd).
    n_features : int
        Length of ``theta`` (intercept column included).
    n_dual : int
        Length of the dual variable.
    prior_event : DpEvent or None
        Event of what the estimator released before the solver from the same
        data (private group proportions); composed before calibration.
    smoothness : float or None
        Non-private fits (``epsilon = inf``) only: the mean squared norm of
        the clipped rows times the loss's curvature (1 squared, 1/4
        logistic), read from the data, which a non-private fit may do. The
        ``"auto"`` learning rate is then at most ``2 / smoothness``: the
        largest curvature of the mean loss is at most ``smoothness`` (the
        trace bounds the largest eigenvalue), below it unless every row is
        parallel, so the step stays under the gradient step's bound of
        stability ``2 / curvature`` (0.5 is kept where it is already
        smaller: California's ``MinimaxRegressor`` and Adult's classifiers
        keep it). The unclipped steps of 0.5 diverged on rows of norm about
        3 (Adult's one-hot rows under ``MinimaxRegressor``: squared loss,
        smoothness about 9). ``None`` for private fits.
    """

    n_samples: int
    n_features: int
    n_dual: int
    prior_event: object = None
    smoothness: float | None = None


@dataclass
class LagrangianProblem:
    """Data of a linear Lagrangian problem (see :mod:`._sgda_kernels`).

    ``X`` is clipped (intercept column included), ``cells`` are int64 cell
    indices into the rows of the public matrix ``M``. ``dual_kind`` and
    ``props`` / ``bound`` / ``slack`` define the dual set: group weights on
    ``{w >= 0, props . w = 1}`` (``DUAL_WEIGHTS``) or multipliers in
    ``[-bound, bound]`` with slack term ``- sum_k slack_k |u_k|``
    (``DUAL_BOX``); ``dual_init`` the starting dual point.
    """

    X: np.ndarray
    target: np.ndarray
    cells: np.ndarray
    kind: int
    loss: int
    M: np.ndarray
    dual_kind: int
    props: np.ndarray
    bound: float
    slack: np.ndarray
    dual_init: np.ndarray


#: Noise-to-signal ratio of one step above which the primal step shrinks
#: (``_damped_step``). Chosen on two 1,000-row tasks at epsilon 1 (see there).
SADDLE_NOISE_TO_SIGNAL = 0.3


def _damped_step(rate, sigma, plan, batch_size):
    """The primal step, shrunk like dp-sgd's when a step's noise dominates.

    Public (the noise multiplier, ``n``, the plan's coordinates, the batch):
    the ratio is ``sigma sqrt(min(p + 1, n)) / B`` with ``p`` =
    ``plan.n_features`` (the intercept's column included), and the step
    ``rate min(1, (r0 / ratio)^2)`` with ``r0`` = :data:`SADDLE_NOISE_TO_SIGNAL`
    (:func:`~dpestim.solvers._policy.noise_damped_rate`,
    :func:`~dpestim.solvers._policy.damping_dimension`). The fixed 0.5 was
    read off Adult (30,000 rows; the ratio there is 0.10 at epsilon 1 and
    COMPAS's 0.18 at 0.5: no change); at 1,000 rows ``MinimaxRegressor`` at
    epsilon 1 needed a step of 0.02-0.1 (Adult's age -8.9 at 0.5, 0.28 at
    0.02; California 0.25 / 0.51 at 0.1: the two derivation cells). With
    the rule (``benchmarks/utility/minimax_target_range.py``, 3 seeds),
    epsilon 1: Adult's age 1,000 rows -8.9 -> 0.32, California 0.25 -> 0.50,
    Bank's age (held out) -5.3 -> 0.24; every other cell of that table
    better or equal.
    """
    D = _policy.damping_dimension(plan.n_features + 1, plan.n_samples)
    ratio = sigma * math.sqrt(D) / max(int(batch_size), 1)
    return _policy.noise_damped_rate(rate, ratio, SADDLE_NOISE_TO_SIGNAL)


class NoisySGDA(BaseSaddleSolver):
    """Noisy stochastic gradient descent-ascent (Euclidean, Gaussian).

    Parameters
    ----------
    max_iter : int or "auto", default="auto"
        Number of epochs, ``T = ceil(max_iter / q)`` steps. ``"auto"``: 10
        epochs (the dp-sgd default) when private, 30 at ``epsilon = inf``
        (more steps cost no privacy there), and at least 1000 steps.
    batch_size : int or "auto", default="auto"
        Expected Poisson batch size ``q n``; ``"auto"``: ``max(min(256, n //
        64), round(sqrt(n)))`` capped at ``n`` (256 on Adult, 67 on COMPAS,
        1000 at a million rows).
    clip_norm : float or "auto", default="auto"
        L2 bound on the joint per-example gradient; ``"auto"``: 3 for group
        weights (worst-group problems: a record's primal gradient is scaled
        by its group's weight, about ``1 / p_g``), 2 for fairness multipliers,
        and no clipping (``inf``) at ``epsilon = inf``, so that the
        non-private limit solves the unclipped problem. (Chosen on Adult at
        epsilon = 1 among {1, 2, 3, 5}; a fixed public constant.)
    learning_rate : float or "auto", default="auto"
        Primal step; ``"auto"``: 0.5, shrunk when a step's noise dominates its
        signal (small ``n``; see ``_damped_step``).
    dual_learning_rate : float or "auto", default="auto"
        Dual step; ``"auto"``: 2 for group weights, 3 for multipliers (the
        dual gradients are sums over a group, of order ``p_g``).
    alpha : float, default=1e-4
        L2 penalty ``alpha / 2 ||theta||^2`` on the primal.
    burn_in : float, default=0.5
        Fraction of the steps before iterates enter the released average.
    """

    name = "noisy-sgda"
    neighbouring = "add_or_remove_one"

    _parameter_constraints = {
        "max_iter": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "batch_size": [
            Interval(Integral, 1, None, closed="left"),
            StrOptions({"auto"}),
        ],
        "clip_norm": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "learning_rate": [
            Interval(Real, 0, None, closed="neither"),
            StrOptions({"auto"}),
        ],
        "dual_learning_rate": [
            Interval(Real, 0, None, closed="neither"),
            StrOptions({"auto"}),
        ],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "burn_in": [Interval(Real, 0, 1, closed="left")],
    }

    def __init__(
        self,
        max_iter="auto",
        batch_size="auto",
        clip_norm="auto",
        learning_rate="auto",
        dual_learning_rate="auto",
        alpha=1e-4,
        burn_in=0.5,
    ):
        self.max_iter = max_iter
        self.batch_size = batch_size
        self.clip_norm = clip_norm
        self.learning_rate = learning_rate
        self.dual_learning_rate = dual_learning_rate
        self.alpha = alpha
        self.burn_in = burn_in

    # -- public-quantity policy ------------------------------------------------

    def resolve_auto(self, plan, dual_kind, private=True):
        """Hyperparameters from the public plan only (no data values)."""
        n = plan.n_samples
        B = self.batch_size
        if B == "auto":
            B = max(min(256, n // 64), int(round(math.sqrt(n))), 1)
        B = int(min(B, n))
        q = B / n
        epochs = self.max_iter
        if epochs == "auto":
            epochs = 10 if private else 30
            T = max(_MIN_STEPS, int(math.ceil(epochs / q)))
        else:
            T = max(1, int(math.ceil(epochs / q)))
        weights = dual_kind == _k.DUAL_WEIGHTS
        clip = self.clip_norm
        if clip == "auto":
            clip = (3.0 if weights else 2.0) if private else math.inf
        lr = 0.5 if self.learning_rate == "auto" else float(self.learning_rate)
        if self.learning_rate == "auto" and not private and plan.smoothness:
            lr = min(lr, 2.0 / float(plan.smoothness))  # unclipped: stable
        lr_y = self.dual_learning_rate
        if lr_y == "auto":
            lr_y = 2.0 if weights else 3.0
        return dict(
            max_iter=T,
            batch_size=B,
            sampling_prob=q,
            clip_norm=clip,
            learning_rate=lr,
            dual_learning_rate=float(lr_y),
            alpha=float(self.alpha),
            burn_in=int(self.burn_in * T),
        )

    def _event(self, sigma, q, T, prior):
        if sigma == 0:
            return NonPrivateDpEvent()
        step = GaussianDpEvent(sigma)
        if q < 1.0:
            step = PoissonSampledDpEvent(q, step)
        event = SelfComposedDpEvent(step, T)
        if prior is not None:
            event = ComposedDpEvent([prior, event])
        return event

    def resolve(self, epsilon, delta, plan, dual_kind=_k.DUAL_WEIGHTS):
        """All run parameters, the noise multiplier calibrated by dp_accounting."""
        from ...privacy import calibrate_noise

        self._validate_params()  # before any data is read
        params = self.resolve_auto(plan, dual_kind, math.isfinite(epsilon))
        sigma = 0.0
        if math.isfinite(epsilon):
            q, T, prior = params["sampling_prob"], params["max_iter"], plan.prior_event
            sigma = calibrate_noise(
                lambda s: self._event(s, q, T, prior),
                epsilon,
                delta,
                neighbouring=self.neighbouring,
                cache_key=("noisy-sgda", q, T, repr(prior)),
            )
        params["noise_multiplier"] = sigma
        if self.learning_rate == "auto" and sigma > 0:
            params["learning_rate"] = _damped_step(
                params["learning_rate"], sigma, plan, params["batch_size"]
            )
        return params

    def make_event(self, params, plan=None):
        prior = None if plan is None else plan.prior_event
        return self._event(
            params["noise_multiplier"], params["sampling_prob"], params["max_iter"],
            prior,
        )  # fmt: skip

    def mechanism(self, params):
        return (
            "Gaussian noise on the sum of jointly clipped per-example (primal, "
            "dual) gradients"
        )

    def sampling(self, params):
        q = params["sampling_prob"]
        if q >= 1.0:
            return "full batch (every record in every step)"
        return f"Poisson, each record independently with probability q={q:.6g}"

    def solve(self, problem, plan, params, rng):
        X = np.ascontiguousarray(problem.X, dtype=np.float64)
        d, m = X.shape[1], problem.M.shape[1]
        theta = np.zeros(d)
        dual = np.array(problem.dual_init, dtype=np.float64)
        theta_avg, dual_avg = np.zeros(d), np.zeros(m)
        clip = params["clip_norm"]
        sigma = params["noise_multiplier"]
        lr_y = params["dual_learning_rate"]
        q = float(params["sampling_prob"])
        key = sampling_key(rng) if q < 1.0 else np.zeros(2, dtype=np.uint64)
        _k.sgda_loop(
            X, np.ascontiguousarray(problem.target, dtype=np.float64),
            np.ascontiguousarray(problem.cells, dtype=np.int64), int(problem.kind),
            int(problem.loss), np.ascontiguousarray(problem.M, dtype=np.float64),
            np.einsum("ij,ij->i", X, X), int(params["max_iter"]),
            float(params["sampling_prob"]), float(clip), float(sigma * clip),
            float(params["learning_rate"]), lr_y, float(params["alpha"]),
            int(problem.dual_kind), np.ascontiguousarray(problem.props, dtype=float),
            float(problem.bound), lr_y * np.asarray(problem.slack, dtype=float),
            int(params["burn_in"]), key, rng, theta, dual, theta_avg, dual_avg,
        )  # fmt: skip
        return SaddleResult(
            x=theta_avg,
            y=dual_avg,
            n_iter=int(params["max_iter"]),
            dp_event=self.make_event(params, plan),
            epsilon=None,
            params=params,
        )
