"""Public-information rules behind the ``"auto"`` hyperparameters.

Every rule here is a function of quantities the privacy model makes public
(``n``, ``d``, the number of outputs, the loss, ``alpha``, ``clip_norm``,
``epsilon``, ``delta``, the solver) and never of the data values, so choosing
a hyperparameter by one of them costs no privacy. Each solver resolves its
``"auto"`` values in its own :meth:`~dpestim.solvers.BaseSolver.resolve_hyperparameters`
from these helpers; the constants were calibrated on the benchmark datasets
(``benchmarks/utility/defaults.py``, see ``BENCHMARKS.md``).

Two ideas recur.

* **No more steps than the noise allows.** The expected L2 norm of the
  noise added to one step's mean gradient, divided by the largest clipped
  signal ``clip_norm``, is the step's noise-to-signal ratio; the number of
  steps is the largest for which it stays below a target
  (:data:`NOISE_TO_SIGNAL` for full-batch solvers, whose budget is split
  over the steps, :data:`POISSON_NOISE_TO_SIGNAL` for mini-batch ones), and
  at most :data:`MAX_STEPS` (the number without noise).
* **Large batches when the steps are few.** A mini-batch run makes at least
  :data:`MIN_EPOCHS` passes, so small datasets and small budgets get large
  batches (less noisy mean gradients at the same budget).
"""

import math

from dp_accounting import GaussianDpEvent, PoissonSampledDpEvent, SelfComposedDpEvent

from ..losses import HINGE, LOGISTIC, MULTINOMIAL, SQUARED, SQUARED_HINGE
from ..privacy import calibrate_noise

__all__ = [
    "AUTO",
    "AUTO_ALPHA",
    "ITERATIVE_SCALE_SHARE_CAP",
    "resolve_alpha",
    "PRIVATE_CLIP_NORM",
    "resolve_clip_norm",
    "unclipped_smoothness",
    "damping_dimension",
    "NONPRIVATE_EPOCHS",
    "MIN_EPOCHS",
    "MAX_STEPS",
    "MIN_STEPS_PRIVATE",
    "NOISE_TO_SIGNAL",
    "LOSS_SMOOTHNESS",
    "is_auto",
    "full_batch_steps",
    "noise_damped_rate",
    "poisson_noise_multiplier",
    "poisson_steps",
    "BLOCKED_MAX_STEPS",
    "blocked_steps",
    "travel",
    "TRAVEL_SCALE",
    "poisson_step",
    "travel_bound",
    "travel_batch_size",
    "TRAVEL_STEPS",
    "TRAVEL",
    "TRAVEL_NOISE",
    "POISSON_STEP",
    "poisson_batch_size",
    "poisson_epochs",
]

AUTO = "auto"

#: ``alpha="auto"``: the L2 penalty in the units the public rules see, i.e.
#: of the rows after the private row scale (``feature_scale="auto"``); the
#: former numeric default, so a fit that estimates no scale is unchanged.
AUTO_ALPHA = 1e-4
#: ``scale_share_cap`` of the Gaussian iterative solvers (dp-sgd and
#: accelerated families) for the classification losses: below a few
#: thousand rows the default 5% of epsilon is too little for a reliable
#: private row scale (one median needs ``epsilon n >= 51`` at its share),
#: and up to this share may then go to it (the class histogram is dropped
#: then; see :func:`~dpestim.preprocessing._fit_scales.plan_estimates`):
#: ``epsilon n >= 146``. Past it the fit runs in the units of ``X`` as
#: given, a gamble on the user's preprocessing. Measured
#: (``benchmarks/utility/share_cap_sweep.py``, 5 seeds, ``X x k`` for k in
#: {0.01, 1, 100}; cap 0.35 against the former 0.25): breast cancer (426
#: rows) at epsilon 0.35 / 0.45, mean over k 0.830 / 0.837 -> 0.909 / 0.925
#: (0.923 / 0.937 -> 0.909 / 0.923 at k = 1); German at 0.2 / 0.25 0.683 ->
#: 0.689 / 0.692 (0.700 -> 0.688 / 0.692 at k = 1); COMPAS (500 rows, held
#: out) at 0.35 0.567 either way. Half of epsilon was rejected: digits at
#: 0.1 loses 4.4 points at k = 1 (0.260 -> 0.216).
ITERATIVE_SCALE_SHARE_CAP = 0.35
#: The same for the squared loss (``Ridge``): the former 0.25
#: (``epsilon n >= 203``). At 0.35 the sweep's held-out diabetes became
#: invariant at epsilon 0.5 (R^2 mean over k -0.54 -> 0.09, X x 100 -1.59 ->
#: 0.09), but the regression tasks of ``public_target_bound.py`` at 331 rows,
#: epsilon 0.5, as loaded (rows already near the rules' units), lost most of
#: their fit to the smaller remaining budget: California R^2 0.234 -> -0.109,
#: Bank's age 0.052 -> -0.607 (Adult's age / hours +0.01 / +0.03, diabetes
#: +0.06); a regression left with too little budget moves and falls below a
#: constant, where a classifier loses about a point.
ITERATIVE_SQUARED_SHARE_CAP = 0.25


def resolve_alpha(alpha, row_scale):
    """``(alpha in X's units, alpha in the rescaled rows' units)``; public.

    The fit runs on ``x / s`` (``s = row_scale``) with ``w' = s w``. An
    explicit ``alpha`` is the penalty of the user's objective (``mean loss +
    alpha / 2 ||w||^2``), i.e. ``alpha / s^2`` on ``w'``. ``"auto"`` is
    :data:`AUTO_ALPHA` on ``w'`` (the rescaled units the other ``"auto"``
    rules assume), i.e. ``AUTO_ALPHA s^2`` in the user's units. With ``s =
    1`` both are the given value exactly.
    """
    if is_auto(alpha):
        return AUTO_ALPHA * row_scale**2, AUTO_ALPHA
    alpha = float(alpha)
    return alpha, alpha / row_scale**2


#: Fewest passes over the data of a mini-batch run.
MIN_EPOCHS = 10
#: Fewest noisy steps of a private mini-batch run.
MIN_STEPS_PRIVATE = 50
#: Most steps of a mini-batch run (also the number without noise).
MAX_STEPS = 2000
#: Target noise-to-signal ratio of one mini-batch step (the noise averages
#: over steps, so it may be larger than a full-batch step's).
POISSON_NOISE_TO_SIGNAL = 0.3
#: Largest passes a rule asks for (bounds the cost on tiny datasets).
MAX_EPOCHS = 300
#: Budgets above this plan like this one (every rule is then at its
#: noiseless end), which keeps the rules' arithmetic finite.
_LARGE_EPSILON = 1e6
#: Target noise-to-signal ratio of one full-batch step.
NOISE_TO_SIGNAL = 0.1
#: Noise-to-signal ratio of a mini-batch step above which the step shrinks.
MINIBATCH_NOISE_TO_SIGNAL = 1.0
#: Largest second derivative of each loss in the score (public constants):
#: the curvature along the intercept, which no clipping of L1/L2-bounded
#: rows reduces when the residual is small.
LOSS_SMOOTHNESS = {
    LOGISTIC: 0.25,
    SQUARED: 1.0,
    HINGE: 1.0,
    SQUARED_HINGE: 2.0,
    MULTINOMIAL: 0.5,
}


def is_auto(value):
    """Whether ``value`` is the string ``"auto"``."""
    return isinstance(value, str) and value == AUTO


#: ``clip_norm="auto"`` of a private fit.
PRIVATE_CLIP_NORM = 1.0


def resolve_clip_norm(clip_norm, epsilon):
    """The clip norm a fit uses: ``clip_norm="auto"`` resolved by ``epsilon``.

    ``"auto"`` is ``inf`` (no clipping) for a non-private fit (``epsilon =
    inf``: the fit then minimises the estimator's objective itself, as
    scikit-learn does) and :data:`PRIVATE_CLIP_NORM` otherwise; any other
    value is returned as a float. Public: a function of the budget only.
    """
    if is_auto(clip_norm):
        return math.inf if math.isinf(epsilon) else PRIVATE_CLIP_NORM
    return float(clip_norm)


def unclipped_smoothness(plan, batch=None):
    """Smoothness ``L`` of the loss of an unclipped plan, or ``None``.

    For ``clip_norm = inf`` the step rules cannot lean on clipping to bound
    a step; they use the smoothness of the mean loss, ``L = s R_rms^2 +
    alpha`` (the trace bound of its Hessian; ``s`` =
    :data:`LOSS_SMOOTHNESS` of the loss, ``R_rms`` the root mean square
    norm of a row ``(x, 1)``), and for a mini-batch step of expected size
    ``batch`` the expected smoothness of the sampled gradient, ``s (R_rms^2
    + R_max^2 / batch) + alpha`` (``R_max`` the largest row norm; Gower et
    al., 2019, "SGD: general analysis and improved rates"). The norms are
    read from the data, so the estimator sets them (``plan.row_norm``,
    ``plan.row_norm_rms``) only in a non-private plan (``epsilon = inf``),
    never for a private fit, whose plan is public: ``None`` when the plan
    clips or carries no norms (or ``L`` is 0 or above ``1e100``, rows of
    norm above about ``1e50``; the clipped rules then apply).
    """
    if math.isfinite(plan.clip_norm) or plan.row_norm is None:
        return None
    s = LOSS_SMOOTHNESS[plan.loss]
    sq = float(plan.row_norm_rms) ** 2
    if batch is not None and batch < plan.n_samples:
        sq += float(plan.row_norm) ** 2 / batch
    L = s * sq + plan.alpha
    # 0: zero rows and no penalty (every step is stable); above the cap the
    # schedules' arithmetic (kappa = L / alpha, its square root) overflows
    return L if 0.0 < L <= _MAX_SMOOTHNESS else None


#: Largest smoothness an unclipped step rule uses (see unclipped_smoothness).
_MAX_SMOOTHNESS = 1e100

#: Fewest passes of a non-private (unclipped) run: the problem's own
#: conditioning, not the noise, limits it (scikit-learn's lbfgs allows 100
#: full-gradient iterations).
NONPRIVATE_EPOCHS = 100


def poisson_steps(n_samples, n_noisy, epsilon, delta, loss=None):
    """Steps of a Poisson mini-batch run: as many as the noise allows.

    For a fixed number of steps ``T`` the noise multiplier of the
    Poisson-subsampled Gaussian is about ``q sqrt(T log(1 / delta)) /
    epsilon``, so the noise on one step's mean gradient, relative to the
    largest clipped signal, is about ``sqrt(T D log(1 / delta)) / (epsilon
    n)`` whatever the batch. ``T`` is where this reaches
    :data:`POISSON_NOISE_TO_SIGNAL`, at least :data:`TRAVEL_STEPS` for a
    classification ``loss`` (a small dataset or budget then takes that many
    smaller steps, see :func:`travel` and :func:`poisson_step`; the squared
    loss and ``loss=None`` keep the floor :data:`MIN_STEPS_PRIVATE`), at
    most :data:`MAX_STEPS`; :data:`MAX_STEPS` without noise.
    """
    if math.isinf(epsilon):
        return MAX_STEPS
    if not 0 < delta < 1:
        return MIN_STEPS_PRIVATE
    log_d = math.log(1.0 / delta)
    epsilon = min(epsilon, _LARGE_EPSILON)  # keeps the square finite
    T = (POISSON_NOISE_TO_SIGNAL * epsilon * n_samples) ** 2 / (max(1, n_noisy) * log_d)
    if travel_bound(loss, n_samples, n_noisy, epsilon, delta):
        T = max(T, TRAVEL_STEPS)
    return int(min(MAX_STEPS, max(MIN_STEPS_PRIVATE, math.floor(T))))


#: Most steps of a Poisson run with ``batch_size="auto"`` on blocked data
#: (see :func:`blocked_steps`).
BLOCKED_MAX_STEPS = 200


def blocked_steps(steps):
    """Steps of an ``"auto"`` Poisson run on blocked (Dask, out-of-core) data.

    ``min(steps, BLOCKED_MAX_STEPS)``, ``steps`` from :func:`poisson_steps`.
    On a cluster every step is a round trip from the driver to every
    worker (the model down, the clipped sums up), and out of core every
    step reads the sampled rows of every block; its cost hardly depends on
    the batch. With fewer steps :func:`poisson_batch_size` gives a batch of
    ``10 n / T`` and :func:`poisson_epochs` the same 10 passes, so the run
    does the same gradient work in fewer, larger steps whose mean gradient
    is less noisy for the same budget (DP-SGD at scale prefers large
    batches). With ``batch_size="auto"`` a fit then takes at most
    ``BLOCKED_MAX_STEPS`` steps for ``n >= 2,000`` (in general at most
    ``BLOCKED_MAX_STEPS + ceil(n / B)``, ``B`` the expected batch, from the
    rounding up of the passes), hence as many round trips plus three
    (validation, targets, close). The accounting is that of the plan: the
    Poisson rate ``q = B / n`` and the steps actually run.

    Measured (``benchmarks/speed/dask_fit.py``, 1,000,000 x 50 float32,
    LogisticRegression, 3 seeds, 100,000 test rows): 2,000 steps of batch
    5,000 (the in-memory default) 0.8954 / 0.8954, 200 steps of batch
    50,000 0.8955 / 0.8954 test accuracy at epsilon 1 / 0.1 (delta 1e-6).
    """
    return int(min(steps, BLOCKED_MAX_STEPS))


#: Fewest steps of a private run (see :func:`travel`).
TRAVEL_STEPS = 200
#: Distance (in units of ``clip_norm``) a private logistic run may travel
#: from its public start (see :func:`travel`).
TRAVEL = 100.0
#: Standard deviation per coordinate (in units of ``clip_norm``) of the noise
#: a private logistic run may gather on its way (see :func:`travel`).
TRAVEL_NOISE = 0.5
#: The ``"auto"`` learning rate of a private Poisson run (before damping).
POISSON_STEP = 0.5
#: The step (in units of ``clip_norm``) that dp-scd's relative clip is
#: counted as in :func:`scd_plan` (its bound is 1; see there).
SCD_STEP = 0.5


#: How far a run with few steps travels, relative to a logistic one, by loss
#: (see :func:`travel`): calibrated on German credit (logistic, squared
#: hinge) and, for dp-scd only, the squared loss (diabetes and
#: scikit-learn's check_regressors_train data); the hinge loss is taken as
#: the squared hinge, the multinomial loss as the logistic (not calibrated
#: separately).
TRAVEL_SCALE = {
    LOGISTIC: 1.0,
    MULTINOMIAL: 1.0,
    HINGE: 0.6,
    SQUARED_HINGE: 0.6,
    SQUARED: 0.35,
}


def travel(loss, n_samples, epsilon, delta):
    """How far a private run with few steps travels from its public start.

    A step moves the model by at most ``step * clip_norm`` (``step``: the
    learning rate of dp-sgd), so a run of ``T`` steps travels at most
    ``tau = step T``. The noise it gathers on the way does not depend on
    how that travel is split into steps: with ``T`` steps of noise
    multiplier ``sigma ~ q sqrt(T log(1 / delta)) / epsilon`` on a mean
    over ``q n`` records, the noise left on each coordinate is about
    ``step sqrt(T) sigma / (q n) = tau sqrt(log(1 / delta)) / (epsilon n)``
    (a random walk; curvature only shrinks it). The noise-to-signal rule of
    :func:`poisson_steps` allowed so few steps on a small dataset that the
    model never left its intercept (German credit, 750 rows, 63
    coordinates, epsilon 1: 74 steps of 0.5, travel 37, the majority class
    for 100% of the test rows); and at the same travel, more smaller steps
    were measured better. So a private run takes at least
    :data:`TRAVEL_STEPS` steps and, when that is more than the noise rule
    gives, travels

    ``tau = TRAVEL_SCALE[loss] min(TRAVEL, TRAVEL_NOISE epsilon n /
    sqrt(log(1 / delta)))``:

    :data:`TRAVEL` unless the noise per coordinate would pass
    :data:`TRAVEL_NOISE` (for a logistic run). Calibrated with the oracle
    grid ``benchmarks/utility/small_n_oracle.py`` (dp-sgd): on German credit (15
    seeds, majority 0.704) the best travel was 50-70 / 90-100 / 90-117 for
    LogisticRegression at epsilon 0.5 / 1 / 2 (this rule: 55 / 100 / 100;
    medians 0.716-0.744), 25 / 45-50 / 50-60 for LinearSVC (squared hinge;
    rule 33 / 60 / 60; medians 0.716-0.732; travel 100 at epsilon 0.5 left
    it at 0.672). dp-scd uses it too (:func:`scd_plan`), also for the
    squared loss, where the best travel depends on the scale of the rows
    against the target's, which is not public: on diabetes (Ridge, 331 rows
    of norm about 0.15, test R^2, 5 seeds, epsilon 0.5 / 1 / 2) a scale of
    0 / 0.35 / 0.7 gave -0.009 / 0.067 / 0.039, 0.111 / 0.092 / 0.161 and
    0.219 / 0.204 / 0.26 (the former plan -0.0006 / 0.031 / 0.093); on the
    200 standardised rows of scikit-learn's ``check_regressors_train``
    (training R^2 at epsilon 1, median of 5 seeds) 0.30 / 0.25 / -0.15
    (former plan 0.42). 0.35 is the compromise. ``inf`` without noise (or
    ``delta`` outside ``(0, 1)``).
    """
    if math.isinf(epsilon) or not 0 < delta < 1:
        return math.inf
    epsilon = min(epsilon, _LARGE_EPSILON)
    reach = TRAVEL_NOISE * epsilon * n_samples / math.sqrt(math.log(1.0 / delta))
    return TRAVEL_SCALE[loss] * min(TRAVEL, reach)


#: Most passes of a run lengthened to :data:`TRAVEL_STEPS` steps (see
#: :func:`travel_batch_size`).
TRAVEL_EPOCHS = 40
#: Gradient coordinates (passes x rows x noised coordinates) such a run may
#: compute (about a second of one core).
TRAVEL_WORK = 1e8


def travel_bound(loss, n_samples, n_noisy, epsilon, delta):
    """Whether :data:`TRAVEL_STEPS` lengthens a private Poisson run.

    True when the noise-to-signal rule of :func:`poisson_steps` alone gives
    fewer than :data:`TRAVEL_STEPS` steps, for a classification loss and a
    private budget (``0 < delta < 1``) whose :func:`travel` is at least one
    step of :data:`POISSON_STEP` (a vanishing budget, e.g. ``epsilon n <
    3.4``, keeps the noise rule: lengthening a run that cannot move only
    raises its noise multiplier).
    """
    if math.isinf(epsilon) or not 0 < delta < 1 or loss is None or loss == SQUARED:
        return False
    if travel(loss, n_samples, epsilon, delta) < POISSON_STEP:
        return False
    e = min(epsilon, _LARGE_EPSILON)
    T = (POISSON_NOISE_TO_SIGNAL * e * n_samples) ** 2 / (
        max(1, n_noisy) * math.log(1.0 / delta)
    )
    return T < TRAVEL_STEPS


def travel_batch_size(n_samples, n_noisy, steps):
    """Expected batch of a run lengthened to ``steps`` (:func:`travel_bound`).

    With the number of steps fixed, the noise on a step's mean gradient
    hardly depends on the batch (``sigma / B`` within 3% from ``B`` = 41 to
    750 on 750 rows at epsilon 0.5), while a larger batch averages more
    records: ``E n / steps`` with ``E`` passes, as many as
    :data:`TRAVEL_WORK` allows in ``[MIN_EPOCHS, TRAVEL_EPOCHS]``. Measured
    on German credit (dp-sgd, LogisticRegression, 200 steps, 21 seeds):
    0.708 / 0.716 / 0.720 / 0.716 at epsilon 0.5 with batch 41 / 75 / 150 /
    375 (11 / 20 / 40 / 100 passes), 0.724 / 0.728 / 0.732 / 0.728 at 1.
    """
    work = float(n_samples) * max(1, n_noisy)
    E = min(TRAVEL_EPOCHS, max(MIN_EPOCHS, math.floor(TRAVEL_WORK / work)))
    return int(min(n_samples, math.ceil(E * n_samples / max(1, steps))))


def poisson_step(loss, n_samples, n_noisy, epsilon, delta, steps):
    """Cap on the ``"auto"`` learning rate of a private Poisson run.

    ``travel / steps`` (:func:`travel`) when the noise-to-signal rule of
    :func:`poisson_steps` alone gives fewer than :data:`TRAVEL_STEPS` steps
    (the run was lengthened to that many: its steps shrink so that it
    travels no farther), else :data:`POISSON_STEP` (big ``epsilon n``: the
    rule is unchanged there). Not for the squared loss (Ridge), whose
    travel is set by the target's scale: the noise rule measured better on
    diabetes (dp-sgd R^2 0.104 / 0.168 at epsilon 0.5 / 1, against 0.087 /
    0.168 with 200 steps and this cap, 0.054 / 0.136 with a logistic-sized
    travel); it keeps :data:`POISSON_STEP` and :func:`poisson_steps`'s floor
    of :data:`MIN_STEPS_PRIVATE`.
    """
    if not travel_bound(loss, n_samples, n_noisy, epsilon, delta):
        return POISSON_STEP
    return min(POISSON_STEP, travel(loss, n_samples, epsilon, delta) / max(1, steps))


def poisson_batch_size(n_samples, steps=MAX_STEPS):
    """Expected batch ``min(n, max(32, 1.5 sqrt(n), 10 n / steps))``.

    About 256 on 30,000 rows (the batch DP-SGD is usually run with), and at
    least the batch for which ``steps`` steps make :data:`MIN_EPOCHS`
    passes: a run with few steps (small data, small budget) takes large
    batches, whose mean gradient is less noisy for the same budget.
    """
    n = int(n_samples)
    return min(
        n, max(32, int(round(1.5 * math.sqrt(n))), math.ceil(MIN_EPOCHS * n / steps))
    )


def poisson_epochs(n_samples, batch_size, steps):
    """Passes giving ``steps`` steps of expected batch ``batch_size``.

    ``ceil(steps B / n)``, at least :data:`MIN_EPOCHS` and at most
    :data:`MAX_EPOCHS`.
    """
    epochs = math.ceil(steps * min(batch_size, n_samples) / n_samples)
    return int(min(MAX_EPOCHS, max(MIN_EPOCHS, epochs)))


def full_batch_steps(
    n_samples, n_noisy, epsilon, delta, *, laplace, lo, hi, ratio=NOISE_TO_SIGNAL
):
    """Steps of a full-batch run whose step noise stays ``ratio`` x the signal.

    With ``T`` steps of equal budget and ``D = n_noisy`` noised coordinates:

    * Laplace (pure DP, replace-one, L1 sensitivity ``2 C``): each step has
      ``epsilon / T``, the noise on the mean gradient has scale ``2 C T /
      (epsilon n)`` per coordinate and expected L2 norm about ``sqrt(2 D)``
      times that, so the ratio to ``C`` is ``2 sqrt(2 D) T / (epsilon n)``;
    * Gaussian (add/remove, zCDP ``T / (2 sigma^2)``, ``epsilon ~ sqrt(2 rho
      log(1 / delta))`` for small ``epsilon``): ``sigma ~ sqrt(T log(1 /
      delta)) / epsilon`` and the ratio is ``sigma sqrt(D) / n``.

    The result is the ``T`` at which the ratio equals ``ratio``, clipped to
    ``[lo, hi]`` (``hi`` for ``epsilon = inf``).
    """
    if math.isinf(epsilon):
        return int(hi)
    n, D = float(n_samples), float(max(1, n_noisy))
    epsilon = min(epsilon, _LARGE_EPSILON)
    if laplace:
        T = ratio * epsilon * n / (2.0 * math.sqrt(2.0 * D))
    else:
        T = (ratio * epsilon * n) ** 2 / (D * math.log(1.0 / max(delta, 1e-300)))
    return int(min(hi, max(lo, math.floor(T))))


def poisson_noise_multiplier(n_samples, batch_size, epochs, epsilon, delta):
    """Noise multiplier of dp-sgd's event for this plan (RDP, add/remove-one).

    ``ceil(epochs / q)`` Poisson-subsampled Gaussian steps, ``q = B / n``:
    the mechanism of every Poisson mini-batch solver (their own calibration
    may differ slightly, e.g. adaptive noise shapes). Public: it depends on
    the plan and the budget only; cached like every calibration.
    """
    if math.isinf(epsilon):
        return 0.0
    q = min(1.0, batch_size / n_samples)
    steps = max(1, math.ceil(epochs / q - 1e-9))

    def event(s):
        step = GaussianDpEvent(s)
        if q < 1.0:
            step = PoissonSampledDpEvent(q, step)
        return SelfComposedDpEvent(step, steps)

    return calibrate_noise(
        event,
        epsilon,
        delta,
        accountant="rdp",
        neighbouring="add_or_remove_one",
        cache_key=("policy-poisson", int(n_samples), int(batch_size), int(epochs)),
    )


def damping_dimension(n_noisy, n_samples):
    """Dimensions of a step's noise that :func:`noise_damped_rate` counts.

    ``min(D, n)`` (public): the loss reads the coefficients only through
    ``X w``, so the fluctuation the damping guards against lives in the
    rows' span, of dimension at most ``n``; noise outside it moves neither
    the loss nor its gradient. Counting all ``D`` noised coordinates damped
    the step of wide data to nothing (Farm Ads, 3,107 rows x 54,877 sparse
    features, ``LogisticRegression`` at its defaults, epsilon 0.5 / 1 / 2:
    step 0.006 / 0.021 / 0.064, accuracy 0.534 (the majority) / 0.593 /
    0.692; with ``min(D, n)``: 0.759 / 0.810 / 0.821, ``LinearSVC`` 0.747 /
    0.791 / 0.800, dp-scd 0.803 at epsilon 1). Checked on data it was not
    derived on, MNIST subsamples whose ``D = 10 x 785`` exceeds ``n``
    (epsilon 1, median of 5 seeds, ``LogisticRegression`` / ``LinearSVC``):
    250 rows 0.223 / 0.183 -> 0.271 / 0.248, 500 rows 0.410 / 0.369 ->
    0.500 / 0.489, 1,000 rows 0.588 / 0.606 -> 0.668 / 0.648, 3,000 rows
    0.759 / 0.745 -> 0.812 / 0.777; digits 300 rows (``D`` 650) 0.427 /
    0.420 -> 0.451 / 0.400; w8a 250 rows (``D`` 301) 0.972 / 0.972 -> 0.972
    / 0.971. No cell of the defaults matrix has ``D > n``.
    """
    return min(int(n_noisy), int(n_samples)) if n_samples > 0 else int(n_noisy)


def noise_damped_rate(rate, ratio, ref=MINIBATCH_NOISE_TO_SIGNAL):
    """``rate * min(1, (ref / ratio)^2)``: smaller steps when noise dominates.

    With constant steps ``eta`` and per-step noise of scale ``s`` the
    iterates of a (locally) strongly convex problem fluctuate with variance
    about ``eta s^2``; the signal a step carries is at most ``clip_norm``. Once
    the step's noise-to-signal ``ratio`` exceeds ``ref``, shrinking ``eta``
    like ``1 / ratio^2`` keeps that fluctuation at its level for ``ratio =
    ref``: the model stays near its (public) starting point instead of
    wandering off with the noise. (Shrinking like ``1 / ratio`` was measured
    worse on 331-row diabetes at epsilon 0.1: R^2 -2.5 against -0.3.)
    """
    if ratio <= ref:
        return rate
    # floored: a step of 0 (an underflow at absurd budgets) is no step rule
    return rate * max((ref / ratio) ** 2, 1e-12)
