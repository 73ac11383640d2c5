"""The PLD accountant's interval scales with epsilon and stays conservative
(issue 24): epsilon at the scaled interval is never below dp-accounting's
default 1e-4, and a calibrated noise meets the budget at 1e-4 too."""

import math

import dp_accounting
import pytest
from dp_accounting import pld

from dpestim.privacy import calibrate_noise, compute_epsilon
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
