"""Private minimax (worst-group) and fairness-constrained estimators."""

from ._fair import FairLogisticRegression
from ._minimax import MinimaxLogisticRegression, MinimaxRegressor

__all__ = ["FairLogisticRegression", "MinimaxLogisticRegression", "MinimaxRegressor"]
