"""What the one-shot solvers share: one release, no steps, rows clipped in place."""

from ..base import ROW_CLIPPING_TARGET, BaseSolver

__all__ = ["OneShotSolver", "SCALE_SHARE_CAP"]

#: ``scale_share_cap`` of the one-shot solvers: their noise is set by the
#: bounds (row norm, target range) and, below a few thousand rows, the
#: default 5% of epsilon is too little for a reliable private scale (the
#: row-norm median needs ``epsilon n >= 51``, a target range up to five
#: draws of ``epsilon n >= 54``); unscaled rows of norm 0.15 under ``clip_norm`` 1
#: left AdaSSP at R^2 0.04 on diabetes (epsilon 2) and with no target range
#: AdaSSP cannot run. Up to half the budget may then go to the estimates.
SCALE_SHARE_CAP = 0.5


class OneShotSolver(BaseSolver):
    """A solver that releases the data once and post-processes the release.

    It has no steps, batches or learning rate (``n_steps`` is 1), clips the
    rows themselves at ``clip_norm`` (hence its ``row_norm_target``), and its
    plan raises no step-rule warnings.
    """

    privacy_notion = "approx"
    neighbouring = "add_or_remove_one"
    row_norm_target = ROW_CLIPPING_TARGET  # it clips the rows themselves
    scale_share_cap = SCALE_SHARE_CAP

    def _dim(self, plan):
        """Number of coefficients, the intercept's included."""
        return plan.n_features + int(plan.fit_intercept)

    def n_steps(self, plan):
        return 1

    def utility_warnings(self, plan, noise_multiplier):
        return []
