"""Per-example losses and their derivatives, selected by integer code.

A model has ``K`` outputs ``z = W x + b``. The per-example loss is a function
of ``z`` and the encoded target row ``y`` (length ``K``); its derivative with
respect to ``z`` is the vector ``dz``, so the per-example gradient is the outer
product ``dz [x, 1]`` and its norm is ``||dz|| * sqrt(||x||^2 + 1)``.

Codes
-----
LOGISTIC      : ``sum_k log(1 + exp(-y_k z_k))`` with ``y_k`` in {-1, +1}
SQUARED       : ``sum_k (z_k - y_k)^2 / 2``
HINGE         : ``sum_k max(0, 1 - y_k z_k)`` (one-vs-rest for K > 1)
SQUARED_HINGE : ``sum_k max(0, 1 - y_k z_k)^2``
MULTINOMIAL   : ``logsumexp(z) - y . z`` with ``y`` one-hot

Losses know nothing about privacy.
"""

from ._codes import (
    HINGE,
    LOGISTIC,
    LOSS_NAMES,
    MULTINOMIAL,
    SMOOTH_LOSSES,
    SQUARED,
    SQUARED_HINGE,
)
from ._kernels import dloss, loss_value

__all__ = [
    "HINGE",
    "LOGISTIC",
    "LOSS_NAMES",
    "MULTINOMIAL",
    "SMOOTH_LOSSES",
    "SQUARED",
    "SQUARED_HINGE",
    "dloss",
    "loss_value",
]
