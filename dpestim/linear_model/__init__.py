"""Private linear models with scikit-learn's fit/predict API."""

from ._logistic import LogisticRegression
from ._ridge import Ridge
from ._svc import LinearSVC

__all__ = ["LinearSVC", "LogisticRegression", "Ridge"]
