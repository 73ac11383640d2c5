"""The classifiers' private utility check: is the fit better than a constant?

A private fit at its defaults can land at the majority-class rate (little
data for its budget, an imbalanced label set), and no public quantity tells
such a fit from a good one: German credit and breast cancer have about the
same ``n``, ``d`` and ``epsilon`` and opposite outcomes
(``benchmarks/results/utility_warning.md``). So the
:class:`~dpestim.UtilityWarning` of a classifier is a measurement: after the
fit, one Laplace release of

    ``D = #{i : predict(x_i) = y_i} - max_k #{i : y_i = k}``

on the training rows (the released model's correct predictions minus those of
the best constant), ``lift_ = (D + Laplace(Delta / epsilon_c)) / n``. The
model is post-processing of the fit's release, so the check composes
adaptively with it (basic composition, like the scale estimates); with the
model fixed, adding or removing one record moves each count by at most 1 in
the same direction (``|Delta D| <= 1``) and replacing one moves ``D`` by at
most 2 (:data:`LIFT_SENSITIVITY`). The warning fires when ``lift_`` does not
show the model :data:`CHECK_MARGIN` (1 point) above the majority rate by
:data:`CHECK_CONFIDENCE` (a quarter) of its Laplace scale ``b``: ``lift_ <
0.01 + 0.25 b``, so a fit exactly at the margin warns with probability ``1 -
e^{-0.25} / 2 = 0.61``, whatever ``b`` (derived on German credit, COMPAS and
digits of the defaults matrix, where ``z = 0, 0.25, 0.5, 0.75, 1`` gave F1
0.78, 0.87, 0.86, 0.83, 0.78 against the cells' test accuracy:
``benchmarks/results/utility_warning.md``).

A weighted fit (``class_weight``) is judged by its weighted accuracy:
each row counts its class's weight ``w_k`` over the largest (released or
public, so fixed), on both sides, ``D_w = sum_i w_{y_i} [predict(x_i) =
y_i] - max_k w_k n_k``, divided by the released total weight ``sum_k w_k
c_k`` (the fit's private class counts ``c_k``: post-processing). For
``"balanced"`` that is the balanced accuracy minus ``1 / K`` when the
released counts are accurate; noisy counts lower it (the best constant under
the fit's own weights scores above ``1 / K``), never lift a constant
predictor above 0 (Bank, 383 minority rows, one seed of five whose released
count was 264: ``benchmarks/results/constant_bank.md``). A row moves
``D_w`` by at most its weight, at most 1: the same sensitivities. Weighted
fits whose plan releases no class counts (a dict weight with a solver
that estimates none) are not checked.

The check's epsilon is public: the share of ``epsilon`` that makes the
Laplace scale of ``lift_`` :data:`CHECK_NOISE` (half a point), at most
``utility_check`` (default :data:`CHECK_SHARE_CAP`, 5%). It is reserved
before the fit (the solver is calibrated for the rest) and is part of
``dp_event_`` and :meth:`privacy_report`.
"""

import math

import numpy as np
import scipy.sparse as sp

from ..solvers._plan import row_class_codes

__all__ = [
    "CHECK_CONFIDENCE",
    "CHECK_MARGIN",
    "CHECK_NOISE",
    "CHECK_SHARE_CAP",
    "LIFT_SENSITIVITY",
    "check_epsilon",
    "check_fires",
    "lift_scale",
    "lift_statistic",
    "release_lift",
    "UtilityCheckMixin",
]

#: Laplace scale of the released lift (a fraction of the rows) the check's
#: share buys when ``n`` and ``epsilon`` allow it within the cap.
CHECK_NOISE = 0.005
#: Largest share of ``epsilon`` the check spends (``utility_check="auto"``).
CHECK_SHARE_CAP = 0.05
#: The warning fires when the released lift is below this (1 point): the
#: definition of a useless fit of ``benchmarks/utility/utility_warning.py``.
CHECK_MARGIN = 0.01
#: ... by this many Laplace scales of the release (module docstring).
CHECK_CONFIDENCE = 0.25
#: Sensitivity of ``D`` (module docstring) under each neighbouring relation.
LIFT_SENSITIVITY = {"add_or_remove_one": 1.0, "replace_one": 2.0}
#: Above this Laplace scale (a quarter of the lift's range of 2) the warning
#: says the check is too noisy to tell, instead of quoting the release.
NOISY_CHECK_SCALE = 0.25


def check_epsilon(epsilon, n_samples, neighbouring, share_cap=CHECK_SHARE_CAP):
    """Epsilon of the check (public: ``epsilon``, ``n``, the relation, the cap).

    The smallest epsilon giving ``lift_`` a Laplace scale of
    :data:`CHECK_NOISE`, at most ``share_cap * epsilon``.
    """
    wanted = LIFT_SENSITIVITY[neighbouring] / (CHECK_NOISE * n_samples)
    return float(min(wanted, share_cap * epsilon))


def lift_scale(epsilon, total, neighbouring):
    """Laplace scale of ``lift_``: the check's ``epsilon``, ``total`` its divisor."""
    return LIFT_SENSITIVITY[neighbouring] / (epsilon * total)


def check_fires(lift, scale, confidence=CHECK_CONFIDENCE):
    """Whether the release ``lift`` (Laplace scale ``scale``) warns (public)."""
    return lift < CHECK_MARGIN + confidence * scale


def release_lift(statistic, total, epsilon, neighbouring, rng):
    """``(lift_, scale, fires)``: the Laplace release of ``statistic`` (``D``
    or ``D_w``) over ``total``, projected onto the lift's range ``[-1, 1]``
    (post-processing: closer to the lift, never further; a 1-row fit
    released +2011% unclipped in a user trial; at a Laplace scale above
    about 4 every fit then warns, since its check cannot tell), its Laplace
    scale, and whether it warns."""
    released = statistic + rng.laplace(scale=LIFT_SENSITIVITY[neighbouring] / epsilon)
    lift = float(np.clip(released / total, -1.0, 1.0))
    scale = lift_scale(epsilon, total, neighbouring)
    return lift, scale, check_fires(lift, scale)


def lift_statistic(predicted, codes, n_classes, weights=None):
    """``D``: correct predictions minus the largest class count (exact).

    ``predicted`` and ``codes``: class codes (``0 .. n_classes - 1``) of the
    model's predictions and of the labels. ``weights``: one per class, in
    ``[0, 1]`` (a weighted fit's class weights over their largest): each row
    then counts its class's weight, on both sides (``D_w``, the module).
    """
    predicted = np.asarray(predicted)
    codes = np.asarray(codes)
    w = np.ones(n_classes) if weights is None else np.asarray(weights, float)
    correct = float(np.sum(w[codes[predicted == codes]]))
    totals = w * np.bincount(codes, minlength=n_classes)
    largest = float(totals.max()) if codes.size else 0.0
    return correct - largest


class UtilityCheckMixin:
    """The check of a private classifier (see the module)."""

    def _check_share_cap(self):
        """The check's largest share of ``epsilon`` (``None``: no check)."""
        check = self.utility_check
        if check is None:
            return None
        return CHECK_SHARE_CAP if isinstance(check, str) else float(check)

    def _plan_check(self, n, blocked, solver, scale_plan):
        """The check's epsilon, or ``None`` (public: the parameters, ``n``).

        Only for a private fit with ``epsilon`` given (a fixed
        ``noise_multiplier`` has no budget to share) and in-memory ``X``; with
        ``class_weight``, only when the plan releases the class counts (the
        weighted lift's denominator; always for ``"balanced"``).
        """
        self.lift_ = None  # set by the check when it runs
        cap = self._check_share_cap()
        eps = self.epsilon
        if (
            cap is None
            or eps is None
            or not math.isfinite(eps)
            or getattr(self, "noise_multiplier", None) is not None
            or blocked
            or (self.class_weight is not None and scale_plan.class_epsilon is None)
        ):
            return None
        return check_epsilon(float(eps), n, solver.neighbouring, cap)

    def _exact_check(self, X, Y):
        """The check of a non-private fit (``epsilon = inf``): exact, no noise.

        A non-private fit may read its data, so its training accuracy is
        compared with the best constant's exactly; ``[]`` when it is better
        (or ``utility_check=None``). Its reason is seldom noise: a column on
        a far larger scale than the others (a constant 100, a year) sets the
        row scale and the other columns barely move the model within the
        run's steps (a9a plus a constant column of 100: 0.764, the majority
        rate, against scikit-learn's 0.850).
        """
        if self.utility_check is None:
            return []
        codes = row_class_codes(Y)
        predicted = self._class_codes(self._scores(X))
        lift = lift_statistic(predicted, codes, self.classes_.shape[0])
        if lift > 0:
            return []
        return [
            "the non-private fit (epsilon=inf) is no better than predicting "
            "one class on its own training rows (an exact check, not "
            "private). Usual cause: columns on very different scales (one "
            "column much larger than the others sets the row scale); rescale "
            "the columns by public constants, or raise max_iter."
        ]

    def _utility_check(self, X, Y, epsilon, neighbouring, rng, diagnosis, balance):
        """Release ``lift_``; the check's warnings (``[]`` when the fit learns).

        ``X``: the training rows as given (the released ``coef_`` is in their
        units); ``diagnosis``: the plan's public messages, given as the likely
        reason when the check fires; ``balance``: the fit's class balance (a
        weighted fit's released counts).
        """
        codes = row_class_codes(Y)
        predicted = self._class_codes(self._scores(X))
        K = self.classes_.shape[0]
        weights, total, what = None, codes.shape[0], "accuracy"
        if self.class_weight_ is not None:
            # post-processing of the released weights and counts
            weights = self.class_weight_ / np.max(self.class_weight_)
            total = float(np.sum(weights * balance.counts))
            what = "class-weighted accuracy (balanced accuracy for 'balanced')"
        self.lift_, scale, fires = release_lift(
            lift_statistic(predicted, codes, K, weights),
            total,
            epsilon,
            neighbouring,
            rng,
        )
        if not fires:
            return []
        if scale > NOISY_CHECK_SCALE:
            # a lift is within [-1, 1]; at this n x epsilon the release is
            # mostly noise (e.g. -1227448.4% at epsilon 1e-6): say so
            message = (
                f"the model is not shown to be better than predicting one "
                f"class: at this n_samples x epsilon the private check of its "
                f"training {what} is too noisy to tell (Laplace noise of scale "
                f"{scale:.3g}, against a largest possible difference of 1; "
                f"epsilon {epsilon:.3g}, counted in the guarantee)"
            )
        else:
            message = (
                f"the model is not clearly better than predicting one class: "
                f"its training {what} minus the best constant's is "
                f"{self.lift_:+.1%} by a private check (Laplace noise of scale "
                f"{scale:.1%}, epsilon {epsilon:.3g}, counted in the guarantee)"
            )
        if diagnosis:
            return [f"{message}; the plan's public diagnosis: {' '.join(diagnosis)}"]
        if sp.issparse(X):
            centring = (
                " (sparse X is not centred in fit, since centring would fill "
                "it: pass dense X, e.g. ColumnTransformer(sparse_threshold=0), "
                "for feature_centring to centre the columns privately)"
            )
        elif getattr(self, "feature_centre_", None) is None:
            # the plan's public reason where the centring was asked for
            note = getattr(self, "hyperparameters_", {}).get("feature_centring", "")
            here = f"; here it did {note}" if note.startswith("not run") else ""
            centring = (
                " (without public constants: feature_centring centres them "
                f"privately where n x epsilon affords it{here})"
            )
        else:  # centred already: what is left is the columns' spreads
            centring = (
                " (the columns were centred privately; columns whose spreads "
                "differ by orders of magnitude need per-column scales, e.g. "
                "dpestim.preprocessing.StandardScaler with public bounds)"
            )
        return [
            f"{message}: if a column has a large offset or scale (a year, a "
            "constant, a count or an amount in raw units, which a larger "
            "epsilon does not fix), centre and rescale the columns by public "
            f"constants first{centring}; otherwise more rows or a larger "
            "epsilon would help; see the solver guide for the plan's settings."
        ]
