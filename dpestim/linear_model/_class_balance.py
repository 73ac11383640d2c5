"""The classifiers' policy step on class balance: private class counts.

A mixin of :class:`~dpestim.linear_model._classifier.BaseDPLinearClassifier`.
One Laplace histogram of the labels
(:func:`~dpestim.preprocessing._fit_scales.private_class_counts`), planned
with the private scales (:class:`~dpestim.linear_model._scales.PrivateScalesMixin`:
the same share ``scale_share`` of ``epsilon``, charged before any data is
read, composed into ``dp_event_`` and counted inside the requested
epsilon), feeds

* the **class prior**: the run's initial intercept is the intercept-only
  optimum of the (weighted) loss at the released proportions
  (``class_prior="auto"``; the estimators' ``_prior_intercept``);
* ``class_weight="balanced"``: scikit-learn's ``n / (K c_k)`` from the same
  released counts (no second look at the data).

Class weights reach the solver normalised by their largest value (each
example's clipped gradient times a weight in ``[0, 1]``, or, for dual
coordinate descent, each example's loss weighted in its dual update, which
is clipped afterwards: the sensitivity stays that of the unweighted run),
with ``alpha`` divided by that value: the objective
``mean_i w_i loss_i + alpha / 2 ||W||^2`` divided by ``max w``, which has the
same minimiser. Whether the histogram runs is public: the parameters,
``epsilon`` and the solver's kind.
"""

import math
from numbers import Real

import numpy as np

from ..preprocessing import _fit_scales as _scales
from ..solvers.base import row_class_codes
from ..utils import check_label_values

__all__ = ["ClassBalanceMixin"]

#: Share of the rows in one class (``class_prior_``: the released
#: proportions, or public given ones) at or above which a private fit warns
#: that its accuracy will stay near the majority rate (a
#: :class:`~dpestim.UtilityWarning`): accuracy can exceed that rate by at most
#: the other classes' share, ``1 - p_max <= 0.05`` here, and a private fit
#: at the defaults recovers little of it (w8a, 97% one class: every private
#: cell of the defaults matrix, every solver and epsilon <= 2, within 1 point
#: of the majority rate; scikit-learn 1.6 points above it). A rule of thumb
#: on the proportions alone: the matrix has no other set this imbalanced.
IMBALANCE_WARNING_SHARE = 0.95

#: Smallest count a class is given before the proportions are formed (noisy
#: counts may be 0 or negative; the prior's logarithm and the balanced
#: weights must stay finite).
COUNT_FLOOR = 1.0
#: ``"balanced"`` weights are formed from the released counts floored at this
#: many standard deviations of the histogram's noise (public: ``epsilon`` and
#: the neighbouring relation): a smaller count cannot be told from an empty
#: class. With the floor at 1 a class listed in ``classes`` but absent from
#: the data got a weight of up to ``n / K``, every other class's examples
#: were scaled down to about ``K / n`` of it, and the model predicted the
#: absent class for 14% of the rows (3,000 synthetic rows, 4 classes, epsilon
#: 1); a class of 2% of 1,000 MNIST rows (digits 0-3) got balanced accuracy
#: 0.48-0.54 against 0.71 unweighted. Counts well above the noise (every
#: class of the defaults matrix) are unchanged.
BALANCED_NOISE_FLOOR = 3.0


class ClassBalance:
    """What the class-balance step hands to the plan (public after release).

    Attributes
    ----------
    intercept_init : tuple or None
    class_weights : tuple or None
        Per-class weights normalised to a largest value of 1.
    weight_max : float
        The largest weight before normalisation (1 without weights); the
        plan's ``alpha`` is divided by it.
    notes : dict
    """

    def __init__(self, intercept_init=None, class_weights=None, weight_max=1.0):
        self.intercept_init = intercept_init
        self.class_weights = class_weights
        self.weight_max = float(weight_max)
        self.notes = {}
        #: ``UtilityWarning`` messages (from the released or given proportions)
        self.warnings = []
        #: The released (or, non-private, exact) class counts, floored; ``None``
        #: when none were measured (read by the utility check of a weighted fit)
        self.counts = None


class ClassBalanceMixin:
    """Private class counts, the class prior and class weights (see the module)."""

    def _prior_wanted(self, solver):
        """Whether the fit starts at a prior intercept estimated from ``y``."""
        return (
            isinstance(self.class_prior, str)
            and bool(self.fit_intercept)
            and solver is not None
            and bool(getattr(solver, "supports_initial_point", False))
        )

    def _balanced(self):
        return isinstance(self.class_weight, str)

    def _check_class_weight_solver(self, solver, blocked=False):
        """Refuse ``class_weight`` before any data is read, with a reason."""
        if self.class_weight is None:
            return
        if blocked:
            raise ValueError(
                f"class_weight={self.class_weight!r} is not supported on blocked "
                "X (Dask, memory-mapped or zarr data): fit in memory or set "
                "class_weight=None."
            )
        if not getattr(solver, "supports_class_weight", False):
            from ..solvers import SOLVERS

            names = ", ".join(
                name for name, cls in SOLVERS.items() if cls.supports_class_weight
            )
            raise ValueError(
                f"class_weight={self.class_weight!r} is not supported by "
                f"solver={solver.name!r}: only the solvers that weight each "
                f"example's clipped contribution take it ({names}). Use one "
                "of them or class_weight=None."
            )
        if self._balanced() and self.epsilon is None and self.noise_multiplier:
            raise ValueError(
                "class_weight='balanced' needs epsilon: its class counts are "
                "estimated privately with a share of it, and a fixed "
                "noise_multiplier leaves no budget to share. Give epsilon, or "
                "a dict of public weights."
            )

    def _estimated_classes(self, y, solver, blocked=False):
        self._check_class_weight_solver(solver, blocked)
        balanced = self._balanced()
        # the plan runs estimates only for a private fit with a budget
        if not (self._prior_wanted(solver) or balanced):
            return {}
        # the number of classes: public when classes= is given; otherwise
        # the label set is released through classes_ anyway (with a
        # PrivacyLeakWarning), and only its size is used here
        if self.classes is None:
            check_label_values(y, "y")  # the clear error for mixed labels
            K = np.unique(y).size
        else:
            K = len(self.classes)
        return {
            "classes": True,
            "n_classes": max(int(K), 2),
            "count_sensitivity": _scales.COUNT_L1_SENSITIVITY[solver.neighbouring],
            "classes_required": balanced,
        }

    def _check_class_prior(self, n_classes):
        """A given ``class_prior`` as proportions (public), validated."""
        p = np.asarray(self.class_prior, dtype=np.float64)
        given = getattr(self, "classes", None)
        if given is not None and list(np.asarray(given)) != list(self.classes_):
            # classes_ is sorted; a prior in the order of an unsorted classes=
            # was silently given to the wrong classes
            raise ValueError(
                "class_prior is read one per class in the order of classes_, "
                f"which is sorted: {self.classes_.tolist()}; classes was given as "
                f"{list(np.asarray(given).tolist())}. Pass classes in sorted order "
                "(with class_prior in that order)."
            )
        if p.ndim != 1 or p.shape[0] != n_classes:
            raise ValueError(
                f"class_prior must be 'auto', None or an array of {n_classes} "
                f"proportions (one per class of classes_); got shape {p.shape}."
            )
        if not (np.isfinite(p).all() and (p > 0).all()):
            raise ValueError(
                f"class_prior must hold finite proportions > 0, got {p.tolist()}."
            )
        return p / p.sum()

    def _dict_weights(self):
        """``class_weight`` (a dict, public) as one weight per class of ``classes_``."""
        classes = self.classes_
        w = np.ones(classes.shape[0])
        for label, value in self.class_weight.items():
            hit = np.flatnonzero(classes == label) if _comparable(label) else []
            if len(hit) != 1:
                raise ValueError(
                    f"class_weight has a key {label!r} that is not a class; "
                    f"classes_ is {classes.tolist()}."
                )
            if (
                isinstance(value, bool)
                or not isinstance(value, Real)
                or not math.isfinite(value)
                or value < 0
            ):
                raise ValueError(
                    f"class_weight[{label!r}] must be a finite number >= 0, got "
                    f"{value!r}."
                )
            w[hit[0]] = float(value)
        if not w.max() > 0:
            raise ValueError("class_weight must give some class a weight > 0.")
        return w

    def _class_counts(self, Y, scale_plan, rng, solver):
        """``(counts, how)`` of the fit, or ``(None, note)`` when not measured."""
        K = self.classes_.shape[0]
        codes = row_class_codes(Y)
        if scale_plan.class_epsilon is not None:
            counts = _scales.private_class_counts(
                codes, K, scale_plan.class_epsilon, solver.neighbouring, rng
            )
            return counts, (
                f"private (Laplace histogram of the class counts, epsilon "
                f"{scale_plan.class_epsilon:.4g})"
            )
        if math.isinf(self._policy_epsilon()):
            counts = _scales.class_counts(codes, K)
            return counts, "exact (read from the data: not private; non-private fit)"
        return None, scale_plan.notes.get("class_prior") or (
            "not estimated: a fixed noise_multiplier leaves no budget to share "
            "(the run starts at intercept 0)"
        )

    def _class_balance(self, Y, scale_plan, rng, solver):
        """The :class:`ClassBalance` of this fit (draws the histogram if planned).

        Sets ``class_prior_`` (the proportions the initial intercept was
        computed from: a DP release, a public given value, or, for a
        non-private fit only, the exact proportions; ``None`` if the run
        starts at 0) and ``class_weight_`` (one weight per class, in
        scikit-learn's scale: the dict's values, or ``n / (K c_k)`` from the
        released counts for ``"balanced"``; ``None`` without weights).
        """
        self.class_prior_ = None
        self.class_weight_ = None
        K = self.classes_.shape[0]
        out = ClassBalance()
        need_counts = self._balanced() or (
            self._prior_wanted(solver) and self.fit_intercept
        )
        counts, how = (None, "")
        if need_counts:
            counts, how = self._class_counts(Y, scale_plan, rng, solver)
            if counts is not None:
                counts = np.maximum(counts, COUNT_FLOOR)
                out.counts = counts
                out.warnings += _imbalance_warnings(
                    counts / counts.sum(), how, self._balanced()
                )
        # class weights, scikit-learn's scale
        w = None
        if self.class_weight is not None:
            if self._balanced():
                if counts is None:  # pragma: no cover - refused before
                    raise ValueError("class_weight='balanced' needs class counts.")
                floor = COUNT_FLOOR
                if scale_plan.class_epsilon is not None and how.startswith("private"):
                    noise_sd = (
                        math.sqrt(2.0)
                        * _scales.COUNT_L1_SENSITIVITY[solver.neighbouring]
                        / scale_plan.class_epsilon
                    )
                    floor = max(floor, BALANCED_NOISE_FLOOR * noise_sd)
                w = counts.sum() / (K * np.maximum(counts, floor))
                out.notes["class_weight"] = (
                    f"balanced, from the {how} counts floored at {floor:.4g} "
                    f"({BALANCED_NOISE_FLOOR:g} noise standard deviations)"
                    if floor > COUNT_FLOOR
                    else f"balanced, from the {how} counts"
                )
            else:
                w = self._dict_weights()
                out.notes["class_weight"] = "given (public)"
            self.class_weight_ = w
            out.weight_max = float(w.max())
            out.class_weights = tuple(float(v) for v in w / w.max())
        # the prior
        if self.class_prior is None or not self.fit_intercept:
            return out
        if not isinstance(self.class_prior, str):
            p = self._check_class_prior(K)
            how = "given (public)"
            if not math.isinf(self._policy_epsilon()):
                out.warnings += _imbalance_warnings(p, how, self._balanced())
        elif not self._prior_wanted(solver):
            out.notes["class_prior"] = (
                f"not used: solver={solver.name!r} has no initial point to "
                "start from (it starts from its own)"
            )
            return out
        elif counts is None:
            out.notes["class_prior"] = how
            return out
        else:
            p = counts / counts.sum()
        self.class_prior_ = p
        # the intercept-only optimum of the weighted loss: proportions p_k w_k
        q = p if w is None else p * w / np.sum(p * w)
        b0 = np.asarray(self._prior_intercept(q), dtype=np.float64)
        # the values themselves are in class_prior_ (hyperparameters_ holds
        # how they were resolved, the same for any data of this shape)
        out.notes["class_prior"] = (
            f"{how}; the run starts at its intercept-only optimum"
            + (" (weighted by class_weight)" if w is not None else "")
        )
        out.intercept_init = tuple(float(v) for v in b0)
        return out


def _imbalance_warnings(p, how, balanced):
    """The ``UtilityWarning`` of proportions ``p`` with one class at
    :data:`IMBALANCE_WARNING_SHARE` or more (``[]`` otherwise).

    Post-processing of the released (or public given) proportions: it reads
    nothing else. Non-private fits (exact proportions) do not warn.
    """
    p = np.asarray(p, dtype=np.float64)
    top = float(p.max() / p.sum())
    if top < IMBALANCE_WARNING_SHARE or how.startswith("exact"):
        return []
    source = "given" if how.startswith("given") else "private estimate"
    advice = (
        "judge the model by balanced accuracy or AUC"
        if balanced
        else "pass class_weight='balanced' and judge the model by balanced "
        "accuracy or AUC"
    )
    return [
        f"the class proportions ({source}: {top:.1%} in one class) leave at "
        f"most {1.0 - top:.1%} of accuracy above the majority rate, and a "
        "private fit at its defaults usually stays within a point of that "
        f"rate: {advice}."
    ]


def _comparable(label):
    """Whether ``label`` can be compared with ``classes_`` element-wise."""
    return isinstance(label, (str, bytes, Real, np.generic))
