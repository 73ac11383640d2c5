"""noisy-sgda: NumPy twins, sensitivity on neighbours, dual sets, accounting."""

import math
import zlib

import numpy as np
import pytest
from dp_accounting import ComposedDpEvent, GaussianDpEvent
from twins import np_poisson_sample_range, np_sampling_key

from dpestim.losses import LOGISTIC, SQUARED
from dpestim.privacy import compute_epsilon
from dpestim.solvers import NoisySGDA
from dpestim.solvers.saddle import SADDLE_SOLVERS, resolve_saddle_solver
from dpestim.solvers.saddle import _sgda_kernels as K
from dpestim.solvers.saddle.sgda import LagrangianProblem, SGDAPlan


def _seed(name):
    return zlib.crc32(name.encode())


# -- NumPy twins (written from the module docstring, not from the kernel) --


def np_joint_grads(X, target, cells, theta, dual, kind, loss, M):
    """Per-example primal gradients (n, d) and dual gradients (n, m)."""
    s = X @ theta
    c = M[cells] @ dual
    if kind == K.WORST_GROUP:
        if loss == LOGISTIC:
            value = np.logaddexp(0, -target * s)
            dl = -target / (1 + np.exp(target * s))
        else:
            value = 0.5 * (s - target) ** 2
            dl = s - target
        g, h = c * dl, value
    else:
        cost = np.where(target < 0, 1.0, -1.0) + c
        t = np.where(cost > 0, -1.0, 1.0)
        g = np.abs(cost) * (-t / (1 + np.exp(t * s)))
        h = (s > 0).astype(float)
    return g[:, None] * X, M[cells] * h[:, None]


def np_clipped_sums(X, target, cells, rows, theta, dual, kind, loss, M, clip):
    gx, gy = np_joint_grads(X, target, cells, theta, dual, kind, loss, M)
    gx, gy = gx[rows], gy[rows]
    norm = np.sqrt((gx**2).sum(1) + (gy**2).sum(1))
    m = gy.shape[1]
    limit = clip * (1.0 - (m + 2 + X.shape[1] + 16) * 2.0**-52)  # rounding-safe
    scale = np.where(norm > limit, limit / np.maximum(norm, 1e-300), 1.0)
    return (scale[:, None] * gx).sum(0), (scale[:, None] * gy).sum(0)


def np_project(u, dual_kind, props, bound, thresh):
    if dual_kind == K.DUAL_BOX:
        v = np.sign(u) * np.maximum(np.abs(u) - thresh, 0.0)
        return np.clip(v, -bound, bound)
    # weighted simplex {w >= 0, props . w = 1}: solve with sorting
    r = u / props
    order = np.argsort(-r)
    best = None
    for k in range(1, len(u) + 1):
        idx = order[:k]
        tau = (props[idx] @ u[idx] - 1) / (props[idx] @ props[idx])
        w = np.maximum(u - tau * props, 0)
        if np.all(w[idx] > 0) or k == len(u):
            best = w
            if np.isclose(props @ w, 1):
                break
    return best


def np_sgda(prob, T, q, clip, std, lr_x, lr_y, alpha, burn_in, rng):
    X, M = prob.X, prob.M
    n, d = X.shape
    theta, dual = np.zeros(d), prob.dual_init.astype(float).copy()
    ta, da, cnt = np.zeros(d), np.zeros(M.shape[1]), 0
    key = np_sampling_key(rng)
    for t in range(T):
        rows = np_poisson_sample_range(key, t, q, 0, n)
        gx, gy = np_clipped_sums(
            X, prob.target, prob.cells, rows, theta, dual, prob.kind, prob.loss, M, clip
        )
        if std > 0:
            gx = gx + std * rng.standard_normal(d)
            gy = gy + std * rng.standard_normal(M.shape[1])
        theta = theta - lr_x * (gx / (q * n) + alpha * theta)
        dual = np_project(
            dual + lr_y * gy / (q * n),
            prob.dual_kind,
            prob.props,
            prob.bound,
            lr_y * prob.slack,
        )
        if t >= burn_in:
            cnt += 1
            ta += (theta - ta) / cnt
            da += (dual - da) / cnt
    return ta, da


def _problem(kind, rng, n=60, d=4, G=3, loss=LOGISTIC):
    X = rng.uniform(-1, 1, (n, d))
    target = rng.choice([-1.0, 1.0], n) if loss == LOGISTIC else rng.normal(size=n)
    cells = rng.integers(0, G, n)
    props = rng.dirichlet(np.ones(G)) * 0.8 + 0.2 / G
    if kind == K.WORST_GROUP:
        return LagrangianProblem(
            X, target, cells, kind, loss, np.eye(G), K.DUAL_WEIGHTS, props,
            math.inf, np.zeros(G), np.ones(G),
        )  # fmt: skip
    M = np.eye(G) - props[None, :]
    return LagrangianProblem(
        X, target, cells, kind, LOGISTIC, M, K.DUAL_BOX, props, 2.0,
        0.01 * props, np.zeros(G),
    )  # fmt: skip


CASES = [
    (K.WORST_GROUP, LOGISTIC),
    (K.WORST_GROUP, SQUARED),
    (K.FAIR_REDUCTION, LOGISTIC),
]


@pytest.mark.parametrize("kind,loss", CASES)
def test_joint_clipped_sum_equals_twin(kind, loss):
    rng = np.random.default_rng(_seed(f"jcs{kind}{loss}"))
    prob = _problem(kind, rng, loss=loss)
    m = prob.M.shape[1]
    for clip in (0.3, 2.0, math.inf):
        theta, dual = rng.normal(size=4) * 3, rng.uniform(-2, 2, m)
        rows = np.sort(rng.choice(60, 25, replace=False)).astype(np.int64)
        Gx, Gy = np.zeros(4), np.zeros(m)
        K.joint_clipped_sum(
            prob.X, prob.target, prob.cells, rows, 25, theta, dual, kind, loss,
            prob.M, clip, np.einsum("ij,ij->i", prob.X, prob.X), Gx, Gy,
            np.empty(1), np.empty(1), np.empty(1),
        )  # fmt: skip
        ex, ey = np_clipped_sums(
            prob.X, prob.target, prob.cells, rows, theta, dual, kind, loss, prob.M, clip
        )
        np.testing.assert_allclose(Gx, ex, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(Gy, ey, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dual_kind", [K.DUAL_WEIGHTS, K.DUAL_BOX])
def test_projection_equals_twin(dual_kind):
    rng = np.random.default_rng(_seed(f"proj{dual_kind}"))
    for _ in range(50):
        G = rng.integers(1, 6)
        props = rng.dirichlet(np.ones(G)) + 0.01
        u = rng.normal(scale=3, size=G)
        thresh = rng.uniform(0, 0.5, G)
        got = u.copy()
        K.project_dual(got, dual_kind, props, 1.5, thresh)
        want = np_project(u, dual_kind, props, 1.5, thresh)
        np.testing.assert_allclose(got, want, atol=1e-9)
        if dual_kind == K.DUAL_WEIGHTS:
            assert got.min() >= 0 and abs(props @ got - 1) < 1e-9


@pytest.mark.parametrize("kind,loss", CASES)
def test_sgda_loop_equals_twin_with_the_same_stream(kind, loss):
    prob = _problem(kind, np.random.default_rng(_seed(f"loop{kind}{loss}")), loss=loss)
    args = (30, 0.3, 1.0, 0.7, 0.2, 0.5, 1e-3, 10)
    d, m = prob.X.shape[1], prob.M.shape[1]
    theta, dual = np.zeros(d), prob.dual_init.astype(float).copy()
    ta, da = np.zeros(d), np.zeros(m)
    T, q, clip, std, lr_x, lr_y, alpha, burn = args
    rng = np.random.default_rng(5)  # the key first, then the noise (as solve)
    K.sgda_loop(
        prob.X, prob.target, prob.cells, kind, loss, prob.M,
        np.einsum("ij,ij->i", prob.X, prob.X), T, q, clip, std, lr_x, lr_y, alpha,
        prob.dual_kind, prob.props, prob.bound, lr_y * prob.slack, burn,
        np_sampling_key(rng), rng, theta, dual, ta, da,
    )  # fmt: skip
    et, ed = np_sgda(prob, *args, np.random.default_rng(5))
    np.testing.assert_allclose(ta, et, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(da, ed, rtol=1e-9, atol=1e-10)


def _full_statistic(prob, idx, theta, dual, clip):
    """The pre-noise pair of clipped sums over the records ``idx``."""
    m = prob.M.shape[1]
    Gx, Gy = np.zeros(prob.X.shape[1]), np.zeros(m)
    X = np.ascontiguousarray(prob.X[idx])
    K.joint_clipped_sum(
        X, prob.target[idx], prob.cells[idx], np.arange(len(idx), dtype=np.int64),
        len(idx), theta, dual, prob.kind, prob.loss, prob.M, clip,
        np.einsum("ij,ij->i", X, X), Gx, Gy, np.empty(1), np.empty(1), np.empty(1),
    )  # fmt: skip
    return np.concatenate([Gx, Gy])


@pytest.mark.parametrize("kind,loss", CASES)
def test_sensitivity_on_random_add_remove_neighbours(kind, loss):
    """Removing any one record moves the pre-noise statistic by <= clip_norm.

    The statistic is the pair of clipped sums over *every* record (the worst
    case over Poisson samples), at random public states (primal and dual);
    the other records' gradients do not depend on the removed one.
    """
    rng = np.random.default_rng(_seed(f"sens{kind}{loss}"))
    worst = 0.0
    for _ in range(30):
        prob = _problem(kind, rng, n=40, loss=loss)
        prob.X[0] = rng.choice([-1.0, 1.0], 4)  # an extreme record
        clip = float(rng.choice([0.1, 1.0, 3.0]))
        theta = rng.normal(size=4) * rng.choice([0.1, 1, 10, 1e3])
        dual = rng.uniform(-5, 5, prob.M.shape[1])
        removed = rng.integers(0, 40)
        rest = np.delete(np.arange(40), removed)
        gap = np.linalg.norm(
            _full_statistic(prob, np.arange(40), theta, dual, clip)
            - _full_statistic(prob, rest, theta, dual, clip)
        )
        assert gap <= clip * (1 + 1e-12)
        worst = max(worst, gap / clip)
    assert worst > 0.5  # the bound is approached, so the test can fail


def test_registered_and_default_of_the_estimators():
    assert SADDLE_SOLVERS["noisy-sgda"] is NoisySGDA
    assert isinstance(resolve_saddle_solver("noisy-sgda"), NoisySGDA)


def test_auto_policy_reads_only_the_public_plan():
    s = NoisySGDA()
    plan = SGDAPlan(32561, 108, 2)
    a = s.resolve_auto(plan, K.DUAL_WEIGHTS)
    assert a["batch_size"] == 256 and a["max_iter"] == math.ceil(10 * 32561 / 256)
    assert a["clip_norm"] == 3.0
    assert s.resolve_auto(plan, K.DUAL_BOX)["clip_norm"] == 2.0
    assert math.isinf(s.resolve_auto(plan, K.DUAL_WEIGHTS, private=False)["clip_norm"])
    big = s.resolve_auto(SGDAPlan(10**6, 5, 2), K.DUAL_WEIGHTS)
    assert big["batch_size"] == 1000
    small = s.resolve_auto(SGDAPlan(4320, 5, 2), K.DUAL_BOX)
    assert small["batch_size"] == 67 and small["max_iter"] == 1000  # step floor


def test_event_composes_the_prior_and_meets_the_budget():
    s = NoisySGDA(max_iter=2)
    prior = GaussianDpEvent(5.0)
    plan = SGDAPlan(5000, 10, 2, prior)
    p = s.resolve(1.0, 1e-6, plan)
    event = s.make_event(p, plan)
    assert isinstance(event, ComposedDpEvent) and event.events[0] == prior
    eps = compute_epsilon(event, 1e-6)
    assert 0.99 < eps <= 1.0
    # more noise than without the prior
    assert (
        p["noise_multiplier"]
        > s.resolve(1.0, 1e-6, SGDAPlan(5000, 10, 2))["noise_multiplier"]
    )


@pytest.mark.parametrize(
    "bad",
    [
        dict(batch_size=0),
        dict(max_iter=0),
        dict(clip_norm=-1.0),
        dict(learning_rate="big"),
        dict(dual_learning_rate=0.0),
        dict(burn_in=1.0),
    ],
)
def test_bad_solver_parameters_raise_before_data(bad):
    with pytest.raises(ValueError, match=next(iter(bad))):
        NoisySGDA(**bad).resolve(1.0, 1e-6, SGDAPlan(1000, 3, 2))
