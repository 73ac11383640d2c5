"""Private (stochastic) gradient descent, Laplace by default, Gaussian option."""

import numpy as np

from ._docs import _COMMON_DOC
from .base import AcceleratedSolver

__all__ = ["DPGD"]


class DPGD(AcceleratedSolver):
    __doc__ = (
        """Noisy gradient descent (``solver="dp-gd"``; the paper's DP-GD).

    Every iteration takes a step of size ``step_scale / smoothness`` (by
    default the estimator's ``learning_rate``) on the noisy mean of the
    clipped per-example gradients of the batch plus the penalty gradient;
    ``max_iter`` is the number of iterations. It is the baseline of the
    accelerated methods (Kuru et al.) and shares their loop, noise and
    accounting (see :mod:`dpestim.solvers.accelerated`).

    By default (``noise="laplace"``) the guarantee is pure epsilon-DP under
    replace-one neighbouring, with ``clip_norm`` an L1 bound. With
    ``noise="gaussian"`` and the full batch this is the previous dp-gd of
    dpestim exactly: ``SelfComposedDpEvent(GaussianDpEvent(noise_multiplier),
    max_iter)`` under add/remove-one neighbouring, ``clip_norm`` an L2 bound.
"""
        + _COMMON_DOC
    )

    name = "dp-gd"

    def schedule(self, plan):
        L, _ = self._constants(plan)
        T = plan.max_iter
        return (
            np.full(T, self.step_scale / L),
            np.zeros(T),
            np.zeros(T, dtype=bool),
            np.ones(T, dtype=np.int64),
        )
