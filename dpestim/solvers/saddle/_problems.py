"""The saddle-point problems and the public plan the saddle solvers read.

:class:`SaddlePlan` holds the public quantities of a fit; the problem
classes hold the data in the layout the kernels of
:mod:`dpestim.solvers.saddle._kernels` take, and :class:`SaddleResult` what a
solver returns.
"""

import math
from dataclasses import dataclass

import numpy as np

from . import _kernels as _k

_EMPTY_2D = np.zeros((1, 1))
_EMPTY_1D = np.zeros(1)


# -- problems and plan --


@dataclass(frozen=True)
class SaddlePlan:
    """The public quantities of one private saddle-point fit.

    All of them are known before the data is read (``n_samples`` is public
    under replace-one neighbouring); parameter resolution and accounting
    depend on nothing else.

    Attributes
    ----------
    n_samples : int
    dim_x, dim_y : int
        Number of vertices of the two simplices (``2 p`` for an l1-ball).
    lipschitz : float
        ``L0``: bound on every per-example gradient coordinate in both blocks
        (``||.||_inf``), from public bounds only. The only constant privacy
        depends on.
    smoothness : float
        ``L1`` (utility only).
    second_order : float
        ``L2`` (utility only); 0 for bilinear / quadratic problems.
    """

    n_samples: int
    dim_x: int
    dim_y: int
    lipschitz: float
    smoothness: float
    second_order: float

    @property
    def log_dim(self):
        """``ell = ln d_x + ln d_y`` (at least ``ln 2``)."""
        return max(math.log(self.dim_x) + math.log(self.dim_y), math.log(2))


@dataclass
class LinearSaddleProblem:
    """Data of a linear-model saddle problem (kind ``LINEAR``).

    Per example ``f = (l(s) - center) (a0 + sum_k lam_k A_ik)
    + s sum_k lam_k B_ik - sum_k lam_k C_k`` with score ``s = theta . x_i``,
    ``||theta||_1 <= radius``, ``lam`` on the simplex of dimension
    ``A.shape[1]``. ``X`` must already be clipped to ``|x_ij| <= feature_bound``;
    ``clamp_x`` bounds the scalar multiplier of ``x_i`` and ``clamp_y`` each
    dual gradient coordinate (privacy safety net, from public bounds).
    """

    X: np.ndarray
    target: np.ndarray
    A: np.ndarray
    B: np.ndarray
    C: np.ndarray
    a0: float
    center: float
    loss: int
    radius: float
    clamp_x: float
    clamp_y: float

    def kernel_args(self):
        return _k.LINEAR, (
            self.X,
            self.target,
            self.A,
            self.B,
            self.C,
            float(self.a0),
            float(self.center),
            int(self.loss),
            float(self.radius),
            _EMPTY_2D,
            _EMPTY_1D,
            _EMPTY_1D,
            _EMPTY_1D,
            float(self.clamp_x),
            float(self.clamp_y),
        )

    @property
    def dims(self):
        return 2 * self.X.shape[1], self.A.shape[1]


@dataclass
class BilinearGame:
    """A zero-sum scenario game ``f = x^T (A0 + s u v^T) y`` (kind ``GAME``).

    ``A0`` (d_x, d_y), ``u`` (d_x,), ``v`` (d_y,) are public; the data are the
    scalars ``s`` (clipped to ``[-1, 1]``). ``E A(z) = A0`` when ``E s = 0``.
    """

    A0: np.ndarray
    u: np.ndarray
    v: np.ndarray
    s: np.ndarray

    def __post_init__(self):
        self.A0 = np.ascontiguousarray(self.A0, dtype=np.float64)
        self.u = np.ascontiguousarray(self.u, dtype=np.float64)
        self.v = np.ascontiguousarray(self.v, dtype=np.float64)
        self.s = np.clip(np.asarray(self.s, dtype=np.float64), -1.0, 1.0)

    @property
    def lipschitz(self):
        """Public bound on ``|A(z)_ij|`` over ``s`` in ``[-1, 1]``."""
        return float(
            np.abs(self.A0).max() + np.abs(self.u).max() * np.abs(self.v).max()
        )

    def kernel_args(self):
        return _k.GAME, (
            _EMPTY_2D,
            _EMPTY_1D,
            _EMPTY_2D,
            _EMPTY_2D,
            _EMPTY_1D,
            0.0,
            0.0,
            0,
            1.0,
            self.A0,
            self.u,
            self.v,
            self.s,
            math.inf,
            math.inf,
        )

    @property
    def dims(self):
        return self.A0.shape

    def gap(self, x, y):
        """Exact duality gap ``max_j (A0^T x)_j - min_i (A0 y)_i`` of ``E f``."""
        return float((self.A0.T @ x).max() - (self.A0 @ y).min())


@dataclass(frozen=True)
class SaddleResult:
    """What a saddle solver releases.

    Attributes
    ----------
    x, y : ndarray
        Averages of the output vertex samples (points of the simplices).
    n_iter : int
    dp_event : DpEvent
    epsilon : float
        Epsilon of ``dp_event`` at the plan's delta.
    params : dict
        Resolved public parameters (steps, batch size, step size, ...).
    """

    x: np.ndarray
    y: np.ndarray
    n_iter: int
    dp_event: object
    epsilon: float
    params: dict
