"""Private model selection and privacy budgets across fits.

- :class:`PrivacyBudget`: composes the ``DpEvent`` of every fit charged to it
  (dp-accounting) and refuses, before it runs, a fit that would exceed it.
- :class:`PrivateSearchCV`: random search whose released result (the best
  candidate, its score) is differentially private overall (Papernot &
  Steinke 2022, ``RepeatAndSelectDpEvent``).
- :class:`SubsetSearchCV`: the search on a random subset of the rows, its
  winner extrapolated and fitted on the other rows (parallel composition).
- :func:`workflow_guarantee`: the composed guarantee of a fitted pipeline of
  private steps, flagging non-private steps fitted on the data.
"""

from ..linear_model._scales import AutoUnits
from ._budget import PrivacyBudget
from ._search import PrivateSearchCV
from ._space import Relative, default_space
from ._subset import SubsetSearchCV, subset_plan
from ._workflow import WorkflowGuarantee, check_private_steps, workflow_guarantee

__all__ = [
    "AutoUnits",
    "PrivacyBudget",
    "PrivateSearchCV",
    "Relative",
    "SubsetSearchCV",
    "WorkflowGuarantee",
    "check_private_steps",
    "default_space",
    "subset_plan",
    "workflow_guarantee",
]
