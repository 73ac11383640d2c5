"""O(nnz) steps of noisy clipped SGD on CSR data: lazy noise and L2 shrinkage.

The dense step of dp-sgd (:func:`dpestim.solvers.sgd._descent.noisy_update`) is, for
every coefficient ``W[k, j]`` and with ``S_t`` the sum of the clipped
per-example gradients of the Poisson sample of step ``t``,

    W_{t+1} = a_t W_t - c_t S_t - s_t xi_t,        xi_t ~ N(0, 1) iid,

with ``a_t = 1 - eta_t alpha`` (the L2 shrinkage), ``c_t = eta_t / (q n)``
and ``s_t = eta_t sigma_t / (q n)`` (``sigma_t`` the noise standard
deviation on the sum, ``q n`` the *expected* batch size, public). On sparse
data ``S_t[:, j] = 0`` for every column ``j`` no sampled row touches, yet the
dense step pays ``O(K d)`` per step for the shrinkage and the noise. This
kernel pays ``O(nnz of the sample)`` instead:

* **Shrinkage** by a global scale (as scikit-learn's SGD ``wscale``):
  ``W = A V`` with ``A_t = prod_{r < t} a_r`` since the segment began, so
  multiplying every coefficient by ``a_t`` is ``A *= a_t``, and the data term
  of step ``t`` is ``V -= c_t S_t / A_{t+1}`` on the touched columns only.
* **Noise** is drawn *lazily* per column: between two reads of column ``j``
  (at steps ``u < v``, nothing touches it in between, so its value evolves
  only by shrinkage and noise) the noise of the skipped steps adds to ``W_v``

      - sum_{t=u}^{v-1} (prod_{r=t+1}^{v-1} a_r) s_t xi_t,

  one centred Gaussian with variance
  ``sum_{t=u}^{v-1} s_t^2 (A_v / A_{t+1})^2``, i.e. in units of ``V``
  ``Q_v - Q_u`` with the prefix sums ``Q_t = sum_{r < t} s_r^2 / A_{r+1}^2``.
  So before column ``j`` is read at step ``v`` (by a sampled row, to compute
  its output) it receives ``sqrt(Q_v - Q_u) N(0, 1)`` per output ``k``, one
  draw in place of ``v - u``. After the last step every column receives its
  pending noise the same way (the *flush*) and ``W = A V`` is materialised.

**Same distribution, hence the same guarantee.** A sampled row's output at
step ``v`` reads ``W_v[:, j]`` only for its own columns, and the trajectory
of a column between two reads depends on its noise only through the sum
above. Replacing that sum of independent centred Gaussians by one centred
Gaussian of the same variance, drawn independently of everything drawn
before it, therefore leaves the joint law of every output, every clipped
gradient, the intercept and the final ``(W, b)`` unchanged, conditionally on
the Poisson samples (which come from the counter-based sampler, a stream
independent of the noise). Which columns are drawn when depends on the data,
but only the final model is released, and its distribution is exactly that
of the dense algorithm: the DpEvent, the sensitivity (the same clipped sum)
and the accounting are those of dense dp-sgd. Nothing else computed here
leaves the kernel. The random *stream* differs from the dense step's (draws
happen in another order, fewer of them), so sparse and dense fits with the
same ``random_state`` agree in distribution, not bit for bit; a sparse fit
remains reproducible for a fixed ``random_state``.

Numerics: the prefix sums are kept in double-double (two-sum) arithmetic, so
``Q_v - Q_u`` is accurate to a few ulps of itself however long the run; when
``|A|`` falls below :data:`_MIN_SCALE` (or a step has ``|a_t|`` that small,
e.g. ``eta alpha = 1``) every column is flushed and ``W = A V`` materialised
(``A = 1``), as also happens every ``segment`` steps so that the prefix
arrays stay bounded. Flushes happen at public, data-independent steps and do
not change the distribution. Variances are measured in units of the largest
``s_t`` of the run so that they cannot overflow. The intercept is dense and
takes its noise at every step, as in the dense step.

Which solvers: those whose step is exactly the update above with a public
schedule ``(eta_t, sigma_t)``: dp-sgd and adp-sgd. Not adp-adagrad (its step
size is a function of the norm of the whole noisy gradient, every
coordinate's noise included), not dp-lssgd with ``smoothing > 0``
(Laplacian smoothing mixes every coordinate of the noisy gradient; with
``smoothing = 0`` it is dp-sgd and takes these steps) and not the
full-batch solvers (every column with a non-zero is touched at every step:
nothing to skip).
"""

import math

import numba
import numpy as np

from ..losses._kernels import dloss_only
from .clipping import _clip_scale, _safe_limit, clipped_coefficient
from .counter_sampling import poisson_sample_range

__all__ = [
    "lazy_flush",
    "lazy_is_eager",
    "lazy_segment_length",
    "lazy_sparse_sgd",
    "lazy_state",
]

#: Below this ``|A|`` (or ``|a_t|``) the scale is folded into the coefficients.
_MIN_SCALE = 1e-30


def lazy_is_eager(n_coefs, expected_batch):
    """Whether to bring every column up to date at every step.

    With few coefficients (``K d <= 4 q n``, public quantities only) drawing
    every column's noise at every step costs less than tracking per entry
    which columns a step reads; it is the same algorithm (every column is
    simply read at every step), with the shrinkage still lazy.
    """
    return bool(n_coefs <= 4 * expected_batch)


def lazy_segment_length(n_steps, n_coefs):
    """Steps between two forced flushes (bounds the prefix arrays).

    At least 4096 and at least ``n_coefs / 4``, so that forced flushes cost at
    most about 4 draws per step on average; never more than the run.
    """
    return int(max(1, min(n_steps, max(4096, n_coefs // 4))))


def lazy_state(W, segment):
    """State of a lazy run starting from ``W``: ``(P, last, fstate, istate, qhi, qlo)``.

    ``P[j, k] = V[k, j]`` (one row per column, so that a column's ``K``
    values share a cache line); ``last[j]`` the position in the segment from
    which column ``j``'s noise is pending (int32: small enough to stay in
    cache); ``fstate = [A]`` (the scale); ``istate = [segment start step,
    position in the segment]``; ``qhi + qlo`` the double-double prefix sums
    ``Q``.
    """
    if segment >= 2**31 - 1:
        raise ValueError("segment too long for int32 positions")
    q = np.zeros(segment + 1)
    return (
        np.ascontiguousarray(W.T, dtype=np.float64),
        np.zeros(W.shape[1], dtype=np.int32),
        np.ones(1),
        np.zeros(2, dtype=np.int64),
        q,
        q.copy(),
    )


@numba.njit(cache=True, inline="always")
def _add_noise(P, j, u, i, qhi, qlo, unit, rng):
    """Add to column ``j`` its noise of the positions ``u .. i - 1``.

    Returns the noise added to ``P[j, 0]``.
    """
    var = (qhi[i] - qhi[u]) + (qlo[i] - qlo[u])
    first = 0.0
    if var > 0.0:
        sd = unit * math.sqrt(var)
        first = sd * rng.standard_normal()
        P[j, 0] += first
        for k in range(1, P.shape[1]):
            P[j, k] += sd * rng.standard_normal()
    return first


@numba.njit(cache=True)
def lazy_flush(P, last, W, fstate, istate, qhi, qlo, unit, rng):
    """Give every column its pending noise; write ``W = A V``; restart at ``A = 1``.

    The current step becomes position 0 of a new segment.
    """
    K = P.shape[1]
    i = istate[1]
    A = fstate[0]
    for j in range(P.shape[0]):
        _add_noise(P, j, last[j], i, qhi, qlo, unit, rng)
        last[j] = 0
        for k in range(K):
            P[j, k] *= A
            W[k, j] = P[j, k]
    fstate[0] = 1.0
    istate[0] += i
    istate[1] = 0
    qhi[0] = 0.0
    qlo[0] = 0.0


@numba.njit(cache=True)
def lazy_sparse_sgd(
    data, indices, indptr, Y, row_sq_norms, loss, W, b, fit_intercept, clip_norm,
    noise_stds, sampling_prob, learning_rates, alpha, rng, key, first_step, unit,
    eager, P, last, fstate, istate, qhi, qlo,
):  # fmt: skip
    """Run ``len(learning_rates)`` lazy noisy clipped steps on CSR data.

    The steps of :func:`dpestim.solvers.sgd._descent._noisy_sgd_loop` with
    ``step_rule`` empty and no smoothing (same sampling, clipping, expected
    batch normaliser ``q n``, shrinkage and intercept step), with the
    coefficient noise and shrinkage applied lazily (module docstring); the
    intercept ``b`` is updated in place. The coefficients live in the state
    ``P`` (:func:`lazy_state`); ``W`` (shape ``(K, d)``) is written only by
    :func:`lazy_flush`, which must follow the last step of the run. ``unit``
    is a positive constant of the run (the largest per-step noise scale
    ``eta_t sigma_t / (q n)``) in which variances are measured. Consecutive
    calls with the same state, ``rng``, ``key`` and ``first_step`` advanced
    reproduce one call bit for bit.
    """
    n = Y.shape[0]
    d, K = P.shape
    denom = sampling_prob * n
    rows = np.empty(n, dtype=np.int64)
    C = np.empty((n, K))
    longest = 1
    for row in range(n):
        longest = max(longest, indptr[row + 1] - indptr[row] + 1)
    fresh = np.empty(longest, dtype=np.int64)
    since = np.empty(longest, dtype=np.int32)
    g0 = np.zeros(K)
    z = np.empty(K)
    dz = np.empty(K)
    limit = _safe_limit(clip_norm, K, d)
    segment = qhi.shape[0] - 1
    for t in range(learning_rates.shape[0]):
        if istate[1] == segment:
            lazy_flush(P, last, W, fstate, istate, qhi, qlo, unit, rng)
        i = istate[1]
        A = fstate[0]
        m = poisson_sample_range(key, first_step + t, sampling_prob, 0, n, rows)
        g0[:] = 0.0
        if eager and d > 0:  # every column read at every step, no bookkeeping
            u = last[0]  # the same for every column
            var = (qhi[i] - qhi[u]) + (qlo[i] - qlo[u])
            sd = unit * math.sqrt(var) if var > 0.0 else 0.0
            for j in range(d):
                if sd > 0.0:
                    for k in range(K):
                        P[j, k] += sd * rng.standard_normal()
                last[j] = i
        for r in range(m):
            row = rows[r]
            start, end = indptr[row], indptr[row + 1]
            k0 = 0
            if not eager:
                # one pass: the first output at the stored values and, per
                # entry, the position from which its column's noise is pending
                acc = 0.0
                for p in range(start, end):
                    j = indices[p]
                    acc += data[p] * P[j, 0]
                    since[p - start] = last[j]
                    last[j] = i
                # bring the columns not yet read at this step up to step t
                # (listed without branching) and correct the first output for
                # their noise (a canonical CSR row has distinct columns)
                n_new = 0
                for e in range(end - start):
                    fresh[n_new] = e
                    n_new += since[e] != i
                for e in fresh[:n_new]:
                    acc += data[start + e] * _add_noise(
                        P, indices[start + e], since[e], i, qhi, qlo, unit, rng
                    )
                z[0] = A * acc + b[0]
                k0 = 1
            for k in range(k0, K):
                acc = 0.0
                for p in range(start, end):
                    acc += data[p] * P[indices[p], k]
                z[k] = A * acc + b[k]
            dloss_only(loss, z, Y[row], dz)
            s = _clip_scale(dz, row_sq_norms[row], fit_intercept, limit, False)
            for k in range(K):
                c = clipped_coefficient(s, dz[k])
                C[r, k] = c
                g0[k] += c
        lr = learning_rates[t]
        shrink = 1.0 - lr * alpha
        A_next = A * shrink
        if abs(A_next) < _MIN_SCALE:
            # fold the scale into V: flush (W_t exact), then shrink densely
            lazy_flush(P, last, W, fstate, istate, qhi, qlo, unit, rng)
            i = 0
            if abs(shrink) < _MIN_SCALE:
                for j in range(d):
                    for k in range(K):
                        P[j, k] *= shrink
                A_next = 1.0
            else:
                A_next = shrink
        f = -lr / (denom * A_next)
        for r in range(m):
            row = rows[r]
            start, end = indptr[row], indptr[row + 1]
            for k in range(K):
                c = f * C[r, k]
                if c != 0.0:
                    for p in range(start, end):
                        P[indices[p], k] += c * data[p]
        # prefix sum of the step's noise variance, in units of V and unit^2
        std = noise_stds[t]
        term = (lr * std / (denom * unit * A_next)) ** 2 if std > 0.0 else 0.0
        hi = qhi[i] + term
        bb = hi - qhi[i]
        err = (qhi[i] - (hi - bb)) + (term - bb)
        qhi[i + 1] = hi
        qlo[i + 1] = qlo[i] + err
        fstate[0] = A_next
        istate[1] = i + 1
        if fit_intercept:
            for k in range(K):
                g = g0[k]
                if std > 0.0:
                    g += std * rng.standard_normal()
                b[k] -= lr * g / denom
