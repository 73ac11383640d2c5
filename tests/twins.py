"""Pure-NumPy reference implementations (twins) of the numba kernels."""

import numpy as np

from dpestim.losses import HINGE, LOGISTIC, MULTINOMIAL, SQUARED, SQUARED_HINGE
from dpestim.solvers import laplacian_smooth


def np_dloss(loss, z, y):
    """NumPy twin of ``dpestim.losses.dloss`` for one example."""
    if loss == MULTINOMIAL:
        p = np.exp(z - z.max())
        p /= p.sum()
        return p - y
    if loss == LOGISTIC:
        return -y / (1.0 + np.exp(y * z))
    if loss == SQUARED:
        return z - y
    if loss == HINGE:
        return np.where(1 - y * z > 0, -y, 0.0)
    if loss == SQUARED_HINGE:
        return -2.0 * y * np.maximum(0.0, 1 - y * z)
    raise ValueError(loss)


def np_clipped_grad_sum(X, Y, rows, W, b, loss, clip_norm, fit_intercept, weights=None):
    """NumPy twin: sum over ``rows`` of per-example gradients, each clipped.

    The per-example gradient is formed explicitly and its norm computed
    with ``numpy.linalg.norm``, independently of the kernel's shortcut.
    ``weights``: row ``i``'s clipped gradient is multiplied by ``weights[i]``.
    An example whose gradient norm is not finite (overflowed outputs) adds
    nothing.
    """
    X = X.toarray() if hasattr(X, "toarray") else X
    G = np.zeros_like(W)
    g0 = np.zeros_like(b)
    for i in rows:
        with np.errstate(over="ignore", invalid="ignore"):
            dz = np_dloss(loss, W @ X[i] + b, Y[i])
            gW = np.outer(dz, X[i])
            gb = dz if fit_intercept else np.zeros_like(dz)
            norm = np.sqrt(np.sum(gW**2) + np.sum(gb**2))
        if not np.isfinite(norm):
            continue
        s = min(1.0, clip_norm / norm) if norm > 0 else 1.0
        if weights is not None:
            s *= weights[i]
        G += s * gW
        g0 += s * gb
    return G, g0


def np_poisson_sample(rng, n, q):
    """NumPy twin of the geometric-gap Poisson sampler (same stream)."""
    if q >= 1:
        return np.arange(n)
    out, i = [], -1
    while True:
        gap = np.floor(np.log(1.0 - rng.random()) / np.log1p(-q))
        if gap >= n - i - 1:
            return np.array(out, dtype=np.int64)
        i += 1 + int(gap)
        out.append(i)


def np_sampling_key(rng):
    """NumPy twin of ``sampling_key``: two uint64 words from ``rng``."""
    return rng.integers(0, 2**64 - 1, size=2, dtype=np.uint64, endpoint=True)


def np_poisson_sample_range(key, step, q, start, stop, block=4096):
    """NumPy twin of the counter-based sampler on rows ``[start, stop)``.

    The uniforms of sampling block ``j`` at ``step`` are taken from
    ``numpy.random.Philox(key=key, counter=[0, j, step, 0])`` itself, the
    reference implementation of the counter-based generator.
    """
    if q >= 1:
        return np.arange(start, stop)
    out = []
    for j in range(start // block, -(-stop // block)):
        raw = np.random.Philox(key=key, counter=[0, j, step, 0])
        hi = min((j + 1) * block, stop)
        i = j * block - 1
        while True:
            w = int(raw.random_raw())
            u = ((w >> 11) + 1) * 2.0**-53
            gap = np.floor(np.log(u) / np.log1p(-q))
            if gap >= hi - i - 1:
                break
            i += 1 + int(gap)
            if i >= start:
                out.append(i)
    return np.array(out, dtype=np.int64)


def np_noisy_sgd(
    X,
    Y,
    loss,
    fit_intercept,
    clip_norm,
    noise_std,
    q,
    lr,
    alpha,
    n_steps,
    rng,
    smoothing=0.0,
    weights=None,
    b0=None,
):
    """NumPy twin of the dp-sgd loop, drawing from ``rng`` in the same order.

    ``weights``: per-row weights of the clipped gradients; ``b0``: the
    initial intercept (zero by default).

    ``smoothing > 0``: the dp-lssgd step, with the FFT form of the smoothing
    applied to each row of the noisy gradient plus penalty gradient.
    """
    n, d = X.shape
    K = Y.shape[1]
    W, b = np.zeros((K, d)), np.zeros(K)
    if b0 is not None:
        b[:] = b0
    key = np_sampling_key(rng) if q < 1 else None
    for t in range(n_steps):
        rows = np_poisson_sample_range(key, t, q, 0, n)
        G, g0 = np_clipped_grad_sum(
            X, Y, rows, W, b, loss, clip_norm, fit_intercept, weights
        )
        if noise_std > 0:
            G = G + noise_std * rng.standard_normal((K, d))
            if fit_intercept:
                g0 = g0 + noise_std * rng.standard_normal(K)
        if smoothing > 0:
            G = laplacian_smooth(G + q * n * alpha * W, smoothing) - q * n * alpha * W
        W = W - lr * (G / (q * n) + alpha * W)
        if fit_intercept:
            b = b - lr * g0 / (q * n)
    return W, b


def make_targets(loss, n, K, rng):
    """Encoded targets of the right kind for ``loss``."""
    if loss == SQUARED:
        return rng.normal(size=(n, K)) * 3
    if loss == MULTINOMIAL:
        Y = np.zeros((n, K))
        Y[np.arange(n), rng.integers(0, K, n)] = 1
        return Y
    return rng.choice([-1.0, 1.0], size=(n, K))


def np_lazy_noisy_sgd(
    X,
    Y,
    loss,
    fit_intercept,
    clip_norm,
    noise_stds,
    q,
    rates,
    alpha,
    rng,
    eager,
    segment=None,
    min_scale=1e-30,
):
    """NumPy twin of the lazy sparse dp-sgd loop, drawing in the same order.

    An independent formulation: ``W`` is kept as is (no global scale, no
    prefix sums) and ``pending[j]`` is the variance of column ``j``'s noise
    not drawn yet, updated densely at every step as ``a_t^2 pending + s_t^2``.
    A column receives ``+-sqrt(pending[j]) N(0, 1)`` per output (the sign
    of the kernel's scale, see below) when a sampled
    row first reads it in a step (every column at every step if ``eager``),
    and all columns in order at the kernel's flush points (every ``segment``
    steps, when the kernel's scale would fall below ``min_scale``, and at the
    end).
    """
    X = X.tocsr()
    n, d = X.shape
    K = Y.shape[1]
    T = len(rates)
    segment = T if segment is None else segment
    W, b = np.zeros((K, d)), np.zeros(K)
    pending = np.zeros(d)
    denom = q * n
    key = np_sampling_key(rng)

    def bring(j):
        if pending[j] > 0:  # the kernel's draw is in units of V = W / A
            sd = np.sqrt(pending[j]) * np.sign(A)
            for k in range(K):
                W[k, j] += sd * rng.standard_normal()
        pending[j] = 0.0

    def flush():
        for j in range(d):
            bring(j)

    A, pos = 1.0, 0
    for t in range(T):
        if pos == segment:
            flush()
            A, pos = 1.0, 0
        rows = np_poisson_sample_range(key, t, q, 0, n)
        if eager:
            flush()
        else:
            seen = set()
            for i in rows:
                for j in X.indices[X.indptr[i] : X.indptr[i + 1]]:
                    if j not in seen:
                        seen.add(j)
                        bring(j)
        G, g0 = np_clipped_grad_sum(X, Y, rows, W, b, loss, clip_norm, fit_intercept)
        lr, std = rates[t], noise_stds[t]
        shrink = 1.0 - lr * alpha
        if abs(A * shrink) < min_scale:
            flush()
            A, pos = (1.0 if abs(shrink) < min_scale else shrink), 0
        else:
            A *= shrink
        W = shrink * W - lr * G / denom
        pending = shrink**2 * pending + (lr * std / denom) ** 2
        if fit_intercept:
            if std > 0:
                g0 = g0 + std * rng.standard_normal(K)
            b = b - lr * g0 / denom
        pos += 1
    flush()
    return W, b
