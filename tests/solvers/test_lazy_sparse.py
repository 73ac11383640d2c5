"""O(nnz) sparse steps (lazy noise and shrinkage): twin, distribution, streams.

The lazy kernel must (1) compute exactly what its NumPy twin computes on the
same random stream (an independent formulation without a global scale or
prefix sums), and (2) release coefficients with the distribution of the
dense per-step noise: checked against the closed form on columns no row
touches, and against the dense implementation on touched columns, over many
seeds.
"""

import math
import zlib

import numpy as np
import pytest
import scipy.sparse as sp
from _solver_plans import erm_plan
from scipy import stats
from twins import make_targets, np_lazy_noisy_sgd

from dpestim import LogisticRegression
from dpestim._kernels import sampling_key
from dpestim._kernels.lazy_noise import (
    lazy_flush,
    lazy_is_eager,
    lazy_sparse_sgd,
    lazy_state,
)
from dpestim.losses import HINGE, LOGISTIC, MULTINOMIAL, SQUARED
from dpestim.solvers import ADPSGD, DPSGD, ADPAdaGrad
from dpestim.solvers.sgd.dp_sgd import noisy_gradient_descent
from dpestim.utils._rows import row_sq_norms


def _seed(*parts):
    return zlib.crc32("/".join(map(str, parts)).encode())


def _plan(n, d, K, loss, **kw):
    return erm_plan(n, d, K, loss, **kw)


def _sparse_problem(n, d, K, loss, density, seed, empty_cols=()):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, random_state=rng, format="csr") * 2.0
    X = X.tolil()
    for j in empty_cols:
        X[:, j] = 0.0
    X = X.tocsr()
    X.eliminate_zeros()
    return X, make_targets(loss, n, K, rng)


def _schedule(T, kind):
    if kind == "constant":
        return np.full(T, 0.9), np.full(T, 0.3)
    t = np.arange(T)
    return 0.5 + 0.05 * (t % 7), 0.4 / np.sqrt(1 + t / 3)  # stds, rates


CASES = [
    (LOGISTIC, 1, 0.05, "constant"),
    (SQUARED, 2, 0.5, "schedule"),  # lr alpha up to 0.2: strong shrinkage
    (HINGE, 1, 0.0, "schedule"),  # no penalty: A stays 1
    (MULTINOMIAL, 3, 0.05, "schedule"),
]


@pytest.mark.parametrize("mode", ["entries", "eager"])
@pytest.mark.parametrize("loss,K,alpha,kind", CASES)
def test_lazy_loop_equals_numpy_twin_on_same_stream(mode, loss, K, alpha, kind):
    n, d, T = 60, 25, 30
    X, Y = _sparse_problem(n, d, K, loss, 0.15, _seed("twin", loss, K))
    plan = _plan(n, d, K, loss, alpha=alpha, fit_intercept=loss != HINGE)
    stds, rates = _schedule(T, kind)
    q = 8 / n
    W, b = noisy_gradient_descent(
        X, Y, plan, q, stds, rates, np.random.default_rng(5), lazy=mode
    )
    W2, b2 = np_lazy_noisy_sgd(
        X, Y, loss, plan.fit_intercept, plan.clip_norm, stds, q, rates, alpha,
        np.random.default_rng(5), eager=mode == "eager",
    )  # fmt: skip
    np.testing.assert_allclose(W, W2, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(b, b2, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize(
    "lr_alpha", [0.9, 1.0, 1.6], ids=["tiny-scale", "zero-shrink", "negative"]
)
@pytest.mark.parametrize("segment", [4, 1000])
def test_renormalisation_and_segment_flushes_match_twin(lr_alpha, segment):
    """Scale below 1e-30 (lr alpha = 0.9 after ~30 steps), a zero shrink
    factor (lr alpha = 1), a negative one, and forced flushes every few steps:
    the kernel folds the scale into the coefficients exactly where its twin
    says, and the result is unchanged."""
    n, d, K, T = 40, 12, 2, 70
    X, Y = _sparse_problem(n, d, K, SQUARED, 0.2, _seed("renorm", lr_alpha))
    lr = 0.5
    plan = _plan(n, d, K, SQUARED, alpha=lr_alpha / lr)
    stds, rates = np.full(T, 0.7), np.full(T, lr)
    q = 6 / n
    rng = np.random.default_rng(11)
    key = sampling_key(rng)
    W, b = np.zeros((K, d)), np.zeros(K)
    state = lazy_state(W, segment)
    unit = float(np.max(rates * stds)) / (q * n)
    for lo, hi in [(0, 9), (9, 40), (40, T)]:  # pieces of one run
        lazy_sparse_sgd(
            X.data, X.indices, X.indptr, Y, row_sq_norms(X), SQUARED, W, b, True,
            plan.clip_norm, stds[lo:hi], q, rates[lo:hi], plan.alpha, rng, key, lo,
            unit, False, *state,
        )  # fmt: skip
    lazy_flush(state[0], state[1], W, *state[2:], unit, rng)
    W2, b2 = np_lazy_noisy_sgd(
        X, Y, SQUARED, True, plan.clip_norm, stds, q, rates, plan.alpha,
        np.random.default_rng(11), eager=False, segment=segment,
    )  # fmt: skip
    np.testing.assert_allclose(W, W2, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(b, b2, rtol=1e-8, atol=1e-12)


def test_untouched_columns_match_closed_form():
    """Columns no row touches end at ``N(0, sum_t s_t^2 prod_{r>t} a_r^2)``
    (``s_t = eta_t sigma_t / (q n)``, ``a_t = 1 - eta_t alpha``): mean,
    variance and a KS test of the standardised coefficients over many fits."""
    n, d, K, T = 40, 30, 2, 40
    empty = list(range(5, 30))  # 25 columns never touched
    X, Y = _sparse_problem(n, d, K, SQUARED, 0.4, _seed("untouched"), empty)
    assert X[:, empty].nnz == 0
    plan = _plan(n, d, K, SQUARED, alpha=0.4)
    stds, rates = _schedule(T, "schedule")
    q = 6 / n
    s = rates * stds / (q * n)
    a = 1.0 - rates * plan.alpha
    later = np.append(np.cumprod(a[::-1])[::-1][1:], 1.0)  # prod_{r > t} a_r
    sd = math.sqrt(np.sum((s * later) ** 2))
    samples = []
    for seed in range(300):
        W, _ = noisy_gradient_descent(
            X, Y, plan, q, stds, rates, np.random.default_rng(seed), lazy="entries"
        )
        samples.append(W[:, empty].ravel() / sd)
    z = np.concatenate(samples)  # 15,000 standardised values
    m = z.size
    assert abs(z.mean()) < 4.5 / math.sqrt(m)
    assert abs(z.var() - 1.0) < 4.5 * math.sqrt(2.0 / m)
    assert stats.kstest(z, "norm").pvalue > 1e-4
    # two untouched coordinates of the same fit are independent draws
    per_fit = np.array(samples)
    assert abs(np.corrcoef(per_fit[:, 0], per_fit[:, 1])[0, 1]) < 0.25


@pytest.mark.parametrize("mode", ["entries", "eager"])
def test_touched_columns_match_dense_step_in_distribution(mode):
    """Final coefficients and intercept of the lazy loop against dense
    per-step noise, over many independent fits: per-coordinate two-sample
    KS tests and standardised mean / variance differences (Bonferroni)."""
    n, d, K, T = 30, 6, 1, 25
    X, Y = _sparse_problem(n, d, K, LOGISTIC, 0.3, _seed("dist"))
    plan = _plan(n, d, K, LOGISTIC, alpha=0.6, clip_norm=1.0)
    stds, rates = _schedule(T, "schedule")
    rates = rates * 2.0  # lr alpha up to 0.48: the shrinkage weighs on the noise
    q = 6 / n
    S = 2500

    def fits(lazy, offset):
        out = np.empty((S, d + 1))
        for s in range(S):
            W, b = noisy_gradient_descent(
                X, Y, plan, q, stds, rates, np.random.default_rng(offset + s),
                lazy=lazy,
            )  # fmt: skip
            out[s] = np.r_[W.ravel(), b]
        return out

    L = fits(mode, 0)
    D = fits(False, 10**6)
    n_tests = d + 1
    for j in range(n_tests):
        assert stats.ks_2samp(L[:, j], D[:, j]).pvalue > 1e-3 / n_tests, j
        se = math.sqrt(L[:, j].var() / S + D[:, j].var() / S)
        assert abs(L[:, j].mean() - D[:, j].mean()) < 4.0 * se, j
        ratio = L[:, j].var() / D[:, j].var()
        assert abs(math.log(ratio)) < 4.0 * math.sqrt(4.0 / S), (j, ratio)


def test_sparse_fit_reproducible_and_progress_pieces_bit_identical():
    X, Y = _sparse_problem(200, 300, 1, LOGISTIC, 0.02, _seed("repro"))
    y = (Y[:, 0] > 0).astype(int)
    kw = dict(classes=[0, 1], batch_size=20, max_iter=3, random_state=4)
    first = LogisticRegression(**kw).fit(X, y)
    again = LogisticRegression(**kw).fit(X, y)
    loud = LogisticRegression(**kw, verbose=1).fit(X, y)
    for other in (again, loud):
        np.testing.assert_array_equal(first.coef_, other.coef_)
        np.testing.assert_array_equal(first.intercept_, other.intercept_)
    assert not lazy_is_eager(300, 20)  # this fit tracked entries
    other_seed = LogisticRegression(**{**kw, "random_state": 5}).fit(X, y)
    assert not np.array_equal(first.coef_, other_seed.coef_)


def test_which_solvers_are_lazy():
    """dp-sgd and adp-sgd take the lazy path on sparse data; the dense
    stream is untouched (``lazy=False`` equals dense input bit for bit)."""
    n, d, K = 50, 20, 1
    X, Y = _sparse_problem(n, d, K, LOGISTIC, 0.2, _seed("which"))
    plan = _plan(n, d, K, LOGISTIC, batch_size=10)
    for solver in (DPSGD(), ADPSGD("invsqrt")):
        sparse = solver.solve(X, Y, plan, 1.1, np.random.default_rng(3))
        dense = solver.solve(X.toarray(), Y, plan, 1.1, np.random.default_rng(3))
        assert not np.allclose(sparse.coef, dense.coef)  # another stream
    q = DPSGD().sampling_prob(plan)
    T = DPSGD().n_steps(plan)
    args = (plan, q, np.full(T, 1.1 * plan.clip_norm), np.full(T, 0.3))
    W1, b1 = noisy_gradient_descent(X, Y, *args, np.random.default_rng(3), lazy=False)
    W2, b2 = noisy_gradient_descent(X.toarray(), Y, *args, np.random.default_rng(3))
    np.testing.assert_allclose(W1, W2, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(b1, b2, rtol=1e-10, atol=1e-13)


def test_verbose_2_flushes_for_the_loss(capsys):
    """``verbose=2`` needs ``W`` itself at every epoch's end: the pending
    noise is flushed there (same distribution, another draw order) and the
    run goes on from the materialised coefficients."""
    n, d, K = 80, 40, 1
    X, Y = _sparse_problem(n, d, K, LOGISTIC, 0.1, _seed("verbose2"))
    y = (Y[:, 0] > 0).astype(int)
    kw = dict(classes=[0, 1], batch_size=10, max_iter=3, random_state=2)
    est = LogisticRegression(**kw, verbose=2).fit(X, y)
    assert "training loss" in capsys.readouterr().err
    assert np.all(np.isfinite(est.coef_))
    quiet = LogisticRegression(**kw).fit(X, y)
    assert est.noise_multiplier_ == quiet.noise_multiplier_


def test_non_canonical_csr_given_to_the_solver_is_summed_and_clipped_as_such():
    """Duplicate entries reach the kernel summed, with the row norms of the
    summed rows (the clipping bound holds for the matrix the entries mean)."""
    n, d, K = 40, 15, 1
    X, Y = _sparse_problem(n, d, K, LOGISTIC, 0.3, _seed("noncanonical"))
    data, indices, indptr = [], [], [0]
    for i in range(n):  # every stored value as two halves
        lo, hi = X.indptr[i], X.indptr[i + 1]
        for v, j in zip(X.data[lo:hi], X.indices[lo:hi]):
            data += [v / 2, v / 2]
            indices += [j, j]
        indptr.append(len(data))
    halves = sp.csr_matrix((data, indices, indptr), shape=X.shape)
    assert halves.nnz == 2 * X.nnz and not halves.has_canonical_format
    plan = _plan(n, d, K, LOGISTIC, batch_size=8, clip_norm=0.05)
    for solver in (DPSGD(), ADPAdaGrad()):  # lazy and dense-noise CSR paths
        ref = solver.solve(X, Y, plan, 1.0, np.random.default_rng(8))
        res = solver.solve(halves, Y, plan, 1.0, np.random.default_rng(8))
        np.testing.assert_allclose(res.coef, ref.coef, rtol=1e-10, atol=1e-13)
        np.testing.assert_allclose(res.intercept, ref.intercept, rtol=1e-10, atol=1e-13)


def test_lazy_steps_drop_an_overflowing_example():
    """A row whose outputs overflow adds nothing (its own clipping site).

    Step 1 at a huge rate sends ``W`` to about ``1e200``; at step 2 the row
    of ``1e200`` entries has infinite outputs. Before the kernels dropped
    such an example, ``clip_norm / inf x inf`` made the sum NaN.
    """
    X = sp.csr_matrix(np.vstack([np.linspace(0.5, 1.0, 4), np.full(4, 1e200)]))
    Y = np.array([[1.0], [1.0]])
    plan = _plan(2, 4, 1, SQUARED, alpha=0.0, fit_intercept=False)
    rates, stds = np.full(2, 1e200), np.zeros(2)
    for lazy in ("entries", "eager"):
        W, b = noisy_gradient_descent(
            X, Y, plan, 1.0, stds, rates, np.random.default_rng(0), lazy=lazy
        )
        assert np.isfinite(W).all() and np.isfinite(b).all(), lazy
