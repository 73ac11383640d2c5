"""Gaussian-DP audit: a lower bound on mu, converted to epsilon at delta.

An ``(epsilon, delta)`` audit with no assumption on the mechanism must
resolve a false-positive rate of the order of ``delta`` (about ``1 / delta``
fits per dataset), which is out of reach at ``delta = 1e-5``. The tight
audits of Nasr et al. (2023, "Tight auditing of differentially private
machine learning", USENIX Security, Eq. 6) work in the space of
Gaussian differential privacy (Dong, Roth and Su, 2019) instead:

* a mechanism is ``mu``-GDP when every test of "trained without the canary"
  against "trained with it" has ``FNR >= Phi(Phi^-1(1 - FPR) - mu)``, so a
  test with rates ``(FPR, FNR)`` proves ``mu >= Phi^-1(1 - FPR) -
  Phi^-1(FNR)``; with one-sided Clopper-Pearson upper bounds on both rates
  (``alpha / 2`` each) this is a lower bound on ``mu`` that holds with
  probability ``1 - alpha`` **for any mechanism** (no assumption);
* the bound is best at moderate rates (around ``Phi(-mu / 2)``, not
  ``delta``), so a few thousand fits resolve it;
* it is converted to epsilon at the reported delta through the privacy
  profile of the Gaussian mechanism, ``delta(epsilon) = Phi(-epsilon / mu +
  mu / 2) - e^epsilon Phi(-epsilon / mu - mu / 2)`` (Dong, Roth and Su,
  Corollary 2.13). **This step assumes that the audited release has a
  Gaussian trade-off curve** (then it is ``(epsilon, delta)``-DP exactly when
  it is ``mu``-GDP for the matching ``mu``). It holds exactly for the
  white-box full-batch Gaussian mechanism that :func:`audit_solver` builds
  (the released coefficient is the canary's clipped gradients plus Gaussian
  noise); it does not hold for Laplace noise (pure DP), sub-sampling with few
  steps, or the exponential mechanism, where the converted number can exceed
  the true epsilon. Equivalently: the audit tests the claim "this release is
  the Gaussian mechanism of the reported noise or more private", whose
  ``mu`` is :attr:`GaussianAuditResult.mu`.

The assumption-free ``(epsilon, delta)`` bound of the same fits is always
reported beside it (:attr:`GaussianAuditResult.assumption_free`).
"""

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq
from scipy.special import log_ndtr, ndtr, ndtri
from scipy.stats import beta

from ._statistics import AuditResult, clopper_pearson_upper

__all__ = [
    "GaussianAuditResult",
    "gdp_delta",
    "gdp_epsilon",
    "gdp_lower_bound",
    "gdp_mu",
    "gdp_mu_lower_bound",
]

_MAX_BRACKET = 80  # doublings when bracketing a root (2^80: far past any use)


def gdp_delta(mu, epsilon):
    """Smallest delta at which a ``mu``-GDP mechanism is ``(epsilon, delta)``-DP.

    ``Phi(-epsilon / mu + mu / 2) - e^epsilon Phi(-epsilon / mu - mu / 2)``
    (Dong, Roth and Su, 2019, Corollary 2.13): the privacy profile of the
    Gaussian mechanism of sensitivity 1 and noise standard deviation
    ``1 / mu``.

    Parameters
    ----------
    mu : float
        ``>= 0``.
    epsilon : float
        ``>= 0``.

    Returns
    -------
    delta : float
    """
    mu, epsilon = float(mu), float(epsilon)
    if not (mu >= 0 and epsilon >= 0):
        raise ValueError(f"mu and epsilon must be >= 0, got {mu!r}, {epsilon!r}.")
    if mu == 0:
        return 0.0
    if math.isinf(mu):
        return 1.0
    if math.isinf(epsilon):
        return 0.0
    # e^eps Phi(.) in log space: Phi underflows long before e^eps overflows.
    second = math.exp(epsilon + log_ndtr(-epsilon / mu - mu / 2))
    return max(float(ndtr(-epsilon / mu + mu / 2)) - second, 0.0)


def _check_delta(delta):
    if not (isinstance(delta, int | float) and 0 < delta < 1):
        raise ValueError(f"delta must be in (0, 1) for Gaussian DP, got {delta!r}.")


def gdp_epsilon(mu, delta):
    """Smallest epsilon with ``gdp_delta(mu, epsilon) <= delta``.

    Parameters
    ----------
    mu : float
        ``>= 0`` (``inf`` gives ``inf``).
    delta : float
        In ``(0, 1)``.

    Returns
    -------
    epsilon : float
        ``0`` when the mechanism is already ``(0, delta)``-DP.
    """
    _check_delta(delta)
    mu = float(mu)
    if not mu >= 0:
        raise ValueError(f"mu must be >= 0, got {mu!r}.")
    if math.isinf(mu):
        return math.inf
    if gdp_delta(mu, 0.0) <= delta:
        return 0.0
    hi = 1.0
    for _ in range(_MAX_BRACKET):
        if gdp_delta(mu, hi) < delta:
            break
        hi *= 2.0
    return float(brentq(lambda e: gdp_delta(mu, e) - delta, 0.0, hi, xtol=1e-12))


def gdp_mu(epsilon, delta):
    """The ``mu`` of the Gaussian mechanism that is exactly ``(epsilon, delta)``-DP.

    The largest ``mu`` with ``gdp_delta(mu, epsilon) <= delta``: a solver
    running the Gaussian mechanism(s) its accountant reports ``(epsilon,
    delta)`` for is ``mu``-GDP with at most this ``mu``.

    Parameters
    ----------
    epsilon : float
        ``>= 0`` (``inf`` gives ``inf``).
    delta : float
        In ``(0, 1)``.

    Returns
    -------
    mu : float
    """
    _check_delta(delta)
    epsilon = float(epsilon)
    if not epsilon >= 0:
        raise ValueError(f"epsilon must be >= 0, got {epsilon!r}.")
    if math.isinf(epsilon):
        return math.inf
    hi = 1.0
    for _ in range(_MAX_BRACKET):
        if gdp_delta(hi, epsilon) > delta:
            break
        hi *= 2.0
    return float(brentq(lambda m: gdp_delta(m, epsilon) - delta, 0.0, hi, xtol=1e-12))


def _mu_bound(fpr_upper, fnr_upper):
    """``Phi^-1(1 - FPR) - Phi^-1(FNR)``, floored at 0 (vectorised)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        mu = ndtri(1.0 - np.asarray(fpr_upper)) - ndtri(np.asarray(fnr_upper))
    return np.maximum(np.nan_to_num(mu, nan=0.0, neginf=0.0), 0.0)


def gdp_mu_lower_bound(false_positives, false_negatives, n, alpha):
    """Lower confidence bound on the GDP parameter ``mu`` of a membership test.

    A ``mu``-GDP mechanism forces every test to satisfy ``FNR >= Phi(Phi^-1(1
    - FPR) - mu)``. Replacing both rates by their one-sided Clopper-Pearson
    upper bounds at level ``alpha / 2`` gives ``mu >= Phi^-1(1 - FPR_upper) -
    Phi^-1(FNR_upper)`` with probability at least ``1 - alpha``, for any
    mechanism (Nasr et al., 2023).

    Parameters
    ----------
    false_positives, false_negatives : int
        Error counts, each out of ``n`` trials.
    n : int
    alpha : float

    Returns
    -------
    mu : float
        ``>= 0``.
    fpr_upper, fnr_upper : float
    """
    fpr = clopper_pearson_upper(false_positives, n, alpha / 2)
    fnr = clopper_pearson_upper(false_negatives, n, alpha / 2)
    return float(_mu_bound(fpr, fnr)), fpr, fnr


def _plan_threshold(out, inn, alpha, n_eval):
    """Threshold maximising the expected ``mu`` bound of a fitted Gaussian model.

    Means of each dataset's selection scores and one pooled standard
    deviation (the mechanism adds the same noise to both); the expected error
    counts of ``n_eval`` trials follow from the model, so the plan needs no
    draw. For equal variances the optimum is close to the midpoint of the
    means, where both error rates are near ``Phi(-mu / 2)``.
    """
    m_out, m_in = float(np.mean(out)), float(np.mean(inn))
    resid = np.concatenate([out - m_out, inn - m_in])
    scale = float(np.sqrt(np.mean(resid**2)))
    if not (scale > 0 and m_in > m_out):
        return 0.5 * (m_out + m_in)
    cands = m_out + (m_in - m_out) * np.linspace(-1.0, 2.0, 601)
    fp = np.rint(n_eval * ndtr(-(cands - m_out) / scale)).astype(np.int64)
    fn = np.rint(n_eval * ndtr((cands - m_in) / scale)).astype(np.int64)

    def upper(k):
        return np.where(
            k >= n_eval, 1.0, beta.ppf(1 - alpha / 2, k + 1, np.maximum(n_eval - k, 1))
        )

    return float(cands[int(np.argmax(_mu_bound(upper(fp), upper(fn))))])


@dataclass(frozen=True)
class GaussianAuditResult:
    """Outcome of a Gaussian-DP audit (:func:`gdp_lower_bound`).

    Attributes
    ----------
    epsilon_lower_bound : float
        ``gdp_epsilon(mu_lower_bound, delta)``: with probability at least ``1 -
        alpha``, the audited release is not ``(epsilon, delta)``-DP for any
        smaller epsilon **if its trade-off curve is Gaussian** (exact for the
        white-box full-batch Gaussian mechanism). Without that assumption only
        :attr:`mu_lower_bound` and :attr:`assumption_free` are proven.
    mu_lower_bound : float
        Lower confidence bound on the GDP parameter (assumption-free).
    mu : float
        The ``mu`` of the Gaussian mechanism that is exactly ``(epsilon,
        delta)``-DP at the reported guarantee (``gdp_mu(epsilon, delta)``).
    epsilon, delta, alpha : float
        Reported epsilon, the delta of the bound, significance level.
    n_trials, n_eval : int
        Fits per dataset, and those used for the bound (the others planned
        the threshold).
    threshold : float
        Threshold of the test "score > threshold" used for the ``mu`` bound.
    false_positives, false_negatives : int
        Error counts of that test (of ``n_eval``).
    fpr_upper, fnr_upper : float
        Clopper-Pearson upper bounds (``alpha / 2`` each).
    assumption_free : AuditResult
        The ``(epsilon, delta)`` audit of the same fits, valid for any
        mechanism (its own threshold, planned on the same selection trials).
    """

    epsilon_lower_bound: float
    mu_lower_bound: float
    mu: float
    epsilon: float
    delta: float
    alpha: float
    n_trials: int
    n_eval: int
    threshold: float
    false_positives: int
    false_negatives: int
    fpr_upper: float
    fnr_upper: float
    assumption_free: AuditResult

    @property
    def violation(self):
        """True if the Gaussian-DP lower bound exceeds the reported epsilon."""
        return self.epsilon_lower_bound > self.epsilon

    @property
    def assumption_free_lower_bound(self):
        """The ``(epsilon, delta)`` lower bound that needs no assumption."""
        return self.assumption_free.epsilon_lower_bound

    def __str__(self):
        verdict = (
            "VIOLATION: less private than the Gaussian mechanism of the reported "
            "epsilon"
            if self.violation
            else "consistent with the reported epsilon (a lower bound, not a proof)"
        )
        return (
            f"Gaussian-DP audit ({self.n_trials} fits per dataset, {self.n_eval} "
            f"for the bound): mu >= {self.mu_lower_bound:.4f} (reported guarantee: "
            f"mu = {self.mu:.4f}); if the release's trade-off curve is Gaussian, "
            f"epsilon >= {self.epsilon_lower_bound:.3f} at delta={self.delta:g} "
            f"with confidence {1 - self.alpha:g}; reported epsilon="
            f"{self.epsilon:.3f}; FP={self.false_positives}/{self.n_eval}, "
            f"FN={self.false_negatives}/{self.n_eval}; {verdict}. Assumption-free "
            "bound of the same fits: epsilon >= "
            f"{self.assumption_free_lower_bound:.3f}."
        )


def gdp_lower_bound(result, *, threshold=None):
    """Gaussian-DP lower bound on epsilon from the fits of an audit.

    Re-uses the scores of an :class:`AuditResult` (from
    :func:`audit_solver` or :func:`audit_estimator`): a threshold is planned
    on its selection trials (the first ``n_trials - n_eval`` of each dataset,
    which its own bound did not use) by a fitted Gaussian model, the test
    "score > threshold" is run on the evaluation trials, and its error counts
    give a lower bound on ``mu`` (:func:`gdp_mu_lower_bound`), converted to
    epsilon at the result's delta (:func:`gdp_epsilon`). The threshold is
    chosen on trials disjoint from those of the bound, so no multiple-testing
    correction is needed.

    **Assumption**: the conversion to epsilon is valid when the audited
    release's trade-off curve is Gaussian, as it is exactly for the white-box
    full-batch Gaussian mechanism (:func:`audit_solver` with a Gaussian
    solver, full batch, ``penalty = 0``). The ``mu`` bound and the
    assumption-free bound (the ``result`` itself, kept in
    :attr:`GaussianAuditResult.assumption_free`) hold for any mechanism.

    Parameters
    ----------
    result : AuditResult
        An audit at ``0 < delta < 1`` (a pure-DP audit, ``delta = 0``, has no
        Gaussian counterpart).
    threshold : float or None, default=None
        A threshold fixed in advance; ``None``: planned on the selection
        trials, or the result's own threshold when it used every trial.

    Returns
    -------
    result : GaussianAuditResult
    """
    if not isinstance(result, AuditResult):
        raise TypeError(f"result must be an AuditResult, got {type(result).__name__}.")
    if not 0 < result.delta < 1:
        raise ValueError(
            f"The Gaussian-DP bound needs 0 < delta < 1, the audit has delta="
            f"{result.delta:g} (pure-DP solvers: use the assumption-free bound)."
        )
    n_sel = result.n_trials - result.n_eval
    out, inn = result.scores_out, result.scores_in
    if threshold is None:
        if n_sel > 0:
            threshold = _plan_threshold(
                out[:n_sel], inn[:n_sel], result.alpha, result.n_eval
            )
        else:
            threshold = result.threshold
        if not math.isfinite(threshold):  # non-finite selection scores
            threshold = result.threshold
    elif not (isinstance(threshold, int | float) and math.isfinite(threshold)):
        raise ValueError(f"threshold must be a finite number, got {threshold!r}.")
    # A non-finite score (a diverged fit) counts as an error either way.
    fp = int(np.sum(~(out[n_sel:] <= threshold)))
    fn = int(np.sum(~(inn[n_sel:] > threshold)))
    mu_lb, fpr_u, fnr_u = gdp_mu_lower_bound(fp, fn, result.n_eval, result.alpha)
    return GaussianAuditResult(
        epsilon_lower_bound=gdp_epsilon(mu_lb, result.delta),
        mu_lower_bound=mu_lb,
        mu=gdp_mu(result.epsilon, result.delta),
        epsilon=result.epsilon,
        delta=result.delta,
        alpha=result.alpha,
        n_trials=result.n_trials,
        n_eval=result.n_eval,
        threshold=float(threshold),
        false_positives=fp,
        false_negatives=fn,
        fpr_upper=fpr_u,
        fnr_upper=fnr_u,
        assumption_free=result,
    )
