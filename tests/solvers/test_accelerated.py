"""Accelerated solvers (Kuru et al.): twins, calibration, allocation, privacy.

Tests follow spec 000, section 6: calibration identities, Laplace variance
2 b^2, noiseless limits against reference GD / HB / NAG / MASG iterates, the
"-opt" allocation, the regression values of the chosen iteration counts and
the sensitivity bound on random neighbouring datasets.
"""

import math

import dp_accounting as dpa
import numpy as np
import pytest
import scipy.sparse as sp
import sklearn.linear_model as sk
from _solver_plans import erm_plan
from twins import make_targets, np_dloss

from dpestim import LinearSVC, LogisticRegression, Ridge
from dpestim._kernels import (
    clipped_grad_sum,
    l1_clipped_grad_sum,
    l1_clipped_grad_sum_csr,
    sample_without_replacement,
)
from dpestim.losses import LOGISTIC, MULTINOMIAL, SQUARED, SQUARED_HINGE
from dpestim.privacy.discrete import discrete_laplace_grid, np_snap
from dpestim.solvers import (
    DPGD,
    DPHB,
    DPMASG,
    DPNAG,
    SOLVERS,
    DPMASGOpt,
    DPNAGOpt,
    ERMPlan,
)
from dpestim.solvers.accelerated import (
    error_bound_terms,
    masg_schedule,
    pure_epsilon,
    select_n_iter,
)
from dpestim.solvers.saddle import ExponentialMechanismDpEvent

ACCEL = ["dp-gd", "dp-hb", "dp-nag", "dp-nag-opt", "dp-masg", "dp-masg-opt"]


def _plan(n=60, d=4, K=1, loss=LOGISTIC, **kw):
    kw = {"max_iter": 12, "batch_size": 256, "learning_rate": 0.4, **kw}
    return erm_plan(n, d, K, loss, **kw)


# -- NumPy twins ------------------------------------------------------------------


def np_l1_clipped_grad_sum(X, Y, rows, W, b, loss, clip_norm, fit_intercept, wts=None):
    """Per-example gradients formed explicitly, clipped in entrywise L1 norm.

    ``wts``: row ``i``'s clipped gradient is multiplied by ``wts[i]``.
    """
    X = X.toarray() if hasattr(X, "toarray") else X
    G, g0 = np.zeros_like(W), np.zeros_like(b)
    for i in rows:
        dz = np_dloss(loss, W @ X[i] + b, Y[i])
        gW = np.outer(dz, X[i])
        gb = dz if fit_intercept else np.zeros_like(dz)
        norm = np.abs(gW).sum() + np.abs(gb).sum()
        s = min(1.0, clip_norm / norm) if norm > 0 else 1.0
        if wts is not None:
            s *= wts[i]
        G += s * gW
        g0 += s * gb
    return G, g0


def np_sample_without_replacement(rng, n, m, perm):
    """Twin of the partial Fisher-Yates kernel (same stream, same perm)."""
    if m >= n:
        return np.arange(n)
    out = np.empty(m, dtype=np.int64)
    for r in range(m):
        j = min(r + int(rng.random() * (n - r)), n - 1)
        perm[r], perm[j] = perm[j], perm[r]
        out[r] = perm[r]
    return out


def np_accelerated(X, Y, plan, solver, noise_multiplier, rng, wts=None, b0=None):
    """Twin of the whole accelerated loop, from the solver's public schedules.

    ``wts``: per-row weights of the clipped gradients (``class_weight``);
    ``b0``: the initial intercept (the class prior) instead of ``coef_init``.
    """
    laplace = solver.noise != "gaussian"
    T, nms, _ = solver.noise_schedule(noise_multiplier, plan)
    steps, momenta, restarts, _ = solver.schedule(plan)
    n, K, d = plan.n_samples, plan.n_outputs, plan.n_features
    m = n if solver.batch_size is None else min(solver.batch_size, n)
    unit = 2 * plan.clip_norm if laplace else plan.clip_norm
    W = np.full((K, d), float(solver.coef_init))
    b = np.full(K, float(solver.coef_init)) if plan.fit_intercept else np.zeros(K)
    if b0 is not None and plan.fit_intercept:
        b = np.full(K, float(b0))
    Wp, bp = W.copy(), b.copy()
    from twins import np_sampling_key

    perm = np.arange(n)
    key = np_sampling_key(rng) if (m < n and not laplace) else None
    for t in range(T):
        if restarts[t]:
            Wp, bp = W.copy(), b.copy()
        beta = momenta[t]
        if solver.heavy_ball:
            PW, pb = W.copy(), b.copy()
        else:
            PW, pb = (1 + beta) * W - beta * Wp, (1 + beta) * b - beta * bp
        if m >= n:
            rows = np.arange(n)
        elif laplace:
            rows = np_sample_without_replacement(rng, n, m, perm)
        else:
            from twins import np_poisson_sample_range

            rows = np_poisson_sample_range(key, t, m / n, 0, n)
        clip = np_l1_clipped_grad_sum if laplace else _np_l2
        G, g0 = clip(
            X, Y, rows, PW, pb, plan.loss, plan.clip_norm, plan.fit_intercept, wts
        )
        s = nms[t] * unit
        if s > 0 and solver.noise == "discrete_laplace":
            n_coords = K * (d + int(plan.fit_intercept))
            grid, ts = discrete_laplace_grid(s, nms[t], n_coords, m)
            G = np.array([np_snap(v, grid, ts, rng) for v in G.ravel()])
            G = G.reshape(K, d)
            if plan.fit_intercept:
                g0 = np.array([np_snap(v, grid, ts, rng) for v in g0])
        elif s > 0:
            G = G + _draw(rng, laplace, s, (K, d))
            if plan.fit_intercept:
                g0 = g0 + _draw(rng, laplace, s, K)
        newW = PW - steps[t] * (G / m + plan.alpha * PW)
        newb = pb - steps[t] * g0 / m if plan.fit_intercept else pb.copy()
        if solver.heavy_ball:
            newW = newW + beta * (W - Wp)
            newb = newb + beta * (b - bp)
        Wp, bp, W, b = W, b, newW, newb
    return W, b


def _draw(rng, laplace, s, size):
    return rng.laplace(0.0, s, size) if laplace else s * rng.standard_normal(size)


def _np_l2(X, Y, rows, W, b, loss, clip_norm, fit_intercept, wts=None):
    from twins import np_clipped_grad_sum

    return np_clipped_grad_sum(X, Y, rows, W, b, loss, clip_norm, fit_intercept, wts)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize(
    "loss,K", [(LOGISTIC, 1), (SQUARED, 2), (SQUARED_HINGE, 1), (MULTINOMIAL, 3)]
)
@pytest.mark.parametrize("name", ACCEL)
@pytest.mark.parametrize("noise,batch", [("laplace", None), ("laplace", 17)])
def test_solver_equals_numpy_twin_on_same_stream(name, loss, K, sparse, noise, batch):
    rng = np.random.default_rng(1)
    plan = _plan(K=K, loss=loss, fit_intercept=loss != SQUARED_HINGE)
    X = rng.normal(size=(plan.n_samples, plan.n_features))
    Y = make_targets(loss, plan.n_samples, K, rng)
    solver = SOLVERS[name](noise=noise, batch_size=batch, coef_init=0.1)
    if name == "dp-masg" or name == "dp-masg-opt":
        solver.set_params(masg_n1=4)  # several stages within 12 iterations
    res = solver.solve(
        sp.csr_matrix(X) if sparse else X, Y, plan, 2.5, np.random.default_rng(7)
    )
    W, b = np_accelerated(X, Y, plan, solver, 2.5, np.random.default_rng(7))
    np.testing.assert_allclose(res.coef, W, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(res.intercept, b, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("loss,K", [(LOGISTIC, 1), (MULTINOMIAL, 3)])
@pytest.mark.parametrize("name", ["dp-gd", "dp-masg-opt"])
@pytest.mark.parametrize("batch", [None, 17])
def test_discrete_laplace_equals_numpy_twin_on_same_stream(
    name, loss, K, sparse, batch
):
    """noise="discrete_laplace": the kernel's grid snapping and exact draws."""
    test_solver_equals_numpy_twin_on_same_stream(
        name, loss, K, sparse, "discrete_laplace", batch
    )


@pytest.mark.parametrize("name", ["dp-nag", "dp-hb", "dp-masg-opt"])
@pytest.mark.parametrize("batch", [None, 17])
def test_gaussian_option_equals_numpy_twin(name, batch):
    rng = np.random.default_rng(2)
    plan = _plan()
    X = rng.normal(size=(plan.n_samples, plan.n_features))
    Y = make_targets(LOGISTIC, plan.n_samples, 1, rng)
    solver = SOLVERS[name](noise="gaussian", batch_size=batch)
    res = solver.solve(X, Y, plan, 1.7, np.random.default_rng(3))
    W, b = np_accelerated(X, Y, plan, solver, 1.7, np.random.default_rng(3))
    np.testing.assert_allclose(res.coef, W, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(res.intercept, b, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize(
    "loss,K", [(LOGISTIC, 1), (SQUARED_HINGE, 1), (MULTINOMIAL, 3)]
)
@pytest.mark.parametrize(
    "name,noise,batch",
    [
        ("dp-gd", "laplace", None),
        ("dp-gd", "laplace", 17),
        ("dp-gd", "gaussian", None),
        ("dp-gd", "discrete_laplace", None),
        ("dp-hb", "laplace", None),
        ("dp-nag", "gaussian", 17),
        ("dp-masg-opt", "laplace", 17),
    ],
)
def test_class_weighted_solver_equals_numpy_twin(name, noise, batch, loss, K, sparse):
    """plan.class_weights: each clipped gradient times its class's weight."""
    from dataclasses import replace

    rng = np.random.default_rng(4)
    plan = _plan(K=K, loss=loss)
    X = rng.normal(size=(plan.n_samples, plan.n_features))
    Y = make_targets(loss, plan.n_samples, K, rng)
    cw = rng.uniform(0.05, 1.0, size=max(K, 2))
    cw /= cw.max()
    weighted = replace(plan, class_weights=tuple(cw), intercept_init=(0.3,) * K)
    solver = SOLVERS[name](noise=noise, batch_size=batch)
    Xin = sp.csr_matrix(X) if sparse else X
    res = solver.solve(Xin, Y, weighted, 2.5, np.random.default_rng(7))
    codes = (Y[:, 0] > 0).astype(int) if K == 1 else np.argmax(Y, axis=1)
    W, b = np_accelerated(
        X, Y, plan, solver, 2.5, np.random.default_rng(7), cw[codes], b0=0.3
    )
    np.testing.assert_allclose(res.coef, W, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(res.intercept, b, rtol=1e-9, atol=1e-12)
    # the weights leave the event (and the noise) as they are
    assert res.dp_event == solver.make_event(2.5, plan)
    unweighted = solver.solve(Xin, Y, plan, 2.5, np.random.default_rng(7))
    assert not np.allclose(res.coef, unweighted.coef)
    # weights of 1: the unweighted arithmetic, bit for bit
    ones = replace(plan, class_weights=(1.0,) * max(K, 2))
    same = solver.solve(Xin, Y, ones, 2.5, np.random.default_rng(7))
    np.testing.assert_array_equal(same.coef, unweighted.coef)
    np.testing.assert_array_equal(same.intercept, unweighted.intercept)


def test_dp_gd_gaussian_is_the_previous_dp_gd_bit_for_bit():
    """DPGD(noise="gaussian") == full-batch DPSGD (the former dp-gd)."""
    from dpestim.solvers import DPSGD

    rng = np.random.default_rng(0)
    plan = _plan(n=80, batch_size=80)
    X = rng.normal(size=(80, 4))
    Y = make_targets(LOGISTIC, 80, 1, rng)
    a = DPGD(noise="gaussian").solve(X, Y, plan, 1.2, np.random.default_rng(5))
    b = DPSGD().solve(X, Y, plan, 1.2, np.random.default_rng(5))
    np.testing.assert_array_equal(a.coef, b.coef)
    np.testing.assert_array_equal(a.intercept, b.intercept)
    assert a.dp_event == b.dp_event


# -- kernels ----------------------------------------------------------------------


@pytest.mark.parametrize("loss,K", [(LOGISTIC, 1), (SQUARED, 2), (MULTINOMIAL, 3)])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_l1_clipping_kernels_equal_twin(loss, K, fit_intercept):
    rng = np.random.default_rng(0)
    n, d = 40, 6
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.6)
    Y = make_targets(loss, n, K, rng)
    W, b = rng.normal(size=(K, d)), rng.normal(size=K)
    rows = rng.permutation(n)[:25]
    clip = 0.9
    ref = np_l1_clipped_grad_sum(X, Y, rows, W, b, loss, clip, fit_intercept)
    l1 = np.abs(X).sum(axis=1)
    G, g0 = np.zeros((K, d)), np.zeros(K)
    z, dz = np.empty(K), np.empty(K)
    l1_clipped_grad_sum(
        X, Y, rows, 25, W, b, loss, clip, l1, fit_intercept, G, g0, z, dz
    )
    np.testing.assert_allclose(G, ref[0], atol=1e-12)
    np.testing.assert_allclose(g0, ref[1], atol=1e-12)
    Xs = sp.csr_matrix(X)
    G, g0 = np.zeros((K, d)), np.zeros(K)
    l1_clipped_grad_sum_csr(
        Xs.data, Xs.indices, Xs.indptr, Y, rows, 25, W, b, loss, clip, l1,
        fit_intercept, G, g0, z, dz,
    )  # fmt: skip
    np.testing.assert_allclose(G, ref[0], atol=1e-12)
    np.testing.assert_allclose(g0, ref[1], atol=1e-12)


def test_sample_without_replacement_twin_and_uniformity():
    n, m = 12, 5
    perm = np.arange(n)
    rows = np.empty(n, dtype=np.int64)
    rng_a, rng_b = np.random.default_rng(0), np.random.default_rng(0)
    perm_b = np.arange(n)
    counts = np.zeros(n)
    for _ in range(4000):
        k = sample_without_replacement(rng_a, n, m, perm, rows)
        ref = np_sample_without_replacement(rng_b, n, m, perm_b)
        assert k == m and len(set(rows[:m])) == m
        np.testing.assert_array_equal(rows[:m], ref)
        counts[rows[:m]] += 1
    np.testing.assert_array_equal(np.sort(perm), np.arange(n))
    # Each index is in the sample with probability m / n: 4000 * 5/12 = 1667.
    assert np.all(np.abs(counts - 4000 * m / n) < 5 * math.sqrt(4000 * m / n))
    assert sample_without_replacement(rng_a, n, n, perm, rows) == n


# -- privacy: sensitivity, events, calibration -------------------------------------


@pytest.mark.parametrize("loss,K", [(LOGISTIC, 1), (SQUARED, 2), (MULTINOMIAL, 3)])
def test_l1_sensitivity_on_random_neighbouring_datasets(loss, K):
    """Replacing one record moves the L1-clipped sum by <= 2 clip (L1 norm)."""
    rng = np.random.default_rng(0)
    n, d, clip = 30, 5, 0.6
    worst = 0.0
    for _ in range(200):
        X = rng.normal(size=(n, d)) * rng.choice([0.1, 1.0, 30.0])
        Y = make_targets(loss, n, K, rng)
        X2, Y2 = X.copy(), Y.copy()
        i = rng.integers(n)
        X2[i] = rng.normal(size=d) * 50
        Y2[i] = make_targets(loss, 1, K, rng)[0]
        W, b = rng.normal(size=(K, d)) * 5, rng.normal(size=K)
        sums = []
        for A, B in ((X, Y), (X2, Y2)):
            G, g0 = np.zeros((K, d)), np.zeros(K)
            l1_clipped_grad_sum(
                A, B, np.arange(n), n, W, b, loss, clip, np.abs(A).sum(axis=1), True,
                G, g0, np.empty(K), np.empty(K),
            )  # fmt: skip
            sums.append(np.concatenate([G.ravel(), g0]))
        worst = max(worst, np.abs(sums[0] - sums[1]).sum())
    assert worst <= 2 * clip * (1 + 1e-12)
    assert worst > 1.5 * clip  # the bound is nearly attained: the test can fail


def test_l2_sensitivity_add_remove_for_gaussian_option():
    rng = np.random.default_rng(1)
    n, d, clip = 20, 4, 0.5
    for _ in range(100):
        X = rng.normal(size=(n, d)) * 10
        Y = make_targets(LOGISTIC, n, 1, rng)
        W, b = rng.normal(size=(1, d)), rng.normal(size=1)
        out = []
        for rows in (np.arange(n), np.arange(n - 1)):
            G, g0 = np.zeros((1, d)), np.zeros(1)
            clipped_grad_sum(
                X, Y, rows, len(rows), W, b, LOGISTIC, clip,
                np.einsum("ij,ij->i", X, X), True, G, g0, np.empty(1), np.empty(1),
            )  # fmt: skip
            out.append(np.concatenate([G.ravel(), g0]))
        assert np.linalg.norm(out[0] - out[1]) <= clip * (1 + 1e-12)


def test_pure_epsilon_closed_form_identities():
    lap = dpa.LaplaceDpEvent(4.0)
    assert pure_epsilon(lap) == 0.25
    sampled = dpa.SampledWithoutReplacementDpEvent(1000, 10, lap)
    assert pure_epsilon(sampled) == pytest.approx(math.log1p(0.01 * math.expm1(0.25)))
    assert pure_epsilon(dpa.SelfComposedDpEvent(sampled, 7)) == pytest.approx(
        7 * pure_epsilon(sampled)
    )
    composed = dpa.ComposedDpEvent([lap, sampled, dpa.NoOpDpEvent()])
    assert pure_epsilon(composed) == pytest.approx(0.25 + pure_epsilon(sampled))
    with pytest.raises(ValueError, match="cannot account"):
        pure_epsilon(dpa.GaussianDpEvent(1.0))


def test_pure_epsilon_agrees_with_dp_accounting_pld_on_full_batch_laplace():
    """Without sampling, dp_accounting can account Laplace: same epsilon.

    (dp_accounting's PLD supports Laplace only under add/remove; a Laplace
    event with noise multiplier s costs 1/s per step under either relation
    once the sensitivity is expressed in the event's units.)
    """
    event = dpa.SelfComposedDpEvent(dpa.LaplaceDpEvent(20.0), 4)
    acc = dpa.pld.PLDAccountant(
        neighboring_relation=dpa.NeighboringRelation.ADD_OR_REMOVE_ONE,
        value_discretization_interval=1e-5,
    ).compose(event)
    assert acc.get_epsilon(1e-9) == pytest.approx(pure_epsilon(event), rel=1e-2)
    assert acc.get_epsilon(1e-9) <= pure_epsilon(event) * (1 + 1e-3)


@pytest.mark.parametrize("seed", range(5))
def test_uniform_calibration_identities(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(100, 100_000))
    m = int(rng.integers(1, n))
    T = int(rng.integers(1, 2000))
    eps = float(rng.uniform(0.05, 5))
    plan = _plan(n=n, max_iter=T, clip_norm=3.0)
    for batch in (None, m):
        s = DPNAG(batch_size=batch)
        nm = s.calibrate(eps, 0.0, plan, accountant="rdp")
        event = s.make_event(nm, plan)
        spent = s.spent_epsilon(event, 0.0, accountant="rdp")
        assert spent <= eps and spent == pytest.approx(eps, rel=1e-12)
        mb = n if batch is None else m
        eps_iter = math.log1p((mb / n) * math.expm1(1 / nm))
        assert T * eps_iter == pytest.approx(eps, rel=1e-12)
    # m = n: Laplace scale of the mean gradient b = S1 T / (n eps), S1 = 2 clip.
    s = DPNAG()
    nm = s.calibrate(eps, 0.0, plan, accountant="rdp")
    assert 2 * plan.clip_norm * nm / n == pytest.approx(
        2 * plan.clip_norm * T / (n * eps), rel=1e-12
    )


@pytest.mark.parametrize("cls", [DPNAGOpt, DPMASGOpt])
@pytest.mark.parametrize("batch", [None, 100])
def test_opt_allocation_sums_to_epsilon_and_noise_decreases(cls, batch):
    plan = _plan(n=10_000, d=20, max_iter=300, clip_norm=20.0, fit_intercept=False)
    s = cls(smoothness=5.1, strong_convexity=0.02, batch_size=batch)
    nm = s.calibrate(1.0, 0.0, plan, accountant="rdp")
    T, nms, eps = s.noise_schedule(nm, plan)
    assert math.fsum(eps) == pytest.approx(1.0, rel=1e-12)
    assert s.spent_epsilon(s.make_event(nm, plan), 0, accountant="rdp") <= 1.0
    n, m = plan.n_samples, batch or plan.n_samples
    per_iter = np.log1p((m / n) * np.expm1(1 / nms))
    np.testing.assert_allclose(per_iter, eps, rtol=1e-10)
    assert 1 <= T <= plan.max_iter
    if cls is DPNAGOpt:  # a_{T,t} increases in t: more noise early
        assert np.all(np.diff(nms) < 0)
        assert nms[0] / nms[-1] > 1.2


def test_opt_allocation_with_constant_weights_is_uniform():
    P, q = error_bound_terms(np.full(10, 0.1), np.ones(10, dtype=np.int64), 1.0, 0.0)
    # mu = 0: every a_{T,t} equal, so the weights softmax(q / 3) are uniform.
    w = np.exp(q / 3) / np.exp(q / 3).sum()
    np.testing.assert_allclose(w, 0.1)


def test_opt_allocation_is_optimal_among_feasible_perturbations():
    """Prop. 4.2 at m = n: sum a_t b_t^2 with sum 1/b_t fixed is minimal."""
    L, mu, T = 5.1, 0.02, 50
    steps = np.full(T, 1 / L)
    _, q = error_bound_terms(steps, np.ones(T, dtype=np.int64), L, mu)
    a = np.exp(q - q.max())
    w = a ** (1 / 3) / (a ** (1 / 3)).sum()
    b = 1 / w  # b_t proportional to 1 / eps_t, sum eps_t fixed
    best = np.sum(a * b**2)
    rng = np.random.default_rng(0)
    for _ in range(200):
        w2 = np.abs(w * (1 + 0.1 * rng.normal(size=T)))
        w2 /= w2.sum()
        assert np.sum(a / w2**2) >= best * (1 - 1e-12)


def test_chosen_iteration_counts_regression():
    """Spec 000, section 6 item 7 (paper's constants, E0 = 40)."""
    L, mu, n, d, S1, eps = 5.100080706735988, 0.02, 100_000, 20, 40.0, 1.0
    expected_nag = {0.1: [100, 200, 396, 396], 1.0: [100, 136, 136, 136]}
    for c, values in expected_nag.items():
        for T_max, want in zip((100, 200, 500, 1000), values):
            plan = ERMPlan(
                n_samples=n, n_features=d, n_outputs=1, loss=LOGISTIC, alpha=mu,
                fit_intercept=False, clip_norm=S1 / 2, max_iter=T_max,
                batch_size=1000, learning_rate=1.0,
            )  # fmt: skip
            for cls, target in ((DPNAGOpt, want), (DPMASGOpt, 89)):
                for batch in (None, 1000):  # the bound uses n, not m
                    s = cls(
                        smoothness=L, step_scale=c, initial_error=40.0, batch_size=batch
                    )
                    nm = s.calibrate(eps, 0.0, plan, accountant="rdp")
                    assert s.noise_schedule(nm, plan)[0] == target
    steps, stages, n1, C = masg_schedule(1000, L, mu, 1.0)
    assert (n1, C) == (89, 34)
    assert np.bincount(stages)[1:].tolist() == [89, 136, 272, 503]
    assert steps[89] == pytest.approx(steps[0] / 16)
    # Paper's constants with E0 = 10: 303 and 106 (spec 000, section 6).
    for c, T_max, want in ((0.1, 1000, 303), (1.0, 1000, 106)):
        P, q = error_bound_terms(
            np.full(T_max, c / L), np.ones(T_max, dtype=np.int64), L, mu
        )
        const = d * S1**2 / (n**2 * eps**2)
        assert select_n_iter(P, q, np.ones(T_max), 10.0, const, 3) == want


# -- estimator behaviour -------------------------------------------------------------


@pytest.fixture(scope="module")
def Xy():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 4))
    y = X @ np.array([1.0, -1.0, 0.5, 0.0]) + 0.3 * rng.normal(size=400) > 0
    return X, y.astype(int)


@pytest.mark.parametrize("name", ACCEL)
def test_laplace_fit_is_pure_and_reports_it(Xy, name):
    X, y = Xy
    eps = 0.6  # 400 rows: the row scale needs 21% of it (a raised share)
    clf = LogisticRegression(
        utility_check=None,
        solver=name, epsilon=eps, delta=0.0, classes=[0, 1], random_state=0,
        max_iter=30,
    ).fit(X, y)  # fmt: skip
    assert clf.epsilon_ <= eps and clf.epsilon_ == pytest.approx(eps, rel=1e-9)
    assert clf.delta_ == 0.0
    # the iterations run on what the private row scale (400 rows: a raised
    # share, scale_share_cap) leaves of the budget
    estimate = clf.dp_event_.events[0]
    assert isinstance(estimate, ExponentialMechanismDpEvent)
    assert math.fsum(clf.iteration_epsilons_) + estimate.epsilon == pytest.approx(
        eps, rel=1e-12
    )
    assert len(clf.noise_scales_) == clf.n_iter_ == len(clf.iteration_epsilons_)
    report = clf.privacy_report()
    assert report.delta == 0.0 and "Laplace" in report.mechanism
    assert "basic composition" in report.composition
    assert report.neighbouring == "replace_one"
    # The default delta (1e-5) is accepted and the guarantee is still pure.
    clf2 = LogisticRegression(
        utility_check=None, solver=name, classes=[0, 1], random_state=0
    ).fit(X, y)
    assert clf2.delta_ == 0.0


@pytest.mark.parametrize("name", ["dp-nag", "dp-nag-opt"])
def test_gaussian_option_needs_delta_and_meets_budget(Xy, name):
    X, y = Xy
    solver = SOLVERS[name](noise="gaussian")
    with pytest.raises(ValueError, match="delta must be > 0"):
        LogisticRegression(solver=solver, delta=0.0, classes=[0, 1]).fit(X, y)
    clf = LogisticRegression(
        solver=solver, epsilon=1.0, delta=1e-6, classes=[0, 1], max_iter=20
    ).fit(X, y)
    assert clf.epsilon_ <= 1.0 and clf.delta_ == 1e-6
    assert clf.privacy_report().neighbouring == "add_or_remove_one"
    assert "iteration_epsilons_" not in vars(clf)


@pytest.mark.parametrize("name", ACCEL[1:])
def test_hinge_is_refused(Xy, name):
    X, y = Xy
    with pytest.raises(ValueError, match="does not support the 'hinge' loss"):
        LinearSVC(loss="hinge", solver=name, classes=[0, 1]).fit(X, y)


def test_laplace_variance_is_two_b_squared():
    """Zero gradients: coef = -step * noise / n, noise ~ Laplace(scale)."""
    n, d = 10, 40_000
    X, y = np.zeros((n, d)), np.zeros(n)
    r = Ridge(
        solver=DPGD(), epsilon=1.0, alpha=0.0, fit_intercept=False, max_iter=1,
        learning_rate=1.0, random_state=0,
    ).fit(X, y)  # fmt: skip
    b = r.noise_scales_[0]
    assert b == pytest.approx(2 * r.clip_norm_ / (n * 1.0))
    var = np.var(r.coef_)
    assert var == pytest.approx(2 * b**2, rel=0.05)  # not b^2: scale, not std


def _reference(X, y, alpha, steps, momenta, restarts, heavy_ball, T):
    """Textbook GD / HB / NAG / MASG on the mean logistic loss (labels +-1)."""
    z = np.where(y == 1, 1.0, -1.0)
    Xa = np.column_stack([X, np.ones(len(X))])
    w = wp = np.zeros(Xa.shape[1])
    reg = np.r_[np.full(X.shape[1], alpha), 0.0]

    def grad(v):
        return -(Xa.T @ (z / (1 + np.exp(z * (Xa @ v))))) / len(X) + reg * v

    for t in range(T):
        if restarts[t]:
            wp = w
        if heavy_ball:
            new = w - steps[t] * grad(w) + momenta[t] * (w - wp)
        else:
            p = w + momenta[t] * (w - wp)
            new = p - steps[t] * grad(p)
        wp, w = w, new
    return w


@pytest.mark.parametrize("name", ["dp-gd", "dp-hb", "dp-nag", "dp-masg"])
def test_noiseless_limit_equals_reference_iterates(Xy, name):
    X, y = Xy
    solver = SOLVERS[name]()
    if name == "dp-masg":
        solver.set_params(masg_n1=5)
    clf = LogisticRegression(
        solver=solver, epsilon=math.inf, clip_norm=math.inf, alpha=0.05,
        max_iter=40, learning_rate=0.5, classes=[0, 1],
        class_prior=None,  # the reference iterates start at zero
    ).fit(X, y)  # fmt: skip
    plan = _plan(n=400, alpha=0.05, max_iter=40, learning_rate=0.5)
    steps, momenta, restarts, _ = clf.solver_.schedule(plan)
    w = _reference(X, y, 0.05, steps, momenta, restarts, solver.heavy_ball, 40)
    np.testing.assert_allclose(clf.coef_[0], w[:-1], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(clf.intercept_[0], w[-1], rtol=1e-10, atol=1e-12)


def test_hb_with_zero_momentum_is_gd(Xy):
    X, y = Xy
    # the same explicit step: their "auto" steps differ (momentum methods
    # take a smaller one)
    kw = dict(
        epsilon=2.0, classes=[0, 1], random_state=3, max_iter=15, learning_rate=0.5
    )
    a = LogisticRegression(solver=DPHB(momentum=0.0), **kw).fit(X, y)
    b = LogisticRegression(solver=DPGD(), **kw).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)


@pytest.mark.parametrize("name", ["dp-nag", "dp-nag-opt", "dp-masg-opt"])
def test_nonprivate_limit_matches_sklearn(Xy, name):
    X, y = Xy
    n = len(X)
    ours = LogisticRegression(
        solver=SOLVERS[name](select_n_iter=False) if "opt" in name else name,
        epsilon=math.inf, clip_norm=math.inf, alpha=0.05, max_iter=1500,
        learning_rate=1.0, classes=[0, 1],
    ).fit(X, y)  # fmt: skip
    ref = sk.LogisticRegression(C=1 / (0.05 * n), tol=1e-12, max_iter=10_000).fit(X, y)
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-6)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, atol=1e-6)


@pytest.mark.parametrize("name", ["dp-gd", "dp-nag"])
@pytest.mark.parametrize("weights", [{0: 4.0, 1: 1.0}, "balanced"])
def test_class_weighted_nonprivate_limit_matches_sklearn(Xy, name, weights):
    """epsilon=inf: class_weight reaches scikit-learn's weighted optimum."""
    X, y = Xy
    keep = (y == 1) | (np.arange(len(y)) % 4 == 0)  # imbalanced
    X, y = X[keep], y[keep]
    n = len(X)
    ours = LogisticRegression(
        solver=name, epsilon=math.inf, clip_norm=math.inf, alpha=0.05,
        max_iter=3000, learning_rate=1.0, classes=[0, 1], class_weight=weights,
    ).fit(X, y)  # fmt: skip
    ref = sk.LogisticRegression(
        C=1 / (0.05 * n), tol=1e-12, max_iter=10_000, class_weight=weights
    ).fit(X, y)
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-6)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, atol=1e-6)
    plain = sk.LogisticRegression(C=1 / (0.05 * n), tol=1e-12).fit(X, y)
    assert np.abs(plain.coef_ - ref.coef_).max() > 1e-3  # the weights matter


@pytest.mark.parametrize(
    "params,match",
    [
        (dict(noise="uniform"), "noise"),
        (dict(batch_size=0), "batch_size"),
        (dict(smoothness=-1.0), "smoothness"),
        (dict(step_scale=0.0), "step_scale"),
        (dict(strong_convexity=-1.0), "strong_convexity"),
        (dict(coef_init=math.nan), "coef_init"),
        (dict(strong_convexity=0.0), "strong_convexity"),
        (dict(initial_error=-1.0), "initial_error"),
    ],
)
def test_bad_solver_parameters_name_the_parameter(Xy, params, match):
    X, y = Xy
    with pytest.raises(ValueError, match=match):
        LogisticRegression(solver=DPNAGOpt(**params), classes=[0, 1]).fit(X, y)


def test_masg_and_hb_bad_parameters(Xy):
    X, y = Xy
    with pytest.raises(ValueError, match="masg_n1"):
        LogisticRegression(solver=DPMASG(masg_n1=0), classes=[0, 1]).fit(X, y)
    with pytest.raises(ValueError, match="momentum"):
        LogisticRegression(solver=DPHB(momentum=1.5), classes=[0, 1]).fit(X, y)


def test_path_is_released_iterates(Xy):
    X, y = Xy
    clf = LogisticRegression(
        solver=DPNAG(store_path=True), classes=[0, 1], random_state=0, max_iter=9
    ).fit(X, y)
    assert clf.coef_path_.shape == (9, 1, 4)
    np.testing.assert_array_equal(clf.coef_path_[-1], clf.coef_)
    np.testing.assert_array_equal(clf.intercept_path_[-1], clf.intercept_)


def test_dpgd_auto_steps_decay_where_the_short_run_factor_applies():
    """A private classifier's "auto" plan of 10 to 99 iterations (its step
    raised by the short-run factor) decays its steps linearly with mean
    learning_rate; other plans keep constant steps."""
    from dpestim.losses import LOGISTIC, SQUARED
    from dpestim.solvers import DPGD

    def resolved(T, eps=1.0, loss=LOGISTIC, lr="auto", **solver_kw):
        solver = DPGD(**solver_kw)
        plan = erm_plan(5000, 5, 1, loss, alpha=1e-4, clip_norm=1.0,
                        max_iter=T, batch_size="auto", learning_rate=lr)  # fmt: skip
        plan, hp = solver.resolve_hyperparameters(plan, eps, 0.0)
        return solver.schedule(plan)[0], plan.learning_rate, hp

    steps, lr, hp = resolved(40)
    assert hp["step schedule"].startswith("linear") and steps.shape == (40,)
    assert steps.mean() == pytest.approx(lr, rel=1e-12)
    assert np.all(np.diff(steps) < 0) and steps[-1] == pytest.approx(2 * lr / 41)
    for T, kw in (
        (40, {"lr": 5.0}),  # an explicit step
        (9, {}),  # a short run: a few noisy gradients whose scale counts
        (100, {}),  # no short-run factor
        (40, {"loss": SQUARED}),  # the squared loss
        (40, {"eps": math.inf}),  # non-private
        (40, {"smoothness": 4.0}),  # the paper's step c / L (its reproduction)
    ):
        steps, lr, hp = resolved(T, **kw)
        assert "step schedule" not in hp and np.all(steps == steps[0]), (T, kw)
