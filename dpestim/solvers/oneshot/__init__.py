"""One-shot solvers for small data: one private release, then post-processing.

* :class:`AdaSSP` (``"adassp"``): sufficient-statistics perturbation for
  ridge regression (Wang, UAI 2018).
* :class:`ObjectivePerturbation` (``"objective-perturbation"``): approximate
  minima perturbation for logistic regression (Kifer, Smith and Thakurta
  2012; Iyengar et al. 2019).
"""

from .adassp import AdaSSP
from .objective_perturbation import ObjectivePerturbation

__all__ = ["AdaSSP", "ObjectivePerturbation"]
