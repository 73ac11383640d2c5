"""solver="objective-perturbation": limits, event, Jacobian bound, refusals."""

import math
from dataclasses import replace

import numpy as np
import pytest
import scipy.sparse as sp
from _solver_plans import erm_plan
from dp_accounting import ComposedDpEvent, GaussianDpEvent, SelfComposedDpEvent
from sklearn.linear_model import LogisticRegression as SkLogistic

from dpestim import LogisticRegression, Ridge
from dpestim.losses import LOGISTIC
from dpestim.privacy.objective_perturbation import (
    ObjectivePerturbationDpEvent,
    amp_epsilon,
)
from dpestim.solvers import SOLVERS
from dpestim.solvers.oneshot import ObjectivePerturbation


def _data(n=300, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / math.sqrt(d)
    y = (X @ rng.normal(size=d) + 0.5 * rng.normal(size=n) > 0).astype(int)
    return X, y


def test_registered():
    assert SOLVERS["objective-perturbation"] is ObjectivePerturbation


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("sparse", [False, True])
def test_epsilon_inf_equals_sklearn(fit_intercept, sparse):
    X, y = _data()
    alpha = 1e-3
    Xin = sp.csr_matrix(X) if sparse else X
    m = LogisticRegression(epsilon=math.inf, solver="objective-perturbation",
                           alpha=alpha, fit_intercept=fit_intercept,
                           classes=[0, 1]).fit(Xin, y)  # fmt: skip
    ref = SkLogistic(C=1 / (alpha * len(y)), fit_intercept=fit_intercept,
                     tol=1e-12, max_iter=10_000).fit(X, y)  # fmt: skip
    np.testing.assert_allclose(m.coef_, ref.coef_, atol=1e-6)
    np.testing.assert_allclose(m.intercept_, ref.intercept_, atol=1e-6)


def test_private_fit_event_report_and_calibration():
    X, y = _data(2000)
    # feature_scale=None: the solver's own event (no private scale estimate)
    m = LogisticRegression(epsilon=1.0, solver="objective-perturbation",
                           classes=[0, 1], random_state=0, utility_check=None,
                           feature_scale=None).fit(X, y)  # fmt: skip
    assert 0.99 < m.epsilon_ <= 1.0
    op, out = m.dp_event_.events
    assert isinstance(m.dp_event_, ComposedDpEvent)
    assert isinstance(op, ObjectivePerturbationDpEvent)
    assert out == GaussianDpEvent(100.0 * op.noise_multiplier)
    assert op.jacobian_epsilon <= 0.1 * 1.0 + 1e-12  # jacobian_share
    assert amp_epsilon(m.dp_event_, 1e-5) == m.epsilon_
    assert m.hyperparameters_["alpha"] >= 1e-4
    assert m.score(X, y) > 0.75
    text = str(m.privacy_report())
    assert "objective perturbation" in text and "closed form" in text


def test_refusals():
    X, y = _data(60)
    with pytest.raises(ValueError, match="squared loss of Ridge"):
        Ridge(solver="objective-perturbation", y_bound=(0, 1)).fit(X, y)
    with pytest.raises(ValueError, match="delta"):
        LogisticRegression(solver="objective-perturbation", delta=0.0,
                           classes=[0, 1]).fit(X, y)  # fmt: skip


def test_multiclass_is_one_vs_rest_composed():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(1500, 3))
    y = np.argmax(X @ rng.normal(size=(3, 3)), axis=1)
    m = LogisticRegression(epsilon=2.0, solver="objective-perturbation",
                           classes=[0, 1, 2], random_state=0, utility_check=None,
                           feature_scale=None).fit(X, y)  # fmt: skip
    assert isinstance(m.dp_event_, SelfComposedDpEvent) and m.dp_event_.count == 3
    assert 1.98 < m.epsilon_ <= 2.0 and m.coef_.shape == (3, 3)
    assert m.score(X, y) > 0.6
    inf = LogisticRegression(epsilon=math.inf, solver="objective-perturbation",
                             classes=[0, 1, 2]).fit(X, y)  # fmt: skip
    for k in range(3):  # each row is the binary fit of class k against the rest
        # alpha="auto" is 1e-4 on the rows x / s (s read exactly at eps=inf)
        ref = SkLogistic(C=1 / (inf.alpha_ * 1500), tol=1e-12, max_iter=10_000)
        ref.fit(X, (y == k).astype(int))
        np.testing.assert_allclose(inf.coef_[k], ref.coef_[0], atol=1e-5)


@pytest.mark.parametrize("k", [0.1, 1.0, 10.0])
def test_alpha_attribute_is_the_raised_ridge_in_x_units(k):
    # the fitted objective's penalty (alpha_, X's units) is the ridge the
    # privacy proof raised, not the requested one (was: the requested one)
    X, y = _data(300)
    m = LogisticRegression(epsilon=1.0, solver="objective-perturbation",
                           classes=[0, 1], random_state=0).fit(X * k, y)  # fmt: skip
    s = m.feature_scale_
    assert m.hyperparameters_["alpha"] > 2e-4  # raised above alpha="auto"
    assert m.alpha_ == pytest.approx(m.hyperparameters_["alpha"] * s**2, rel=1e-12)
    # the same fit with that ridge and that scale given publicly: same model
    given = LogisticRegression(epsilon=1.0, solver="objective-perturbation",
                               classes=[0, 1], random_state=0, alpha=m.alpha_,
                               feature_scale=s).fit(X * k, y)  # fmt: skip
    assert given.alpha_ == pytest.approx(m.alpha_, rel=1e-12)
    # non-private: nothing raised, the requested ridge
    inf = LogisticRegression(epsilon=math.inf, solver="objective-perturbation",
                             classes=[0, 1]).fit(X * k, y)  # fmt: skip
    assert inf.alpha_ == pytest.approx(1e-4 * inf.feature_scale_**2, rel=1e-12)


def test_explicit_alpha_is_a_floor_and_too_small_budget_is_refused():
    X, y = _data(100)
    solver = ObjectivePerturbation(alpha=0.5)
    m = LogisticRegression(epsilon=1.0, classes=[0, 1], random_state=0, solver=solver)
    m.fit(X, y)
    assert m.hyperparameters_["alpha"] == 0.5
    solver = ObjectivePerturbation(jacobian_share=0.5)
    plan = erm_plan(100, 4, 1, LOGISTIC, alpha=1e-6, clip_norm=1.0)
    with pytest.raises(ValueError, match="Jacobian"):
        solver.calibrate(0.01, 1e-5, plan, accountant="rdp")


def test_one_vs_rest_jacobian_terms_are_refused_together():
    """K one-vs-rest mechanisms each pay the Jacobian term: a ridge whose K
    terms exceed epsilon is refused up front with that reason (it used to end
    in a failed noise search, "epsilon ... is too small for this run"), one
    whose single term fits is still calibrated for K = 1."""
    solver = ObjectivePerturbation()
    one = erm_plan(100, 4, 1, LOGISTIC, alpha=1.0, clip_norm=1.0)
    eps_j = solver.jacobian_epsilon(one)
    epsilon = 3.0 * eps_j  # affords one Jacobian term, not ten
    assert solver.calibrate(epsilon, 1e-5, one, accountant="rdp") > 0
    ten = replace(one, n_outputs=10)
    assert solver.jacobian_epsilon(ten) == pytest.approx(eps_j)
    with pytest.raises(ValueError, match="for the 10 classes"):
        solver.calibrate(epsilon, 1e-5, ten, accountant="rdp")


def test_budget_composes_objective_perturbation_fits():
    """A PrivacyBudget charges the event (through its valid zCDP translation)."""
    from dpestim.exceptions import BudgetExceededError
    from dpestim.model_selection import PrivacyBudget

    X, y = _data(500)
    with PrivacyBudget(epsilon=1.5, delta=1e-5) as budget:
        LogisticRegression(epsilon=1.0, solver="objective-perturbation",
                           classes=[0, 1], random_state=0).fit(X, y)  # fmt: skip
        assert 0.99 <= budget.spent()[0] <= 1.0 + 1e-9, budget.spent()
        with pytest.raises(BudgetExceededError):
            LogisticRegression(epsilon=1.0, solver="objective-perturbation",
                               classes=[0, 1], random_state=1).fit(X, y)  # fmt: skip
