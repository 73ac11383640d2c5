"""Private group-specific thresholds (Hardt, Price and Srebro, 2016 style)."""

import dataclasses
import math
import warnings
from numbers import Integral, Real

import numpy as np
from dp_accounting import ComposedDpEvent, GaussianDpEvent, NonPrivateDpEvent
from scipy.optimize import linprog
from scipy.special import expit
from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    MetaEstimatorMixin,
    clone,
    is_classifier,
)
from sklearn.exceptions import NotFittedError
from sklearn.utils._param_validation import HasMethods, Interval, Options, StrOptions
from sklearn.utils.validation import check_is_fitted

from ..exceptions import PrivacyLeakWarning
from ..privacy import PrivacyReport, calibrate_noise, compute_epsilon
from ..privacy.charging import FitCharge, charge_fit

__all__ = ["HISTOGRAM_SENSITIVITY", "PrivateThresholdOptimizer"]

#: L2 sensitivity of the (group, label, score bin) count vector under each
#: neighbouring relation. Adding or removing one record changes one count by
#: one; replacing one record moves one unit from its old cell to its new one
#: (two counts change by one: ``sqrt(2)``). dp-accounting's RDP accountant
#: reads ``GaussianDpEvent(s)`` as a sensitivity-one Gaussian of standard
#: deviation ``s`` under either relation, so the noise drawn is
#: ``s * HISTOGRAM_SENSITIVITY[relation]`` (checked by brute force on random
#: neighbouring datasets in ``tests/postprocessing/test_threshold.py``).
HISTOGRAM_SENSITIVITY = {"add_or_remove_one": 1.0, "replace_one": math.sqrt(2.0)}


def _is_fitted(estimator):
    try:
        check_is_fitted(estimator)
    except NotFittedError:
        return False
    return True


def _n_rows(x, name):
    """Number of rows of ``x`` (a public quantity), or a clear TypeError."""
    shape = getattr(x, "shape", None)
    if shape is None:
        shape = np.shape(np.asarray(x, dtype=object))
    if len(shape) == 0:
        raise TypeError(f"{name} must be array-like, got {type(x).__name__}.")
    return int(shape[0])


def _base_guarantee(estimator):
    """``(report, dp_event, epsilon, delta)`` of a fitted base estimator.

    ``report`` is a :class:`~dpestim.privacy.PrivacyReport` describing the
    mechanism (for :class:`~dpestim.model_selection.PrivateSearchCV`, whose
    report is text, that of the selected candidate, whose relation is the
    search's); the event and guarantee are the whole base's.
    """
    report = estimator.privacy_report()
    if isinstance(report, PrivacyReport):
        event = getattr(estimator, "dp_event_", report.dp_event)
        return report, event, float(report.epsilon), float(report.delta)
    inner = estimator.best_estimator_.privacy_report()
    report = dataclasses.replace(
        inner, solver=f"{type(estimator).__name__} over {inner.solver}"
    )
    return report, estimator.dp_event_, estimator.epsilon_, estimator.delta_


def _check_base_estimator(estimator):
    """Refuse anything but a binary-capable dpestim classifier, before any data.

    Accepted: an instance (fitted or not) of a dpestim classifier with a
    ``privacy_report`` and scores (``predict_proba`` or ``decision_function``),
    for example :class:`~dpestim.LogisticRegression`, :class:`~dpestim.LinearSVC`,
    :class:`~dpestim.FairLogisticRegression`,
    :class:`~dpestim.MinimaxLogisticRegression`, or a
    :class:`~dpestim.model_selection.PrivateSearchCV` over one of them.
    """
    cls = estimator if isinstance(estimator, type) else type(estimator)
    inner = getattr(estimator, "estimator", None)
    from_dpestim = cls.__module__.split(".")[0] == "dpestim"
    reason = None
    if isinstance(estimator, type):
        reason = "a class, not an instance"
    elif not from_dpestim:
        reason = f"{cls.__module__}.{cls.__name__} is not a dpestim estimator"
    elif isinstance(estimator, PrivateThresholdOptimizer):
        reason = "PrivateThresholdOptimizer has no scores to threshold"
    elif not is_classifier(estimator) or (
        inner is not None and hasattr(estimator, "param_distributions")
        and not is_classifier(inner)
    ):  # fmt: skip
        reason = f"{cls.__name__} is not a classifier"
    elif not hasattr(estimator, "privacy_report"):
        reason = f"{cls.__name__} has no privacy_report()"
    elif not (
        hasattr(estimator, "predict_proba") or hasattr(estimator, "decision_function")
    ):
        reason = f"{cls.__name__} has neither predict_proba nor decision_function"
    if reason is not None:
        raise TypeError(
            "estimator must be a dpestim classifier (fitted or not) with "
            "predict_proba or decision_function, such as dpestim.LogisticRegression, "
            "dpestim.LinearSVC, dpestim.FairLogisticRegression, "
            "dpestim.MinimaxLogisticRegression or a PrivateSearchCV over one of "
            f"them; got {estimator!r} ({reason})."
        )
    classes = getattr(estimator, "classes", None)
    if classes is not None and not isinstance(classes, str) and len(classes) != 2:
        raise ValueError(
            "PrivateThresholdOptimizer needs a binary classifier: estimator has "
            f"classes={classes!r}."
        )


#: Most score bins of ``n_bins="auto"`` (and its number at ``epsilon=inf``):
#: accuracy was flat from 6 to 30 bins on Adult / sex, the largest task.
MAX_AUTO_BINS = 10


class PrivateThresholdOptimizer(MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Group-specific randomized thresholds chosen from private histograms.

    Wraps a binary dpestim classifier. ``fit`` releases, with the Gaussian
    mechanism, the histogram of the classifier's scores (probabilities of
    the positive class, binned on ``[0, 1]`` in ``n_bins`` public bins) per
    (group, label) cell; then a linear program on the *noisy* counts chooses,
    for every group and bin, the probability of predicting the positive
    class that maximises the estimated accuracy subject to equal
    positive-prediction rates (``"demographic_parity"``) or equal true- and
    false-positive rates (``"equalized_odds"``) across groups, up to
    ``tolerance`` (Hardt et al. 2016, derived predictors). Everything after
    the histogram is post-processing.

    **The group is needed at prediction time**: ``predict(X,
    sensitive_features=a)``. When the group is not available when predicting,
    use :class:`~dpestim.FairLogisticRegression` instead.

    Privacy: the histogram is accounted under the base estimator's
    neighbouring relation, with its L2 sensitivity under that relation:
    adding or removing one record changes one count by one (sensitivity 1);
    replacing one record moves one unit from its old (group, label, bin)
    cell to its new one, so two counts change by one (sensitivity
    ``sqrt(2)``). The noise has standard deviation ``noise_multiplier_ *
    sensitivity_`` per count, and the histogram is the ``GaussianDpEvent(
    noise_multiplier_)`` of a sensitivity-one Gaussian (dp-accounting's RDP
    reading of that event under either relation), calibrated to
    ``(epsilon, delta)`` with the RDP accountant. (dp-accounting's PLD
    accountant reads a replace-one ``GaussianDpEvent`` as sensitivity 2: a
    budget with ``accountant="pld"`` charges it conservatively.) The event is
    charged to the active :class:`~dpestim.model_selection.PrivacyBudget`
    before the histogram is computed, so an over-budget fit is refused
    before it releases anything; a base estimator fitted here charges its
    own fit. If ``estimator`` was fitted on the same records (the usual
    case), the fit's guarantee is the composition of the estimator's event
    and this one (RDP when both events are ``dp_accounting`` events under the
    same relation, otherwise basic composition); ``epsilon_`` / ``delta_``
    are that total.

    Parameters
    ----------
    estimator : dpestim classifier
        A binary dpestim classifier (fitted or not) with ``predict_proba`` or
        ``decision_function``: :class:`~dpestim.LogisticRegression`,
        :class:`~dpestim.LinearSVC`, :class:`~dpestim.FairLogisticRegression`,
        :class:`~dpestim.MinimaxLogisticRegression`, or a
        :class:`~dpestim.model_selection.PrivateSearchCV` over one of them.
        Anything else (a regressor, a scikit-learn classifier) raises
        ``TypeError`` in ``fit`` before any data is read. If not fitted, a
        clone is fitted on ``(X, y)`` in ``fit`` (with ``sensitive_features``
        if it is a minimax / fairness estimator).
    constraint : {"demographic_parity", "equalized_odds"}, \
default="demographic_parity"
    epsilon : float, default=0.2
        Budget of the histogram (``numpy.inf``: exact counts, not private).
    delta : float, default=1e-6
    groups : array-like or None, default=None
        Public list of groups; ``None`` infers it from the private
        ``sensitive_features`` with a :class:`~dpestim.PrivacyLeakWarning`.
    n_bins : int or "auto", default="auto"
        Public number of score bins on ``[0, 1]``. Every count gets the same
        noise whatever the number of bins, so more bins only make each cell
        smaller against it. ``"auto"``: ``clip(round(sqrt(n / (G s))), 2, 10)``
        with ``n`` the rows, ``G`` the groups and ``s =
        noise_multiplier_ * sensitivity_`` the noise standard deviation of a
        count (all public; 10 bins at ``epsilon=inf``): a cell's expected
        count ``n / (2 G n_bins)`` is then about ``n_bins / 2`` noise
        standard deviations. The former default of 50 left cells of 0.2-1
        noise standard deviation on German credit, COMPAS and Bank and made
        the model worse than the base classifier (German by sex, epsilon 0.2
        on a base at 0.8: accuracy 0.713 -> 0.600, worst group 0.461; the
        rule's 4 bins 0.693 / 0.644); over six tasks and both constraints the
        rule is 0.004 below the best number of bins chosen afterwards on the
        test set, on average (at worst 0.023; derived on German / sex, COMPAS
        / six race groups, Adult / sex; held out: COMPAS / African-American
        against the others, Adult / five race groups, Bank / age groups:
        ``benchmarks/results/threshold_bins.md``). The number
        used is ``n_bins_``.
    tolerance : float, default=0.0
        Allowed difference of the (estimated) rates between groups.
    random_state : int, Generator or None, default=None
        Noise of the histogram and the randomized predictions (a fresh
        stream from this seed at every ``predict`` call).

    Attributes
    ----------
    estimator_ : classifier
        The fitted base classifier.
    classes_ : ndarray of shape (2,)
    groups_ : ndarray
    n_bins_ : int
        The number of score bins used (``n_bins``, or its ``"auto"`` rule).
    positive_probability_ : ndarray of shape (n_groups, n_score_bins)
        Probability of predicting ``classes_[1]`` per group and score bin
        (``n_score_bins = n_bins_``; computed from the noisy histogram only).
    noise_multiplier_ : float
        Noise standard deviation per count divided by ``sensitivity_``
        (``0.0`` when ``epsilon=inf``).
    sensitivity_ : float
        L2 sensitivity of the histogram under the base estimator's relation
        (``1`` for add-or-remove-one, ``sqrt(2)`` for replace-one).
    epsilon_, delta_ : float
        Total guarantee of ``estimator_`` and the histogram together.
    dp_event_ : DpEvent
        The histogram's event composed with the estimator's.
    """

    _parameter_constraints = {
        "estimator": [HasMethods(["fit", "predict"])],
        "constraint": [StrOptions({"demographic_parity", "equalized_odds"})],
        "epsilon": [
            Interval(Real, 0, None, closed="neither"),
            Options(Real, {math.inf}),
        ],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "groups": ["array-like", None],
        "n_bins": [Interval(Integral, 2, None, closed="left"), StrOptions({"auto"})],
        "tolerance": [Interval(Real, 0, 1, closed="left")],
        "random_state": ["random_state", np.random.Generator],
    }

    def __init__(
        self,
        estimator,
        *,
        constraint="demographic_parity",
        epsilon=0.2,
        delta=1e-6,
        groups=None,
        n_bins="auto",
        tolerance=0.0,
        random_state=None,
    ):
        self.estimator = estimator
        self.constraint = constraint
        self.epsilon = epsilon
        self.delta = delta
        self.groups = groups
        self.n_bins = n_bins
        self.tolerance = tolerance
        self.random_state = random_state

    def _scores(self, X):
        est = self.estimator_
        if hasattr(est, "predict_proba"):
            return est.predict_proba(X)[:, 1]
        return expit(np.ravel(est.decision_function(X)))

    def _bins(self, X):
        b = np.floor(self._scores(X) * self.n_bins_).astype(np.int64)
        return np.clip(b, 0, self.n_bins_ - 1)

    def _group_codes(self, sensitive_features, n, fitting):
        a = np.asarray(sensitive_features, dtype=object).astype(str)
        if a.ndim != 1 or a.shape[0] != n:
            raise ValueError(
                "sensitive_features must have one entry per sample: expected "
                f"{n}, got shape {np.shape(sensitive_features)}."
            )
        if fitting:
            if self.groups is None:
                msg = (
                    "groups=None: the set of groups is inferred from the private "
                    "sensitive_features and released through groups_."
                )
                self._fit_warnings.append(f"PrivacyLeakWarning: {msg}")
                warnings.warn(msg, PrivacyLeakWarning, stacklevel=3)
                self.groups_ = np.unique(a)
            else:
                self.groups_ = np.unique(np.asarray(self.groups).astype(str))
        codes = np.minimum(np.searchsorted(self.groups_, a), len(self.groups_) - 1)
        if (self.groups_[codes] != a).any():
            raise ValueError(
                f"sensitive_features has values not in groups={self.groups_.tolist()}."
            )
        return codes

    def fit(self, X, y, *, sensitive_features):
        """Release the private histogram and choose the thresholds.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sensitive_features : array-like of shape (n_samples,)
            Group of each record (private).

        Returns
        -------
        self : object

        Raises
        ------
        TypeError
            If ``estimator`` is not a dpestim classifier (before any data is
            read).
        dpestim.exceptions.BudgetExceededError
            If the histogram would exceed an active
            :class:`~dpestim.model_selection.PrivacyBudget` (raised before the
            histogram is computed; a base estimator fitted here has been
            charged and fitted already).
        """
        self._validate_params()
        _check_base_estimator(self.estimator)  # before any data is read
        self._fit_warnings = []
        n = _n_rows(X, "X")
        for name, v in (("y", y), ("sensitive_features", sensitive_features)):
            if _n_rows(v, name) != n:
                raise ValueError(
                    f"{name} must have one entry per sample: expected {n}, got "
                    f"shape {np.shape(v)}."
                )
        rng = np.random.default_rng(
            self.random_state
            if not isinstance(self.random_state, np.random.RandomState)
            else self.random_state.randint(2**31)
        )
        if _is_fitted(self.estimator):
            estimator = self.estimator
        else:  # charges its own fit
            estimator = clone(self.estimator)
            if hasattr(estimator, "group_proportions"):
                estimator.fit(X, y, sensitive_features=sensitive_features)
            else:
                estimator.fit(X, y)
        classes = np.asarray(estimator.classes_)
        if classes.shape[0] != 2:
            raise ValueError("PrivateThresholdOptimizer needs a binary classifier.")
        base_report, base_event, e_base, d_base = _base_guarantee(estimator)
        relation = base_report.neighbouring
        if relation not in HISTOGRAM_SENSITIVITY:  # pragma: no cover - defensive
            raise ValueError(f"Unknown neighbouring relation {relation!r}.")
        sensitivity = HISTOGRAM_SENSITIVITY[relation]
        # The histogram's mechanism, from public quantities only.
        eps = float(self.epsilon)
        sigma, event = 0.0, NonPrivateDpEvent()
        if math.isfinite(eps):
            sigma = calibrate_noise(
                GaussianDpEvent, eps, float(self.delta), neighbouring=relation,
                cache_key=("gaussian",),
            )  # fmt: skip
            event = GaussianDpEvent(sigma)
        # Budgets see the histogram before it is computed (and may refuse it).
        charge_fit(
            FitCharge(
                event,
                relation,
                f"{type(self).__name__}(histogram of {type(estimator).__name__} "
                f"scores, n_bins={self.n_bins})",
                self,
            )
        )
        self.estimator_ = estimator
        self.classes_ = classes
        self.sensitivity_ = sensitivity
        y = np.asarray(y)
        codes = self._group_codes(sensitive_features, y.shape[0], fitting=True)
        self.n_bins_ = self._resolve_n_bins(n, len(self.groups_), sigma * sensitivity)
        counts = self._histogram(X, y, codes)
        if sigma > 0:
            noise = rng.standard_normal(counts.shape[0])
            counts = self._add_noise(counts, sigma * sensitivity * noise)
        G, nb = len(self.groups_), self.n_bins_
        counts = np.maximum(counts, 0.0).reshape(G, 2, nb)
        self.positive_probability_ = self._solve_lp(counts)
        self.noise_multiplier_ = sigma
        self._account(base_report, (base_event, e_base, d_base), sigma, relation)
        del self._fit_warnings
        return self

    def _resolve_n_bins(self, n, n_groups, noise_std):
        """``n_bins``, or its ``"auto"`` rule (public: ``n``, the groups, the
        noise standard deviation of a count; see the parameter)."""
        if not (isinstance(self.n_bins, str) and self.n_bins == "auto"):
            return int(self.n_bins)
        if noise_std <= 0.0:
            return MAX_AUTO_BINS
        bins = round(math.sqrt(n / (n_groups * noise_std)))
        return int(min(max(bins, 2), MAX_AUTO_BINS))

    def _histogram(self, X, y, codes):
        """Exact (group, label, score bin) counts: the private statistic."""
        G, nb = len(self.groups_), self.n_bins_
        label = (np.asarray(y) == self.classes_[1]).astype(np.int64)
        cell = (codes * 2 + label) * nb + self._bins(X)
        return np.bincount(cell, minlength=2 * G * nb).astype(float)

    @staticmethod
    def _add_noise(counts, noise):
        """The Gaussian mechanism's release (a hook for the sensitivity tests)."""
        return counts + noise

    def _solve_lp(self, counts):
        """Derived predictor maximising estimated accuracy under the constraint."""
        G, _, nb = counts.shape
        neg, pos = counts[:, 0, :], counts[:, 1, :]
        nv = G * nb
        c = -(pos - neg).ravel()  # maximise sum p (pos - neg)
        tol = float(self.tolerance)
        rows, rhs = [], []

        def pair(coef, k):  # |coef . p - target_k| <= tol
            for sign in (1.0, -1.0):
                row = np.zeros(nv + 2)
                row[:nv] = sign * coef
                row[nv + k] = -sign
                rows.append(row)
                rhs.append(tol)

        for g in range(G):
            sl = slice(g * nb, (g + 1) * nb)
            if self.constraint == "demographic_parity":
                coef = np.zeros(nv)
                tot = counts[g].sum()
                coef[sl] = counts[g].sum(axis=0) / max(tot, 1.0)
                pair(coef, 0)
            else:
                for k, part in ((0, pos[g]), (1, neg[g])):
                    coef = np.zeros(nv)
                    coef[sl] = part / max(part.sum(), 1.0)
                    pair(coef, k)
        res = linprog(
            np.concatenate([c, [0.0, 0.0]]),
            A_ub=np.array(rows),
            b_ub=np.array(rhs),
            bounds=[(0.0, 1.0)] * (nv + 2),
            method="highs",
        )
        if res.status != 0:  # pragma: no cover - the LP is always feasible
            raise RuntimeError(f"threshold LP failed: {res.message}")
        return np.clip(res.x[:nv].reshape(G, nb), 0.0, 1.0)

    def _account(self, base_report, base_guarantee, sigma, relation):
        base_event, e_base, d_base = base_guarantee
        hist = GaussianDpEvent(sigma) if sigma > 0 else None
        self.delta_ = d_base + float(self.delta)
        if hist is None:
            self.dp_event_ = ComposedDpEvent([base_event, NonPrivateDpEvent()])
            self.epsilon_ = math.inf
            how = "not private (epsilon = inf)"
        else:
            self.dp_event_ = ComposedDpEvent([base_event, hist])
            try:
                eps = compute_epsilon(self.dp_event_, self.delta_, "rdp", relation)
                how = "RDP composition (dp_accounting) of the estimator and histogram"
            except ValueError:
                eps = math.inf
            basic = e_base + float(self.epsilon)
            if not eps <= basic:
                eps, how = basic, "basic composition of the two guarantees"
            self.epsilon_ = eps
        self._report = PrivacyReport(
            estimator=type(self).__name__,
            solver=f"{base_report.solver} + Gaussian histogram",
            mechanism=(
                f"{base_report.mechanism}; then the Gaussian mechanism on the "
                f"(group, label, score bin) histogram ({2 * len(self.groups_)} x "
                f"{self.n_bins_} counts, L2 sensitivity {self.sensitivity_:.4g} "
                f"under {relation}; noise standard deviation "
                f"{sigma * self.sensitivity_:.4g})"
            ),
            sampling=base_report.sampling,
            composition=how,
            n_steps=base_report.n_steps,
            noise_multiplier=sigma,
            clip_norm=1.0,
            neighbouring=relation,
            accountant=base_report.accountant,
            noise=f"histogram noise multiplier {sigma:.4g}; estimator: "
            f"{base_report.noise or base_report.noise_multiplier}",
            epsilon=self.epsilon_,
            delta=self.delta_,
            dp_event=self.dp_event_,
            warnings=tuple(base_report.warnings) + tuple(self._fit_warnings),
        )

    def privacy_report(self):
        """The composed guarantee (a :class:`~dpestim.privacy.PrivacyReport`)."""
        check_is_fitted(self)
        return self._report

    def predict(self, X, *, sensitive_features):
        """Randomized group-specific thresholding of the base scores.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        sensitive_features : array-like of shape (n_samples,)
            Group of each sample: required at prediction time.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        bins = self._bins(X)
        codes = self._group_codes(sensitive_features, bins.shape[0], fitting=False)
        p = self.positive_probability_[codes, bins]
        seed = self.random_state if isinstance(self.random_state, Integral) else None
        u = np.random.default_rng(seed).random(bins.shape[0])
        return self.classes_[(u < p).astype(int)]

    def score(self, X, y, *, sensitive_features, sample_weight=None):
        """Accuracy of :meth:`predict`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sensitive_features : array-like of shape (n_samples,)
        sample_weight : array-like or None, default=None

        Returns
        -------
        score : float
        """
        pred = self.predict(X, sensitive_features=sensitive_features)
        return float(np.average(pred == np.asarray(y), weights=sample_weight))
