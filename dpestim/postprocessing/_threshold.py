"""Private group-specific thresholds (Hardt, Price and Srebro, 2016 style)."""

import math
import warnings
from numbers import Integral, Real

import numpy as np
from dp_accounting import ComposedDpEvent, GaussianDpEvent
from scipy.optimize import linprog
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.exceptions import NotFittedError
from sklearn.utils._param_validation import HasMethods, Interval, Options, StrOptions
from sklearn.utils.validation import check_is_fitted

from ..exceptions import PrivacyLeakWarning
from ..privacy import PrivacyReport, calibrate_noise, compute_epsilon

__all__ = ["PrivateThresholdOptimizer"]


def _is_fitted(estimator):
    try:
        check_is_fitted(estimator)
    except NotFittedError:
        return False
    return True


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

    Privacy: adding or removing one record changes one count by one (L2
    sensitivity 1; replacing one, ``sqrt(2)``, accounted under the base
    estimator's relation), so the histogram is one ``GaussianDpEvent``. If
    ``estimator`` was fitted on the same records (the usual case), the fit's
    guarantee is the composition of the estimator's event and this one
    (RDP when both events are ``dp_accounting`` events under the same
    relation, otherwise basic composition); ``epsilon_`` / ``delta_`` are
    that total.

    Parameters
    ----------
    estimator : dpestim classifier
        Binary classifier with ``predict_proba`` or ``decision_function``, a
        ``dp_event_`` and a ``privacy_report()``. If not fitted, a clone is
        fitted on ``(X, y)`` in ``fit`` (with ``sensitive_features`` if it is
        a minimax / fairness estimator).
    constraint : {"demographic_parity", "equalized_odds"}, \
default="demographic_parity"
    epsilon : float, default=0.2
        Budget of the histogram (``numpy.inf``: exact counts, not private).
    delta : float, default=1e-6
    groups : array-like or None, default=None
        Public list of groups; ``None`` infers it from the private
        ``sensitive_features`` with a :class:`~dpestim.PrivacyLeakWarning`.
    n_bins : int, default=50
        Public number of score bins on ``[0, 1]``.
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
    positive_probability_ : ndarray of shape (n_groups, n_bins)
        Probability of predicting ``classes_[1]`` per group and score bin
        (computed from the noisy histogram only).
    noise_multiplier_ : float
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
        "n_bins": [Interval(Integral, 2, None, closed="left")],
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
        n_bins=50,
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
        b = np.floor(self._scores(X) * self.n_bins).astype(np.int64)
        return np.clip(b, 0, self.n_bins - 1)

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
        """
        self._validate_params()
        self._fit_warnings = []
        rng = np.random.default_rng(
            self.random_state
            if not isinstance(self.random_state, np.random.RandomState)
            else self.random_state.randint(2**31)
        )
        if _is_fitted(self.estimator):
            self.estimator_ = self.estimator
        else:
            self.estimator_ = clone(self.estimator)
            if hasattr(self.estimator_, "group_proportions"):
                self.estimator_.fit(X, y, sensitive_features=sensitive_features)
            else:
                self.estimator_.fit(X, y)
        classes = np.asarray(self.estimator_.classes_)
        if classes.shape[0] != 2:
            raise ValueError("PrivateThresholdOptimizer needs a binary classifier.")
        self.classes_ = classes
        y = np.asarray(y)
        codes = self._group_codes(sensitive_features, y.shape[0], fitting=True)
        G, nb = len(self.groups_), int(self.n_bins)
        label = (y == classes[1]).astype(np.int64)
        cell = (codes * 2 + label) * nb + self._bins(X)
        counts = np.bincount(cell, minlength=2 * G * nb).astype(float)
        base_report = self.estimator_.privacy_report()
        relation = base_report.neighbouring
        eps = float(self.epsilon)
        sigma = 0.0
        if math.isfinite(eps):
            sigma = calibrate_noise(
                GaussianDpEvent, eps, float(self.delta), neighbouring=relation,
                cache_key=("gaussian",),
            )  # fmt: skip
            counts = counts + sigma * rng.standard_normal(counts.shape[0])
        counts = np.maximum(counts, 0.0).reshape(G, 2, nb)
        self.positive_probability_ = self._solve_lp(counts)
        self.noise_multiplier_ = sigma
        self._account(base_report, sigma, relation)
        del self._fit_warnings
        return self

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

    def _account(self, base_report, sigma, relation):
        base_event = getattr(self.estimator_, "dp_event_", base_report.dp_event)
        hist = GaussianDpEvent(sigma) if sigma > 0 else None
        d_base, e_base = float(base_report.delta), float(base_report.epsilon)
        self.delta_ = d_base + float(self.delta)
        if hist is None:
            self.dp_event_ = base_event
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
                f"{self.n_bins} counts, L2 sensitivity 1 per record)"
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
