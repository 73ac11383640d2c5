"""Vertex-sampling saddle-point solvers (paper 001): kernels, privacy, utility."""

import math

import numpy as np
import pytest
from saddle_twins import (
    np_batch_grad,
    np_coupled_log_ratio,
    np_draw,
    np_sco,
    np_smd,
    np_smd_br,
)
from scipy.special import softmax
from scipy.stats import chisquare

from dpestim.losses import LOGISTIC, MULTINOMIAL, SQUARED, SQUARED_HINGE
from dpestim.minimax import (
    FairLogisticRegression,
    MinimaxLogisticRegression,
    MinimaxRegressor,
)
from dpestim.solvers.saddle import (
    DPSGDA,
    DPSMD,
    DPSMDBR,
    BilinearGame,
    SaddlePlan,
    composed_epsilon,
    per_sample_epsilon,
    run_saddle,
)
from dpestim.solvers.saddle import _kernels as K
from dpestim.solvers.saddle._accounting import event_epsilon
from dpestim.solvers.saddle._games import planted_game
from dpestim.solvers.saddle.base import br_sample_epsilon

DELTA = 1e-6


def _linear_problem(estimator, n=40, p=3, G=2, seed=0, adversarial_row=None):
    """A minimax / fair problem built by an estimator's own ``_problem``."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.5, 1.5, (n, p))
    y = rng.integers(0, 2, n)
    a = rng.integers(0, G, n)
    if adversarial_row is not None:
        X[0], y[0], a[0] = adversarial_row
    est = estimator
    est._fit_warnings = []
    target = est._encode_target(y) if hasattr(est, "classes") else y - 0.5
    if not hasattr(est, "classes"):
        target = est._encode_target(target * 3.0)
    cells = est._cells(a, target)
    n_cells = est._n_cells(G)
    pi = np.full(n_cells, 1.0 / n_cells)
    pi_min = 0.5 / n_cells
    Xc = est._clip_X(X)
    return est._problem(Xc, target, cells, pi, pi_min)


ESTIMATORS = {
    "minimax-logistic": lambda: MinimaxLogisticRegression(classes=[0, 1]),
    "minimax-squared": lambda: MinimaxRegressor(target_bound=1.0),
    "fair-dp": lambda: FairLogisticRegression(classes=[0, 1], multiplier_bound=2.0),
    "fair-eo": lambda: FairLogisticRegression(
        classes=[0, 1], constraint="equalized_odds"
    ),
}


# -- sampling primitives --


def test_vertex_frequencies_match_softmax():
    h = np.array([0.3, -1.0, 2.0, 0.0, 1.2])
    cdf = np.empty(5)
    K.softmax_cdf(h, cdf)
    rng = np.random.default_rng(0)
    draws = np.array([K.draw_vertex(cdf, rng.random()) for _ in range(40000)])
    counts = np.bincount(draws, minlength=5)
    assert chisquare(counts, 40000 * softmax(h)).pvalue > 1e-3
    assert cdf[-1] == 1.0


def test_log_domain_softmax_survives_large_logits():
    h = np.array([1000.0, 999.0, -1000.0])
    cdf = np.empty(3)
    K.softmax_cdf(h, cdf)
    assert np.all(np.isfinite(cdf))
    np.testing.assert_allclose(np.diff(np.r_[0, cdf]), softmax(h), atol=1e-12)


# -- kernels against their NumPy twins on the same stream --


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_batch_grad_equals_twin(name):
    problem, *_ = _linear_problem(ESTIMATORS[name]())
    dx, dy = problem.dims
    rng = np.random.default_rng(1)
    xi, yi = rng.integers(0, dx, 5), rng.integers(0, dy, 3)
    rows = np.arange(7, 20)
    gx, gy = np.empty(dx), np.empty(dy)
    kind, prob = problem.kernel_args()
    K.batch_grad(
        kind, rows, xi, 5, yi, 3, prob,
        np.empty(dx // 2), np.empty(dy), gx, gy,
    )  # fmt: skip
    tx, ty = np_batch_grad(problem, rows, xi, yi)
    np.testing.assert_allclose(gx, tx, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gy, ty, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["minimax-logistic", "fair-eo", "game"])
def test_smd_loop_equals_twin(name):
    if name == "game":
        problem = planted_game(6, 60, np.random.default_rng(3))
    else:
        problem, *_ = _linear_problem(ESTIMATORS[name](), n=60)
    dims = problem.dims
    T, B, Kv, tau = 12, 5, 3, 0.4
    perm = np.random.default_rng(9).permutation(60)
    cx, cy = np.zeros(dims[0], np.int64), np.zeros(dims[1], np.int64)
    kind, prob = problem.kernel_args()
    K.smd_loop(
        kind, T, B, Kv, tau, perm, prob, dims[0], dims[1],
        np.random.default_rng(5), cx, cy,
    )  # fmt: skip
    tx, ty = np_smd(problem, T, B, Kv, tau, perm, np.random.default_rng(5), dims)
    np.testing.assert_array_equal(cx, tx)
    np.testing.assert_array_equal(cy, ty)


def test_smd_br_loop_equals_twin():
    problem, *_ = _linear_problem(ESTIMATORS["minimax-logistic"](), n=300)
    dims = problem.dims
    perm = np.random.default_rng(9).permutation(300)
    cx, cy = np.zeros(dims[0], np.int64), np.zeros(dims[1], np.int64)
    kind, prob = problem.kernel_args()
    steps = K.smd_br_loop(
        kind, 40, 2, 0.3, 0.2, perm, prob, dims[0], dims[1],
        np.random.default_rng(4), cx, cy,
    )  # fmt: skip
    tx, ty, tsteps = np_smd_br(
        problem, 40, 2, 0.3, 0.2, perm, np.random.default_rng(4), dims
    )
    assert steps == tsteps > 3
    np.testing.assert_array_equal(cx, tx)
    np.testing.assert_array_equal(cy, ty)


@pytest.mark.parametrize(
    "loss,n_outputs", [(LOGISTIC, 1), (SQUARED_HINGE, 1), (MULTINOMIAL, 3)]
)
def test_sco_loop_equals_twin(loss, n_outputs):
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (50, 4))
    if loss == MULTINOMIAL:
        Y = np.eye(3)[rng.integers(0, 3, 50)]
    else:
        Y = rng.choice([-1.0, 1.0], (50, 1))
    perm = np.random.default_rng(2).permutation(50).astype(np.int64)
    counts = np.zeros(2 * n_outputs * 4, np.int64)
    K.sco_loop(
        10, 5, 3, 4, 0.3, perm, X, Y, loss, 2.0, 1.5, 7,
        np.random.default_rng(8), counts,
    )  # fmt: skip
    tc, *_ = np_sco(
        X, Y, loss, 2.0, 1.5, 10, 5, 3, 4, 0.3, 7, perm, np.random.default_rng(8)
    )
    np.testing.assert_array_equal(counts, tc)


# -- privacy --


def test_whitehouse_calibrator_is_exact():
    for eps in (0.1, 1.0, 4.0):
        for m in (1, 10, 10**5):
            e0 = per_sample_epsilon(eps, DELTA, m)
            assert composed_epsilon(m * e0**2, DELTA) == pytest.approx(eps, rel=1e-12)
            # about twice the paper's Corollary 3.6 value for eps << ln(1/delta)
            paper = eps / (2 * math.sqrt(2 * m * math.log(1 / DELTA)))
            assert e0 >= paper


@pytest.mark.parametrize("eps", [0.3, 1.0, 8.0])
@pytest.mark.parametrize(
    "solver",
    [
        DPSMD(),
        DPSMD(max_iter="theory"),
        DPSMD(max_iter=50, n_vertex_samples=7),
        DPSMD(step_size=1e6),
        DPSMDBR(),
    ],
)
@pytest.mark.parametrize("n,L0,L2", [(10**4, 1.0, 0.0), (10**5, 10.0, 3.0)])
def test_step_size_respects_privacy_bound(solver, eps, n, L0, L2):
    plan = SaddlePlan(n, 40, 3, L0, L0, L2)
    params = solver.resolve(eps, DELTA, plan)
    event = solver.make_event(params)
    assert event_epsilon(event, DELTA) <= eps * (1 + 1e-9)
    if isinstance(solver, DPSMD):
        T, Kv, B = params["max_iter"], params["n_vertex_samples"], params["batch_size"]
        e0 = per_sample_epsilon(eps, DELTA, 2 * T * (Kv + 1))
        assert params["step_size"] <= e0 * B / (4 * L0) * (1 + 1e-12)
        assert params["eps_per_sample"] == pytest.approx(
            4 * params["step_size"] * L0 / B
        )
        assert T * B <= n
    else:
        assert params["eps_per_sample"] == pytest.approx(
            br_sample_epsilon(
                params["step_size"], params["alpha_batch"], params["tg_max_level"], L0
            )
        )


def test_br_sensitivity_constant_is_the_corrected_one():
    tau, alpha, M, L0 = 0.03, 0.004, 3, 2.0
    C_M = 2 - 2.0**-M
    brute = max(
        2 * tau * L0 * (4 * C_M * 2**N + 2) / max(1, math.ceil(2**N / alpha))
        for N in range(M + 1)
    )
    assert br_sample_epsilon(tau, alpha, M, L0) == pytest.approx(brute)
    # more than twice the paper's 9 tau alpha L0
    assert br_sample_epsilon(tau, alpha, M, L0) > 2 * 9 * tau * alpha * L0


def test_epsilon_range_is_enforced():
    plan = SaddlePlan(1000, 4, 2, 1.0, 1.0, 0.0)
    with pytest.raises(ValueError, match="8 ln"):
        DPSMD().resolve(8 * math.log(1 / 1e-2) + 1, 1e-2, plan)
    with pytest.raises(ValueError, match="delta"):
        DPSMD().resolve(1.0, 0.0, plan)


def _adversarial_rows(p, rng):
    for _ in range(3):
        x = rng.choice([-5.0, 5.0], p)  # beyond feature_bound: clipped
        yield x, int(rng.integers(0, 2)), int(rng.integers(0, 2))


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_exponential_mechanism_sensitivity_on_neighbours(name):
    """Coupled neighbours: log-probabilities move by at most 4 tau L0 / B."""
    rng = np.random.default_rng(11)
    n, T, B, Kv, tau = 40, 8, 5, 3, 0.05
    perm = rng.permutation(n)
    for adv in _adversarial_rows(3, rng):
        problem, L0, *_ = _linear_problem(ESTIMATORS[name](), n=n)
        problem2, L0b, *_ = _linear_problem(
            ESTIMATORS[name](), n=n, adversarial_row=adv
        )
        assert L0 == L0b  # public: does not depend on the data
        worst = np_coupled_log_ratio(
            problem, problem2, T, B, Kv, tau, perm, np.random.default_rng(3),
            problem.dims,
        )  # fmt: skip
        bound = 4 * tau * L0 / B
        assert max(worst) <= bound * (1 + 1e-9)
        assert max(worst) > 0  # the neighbour was actually used


def test_sco_sensitivity_of_running_mean():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (30, 3))
    Y = rng.choice([-1.0, 1.0], (30, 1))
    X2, Y2 = X.copy(), Y.copy()
    X2[4], Y2[4] = [1.0, -1.0, 1.0], -Y[4]
    perm = rng.permutation(30)
    R, clamp, tau, B = 2.0, 1.0, 0.2, 3
    L0 = R * 1.0 * clamp
    args = (LOGISTIC, R, clamp, 10, B, 2, 2, tau, 1, perm)
    _, w1, drawn = np_sco(X, Y, *args, np.random.default_rng(5))
    _, w2, _ = np_sco(X2, Y2, *args, np.random.default_rng(5), forced=drawn)
    worst = max(np.abs(np.log(a) - np.log(b)).max() for a, b in zip(w1, w2))
    assert 0 < worst <= 4 * tau * L0 / B


def test_br_control_flow_is_data_independent():
    res = []
    for seed in (0, 1):
        problem, *_ = _linear_problem(ESTIMATORS["fair-dp"](), n=400, seed=seed)
        dims = problem.dims
        cx, cy = np.zeros(dims[0], np.int64), np.zeros(dims[1], np.int64)
        kind, prob = problem.kernel_args()
        res.append(
            K.smd_br_loop(
                kind,
                60,
                3,
                0.2,
                0.1,
                np.arange(400),
                prob,
                *dims,
                np.random.default_rng(7),
                cx,
                cy,
            )  # fmt: skip
        )
    assert res[0] == res[1]


def test_dp_sgda_event_and_baseline_limit():
    game = planted_game(10, 20000, np.random.default_rng(0))
    plan = SaddlePlan(20000, 10, 10, game.lipschitz, game.lipschitz, 0.0)
    res = run_saddle(DPSGDA(), game, plan, 1.0, DELTA, np.random.default_rng(0))
    assert res.epsilon <= 1.0 + 1e-6
    free = run_saddle(
        DPSGDA(learning_rate=1.0), game, plan, math.inf, DELTA, np.random.default_rng(0)
    )
    assert free.epsilon == math.inf
    assert game.gap(free.x, free.y) < 0.1


# -- Experiment D: bias-reduced gradient --


def test_bias_reduced_gradient_is_unbiased():
    """E[w_N (g+ - g-) + g1] = E grad at the mean of 2^(M+1) samples."""
    problem, *_ = _linear_problem(ESTIMATORS["minimax-logistic"](), n=20, p=2)
    dx, dy = problem.dims
    kind, prob = problem.kernel_args()
    rows = np.arange(20)
    px = softmax(np.random.default_rng(0).normal(size=dx))
    py = softmax(np.random.default_rng(1).normal(size=dy))
    M, C_M = 2, 2 - 0.25
    rng = np.random.default_rng(2)
    bufs = (np.empty(dx // 2), np.empty(dy))

    def grad(xi, yi):
        gx, gy = np.empty(dx), np.empty(dy)
        K.batch_grad(kind, rows, xi, len(xi), yi, len(yi), prob, *bufs, gx, gy)
        return np.concatenate([gx, gy])

    draws = 8000
    est, ref = [], []
    for _ in range(draws):
        N = K.truncated_geometric(rng, M, C_M)
        xi, yi = np_draw(px, rng, 2 ** (N + 1)), np_draw(py, rng, 2 ** (N + 1))
        g = C_M * 2**N * (grad(xi, yi) - grad(xi[: 2**N], yi[: 2**N]))
        est.append(g + grad(xi[:1], yi[:1]))
        ref.append(grad(np_draw(px, rng, 2 ** (M + 1)), np_draw(py, rng, 2 ** (M + 1))))
    est, ref = np.array(est), np.array(ref)
    se = np.sqrt(est.var(0) / draws + ref.var(0) / draws)
    assert np.all(np.abs(est.mean(0) - ref.mean(0)) <= 5 * se + 1e-9)


def test_truncated_geometric_pmf():
    rng = np.random.default_rng(0)
    M, C_M = 3, 2 - 2.0**-3
    draws = [K.truncated_geometric(rng, M, C_M) for _ in range(40000)]
    pmf = np.array([2.0**-k / C_M for k in range(M + 1)])
    assert pmf.sum() == pytest.approx(1.0)
    assert chisquare(np.bincount(draws, minlength=M + 1), 40000 * pmf).pvalue > 1e-3


# -- Experiment A and direction --


def _game_gap(d, n, eps, seed=0, solver=None):
    rng = np.random.default_rng(seed)
    game = planted_game(d, n, rng)
    plan = SaddlePlan(n, d, d, game.lipschitz, game.lipschitz, 0.0)
    res = run_saddle(solver or DPSMD(max_iter="theory"), game, plan, eps, DELTA, rng)
    return game.gap(res.x, res.y)


def test_experiment_a_assertions():
    assert _game_gap(10, 10**5, math.inf) < 0.03
    g5 = _game_gap(10, 10**5, 1.0)
    assert 0.10 <= g5 <= 0.20
    assert g5 < 0.5 * _game_gap(10, 10**4, 1.0)
    assert _game_gap(1000, 10**5, 4.0) / _game_gap(10, 10**5, 4.0) < 3


def test_weak_duality_on_planted_game():
    for eps in (1.0, math.inf):
        assert _game_gap(10, 2000, eps) >= -1e-9


def test_ascent_direction_on_pure_equilibrium():
    # the minimiser prefers row 1; against it the maximiser prefers column 1
    A0 = np.array([[0.0, 1.0], [-1.0, 0.0]])
    game = BilinearGame(A0, np.zeros(2), np.zeros(2), np.zeros(20000))
    plan = SaddlePlan(20000, 2, 2, 1.0, 1.0, 0.0)
    res = run_saddle(DPSMD(), game, plan, math.inf, DELTA, np.random.default_rng(0))
    assert res.x[1] > 0.9 and res.y[1] > 0.9


def test_squared_loss_problem_constants_are_public():
    _, L0, L1, L2 = _linear_problem(ESTIMATORS["minimax-squared"]())
    _, L0b, *_ = _linear_problem(ESTIMATORS["minimax-squared"](), seed=5)
    assert L0 == L0b > 0 and L2 > 0
    assert SQUARED == _linear_problem(ESTIMATORS["minimax-squared"]())[0].loss
