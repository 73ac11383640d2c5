"""seqDP-SCD (Damaskinos et al., AAAI 2021, Algorithm 3): the sequential baseline.

The parallel :class:`~dpestim.solvers.DPSCD` holds the kernels and the
privacy argument of the dual coordinate family; this module holds the
sequential variant, whose sensitivity grows with the batch and whose
``clip_mode="auto"`` rule is its own.
"""

import math
from dataclasses import replace

from sklearn.utils._param_validation import StrOptions

from .. import _policy
from . import _policy as _coordinate_policy
from .dp_scd import DPSCD

__all__ = ["SeqDPSCD"]


class SeqDPSCD(DPSCD):
    """Sequential private dual coordinate descent (``solver="seq-dp-scd"``).

    The paper's baseline (Algorithm 3, authors' code version): within a step
    the sampled coordinates are updated one after the other, each seeing the
    previous ones, with curvature factor ``sigma' = 1`` (plain SDCA). A record
    then influences every later update of its batch, so the sensitivity grows
    with the batch size. The Poisson sample is visited in a uniformly random
    order and truncated to its first ``L`` (expected batch size) records;
    inserting one record changes its own update (``<= C``), each of the at
    most ``L - 1`` later ones (``<= 2C``) and may push out the last one
    (``<= C``), in ``alpha_B`` and in ``v``, which gives the paper's bound
    ``2 C sqrt(L (L + 1))`` (Lemma 5). Noise of standard deviation
    ``noise_multiplier * 2 C sqrt(L (L + 1))`` is added to ``v`` and to
    **every** dual variable in every step; the event has the same form as
    :class:`DPSCD`'s (add/remove-one).

    Why every dual variable: a record changes the dual variables of the later
    records of its batch, which later steps read, so dp-scd's argument (only
    ``v`` matters, the other updates do not depend on the record) fails
    (even with ``L = 1``, a record can push another out of the truncated
    batch). The argument instead treats the noisy ``(alpha, v)`` of each step
    as released, which makes the state post-processing. Noising only the sampled
    coordinates (the paper) would then release *which* records were sampled,
    and a record's presence in the batch has probability ``q`` with it and 0
    without it, so that release is not private under add/remove-one.
    Noising all ``n`` coordinates hides the batch; with the record absent its
    dual variable is a pure-noise coordinate that the neighbouring run can
    simulate. The noise a dual variable accumulates between two reads is a
    sum of Gaussians, drawn as one when it is next read (the same law as
    noising all ``n`` coordinates every step, at the cost of the batch); the
    dual variables are noisier than in the paper's baseline.

    Defaults (``clip_mode="auto"``). The noise on every dual variable is
    what sinks the relative rule of :class:`DPSCD`: between two visits of a
    record its dual variable gathers noise of standard deviation ``2 sigma C
    sqrt((L + 1) n)``, far above the duals' own scale (about 1) when ``C ~
    alpha n / L``, so the updates ``zeta = target - alpha`` take random signs
    (accuracy below chance on Adult, R^2 -5 on California). With
    ``clip_mode="auto"`` the bound on each dual update is ``C = clip_norm *
    learning_rate`` and, for a private fit, ``"auto"`` takes a batch of 1 (the
    sensitivity ``2 C sqrt(L (L + 1))`` is the whole batch's movement: only
    subsampling helps), as many passes as a work budget allows
    (:func:`~dpestim.solvers.coordinate._policy.seq_scd_epochs`, 10 to 300) and
    ``learning_rate = min(10 / sqrt(E), alpha n) / (sqrt(E) 2 sigma sqrt((L +
    1) n))``
    (:func:`~dpestim.solvers.coordinate._policy.seq_scd_step`, with ``sigma`` the
    noise multiplier of that plan, public), never above the relative rule's
    ``alpha n / L``: the updates are mostly clipped sign steps whose signs
    the dual noise does not randomise. Without noise, ``learning_rate =
    alpha n / L`` (the relative rule) with :class:`DPSCD`'s batch and passes,
    and, unclipped (``clip_norm = inf``, where the run is plain SDCA), at
    least the passes its conditioning needs
    (:func:`~dpestim.solvers.coordinate._policy.seq_scd_unclipped_epochs`).
    The clip bound depends on public quantities only, and the privacy
    argument above holds for any ``C``.

    Parameters
    ----------
    clip_mode : {"auto", "relative", "absolute"}, default="auto"
        ``"auto"``: ``C = clip_norm * learning_rate`` (see above);
        ``"relative"`` and ``"absolute"`` as for :class:`DPSCD`.
    """

    name = "seq-dp-scd"
    _sequential = True
    _noised_duals = "every dual variable"
    _clip_modes = ("auto", "relative", "absolute")
    _parameter_constraints = {
        "clip_mode": [StrOptions({"auto", "relative", "absolute"})]
    }

    def __init__(self, clip_mode="auto"):
        self.clip_mode = clip_mode

    def resolve_hyperparameters(self, plan, epsilon, delta):
        """:class:`DPSCD`'s rule, or the ``clip_mode="auto"`` rule above.

        In ``"auto"`` mode the resolved ``learning_rate`` is the clip bound
        per unit ``clip_norm`` and is reported with ``max_iter`` and
        ``batch_size``.
        """
        if self.clip_mode != "auto":
            return super().resolve_hyperparameters(plan, epsilon, delta)
        auto_lr = _policy.is_auto(plan.learning_rate)
        if math.isinf(epsilon) or not 0 < delta < 1:
            auto_E = _policy.is_auto(plan.max_iter)
            plan, resolved = super().resolve_hyperparameters(plan, epsilon, delta)
            smooth = _policy.unclipped_smoothness(plan)
            if auto_E and smooth is not None:  # non-private plain SDCA
                D = plan.n_features + int(plan.fit_intercept)
                E = _coordinate_policy.seq_scd_unclipped_epochs(
                    plan.n_samples, D, plan.n_outputs, smooth, plan.alpha
                )
                plan = replace(plan, max_iter=max(plan.max_iter, E))
                resolved["max_iter"] = plan.max_iter
        else:
            n, K = plan.n_samples, plan.n_outputs
            D = plan.n_features + int(plan.fit_intercept)
            B = 1 if _policy.is_auto(plan.batch_size) else plan.batch_size
            E = plan.max_iter
            if _policy.is_auto(E):
                E = _coordinate_policy.seq_scd_epochs(n, D, K)
            plan = replace(plan, max_iter=int(E), batch_size=int(B))
            resolved = {"max_iter": plan.max_iter, "batch_size": plan.batch_size}
        relative = plan.alpha * plan.n_samples / self.batch(plan)
        if auto_lr:
            lr = relative
            if not math.isinf(epsilon) and 0 < delta < 1:
                plan = replace(plan, learning_rate=1.0)
                nm = self.calibrate(epsilon, delta, plan, accountant="rdp")
                step = _coordinate_policy.seq_scd_step(
                    n, self.batch(plan), E, nm, alpha_n=plan.alpha * n
                )
                lr = min(relative, step)
        else:
            lr = plan.learning_rate
        plan = replace(plan, learning_rate=float(lr))
        resolved["learning_rate"] = plan.learning_rate
        return plan, resolved

    def utility_warnings(self, plan, noise_multiplier):
        """In ``"auto"`` mode: dual noise that randomises the update signs.

        Over the run a dual variable gathers noise of standard deviation
        about ``2 sigma C sqrt((L + 1) n E)``; above 30 (the duals' scale is
        about 1) the updates are random.
        """
        if self.clip_mode != "auto":
            return super().utility_warnings(plan, noise_multiplier)
        if noise_multiplier <= 0:
            return []
        L, n, E = self.batch(plan), plan.n_samples, plan.max_iter
        s = 2.0 * noise_multiplier * math.sqrt((L + 1.0) * n * E)
        ratio = s * self.clip_bound(plan)
        if ratio <= 30.0:
            return []
        return [
            f"each dual variable gathers noise of standard deviation {ratio:.3g} "
            f"over the run (its scale is about 1), so the dual updates take "
            "random signs: reduce learning_rate or clip_norm (or batch_size), "
            "or increase epsilon."
        ]

    def sigma_prime(self, plan):
        return 1.0

    def sensitivity(self, plan):
        """``2 C sqrt(L (L + 1))`` (Lemma 5 of the paper)."""
        L = self.batch(plan)
        return 2.0 * self.clip_bound(plan) * math.sqrt(L * (L + 1.0))

    def _cap(self, plan):
        return self.batch(plan)

    def sampling(self, plan):
        base = super().sampling(plan)
        if self.sampling_prob(plan) >= 1.0:
            return base + ", visited in random order"
        return (
            base + f", visited in random order and truncated to its first "
            f"{self.batch(plan)} records"
        )
