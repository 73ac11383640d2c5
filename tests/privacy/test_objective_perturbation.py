"""Objective perturbation's closed form, checked by brute force.

On one-dimensional logistic problems the output density of the exact
mechanism is known in closed form through the change of variables
``theta -> b`` (module docstring of ``dpestim.privacy.objective_perturbation``,
point 1). Its hockey-stick and Renyi divergences between random neighbouring
datasets are integrated numerically on a fine grid and compared with the
bounds the module reports; the density itself is checked against samples of
the mechanism (draw ``b``, solve for ``theta``).
"""

import math

import numpy as np
import pytest
from dp_accounting import (
    ComposedDpEvent,
    GaussianDpEvent,
    SelfComposedDpEvent,
    ZCDpEvent,
)
from scipy.optimize import brentq
from scipy.special import expit
from scipy.stats import norm

from dpestim.privacy import compute_epsilon
from dpestim.privacy.ledger import accountable_event, composed_epsilon
from dpestim.privacy.objective_perturbation import (
    ObjectivePerturbationDpEvent,
    amp_epsilon,
    gaussian_delta,
    jacobian_epsilon,
    objective_perturbation_delta,
    objective_perturbation_epsilon,
    zcdp_event,
)


def _grid(s, lam):
    """A grid holding all but ~1e-20 of the mass (|theta| <= |b| / lam + n / lam)."""
    half = (10.0 * s + 6.0) / lam + 10.0
    return np.linspace(-half, half, 200_001)


def _log_density(theta, x, y, lam, sd):
    """log p_D(theta) of 1-D objective perturbation (logistic, no intercept).

    b_D(theta) = -sum_i l'(theta; z_i) - lam theta; p = nu(b) |b'(theta)|.
    """
    m = np.outer(theta, x * y)  # margins
    grad = -(expit(-m) * (x * y)).sum(axis=1)
    hess = (expit(m) * expit(-m) * x * x).sum(axis=1)
    b = -grad - lam * theta
    return norm.logpdf(b, scale=sd) + np.log(hess + lam)


def _neighbours(rng):
    n = int(rng.integers(1, 6))
    x = rng.uniform(-1, 1, size=n + 1)
    x[-1] = rng.choice([-1.0, 1.0]) * rng.uniform(0.5, 1.0)  # the extra record
    y = rng.choice([-1.0, 1.0], size=n + 1)
    return (x[:-1], y[:-1]), (x, y)


def _hockey(lp, lq, eps, grid):
    dt = grid[1] - grid[0]
    return float(np.maximum(np.exp(lp) - np.exp(eps + lq), 0).sum() * dt)


@pytest.mark.parametrize("seed", range(4))
def test_profile_bound_holds_on_random_neighbours(seed):
    rng = np.random.default_rng(seed)
    worst = 0.0
    for _ in range(4):
        (x, y), (x2, y2) = _neighbours(rng)
        s = float(rng.choice([0.5, 1.0, 2.0, 4.0]))
        lam = float(rng.choice([0.05, 0.3, 2.0]))
        zeta, c = 1.0, 0.25  # |l'| |x| <= 1, l'' x^2 <= 1/4
        eps_j = jacobian_epsilon(c, lam)
        grid = _grid(s, lam)
        lp = _log_density(grid, x, y, lam, s * zeta)
        lq = _log_density(grid, x2, y2, lam, s * zeta)
        dt = grid[1] - grid[0]
        assert abs(np.exp(lp).sum() * dt - 1) < 1e-6  # a density
        assert abs(np.exp(lq).sum() * dt - 1) < 1e-6
        for eps in (0.1, 0.5, 1.0, 2.0, 4.0):
            bound = objective_perturbation_delta(eps, s, eps_j)
            actual = max(_hockey(lp, lq, eps, grid), _hockey(lq, lp, eps, grid))
            assert actual <= bound + 1e-7, (s, lam, eps, actual, bound)
            if bound > 1e-4:
                worst = max(worst, actual / bound)
    assert worst > 0.05  # the bound is not vacuous on these data


def test_without_the_jacobian_term_the_bound_fails():
    """Negative control: small ridge, large noise: the Jacobian dominates."""
    x, y = np.array([0.0]), np.array([1.0])
    x2, y2 = np.array([0.0, 1.0]), np.array([1.0, 1.0])
    s, lam = 50.0, 0.05
    grid = _grid(s, lam)
    lp = _log_density(grid, x, y, lam, s)
    lq = _log_density(grid, x2, y2, lam, s)
    actual = max(_hockey(lp, lq, 0.5, grid), _hockey(lq, lp, 0.5, grid))
    assert actual > 10 * objective_perturbation_delta(0.5, s, 0.0)
    assert actual <= objective_perturbation_delta(0.5, s, jacobian_epsilon(0.25, lam))


@pytest.mark.parametrize("seed", range(3))
def test_renyi_divergence_within_the_zcdp_bound(seed):
    rng = np.random.default_rng(100 + seed)
    for _ in range(4):
        (x, y), (x2, y2) = _neighbours(rng)
        s = float(rng.choice([0.7, 1.5, 3.0]))
        lam = float(rng.choice([0.1, 1.0]))
        ev = zcdp_event(ObjectivePerturbationDpEvent(s, jacobian_epsilon(0.25, lam)))
        grid = _grid(s, lam)
        dt = grid[1] - grid[0]
        lp = _log_density(grid, x, y, lam, s)
        lq = _log_density(grid, x2, y2, lam, s)
        for order in (1.5, 2.0, 5.0, 10.0):
            for a, b in ((lp, lq), (lq, lp)):
                ren = np.log(np.exp(order * a + (1 - order) * b).sum() * dt)
                ren /= order - 1
                assert ren <= ev.xi + ev.rho * order + 1e-9


def test_density_matches_samples_of_the_mechanism():
    """The change of variables: solve argmin for sampled b, compare CDFs."""
    rng = np.random.default_rng(7)
    x, y = np.array([0.9, -0.4, 0.7]), np.array([1.0, 1.0, -1.0])
    lam, sd = 0.3, 1.5

    def theta_of(b):  # root of the perturbed objective's derivative
        def f(t):
            return -(expit(-t * x * y) * x * y).sum() + lam * t + b

        return brentq(f, -1e4, 1e4, xtol=1e-12)

    draws = np.sort([theta_of(b) for b in rng.normal(scale=sd, size=4000)])
    grid = _grid(sd, lam)
    dens = np.exp(_log_density(grid, x, y, lam, sd))
    cdf = np.cumsum(dens) * (grid[1] - grid[0])
    model = np.interp(draws, grid, cdf)
    empirical = (np.arange(draws.size) + 0.5) / draws.size
    assert np.abs(model - empirical).max() < 0.03  # KS at n=4000: 1.63/63 ~ 0.026


@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 2.0])
@pytest.mark.parametrize("delta", [1e-5, 1e-8])
def test_kifer_smith_thakurta_parameters_meet_their_epsilon(eps, delta):
    """KST 2012 Theorem 2's noise and ridge give at most eps by our bound."""
    s = math.sqrt(8 * math.log(2 / delta) + 4 * eps) / eps
    eps_j = jacobian_epsilon(0.25, 2 * 0.25 / eps)
    event = ObjectivePerturbationDpEvent(s, eps_j)
    assert objective_perturbation_epsilon(event, delta, "pld") <= eps


def test_gaussian_delta_agrees_with_dp_accounting():
    for s in (0.5, 1.0, 3.0):
        eps = compute_epsilon(GaussianDpEvent(s), 1e-5, "pld")
        assert gaussian_delta(eps, s) == pytest.approx(1e-5, rel=0.05)


def test_amp_epsilon_and_budget_translation():
    op = ObjectivePerturbationDpEvent(4.0, 0.1)
    alone = amp_epsilon(op, 1e-5)
    both = amp_epsilon(ComposedDpEvent([op, GaussianDpEvent(400.0)]), 1e-5)
    assert alone < both < alone + 0.05
    z = accountable_event(ComposedDpEvent([op, GaussianDpEvent(400.0)]))
    assert isinstance(z.events[0], ZCDpEvent)
    # the budget composes it by its own closed form (not looser than alone)
    assert composed_epsilon([op], 1e-5) >= alone
    # K one-vs-rest releases: more than one, at most K times one (basic)
    three = amp_epsilon(SelfComposedDpEvent(op, 3), 1e-5)
    assert alone < three <= 3 * amp_epsilon(op, 1e-5 / 3)
    with pytest.raises(ValueError, match="ridge"):
        jacobian_epsilon(0.25, 0.0)
