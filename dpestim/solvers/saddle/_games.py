"""Public test problems for the saddle-point solvers (spec section 6.2)."""

import numpy as np

from .base import BilinearGame

__all__ = ["planted_game"]


def planted_game(d, n, rng):
    """Experiment A: planted rock-paper-scissors game with ``d`` strategies.

    ``A0[:3, :3] = 0.5 RPS``, dominated rows ``+0.5`` and columns ``-0.5``;
    unique equilibrium uniform on the first three strategies, value 0. Data
    ``s`` are Rademacher; ``u, v ~ U[-0.7, 0.7]^d`` are fixed (seeds 7, 8).
    """
    rps = np.array([[0, 1, -1], [-1, 0, 1], [1, -1, 0]], float) * 0.5
    A0 = np.zeros((d, d))
    A0[3:, :] = 0.5
    A0[:3, 3:] = -0.5
    A0[:3, :3] = rps
    u = np.random.default_rng(7).uniform(-0.7, 0.7, d)
    v = np.random.default_rng(8).uniform(-0.7, 0.7, d)
    s = rng.choice([-1.0, 1.0], size=n)
    return BilinearGame(A0, u, v, s)
