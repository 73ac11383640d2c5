"""Empirical privacy auditing: lower bounds on epsilon from real fits.

An audit trains an estimator many times on two neighbouring datasets (with
and without a crafted *canary* record), tests on each released model whether
the canary was present, and turns the test's error rates into a statistically
rigorous *lower* bound on the epsilon the training procedure can satisfy. A
lower bound above the reported epsilon proves a privacy bug; a lower bound
below it proves nothing (see :func:`audit_estimator`).

Two modes: :func:`audit_estimator` audits your estimator on your data ("audit
my model class"; the minimax and fairness estimators with their
``sensitive_features``); :func:`audit_solver` is the white-box audit of a
solver (linear or saddle) on worst-case datasets where the release is one
known mechanism, tight enough to flag a solver that is twice less private
than it reports.
:func:`gdp_lower_bound` turns either audit's fits into a Gaussian-DP bound
(Nasr et al., 2023): far tighter at small delta, valid when the release's
trade-off curve is Gaussian (exact for the white-box full-batch Gaussian
mechanism); ``audit_solver(..., bound="gdp")`` returns it directly.
"""

from ._audit import (
    AuditResult,
    audit_estimator,
    clopper_pearson_upper,
    epsilon_lower_bound,
)
from ._gdp import (
    GaussianAuditResult,
    gdp_delta,
    gdp_epsilon,
    gdp_lower_bound,
    gdp_mu,
    gdp_mu_lower_bound,
)
from ._solver_audit import audit_solver

__all__ = [
    "AuditResult",
    "GaussianAuditResult",
    "audit_estimator",
    "audit_solver",
    "clopper_pearson_upper",
    "epsilon_lower_bound",
    "gdp_delta",
    "gdp_epsilon",
    "gdp_lower_bound",
    "gdp_mu",
    "gdp_mu_lower_bound",
]
