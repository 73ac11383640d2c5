"""dpestim: differentially private scikit-learn estimators.

>>> from dpestim import LogisticRegression
>>> clf = LogisticRegression(epsilon=1.0, delta=1e-5, classes=[0, 1])
"""

__version__ = "0.1.0"

from .exceptions import (
    BudgetExceededError,
    PrivacyBudgetWarning,
    PrivacyLeakWarning,
    UtilityWarning,
)
from .linear_model import LinearSVC, LogisticRegression, Ridge
from .minimax import (
    FairLogisticRegression,
    MinimaxLogisticRegression,
    MinimaxRegressor,
)

__all__ = [
    "BudgetExceededError",
    "FairLogisticRegression",
    "LinearSVC",
    "LogisticRegression",
    "MinimaxLogisticRegression",
    "MinimaxRegressor",
    "PrivacyBudgetWarning",
    "PrivacyLeakWarning",
    "Ridge",
    "UtilityWarning",
    "__version__",
]
