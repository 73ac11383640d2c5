"""Ridge's private target range: R^2 invariant to the target's unit and offset.

Issue 25, item 2: ``y_bound="auto"`` with the target multiplied by ``k`` and
shifted by ``c`` keeps R^2 within 0.02 of the unscaled, unshifted fit. The
range is ``c -+ FENCE m`` (private median and median absolute deviation) and
is mapped to ``-+ TARGET_HALF_RANGE``; the private spread's error moves the
effective half-range ``TARGET_HALF_RANGE m / m_hat``, so the constant must sit
where R^2 is flat in it (on California, dp-sgd's default step is unstable
below a half-range of about 3: see the constant's comment).
"""

import warnings

import numpy as np
import pytest

from dpestim import Ridge
from dpestim.preprocessing import _fit_scales as S

CELLS = [(1e-3, 0.0), (1e3, 0.0), (1.0, 1e4), (1e3, -1e4), (1e-3, 1e4)]


def _regression(n=8000, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / 2.0
    y = X @ np.linspace(-1.0, 1.5, d) + 0.3 * rng.normal(size=n)
    return X, y


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_dp_sgd_r2_within_the_issues_tolerance_under_scale_and_shift(seed):
    """dp-sgd at its defaults with the range estimated (n eps large enough)."""
    X, y = _regression()
    est = Ridge(solver="dp-sgd", random_state=seed).fit(X, y)
    assert "private range" in est.hyperparameters_["y_bound"]
    assert est.epsilon_ <= 1.0
    base = est.score(X, y)
    assert base > 0.85
    for k, c in CELLS:
        yk = k * y + c
        moved = Ridge(solver="dp-sgd", random_state=seed).fit(X, yk)
        assert abs(moved.score(X, yk) - base) <= 0.02, (k, c)
        # the model is mapped back to the user's units
        low, high = moved.y_bound_
        assert low[0] < np.median(yk) < high[0]


@pytest.mark.parametrize("epsilon", [0.5, 1.0])
def test_spread_error_keeps_the_half_range_in_the_flat_region(epsilon):
    """The effective half-range stays >= 3 in >= 99% of the private draws.

    A skewed target (gamma, like prices) in a large unit with an offset; the
    draws' epsilon is the one the default plan gives (row scale and range,
    ``scale_share`` 0.05, n = 16,000, like California's training rows). With
    the former ``TARGET_HALF_RANGE = 3`` about 3 draws in 4 fell below 3 at
    epsilon 1.
    """
    n = 16000
    plan = S.plan_estimates(epsilon, n, share=0.05, rows=True, targets=1)
    assert plan.target_epsilon is not None
    y = np.random.default_rng(0).gamma(4.0, size=n) * 1e3 - 5e4
    m = np.median(np.abs(y - np.median(y)))
    effective = []
    for seed in range(200):
        low, high = S.private_target_range(
            y, plan.target_epsilon, np.random.default_rng(seed)
        )
        m_hat = (high - low) / 2.0 / S.FENCE
        effective.append(S.TARGET_HALF_RANGE * m / m_hat)
    effective = np.array(effective)
    assert np.mean(effective >= 3.0) >= 0.99
    # and not so large that the clip biases the fit (R^2 -0.01 at 8)
    assert np.median(effective) <= 5.0


def _california():
    from dpestim.datasets import dataset_available, load_california_housing

    if not dataset_available("california_housing"):
        pytest.skip("dataset 'california_housing' not available")
    b = load_california_housing()
    return b.data_train, b.data_test, b.target_train, b.target_test


@pytest.mark.slow
def test_california_r2_within_the_issues_tolerance():
    """Issue 25 items 2 and 3 on California, epsilon 1, defaults, 5 seeds.

    With ``TARGET_HALF_RANGE = 3`` the cell (1e-3, 1e4) was 0.05 below the
    baseline on these seeds and single fits fell to 0.41.
    """
    X, Xt, y, yt = _california()
    cells = [(1.0, 0.0), (1e-3, 1e4), (1e3, -1e4), (1e5, 0.0), (1e2, 1e4)]
    r2 = {}
    for k, c in cells:
        scores = []
        for seed in range(5):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est = Ridge(epsilon=1.0, random_state=seed).fit(X, k * y + c)
            scores.append(est.score(Xt, k * yt + c))
        r2[(k, c)] = np.array(scores)
    base = r2[(1.0, 0.0)].mean()
    for kc, scores in r2.items():
        assert abs(scores.mean() - base) <= 0.02, kc
        assert scores.min() >= 0.55, kc  # item 3: dollars (k = 1e5) >= 0.55


# -- a public y_bound is scaled as the private range is --------------------------


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_public_bound_scaled_to_the_rules_units(fit_intercept):
    """A public range maps to -+ TARGET_HALF_RANGE: the solver's target bound is
    the same for any unit and offset of the range, and the fit is equivariant
    (same seed: predictions move with ``k y + c``)."""
    X, y = _regression(n=2000)
    bound = (-4.0, 5.0)
    base = Ridge(
        solver="dp-sgd", y_bound=bound, random_state=0, fit_intercept=fit_intercept
    ).fit(X, y)
    assert base.hyperparameters_  # fitted
    for k, c in [(1e-3, 0.0), (1e3, 0.0)] + ([(1.0, 1e4)] if fit_intercept else []):
        moved = Ridge(
            solver="dp-sgd",
            y_bound=(k * bound[0] + c, k * bound[1] + c),
            random_state=0,
            fit_intercept=fit_intercept,
        ).fit(X, k * y + c)
        np.testing.assert_allclose(
            moved.predict(X), k * base.predict(X) + c, rtol=1e-6, atol=1e-6 * k
        )


def test_public_bound_on_a_small_target_is_not_swamped():
    """A target of spread 0.1 with its public range [0, 1]: before the scaling the
    noise (calibrated to clip_norm 1) swamped it (R^2 far below 0)."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(3000, 6)) / 2.0
    y = (
        0.5
        + 0.1 * np.tanh(X @ np.linspace(-1.0, 1.0, 6))
        + 0.03 * rng.normal(size=3000)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = Ridge(solver="dp-sgd", y_bound=(0.0, 1.0), random_state=0).fit(X, y)
    assert est.score(X, y) > 0.3
