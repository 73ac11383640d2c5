"""solver="objective-perturbation" for LinearSVC: smooth surrogates of the hinge.

The hinge is fitted as the Huber hinge (Chaudhuri, Monteleoni and Sarwate
2011), the squared hinge as the modified Huber loss; both have a bounded
first derivative ``L`` and second derivative ``beta``, the two constants of
the closed form. The brute-force sensitivity test of the summed gradient is
``tests/solvers/test_sensitivity.py`` (it runs every supported loss).
"""

import math

import numpy as np
import pytest
import scipy.sparse as sp
from _solver_plans import erm_plan
from dp_accounting import ComposedDpEvent, SelfComposedDpEvent
from scipy.optimize import minimize

from dpestim import LinearSVC
from dpestim.losses import HINGE, LOGISTIC, SQUARED_HINGE
from dpestim.privacy.objective_perturbation import (
    ObjectivePerturbationDpEvent,
    amp_epsilon,
)
from dpestim.solvers.oneshot import ObjectivePerturbation
from dpestim.solvers.oneshot._margin_losses import (
    HuberHinge,
    Logistic,
    ModifiedHuber,
    gradient,
    newton,
)

LOSSES = [
    Logistic(),
    HuberHinge(0.5),
    HuberHinge(0.05),
    HuberHinge(3.0),
    ModifiedHuber(),
]


def _data(n=300, d=4, seed=0, classes=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / math.sqrt(d)
    scores = X @ rng.normal(size=(d, classes)) + 0.5 * rng.normal(size=(n, classes))
    y = (scores[:, 0] > 0).astype(int) if classes == 2 else np.argmax(scores, axis=1)
    return X, y


@pytest.mark.parametrize("loss", LOSSES, ids=repr)
def test_margin_loss_constants_and_derivatives(loss):
    """|f'| <= L, 0 <= f'' <= beta everywhere; f', f'' are the derivatives."""
    m = np.concatenate([np.linspace(-30, 30, 20001), [-1.0, 1.0, 1 - 1e-12]])
    if isinstance(loss, HuberHinge):
        m = np.concatenate([m, [1 - loss.h, 1 + loss.h]])
    d1, d2 = loss.d1(m), loss.d2(m)
    assert np.all(d1 <= 0) and np.all(-d1 <= loss.lipschitz + 1e-15)
    assert np.all(d2 >= 0) and np.all(d2 <= loss.smoothness + 1e-15)
    assert np.max(-d1) > 0.999 * loss.lipschitz  # the constants are attained
    assert np.max(d2) > 0.999 * loss.smoothness
    e = 1e-6
    x = np.linspace(-20, 20, 4001) + 1.234e-4  # off the kinks
    num1 = (loss.value(x + e) - loss.value(x - e)) / (2 * e)
    np.testing.assert_allclose(loss.d1(x), num1, atol=1e-6)
    num2 = (loss.d1(x + e) - loss.d1(x - e)) / (2 * e)
    near_kink = np.zeros_like(x, dtype=bool)
    for k in (-1.0, 1.0, 1 - getattr(loss, "h", 0), 1 + getattr(loss, "h", 0)):
        near_kink |= np.abs(x - k) < 2 * e
    np.testing.assert_allclose(loss.d2(x)[~near_kink], num2[~near_kink], atol=1e-4)
    # f' continuous (the theorem needs C^1): no jump across the kinks
    for k in (-1.0, 1.0, 1 - getattr(loss, "h", 0.0), 1 + getattr(loss, "h", 0.0)):
        assert abs(loss.d1(np.array(k + 1e-9)) - loss.d1(np.array(k - 1e-9))) < 1e-6


def test_huber_hinge_tends_to_the_hinge():
    m = np.linspace(-5, 5, 1001)
    hinge = np.maximum(0.0, 1.0 - m)
    for h in (1.0, 0.1, 0.01):
        gap = np.max(np.abs(HuberHinge(h).value(m) - hinge))
        assert gap <= h / 4 + 1e-12


@pytest.mark.parametrize("loss", LOSSES, ids=repr)
def test_newton_certifies_the_gradient_norm(loss):
    rng = np.random.default_rng(7)
    for _ in range(15):
        n, p = int(rng.integers(5, 200)), int(rng.integers(1, 8))
        Xa = rng.normal(size=(n, p)) * rng.choice([0.1, 1.0, 5.0])
        y = rng.choice([-1.0, 1.0], size=n)
        pen = np.full(p, float(rng.choice([1e-3, 0.1, 3.0])))
        c = rng.normal(size=p) * rng.choice([1e-3, 1.0])
        theta, _ = newton(Xa, y, pen, c, 1e-9, loss)
        assert np.linalg.norm(gradient(Xa, y, pen, c, theta, loss)) <= 1e-9


def _scipy_fit(X, y, loss, alpha, fit_intercept):
    """The same penalised mean surrogate minimised by scipy (L-BFGS)."""
    Xa = np.hstack([X, np.ones((X.shape[0], 1))]) if fit_intercept else X
    pen = np.full(Xa.shape[1], alpha)
    if fit_intercept:
        pen[-1] = 0.0
    zero = np.zeros(Xa.shape[1])

    def fun(theta):
        m = y * (Xa @ theta)
        f = loss.value(m).mean() + 0.5 * (pen * theta**2).sum()
        return f, gradient(Xa, y, pen, zero, theta, loss)

    res = minimize(fun, zero, jac=True, method="L-BFGS-B",
                   options=dict(gtol=1e-12, ftol=1e-15, maxiter=20000))  # fmt: skip
    return res.x


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("name", ["hinge", "squared_hinge"])
def test_epsilon_inf_equals_scipy(name, sparse, fit_intercept):
    """epsilon = inf: the exact minimiser of the surrogate (scipy reference)."""
    X, y = _data()
    alpha = 1e-2
    Xin = sp.csr_matrix(X) if sparse else X
    m = LinearSVC(epsilon=math.inf, solver="objective-perturbation", loss=name,
                  alpha=alpha, fit_intercept=fit_intercept,
                  classes=[0, 1]).fit(Xin, y)  # fmt: skip
    loss = HuberHinge(0.5) if name == "hinge" else ModifiedHuber()
    ref = _scipy_fit(X, np.where(y == 1, 1.0, -1.0), loss, alpha, fit_intercept)
    np.testing.assert_allclose(m.coef_[0], ref[: X.shape[1]], atol=1e-5)
    if fit_intercept:
        np.testing.assert_allclose(m.intercept_[0], ref[-1], atol=1e-5)
    assert m.score(X, y) > 0.8


def test_epsilon_inf_multiclass_is_one_vs_rest():
    X, y = _data(400, classes=3)
    m = LinearSVC(epsilon=math.inf, solver="objective-perturbation", loss="hinge",
                  alpha=1e-2, classes=[0, 1, 2]).fit(X, y)  # fmt: skip
    for k in range(3):
        ref = _scipy_fit(X, np.where(y == k, 1.0, -1.0), HuberHinge(0.5), 1e-2, True)
        np.testing.assert_allclose(m.coef_[k], ref[:-1], atol=1e-5)
        np.testing.assert_allclose(m.intercept_[k], ref[-1], atol=1e-5)


@pytest.mark.parametrize("loss_code", [LOGISTIC, HINGE, SQUARED_HINGE])
@pytest.mark.parametrize("seed", range(2))
def test_jacobian_ratio_within_the_bound(loss_code, seed):
    """Brute force: det(A + f'' x x^T) / det(A) <= 1 + beta zeta^2 / Lambda."""
    rng = np.random.default_rng(seed)
    solver = ObjectivePerturbation(hinge_smoothing=float(rng.choice([0.1, 0.5, 2.0])))
    worst = 0.0
    for _ in range(60):
        n, d = int(rng.integers(1, 20)), int(rng.integers(1, 5))
        clip = float(rng.choice([0.3, 1.0, 4.0]))
        plan = erm_plan(n + 1, d, 1, loss_code, clip_norm=clip, alpha=0.01,
                        fit_intercept=bool(rng.integers(2)))  # fmt: skip
        loss = solver.margin_loss(plan)
        X = rng.normal(size=(n + 1, d)) * rng.choice([0.1, 1.0, 100.0])
        Xa = solver._rows(X, plan)
        y = rng.choice([-1.0, 1.0], size=n + 1)
        theta = rng.normal(size=Xa.shape[1]) * rng.choice([0.0, 0.1, 3.0])
        lam = (n + 1) * plan.alpha
        w = loss.d2(y * (Xa @ theta))
        A = (Xa[:-1] * w[:-1, None]).T @ Xa[:-1] + lam * np.eye(Xa.shape[1])
        B = A + w[-1] * np.outer(Xa[-1], Xa[-1])
        ratio = np.linalg.slogdet(B)[1] - np.linalg.slogdet(A)[1]
        bound = math.log1p(solver.curvature(plan) / lam)
        assert ratio <= bound + 1e-12
        worst = max(worst, ratio / bound)
    assert worst > 0.5  # reached: theta = 0 (in the quadratic zone), clipped row


@pytest.mark.parametrize("name,lip,beta", [("hinge", 1.0, 1.0),
                                           ("squared_hinge", 4.0, 2.0)])  # fmt: skip
def test_private_fit_event_and_minimum_ridge(name, lip, beta):
    X, y = _data(2000)
    m = LinearSVC(epsilon=1.0, solver="objective-perturbation", loss=name,
                  classes=[0, 1], random_state=0, utility_check=None,
                  feature_scale=None).fit(X, y)  # fmt: skip
    assert 0.99 < m.epsilon_ <= 1.0
    assert isinstance(m.dp_event_, ComposedDpEvent)
    op, out = m.dp_event_.events
    assert isinstance(op, ObjectivePerturbationDpEvent)
    assert amp_epsilon(m.dp_event_, 1e-5) == m.epsilon_
    alpha = m.hyperparameters_["alpha"]
    zeta2 = 1.0 + 1.0  # clip_norm 1 (no private scale) and the intercept
    # the Jacobian floor with this loss's beta: eps_J <= jacobian_share eps
    assert alpha >= beta * zeta2 / (2000 * math.expm1(0.1)) * (1 - 1e-12)
    assert op.jacobian_epsilon == pytest.approx(
        math.log1p(beta * zeta2 / (2000 * alpha))
    )
    assert op.jacobian_epsilon <= 0.1 + 1e-12
    expected = "huber_hinge(h=0.5)" if name == "hinge" else "modified_huber"
    assert m.hyperparameters_["fitted_loss"] == expected
    assert expected in str(m.privacy_report())
    assert m.score(X, y) > 0.75
    # noise scale: s L zeta per coordinate
    solver = ObjectivePerturbation()
    plan = erm_plan(2000, 4, 1, HINGE if name == "hinge" else SQUARED_HINGE,
                    clip_norm=1.0, alpha=alpha)  # fmt: skip
    assert solver.lipschitz(plan) == pytest.approx(lip * math.sqrt(2))


def test_multiclass_private_is_composed():
    X, y = _data(1500, classes=3)
    m = LinearSVC(epsilon=2.0, solver="objective-perturbation", loss="hinge",
                  classes=[0, 1, 2], random_state=0, utility_check=None,
                  feature_scale=None).fit(X, y)  # fmt: skip
    assert isinstance(m.dp_event_, SelfComposedDpEvent) and m.dp_event_.count == 3
    assert 1.98 < m.epsilon_ <= 2.0
    assert m.score(X, y) > 0.5


def test_refusals_outside_the_theorem():
    X, y = _data(100)
    with pytest.raises(ValueError, match="hinge_smoothing"):
        LinearSVC(solver=ObjectivePerturbation(hinge_smoothing=0.0), loss="hinge",
                  classes=[0, 1]).fit(X, y)  # fmt: skip
    with pytest.raises(ValueError, match="delta"):
        LinearSVC(solver="objective-perturbation", loss="hinge", delta=0.0,
                  classes=[0, 1]).fit(X, y)  # fmt: skip
    # a ridge too small for the budget: the Jacobian alone would exceed epsilon
    solver = ObjectivePerturbation(jacobian_share=0.5, hinge_smoothing=0.1)
    plan = erm_plan(100, 4, 1, HINGE, alpha=1e-6, clip_norm=1.0)
    with pytest.raises(ValueError, match="Jacobian"):
        solver.calibrate(0.01, 1e-5, plan, accountant="rdp")
    with pytest.raises(ValueError, match="smoothing"):
        HuberHinge(-1.0)


def test_audit_setting_fits_linear_svc():
    """The audit row of the surrogates (benchmarks/privacy/audit_solvers.py)."""
    from dpestim.audit._solver_audit import _linear_setting

    args = ("objective-perturbation", 1.0, 1e-2, 2, 510, 0.01, 1.0, "pld")
    est, *_ = _linear_setting(*args, "hinge")
    assert isinstance(est, LinearSVC) and est.loss == "hinge"
    est, *_ = _linear_setting(*args)
    assert not isinstance(est, LinearSVC)
    with pytest.raises(ValueError, match="loss"):
        _linear_setting(*args, "squared")
