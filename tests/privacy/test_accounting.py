"""Accounting, calibration and mechanisms."""

import math

import dp_accounting as dpa
import numpy as np
import pytest

from dpestim.privacy import (
    PrivacyReport,
    calibrate_noise,
    compute_epsilon,
    gaussian_noise,
    laplace_noise,
    make_accountant,
)
from dpestim.privacy import accounting as acc_mod


def _sgd_event(q, steps):
    return lambda s: dpa.SelfComposedDpEvent(
        dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(s)), steps
    )


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 8.0])
@pytest.mark.parametrize("delta", [1e-6, 1e-3])
@pytest.mark.parametrize("q,steps", [(0.001, 1000), (0.05, 200), (1.0, 10)])
def test_calibration_never_overshoots_and_is_tight(epsilon, delta, q, steps):
    make = _sgd_event(q, steps)
    noise = calibrate_noise(make, epsilon, delta)
    eps = compute_epsilon(make(noise), delta)
    assert eps <= epsilon
    # Smallest such noise: 0.1% less noise already exceeds the budget.
    assert compute_epsilon(make(noise * 0.999), delta) > epsilon


def test_calibration_pld_never_overshoots():
    make = _sgd_event(0.01, 300)
    noise = calibrate_noise(make, 1.0, 1e-5, accountant="pld")
    assert compute_epsilon(make(noise), 1e-5, "pld") <= 1.0
    # PLD is tighter than RDP: it needs less noise for the same budget.
    assert noise < calibrate_noise(make, 1.0, 1e-5, accountant="rdp")


def test_calibration_is_cached_for_identical_calls():
    calls = []

    def make(s):
        calls.append(s)
        return dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(s), 3)

    key = ("test-cache", 3)
    a = calibrate_noise(make, 0.77, 1e-5, cache_key=key)
    n_calls = len(calls)
    b = calibrate_noise(make, 0.77, 1e-5, cache_key=key)
    assert a == b and len(calls) == n_calls
    calibrate_noise(make, 0.78, 1e-5, cache_key=key)  # another budget: recomputed
    assert len(calls) > n_calls
    assert len(acc_mod._calibration_cache) <= acc_mod._CACHE_SIZE


def test_gaussian_calibration_matches_closed_form_bound():
    # One Gaussian release: dp_accounting's exact Gaussian sigma at (eps, delta)
    # is a lower bound for what RDP needs (RDP is looser, never tighter).
    make = lambda s: dpa.GaussianDpEvent(s)  # noqa: E731
    exact = dpa.get_sigma_gaussian(1.0, 1e-5)
    noise = calibrate_noise(make, 1.0, 1e-5)
    assert exact <= noise <= 1.5 * exact
    noise_pld = calibrate_noise(make, 1.0, 1e-5, accountant="pld")
    assert noise_pld == pytest.approx(exact, rel=0.02)


@pytest.mark.parametrize("bad", [0.0, -1.0, math.inf, math.nan])
def test_calibration_rejects_bad_epsilon(bad):
    with pytest.raises(ValueError, match="epsilon"):
        calibrate_noise(_sgd_event(0.1, 10), bad, 1e-5)


@pytest.mark.parametrize("bad", [-0.1, 1.0, 2.0])
def test_calibration_rejects_bad_delta(bad):
    with pytest.raises(ValueError, match="delta"):
        calibrate_noise(_sgd_event(0.1, 10), 1.0, bad)


def test_unreachable_budget_is_an_error():
    with pytest.raises(ValueError, match="cannot be met"):
        calibrate_noise(_sgd_event(1.0, 10**6), 1e-6, 1e-12)


def test_zero_noise_is_infinite_epsilon():
    assert compute_epsilon(_sgd_event(0.1, 10)(0.0), 1e-5) == math.inf


def test_accountant_names():
    assert make_accountant("rdp").supports(dpa.GaussianDpEvent(1.0))
    assert make_accountant("pld", "replace_one") is not None
    with pytest.raises(ValueError, match="accountant"):
        make_accountant("moments")
    with pytest.raises(ValueError, match="neighbouring"):
        make_accountant("rdp", "swap")


def test_gaussian_noise_statistics_and_stream():
    rng = np.random.default_rng(0)
    x = gaussian_noise(rng, 2.5, 200_000)
    assert abs(x.mean()) < 5 * 2.5 / np.sqrt(x.size)
    assert x.std() == pytest.approx(2.5, rel=0.01)
    np.testing.assert_array_equal(
        gaussian_noise(np.random.default_rng(1), 3.0, 5),
        3.0 * np.random.default_rng(1).standard_normal(5),
    )


def test_laplace_noise_variance_is_two_scale_squared():
    x = laplace_noise(np.random.default_rng(0), 1.5, 400_000)
    assert x.var() == pytest.approx(2 * 1.5**2, rel=0.02)
    assert not laplace_noise(np.random.default_rng(0), 0.0, 3).any()
    with pytest.raises(ValueError, match="scale"):
        laplace_noise(np.random.default_rng(0), -1.0, 3)


def test_report_is_readable_and_frozen():
    ev = dpa.GaussianDpEvent(1.0)
    rep = PrivacyReport(
        "E",
        "dp-sgd",
        "Gaussian",
        "Poisson",
        5,
        1.0,
        1.0,
        "add_or_remove_one",
        "rdp",
        1.0,
        1e-5,
        ev,
        warnings=("w",),
    )
    text = str(rep)
    assert "adding or removing one record" in text and "w" in text
    assert rep.as_dict()["dp_event"] == repr(ev)
    with pytest.raises(AttributeError):
        rep.epsilon = 2.0
