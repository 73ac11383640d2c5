"""The plan of a private fit: noise, clip norm and the ``"auto"`` hyperparameters.

A mixin of :class:`~dpestim.linear_model._base.BaseDPLinearModel`: from the
estimator's parameters and public quantities (``n``, ``d``, the loss, the
solver, epsilon and delta) it resolves the clip norm, the solver's
hyperparameters (:meth:`PlanMixin._resolve_plan`) and the noise multiplier
with its ``DpEvent`` (:meth:`PlanMixin._resolve_noise`). Nothing here reads
the data, except the largest and RMS row norms of a non-private fit
(:meth:`PlanMixin._nonprivate_row_norms`).
"""

import math
from dataclasses import replace

from sklearn.base import clone

from ..exceptions import PrivacyBudgetWarning, UtilityWarning
from ..privacy import check_guarantee
from ..solvers import ERMPlan, _policy
from ..solvers._policy import AUTO
from ..utils._rows import row_sq_norms

__all__ = ["MAX_NOISE_MULTIPLIER", "PlanMixin"]

#: Largest noise multiplier (and clip norm): beyond it the noise, or the
#: accountant's ``alpha / (2 s^2)``, leaves the range of float64 arithmetic.
MAX_NOISE_MULTIPLIER = 1e100


class PlanMixin:
    """``_resolve_noise``, ``_resolve_plan`` and the public rules they use."""

    def _resolve_noise(self, solver, plan, spent=0.0):
        """Noise multiplier, reported epsilon, and the event, from public data.

        ``spent``: the epsilon of the fit's scale estimates (pure DP), which
        the solver's run is calibrated to leave room for.
        """
        clip_norm = plan.clip_norm
        eps, delta, nm = self.epsilon, self.delta, self.noise_multiplier
        if eps is not None and nm is not None:
            raise ValueError(
                "Give either epsilon or noise_multiplier, not both: set "
                "epsilon=None to fix noise_multiplier and have epsilon reported."
            )
        if eps is None and nm is None:
            raise ValueError("One of epsilon and noise_multiplier must be given.")
        private = nm > 0 if nm is not None else math.isfinite(eps)
        if private and plan.row_norm is not None:
            # never: the plan of a private fit holds public quantities only
            raise RuntimeError("a private plan must not carry the data's row norm")
        if private and not math.isfinite(clip_norm):
            raise ValueError(
                "clip_norm must be finite for a private fit; clip_norm=inf is only "
                "allowed with epsilon=inf (or noise_multiplier=0)."
            )
        if private and solver.privacy_notion == "approx" and delta == 0:
            raise ValueError(
                f"delta must be > 0 for solver={solver.name!r}, whose Gaussian "
                "mechanism gives (epsilon, delta)-DP only."
            )
        pure = solver.guarantee_delta(delta) == 0
        if private and not pure and delta > 0 and delta >= 1.0 / plan.n_samples:
            self._warn(
                f"delta={delta:g} >= 1/n_samples={1.0 / plan.n_samples:.3g}: such a "
                "guarantee allows releasing a whole record with probability delta. "
                "Choose delta well below 1/n_samples.",
                PrivacyBudgetWarning,
            )
        if not private:
            nm = 0.0
        elif nm is None:
            nm = solver.calibrate(eps - spent, delta, plan, accountant=self.accountant)
        if not nm <= MAX_NOISE_MULTIPLIER:
            raise ValueError(
                f"epsilon={eps!r} is too small for this run: it needs noise_multiplier="
                f"{nm:.3g} > {MAX_NOISE_MULTIPLIER:g}, and the model would be noise "
                "only. Raise epsilon."
            )
        event = solver.make_event(nm, plan)
        epsilon = (
            solver.spent_epsilon(event, delta, accountant=self.accountant)
            if private
            else math.inf
        )
        # The invariant: never run a mechanism accounted above the request.
        check_guarantee(
            epsilon, eps if spent == 0 else eps - spent, what=f"solver={solver.name!r}"
        )
        return float(nm), epsilon, event

    # -- the policy step: private scales ----------------------------------------

    def _policy_epsilon(self):
        """The epsilon the ``"auto"`` rules plan for (public).

        ``epsilon`` itself; with ``epsilon=None`` (a fixed
        ``noise_multiplier``), ``inf`` for ``noise_multiplier=0`` and 1
        otherwise.
        """
        if self.epsilon is not None:
            return float(self.epsilon)
        if self.noise_multiplier is not None and self.noise_multiplier == 0:
            return math.inf
        return 1.0

    def _clip_norm(self, blocked=False):
        """The clip norm of this fit (``"auto"`` resolved; public).

        ``"auto"``: ``inf`` when the fit is non-private (``epsilon=inf`` or
        ``noise_multiplier=0``) and 1.0 otherwise; for blocked (Dask,
        out-of-core) ``X``, 1.0 always (the unclipped step rule needs the
        largest row norm, which would cost another pass over the blocks).
        """
        eps = self._policy_epsilon()
        if blocked and _policy.is_auto(self.clip_norm):
            return _policy.PRIVATE_CLIP_NORM
        return _policy.resolve_clip_norm(self.clip_norm, eps)

    def _nonprivate_row_norms(self, X, clip_norm):
        """Largest and RMS norm of a row ``(x, 1)``, for an unclipped fit.

        Read from the data, hence ``(None, None)`` unless the fit is
        non-private (``epsilon=inf`` / ``noise_multiplier=0``) and does not
        clip.
        """
        if math.isfinite(clip_norm) or not math.isinf(self._policy_epsilon()):
            return None, None
        sq = row_sq_norms(X)
        if not sq.shape[0]:
            return None, None
        one = float(bool(self.fit_intercept))
        return math.sqrt(float(sq.max()) + one), math.sqrt(float(sq.mean()) + one)

    def _resolve_plan(
        self,
        solver,
        n,
        d,
        n_outputs,
        loss,
        *,
        clip_norm,
        norms,
        alpha=None,
        blocked=False,
    ):
        """The ERM plan with its ``"auto"`` values resolved by the solver.

        Public quantities only, except ``norms`` (the data's largest and RMS
        row norms), which only a non-private fit passes, for its step rule. Warns
        (:class:`~dpestim.UtilityWarning`) when an explicit ``max_iter`` gives
        ten times more or fewer steps than the ``"auto"`` rule would.
        """
        raw = ERMPlan(
            n_samples=n,
            n_features=d,
            n_outputs=n_outputs,
            loss=loss,
            alpha=_policy.resolve_alpha(self.alpha, 1.0)[1]
            if alpha is None
            else float(alpha),
            fit_intercept=bool(self.fit_intercept),
            clip_norm=clip_norm,
            row_norm=norms[0],
            row_norm_rms=norms[1],
            blocked=bool(blocked),
            max_iter=self.max_iter if self.max_iter == AUTO else int(self.max_iter),
            batch_size=(
                self.batch_size if self.batch_size == AUTO else int(self.batch_size)
            ),
            learning_rate=(
                self.learning_rate
                if self.learning_rate == AUTO
                else float(self.learning_rate)
            ),
        )
        eps = self._policy_epsilon()
        probe = clone(solver) if self.max_iter != AUTO else None
        plan, resolved = solver.resolve_hyperparameters(raw, eps, self.delta)
        if probe is not None:
            auto, _ = probe.resolve_hyperparameters(
                replace(raw, max_iter=AUTO), eps, self.delta
            )
            ours, theirs = solver.n_steps(plan), probe.n_steps(auto)
            if ours > 10 * theirs or 10 * ours < theirs:
                self._warn(
                    f"max_iter={self.max_iter} gives {ours} steps, far from the "
                    f"{theirs} of max_iter='auto' for solver={solver.name!r} at "
                    f"this n, d and epsilon; consider max_iter='auto'.",
                    UtilityWarning,
                )
        return plan, resolved
