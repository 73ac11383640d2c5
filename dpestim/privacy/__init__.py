"""Privacy core: mechanisms, accounting, calibration and reports.

This subpackage knows nothing about models: it turns a description of a
mechanism (a ``dp_accounting.DpEvent``) into an ``(epsilon, delta)``
guarantee, calibrates noise to a target budget and draws noise from a
``numpy.random.Generator``.
"""

from ..exceptions import PrivacyBudgetWarning, PrivacyLeakWarning
from ._composition import set_composition_warning
from .accounting import (
    ACCOUNTANTS,
    calibrate_noise,
    compute_epsilon,
    make_accountant,
    set_calibration_cache,
)
from .guarantee import check_guarantee
from .mechanisms import gaussian_noise, laplace_noise
from .report import PrivacyReport, describe_event

__all__ = [
    "ACCOUNTANTS",
    "PrivacyBudgetWarning",
    "PrivacyLeakWarning",
    "PrivacyReport",
    "calibrate_noise",
    "check_guarantee",
    "compute_epsilon",
    "describe_event",
    "gaussian_noise",
    "laplace_noise",
    "make_accountant",
    "set_calibration_cache",
    "set_composition_warning",
]
