"""The non-private exact solve of dp-smd-sco's l1-ball problem."""

import zlib

import numpy as np
import pytest
from scipy.optimize import brentq

from dpestim.losses import LOGISTIC, MULTINOMIAL, SQUARED_HINGE
from dpestim.solvers.saddle._l1_ball import (
    mean_loss_grad,
    project_l1_ball,
    solve_l1_ball,
)


def _rng(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


@pytest.mark.parametrize("radius", [0.1, 1.0, 3.0, 100.0])
def test_projection_matches_soft_threshold_by_root_finding(radius):
    v = _rng(f"proj{radius}").normal(size=(3, 7)) * 2
    got = project_l1_ball(v, radius)
    if np.abs(v).sum() <= radius:
        np.testing.assert_array_equal(got, v)
        return
    theta = brentq(
        lambda t: np.maximum(np.abs(v) - t, 0).sum() - radius, 0, np.abs(v).max()
    )
    np.testing.assert_allclose(got, np.sign(v) * np.maximum(np.abs(v) - theta, 0))
    assert np.abs(got).sum() == pytest.approx(radius)


@pytest.mark.parametrize("loss", [LOGISTIC, SQUARED_HINGE, MULTINOMIAL])
def test_gradient_matches_finite_differences(loss):
    rng = _rng(f"grad{loss}")
    X = rng.normal(size=(40, 5))
    K = 3 if loss == MULTINOMIAL else 1
    if loss == MULTINOMIAL:
        Y = np.eye(K)[rng.integers(0, K, 40)]
    else:
        Y = rng.choice([-1.0, 1.0], size=(40, 1))
    W = rng.normal(size=(K, 5)) * 0.3
    _, G = mean_loss_grad(loss, X, Y, W)
    h = 1e-6
    for idx in np.ndindex(W.shape):
        E = np.zeros_like(W)
        E[idx] = h
        fd = mean_loss_grad(loss, X, Y, W + E)[0] - mean_loss_grad(loss, X, Y, W - E)[0]
        assert G[idx] == pytest.approx(fd / (2 * h), rel=1e-4, abs=1e-7)


def test_solution_satisfies_the_optimality_condition_on_the_ball():
    """At the constrained optimum, -grad is in the normal cone of the ball:
    every nonzero coordinate has |g_j| = max |g| and sign(w_j) = -sign(g_j)."""
    rng = _rng("kkt")
    X = rng.normal(size=(500, 8))
    y = np.sign(X @ rng.normal(size=8) + 0.3 * rng.normal(size=500))[:, None]
    W, _ = solve_l1_ball(LOGISTIC, X, y, 1.0, tol=1e-12, max_iter=20000)
    assert np.abs(W).sum() == pytest.approx(1.0)
    _, G = mean_loss_grad(LOGISTIC, X, y, W)
    top = np.abs(G).max()
    on = np.abs(W) > 1e-8
    np.testing.assert_allclose(np.abs(G[on]), top, rtol=1e-3)
    assert (np.sign(W[on]) == -np.sign(G[on])).all()
