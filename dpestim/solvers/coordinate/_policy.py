"""Public-information ``"auto"`` rules of the coordinate-descent family.

dp-scd's ``(epochs, batch)`` plan and seq-dp-scd's epochs and step, from
quantities the privacy model makes public only (see
:mod:`dpestim.solvers._policy` for the rules shared by every family).
"""

import math

from ...losses import LOGISTIC
from .._policy import (
    _LARGE_EPSILON,
    MAX_STEPS,
    MIN_EPOCHS,
    SCD_STEP,
    TRAVEL_STEPS,
    poisson_batch_size,
    poisson_epochs,
    travel,
)

__all__ = [
    "SCD_MAX_EPOCHS",
    "SCD_NOISE",
    "SEQ_SCD_EFOLDS",
    "SEQ_SCD_MAX_EPOCHS",
    "SEQ_SCD_NOISE",
    "SEQ_SCD_WORK",
    "scd_plan",
    "seq_scd_epochs",
    "seq_scd_step",
    "seq_scd_unclipped_epochs",
]


#: Target standard deviation of the noise dp-scd leaves on each coefficient
#: (see :func:`scd_plan`; was 0.1).
SCD_NOISE = 0.3
#: Most epochs of a private dp-scd plan whose batch floor leaves the noise
#: below :data:`SCD_NOISE` (see :func:`scd_plan`).
SCD_MAX_EPOCHS = 30


def scd_plan(
    n_samples, epsilon, delta, epochs=MIN_EPOCHS, loss=LOGISTIC, n_outputs=1, alpha=None
):
    """``(epochs, batch)`` of dual coordinate descent (dp-scd) for a budget.

    dp-scd adds noise to the shared vector ``v`` in every step and never
    contracts it: ``coef = v / (alpha n)`` keeps all of it. With ``T = E /
    q`` steps, batch ``L = q n``, clip ``C = clip_norm alpha n / L``
    (relative mode) and noise multiplier ``sigma ~ q sqrt(T log(1 /
    delta)) / epsilon``, the noise left on each coordinate is about ``E
    sqrt(log(1 / delta)) clip_norm / (q epsilon n)``: it falls with the
    batch. The rule takes ``E`` epochs (10) and the smallest rate ``q`` that
    brings it to :data:`SCD_NOISE` (at least the Poisson rule's batch).
    Where that floor binds (large ``n``, or large ``epsilon``) the noise left
    is below the target, and the slack buys epochs at the same batch: ``E =
    SCD_NOISE epsilon L / sqrt(log(1 / delta))``, at most
    :data:`SCD_MAX_EPOCHS` (30). The extra steps were measured to help
    where the floor binds (``benchmarks/utility/scd_epochs.py``, 5 seeds:
    w8a +0.6 / +0.7 point at epsilon 1 / 2, California ``Ridge`` +0.016 R^2 at
    epsilon 2; Adult within 0.2 point); a larger batch at the same steps
    (more epochs through :data:`SCD_NOISE`) did not, since the curvature
    factor ``L`` damps each step as the batch grows. With the penalty
    ``alpha`` given, the same branch also takes at least ``E / (alpha n)``
    epochs (at most :data:`SCD_MAX_EPOCHS`): dual coordinate ascent needs
    about ``1 + 1 / (alpha n)`` passes per e-fold of its suboptimality
    (Shalev-Shwartz and Zhang, JMLR 2013), so a fit with ``alpha n`` below 1
    stops far from its optimum in 10 epochs (UCI Bank Marketing, 3,390 rows,
    ``alpha n = 0.34``: the noiseless 10-epoch fit predicts one class for
    every row; 30 epochs at the same batch does not).

    On a small dataset that allows too few steps for the model to leave
    its intercept (German credit, 750 rows: 11 / 22 / 44 steps at epsilon
    0.5 / 1 / 2, the majority class for every test row). dp-scd has no
    learning rate (each step moves ``coef`` by at most ``clip_norm`` in
    relative mode), so the run takes at least ``min(TRAVEL_STEPS, travel /
    SCD_STEP)`` steps (:func:`travel` of the loss; :data:`SCD_STEP` = 0.5:
    the oracle's best dp-scd runs on German took twice the steps of the
    best dp-sgd runs at learning rate 0.5, 183-200 steps at epsilon 1-2 with
    0.728-0.736 against the majority 0.704, 100 at epsilon 0.5; 366-732 steps
    fell to 0.66-0.71). The batch is then ``10 n / T`` (at least the
    Poisson rule's), with more epochs if that batch floor binds. Where that
    is fewer than ``epochs`` steps, the run is full-batch and lowers ``E``
    instead (at least 1).

    With ``K = n_outputs > 1`` (one-vs-rest) the ``K`` runs compose, so each
    has about ``epsilon / sqrt(K)``: the rule plans each run for that budget
    (MNIST, ``K = 10``: planning for ``epsilon`` took three times too many
    steps, 0.755 / 0.713 against 0.767 / 0.745 at epsilon 0.5,
    LogisticRegression / LinearSVC).
    """
    n = int(n_samples)
    base = poisson_batch_size(n)
    if math.isinf(epsilon):
        return poisson_epochs(n, base, MAX_STEPS), base
    log_d = math.log(1.0 / max(delta, 1e-300))
    epsilon = min(epsilon, _LARGE_EPSILON) / math.sqrt(max(1, n_outputs))
    q = epochs * math.sqrt(log_d) / (SCD_NOISE * epsilon * n)
    B = max(base, min(n, math.ceil(q * n)))
    tau = travel(loss, n, epsilon, delta)  # inf: delta outside (0, 1)
    steps = 0 if math.isinf(tau) else math.floor(min(TRAVEL_STEPS, tau / SCD_STEP))
    if B < n and epochs * n / B >= steps:
        E = epochs
        if B > math.ceil(q * n):
            # The batch floor binds: the noise left is below SCD_NOISE, and
            # the slack buys epochs at the same batch (more steps).
            slack = math.floor(SCD_NOISE * epsilon * B / math.sqrt(log_d))
            E = max(E, min(SCD_MAX_EPOCHS, slack))
        if alpha is not None and alpha > 0:  # the dual's conditioning
            E = max(E, math.ceil(min(SCD_MAX_EPOCHS, epochs / (alpha * n))))
        return int(E), int(B)
    if steps >= epochs:
        B = min(n, max(base, math.ceil(epochs * n / steps)))
        return int(max(epochs, math.ceil(steps * B / n))), int(B)
    E = max(1, math.floor(SCD_NOISE * epsilon * n / math.sqrt(log_d)))
    return int(min(E, epochs)), n


#: Noise draws (steps x noised coordinates x outputs) a seq-dp-scd run may
#: cost by default (about 5 s of one core).
SEQ_SCD_WORK = 1e9
#: Most passes of a private seq-dp-scd run.
SEQ_SCD_MAX_EPOCHS = 300
#: Dual-noise target of seq-dp-scd's step rule (see :func:`seq_scd_step`).
SEQ_SCD_NOISE = 10.0


def seq_scd_epochs(n_samples, n_noisy, n_outputs):
    """Passes of a private seq-dp-scd run at batch 1.

    Each step noises all ``D = n_noisy`` coordinates of ``v``, so a run of
    ``E`` passes costs ``E n K D`` Gaussian draws; more passes with a
    proportionally smaller step were measured better (Adult, epsilon = 1:
    0.816 / 0.833 / 0.835 / 0.839 at 10 / 30 / 100 / 300 passes), so the rule
    takes as many as :data:`SEQ_SCD_WORK` draws allow, in ``[MIN_EPOCHS,
    SEQ_SCD_MAX_EPOCHS]``.
    """
    work = float(n_samples) * max(1, n_noisy) * max(1, n_outputs)
    E = math.floor(SEQ_SCD_WORK / work)
    return int(min(SEQ_SCD_MAX_EPOCHS, max(MIN_EPOCHS, E)))


def seq_scd_step(n_samples, batch, epochs, noise_multiplier, alpha_n=math.inf):
    """Bound on one dual update of private seq-dp-scd, per unit ``clip_norm``.

    seq-dp-scd adds noise of standard deviation ``sigma 2 C sqrt(L (L +
    1))`` to *every* dual variable in every step (its proof releases them),
    so between two visits of a record (about ``n / L`` steps) its dual
    variable gathers noise ``s C`` with ``s = 2 sigma sqrt((L + 1) n)``.
    Once that exceeds the dual variables' own scale (about 1: the logistic
    and hinge duals lie in ``[0, 1]``) the updates ``zeta = target - alpha``
    take random signs and the model is a random walk (what the former
    relative rule, ``C ~ alpha n / L``, produced: accuracy below chance).
    ``C = SEQ_SCD_NOISE / (E s)`` keeps the noise a dual gathers over the
    whole run, ``sqrt(E) s C``, at ``SEQ_SCD_NOISE / sqrt(E)``; the updates
    are then mostly clipped to ``C`` with the right sign (sign steps on the
    dual, of size ``C``, whose sum over the ``E`` passes is
    ``SEQ_SCD_NOISE / s``). Calibrated on Adult, California, COMPAS,
    phishing (``SEQ_SCD_NOISE`` in {3, 10, 30}).

    The same noise, added to ``v``, stays in ``coef = v / (alpha n)``: about
    ``sqrt(E) s C / (alpha n)`` per coefficient. The step is also capped so
    that this is at most 1 (``alpha_n = alpha n``): it binds only when
    ``alpha n`` is small (diabetes, 331 rows: ``alpha n = 0.033`` and R^2
    -4 to -6 without the cap).
    """
    s = 2.0 * max(noise_multiplier, 1e-12) * math.sqrt((batch + 1.0) * n_samples)
    return min(SEQ_SCD_NOISE / math.sqrt(epochs), alpha_n) / (math.sqrt(epochs) * s)


#: e-folds of the dual suboptimality a non-private seq-dp-scd run asks for
#: (see :func:`seq_scd_unclipped_epochs`).
SEQ_SCD_EFOLDS = 5.0


def seq_scd_unclipped_epochs(n_samples, n_noisy, n_outputs, smoothness, alpha):
    """Passes of a non-private, unclipped seq-dp-scd run (plain SDCA).

    Without noise and clipping the sequential variant is stochastic dual
    coordinate ascent with curvature factor 1, whose dual suboptimality
    shrinks by about ``exp(-1 / (1 + L / (alpha n)))`` per pass (Shalev-Shwartz
    and Zhang, 2013, Theorem 1, with ``L`` the smoothness of the mean loss,
    :func:`unclipped_smoothness`). When ``L / (alpha n)`` is large (few rows,
    small ``alpha``: German credit's squared hinge has ``L / (alpha n)``
    about 440) the primal iterate ``v / (alpha n)`` is far from the optimum
    until the dual has converged (the Poisson rule's 110 passes gave German
    credit LinearSVC an objective 0.72 against the optimum's 0.563, and test
    accuracy 0.59-0.71 against liblinear's 0.724; 3,000 passes reach 0.563).
    The rule asks for :data:`SEQ_SCD_EFOLDS` e-folds, ``E = 5 (1 + L / (alpha
    n))`` passes, at most the work budget :data:`SEQ_SCD_WORK` (``E n K D``
    coordinate updates of ``D = n_noisy`` features). ``L`` reads the row norms,
    so this is for non-private plans only (as :func:`unclipped_smoothness`).
    """
    n = max(1, int(n_samples))
    if not alpha > 0:  # no strong convexity: the work budget decides
        work = float(n) * max(1, n_noisy) * max(1, n_outputs)
        return int(max(1, math.floor(SEQ_SCD_WORK / work)))
    E = SEQ_SCD_EFOLDS * (1.0 + smoothness / (alpha * n))
    work = float(n) * max(1, n_noisy) * max(1, n_outputs)
    return int(max(1, min(math.ceil(E), math.floor(SEQ_SCD_WORK / work))))
