"""The audit's result type and its statistics (Clopper-Pearson bounds).

:func:`~dpestim.audit.audit_estimator` and :func:`~dpestim.audit.audit_solver`
turn the scores of fits with and without a canary into an
:class:`AuditResult`; the bound on epsilon from the error counts of the
membership test lives here.
"""

import math
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from scipy.stats import beta
from sklearn.utils._param_validation import Interval, validate_parameter_constraints

__all__ = [
    "AuditResult",
    "clopper_pearson_upper",
    "epsilon_lower_bound",
]


@dataclass(frozen=True)
class AuditResult:
    """Outcome of :func:`audit_estimator`.

    Attributes
    ----------
    epsilon_lower_bound : float
        With probability at least ``1 - alpha`` over the audit's randomness,
        no ``(epsilon, delta)``-DP training procedure with ``epsilon`` below
        this value could have produced the observed error counts. ``0`` when
        the test could not tell the two datasets apart.
    epsilon : float
        The epsilon the estimator reports (``epsilon_`` of a fit on the
        dataset with the canary).
    delta : float
        The delta at which the bound is computed.
    alpha : float
        Significance level of the bound.
    canary : str
        Canary kind (``"gradient"``, ``"input"`` or ``"custom"``).
    n_trials : int
        Fits per dataset (with and without the canary).
    n_eval : int
        Fits per dataset used for the bound (the others chose the threshold).
    threshold : float
        Threshold on the membership score: a model whose score is above it
        is guessed to have been trained with the canary.
    false_positives : int
        Models trained without the canary guessed "with" (of ``n_eval``).
    false_negatives : int
        Models trained with the canary guessed "without" (of ``n_eval``).
    fpr_upper, fnr_upper : float
        Clopper-Pearson upper confidence bounds (each at level ``alpha / 2``)
        on the false-positive and false-negative rates.
    scores_out, scores_in : ndarray of shape (n_trials,)
        Membership scores of the models trained without / with the canary.
    """

    epsilon_lower_bound: float
    epsilon: float
    delta: float
    alpha: float
    canary: str
    n_trials: int
    n_eval: int
    threshold: float
    false_positives: int
    false_negatives: int
    fpr_upper: float
    fnr_upper: float
    scores_out: np.ndarray
    scores_in: np.ndarray

    @property
    def violation(self):
        """True if the lower bound exceeds the reported epsilon (a privacy bug)."""
        return self.epsilon_lower_bound > self.epsilon

    def __str__(self):
        verdict = (
            "VIOLATION: the reported epsilon is too small"
            if self.violation
            else "consistent with the reported epsilon (a lower bound, not a proof)"
        )
        return (
            f"Audit ({self.canary} canary, {self.n_trials} fits per dataset, "
            f"{self.n_eval} for the bound): epsilon >= "
            f"{self.epsilon_lower_bound:.3f} at delta={self.delta:g} with "
            f"confidence {1 - self.alpha:g}; reported epsilon="
            f"{self.epsilon:.3f}; FP={self.false_positives}/{self.n_eval}, "
            f"FN={self.false_negatives}/{self.n_eval}; {verdict}."
        )


def clopper_pearson_upper(k, n, alpha):
    """One-sided Clopper-Pearson upper confidence bound on a binomial rate.

    Parameters
    ----------
    k : int
        Number of successes, in ``[0, n]``.
    n : int
        Number of trials, ``> 0``.
    alpha : float
        ``P(rate > bound) <= alpha``, in ``(0, 1)``.

    Returns
    -------
    upper : float
    """
    _check_counts({"k": k}, n, alpha, "clopper_pearson_upper")
    if k >= n:
        return 1.0
    return float(beta.ppf(1.0 - alpha, k + 1, n - k))


def _check_counts(counts, n, alpha, caller):
    """Counts in ``[0, n]``, ``n >= 1`` and ``alpha`` in ``(0, 1)`` (sklearn style)."""
    constraints = {
        name: [Interval(Integral, 0, None, closed="left")] for name in counts
    }
    constraints |= {
        "n": [Interval(Integral, 1, None, closed="left")],
        "alpha": [Interval(Real, 0, 1, closed="neither")],
    }
    validate_parameter_constraints(
        constraints, counts | {"n": n, "alpha": alpha}, caller
    )
    for name, k in counts.items():
        if k > n:
            raise ValueError(
                f"{caller}: {name}={k} exceeds the number of trials n={n}."
            )


def epsilon_lower_bound(false_positives, false_negatives, n, delta, alpha):
    """Lower bound on epsilon from the error counts of a membership test.

    Any ``(epsilon, delta)``-DP mechanism forces every test to satisfy
    ``FPR + e^epsilon FNR >= 1 - delta`` and ``FNR + e^epsilon FPR >= 1 -
    delta`` (Kairouz et al., 2015). Replacing the rates by their one-sided
    Clopper-Pearson upper bounds at level ``alpha / 2`` each gives a bound
    that holds with probability at least ``1 - alpha``.

    Parameters
    ----------
    false_positives, false_negatives : int
        Error counts, each out of ``n`` trials.
    n : int
    delta : float
    alpha : float

    Returns
    -------
    epsilon : float
        ``>= 0``.
    fpr_upper, fnr_upper : float
    """
    counts = {"false_positives": false_positives, "false_negatives": false_negatives}
    _check_counts(counts, n, alpha, "epsilon_lower_bound")
    validate_parameter_constraints(
        {"delta": [Interval(Real, 0, 1, closed="left")]},
        {"delta": delta},
        "epsilon_lower_bound",
    )
    fpr = clopper_pearson_upper(false_positives, n, alpha / 2)
    fnr = clopper_pearson_upper(false_negatives, n, alpha / 2)
    best = 0.0
    for a, b in ((fnr, fpr), (fpr, fnr)):
        num = 1.0 - delta - a
        if num > 0 and b > 0:
            best = max(best, math.log(num / b))
        elif num > 0:
            best = math.inf
    return best, fpr, fnr


def _threshold_bounds(out, inn, cands, delta, alpha, n_eval=None):
    """Bound of the test "score > t" for every ``t`` in ``cands``.

    Error counts on ``out`` / ``inn`` are rescaled to ``n_eval`` trials
    (default: their own number) before the Clopper-Pearson bounds.
    """
    n = out.shape[0]
    m = n if n_eval is None else int(n_eval)
    fp = n - np.searchsorted(np.sort(out), cands, side="right")
    fn = np.searchsorted(np.sort(inn), cands, side="right")
    if m != n:
        fp = np.rint(fp * (m / n)).astype(np.int64)
        fn = np.rint(fn * (m / n)).astype(np.int64)
    # Evaluating every candidate is cheap: the Beta quantiles are vectorised.
    fpr = np.where(fp >= m, 1.0, beta.ppf(1 - alpha / 2, fp + 1, np.maximum(m - fp, 1)))
    fnr = np.where(fn >= m, 1.0, beta.ppf(1 - alpha / 2, fn + 1, np.maximum(m - fn, 1)))
    with np.errstate(divide="ignore", invalid="ignore"):
        e1 = np.log(np.maximum(1 - delta - fnr, 0) / fpr)
        e2 = np.log(np.maximum(1 - delta - fpr, 0) / fnr)
    return np.nan_to_num(np.maximum(e1, e2), nan=-1.0, neginf=-1.0)


def _best_threshold(out, inn, delta, alpha, n_eval=None):
    """Threshold maximising the bound on the selection trials."""
    cands = np.unique(np.concatenate([out, inn]))
    return float(
        cands[int(np.argmax(_threshold_bounds(out, inn, cands, delta, alpha)))]
    )
