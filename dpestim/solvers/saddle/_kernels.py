"""numba loops of the vertex-sampling mirror-descent solvers (paper 001).

Entropic mirror descent is kept in the log domain: the iterates are
``softmax(h)`` of cumulative scores ``h`` and are never multiplied
iteratively. Vertices are drawn by inverting the cumulative distribution of
``softmax(h)`` with one ``rng.random()`` uniform per draw, so the NumPy twins
in ``tests/twins_saddle.py`` reproduce every draw. No kernel uses
``fastmath``.

Two problem kinds share the gradient routine :func:`batch_grad`:

* ``LINEAR`` -- a linear model on an l1-ball of radius ``R`` lifted to the
  simplex of its ``2 p`` vertices ``+-R e_j`` (``theta = R (u+ - u-)``), with a
  dual variable ``lam`` on a simplex of dimension ``G`` and per-example loss
  ``f = (l(s) - c) (a0 + sum_k lam_k A_ik) + s sum_k lam_k B_ik - sum_k lam_k C_k``
  where ``s = theta . x_i`` is the score and ``l`` a loss of
  :mod:`dpestim.losses`. Worst-group risks (``A_ik = 1{a_i = k} / pi_k``) and
  Lagrangians of linear fairness surrogates (``B``) are both of this form.
* ``GAME`` -- a bilinear scenario game ``f = x^T (A0 + s_i u v^T) y`` with
  public ``A0, u, v`` and private scalars ``s_i`` in ``[-1, 1]``.

Every per-example gradient coordinate is clamped to the public Lipschitz bound
(``clamp_x`` on the scalar multiplier of ``x_i``, ``clamp_y`` on each dual
coordinate) as a safety net: the sensitivity the accounting assumes then holds
whatever the data.
"""

import math

import numba
import numpy as np

from ...losses._kernels import dloss

LINEAR = 0
GAME = 1


@numba.njit(cache=True)
def softmax_cdf(h, cdf):
    """Cumulative distribution of ``softmax(h)`` into ``cdf`` (last entry 1)."""
    m = h[0]
    for j in range(1, h.shape[0]):
        if h[j] > m:
            m = h[j]
    total = 0.0
    for j in range(h.shape[0]):
        total += math.exp(h[j] - m)
        cdf[j] = total
    for j in range(h.shape[0]):
        cdf[j] /= total
    cdf[h.shape[0] - 1] = 1.0


@numba.njit(cache=True)
def draw_vertex(cdf, u):
    """Index ``j`` with ``cdf[j-1] <= u < cdf[j]`` (inverse-CDF sampling)."""
    return np.searchsorted(cdf, u, side="right")


@numba.njit(cache=True)
def draw_block(h, cdf, idx, k, cnt, rng):
    """``k`` samples of ``softmax(h)`` into ``idx``, then one output sample.

    The output sample is counted in ``cnt``; ``k + 1`` uniforms are used.
    """
    softmax_cdf(h, cdf)
    for i in range(k):
        idx[i] = draw_vertex(cdf, rng.random())
    cnt[draw_vertex(cdf, rng.random())] += 1


@numba.njit(cache=True)
def _clamp(v, bound):
    """``v`` clamped to ``[-bound, bound]``; ``0`` for NaN under a finite
    bound (an overflowed term adds nothing, so the bound holds in floating
    point; without a bound, a non-private run, it is kept as computed)."""
    if v != v:
        return v if bound == math.inf else 0.0
    if v > bound:
        return bound
    if v < -bound:
        return -bound
    return v


@numba.njit(cache=True)
def batch_grad(
    kind,
    rows,
    xi,
    nx,
    yi,
    ny,
    prob,
    theta,
    lam,
    gx,
    gy,
):
    """Batch-mean gradients at the average of vertex samples.

    ``xi[:nx]`` and ``yi[:ny]`` are vertex indices; the point is their
    empirical average. Writes ``gx`` (gradient in the x block, descent) and
    ``gy`` (gradient in the y block, for ascent). ``theta`` and ``lam`` are
    work buffers.
    """
    X, target, A, Bm, C, a0, center, loss, radius, A0, u, v, s, clamp_x, clamp_y = prob
    b = rows.shape[0]
    gx[:] = 0.0
    gy[:] = 0.0
    if kind == GAME:
        d = u.shape[0]
        sbar = 0.0
        for r in range(b):
            sbar += s[rows[r]]
        sbar /= b
        vy = 0.0
        for k in range(ny):
            j = yi[k]
            vy += v[j]
            for i in range(d):
                gx[i] += A0[i, j]
        ux = 0.0
        for k in range(nx):
            i = xi[k]
            ux += u[i]
            for j in range(d):
                gy[j] += A0[i, j]
        for i in range(d):
            gx[i] = gx[i] / nx + sbar * u[i] * vy / nx
        for j in range(d):
            gy[j] = gy[j] / ny + sbar * v[j] * ux / nx
        return
    p = X.shape[1]
    G = lam.shape[0]
    theta[:] = 0.0
    lam[:] = 0.0
    for k in range(nx):
        j = xi[k]
        if j < p:
            theta[j] += radius / nx
        else:
            theta[j - p] -= radius / nx
    for k in range(ny):
        lam[yi[k]] += 1.0 / ny
    z = np.empty(1)
    yv = np.empty(1)
    dz = np.empty(1)
    gt = np.zeros(p)
    for r in range(b):
        i = rows[r]
        score = 0.0
        for j in range(p):
            if theta[j] != 0.0:
                score += theta[j] * X[i, j]
        z[0] = score
        yv[0] = target[i]
        value = dloss(loss, z, yv, dz)
        wa = a0
        wb = 0.0
        for k in range(G):
            wa += lam[k] * A[i, k]
            wb += lam[k] * Bm[i, k]
        coef = _clamp(dz[0] * wa + wb, clamp_x)
        for j in range(p):
            gt[j] += coef * X[i, j]
        for k in range(G):
            gy[k] += _clamp(
                (value - center) * A[i, k] + score * Bm[i, k] - C[k], clamp_y
            )
    for j in range(p):
        gx[j] = radius * gt[j] / b
        gx[j + p] = -radius * gt[j] / b
    for k in range(G):
        gy[k] /= b


@numba.njit(cache=True)
def smd_loop(
    kind,
    n_steps,
    batch_size,
    n_samples_k,
    tau,
    perm,
    prob,
    dim_x,
    dim_y,
    rng,
    cnt_x,
    cnt_y,
):
    """Algorithm 1 (private SMD with vertex sampling), ascent on y.

    Per step: ``K`` gradient samples then one output sample from ``x^t``,
    the same from ``y^t`` (uniforms drawn in that order), the batch gradient
    on rows ``perm[t B:(t+1) B]`` at the sample averages, then
    ``h_x -= tau g_x`` and ``h_y += tau g_y``. Output counts are accumulated
    in ``cnt_x`` and ``cnt_y``.
    """
    hx = np.zeros(dim_x)
    hy = np.zeros(dim_y)
    cx = np.empty(dim_x)
    cy = np.empty(dim_y)
    gx = np.empty(dim_x)
    gy = np.empty(dim_y)
    xi = np.empty(n_samples_k, dtype=np.int64)
    yi = np.empty(n_samples_k, dtype=np.int64)
    theta = np.empty(prob[0].shape[1])
    lam = np.empty(dim_y)
    for t in range(n_steps):
        draw_block(hx, cx, xi, n_samples_k, cnt_x, rng)
        draw_block(hy, cy, yi, n_samples_k, cnt_y, rng)
        rows = perm[t * batch_size : (t + 1) * batch_size]
        batch_grad(
            kind, rows, xi, n_samples_k, yi, n_samples_k, prob, theta, lam, gx, gy,
        )  # fmt: skip
        for j in range(dim_x):
            hx[j] -= tau * gx[j]
        for j in range(dim_y):
            hy[j] += tau * gy[j]


@numba.njit(cache=True)
def truncated_geometric(rng, M, C_M):
    """``N`` with ``P[N = k] = 2^-k / C_M`` on ``{0..M}`` (one uniform)."""
    uu = rng.random() * C_M
    acc = 0.0
    for k in range(M + 1):
        acc += 0.5**k
        if uu < acc:
            return k
    return M


@numba.njit(cache=True)
def smd_br_loop(
    kind,
    budget_u,
    M,
    alpha_batch,
    tau,
    perm,
    prob,
    dim_x,
    dim_y,
    rng,
    cnt_x,
    cnt_y,
):
    """Algorithm 3 (bias-reduced gradient, Algorithm 2), ascent on y.

    Control flow depends only on the random ``N_t`` and on ``n``: the loop
    stops when ``sum 2^N_t`` would exceed ``budget_u - 2^M`` or the next
    batch ``ceil(2^N / alpha)`` does not fit in the remaining rows. Per step:
    ``N ~ TG(1/2, M)`` (one uniform), ``2^(N+1)`` samples then one output
    sample from ``x^t``, the same from ``y^t``; the gradient is
    ``w_N (g(mean of all) - g(mean of first half)) + g(first)`` on one batch
    with ``w_N = C_M 2^N``. Returns the number of steps.
    """
    n = perm.shape[0]
    C_M = 2.0 - 0.5**M
    hx = np.zeros(dim_x)
    hy = np.zeros(dim_y)
    cx = np.empty(dim_x)
    cy = np.empty(dim_y)
    gx = np.empty(dim_x)
    gy = np.empty(dim_y)
    gx2 = np.empty(dim_x)
    gy2 = np.empty(dim_y)
    kmax = 2 ** (M + 1)
    xi = np.empty(kmax, dtype=np.int64)
    yi = np.empty(kmax, dtype=np.int64)
    theta = np.empty(prob[0].shape[1])
    lam = np.empty(dim_y)
    spent = 0
    pos = 0
    steps = 0
    N = truncated_geometric(rng, M, C_M)
    while spent <= budget_u - 2**M:
        b = max(1, int(math.ceil(2**N / alpha_batch)))
        if pos + b > n:
            break
        k2 = 2 ** (N + 1)
        draw_block(hx, cx, xi, k2, cnt_x, rng)
        draw_block(hy, cy, yi, k2, cnt_y, rng)
        rows = perm[pos : pos + b]
        w = C_M * 2**N
        batch_grad(
            kind, rows, xi, k2, yi, k2, prob, theta, lam, gx, gy,
        )  # fmt: skip
        batch_grad(
            kind, rows, xi, k2 // 2, yi, k2 // 2, prob, theta, lam, gx2, gy2,
        )  # fmt: skip
        for j in range(dim_x):
            gx[j] = w * (gx[j] - gx2[j])
        for j in range(dim_y):
            gy[j] = w * (gy[j] - gy2[j])
        batch_grad(
            kind, rows, xi, 1, yi, 1, prob, theta, lam, gx2, gy2,
        )  # fmt: skip
        for j in range(dim_x):
            hx[j] -= tau * (gx[j] + gx2[j])
        for j in range(dim_y):
            hy[j] += tau * (gy[j] + gy2[j])
        spent += 2**N
        pos += b
        steps += 1
        N = truncated_geometric(rng, M, C_M)
    return steps


@numba.njit(cache=True)
def sco_loop(
    n_steps,
    batch_size,
    n_samples_k,
    period,
    tau,
    perm,
    X,
    Y,
    loss,
    radius,
    clamp_dz,
    n_out,
    rng,
    out_counts,
):
    """Algorithm 5 (anytime online-to-batch mirror descent), l1-ball ERM.

    The variable is the ``(n_outputs, p)`` coefficient matrix on the l1-ball
    of radius ``R``, lifted to ``2 n_outputs p`` vertices (first half ``+R``,
    second half ``-R``, C order). ``w^t`` is the running mean of the MD
    iterates (probability space); ``K`` vertices are resampled from it at
    ``t < q`` and at every ``t`` with ``(t + 1) % q == 0`` (1-based ``t <= q``
    or ``t = 0 mod q``), otherwise the last sample is reused. The final
    ``n_out`` fresh samples from ``w^T`` are counted into ``out_counts``.
    """
    K, p = Y.shape[1], X.shape[1]
    half = K * p
    dim = 2 * half
    h = np.zeros(dim)
    w = np.zeros(dim)
    prob = np.empty(dim)
    cdf = np.empty(dim)
    g = np.empty(dim)
    W = np.zeros((K, p))
    z = np.empty(K)
    dz = np.empty(K)
    idx = np.empty(n_samples_k, dtype=np.int64)
    for t in range(n_steps):
        m = h.max()
        total = 0.0
        for j in range(dim):
            prob[j] = math.exp(h[j] - m)
            total += prob[j]
        for j in range(dim):
            w[j] += (prob[j] / total - w[j]) / (t + 1)
        if t < period or (t + 1) % period == 0:
            acc = 0.0
            for j in range(dim):
                acc += w[j]
                cdf[j] = acc
            for j in range(dim):
                cdf[j] /= acc
            cdf[dim - 1] = 1.0
            W[:, :] = 0.0
            for k in range(n_samples_k):
                j = draw_vertex(cdf, rng.random())
                idx[k] = j
                sign = 1.0
                if j >= half:
                    j -= half
                    sign = -1.0
                W[j // p, j % p] += sign * radius / n_samples_k
        g[:] = 0.0
        for r in range(batch_size):
            i = perm[t * batch_size + r]
            for c in range(K):
                acc = 0.0
                for j in range(p):
                    if W[c, j] != 0.0:
                        acc += W[c, j] * X[i, j]
                z[c] = acc
            dloss(loss, z, Y[i], dz)
            for c in range(K):
                coef = _clamp(dz[c], clamp_dz)
                for j in range(p):
                    g[c * p + j] += coef * X[i, j]
        for j in range(half):
            gj = radius * g[j] / batch_size
            h[j] -= tau * gj
            h[j + half] += tau * gj
    acc = 0.0
    for j in range(dim):
        acc += w[j]
        cdf[j] = acc
    for j in range(dim):
        cdf[j] /= acc
    cdf[dim - 1] = 1.0
    for _ in range(n_out):
        out_counts[draw_vertex(cdf, rng.random())] += 1
