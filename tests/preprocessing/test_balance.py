"""The column balance's mechanism: sensitivity, rule, limit (``_balance``)."""

import zlib

import numpy as np
import pytest
import scipy.sparse as sp
from neighbour_rows import random_scaled_rows

from dpestim.preprocessing._balance import (
    BALANCE_CAP,
    BALANCE_SHARE,
    DOMINANCE,
    LATER_SHARE,
    MAX_DRAW_SHARE,
    MAX_GROUP,
    OVER_MEAN,
    PAIR_DOMINANCE,
    RAISED_LATER_ROUNDS,
    SPARSE_RADIUS_SHARE,
    _clipped_squares,
    dominant_scales,
    draw_need,
    exact_column_squares,
    l2_column_squares,
    laplace_column_squares,
    plan_balance,
    plan_balance_as_given,
    smallest_epsilon_n,
)
from dpestim.preprocessing._centring import laplace_move_threshold
from dpestim.preprocessing._grid_quantile import feasible, positive_edges


def _seed(*parts):
    return zlib.crc32("/".join(map(str, parts)).encode())


@pytest.mark.parametrize("ord", [1, 2])
@pytest.mark.parametrize("case", range(4))
def test_clipped_squares_sensitivity_on_random_neighbours(case, ord):
    """Adding or removing one row moves the sum of squares by at most ``R^2``
    in L1 norm (replacing one: ``2 R^2``), for rows of any scale (up to
    1e150, and rows whose norm overflows), clipped in L1 norm (the first
    release) or in L2 norm (the later rounds); 200 neighbours per case."""
    rng = np.random.default_rng(_seed("balance", case, ord))
    worst_remove = worst_replace = 0.0
    for _ in range(200):
        D, r, k = random_scaled_rows(rng)
        d = D.shape[1]
        full = _clipped_squares(D, r, ord)
        assert np.isfinite(full).all()
        less = _clipped_squares(np.delete(D, k, axis=0), r, ord)
        worst_remove = max(worst_remove, float(np.abs(full - less).sum()) / r**2)
        other = D.copy()
        other[k] = rng.normal(size=d) * 10.0 ** rng.uniform(-3, 3)
        swapped = _clipped_squares(other, r, ord)
        worst_replace = max(worst_replace, float(np.abs(full - swapped).sum()) / r**2)
    assert worst_remove <= 1.0 + 1e-12 and worst_replace <= 2.0 + 1e-12
    assert worst_remove > 0.5  # reached by clipped rows


def test_no_column_dominant_on_comparable_scales():
    rng = np.random.default_rng(_seed("balanced"))
    X = np.c_[rng.normal(size=(5000, 4)), rng.random((5000, 3)) < 0.3]
    X = X - X.mean(axis=0)
    m, t = exact_column_squares(X)
    assert dominant_scales(m, t) is None
    radius = np.median(np.abs(X).sum(axis=1))
    for seed in range(5):
        m, t = laplace_column_squares(X, radius, 0.01, 1.0, np.random.default_rng(seed))
        assert dominant_scales(m, t) is None


def test_a_column_in_its_own_units_is_found_and_scaled():
    """One column of spread 1e5 among columns of order one: it alone is
    divided, by about its root mean square; the private one agrees with
    the exact one within a few percent at n epsilon = 200."""
    rng = np.random.default_rng(_seed("dominant"))
    n = 20_000
    X = np.c_[rng.normal(size=(n, 5)), 1e5 * rng.normal(size=n)]
    exact = dominant_scales(*exact_column_squares(X))
    np.testing.assert_allclose(exact[:5], 1.0)
    assert exact[5] == pytest.approx(np.sqrt(np.mean(X[:, 5] ** 2)))
    radius = np.median(np.abs(X).sum(axis=1))
    m, t = laplace_column_squares(X, radius, 0.01, 1.0, np.random.default_rng(0))
    private = dominant_scales(m, t)
    np.testing.assert_allclose(private[:5], 1.0)
    # clipped at the median L1 norm: the estimate is low, not high
    assert 0.5 * exact[5] < private[5] <= 1.05 * exact[5]


def test_dominant_columns_are_found_largest_first():
    """A cascade within the release's precision: each column dominant among
    those not yet scaled is scaled (1e4, then 1e2), the rest are left."""
    m = np.array([1e8, 1e4, 1.0, 1.0, 1.0])
    sigma = dominant_scales(m, 0.0)
    np.testing.assert_allclose(sigma, [1e4, 1e2, 1.0, 1.0, 1.0])
    # below the noise threshold nothing is scaled, dominant or not
    assert dominant_scales(m, 2e8) is None
    # exactly half of the rest is not dominant (strictly more is)
    assert dominant_scales(np.array([1.0, 1.0]), 0.0) is None
    sigma = dominant_scales(np.array([1.0 + 1e-9, 1.0]), 0.0)
    assert sigma[0] == pytest.approx(1.0) and sigma[1] == 1.0
    assert DOMINANCE == 0.5
    # the rest's sum is unbiased: the noise of many small columns (here +-1)
    # cancels; their positive parts alone (+50) would hide the dominant one
    noisy = np.r_[10.0, np.tile([1.0, -1.0], 50)]
    assert dominant_scales(noisy, 5.0)[0] == pytest.approx(np.sqrt(10.0))
    # a release that overflowed says nothing
    assert dominant_scales(np.array([np.inf, 1.0]), 0.0) is None


def test_noise_alone_rarely_makes_a_column_dominant():
    """All columns zero: the threshold (ln(d / 0.05) noise scales, a union
    bound) keeps pure noise from being scaled in at least 95% of draws."""
    d, n, radius, eps = 50, 1000, 1.0, 0.01
    X = np.zeros((n, d))
    hits = 0
    for seed in range(200):
        m, t = laplace_column_squares(X, radius, eps, 1.0, np.random.default_rng(seed))
        assert t == pytest.approx(laplace_move_threshold(d) * radius**2 / eps / n)
        hits += dominant_scales(m, t) is not None
    assert hits <= 10  # 5% of 200 is the bound; expected about 0


def test_two_columns_in_their_own_units_are_found_as_a_pair():
    """Two comparable large columns hide each other from the half-the-sum
    rule; together above :data:`PAIR_DOMINANCE` of the sum they are scaled
    (California's raw CSV: bedrooms and households). Not with two columns
    in all (a pair then dominates only itself), nor at the loaders' largest
    pair share (California's 0.29 + 0.25 of the sum)."""
    m = np.array([0.47, 0.42, 0.05, 0.03, 0.03])
    sigma = dominant_scales(m, 0.0)
    np.testing.assert_allclose(sigma[:2], np.sqrt(m[:2]))
    assert m[:2].sum() > PAIR_DOMINANCE and m[0] < DOMINANCE * m.sum()
    assert dominant_scales(np.array([1.0, 1.0]), 0.0) is None
    loader = np.array([0.289, 0.254, 0.132, 0.116, 0.1, 0.05, 0.03, 0.029])
    assert dominant_scales(loader, 0.0) is None
    # the pair's smaller column must clear the noise threshold too
    assert dominant_scales(m, 0.45) is None


def test_comparable_raw_columns_are_found_as_a_group():
    """Six comparable columns in their own units (counts of 1,000 +- 500)
    among one-hot ones hide each other from the single and pair rules; as
    a group (above :data:`PAIR_DOMINANCE` of the sum, the smallest twenty
    times the mean of the rest) they are scaled. Not: a group larger than
    :data:`MAX_GROUP` (MNIST's busy centre beside its empty border), a
    smallest member under twenty times the others' mean, a group below the
    noise threshold, nor anything on comparable columns."""
    counts = 2.5e5 * np.array([1.1, 1.05, 1.0, 0.95, 0.9, 0.85])
    m = np.r_[counts, np.full(12, 0.05)]
    sigma = dominant_scales(m, 0.0)
    assert sigma is not None
    np.testing.assert_allclose(sigma[:6], np.sqrt(counts))
    assert np.all(sigma[6:] == 1.0)
    assert dominant_scales(m, 2.6e5) is None  # only the largest clears it
    # a busy block beside near-empty columns, each below twenty times the
    # mean of all (MNIST-like): MAX_GROUP of them hold far less than
    # PAIR_DOMINANCE of the sum
    busy = np.r_[np.full(100, 4.0), np.full(684, 0.04)]
    assert busy[:MAX_GROUP].sum() < PAIR_DOMINANCE * busy.sum()
    assert dominant_scales(busy, 0.0) is None
    close = np.r_[np.full(4, 1.0), np.full(10, 1.0 / (OVER_MEAN * 0.9))]
    assert dominant_scales(close, 0.0) is None
    assert dominant_scales(np.ones(30), 0.0) is None


def test_a_column_far_above_the_mean_of_many_is_scaled():
    """With many columns (one-hot ones of mean square 0.05) a column twenty
    times their mean is dominant although far below half of their sum;
    eighteen times is not (the dense loaders: at most 5.8 times; the sparse
    ones uncentred 9.1, their private mean squares up to 15)."""
    small = np.full(99, 0.05)
    for factor, found in ((OVER_MEAN * 1.2, True), (OVER_MEAN * 0.9, False)):
        m = np.r_[small, 0.0]
        m[-1] = factor * small.sum() / (m.size - factor)
        assert m[-1] / m.mean() == pytest.approx(factor)
        sigma = dominant_scales(m, 0.0)
        assert (sigma is not None and sigma[-1] == np.sqrt(m[-1])) == found


def test_later_rounds_are_a_public_plan():
    """Two later rounds of :data:`LATER_SHARE` each (half to the radius,
    half to the squares) where ``epsilon n`` makes that share's radius draw
    feasible; below, each draw is raised to the feasible epsilon
    (``draw_need``, at most :data:`MAX_DRAW_SHARE` of epsilon), and as many
    rounds run as keep the whole balance within :data:`BALANCE_CAP`; a
    pure-DP fit (``raised=False``) keeps the shares. Public: ``n`` and
    ``epsilon`` only."""
    n_bins = positive_edges().shape[0] + 1
    eps = 1.0
    part = LATER_SHARE * eps / 2
    for raised in (True, False):
        first, later = plan_balance(eps, 10_200, raised)
        assert feasible(part, 10_200, 0.5, n_bins)
        assert first == BALANCE_SHARE * eps and later == ((part, part),) * 2
        # more rows or epsilon: the same rounds, never thinner ones
        assert plan_balance(2.0, 50_000, raised)[1] == ((2 * part, 2 * part),) * 2
    for n in (2_100, 3_000, 5_000, 10_000):  # the share is too small there
        assert not feasible(part, n, 0.5, n_bins)
        need = draw_need(n)
        assert feasible(need, n, 0.5, n_bins)
        assert not feasible(need * (1 - 1e-6), n, 0.5, n_bins)
        assert need <= MAX_DRAW_SHARE * eps
        first, later = plan_balance(eps, n)
        assert first == BALANCE_SHARE * eps and later
        assert all(r == s == need for r, s in later)
        assert first + 2 * need * len(later) <= BALANCE_CAP * eps
        assert len(later) <= RAISED_LATER_ROUNDS
        if len(later) < RAISED_LATER_ROUNDS:  # one more would break the cap
            assert first + 2 * need * (len(later) + 1) > BALANCE_CAP * eps
        assert plan_balance(eps, n, raised=False) == (first, ())
    # a draw would take more than MAX_DRAW_SHARE: no later round
    assert draw_need(2_000) > MAX_DRAW_SHARE * eps
    assert plan_balance(eps, 2_000) == (BALANCE_SHARE * eps, ())


def test_the_plan_on_rows_as_given():
    """The first round on rows as given draws its own radius: both draws
    keep their shares where feasible (``epsilon n`` of about 5,070), are
    raised to ``draw_need`` below (approximate DP only), and nothing runs
    where the radius draw would take more than :data:`MAX_DRAW_SHARE`
    (``epsilon n`` below about 2,030; 5,070 for a pure-DP fit)."""
    n_bins = positive_edges().shape[0] + 1
    eps = 1.0
    for raised in (True, False):
        radius, first, later = plan_balance_as_given(eps, 6_000, raised)
        assert radius == SPARSE_RADIUS_SHARE * eps and first == BALANCE_SHARE * eps
        assert feasible(radius, 6_000, 0.5, n_bins)
        assert later == plan_balance(eps, 6_000, raised)[1]
        assert (
            plan_balance_as_given(eps, 10_200, raised)[2]
            == ((LATER_SHARE / 2,) * 2,) * 2
        )
    # raised later rounds: up to RAISED_LATER_ROUNDS, within the cap
    assert len(plan_balance_as_given(eps, 6_000)[2]) == RAISED_LATER_ROUNDS
    assert plan_balance_as_given(eps, 6_000, raised=False)[2] == ()
    radius, first, later = plan_balance_as_given(eps, 3_000)
    assert radius == first == draw_need(3_000) > SPARSE_RADIUS_SHARE * eps
    assert radius + first + sum(map(sum, later)) <= BALANCE_CAP * eps
    assert len(later) == 3  # a fourth would break the cap
    assert radius + first + 2 * radius * 4 > BALANCE_CAP * eps
    assert plan_balance_as_given(eps, 3_000, raised=False) is None
    assert 2_000 < smallest_epsilon_n() < 2_060
    assert 5_050 < smallest_epsilon_n(raised=False) < 5_100
    assert plan_balance_as_given(eps, 2_000) is None
    assert plan_balance_as_given(eps, 2_100) is not None
    # the same at any epsilon: epsilon n decides
    assert plan_balance_as_given(0.1, 21_000) is not None
    assert plan_balance_as_given(0.1, 20_000) is None


def test_sparse_rows_give_the_dense_clipped_squares():
    """The sparse path sums the same clipped squares as the dense one (L1
    and L2 clipping), rows whose norm overflows included (they add
    nothing); so its sensitivity is the dense path's, tested above."""
    rng = np.random.default_rng(_seed("sparse-squares"))
    for _ in range(100):
        D, r, _k = random_scaled_rows(rng)
        D[rng.random(D.shape) < 0.5] = 0.0
        for ord in (1, 2):
            np.testing.assert_allclose(
                _clipped_squares(sp.csr_matrix(D), r, ord),
                _clipped_squares(D, r, ord),
                rtol=1e-12,
            )
    X = rng.normal(size=(50, 4)) * [1.0, 10.0, 0.0, 3.0]
    np.testing.assert_allclose(
        exact_column_squares(sp.csr_matrix(X))[0], exact_column_squares(X)[0]
    )


def test_a_later_round_resolves_a_column_the_first_could_not():
    """Rows whose largest column (1e4) sets the first release's noise: a
    second column of spread 50 among columns of order one is below that
    noise, and the later round, on the rows with the first column scaled,
    finds it (its L2 radius set by the second column, not the first)."""
    rng = np.random.default_rng(_seed("later"))
    n = 30_000
    X = np.c_[rng.normal(size=(n, 6)), 50 * rng.normal(size=n)]
    X = np.c_[X, 1e4 * rng.normal(size=n)]
    radius = np.median(np.abs(X).sum(axis=1))
    m, t = laplace_column_squares(X, radius, 0.01, 1.0, np.random.default_rng(1))
    sigma = dominant_scales(m, t)
    assert sigma is not None and sigma[7] > 1e3 and np.all(sigma[:7] == 1.0)
    m2, t2 = l2_column_squares(X / sigma, 0.0025, 0.0025, 1.0, np.random.default_rng(2))
    more = dominant_scales(m2, t2)
    assert more is not None and 20 < more[6] < 60 and np.all(more[:6] == 1.0)
