"""noise="discrete_laplace": exact sampler, closed form, grid, end to end."""

import math
import zlib

import numba
import numpy as np
import pytest
from scipy.stats import chisquare

from dpestim import Ridge
from dpestim._kernels.discrete_laplace import bernoulli_exp_neg, discrete_laplace
from dpestim.privacy.discrete import (
    discrete_laplace_grid,
    discrete_laplace_numpy,
    discrete_laplace_pmf,
    sum_rounding_factor,
)
from dpestim.solvers import DPGD


@numba.njit
def _draws(rng, t, n):
    out = np.empty(n, dtype=np.int64)
    for i in range(n):
        out[i] = discrete_laplace(rng, t)
    return out


@numba.njit
def _bernoullis(rng, num, den, n):
    hits = 0
    for _ in range(n):
        hits += bernoulli_exp_neg(rng, num, den)
    return hits


def _seed(name):
    return zlib.crc32(name.encode())


@pytest.mark.parametrize("t", [1, 3, 1000, 2**40])
def test_kernel_equals_numpy_twin_on_the_same_stream(t):
    a = _draws(np.random.default_rng(_seed(f"twin{t}")), t, 300)
    rng = np.random.default_rng(_seed(f"twin{t}"))
    b = [discrete_laplace_numpy(rng, t) for _ in range(300)]
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("t", [1, 4])
def test_distribution_matches_the_closed_form(t):
    n = 200_000
    z = _draws(np.random.default_rng(_seed(f"pmf{t}")), t, n)
    edge = 6 * t  # pool the tails beyond +-edge
    values = np.arange(-edge, edge + 1)
    p = discrete_laplace_pmf(values, t)
    tail = (1.0 - p.sum()) / 2
    observed = np.array(
        [np.sum(z < -edge)] + [np.sum(z == v) for v in values] + [np.sum(z > edge)]
    )
    expected = n * np.concatenate([[tail], p, [tail]])
    assert chisquare(observed, expected).pvalue > 1e-3
    # Moments: mean 0, variance 2 r / (1 - r)^2 with r = exp(-1 / t).
    r = math.exp(-1 / t)
    var = 2 * r / (1 - r) ** 2
    assert abs(z.mean()) < 5 * math.sqrt(var / n)
    assert z.var() == pytest.approx(var, rel=0.03)


@pytest.mark.parametrize("num,den", [(0, 1), (1, 1), (3, 7), (999, 1000)])
def test_bernoulli_exp_neg_frequency(num, den):
    n = 100_000
    p = math.exp(-num / den)
    hits = _bernoullis(np.random.default_rng(_seed(f"b{num}/{den}")), num, den, n)
    assert abs(hits / n - p) <= 5 * math.sqrt(p * (1 - p) / n) + 1e-12


@pytest.mark.parametrize(
    "scale,nm,coords,rows",
    [(2.0, 1.0, 2, 100), (2e3, 1e3, 1000, 10**6), (1e-8, 3.0, 5, 7)],
)
def test_grid_covers_rounding_and_costs_little_noise(scale, nm, coords, rows):
    grid, t = discrete_laplace_grid(scale, nm, coords, rows)
    assert math.log2(grid) == int(math.log2(grid))  # a power of two
    eta = coords * nm / t
    assert eta <= 2**-10
    rho1 = sum_rounding_factor(coords, rows)
    # The step is at most (1 - eta) / nm + eta / nm = 1 / nm DP.
    assert 2 * rho1 * (scale / (2 * nm)) / (t * grid) + coords / t <= 1 / nm * (
        1 + 1e-15
    )
    assert t * grid / scale < 1.0012 * rho1


def test_grid_refuses_what_it_cannot_cover():
    with pytest.raises(ValueError, match="grid"):
        discrete_laplace_grid(1.0, 1e12, 10**6, 10)
    with pytest.raises(ValueError, match="n_rows"):
        sum_rounding_factor(3, 2**52)


def test_fit_is_pure_same_accounting_and_released_sum_is_on_the_grid():
    X = np.zeros((30, 1))
    X[0] = 1.0
    y = np.ones(30)
    kw = dict(epsilon=1.0, max_iter=1, alpha=0.0, fit_intercept=False, random_state=0)
    cont = Ridge(solver=DPGD(), **kw).fit(X, y)
    exact = Ridge(solver=DPGD(noise="discrete_laplace"), **kw).fit(X, y)
    assert exact.epsilon_ == cont.epsilon_ == pytest.approx(1.0)
    assert exact.delta_ == 0.0 and exact.dp_event_ == cont.dp_event_
    assert "discrete Laplace" in str(exact.privacy_report())
    # One full-batch step from 0: coef = -step * noisy_sum / n.
    nm = exact.noise_multiplier_
    grid, _ = discrete_laplace_grid(nm * 2 * 1.0, nm, 1, 30)
    noisy_sum = -exact.coef_[0] * 30 / exact.step_sizes_[0]
    index = noisy_sum / grid
    assert abs(index - round(index)) < 1e-6 * max(1.0, abs(index))
