"""NumPy twins of the vertex-sampling kernels (``dpestim.solvers.saddle._kernels``).

Written independently of the kernels, from the spec's pseudo-code: explicit
per-example gradients, ``scipy.special.softmax`` and ``numpy.searchsorted``.
They consume the Generator in the same order (one ``random()`` per draw).
"""

import numpy as np
from scipy.special import logsumexp, softmax
from twins import np_dloss

from dpestim.losses import LOGISTIC, MULTINOMIAL, SQUARED, SQUARED_HINGE
from dpestim.solvers.saddle import BilinearGame


def np_loss_and_dz(loss, z, y):
    """Loss value and derivative (scalar ``z`` for single-output problems)."""
    z, y = np.atleast_1d(np.asarray(z, float)), np.atleast_1d(np.asarray(y, float))
    dz = np_dloss(loss, z, y)
    if loss == LOGISTIC:
        value = np.logaddexp(0, -y * z).sum()
    elif loss == SQUARED:
        value = 0.5 * ((z - y) ** 2).sum()
    elif loss == SQUARED_HINGE:
        value = (np.maximum(0, 1 - y * z) ** 2).sum()
    elif loss == MULTINOMIAL:
        value = logsumexp(z) - y @ z
    else:
        raise ValueError(loss)
    return value, (
        dz[0] if dz.shape[0] == 1 and np.ndim(z) == 1 and len(z) == 1 else dz
    )


def np_draw(p, rng, k):
    c = np.cumsum(p)
    c = c / c[-1]
    c[-1] = 1.0
    return np.array([np.searchsorted(c, rng.random(), side="right") for _ in range(k)])


def np_batch_grad(problem, rows, xi, yi):
    """Batch-mean gradients at the averages of vertex samples ``xi``, ``yi``."""
    if isinstance(problem, BilinearGame):
        x = np.bincount(xi, minlength=problem.A0.shape[0]) / len(xi)
        y = np.bincount(yi, minlength=problem.A0.shape[1]) / len(yi)
        gx = np.zeros(len(x))
        gy = np.zeros(len(y))
        for i in rows:
            A = problem.A0 + problem.s[i] * np.outer(problem.u, problem.v)
            gx += A @ y
            gy += A.T @ x
        return gx / len(rows), gy / len(rows)
    P = problem.X.shape[1]
    u = np.bincount(xi, minlength=2 * P) / len(xi)
    theta = problem.radius * (u[:P] - u[P:])
    lam = np.bincount(yi, minlength=problem.A.shape[1]) / len(yi)
    gt = np.zeros(P)
    gy = np.zeros(len(lam))
    for i in rows:
        s = problem.X[i] @ theta
        value, dz = np_loss_and_dz(problem.loss, s, problem.target[i])
        coef = dz * (problem.a0 + lam @ problem.A[i]) + lam @ problem.B[i]
        coef = np.clip(coef, -problem.clamp_x, problem.clamp_x)
        gt += coef * problem.X[i]
        gy += np.clip(
            (value - problem.center) * problem.A[i] + s * problem.B[i] - problem.C,
            -problem.clamp_y,
            problem.clamp_y,
        )
    gt *= problem.radius / len(rows)
    return np.concatenate([gt, -gt]), gy / len(rows)


def np_smd(problem, T, B, K, tau, perm, rng, dims):
    """Twin of ``smd_loop``: returns output counts and the logit history."""
    dx, dy = dims
    hx, hy = np.zeros(dx), np.zeros(dy)
    cx, cy = np.zeros(dx, int), np.zeros(dy, int)
    for t in range(T):
        px, py = softmax(hx), softmax(hy)
        d = np_draw(px, rng, K + 1)
        xi, cx[d[-1]] = d[:K], cx[d[-1]] + 1
        d = np_draw(py, rng, K + 1)
        yi, cy[d[-1]] = d[:K], cy[d[-1]] + 1
        gx, gy = np_batch_grad(problem, perm[t * B : (t + 1) * B], xi, yi)
        hx = hx - tau * gx
        hy = hy + tau * gy
    return cx, cy


def np_coupled_log_ratio(problem, problem2, T, B, K, tau, perm, rng, dims):
    """Algorithm 1 on two datasets conditioned on the same released samples.

    Samples are drawn from the first run's iterates and fed to both; returns
    the largest ``|log p_t(j) - log p'_t(j)|`` over steps and coordinates, for
    each block.
    """
    dx, dy = dims
    h = [np.zeros(dx), np.zeros(dy)]
    h2 = [np.zeros(dx), np.zeros(dy)]
    worst = [0.0, 0.0]
    for t in range(T):
        for b in (0, 1):
            lp = h[b] - np.logaddexp.reduce(h[b])
            lq = h2[b] - np.logaddexp.reduce(h2[b])
            worst[b] = max(worst[b], np.abs(lp - lq).max())
        xi = np_draw(softmax(h[0]), rng, K)
        yi = np_draw(softmax(h[1]), rng, K)
        rows = perm[t * B : (t + 1) * B]
        gx, gy = np_batch_grad(problem, rows, xi, yi)
        gx2, gy2 = np_batch_grad(problem2, rows, xi, yi)
        h = [h[0] - tau * gx, h[1] + tau * gy]
        h2 = [h2[0] - tau * gx2, h2[1] + tau * gy2]
    return worst


def np_tg(rng, M):
    C_M = 2.0 - 0.5**M
    u = rng.random() * C_M
    acc = 0.0
    for k in range(M + 1):
        acc += 0.5**k
        if u < acc:
            return k
    return M


def np_smd_br(problem, U, M, alpha, tau, perm, rng, dims):
    """Twin of ``smd_br_loop``: returns ``(counts_x, counts_y, steps)``."""
    dx, dy = dims
    n = len(perm)
    C_M = 2.0 - 0.5**M
    hx, hy = np.zeros(dx), np.zeros(dy)
    cx, cy = np.zeros(dx, int), np.zeros(dy, int)
    spent = pos = steps = 0
    N = np_tg(rng, M)
    while spent <= U - 2**M:
        b = max(1, int(np.ceil(2**N / alpha)))
        if pos + b > n:
            break
        px, py = softmax(hx), softmax(hy)
        k2 = 2 ** (N + 1)
        d = np_draw(px, rng, k2 + 1)
        xi, cx[d[-1]] = d[:k2], cx[d[-1]] + 1
        d = np_draw(py, rng, k2 + 1)
        yi, cy[d[-1]] = d[:k2], cy[d[-1]] + 1
        rows = perm[pos : pos + b]
        gp = np_batch_grad(problem, rows, xi, yi)
        gm = np_batch_grad(problem, rows, xi[: k2 // 2], yi[: k2 // 2])
        g1 = np_batch_grad(problem, rows, xi[:1], yi[:1])
        w = C_M * 2**N
        hx = hx - tau * (w * (gp[0] - gm[0]) + g1[0])
        hy = hy + tau * (w * (gp[1] - gm[1]) + g1[1])
        spent += 2**N
        pos += b
        steps += 1
        N = np_tg(rng, M)
    return cx, cy, steps


def np_sco(X, Y, loss, radius, clamp, T, B, K, q, tau, n_out, perm, rng, forced=None):
    """Twin of ``sco_loop`` (Algorithm 5).

    Returns output counts, the running means ``w^t`` and the vertex samples
    drawn; ``forced`` replays given samples (coupled-neighbour tests).
    """
    n_outputs, P = Y.shape[1], X.shape[1]
    half = n_outputs * P
    h = np.zeros(2 * half)
    w = np.zeros(2 * half)
    W = np.zeros((n_outputs, P))
    ws, drawn = [], []
    for t in range(T):
        w = w + (softmax(h) - w) / (t + 1)
        ws.append(w.copy())
        if t < q or (t + 1) % q == 0:
            idx = np_draw(w, rng, K) if forced is None else forced[len(drawn)]
            drawn.append(idx)
            u = np.bincount(idx, minlength=2 * half) / K
            W = radius * (u[:half] - u[half:]).reshape(n_outputs, P)
        g = np.zeros((n_outputs, P))
        for i in perm[t * B : (t + 1) * B]:
            _, dz = np_loss_and_dz(loss, W @ X[i], Y[i])
            g += np.outer(np.clip(dz, -clamp, clamp), X[i])
        g = radius * g.ravel() / B
        h = h - tau * np.concatenate([g, -g])
    counts = np.bincount(np_draw(w, rng, n_out), minlength=2 * half)
    return counts, ws, drawn
