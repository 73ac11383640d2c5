"""PrivacyBudget: composition by dp-accounting, refusal before the fit, workers."""

import threading

import dp_accounting
import numpy as np
import pytest
from dp_accounting import ComposedDpEvent
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline

from dpestim import LogisticRegression, MinimaxLogisticRegression
from dpestim.exceptions import BudgetExceededError
from dpestim.model_selection import PrivacyBudget
from dpestim.preprocessing import StandardScaler
from dpestim.privacy import compute_epsilon
from dpestim.privacy.charging import pop_target, push_target
from dpestim.privacy.ledger import accountable_event


@pytest.fixture
def data():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(600, 4)) / 2
    y = (X[:, 0] - X[:, 1] > 0).astype(int)
    return X, y


def _lr(eps, **kw):
    # class_prior=None, feature_scale=None, utility_check=None: one charge per
    # fit, the solver's (the class histogram, the row scale and the utility
    # check are charged on their own, see tests/linear_model/test_class_balance.py,
    # test_private_scales.py and test_utility_check.py)
    kw = {"class_prior": None, "feature_scale": None, "utility_check": None, **kw}
    return LogisticRegression(
        epsilon=eps, classes=[0, 1], max_iter=2, batch_size=100, random_state=0, **kw
    )


def test_spent_is_dp_accounting_composition(data):
    X, y = data
    budget = PrivacyBudget(5.0, 1e-5)
    with budget:
        a = _lr(0.5).fit(X, y)
        b = _lr(1.0, alpha=1e-3).fit(X, y)
    expected = compute_epsilon(
        dp_accounting.ComposedDpEvent([a.dp_event_, b.dp_event_]), 1e-5
    )
    eps, delta = budget.spent()
    assert eps == expected and delta == 1e-5
    assert max(a.epsilon_, b.epsilon_) < eps < a.epsilon_ + b.epsilon_
    assert [r[0] for r in budget.records] == [a.dp_event_, b.dp_event_]
    assert "2 fit(s)" in budget.report()
    with budget, budget:  # nested entries of one budget charge it once
        _lr(0.1).fit(X, y)
    assert len(budget.records) == 3


def test_refuses_fit_before_it_runs(data):
    X, y = data
    budget = PrivacyBudget(1.0, 1e-5)
    with budget:
        _lr(0.8).fit(X, y)
        est = _lr(0.8)
        with pytest.raises(BudgetExceededError, match="refused before it ran"):
            est.fit(X, y)
    assert not hasattr(est, "coef_")  # the solver never ran
    assert len(budget.records) == 1
    # outside the block nothing is charged
    _lr(0.8).fit(X, y)
    assert len(budget.records) == 1


def test_pipeline_and_grid_search_are_charged(data):
    X, y = data
    budget = PrivacyBudget(50.0, 1e-5)
    pipe = make_pipeline(StandardScaler(bounds=(-3, 3), epsilon=0.1), _lr(0.5))
    with budget:
        GridSearchCV(pipe, {"logisticregression__alpha": [1e-4, 1e-3]}, cv=2).fit(X, y)
    # 2 candidates x 2 folds + refit, each a scaler and a model
    assert len(budget.records) == 10
    events = [accountable_event(r[0]) for r in budget.records]
    assert budget.spent()[0] == compute_epsilon(
        dp_accounting.ComposedDpEvent(events), 1e-5
    )


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.FitFailedWarning")
def test_worker_processes_are_charged(data):
    X, y = data
    budget = PrivacyBudget(0.8, 1e-5)
    with budget:
        scores = cross_val_score(_lr(0.5), X, y, cv=3, n_jobs=2)
    # two folds fit in the workers; the third is refused there, before it runs
    assert len(budget.records) == 2
    assert np.isnan(scores).sum() == 1


@pytest.mark.filterwarnings("ignore::dpestim.PrivacyLeakWarning")
def test_minimax_fits_are_charged(data):
    X, y = data
    rng = np.random.default_rng(3)
    X, y = np.vstack([X] * 4), np.concatenate([y] * 4)
    a = rng.integers(0, 2, size=y.shape[0])
    # the row unit's estimate alone (the column balance's draws: its own tests)
    common = dict(
        epsilon=1.0,
        groups=[0, 1],
        random_state=0,
        feature_balance=None,
        utility_check=None,  # the check: tests/minimax/test_minimax_check.py
    )
    with PrivacyBudget(5.0, 1e-5) as budget:  # noisy SGDA: add/remove, one event
        est = MinimaxLogisticRegression(**common).fit(X, y, sensitive_features=a)
    # the private row scale first (charged before it reads the data), then
    # the solver's event; dp_event_ composes both
    estimates, solver_event = est.dp_event_.events
    assert [r[0] for r in budget.records] == [
        ComposedDpEvent([estimates]),
        solver_event,
    ]
    spent = budget.spent()[0]
    assert compute_epsilon(solver_event, 1e-5) < spent <= est.epsilon_ + 1e-9
    with PrivacyBudget(5.0, 1e-5) as budget:  # without the estimate: one event
        est = MinimaxLogisticRegression(feature_scale=None, **common).fit(
            X, y, sensitive_features=a
        )
    assert budget.records[0][0] == est.dp_event_
    assert budget.spent()[0] == compute_epsilon(est.dp_event_, 1e-5)
    with PrivacyBudget(5.0, 1e-5) as budget:  # vertex sampling: pure-DP draws
        MinimaxLogisticRegression(solver="dp-smd", **common).fit(
            X, y, sensitive_features=a
        )
    eps = budget.spent()[0]
    assert np.isfinite(eps) and eps > 0
    assert budget.records[0][1] == "replace_one"


def test_mixed_relations_refused(data):
    X, y = data
    with PrivacyBudget(5.0, 1e-5) as budget:
        _lr(0.5).fit(X, y)
        with pytest.raises(ValueError, match="neighbouring"):
            _lr(0.5, solver="dp-gd").fit(X, y)  # replace-one accounting
    assert len(budget.records) == 1


def test_bad_budget_parameters():
    with pytest.raises(ValueError, match="epsilon"):
        PrivacyBudget(0)
    with pytest.raises(ValueError, match="delta"):
        PrivacyBudget(1, 1.5)
    with pytest.raises(ValueError, match="accountant"):
        PrivacyBudget(1, accountant="basic")


def test_thread_local_target_sees_only_its_thread(data):
    X, y = data

    class Recorder:
        def __init__(self):
            self.labels = []

        def charge(self, charge):
            self.labels.append(charge.label)
            return False

    rec = Recorder()
    push_target(rec, thread_local=True)
    try:
        other = threading.Thread(target=lambda: _lr(0.5).fit(X, y))
        other.start()
        other.join()
        assert rec.labels == []
        _lr(0.5).fit(X, y)
        assert len(rec.labels) == 1
    finally:
        pop_target(rec)
