"""The private utility check of the minimax and fair classifiers.

The linear classifiers' check (:mod:`dpestim.linear_model._utility_check`),
on :class:`~dpestim.MinimaxLogisticRegression` and
:class:`~dpestim.FairLogisticRegression`: after the fit, one Laplace release
of the released model's correct training predictions minus those of the
best constant, ``lift_ = (D + Laplace(Delta / epsilon_c)) / n`` (``Delta``
1 add/remove, 2 replace-one: the model is fixed, post-processing of the
fit's release). Its epsilon is reserved with the scale estimates, charged
with them before anything reads the data, composed into ``dp_event_`` and
counted inside ``epsilon``; the solver runs on the rest. A
:class:`~dpestim.UtilityWarning` says so when ``lift_`` does not show the
model a point above the majority rate (``lift_ < 0.01 + 0.25 b``).

Why: a worst-group or fair fit can land at the majority rate with nothing
public to tell (a user trial: ``FairLogisticRegression`` on COMPAS without
the sensitive attribute among the features predicted one class, 0.545,
silently). A fairness constraint can also force it (a parity bound a
useful model cannot meet): the warning says both.
"""

import math

import numpy as np

from ..exceptions import UtilityWarning
from ..linear_model._utility_check import (
    CHECK_SHARE_CAP,
    NOISY_CHECK_SCALE,
    check_epsilon,
    lift_statistic,
    release_lift,
)

__all__ = ["MinimaxUtilityCheckMixin"]

_DOC_CHECK_PARAM = """utility_check : "auto", float in (0, 1) or None, default="auto"
        A private check, after the fit, that the model predicts better than
        the majority class, as :class:`~dpestim.LogisticRegression`'s: one
        Laplace release of its correct training predictions minus the
        largest class count (sensitivity 1 add/remove, 2 replace-one), over
        ``n``, in ``lift_``; a :class:`~dpestim.UtilityWarning` when it
        does not show the model a point above the majority rate. ``"auto"``:
        the share of ``epsilon`` giving ``lift_`` a Laplace scale of half a
        point, at most 5%; a float: that largest share; ``None``: no check
        (the former fit, bit for bit). Reserved and charged with the scale
        estimates, part of ``dp_event_`` and inside ``epsilon``. Private
        fits only."""

_DOC_CHECK_ATTR = """lift_ : float or None
        The utility check's release: training accuracy minus the
        majority-class rate plus Laplace noise (a DP release), clipped to
        ``[-1, 1]``; ``None`` when no check ran."""


class MinimaxUtilityCheckMixin:
    """``utility_check`` of a binary minimax classifier (see the module)."""

    def _check_epsilon(self, n, solver):
        """The check's epsilon, or ``None`` (public: the parameters, ``n``,
        the solver's relation). Private fits only (``epsilon`` finite)."""
        self.lift_ = None  # set when the check runs
        check = self.utility_check
        eps = float(self.epsilon)
        if check is None or not math.isfinite(eps):
            return None
        cap = CHECK_SHARE_CAP if isinstance(check, str) else float(check)
        return check_epsilon(eps, n, solver.neighbouring, cap)

    def _utility_messages(self, X, target, epsilon, neighbouring, rng):
        """Release ``lift_`` on the training rows ``X`` (as given) and their
        ``target`` (+-1); the check's warnings (``[]`` when the fit learns)."""
        codes = (np.asarray(target) > 0).astype(np.int64)
        predicted = (self.decision_function(X) > 0).astype(np.int64)
        self.lift_, scale, fires = release_lift(
            lift_statistic(predicted, codes, 2),
            codes.shape[0],
            epsilon,
            neighbouring,
            rng,
        )
        if not fires:
            return []
        if scale > NOISY_CHECK_SCALE:
            what = (
                "at this n_samples x epsilon the private check of its training "
                f"accuracy is too noisy to tell (Laplace noise of scale {scale:.3g}"
            )
        else:
            what = (
                f"its training accuracy minus the best constant's is "
                f"{self.lift_:+.1%} by a private check (Laplace noise of scale "
                f"{scale:.1%}"
            )
        what += f", epsilon {epsilon:.3g}, counted in the guarantee)"
        constraint = (
            " or the fairness constraint (difference_bound) cannot be met by a "
            "model better than one class;"
            if hasattr(self, "constraint")
            else ""
        )
        return [
            f"the model is not clearly better than predicting one class: {what}. "
            "Likely causes: too little data for epsilon (the worst-group and "
            "fair solvers need more rows than a plain LogisticRegression);"
            f"{constraint} the features do not carry the label well for "
            "every group (keep the sensitive attribute among the features: "
            "COMPAS without race gave the majority rate)."
        ]

    def _run_utility_check(self, rng):
        """Warn, after the fit, where the check's release says so."""
        plan = self._fs.scale_plan
        if plan.check_epsilon is None:
            return
        for message in self._utility_messages(
            self._fs.rows_given,
            self._fs.target,
            plan.check_epsilon,
            self.solver_.neighbouring,
            rng,
        ):
            self._warn(message, UtilityWarning)
