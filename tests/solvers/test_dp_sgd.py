"""dp-sgd and dp-gd: loop twin, events, contract and registry."""

import math

import dp_accounting as dpa
import numpy as np
import pytest
import scipy.sparse as sp
from _solver_plans import erm_plan
from sklearn.base import clone
from twins import make_targets, np_lazy_noisy_sgd, np_noisy_sgd

from dpestim._kernels.lazy_noise import lazy_is_eager
from dpestim.losses import HINGE, LOGISTIC, MULTINOMIAL, SQUARED
from dpestim.solvers import DPGD, DPSGD, SOLVERS, BaseSolver, resolve_solver


def _plan(n=50, d=4, K=1, loss=LOGISTIC, **kw):
    kw = {"alpha": 0.01, "clip_norm": 0.7, "batch_size": 10, **kw}
    return erm_plan(n, d, K, loss, **kw)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize(
    "loss,K", [(LOGISTIC, 1), (SQUARED, 2), (HINGE, 3), (MULTINOMIAL, 3)]
)
@pytest.mark.parametrize("solver_cls", [DPSGD, lambda: DPGD(noise="gaussian")])
def test_solver_equals_numpy_twin_on_same_stream(solver_cls, loss, K, sparse):
    rng = np.random.default_rng(0)
    plan = _plan(K=K, loss=loss, fit_intercept=loss != HINGE)
    X = rng.normal(size=(plan.n_samples, plan.n_features))
    Y = make_targets(loss, plan.n_samples, K, rng)
    solver = solver_cls()
    q = solver.sampling_prob(plan) if isinstance(solver, DPSGD) else 1.0
    res = solver.solve(
        sp.csr_matrix(X) if sparse else X, Y, plan, 1.3, np.random.default_rng(42)
    )
    T = solver.n_steps(plan)
    if sparse and q < 1:  # O(nnz) steps: lazy noise, its own draw order
        W, b = np_lazy_noisy_sgd(
            sp.csr_matrix(X), Y, loss, plan.fit_intercept, plan.clip_norm,
            np.full(T, 1.3 * plan.clip_norm), q, np.full(T, plan.learning_rate),
            plan.alpha, np.random.default_rng(42),
            eager=lazy_is_eager(K * plan.n_features, q * plan.n_samples),
        )  # fmt: skip
    else:
        W, b = np_noisy_sgd(
            X,
            Y,
            loss,
            plan.fit_intercept,
            plan.clip_norm,
            1.3 * plan.clip_norm,
            q,
            plan.learning_rate,
            plan.alpha,
            T,
            np.random.default_rng(42),
        )
    np.testing.assert_allclose(res.coef, W, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(res.intercept, b, rtol=1e-9, atol=1e-12)
    assert res.n_iter == solver.n_steps(plan)


def test_dp_sgd_event_is_poisson_gaussian_with_planned_steps():
    plan = _plan(n=1000, batch_size=50, max_iter=4)
    event = DPSGD().make_event(1.1, plan)
    expected = dpa.SelfComposedDpEvent(
        dpa.PoissonSampledDpEvent(0.05, dpa.GaussianDpEvent(1.1)), 80
    )
    assert event == expected


@pytest.mark.parametrize("solver", [DPSGD(), DPGD(noise="gaussian")])
def test_event_depends_only_on_declared_event_inputs(solver):
    """The calibration cache key must determine the event."""
    plan = _plan(n=1000, batch_size=50, max_iter=4)
    other = _plan(
        n=1000,
        batch_size=50,
        max_iter=4,
        d=9,
        K=3,
        loss=SQUARED,
        alpha=1.0,
        fit_intercept=False,
        clip_norm=5.0,
        learning_rate=9.0,
    )
    assert solver.event_inputs(plan) == solver.event_inputs(other)
    assert solver.make_event(1.3, plan) == solver.make_event(1.3, other)
    for change in (dict(n_samples=999), dict(batch_size=51), dict(max_iter=5)):
        changed = _plan(
            **{
                **dict(n=1000, batch_size=50, max_iter=4),
                **{("n" if k == "n_samples" else k): v for k, v in change.items()},
            }
        )
        if solver.make_event(1.3, changed) != solver.make_event(1.3, plan):
            assert solver.event_inputs(changed) != solver.event_inputs(plan)


def test_dp_gd_event_is_full_batch_gaussian():
    plan = _plan(n=1000, batch_size=50, max_iter=7)
    gd = DPGD(noise="gaussian")
    assert gd.make_event(2.0, plan) == dpa.SelfComposedDpEvent(
        dpa.GaussianDpEvent(2.0), 7
    )
    assert gd.sampling(plan).startswith("full batch")


def test_batch_larger_than_n_is_full_batch():
    plan = _plan(n=30, batch_size=256, max_iter=5)
    solver = DPSGD()
    assert solver.sampling_prob(plan) == 1.0
    assert solver.n_steps(plan) == 5
    assert solver.make_event(1.0, plan) == dpa.SelfComposedDpEvent(
        dpa.GaussianDpEvent(1.0), 5
    )


def test_steps_fixed_by_public_plan():
    plan = _plan(n=1001, batch_size=100, max_iter=3)
    assert DPSGD().n_steps(plan) == math.ceil(3 * 1001 / 100)


def test_solve_reports_the_event_that_ran():
    plan = _plan()
    rng = np.random.default_rng(0)
    X = rng.normal(size=(plan.n_samples, plan.n_features))
    Y = make_targets(LOGISTIC, plan.n_samples, 1, rng)
    res = DPSGD().solve(X, Y, plan, 0.9, rng)
    assert res.dp_event == DPSGD().make_event(0.9, plan)
    assert res.noise_multiplier == 0.9


def test_registry_and_resolution():
    assert set(SOLVERS) >= {"dp-sgd", "dp-gd"}
    for name, cls in SOLVERS.items():
        assert issubclass(cls, BaseSolver) and cls.name == name
        assert cls.problem in ("erm", "saddle")
        assert cls.privacy_notion in ("approx", "pure")
        assert cls.data_order in ("C", "F")
    assert isinstance(resolve_solver("dp-gd"), DPGD)
    inst = DPSGD()
    resolved = resolve_solver(inst)
    assert resolved is not inst and isinstance(resolved, DPSGD)
    with pytest.raises(ValueError, match="solver='nope'"):
        resolve_solver("nope")
    with pytest.raises(TypeError, match="solver must be"):
        resolve_solver(3)


def test_solver_has_sklearn_params_and_clones():
    s = DPSGD()
    assert s.get_params() == {"final_intercept": True}
    assert clone(DPSGD(final_intercept=False)).final_intercept is False
    assert isinstance(clone(s), DPSGD)


def test_unsupported_loss_is_refused_by_name():
    class SmoothOnly(DPSGD):
        name = "smooth-only"
        supported_losses = frozenset({"logistic"})

    with pytest.raises(ValueError, match="does not support the 'hinge' loss"):
        SmoothOnly().check_loss(HINGE)


def test_calibration_key_distinguishes_solver_parameters():
    class WithParam(DPSGD):
        name = "with-param"

        def __init__(self, extra=None):
            self.extra = extra

    plan = _plan()
    long_a = WithParam(extra=list(range(5000)))
    long_b = WithParam(extra=list(range(4999)) + [0])
    assert repr(long_a) == repr(long_b)  # sklearn truncates long reprs ...
    assert long_a.calibration_key(plan) != long_b.calibration_key(plan)  # ... we do not
    assert DPSGD().calibration_key(plan) != DPGD().calibration_key(plan)
    assert hash(DPSGD().calibration_key(plan)) == hash(DPSGD().calibration_key(plan))


def test_settling_rates_level_then_linear_decay_with_the_same_travel():
    from dpestim.solvers.sgd.dp_sgd import settling_rates

    for T in (1, 2, 7, 50, 1001):
        rates = settling_rates(0.5, T)
        assert rates.shape == (T,)
        assert rates.sum() == pytest.approx(0.5 * T, rel=1e-12)
        assert np.all(rates > 0) and np.all(np.diff(rates) <= 1e-15)
    rates = settling_rates(0.5, 1000)
    np.testing.assert_allclose(rates[:500], rates[0])  # level for half the run
    assert rates[0] == pytest.approx(0.5 * 4 / 3, rel=1e-2)
    assert rates[-1] == pytest.approx(rates[0] * 2 / 1000)  # then down to ~0


def test_dpsgd_auto_steps_settle_only_on_a_private_undamped_squared_loss_plan():
    """A private squared-loss plan with learning_rate="auto" whose step the
    noise did not damp takes the settling steps (and solve runs them); every
    other plan, and the family's solvers with schedules of their own, keep
    constant steps."""
    from dpestim.solvers import ADPSGD, DPLSSGD
    from dpestim.solvers.sgd.dp_sgd import settling_rates

    def resolved(n=20000, eps=1.0, loss=SQUARED, lr="auto", solver=None, **kw):
        solver = solver or DPSGD()
        plan = erm_plan(n, 5, 1, loss, **{"alpha": 1e-4, "clip_norm": 1.0,
                        "max_iter": "auto", "batch_size": "auto",
                        "learning_rate": lr, **kw})  # fmt: skip
        plan, hp = solver.resolve_hyperparameters(plan, eps, 1e-5)
        return solver, plan, hp

    solver, plan, hp = resolved()
    assert hp["step schedule"].startswith("level") and plan.learning_rate == 0.5
    rates = solver.learning_rates(plan)
    np.testing.assert_array_equal(rates, settling_rates(0.5, solver.n_steps(plan)))
    assert solver.max_step_size(plan) == rates[0]
    for kw in (
        {"lr": 0.5},  # an explicit step
        {"eps": math.inf},  # non-private
        {"loss": LOGISTIC},  # a classifier
        {"n": 300, "eps": 0.1},  # the noise damps the step
        {"solver": DPLSSGD()},  # its own schedule parameter
        {"solver": ADPSGD()},  # its own decaying steps
        {"alpha": 3.0},  # a strong penalty caps the step at 1 / alpha
    ):
        solver, plan, hp = resolved(**kw)
        assert "step schedule" not in hp, kw
        if type(solver) is DPSGD:
            rates = solver.learning_rates(plan)
            assert np.all(rates == plan.learning_rate), kw
            assert solver.max_step_size(plan) == plan.learning_rate

    # solve runs the settling steps: the same stream as the loop given them
    solver, plan, _ = resolved(n=400, eps=50.0, batch_size=40, max_iter=3)
    rng = np.random.default_rng(3)
    X, Y = rng.normal(size=(400, 5)), rng.normal(size=(400, 1))
    from dpestim.solvers.sgd.dp_sgd import noisy_gradient_descent

    assert solver._settle
    res = solver.solve(X, Y, plan, 0.8, np.random.default_rng(9))
    steps, rng = solver.n_steps(plan), np.random.default_rng(9)
    W, b = noisy_gradient_descent(
        X, Y, plan, solver.sampling_prob(plan), np.full(steps, 0.8),
        settling_rates(plan.learning_rate, steps), rng,
    )  # fmt: skip
    b = solver.finish(X, Y, W, b, plan, 0.8, rng)
    np.testing.assert_array_equal(res.coef, W)
    np.testing.assert_array_equal(res.intercept, b)
