"""AdaSSP (solver="adassp"): sensitivities, event, non-private limit, refusals."""

import math

import numpy as np
import pytest
import scipy.sparse as sp
from _solver_plans import erm_plan
from dp_accounting import ComposedDpEvent, GaussianDpEvent
from sklearn.linear_model import Ridge as SkRidge

from dpestim import LogisticRegression, Ridge
from dpestim.losses import SQUARED
from dpestim.privacy import compute_epsilon
from dpestim.solvers import SOLVERS
from dpestim.solvers.oneshot import AdaSSP
from dpestim.solvers.oneshot.adassp import adassp_statistics, clip_rows


def _clip_targets(Y, bound):
    norms = np.linalg.norm(Y, axis=1)
    return Y * np.minimum(1.0, bound / np.maximum(norms, 1e-300))[:, None]


def test_registered():
    assert SOLVERS["adassp"] is AdaSSP


@pytest.mark.parametrize("seed", range(4))
def test_each_statistic_moves_by_at_most_its_sensitivity(seed):
    """Brute force on random add/remove neighbours, one statistic at a time."""
    rng = np.random.default_rng(seed)
    worst = np.zeros(3)
    for _ in range(60):
        n, d, K = (
            int(rng.integers(2, 25)),
            int(rng.integers(1, 6)),
            int(rng.integers(1, 3)),
        )
        clip = float(rng.choice([0.01, 0.5, 1.0, 7.0]))
        tb = float(rng.choice([0.1, 1.0, 50.0]))
        fit_intercept = bool(rng.integers(2))
        X = rng.normal(size=(n, d)) * rng.choice([1e-3, 1.0, 1e3])
        Y = rng.normal(size=(n, K)) * rng.choice([1e-2, 1.0, 1e4])
        i = int(rng.integers(n))
        keep = np.delete(np.arange(n), i)
        if rng.random() < 0.3:  # an extreme record
            X[i] *= 1e6
            Y[i] *= 1e6
        plan = erm_plan(n, d, K, SQUARED, clip_norm=clip, target_bound=tb,
                        fit_intercept=fit_intercept)  # fmt: skip
        solver = AdaSSP()
        B = solver.row_bound(plan)
        stats = []
        for Xs, Ys in ((X, Y), (X[keep], Y[keep])):
            Xc = clip_rows(Xs, clip, fit_intercept)
            assert np.linalg.norm(Xc, axis=1).max() <= B * (1 + 1e-12)
            stats.append(adassp_statistics(Xc, _clip_targets(Ys, tb)))
        (l1, u1, c1), (l2, u2, c2) = stats
        ratios = [
            abs(l1 - l2) / B**2,
            np.linalg.norm(u1 - u2) / B**2,
            np.linalg.norm(c1 - c2) / (B * tb),
        ]
        worst = np.maximum(worst, ratios)
    assert (worst <= 1 + 1e-9).all(), worst
    # not vacuous: the Gram and X^T Y bounds are reached (clipped records)
    assert worst[1] > 0.9 and worst[2] > 0.5


def test_weyl_bound_is_what_the_eigenvalue_needs():
    """Negative control: without clipping the eigenvalue moves far more."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(6, 2))
    X[0] *= 100
    lam = [adassp_statistics(Xs, np.zeros((len(Xs), 1)))[0] for Xs in (X, X[1:])]
    assert abs(lam[0] - lam[1]) > 1.0  # clip_norm 1 would allow at most 1


def test_default_event_is_two_composed_gaussians_and_calibrated():
    """Default eigenvalue_share=0: lambda_min is not released."""
    solver = AdaSSP()
    plan = erm_plan(200, 3, 1, SQUARED, target_bound=1.0)
    nm = solver.calibrate(1.0, 1e-5, plan, accountant="rdp")
    assert solver.make_event(nm, plan) == ComposedDpEvent([GaussianDpEvent(nm)] * 2)
    eps = compute_epsilon(solver.make_event(nm, plan), 1e-5)
    assert 0.99 < eps <= 1.0
    assert math.isinf(solver.noise_stds(nm, plan)[0])


@pytest.mark.parametrize("share", [0.1, 0.5, 0.9])
def test_eigenvalue_share_is_its_share_of_the_precision(share):
    """The composed event is one Gaussian of multiplier nm / sqrt(1 + ...)."""
    solver = AdaSSP(eigenvalue_share=share)
    plan = erm_plan(200, 3, 1, SQUARED, target_bound=1.0)
    ev, g1, g2 = solver.make_event(2.0, plan).events
    precision = [1 / e.noise_multiplier**2 for e in (ev, g1, g2)]
    assert precision[0] / sum(precision) == pytest.approx(share)


def test_event_is_three_composed_gaussians_and_calibrated():
    solver = AdaSSP(eigenvalue_share=1 / 3)  # the paper's equal split
    plan = erm_plan(200, 3, 1, SQUARED, target_bound=1.0)
    nm = solver.calibrate(1.0, 1e-5, plan, accountant="rdp")
    event = solver.make_event(nm, plan)
    assert event == ComposedDpEvent([GaussianDpEvent(nm)] * 3)
    eps = compute_epsilon(event, 1e-5)
    assert 0.99 < eps <= 1.0
    # three releases cost more than one at the same noise
    assert compute_epsilon(GaussianDpEvent(nm), 1e-5) < eps


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("K", [1, 2])
@pytest.mark.parametrize("sparse", [False, True])
def test_epsilon_inf_equals_sklearn_ridge(fit_intercept, K, sparse):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(80, 4))
    y = X @ rng.normal(size=(4, K)) + 0.3 * rng.normal(size=(80, K)) + 2.0
    y = y[:, 0] if K == 1 else y
    alpha = 0.01
    Xin = sp.csr_matrix(X) if sparse else X
    m = Ridge(epsilon=math.inf, solver="adassp", alpha=alpha, y_bound=(-50, 50),
              fit_intercept=fit_intercept).fit(Xin, y)  # fmt: skip
    ref = SkRidge(alpha=alpha * 80, fit_intercept=fit_intercept).fit(X, y)
    np.testing.assert_allclose(m.coef_, ref.coef_, atol=1e-9)
    np.testing.assert_allclose(m.intercept_, ref.intercept_, atol=1e-9)
    assert m.epsilon_ == math.inf and m.n_iter_ == 1


def test_private_fit_reports_and_learns():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(3000, 3)) / 3
    y = X @ np.array([3.0, -2.0, 1.0]) + 0.1 * rng.normal(size=3000)
    m = Ridge(epsilon=1.0, solver="adassp", y_bound=(-4, 4), random_state=0)
    m.fit(X, y)
    assert m.epsilon_ <= 1.0 and m.delta_ == 1e-5
    assert isinstance(m.dp_event_, ComposedDpEvent)
    assert m.score(X, y) > 0.8
    text = str(m.privacy_report())
    assert "AdaSSP" in text and "X^T Y" in text
    assert m.ridge_ >= 0 and m.lambda_min_ >= 0


def test_noise_has_the_stated_scale():
    """The released lambda_min has standard deviation noise_multiplier * B^2."""
    X = np.eye(3) * 0.5
    X = np.repeat(X, 40, axis=0)  # lambda_min(X^T X) = 10
    y = np.zeros(120)
    m = Ridge(epsilon=None, noise_multiplier=0.2, solver=AdaSSP(eigenvalue_share=1 / 3),
              y_bound=1.0, fit_intercept=False, clip_norm=1.0)  # fmt: skip
    shift = math.sqrt(2 * math.log(1 / 0.05)) * 0.2
    draws = [m.set_params(random_state=s).fit(X, y).lambda_min_ for s in range(400)]
    draws = np.asarray(draws) + shift
    assert abs(draws.mean() - 10.0) < 0.05
    assert abs(draws.std() - 0.2) < 0.03


def test_refuses_missing_target_bound_and_other_losses():
    X, y = np.ones((10, 2)), np.arange(10.0)
    with pytest.raises(ValueError, match="y_bound"):
        Ridge(solver="adassp", y_bound=None).fit(X, y)
    # a fixed noise multiplier (no calibration) too, and before any noise
    with pytest.raises(ValueError, match="y_bound"):
        Ridge(solver="adassp", y_bound=None, epsilon=None, noise_multiplier=1.0).fit(
            X, y
        )
    # without noise the bound is not needed: the exact ridge solution
    exact = Ridge(solver="adassp", y_bound=None, epsilon=np.inf).fit(X, y)
    assert exact.y_bound_ is None and np.isfinite(exact.coef_).all()
    with pytest.raises(ValueError, match="adassp"):
        LogisticRegression(solver="adassp", classes=[0, 1]).fit(X, y % 2)


def test_pure_dp_refused():
    X, y = np.ones((10, 2)), np.arange(10.0)
    with pytest.raises(ValueError, match="delta must be > 0"):
        Ridge(solver="adassp", delta=0.0, y_bound=(0, 10)).fit(X, y)


@pytest.mark.parametrize("share", [0.0, 0.1, 1 / 3, 0.9])
def test_probe_of_every_eigenvalue_share_holds_on_neighbours(share):
    """The composed release (eigenvalue scaled by its factor) by brute force."""
    from test_sensitivity import max_sensitivity_ratio

    rng = np.random.default_rng(int(share * 1000))
    ratio = max_sensitivity_ratio(AdaSSP(eigenvalue_share=share), SQUARED, rng, 40)
    assert 0.3 < ratio <= 1 + 1e-9


def test_scale_share_is_raised_for_small_n_one_shot_fits():
    """n = 331, epsilon 2: 5% is too little; AdaSSP gets a feasible share."""
    from dpestim.preprocessing import _fit_scales as fs

    need = fs.feasible_share(2.0, 331, rows=True, targets=1)
    assert 0.05 < need < 0.5
    plan = fs.plan_estimates(2.0, 331, share=0.05, rows=True, targets=1, max_share=0.5)
    assert plan.row_epsilon is not None and plan.target_epsilon is not None
    assert plan.epsilon == pytest.approx(need * 2.0, rel=1e-6)
    # without a solver cap a target range still raises it to TARGET_SHARE_CAP
    plan = fs.plan_estimates(2.0, 331, share=0.05, rows=True, targets=1)
    assert plan.epsilon == pytest.approx(need * 2.0, rel=1e-6)
    assert fs.TARGET_SHARE_CAP == 0.5
    # the rows alone are not raised without a cap: dropped
    plan = fs.plan_estimates(2.0, 331, share=0.05, rows=True, targets=0)
    assert plan.row_epsilon is None
    # beyond the cap: not raised either
    plan = fs.plan_estimates(0.5, 331, share=0.05, rows=True, targets=1, max_share=0.5)
    assert plan.epsilon <= 0.05 * 0.5 + 1e-12
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(331, 10)) * 0.05, rng.normal(size=331) * 50 + 150
    m = Ridge(solver="adassp", epsilon=2.0, random_state=0).fit(X, y)
    assert m.epsilon_ <= 2.0
    assert "private range" in m.hyperparameters_["y_bound"]
    assert "private median" in m.hyperparameters_["feature_scale"]


def test_auto_target_bound_is_in_the_scaled_units():
    """y_bound="auto" scales y to -+ TARGET_HALF_RANGE: that is the solver's bound."""
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(3000, 3)), rng.normal(size=3000) * 50 + 1000
    from dpestim.preprocessing._fit_scales import TARGET_HALF_RANGE

    m = Ridge(solver="adassp", epsilon=2.0, random_state=0).fit(X, y)
    assert f"target bound {TARGET_HALF_RANGE:g})" in str(m.privacy_report())


@pytest.mark.parametrize("factor", [0.7, 1.0])
def test_ridge_is_the_factor_times_the_papers_bound(factor):
    """No eigenvalue released: the ridge is public (n, d, noise, bounds)."""
    rng = np.random.default_rng(3)
    X, y = rng.normal(size=(300, 4)), rng.normal(size=300)
    m = Ridge(epsilon=1.0, solver=AdaSSP(ridge_factor=factor), y_bound=(-3, 3),
              clip_norm=2.0, random_state=0).fit(X, y)  # fmt: skip
    p, B2 = 5, 2.0**2 * 2
    expected = (
        factor * math.sqrt(p * math.log(2 * p * p / 0.05)) * m.noise_multiplier_ * B2
    )
    assert m.ridge_ == pytest.approx(expected, rel=1e-12)
    assert m.lambda_min_ == 0.0


def test_each_one_shot_solver_raises_the_share_up_to_its_own_cap():
    """Rows only, n = 300, epsilon 0.5: the median needs about 29% of it."""
    from dpestim.preprocessing import _fit_scales as fs

    need = fs.feasible_share(0.5, 300, rows=True, targets=0)
    assert 0.2 < need < 0.5
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 5)) * 0.01
    y, labels = X @ np.ones(5), (X[:, 0] > 0).astype(int)
    ridge = Ridge(solver="adassp", epsilon=0.5, y_bound=(-1, 1), random_state=0)
    assert "private median" in ridge.fit(X, y).hyperparameters_["feature_scale"]
    op = LogisticRegression(solver="objective-perturbation", epsilon=0.5,
                            classes=[0, 1], random_state=0)  # fmt: skip
    assert "not estimated" in op.fit(X, labels).hyperparameters_["feature_scale"]
    assert op.feature_scale_ == 1.0
