"""The PLD accountant's interval scales with epsilon and stays conservative
(issue 24): epsilon at the scaled interval is never below dp-accounting's
default 1e-4, and a calibrated noise meets the budget at 1e-4 too."""

import math

import dp_accounting
import numpy as np
import pytest
from dp_accounting import pld

from dpestim.privacy import accounting, calibrate_noise, compute_epsilon
from dpestim.privacy.accounting import PLD_INTERVAL, pld_interval

G = dp_accounting.GaussianDpEvent


def _fine(event, delta):
    acc = pld.PLDAccountant(value_discretization_interval=PLD_INTERVAL)
    return acc.compose(event).get_epsilon(delta)


@pytest.mark.parametrize(
    "scale, interval",
    [
        (0.01, 1e-4),
        (1.0, 1e-4),
        (1.5, 2e-4),
        (4.0, 4e-4),
        (50.0, 6.4e-3),
        (1e9, 1.28e-2),
    ],
)
def test_interval_is_the_default_relative_to_epsilon(scale, interval):
    assert pld_interval(scale) == pytest.approx(interval)
    # a power-of-two multiple of the default: every grid refines the coarser
    ratio = pld_interval(scale) / PLD_INTERVAL
    assert ratio == 2.0 ** round(math.log2(ratio))
    assert pld_interval(math.inf) == pld_interval(1e9)


@pytest.mark.parametrize(
    "event",
    [
        G(0.5),
        dp_accounting.SelfComposedDpEvent(
            dp_accounting.PoissonSampledDpEvent(0.5, G(0.8)), 3
        ),
        dp_accounting.ComposedDpEvent([G(0.4), G(0.6)]),
    ],
)
def test_scaled_interval_is_never_below_the_default(event):
    coarse = compute_epsilon(event, 1e-5, accountant="pld")
    fine = _fine(event, 1e-5)
    assert coarse > 1  # the interval is scaled for these events
    assert fine <= coarse <= fine * (1 + 1e-3)


@pytest.mark.parametrize("epsilon", [0.3, 3.0, 20.0])
def test_calibration_meets_the_budget_at_the_default_interval(epsilon):
    def make_event(s):
        return dp_accounting.SelfComposedDpEvent(
            dp_accounting.PoissonSampledDpEvent(0.3, G(s)), 4
        )

    noise = calibrate_noise(make_event, epsilon, 1e-5, accountant="pld")
    assert _fine(make_event(noise), 1e-5) <= epsilon
    # and it is tight: 1% less noise exceeds the budget
    assert compute_epsilon(make_event(0.99 * noise), 1e-5, accountant="pld") > epsilon


def _levels_event(s, levels=(0.8, 0.9, 1.0, 1.2, 1.4, 1.7, 2.0, 2.4), q=0.1):
    """An adp-sgd-shaped event: one subsampled Gaussian per noise level."""
    P, S = dp_accounting.PoissonSampledDpEvent, dp_accounting.SelfComposedDpEvent
    return dp_accounting.ComposedDpEvent([S(P(q, G(s * level)), 3) for level in levels])


def test_work_interval_bounds_the_base_plds_and_is_a_power_of_two():
    relation = dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE
    one = accounting._pld_loss_range(_levels_event(0.5, levels=(1.0,)), relation)
    eight = accounting._pld_loss_range(_levels_event(0.5), relation)
    assert 0 < one < eight  # eight base PLDs, each over its loss range
    for width in (one, eight, 1e-3, 1e9):
        interval = accounting._work_interval(width)
        ratio = interval / PLD_INTERVAL
        assert ratio == 2.0 ** round(math.log2(ratio))
        assert (
            width / interval <= accounting._PLD_MAX_POINTS
            or interval == accounting._PLD_MAX_INTERVAL
        )
        if interval > PLD_INTERVAL:  # the finest interval within the bound
            assert width / (interval / 2) > accounting._PLD_MAX_POINTS
    assert accounting._work_interval(eight) > accounting._work_interval(one)
    # another mechanism: the interval is set by the epsilon (probe) instead
    mixed = dp_accounting.ComposedDpEvent([G(1.0), dp_accounting.LaplaceDpEvent(1.0)])
    assert accounting._pld_loss_range(mixed, relation) is None


@pytest.mark.parametrize("epsilon", [0.5, 4.0])
def test_calibration_of_many_noise_levels_meets_the_budget_at_1e_4(epsilon):
    noise = calibrate_noise(_levels_event, epsilon, 1e-5, accountant="pld")
    # conservative: within budget by the default accountant at 1e-4 ...
    assert _fine(_levels_event(noise), 1e-5) <= epsilon
    # ... and at the (coarser) interval the accountant used
    assert compute_epsilon(_levels_event(noise), 1e-5, accountant="pld") <= epsilon
    # and close to tight: 2% less noise exceeds the budget at 1e-4
    assert _fine(_levels_event(0.98 * noise), 1e-5) > epsilon


@pytest.mark.parametrize("solver", ["adp-sgd", "adp-adagrad"])
def test_adaptive_solvers_refuse_slow_pld_calibration_up_front(solver):
    # Calibrating their many-level composition with PLD takes more than 2 s
    # of CPU from 100 steps on: refused with the reason, before data is read.
    from dpestim import LogisticRegression

    est = LogisticRegression(
        solver=solver, accountant="pld", epsilon=1.0, classes=[0, 1],
        max_iter=5, batch_size=10, feature_scale=None,
    )  # fmt: skip
    X = np.random.default_rng(0).normal(size=(200, 3))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(ValueError, match="accountant='pld' is not available"):
        est.fit(X, y)
    # a short run keeps the PLD accountant
    short = est.set_params(max_iter=1, batch_size=100).fit(X, y)
    assert short.epsilon_ <= 1.0
