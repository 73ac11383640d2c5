"""DP-SCD and seqDP-SCD (Damaskinos et al., AAAI 2021): private dual coordinate descent.

Stochastic dual coordinate descent on ``mean_i loss_i(x_i . theta) + alpha / 2
||theta||^2``. Each step Poisson-samples a batch ``B`` of examples (expected
size ``L``); every dual coordinate ``j`` in ``B`` takes the exact (squared,
hinge, squared hinge) or one-Newton-step (logistic) minimiser ``zeta_j`` of the
CoCoA+ subproblem with curvature factor ``sigma' = L``, clipped to
``|zeta_j| <= C / max(1, ||x_j||)``; the shared vector ``v = sum_j alpha_j x_j``
moves by ``sum_j zeta_j x_j``, and Gaussian noise is added to ``v`` (all
coordinates) and to ``alpha_B``. The released model is ``theta = v / (alpha
n)``, never the dual variables: they stay local to :func:`_dual_run` and are
dropped when it returns.

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
loss_i*(-alpha_i / c_i)`` (boxes ``[0, c_i]``, :func:`dual_step`) and the same
``theta = v / (alpha n)``. The argument above does not use the form of the
update: record ``j``'s is a function of its own record (hence ``c_j``; the
class weights are public or a separately accounted release), its own dual
variable and the released ``v``, clipped after it is computed (to ``c_j C``,
at most ``C``). So neither the sensitivity ``C`` nor the event changes (nor
seq's bound).

Layout: in the paper's notation the data matrix is ``X^T`` (features x
examples) and a coordinate is one of its *columns*. The kernels below work on
columns of ``X^T``: an F-ordered dense array (the transpose of scikit-learn's
C-ordered ``X``, no copy) or a CSC matrix (the transpose of a CSR ``X``, the
same three arrays). So each coordinate update reads one contiguous example.
"""

import math
from dataclasses import replace

import numba
import numpy as np
import scipy.sparse as sp
from dp_accounting import GaussianDpEvent, PoissonSampledDpEvent, SelfComposedDpEvent
from sklearn.utils._param_validation import StrOptions

from ..._kernels import poisson_sample
from ..._kernels.clipping import _safe_limit
from ...losses import HINGE, LOGISTIC, MULTINOMIAL, SQUARED, SQUARED_HINGE
from ...utils._progress import current_progress
from .. import _policy
from ..base import BaseSolver, SolverResult, row_weights
from ..sgd.dp_sgd import DPSGD
from . import _policy as _coordinate_policy

__all__ = ["DPSCD"]

#: Box margin of the logistic dual variable, ``y alpha in [beta, 1 - beta]``.
LOGISTIC_BOX = 1e-4

_EMPTY_F = np.empty(0)
_EMPTY_I = np.empty(0, dtype=np.int32)
# F-ordered like the dense ``X.T`` (numba types an empty or 1 x 1 array as
# C-ordered, which would compile a second set of kernels); never read
_EMPTY_XT = np.zeros((2, 2), order="F")


@numba.njit(cache=True)
def dual_step(loss, y, a, m, s, c):
    """Unclipped minimiser ``zeta`` of one coordinate's dual subproblem.

    The coordinate's loss is ``c loss(.)`` (``class_weight``, ``c`` in
    ``[0, 1]``; 1 without weights); its dual term is the conjugate ``c
    loss*(-a / c)``: the box of the margin losses becomes ``y a in [0, c]``
    (hinge; ``[c beta, c (1 - beta)]`` logistic) and the quadratic terms of
    the squared losses are divided by ``c``. With ``c = 1`` the arithmetic is
    exactly the unweighted one (every product or quotient by ``c`` is exact).

    Parameters
    ----------
    loss : int
        Loss code (squared, logistic, hinge or squared hinge).
    y : float
        Target (real, or +-1 for the margin losses).
    a : float
        Current dual variable of the coordinate.
    m : float
        Current prediction ``x_j . v / (alpha n)``.
    s : float
        Curvature ``sigma' ||x_j||^2 / (alpha n)`` (positive).
    c : float
        Weight of the coordinate's loss, in ``[0, 1]``.

    Returns
    -------
    zeta : float
        Squared: ``(c (y - m) - a) / (1 + c s)``. Hinge: exact box-constrained
        minimiser, ``y alpha_new`` in [0, c]. Squared hinge:
        ``(c (y - m) - a / 2) / (1 / 2 + c s)``, then ``y alpha_new >= 0``.
        Logistic: one Newton step from the projection of ``a`` on ``y alpha in
        [c beta, c (1 - beta)]``, the result projected again (``c = 0``: the
        box is ``{0}``). ``zeta = alpha_new - a`` is measured from the stored
        ``a``.
    """
    if loss == SQUARED:
        return (c * (y - m) - a) / (1.0 + c * s)
    if loss == HINGE:
        b = y * a + (1.0 - y * m) / s
        return y * min(c, max(0.0, b)) - a
    if loss == SQUARED_HINGE:
        z = (c * (y - m) - 0.5 * a) / (0.5 + c * s)
        return y * max(0.0, y * (a + z)) - a
    # logistic, in b = y alpha / c (the weighted entropy c phi(b))
    if c <= 0.0:
        return -a
    beta = LOGISTIC_BOX
    b = min(1.0 - beta, max(beta, y * a / c))
    g = y * (math.log(b) - math.log1p(-b)) + m
    h = 1.0 / (c * b * (1.0 - b)) + s
    b_new = min(1.0 - beta, max(beta, b - y * g / (h * c)))
    return y * c * b_new - a


@numba.njit(cache=True)
def _col_dot(Xt, data, indices, indptr, sparse, j, v):
    """``Xt[:, j] . v`` for an F-ordered dense or a CSC ``Xt``."""
    acc = 0.0
    if sparse:
        for p in range(indptr[j], indptr[j + 1]):
            acc += data[p] * v[indices[p]]
    else:
        for f in range(Xt.shape[0]):
            acc += Xt[f, j] * v[f]
    return acc


@numba.njit(cache=True)
def _col_axpy(Xt, data, indices, indptr, sparse, j, c, v):
    """``v += c Xt[:, j]`` for an F-ordered dense or a CSC ``Xt``."""
    if sparse:
        for p in range(indptr[j], indptr[j + 1]):
            v[indices[p]] += c * data[p]
    else:
        for f in range(Xt.shape[0]):
            v[f] += c * Xt[f, j]


@numba.njit(cache=True)
def scd_loop(
    Xt,
    data,
    indices,
    indptr,
    sparse,
    y,
    sq_norms,
    loss,
    lam_n,
    sigma_prime,
    clip,
    noise_std,
    q,
    n_steps,
    sequential,
    cap,
    alpha,
    v,
    rng,
):
    """Run ``n_steps`` noisy (seq)DP-SCD steps in place on ``(alpha, v)``.

    Parameters
    ----------
    Xt : ndarray of shape (n_features, n_samples), F-ordered
        Examples as columns (unused when ``sparse``).
    data, indices, indptr : ndarrays
        CSC arrays of ``Xt`` (= CSR arrays of ``X``) when ``sparse``.
    sparse : bool
    y : ndarray of shape (n_samples,)
    sq_norms : ndarray of shape (n_samples,)
        ``||x_j||^2``.
    loss : int
    lam_n : float
        ``alpha * n_samples``.
    sigma_prime : float
        Curvature factor of the subproblem (``L`` for DP-SCD, 1 for seq).
    clip : float
        Bound ``C`` on each clipped update (and on ``||zeta_j x_j||``).
    noise_std : float
        Standard deviation of the Gaussian noise on ``alpha_B`` and on every
        coordinate of ``v``; 0 draws nothing.
    q : float
        Poisson sampling probability.
    n_steps : int
    sequential : bool
        False: all coordinates of a batch are updated against the same
        snapshot (DP-SCD). True: the batch is visited in a uniformly random
        order, truncated to its first ``cap`` examples, and each update is
        applied at once (seqDP-SCD).
    cap : int
        Largest batch processed when ``sequential``.
    alpha, v : ndarrays of shape (n_samples,), (n_features,)
        Dual variables and shared vector, updated in place.
    rng : numpy.random.Generator
        Draw order per step: the Poisson sample, (seq: the shuffle,) the
        noise on the dual variables (DP-SCD: after the updates, on
        ``alpha_B`` in batch order, over the whole sample before any
        truncation; seq: before each processed record is read, the summed
        noise it is owed), the noise on ``v``.
    """
    n = y.shape[0]
    # Each dual update is clipped to the rounding margin of the gradient
    # kernels (proof in dpestim._kernels.clipping, one output):
    # |zeta_j| ||x_j|| <= clip holds exactly, not only up to rounding.
    # seq: alpha[j] has received the end-of-step noise of steps < owed_from[j]
    owed_from = np.zeros(n, dtype=np.int64)
    _scd_steps(
        Xt, data, indices, indptr, sparse, y, sq_norms, loss, lam_n, sigma_prime,
        clip, noise_std, q, 0, n_steps, sequential, cap, alpha, v, owed_from, rng,
        _EMPTY_F,
    )  # fmt: skip


@numba.njit(cache=True)
def _scd_steps(
    Xt, data, indices, indptr, sparse, y, sq_norms, loss, lam_n, sigma_prime,
    clip, noise_std, q, t_start, n_steps, sequential, cap, alpha, v, owed_from, rng,
    weights,
):  # fmt: skip
    """Steps ``t_start, ..., t_start + n_steps - 1`` of :func:`scd_loop`.

    ``weights`` (empty: none, every weight 1): the weight ``c_j`` in ``[0,
    1]`` of each record's loss (``class_weight``), read by :func:`dual_step`.
    The update is clipped afterwards to ``c_j C / max(1, ||x_j||)`` (``C``
    without weights), so a record's term ``zeta_j x_j`` keeps its bound
    ``C`` whatever its weight, and the weights act even where the clip binds
    every update (with the clip at ``C`` for every record, w8a's balanced
    weights never reached the fit: balanced accuracy 0.506 weighted and
    unweighted).

    ``owed_from`` carries the lazy noise bookkeeping of the sequential variant
    between calls, so that a run split into chunks (to advance a progress
    bar) draws and computes exactly what one call does.
    """
    n = y.shape[0]
    d = v.shape[0]
    limit = _safe_limit(clip, 1, d)  # see scd_loop
    rows = np.empty(n, dtype=np.int64)
    zeta = np.empty(n)
    weighted = weights.shape[0] > 0
    for t in range(t_start, t_start + n_steps):
        sampled = poisson_sample(rng, n, q, rows)
        mb = sampled
        if sequential:
            for i in range(mb - 1, 0, -1):
                k = int(rng.random() * (i + 1))
                rows[i], rows[k] = rows[k], rows[i]
            mb = min(mb, cap)
        for p in range(mb):
            j = rows[p]
            if sequential and noise_std > 0.0 and owed_from[j] < t:
                # the noise of every step since alpha[j] was last read, summed
                owed = t - owed_from[j]
                alpha[j] += noise_std * math.sqrt(owed) * rng.standard_normal()
                owed_from[j] = t
            z = 0.0
            sq = sq_norms[j]
            if sq > 0.0:
                m = _col_dot(Xt, data, indices, indptr, sparse, j, v) / lam_n
                w = weights[j] if weighted else 1.0
                z = dual_step(loss, y[j], alpha[j], m, sigma_prime * sq / lam_n, w)
                # a weighted record's update is clipped to w C (w <= 1): the
                # bound C holds, and the weights act even where C binds
                c = w * limit / max(1.0, math.sqrt(sq))
                z = min(c, max(-c, z))
            if sequential:
                alpha[j] += z
                _col_axpy(Xt, data, indices, indptr, sparse, j, z, v)
            else:
                zeta[p] = z
        if not sequential:
            for p in range(mb):
                j = rows[p]
                alpha[j] += zeta[p]
                _col_axpy(Xt, data, indices, indptr, sparse, j, zeta[p], v)
        if noise_std > 0.0:
            if not sequential:
                # noise on every sampled coordinate, also those a truncation
                # left out, so that neighbouring runs noise the same
                # coordinates but k
                for p in range(sampled):
                    alpha[rows[p]] += noise_std * rng.standard_normal()
            # seq: every dual variable gets this step's noise too, drawn
            # lazily (summed) when it is next read; see SeqDPSCD
            for f in range(d):
                v[f] += noise_std * rng.standard_normal()


def _with_intercept_column(X, fit_intercept):
    """``X`` with a constant-1 column appended when ``fit_intercept``."""
    if not fit_intercept:
        return X
    if sp.issparse(X):
        ones = sp.csr_matrix(np.ones((X.shape[0], 1)))
        return sp.hstack([X, ones], format="csr")
    return np.hstack([X, np.ones((X.shape[0], 1))])


def _dual_run(
    X, y, loss, lam, sigma_prime, clip, noise_std, q, n_steps, seq, cap, rng,
    weights=None,
):  # fmt: skip
    """Run one private dual coordinate descent and return the shared vector ``v``.

    ``X`` is C-ordered dense or CSR (n_samples, n_features). The dual
    variables live only inside this function. ``weights``: per-record loss
    weights in ``[0, 1]`` (``class_weight``), or ``None``.
    """
    n = X.shape[0]
    if sp.issparse(X):
        X = X.tocsr()
        sq = np.asarray(X.multiply(X).sum(axis=1), dtype=np.float64).ravel()
        args = (_EMPTY_XT, X.data, X.indices, X.indptr, True)
    else:
        X = np.ascontiguousarray(X, dtype=np.float64)
        sq = np.einsum("ij,ij->i", X, X)
        args = (X.T, _EMPTY_F, _EMPTY_I, _EMPTY_I, False)
    v = np.zeros(X.shape[1])
    alpha, owed_from = np.zeros(n), np.zeros(n, dtype=np.int64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    progress = current_progress()
    # one compiled call, or about one epoch per call when a bar is shown
    # (the same draws and arithmetic either way)
    chunks = [(0, int(n_steps))]
    if progress is not None:
        chunks = progress.chunks(int(n_steps), 1.0 / float(q))
    for start, stop in chunks:
        _scd_steps(
            *args, y, sq, loss, float(lam * n), float(sigma_prime), float(clip),
            float(noise_std), float(q), start, stop - start, bool(seq), int(cap),
            alpha, v, owed_from, rng, _EMPTY_F if weights is None else weights,
        )  # fmt: skip
        if progress is not None:
            progress.update(stop - start)
    return v


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
