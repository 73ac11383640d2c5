"""What the one-shot solvers share: one release, no steps, rows clipped in place."""

from ..base import ROW_CLIPPING_TARGET, BaseSolver

__all__ = ["OneShotSolver"]


class OneShotSolver(BaseSolver):
    """A solver that releases the data once and post-processes the release.

    It has no steps, batches or learning rate (``n_steps`` is 1), clips the
    rows themselves at ``clip_norm`` (hence its ``row_norm_target``), and its
    plan raises no step-rule warnings.
    """

    privacy_notion = "approx"
    neighbouring = "add_or_remove_one"
    row_norm_target = ROW_CLIPPING_TARGET  # it clips the rows themselves

    def _dim(self, plan):
        """Number of coefficients, the intercept's included."""
        return plan.n_features + int(plan.fit_intercept)

    def n_steps(self, plan):
        return 1

    def utility_warnings(self, plan, noise_multiplier):
        return []
