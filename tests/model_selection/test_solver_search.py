"""PrivateSearchCV over ``solver``: the max-curve mixture, its checks."""

import numpy as np
import pytest
from dp_accounting import dp_event
from sklearn.pipeline import make_pipeline

from dpestim import LogisticRegression, Ridge
from dpestim.model_selection import PrivacyBudget, PrivateSearchCV
from dpestim.preprocessing import StandardScaler
from dpestim.preprocessing._scale_plan import _pure_epsilon
from dpestim.privacy import compute_epsilon
from dpestim.privacy.ledger import composed_epsilon
from dpestim.privacy.mixture import MaxRdpDpEvent
from dpestim.solvers.saddle import ExponentialMechanismDpEvent

SOLVERS = ["dp-sgd", "dp-scd"]


@pytest.fixture
def data():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(3000, 4)) / 2
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    return X, y


def _lr(**kw):
    # no class prior: the search's estimates (row scale alone) are then the
    # same for each listed solver (dp-scd has no initial point to start from)
    return LogisticRegression(classes=[0, 1], max_iter=2, class_prior=None, **kw)


def _search(est=None, space=None, **kw):
    kw = {"epsilon": 1.0, "n_candidates": 3, "random_state": 0} | kw
    return PrivateSearchCV(est or _lr(), space or {"solver": SOLVERS}, **kw)


def test_end_to_end_search_over_two_solvers(data):
    X, y = data
    space = {"solver": SOLVERS, "learning_rate": [0.25, 0.5, 1.0]}
    search = _search(space=space, n_candidates=4).fit(X, y)
    # one set of private scales (the row scale last), then the selection
    scale, ev = search.dp_event_.events
    assert ExponentialMechanismDpEvent(0.05) in scale.events  # the row scale
    assert isinstance(ev, dp_event.RepeatAndSelectDpEvent)
    assert isinstance(ev.event, MaxRdpDpEvent) and len(ev.event.events) == 2
    assert search.accountant_ == "rdp"
    e0 = sum(map(_pure_epsilon, scale.events))
    # basic composition (the selection calibrated for the rest: 1 in all)
    # or, smaller, dp-accounting's bound of the whole event
    basic = e0 + compute_epsilon(ev, 1e-5, "rdp")
    assert 0.99 < basic <= 1.0
    whole = composed_epsilon([search.dp_event_], 1e-5)
    assert search.epsilon_ == pytest.approx(min(basic, whole))
    solver = search.best_params_["solver"]
    assert solver in SOLVERS
    assert search.best_estimator_.solver_.name == solver
    assert set(search.noise_multipliers_) == set(SOLVERS)
    assert search.noise_multiplier_ == search.noise_multipliers_[solver]
    assert search.best_estimator_.noise_multiplier_ == search.noise_multiplier_
    # each solver pays for the mixture: at least its noise in a search alone
    for name in SOLVERS:
        alone = _search(_lr(solver=name), {"learning_rate": [0.5]}, accountant="rdp")
        alone.fit(X, y)
        assert search.noise_multipliers_[name] >= alone.noise_multiplier_
        assert search.noise_multipliers_[name] < 1.3 * alone.noise_multiplier_
        assert alone.epsilon_ <= 1.0 and search.epsilon_ <= 1.0
    assert search.score(X, y) > 0.8
    assert "pointwise max" in search.privacy_report()


def test_one_solver_list_is_the_fixed_solver_search(data):
    X, y = data
    listed = _search(space={"solver": ["dp-sgd"], "learning_rate": [0.5]}).fit(X, y)
    fixed = _search(_lr(solver="dp-sgd"), {"learning_rate": [0.5]}, accountant="rdp")
    fixed.fit(X, y)
    assert listed.dp_event_ == fixed.dp_event_
    assert listed.noise_multiplier_ == fixed.noise_multiplier_
    assert listed.epsilon_ == fixed.epsilon_


@pytest.mark.parametrize("epsilon", [0.5, pytest.param(2.0, marks=pytest.mark.slow)])
def test_refit_and_budget_composition(data, epsilon):
    X, y = data
    budget = PrivacyBudget(2 * epsilon, 1e-5)
    search = _search(epsilon=epsilon, refit=True, budget=budget).fit(X, y)
    assert search.epsilon_ <= epsilon
    assert isinstance(search.dp_event_.events[-1], MaxRdpDpEvent)  # the refit
    assert search.best_estimator_.noise_multiplier_ == search.noise_multiplier_
    assert 0 < budget.spent()[0] <= epsilon + 1e-9
    # the rest of the budget (epsilon=None): its RDP composition meets it
    rest = _search(epsilon=None, budget=budget, random_state=1).fit(X, y)
    assert budget.spent()[0] <= 2 * epsilon
    assert rest.noise_multipliers_.keys() == set(SOLVERS)


@pytest.mark.parametrize(
    "space, kw, match",
    [
        ({"solver": ["dp-sgd", "dp-gd"]}, {}, "neighbouring relations"),
        ({"solver": ["dp-sgd", "nope"]}, {}, "not a registered"),
        ({"solver": ["dp-sgd", "auto"]}, {}, "not a registered"),
        ({"solver": "dp-sgd"}, {}, "list of solver names"),
        ({"solver": []}, {}, "list of solver names"),
        ({"solver": ["dp-sgd", "adassp"]}, {}, "does not support"),
        ({"solver": SOLVERS}, {"accountant": "profile"}, "mixture"),
        ({"solver": SOLVERS}, {"accountant": "pld"}, "mixture"),
        (
            {"solver": SOLVERS},
            {"budget": PrivacyBudget(2.0, 1e-5, accountant="pld")},
            "'rdp'",
        ),
    ],
)
def test_refusals_before_the_data_is_read(space, kw, match):
    X = np.full((10, 2), np.nan)  # never read: the checks come first
    with pytest.raises(ValueError, match=match):
        _search(space=space, **kw).fit(X, np.zeros(10))


def test_solver_of_another_step_refused_and_pipeline_final_step_accepted(data):
    X, y = data
    pipe = make_pipeline(StandardScaler(bounds=(-3, 3), epsilon=0.1), _lr())
    with pytest.raises(ValueError, match="standardscaler__solver"):
        _search(pipe, {"standardscaler__solver": SOLVERS}).fit(X, y)
    search = _search(pipe, {"logisticregression__solver": SOLVERS}).fit(X, y)
    assert search.epsilon_ <= 1.0
    assert search.best_params_["logisticregression__solver"] in SOLVERS


def test_regressor_solver_list(data):
    X, _ = data
    y = X @ np.array([0.3, -0.2, 0.1, 0.0])
    search = _search(
        Ridge(max_iter=2, y_bound=1.0), {"solver": SOLVERS}, error_bound=1.0
    ).fit(X, y)
    assert search.epsilon_ <= 1.0


def test_mixture_bound_never_below_any_listed_solver(data):
    X, y = data
    search = _search(
        epsilon=0.3, distribution="logarithmic", n_candidates=5, random_state=4
    ).fit(X, y)
    assert search.epsilon_ <= 0.3
    ev = search.dp_event_.events[1]  # after the row scale's estimate
    alone = [
        compute_epsilon(dp_event.RepeatAndSelectDpEvent(e, ev.mean, ev.shape), 1e-5)
        for e in ev.event.events
    ]
    # each solver's candidates alone, at their noise, are within the bound
    assert all(a <= search.epsilon_ for a in alone)
    assert max(alone) > 0.9 * search.epsilon_  # and the target was not wasted


def test_research_solvers_allowed_when_named():
    from dpestim.model_selection._solver_search import searched_solvers
    from dpestim.solvers._auto import RESEARCH_ONLY

    assert "seq-dp-scd" in RESEARCH_ONLY
    space = {"solver": ["dp-sgd", "seq-dp-scd", "dp-sgd"]}
    assert searched_solvers(_search(space=space), space) == ("dp-sgd", "seq-dp-scd")
    assert searched_solvers(_search(space={"alpha": [1.0]}), {"alpha": [1.0]}) is None


def test_other_parameters_probed_with_every_listed_solver(data):
    # adp-sgd's noise scales with the learning rate; dp-sgd's does not
    X, y = data
    space = {"solver": ["dp-sgd", "adp-sgd"], "learning_rate": [0.1, 1.0]}
    with pytest.raises(ValueError, match="learning_rate.*adp-sgd"):
        _search(space=space).fit(X, y)
