"""The utility check of the minimax and fair classifiers: one Laplace count
of the training accuracy's lift over the majority rate, after the fit,
reserved and charged with the scale estimates, inside epsilon."""

import zlib

import dp_accounting
import numpy as np
import pytest

from dpestim import FairLogisticRegression, MinimaxLogisticRegression
from dpestim.exceptions import UtilityWarning
from dpestim.linear_model._utility_check import lift_statistic
from dpestim.model_selection import PrivacyBudget

CLASSIFIERS = [MinimaxLogisticRegression, FairLogisticRegression]


def _seed(name):
    return zlib.crc32(name.encode())


def _data(n, signal, name):
    rng = np.random.default_rng(_seed(name))
    X = rng.normal(size=(n, 4))
    a = np.where(rng.random(n) < 0.4, "a", "b")
    score = signal * (X[:, 0] + 0.5 * X[:, 1]) + rng.normal(size=n)
    return X, (score > 0.3).astype(int), a


def _fit(Est, X, y, a, **kw):
    kw = {"classes": [0, 1], "groups": ["a", "b"], "random_state": 0} | kw
    if Est is FairLogisticRegression:
        # a small slack: at the default bound 0 a noisy run on groups that
        # barely differ can collapse to one class (the check's own case,
        # test_fair_collapse_at_bound_zero_is_caught)
        kw.setdefault("difference_bound", 0.05)
    return Est(**kw).fit(X, y, sensitive_features=a)


@pytest.mark.parametrize("Est", CLASSIFIERS)
def test_check_in_the_event_and_within_epsilon(Est):
    X, y, a = _data(4000, 3.0, "event")
    model = _fit(Est, X, y, a)
    laplace = [
        e for e in model.dp_event_.events if isinstance(e, dp_accounting.LaplaceDpEvent)
    ]
    assert laplace, "the check's Laplace count is part of dp_event_"
    # 200 / (n epsilon) of epsilon add/remove (400 replace-one), at most 5%
    relation = model.solver_.neighbouring
    wanted = (1.0 if relation == "add_or_remove_one" else 2.0) / (0.005 * 4000)
    assert 1.0 / laplace[-1].noise_multiplier == pytest.approx(min(wanted, 0.05))
    assert model.epsilon_ <= 1.0 + 1e-9
    assert "utility check" in str(model.privacy_report())
    assert model.lift_ > 0.1  # a good fit: far above the majority rate


@pytest.mark.parametrize("Est", CLASSIFIERS)
def test_check_warns_on_a_fit_no_better_than_the_majority(Est):
    """Labels independent of the features: the model can only be constant
    (or worse); the check says so, and the fit learns nothing either way."""
    X, y, a = _data(4000, 0.0, "noise")
    with pytest.warns(UtilityWarning, match="not clearly better than predicting one"):
        model = _fit(Est, X, y, a)
    assert model.lift_ < 0.02
    assert any("not clearly better" in w for w in model.privacy_report().warnings)


@pytest.mark.parametrize("Est", CLASSIFIERS)
def test_good_fit_does_not_warn(Est, recwarn):
    X, y, a = _data(4000, 3.0, "good")
    _fit(Est, X, y, a)
    assert not [w for w in recwarn if issubclass(w.category, UtilityWarning)]


@pytest.mark.parametrize("Est", CLASSIFIERS)
def test_check_off_is_the_former_fit_and_nonprivate_fits_have_none(Est):
    X, y, a = _data(3000, 3.0, "off")
    off = _fit(Est, X, y, a, utility_check=None)
    assert off.lift_ is None
    assert not any(
        isinstance(e, dp_accounting.LaplaceDpEvent)
        and e.noise_multiplier == pytest.approx(1 / 0.05)
        for e in off.dp_event_.events
    )
    on = _fit(Est, X, y, a)
    assert on.epsilon_ <= 1.0 + 1e-9 and off.epsilon_ <= 1.0 + 1e-9
    inf = _fit(Est, X, y, a, epsilon=np.inf)
    assert inf.lift_ is None


def test_released_lift_is_the_count_plus_laplace_noise():
    """With the model fixed (post-processing), ``lift_ n`` is ``D`` plus
    Laplace noise of the stated scale (mean and mean absolute deviation over
    seeds of the check's draw alone)."""
    X, y, a = _data(3000, 3.0, "noise-law")
    model = _fit(MinimaxLogisticRegression, X, y, a)
    target = np.where(y == 1, 1.0, -1.0)
    predicted = (model.decision_function(X) > 0).astype(int)
    D = lift_statistic(predicted, (target > 0).astype(int), 2)
    eps_c = model._check_epsilon(3000, model.solver_)
    draws = []
    for seed in range(400):
        model._fs.scale_plan = type("P", (), {"check_epsilon": eps_c})()
        model._fs.rows_given, model._fs.target = X, target
        model._run_utility_check(np.random.default_rng(seed))
        draws.append(model.lift_ * 3000 - D)
    model._end_fit_state()
    scale = (1.0 if model.solver_.neighbouring == "add_or_remove_one" else 2.0) / eps_c
    assert abs(np.mean(draws)) < 0.2 * scale
    assert np.mean(np.abs(draws)) == pytest.approx(scale, rel=0.15)


def test_check_is_charged_with_the_estimates():
    X, y, a = _data(3000, 3.0, "budget")
    budget = PrivacyBudget(2.0, 1e-5)
    with budget:
        model = _fit(FairLogisticRegression, X, y, a)
    first = budget.records[0][0]
    assert "scale estimates" in budget.records[0][2]
    assert isinstance(first.events[-1], dp_accounting.LaplaceDpEvent)
    assert budget.spent()[0] <= 2.0 and model.epsilon_ <= 1.0 + 1e-9


def test_utility_check_parameter_is_validated():
    X, y, a = _data(500, 3.0, "param")
    with pytest.raises(ValueError, match="utility_check"):
        _fit(MinimaxLogisticRegression, X, y, a, utility_check=1.5)


def test_fair_collapse_at_bound_zero_is_caught():
    """``difference_bound="auto"`` (0: as fair as the run gets) on groups
    independent of the features: the private run collapses to one class
    for this seed (the non-private one does not), and the check says so."""
    X, y, a = _data(4000, 3.0, "event")
    with pytest.warns(UtilityWarning, match="fairness constraint"):
        model = _fit(FairLogisticRegression, X, y, a, difference_bound="auto")
    assert model.score(X, y) < 0.6 and model.lift_ < 0.02
    exact = _fit(
        FairLogisticRegression, X, y, a, difference_bound="auto", epsilon=np.inf
    )
    assert exact.score(X, y) > 0.85
