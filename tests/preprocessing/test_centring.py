"""PrivateCentrer: sensitivity, event, threshold, limits and API."""

import math
import zlib

import dp_accounting
import numpy as np
import pytest
import scipy.sparse as sp
from neighbour_rows import random_scaled_rows
from sklearn.pipeline import make_pipeline

from dpestim import LogisticRegression, UtilityWarning
from dpestim.model_selection import workflow_guarantee
from dpestim.preprocessing import PrivateCentrer
from dpestim.preprocessing._centring import _clipped_sum, move_threshold
from dpestim.privacy import compute_epsilon


def _seed(*parts):
    return zlib.crc32("/".join(map(str, parts)).encode())


def _offset_data(n=20000, seed=0):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, 3))
    year = rng.integers(1990, 2021, n).astype(float)
    return np.c_[Z, year, np.full(n, 100.0)]


@pytest.mark.parametrize("case", range(4))
def test_clipped_sum_sensitivity_on_random_neighbours(case):
    """Adding or removing one row moves the clipped sum by at most ``r``.

    Random datasets with rows of very different scales (up to 1e150 and a
    row whose norm overflows), random radii; 200 neighbours per case.
    """
    rng = np.random.default_rng(_seed("centring", case))
    worst = 0.0
    for _ in range(200):
        D, r, k = random_scaled_rows(rng)
        full = _clipped_sum(D, r)
        less = _clipped_sum(np.delete(D, k, axis=0), r)
        assert np.isfinite(full).all()
        worst = max(worst, float(np.linalg.norm(full - less)) / r)
    assert worst <= 1.0
    assert worst > 0.5  # the bound is reached by clipped rows


def test_threshold_grows_like_log_d():
    assert move_threshold(1) == pytest.approx(math.sqrt(2 * math.log(40)))
    assert move_threshold(1000) > move_threshold(10) > move_threshold(1)
    assert move_threshold(0) == move_threshold(1)


def test_large_offsets_are_removed_and_zero_means_left_exactly():
    X = _offset_data()
    c = PrivateCentrer(epsilon=0.1, random_state=0).fit(X)
    # the noise's standard deviation per coordinate (about 6 here); every
    # row is within the radius (the upper edge of the median's bin, 9% wide,
    # spans the years), so the clipped mean is the mean
    sd = c.noise_multiplier_ * c.radii_[0] / X.shape[0]
    assert np.linalg.norm(X, axis=1).max() <= c.radii_[0]
    assert abs(c.mean_[3] - X[:, 3].mean()) < 4 * sd  # the year's offset (2005)
    assert abs(c.mean_[4] - 100.0) < 4 * sd  # the constant column
    assert sd < 10
    np.testing.assert_array_equal(c.mean_[:3], 0.0)  # below the threshold
    np.testing.assert_allclose(c.transform(X), X - c.mean_)
    np.testing.assert_allclose(c.inverse_transform(c.transform(X)), X)


def test_without_threshold_every_coordinate_moves():
    X = _offset_data(seed=1)
    c = PrivateCentrer(epsilon=0.1, threshold=False, random_state=0).fit(X)
    assert np.all(c.mean_ != 0.0)


def test_event_budget_and_composition():
    X = _offset_data(5000, seed=2)
    c = PrivateCentrer(
        epsilon=0.5, delta=1e-6, n_rounds=2, quantile_share=0.3, random_state=0
    ).fit(X)
    radii, means = c.dp_event_.events
    assert isinstance(radii, dp_accounting.SelfComposedDpEvent)
    assert radii.count == 2 and radii.event.epsilon == pytest.approx(0.3 * 0.5 / 2)
    assert means == dp_accounting.SelfComposedDpEvent(
        dp_accounting.GaussianDpEvent(c.noise_multiplier_), 2
    )
    gauss = compute_epsilon(means, 1e-6, "rdp")
    assert gauss <= 0.7 * 0.5 + 1e-9
    assert c.epsilon_ == pytest.approx(0.15 + gauss)
    assert c.epsilon_ <= 0.5
    assert c.radii_.shape == (2,) and np.all(c.radii_ > 0)


def test_more_noise_for_more_rounds_and_smaller_budgets():
    X = _offset_data(3000, seed=3)
    nm = [
        PrivateCentrer(epsilon=e, n_rounds=k, random_state=0).fit(X).noise_multiplier_
        for e, k in [(1.0, 1), (1.0, 3), (0.1, 1)]
    ]
    assert nm[0] < nm[1] and nm[0] < nm[2]


def test_epsilon_inf_is_the_exact_mean():
    X = _offset_data(1000, seed=4)
    c = PrivateCentrer(epsilon=math.inf).fit(X)
    np.testing.assert_allclose(c.mean_, X.mean(axis=0))
    assert c.epsilon_ == math.inf and c.noise_multiplier_ == 0.0
    assert isinstance(c.dp_event_, dp_accounting.NonPrivateDpEvent)


def test_seeded_fits_repeat():
    X = _offset_data(2000, seed=5)
    a = PrivateCentrer(epsilon=0.3, random_state=7).fit(X).mean_
    b = PrivateCentrer(epsilon=0.3, random_state=7).fit(X).mean_
    np.testing.assert_array_equal(a, b)


def test_sparse_and_bad_parameters_are_refused():
    X = _offset_data(100, seed=6)
    with pytest.raises(TypeError, match="[Ss]parse"):
        PrivateCentrer().fit(sp.csr_matrix(X))
    for bad in (
        dict(epsilon=0.0),
        dict(n_rounds=0),
        dict(quantile=1.0),
        dict(quantile_share=0.0),
        dict(threshold="yes"),
    ):
        with pytest.raises(ValueError, match=next(iter(bad))):
            PrivateCentrer(**bad).fit(X)


def test_in_a_pipeline_the_guarantee_composes():
    X = _offset_data(6000, seed=8)
    y = (X[:, 0] + 0.3 * (X[:, 3] - 2005) > 0).astype(int)
    pipe = make_pipeline(
        PrivateCentrer(epsilon=0.05, random_state=0),
        LogisticRegression(epsilon=0.95, classes=[0, 1], random_state=0),
    ).fit(X, y)
    guarantee = workflow_guarantee(pipe, delta=1e-5)
    assert guarantee.epsilon <= 1.0 + 1e-9
    assert [path for path, _ in guarantee.steps] == [
        "privatecentrer",
        "logisticregression",
    ]
    plain = LogisticRegression(
        epsilon=1.0, classes=[0, 1], random_state=0, feature_centring=None
    )
    with pytest.warns(UtilityWarning, match="feature_centring centres them"):
        plain.fit(X, y)
    # the offsets (a year, a constant 100) dominate the rows: centred, the
    # fit sees its informative columns
    assert pipe.score(X, y) > plain.score(X, y) + 0.02


def test_unreliable_radius_draws_warn_from_public_quantities():
    X = _offset_data(5000, seed=9)
    with pytest.warns(UtilityWarning, match="radius draw"):
        PrivateCentrer(epsilon=0.05, n_rounds=3, random_state=0).fit(X)
    huge = PrivateCentrer(epsilon=1e300, random_state=0).fit(X)
    assert huge.dp_event_.events[0].event.epsilon <= 1e6  # capped draw
    assert huge.epsilon_ <= 1e300


def test_inverse_transform_validates_its_input():
    X = _offset_data(500, seed=10)
    c = PrivateCentrer(epsilon=math.inf).fit(X)
    with pytest.raises(ValueError, match="features"):
        c.inverse_transform(X[:, :3])


def test_the_fit_is_charged_to_the_active_budget():
    from dpestim.model_selection import PrivacyBudget

    X = _offset_data(3000, seed=11)
    budget = PrivacyBudget(1.0, 1e-5)
    with budget:
        c = PrivateCentrer(epsilon=0.3, random_state=0).fit(X)
    assert [r[0] for r in budget.records] == [c.dp_event_]
    assert budget.spent()[0] <= 0.3 + 1e-9
