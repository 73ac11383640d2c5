"""Non-private l1-ball constrained ERM: the exact problem of ``dp-smd-sco``.

``dp-smd-sco`` minimises the mean loss over ``||W||_1 <= R`` (the intercept a
constant feature sharing the budget). Its vertex sampling, single pass and
capped step exist only for privacy; without a privacy budget
(``epsilon = inf``) :func:`solve_l1_ball` reaches the optimum of the same
problem by accelerated projected gradient (FISTA with adaptive restart,
Euclidean projection onto the l1 ball by the sort-based rule of Duchi,
Shalev-Shwartz, Singer and Chandra, 2008). Everything here reads the data and
is used only when nothing is protected.
"""

import numpy as np

from ...losses import LOGISTIC, MULTINOMIAL, SQUARED_HINGE

__all__ = ["project_l1_ball", "solve_l1_ball", "mean_loss_grad"]

#: Curvature of each loss in its output (``sup d^2 loss / dz^2``; squared
#: hinge: its gradient is 2-Lipschitz; multinomial: softmax Hessian <= 1/2).
_CURVATURE = {LOGISTIC: 0.25, SQUARED_HINGE: 2.0, MULTINOMIAL: 0.5}


def project_l1_ball(v, radius):
    """Euclidean projection of ``v`` (any shape) onto ``||.||_1 <= radius``."""
    a = np.abs(v).ravel()
    if a.sum() <= radius:
        return v.copy()
    u = np.sort(a)[::-1]
    css = np.cumsum(u) - radius
    k = np.arange(1, u.size + 1)
    rho = np.nonzero(u * k > css)[0][-1]
    theta = css[rho] / (rho + 1.0)
    return np.sign(v) * np.maximum(np.abs(v) - theta, 0.0)


def mean_loss_grad(loss, X, Y, W):
    """Mean loss over the rows and its gradient in ``W`` of shape (K, p).

    ``Y`` is the estimators' encoding: ``+-1`` columns for the logistic and
    squared-hinge losses, one-hot rows for the multinomial.
    """
    n = X.shape[0]
    Z = X @ W.T
    if loss == LOGISTIC:
        m = Y * Z
        value = np.logaddexp(0.0, -m).sum()
        dZ = -Y * np.exp(-np.logaddexp(0.0, m))  # -y sigmoid(-m)
    elif loss == SQUARED_HINGE:
        m = np.maximum(1.0 - Y * Z, 0.0)
        value = (m * m).sum()
        dZ = -2.0 * Y * m
    elif loss == MULTINOMIAL:
        zmax = Z.max(axis=1, keepdims=True)
        E = np.exp(Z - zmax)
        total = E.sum(axis=1, keepdims=True)
        value = (np.log(total) + zmax).sum() - (Y * Z).sum()
        dZ = E / total - Y
    else:  # pragma: no cover - the solver checks its losses
        raise ValueError(f"unsupported loss {loss!r}")
    return value / n, dZ.T @ X / n


def _smoothness(loss, X, n_power=30, seed=0):
    """``curvature * lambda_max(X^T X / n)`` by power iteration (x 1.05)."""
    rng = np.random.default_rng(seed)
    v = rng.standard_normal(X.shape[1])
    lam = 0.0
    for _ in range(n_power):
        u = X.T @ (X @ v) / X.shape[0]
        lam = float(np.linalg.norm(u))
        if lam == 0.0:
            return _CURVATURE[loss]
        v = u / lam
    return 1.05 * _CURVATURE[loss] * lam


def solve_l1_ball(loss, X, Y, radius, *, max_iter=5000, tol=1e-7):
    """Minimise the mean loss over ``||W||_1 <= radius``; ``(W, n_iter)``.

    FISTA with step ``1 / L`` (``L`` the loss curvature times the largest
    eigenvalue of ``X^T X / n``), gradient adaptive restart
    (O'Donoghue and Candes, 2015), stopped when the relative change of
    ``W`` falls below ``tol`` or after ``max_iter`` iterations. Starts at 0,
    the centre of the ball (the private algorithm's start).
    """
    K, p = Y.shape[1], X.shape[1]
    step = 1.0 / _smoothness(loss, X)
    W = np.zeros((K, p))
    V, t = W, 1.0
    n_iter = 0
    while n_iter < max_iter:
        n_iter += 1
        _, G = mean_loss_grad(loss, X, Y, V)
        W_new = project_l1_ball(V - step * G, radius)
        if np.vdot(V - W_new, W_new - W) > 0:  # gradient restart
            t = 1.0
        t_new = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
        V = W_new + ((t - 1.0) / t_new) * (W_new - W)
        change = np.linalg.norm(W_new - W)
        W, t = W_new, t_new
        if change <= tol * max(1.0, np.linalg.norm(W)):
            break
    return W, n_iter
