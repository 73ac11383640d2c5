"""adp-sgd and adp-adagrad: loop twins, events, DP-SGD identity, AdaGrad privacy."""

import dataclasses
import math
import warnings

import dp_accounting as dpa
import numpy as np
import pytest
import scipy.sparse as sp
import sklearn.linear_model as sk
from test_dp_sgd import _plan  # the same small ERMPlan factory
from twins import (
    make_targets,
    np_clipped_grad_sum,
    np_lazy_noisy_sgd,
    np_poisson_sample_range,
    np_sampling_key,
)

from dpestim import LinearSVC, LogisticRegression, Ridge
from dpestim._kernels.lazy_noise import lazy_is_eager
from dpestim.exceptions import PrivacyBudgetWarning
from dpestim.losses import HINGE, LOGISTIC, MULTINOMIAL, SQUARED
from dpestim.privacy import compute_epsilon
from dpestim.solvers import ADPSGD, DPSGD, SOLVERS, ADPAdaGrad
from dpestim.solvers.sgd.adp_sgd import paper_noise_multiplier, step_size_schedule


def np_adaptive_sgd(X, Y, plan, q, stds, rates, rng, adagrad=None, leaky=False):
    """NumPy twin of the loop with per-step noise and step rules.

    ``adagrad = (b0_sq, nu, beta, period, debias)`` selects AdaGrad-norm on the
    released noisy mean gradient; ``leaky=True`` instead uses the paper's
    clean (un-noised, unclipped) mean gradient, to show the difference.
    Returns the iterates, the released noisy mean gradients and the steps.
    """
    n, d = X.shape
    K = Y.shape[1]
    W, b = np.zeros((K, d)), np.zeros(K)
    denom = q * n
    b_sq = adagrad[0] if adagrad else None
    released, steps, iterates = [], [], [(W.copy(), b.copy())]
    key = np_sampling_key(rng) if q < 1 else None
    for t in range(len(rates)):
        rows = np_poisson_sample_range(key, t, q, 0, n)
        G, g0 = np_clipped_grad_sum(
            X, Y, rows, W, b, plan.loss, plan.clip_norm, plan.fit_intercept
        )
        if stds[t] > 0:
            G = G + stds[t] * rng.standard_normal((K, d))
            if plan.fit_intercept:
                g0 = g0 + stds[t] * rng.standard_normal(K)
        g = np.concatenate([G.ravel(), g0 if plan.fit_intercept else []]) / denom
        released.append(g)
        lr = rates[t]
        if adagrad:
            _, nu, beta, period, debias = adagrad
            if leaky:
                Gc, g0c = np_clipped_grad_sum(
                    X, Y, rows, W, b, plan.loss, np.inf, plan.fit_intercept
                )
                sq = (np.sum(Gc**2) + np.sum(g0c**2)) / max(len(rows), 1) ** 2
            else:
                sq = np.sum(g**2) - debias * g.size * (stds[t] / denom) ** 2
            beta_t = max(beta / (t % period + 1), 1.0)
            b_sq += max(beta_t * sq, nu)
            lr = rates[t] / math.sqrt(b_sq)
        steps.append(lr)
        W = W - lr * (G / denom + plan.alpha * W)
        if plan.fit_intercept:
            b = b - lr * g0 / denom
        iterates.append((W.copy(), b.copy()))
    return W, b, np.array(released), np.array(steps), iterates


def _problem(loss=LOGISTIC, K=1, n=60, d=5, seed=0, **kw):
    rng = np.random.default_rng(seed)
    plan = _plan(n=n, d=d, K=K, loss=loss, fit_intercept=loss != HINGE, **kw)
    X = rng.normal(size=(n, d))
    Y = make_targets(loss, n, K, rng)
    return plan, X, Y


# -- kernels against NumPy twins -------------------------------------------


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize(
    "loss,K", [(LOGISTIC, 1), (SQUARED, 2), (HINGE, 1), (MULTINOMIAL, 3)]
)
@pytest.mark.parametrize(
    "solver",
    [
        ADPSGD("invsqrt", a=2.0, c=1.0),
        ADPSGD("sqrt_decay", eta_end=1e-3),
        ADPAdaGrad(b0_sq=0.5, alpha_growth=0.5, beta=4.0),
        ADPAdaGrad(debias=False, nu=0.1),
    ],
    ids=["invsqrt", "sqrt_decay", "adagrad", "adagrad-nodebias"],
)
def test_solver_equals_numpy_twin_on_same_stream(solver, loss, K, sparse):
    plan, X, Y = _problem(loss, K)
    res = solver.solve(
        sp.csr_matrix(X) if sparse else X, Y, plan, 1.3, np.random.default_rng(42)
    )
    stds = 1.3 * solver.noise_scales(plan) * plan.clip_norm
    q = solver.sampling_prob(plan)
    if isinstance(solver, ADPAdaGrad):
        rates = np.full(solver.n_steps(plan), plan.learning_rate)
        ada = (
            solver.b0_sq,
            solver.nu,
            solver.beta,
            solver.steps_per_epoch(plan),
            float(solver.debias),
        )
    else:
        rates, ada = solver.learning_rates(plan), None
    if sparse and ada is None:  # O(nnz) steps: lazy noise, its own draw order
        W, b = np_lazy_noisy_sgd(
            sp.csr_matrix(X), Y, plan.loss, plan.fit_intercept, plan.clip_norm,
            stds, q, rates, plan.alpha, np.random.default_rng(42),
            eager=lazy_is_eager(K * plan.n_features, q * plan.n_samples),
        )  # fmt: skip
        steps = rates
    else:
        W, b, _, steps, _ = np_adaptive_sgd(
            X, Y, plan, q, stds, rates, np.random.default_rng(42), adagrad=ada
        )
    np.testing.assert_allclose(res.coef, W, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(res.intercept, b, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(res.attributes["learning_rates_"], steps, rtol=1e-12)
    np.testing.assert_allclose(res.attributes["noise_multipliers_"], stds / 0.7)
    assert res.n_iter == solver.n_steps(plan) == len(steps)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("loss,K", [(LOGISTIC, 1), (MULTINOMIAL, 3), (SQUARED, 2)])
def test_constant_schedule_is_dp_sgd_bit_for_bit(loss, K, sparse):
    plan, X, Y = _problem(loss, K, n=200, batch_size=30, max_iter=4)
    X = sp.csr_matrix(X) if sparse else X
    ref = DPSGD().solve(X, Y, plan, 0.8, np.random.default_rng(7))
    for solver in (ADPSGD("constant"), ADPSGD("constant", noise_shape="constant")):
        res = solver.solve(X, Y, plan, 0.8, np.random.default_rng(7))
        np.testing.assert_array_equal(res.coef, ref.coef)
        np.testing.assert_array_equal(res.intercept, ref.intercept)
        assert res.dp_event == ref.dp_event == DPSGD().make_event(0.8, plan)
        np.testing.assert_array_equal(res.attributes["noise_multipliers_"], 0.8)
        assert solver.calibrate(1.0, 1e-5, plan, accountant="rdp") == DPSGD().calibrate(
            1.0, 1e-5, plan, accountant="rdp"
        )


def test_constant_schedule_estimator_equals_dp_sgd(binary_data):
    X, y = binary_data
    kw = dict(classes=[0, 1], random_state=3, max_iter=3, batch_size=50)
    a = LogisticRegression(solver="dp-sgd", **kw).fit(X, y)
    b = LogisticRegression(solver=ADPSGD("constant"), **kw).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.intercept_, b.intercept_)
    assert a.epsilon_ == b.epsilon_ and a.noise_multiplier_ == b.noise_multiplier_


def test_noise_reaches_parameters_with_planned_variance():
    """X = 0: the iterate is pure noise, variance sum_t eta_t^2 sigma_t^2 / (qn)^2."""
    n, d = 40, 4000
    plan = _plan(n=n, d=d, batch_size=20, max_iter=2, alpha=0.0, fit_intercept=False)
    X, Y = np.zeros((n, d)), np.ones((n, 1))
    solver = ADPSGD("invsqrt", a=1.0, c=2.0)
    res = solver.solve(X, Y, plan, 2.0, np.random.default_rng(0))
    stds = 2.0 * solver.noise_scales(plan) * plan.clip_norm
    rates = solver.learning_rates(plan)
    var = np.sum(rates**2 * stds**2) / (0.5 * n) ** 2
    stat = np.sum(res.coef**2) / var  # chi-square with d degrees of freedom
    assert abs(stat - d) < 4.5 * math.sqrt(2 * d)
    # ADP spends the noise where steps are small: sigma_t^2 eta_t ~ constant.
    prod = stds**2 * rates
    assert prod.max() / prod.min() < 1.3
    np.testing.assert_allclose(stds[-1] / stds[0], (rates[0] / rates[-1]) ** 0.5)


# -- events and calibration -------------------------------------------------


@pytest.mark.parametrize(
    "solver",
    [ADPSGD(a=2.0), ADPSGD("sqrt_decay", eta_end=1e-6), ADPAdaGrad(alpha_growth=5.0)],
)
def test_event_is_the_composition_of_the_noise_levels_that_run(solver):
    plan = _plan(n=1000, batch_size=50, max_iter=1)
    alpha = solver.noise_scales(plan)
    T = solver.n_steps(plan)
    assert alpha.shape == (T,) and T == 20
    np.testing.assert_allclose(np.sum(1.0 / alpha**2), T, rtol=1e-12)
    levels, counts = np.unique(alpha, return_counts=True)
    assert 2 <= levels.size <= solver.n_noise_levels
    expected = dpa.ComposedDpEvent(
        [
            dpa.SelfComposedDpEvent(
                dpa.PoissonSampledDpEvent(0.05, dpa.GaussianDpEvent(1.7 * lv)), int(c)
            )
            for lv, c in zip(levels, counts)
        ]
    )
    assert solver.make_event(1.7, plan) == expected
    if not isinstance(solver, ADPSGD) or solver.schedule != "invsqrt":
        return
    # epsilon is the one of the per-step noises actually used
    per_step = dpa.ComposedDpEvent(
        [dpa.PoissonSampledDpEvent(0.05, dpa.GaussianDpEvent(1.7 * a)) for a in alpha]
    )
    np.testing.assert_allclose(
        compute_epsilon(solver.make_event(1.7, plan), 1e-5),
        compute_epsilon(per_step, 1e-5),
        rtol=1e-9,
    )


def test_shape_follows_step_size_and_is_scale_free():
    plan = _plan(n=1000, batch_size=50, max_iter=10)
    solver = ADPSGD("invsqrt", a=20.0, c=1.0, n_noise_levels=1000)
    alpha = solver.noise_scales(plan)
    ideal = 1.0 / np.sqrt(solver.learning_rates(plan))
    ideal *= math.sqrt(np.mean(1.0 / ideal**2))
    np.testing.assert_allclose(alpha, ideal, rtol=0.03)  # levels 5% apart
    # the shape does not depend on the learning rate's scale
    plan2 = _plan(n=1000, batch_size=50, max_iter=10, learning_rate=7.0)
    np.testing.assert_allclose(solver.noise_scales(plan2), alpha, rtol=1e-12)
    # coarse quantisation stays close to the ideal shape
    coarse = ADPSGD("invsqrt", a=20.0, c=1.0).noise_scales(plan)
    np.testing.assert_allclose(coarse, ideal, rtol=0.06)


def test_event_depends_only_on_declared_event_inputs():
    base = dict(n=1000, batch_size=50, max_iter=4)
    plan = _plan(**base)
    other = _plan(
        **base, d=9, K=3, loss=SQUARED, alpha=1.0, fit_intercept=False, clip_norm=5.0
    )
    for solver in (ADPSGD("sqrt_decay", eta_end=0.01), ADPAdaGrad(alpha_growth=1.0)):
        assert solver.event_inputs(plan) == solver.event_inputs(other)
        assert solver.make_event(1.3, plan) == solver.make_event(1.3, other)
        for change in (
            dict(n=999),
            dict(batch_size=51),
            dict(max_iter=5),
            dict(learning_rate=0.5),
        ):
            changed = _plan(**{**base, **change})
            if solver.make_event(1.3, changed) != solver.make_event(1.3, plan):
                assert solver.event_inputs(changed) != solver.event_inputs(plan)


@pytest.mark.parametrize(
    "solver",
    [ADPSGD(n_noise_levels=2), ADPAdaGrad(alpha_growth=1.0, n_noise_levels=2)],
    ids=["adp-sgd", "adp-adagrad"],
)
def test_calibration_meets_budget_without_overshoot(solver):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(2000, 3))
    y = (X[:, 0] > 0).astype(int)
    batch = 200 if isinstance(solver, ADPSGD) else 2000  # sampled / full batch
    clf = LogisticRegression(
        utility_check=None,
        solver=solver,
        epsilon=1.0,
        classes=[0, 1],
        max_iter=2,
        batch_size=batch,
        feature_scale=None,  # the solver's calibration alone
        class_prior=None,  # likewise
    )
    clf.fit(X, y)
    assert 0.999 <= clf.epsilon_ <= 1.0
    assert clf.epsilon_ == compute_epsilon(clf.dp_event_, 1e-5)
    assert clf.noise_multipliers_.shape == clf.learning_rates_.shape
    assert clf.n_iter_ == clf.learning_rates_.size == 2 * 2000 // batch
    report = str(clf.privacy_report())
    assert "heterogeneous Gaussian noise" in report
    assert "ComposedDpEvent" in report and "2 distinct levels" in report


# -- AdaGrad-norm privacy ---------------------------------------------------


def test_adagrad_steps_are_post_processing_of_released_gradients():
    """Rebuild every step size from the released trajectory alone.

    Each released iterate gives the released noisy gradient
    ``g_t = ((theta_t - theta_{t+1}) / eta_t - alpha W_t)``; the AdaGrad
    state must be a function of those and public constants only.
    """
    plan, X, Y = _problem(LOGISTIC, n=80, d=6, batch_size=20, max_iter=3)
    solver = ADPAdaGrad(b0_sq=0.3, alpha_growth=0.2, beta=3.0)
    full = solver.solve(X, Y, plan, 0.9, np.random.default_rng(5))
    steps = full.attributes["learning_rates_"]
    stds = 0.9 * solver.noise_scales(plan) * plan.clip_norm
    denom = solver.sampling_prob(plan) * plan.n_samples
    # released iterates of the same run (same stream, same kernel)
    _, _, released, twin_steps, iterates = np_adaptive_sgd(
        X,
        Y,
        plan,
        solver.sampling_prob(plan),
        stds,
        np.full(len(steps), plan.learning_rate),
        np.random.default_rng(5),
        adagrad=(0.3, solver.nu, 3.0, solver.steps_per_epoch(plan), 1.0),
    )
    np.testing.assert_allclose(iterates[-1][0], full.coef, rtol=1e-9, atol=1e-12)
    b_sq = solver.b0_sq
    for t in range(len(steps)):
        (W0, b0), (W1, b1) = iterates[t], iterates[t + 1]
        g = np.concatenate(
            [((W0 - W1) / steps[t] - plan.alpha * W0).ravel(), (b0 - b1) / steps[t]]
        )
        np.testing.assert_allclose(g, released[t], rtol=1e-6, atol=1e-9)
        beta_t = max(3.0 / (t % solver.steps_per_epoch(plan) + 1), 1.0)
        energy = g.size * (stds[t] / denom) ** 2
        b_sq += max(beta_t * (np.sum(g**2) - energy), solver.nu)
        np.testing.assert_allclose(steps[t], plan.learning_rate / math.sqrt(b_sq))
    np.testing.assert_allclose(twin_steps, steps, rtol=1e-12)


def test_adagrad_trajectory_ignores_unclipped_gradient():
    """Neighbours that differ only beyond the clipping give the same release.

    Replace one record's target by a 1000x larger one (squared loss): its
    clipped gradient, hence every released noisy gradient, is unchanged, so
    the whole trajectory and every step size must be identical for the same
    noise and batches. The paper's rule, which reads the clean gradient,
    changes its step sizes: that is the leak this solver removes.
    """
    rng = np.random.default_rng(0)
    n, d = 60, 5
    plan = _plan(n=n, d=d, loss=SQUARED, fit_intercept=False, batch_size=20, max_iter=4)
    plan = dataclasses.replace(plan, learning_rate=0.05)
    X = rng.normal(size=(n, d))
    Y = rng.normal(size=(n, 1))
    Y[7, 0] = 1e3
    Y2 = Y.copy()
    Y2[7, 0] = 1e6
    solver = ADPAdaGrad(b0_sq=0.5)
    a = solver.solve(X, Y, plan, 1.0, np.random.default_rng(3))
    b = solver.solve(X, Y2, plan, 1.0, np.random.default_rng(3))
    # equal up to the rounding of the clip factor of record 7 (one ulp)
    np.testing.assert_allclose(a.coef, b.coef, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(
        a.attributes["learning_rates_"], b.attributes["learning_rates_"], rtol=1e-12
    )
    stds = solver.noise_scales(plan) * plan.clip_norm
    args = (
        solver.sampling_prob(plan),
        stds,
        np.full(solver.n_steps(plan), plan.learning_rate),
    )
    ada = (0.5, solver.nu, 1.0, solver.steps_per_epoch(plan), 1.0)
    leak_a = np_adaptive_sgd(
        X, Y, plan, *args, np.random.default_rng(3), adagrad=ada, leaky=True
    )[3]
    leak_b = np_adaptive_sgd(
        X, Y2, plan, *args, np.random.default_rng(3), adagrad=ada, leaky=True
    )[3]
    assert np.max(np.abs(np.log(leak_a / leak_b))) > 1.0


def test_one_step_release_has_the_accounted_sensitivity():
    """Adding/removing one record moves the released step by <= clip_norm."""
    rng = np.random.default_rng(4)
    worst = 0.0
    for trial in range(30):
        loss = [LOGISTIC, SQUARED, MULTINOMIAL][trial % 3]
        K = 3 if loss == MULTINOMIAL else 1
        n, d = 25, 4
        X = rng.normal(size=(n, d)) * rng.choice([0.01, 1.0, 100.0])
        Y = make_targets(loss, n, K, rng)
        keep = np.delete(np.arange(n), rng.integers(n))
        plan = _plan(n=n, d=d, K=K, loss=loss, max_iter=1, batch_size=n, alpha=0.0)
        plan_r = _plan(
            n=n - 1, d=d, K=K, loss=loss, max_iter=1, batch_size=n, alpha=0.0
        )
        for solver in (ADPSGD(), ADPSGD("sqrt_decay", eta_end=0.01)):
            r1 = solver.solve(X, Y, plan, 0.0, np.random.default_rng(0))
            r2 = solver.solve(X[keep], Y[keep], plan_r, 0.0, np.random.default_rng(0))
            lr = plan.learning_rate
            s1 = np.concatenate([r1.coef.ravel(), r1.intercept]) * n / lr
            s2 = np.concatenate([r2.coef.ravel(), r2.intercept]) * (n - 1) / lr
            diff = np.linalg.norm(s1 - s2)
            worst = max(worst, diff / plan.clip_norm)
            assert diff <= plan.clip_norm * (1 + 1e-9)
    assert worst > 0.99


# -- non-private limit, estimators, validation -------------------------------


@pytest.mark.parametrize(
    "solver",
    [ADPSGD("invsqrt", a=20.0, c=0.01), ADPAdaGrad(b0_sq=1.0)],
    ids=["adp-sgd", "adp-adagrad"],
)
def test_nonprivate_limit_matches_sklearn(solver):
    rng = np.random.default_rng(0)
    n, d, alpha = 300, 5, 0.01
    X = rng.normal(size=(n, d))
    y = (X @ rng.normal(size=d) + 0.5 * rng.normal(size=n) > 0).astype(int)
    ours = LogisticRegression(
        epsilon=np.inf,
        clip_norm=np.inf,
        alpha=alpha,
        batch_size=n,
        max_iter=4000,
        learning_rate=1.0,
        solver=solver,
        classes=[0, 1],
    ).fit(X, y)
    ref = sk.LogisticRegression(C=1 / (alpha * n), tol=1e-12, max_iter=10_000)
    ref.fit(X, y)
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-6)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, atol=1e-6)
    assert ours.epsilon_ == np.inf and np.all(ours.noise_multipliers_ == 0)


@pytest.mark.parametrize("est_cls", [LogisticRegression, LinearSVC, Ridge])
@pytest.mark.parametrize("solver", ["adp-sgd", "adp-adagrad"])
def test_all_estimators_fit_and_expose_schedules(est_cls, solver, binary_data):
    X, y = binary_data
    extra = {} if est_cls is Ridge else dict(classes=[0, 1])
    est = est_cls(solver=solver, random_state=0, batch_size=300, **extra).fit(X, y)
    assert est.n_iter_ == est.noise_multipliers_.size == est.learning_rates_.size
    assert est.epsilon_ <= 1.0
    assert np.all(np.isfinite(est.coef_))


@pytest.mark.parametrize(
    "solver,match",
    [
        (ADPSGD("cosine"), "'schedule' parameter of ADPSGD must be"),
        (ADPSGD(a=0.0), "'a' parameter of ADPSGD must be"),
        (ADPSGD(c=-1.0), "'c' parameter of ADPSGD must be"),
        (ADPSGD("sqrt_decay", eta_end=5.0), "eta_end must be"),
        (ADPSGD(noise_shape="inverse"), "'noise_shape' parameter of ADPSGD must be"),
        (ADPSGD(n_noise_levels=0), "'n_noise_levels' parameter of ADPSGD must be"),
        (ADPAdaGrad(b0_sq=-1.0), "'b0_sq' parameter of ADPAdaGrad must be"),
        (ADPAdaGrad(nu=0.0), "'nu' parameter of ADPAdaGrad must be"),
        (ADPAdaGrad(beta="x"), "'beta' parameter of ADPAdaGrad must be"),
        (
            ADPAdaGrad(alpha_growth=np.nan),
            "'alpha_growth' parameter of ADPAdaGrad must be",
        ),
        (ADPAdaGrad(debias="yes"), "'debias' parameter of ADPAdaGrad must be"),
        (ADPAdaGrad(noise_shape="constant", nu=-1.0), "'nu' parameter of ADPAdaGrad"),
    ],
)
@pytest.mark.parametrize("epsilon", [1.0, np.inf])
def test_bad_solver_parameters_are_named(solver, match, epsilon, binary_data):
    X, y = binary_data
    with pytest.raises(ValueError, match=match):
        LogisticRegression(solver=solver, epsilon=epsilon, classes=[0, 1]).fit(X, y)


def test_registry():
    assert SOLVERS["adp-sgd"] is ADPSGD and SOLVERS["adp-adagrad"] is ADPAdaGrad
    assert set(ADPSGD().get_params()) == {
        "schedule",
        "a",
        "c",
        "eta_end",
        "noise_shape",
        "n_noise_levels",
        "final_intercept",
    }


def test_step_size_schedules():
    eta = step_size_schedule("invsqrt", 1 / math.sqrt(20), 5, a=20.0, c=1.0)
    np.testing.assert_allclose(eta, 1 / np.sqrt(20 + np.arange(5)))
    eta = step_size_schedule("sqrt_decay", 0.1, 4, eta_end=1e-10)
    np.testing.assert_allclose(eta, 0.1 - (0.1 - 1e-10) * np.sqrt(np.arange(4) / 4))
    np.testing.assert_array_equal(step_size_schedule("constant", 0.3, 3), 0.3)


# -- the paper's formula (reproduction option) --------------------------------


def test_paper_noise_formula_matches_the_spec_numbers_and_warns():
    # Spec section 3.3: n=50000, m=256, T=11760, delta=1e-5, eps_bar=0.8 gives
    # sigma_DP = 0.031857 / 0.8 on the mean, i.e. noise multiplier 10.19.
    with pytest.warns(PrivacyBudgetWarning, match="per-step epsilon reaches 1.1"):
        s = paper_noise_multiplier(0.8, 1e-5, 50000, 256, np.ones(11760))
    np.testing.assert_allclose(s, 0.031857 / 0.8 * 256, rtol=1e-4)
    # the shape does not change s (sum 1/alpha^2 is normalised) but the check
    alpha = (20.0 + np.arange(11760)) ** 0.25
    with pytest.warns(PrivacyBudgetWarning, match="reaches 4.2"):
        assert paper_noise_multiplier(0.8, 1e-5, 50000, 256, alpha) == s
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        paper_noise_multiplier(0.1, 1e-5, 50000, 256, np.ones(11760))
    # Spec 3.5: RDP at integer orders 2..255 with the classic conversion
    # min_l RDP(l) + log(1/delta)/(l-1) gives 0.264 for this DP-SGD noise
    # (dp_accounting's own, tighter conversion gives less).
    event = dpa.SelfComposedDpEvent(
        dpa.PoissonSampledDpEvent(256 / 50000, dpa.GaussianDpEvent(s)), 11760
    )
    acc = dpa.rdp.RdpAccountant(orders=list(range(2, 256))).compose(event)
    orders, rdp = np.array(acc._orders), np.array(acc._rdp)
    classic = np.min(rdp + np.log(1e5) / (orders - 1))
    np.testing.assert_allclose(classic, 0.264, atol=5e-4)
    assert acc.get_epsilon(1e-5) < classic
    with pytest.raises(ValueError, match="noise_shape"):
        paper_noise_multiplier(0.8, 1e-5, 100, 10, [1.0, -1.0])
