"""The accelerated family's final pure-DP intercept (Laplace, squared loss).

Checks: the L1 sensitivity of the clipped residual sum under replacement on
random neighbouring datasets, the event (the run's, then
``LaplaceDpEvent(nm_b)`` at the stated share, only where the public
conditions hold), the calibration (never above the request, epsilon
non-increasing in the noise across the rule), a NumPy twin of the noiseless
correction, and the epsilon = inf limit against scikit-learn.
"""

import math
import zlib

import numpy as np
import pytest
import scipy.sparse as sp
from _solver_plans import erm_plan
from dp_accounting import ComposedDpEvent, LaplaceDpEvent

from dpestim import Ridge
from dpestim.losses import LOGISTIC, SQUARED
from dpestim.solvers import SOLVERS
from dpestim.solvers.accelerated import pure_epsilon
from dpestim.solvers.accelerated._intercept import (
    INTERCEPT_LAPLACE_SHARE,
    laplace_query,
    private_intercept_laplace,
)
from dpestim.solvers.sgd._intercept import INTERCEPT_MAX_ERROR, clipped_residual_sum

FAMILY = ["dp-gd", "dp-nag", "dp-hb", "dp-nag-opt"]


def _seed(*parts):
    return zlib.crc32(repr(parts).encode())


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("K", [1, 3])
def test_l1_clipped_residual_sum_moves_by_at_most_twice_the_bound(sparse, K):
    """Replace one row, at random public states and scales: the L1 change of
    the sum is at most ``2 R`` (the sensitivity the Laplace event assumes)."""
    rng = np.random.default_rng(_seed("l1-residual", sparse, K))
    worst = 0.0
    for _ in range(200):
        n, d = int(rng.integers(2, 30)), int(rng.integers(1, 6))
        X = rng.normal(size=(n, d)) * rng.choice([0.01, 1.0, 100.0])
        X[rng.random((n, d)) < 0.3] = 0.0
        Y = rng.normal(size=(n, K)) * rng.choice([0.1, 1.0, 1e3])
        W = rng.normal(size=(K, d)) * rng.choice([0.1, 1.0, 10.0])
        b = rng.normal(size=K)
        R = float(rng.choice([0.5, 8.0]))
        X2, Y2 = X.copy(), Y.copy()
        i = int(rng.integers(n))
        X2[i] = rng.normal(size=d) * rng.choice([1.0, 1e3])
        Y2[i] = rng.normal(size=K) * rng.choice([1.0, 1e4])
        Xa, Xb = (sp.csr_matrix(X), sp.csr_matrix(X2)) if sparse else (X, X2)
        change = clipped_residual_sum(Xa, Y, W, b, R, ord=1) - clipped_residual_sum(
            Xb, Y2, W, b, R, ord=1
        )
        worst = max(worst, float(np.abs(change).sum()) / (2.0 * R))
    assert worst <= 1.0 + 1e-9
    assert worst > 0.5  # the bound is met, not vacuous


def test_noiseless_correction_matches_a_numpy_twin():
    rng = np.random.default_rng(_seed("l1-twin"))
    n, d, K = 40, 4, 2
    X, Y = rng.normal(size=(n, d)), rng.exponential(3.0, size=(n, K))
    W, b = rng.normal(size=(K, d)), rng.normal(size=K)
    plan = erm_plan(n, d, K, SQUARED, target_bound=2.0)
    R = 4.0
    total = np.zeros(K)
    for i in range(n):
        r = Y[i] - (W @ X[i] + b)
        total += r * min(1.0, R / np.abs(r).sum())
    got = private_intercept_laplace(X, Y, W, b.copy(), plan, 0.0, rng)
    np.testing.assert_allclose(got, b + total / n, rtol=1e-12)
    # None (the query does not run): the run's intercept, untouched
    kept = private_intercept_laplace(X, Y, W, b.copy(), plan, None, rng)
    assert np.array_equal(kept, b)


@pytest.mark.parametrize("name", FAMILY)
def test_event_states_the_query_at_its_share(name):
    solver = SOLVERS[name]()
    plan = erm_plan(20000, 3, 1, SQUARED, target_bound=4.0, max_iter=50)
    bare = erm_plan(20000, 3, 1, SQUARED, max_iter=50)
    nm = 40.0
    event = solver.make_event(nm, plan)
    assert isinstance(event, ComposedDpEvent)
    assert event.events[0] == solver.make_event(nm, bare)
    run = pure_epsilon(event.events[0])
    assert isinstance(event.events[1], LaplaceDpEvent)
    query = pure_epsilon(event.events[1])
    assert query == pytest.approx(
        INTERCEPT_LAPLACE_SHARE / (1 - INTERCEPT_LAPLACE_SHARE) * run, rel=1e-6
    )
    # a classifier, final_intercept=False, Gaussian or exact discrete noise:
    # the run's own event
    logistic = erm_plan(20000, 3, 1, LOGISTIC, target_bound=4.0, max_iter=50)
    assert solver.make_event(nm, logistic) == solver.make_event(
        nm, erm_plan(20000, 3, 1, LOGISTIC, max_iter=50)
    )
    for params in ({"final_intercept": False}, {"noise": "discrete_laplace"}):
        other = SOLVERS[name](**params)
        assert other.make_event(nm, plan) == other.make_event(nm, bare)
    # at a noise whose query would be too imprecise, the run's event alone
    assert solver.make_event(1e6, plan) == solver.make_event(1e6, bare)


@pytest.mark.parametrize("name", ["dp-gd", "dp-nag"])
def test_calibration_meets_the_budget_across_the_rule(name):
    """epsilon(nm) is non-increasing across the rule's threshold, and the
    calibrated noise never reports more than the request (and spends nearly
    all of it where the query runs)."""
    solver = SOLVERS[name]()
    plan = erm_plan(3000, 3, 1, SQUARED, target_bound=4.0, max_iter=30)
    nms = np.geomspace(1.0, 2000.0, 60)
    eps = [pure_epsilon(solver.make_event(s, plan)) for s in nms]
    ran = [laplace_query(solver, plan, s, 30, 3000) is not None for s in nms]
    assert any(ran) and not all(ran)  # the sweep crosses the threshold
    assert all(a >= b for a, b in zip(eps, eps[1:]))
    for target in (0.05, 0.5, 1.0, 4.0):
        nm = solver.calibrate(target, 0.0, plan, accountant="rdp")
        spent = pure_epsilon(solver.make_event(nm, plan))
        assert spent <= target
        if laplace_query(solver, plan, nm, 30, 3000) is not None:
            assert spent > 0.999 * target


def test_query_runs_only_where_its_error_is_small():
    """``sqrt(2) nm_b 2 R / n <= INTERCEPT_MAX_ERROR x bound`` (public)."""
    solver = SOLVERS["dp-gd"]()
    plan = erm_plan(1000, 2, 1, SQUARED, target_bound=4.0, max_iter=10)
    for nm in np.geomspace(0.1, 1000.0, 40):
        nm_b = laplace_query(solver, plan, nm, 10, 1000)
        run = 10 / nm
        expect = (1 - INTERCEPT_LAPLACE_SHARE) / (INTERCEPT_LAPLACE_SHARE * run)
        error = math.sqrt(2.0) * expect * 2.0 * 8.0 / 1000
        if error <= INTERCEPT_MAX_ERROR * 4.0:
            assert nm_b == pytest.approx(expect, rel=1e-12)
        else:
            assert nm_b is None
    assert laplace_query(solver, plan, 0.0, 10, 1000) == 0.0  # no noise: exact


def test_ridge_at_delta_zero_reports_the_query_and_meets_epsilon():
    rng = np.random.default_rng(_seed("ridge-pure"))
    X = rng.normal(size=(20000, 4))
    y = np.exp(0.3 * X[:, 0] + rng.normal(size=20000))  # mean > median
    kw = dict(epsilon=2.0, delta=0.0, solver="dp-nag", random_state=0)
    on = Ridge(**kw).fit(X, y)
    assert on.epsilon_ <= 2.0
    assert "one Laplace query on the residuals" in str(on.privacy_report())
    run, query = on.dp_event_.events[-1].events  # after the scale estimates
    assert isinstance(query, LaplaceDpEvent)
    off = Ridge(**{**kw, "solver": SOLVERS["dp-nag"](final_intercept=False)}).fit(X, y)
    assert isinstance(off.dp_event_.events[-1], type(run))  # the run alone,
    # which had the whole budget: 1 - share of the noise (full batch)
    assert on.noise_multiplier_ * (1 - INTERCEPT_LAPLACE_SHARE) == pytest.approx(
        off.noise_multiplier_, rel=1e-9
    )
    # the query moves the mean prediction to the (clipped) target mean
    gap_on = abs(on.predict(X).mean() - y.mean())
    gap_off = abs(off.predict(X).mean() - y.mean())
    assert gap_on < 0.5 * gap_off


def test_nonprivate_limit_matches_scikit_learn():
    """epsilon = inf with a public range: the exact mean clipped residual
    (targets inside the range: nothing clipped) and scikit-learn's Ridge."""
    from sklearn.linear_model import Ridge as SkRidge

    rng = np.random.default_rng(_seed("ridge-inf"))
    X = rng.normal(size=(3000, 4))
    y = X @ np.array([1.0, -0.5, 0.2, 0.0]) + np.exp(rng.normal(size=3000))
    fit = Ridge(
        epsilon=math.inf,
        delta=0.0,
        solver="dp-nag",
        y_bound=(float(y.min()) - 1.0, float(y.max()) + 1.0),
        random_state=0,
    ).fit(X, y)
    ref = SkRidge(alpha=1e-4 * len(y)).fit(X, y)
    assert abs(fit.score(X, y) - ref.score(X, y)) < 0.01
    assert abs(fit.intercept_ - ref.intercept_) < 0.05 * np.std(y)
