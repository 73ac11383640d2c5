"""Private class counts, the class prior (issue 25, item 1 third bullet)."""

import math
from dataclasses import replace

import dp_accounting
import numpy as np
import pytest

from dpestim import LinearSVC, LogisticRegression
from dpestim.preprocessing import _fit_scales as S
from dpestim.solvers import ERMPlan, resolve_solver
from dpestim.solvers.base import BaseSolver


def _imbalanced(n=6000, d=4, rate=0.1, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X[:, 0] + rng.normal(size=n) > np.quantile(X[:, 0], 1 - rate) + 0.5).astype(
        int
    )
    return X, y


def _multiclass(n=6000, d=4, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = rng.choice(3, size=n, p=[0.6, 0.3, 0.1])
    X[:, 0] += y
    return X, y


def _laplace_leaves(event):
    if isinstance(event, dp_accounting.ComposedDpEvent):
        return [leaf for e in event.events for leaf in _laplace_leaves(e)]
    return [event] if isinstance(event, dp_accounting.LaplaceDpEvent) else []


# -- the mechanism -------------------------------------------------------------


@pytest.mark.parametrize("relation", ["add_or_remove_one", "replace_one"])
def test_class_count_sensitivity_brute_force(relation):
    """The count vector moves by at most its stated L1 sensitivity (and reaches it)."""
    rng = np.random.default_rng(3)
    bound = S.COUNT_L1_SENSITIVITY[relation]
    worst = 0.0
    for _ in range(500):
        K = int(rng.integers(2, 6))
        n = int(rng.integers(1, 30))
        codes = rng.integers(K, size=n)
        if relation == "add_or_remove_one":
            other = (
                np.append(codes, rng.integers(K))
                if rng.random() < 0.5
                else np.delete(codes, rng.integers(n))
            )
        else:
            other = codes.copy()
            other[rng.integers(n)] = rng.integers(K)
        diff = np.abs(S.class_counts(codes, K) - S.class_counts(other, K)).sum()
        worst = max(worst, float(diff))
    assert worst <= bound
    assert worst == bound  # the stated sensitivity is attained: not loose by design


@pytest.mark.parametrize("relation", ["add_or_remove_one", "replace_one"])
def test_class_count_noise_scale(relation):
    """Laplace noise of scale L1-sensitivity / epsilon on every count."""
    rng = np.random.default_rng(0)
    codes = np.zeros(10, dtype=np.int64)
    draws = np.array(
        [S.private_class_counts(codes, 2, 0.5, relation, rng) for _ in range(20000)]
    )
    noise = draws - np.array([10.0, 0.0])
    scale = S.COUNT_L1_SENSITIVITY[relation] / 0.5
    # mean absolute deviation of a Laplace(b) is b
    assert np.allclose(np.abs(noise).mean(axis=0), scale, rtol=0.03)


def test_plan_splits_share_with_the_histogram():
    plan = S.plan_estimates(1.0, 30000, share=0.05, rows=True, targets=0, classes=True)
    assert plan.row_epsilon == pytest.approx(0.025)
    assert plan.class_epsilon == pytest.approx(0.025)
    assert plan.epsilon == pytest.approx(0.05)
    events = plan.events()
    assert events[-1] == dp_accounting.LaplaceDpEvent(1.0 / 0.025)
    alone = S.plan_estimates(1.0, 1000, share=0.05, rows=True, targets=0, classes=True)
    assert alone.row_epsilon is None  # median infeasible at this n: dropped
    assert alone.class_epsilon == pytest.approx(0.05)  # the histogram keeps it all


def test_histogram_dropped_when_too_noisy():
    """Noise std sqrt(2) Delta / eps_h above 10% of n / K: not run, costs nothing."""
    kw = dict(share=0.05, rows=False, targets=0, classes=True)
    # n=300, K=2: std 28.3 > 15
    small = S.plan_estimates(1.0, 300, **kw)
    assert small.class_epsilon is None and small.events() == []
    assert "not estimated" in small.notes["class_prior"]
    # replace-one doubles the sensitivity: 1000 rows suffice for 1, not for 2
    assert S.plan_estimates(1.0, 1000, **kw).class_epsilon is not None
    assert S.plan_estimates(1.0, 1000, count_sensitivity=2.0, **kw).events() == []
    # required (class_weight="balanced"): run whatever the noise
    req = S.plan_estimates(1.0, 300, classes_required=True, **kw)
    assert req.class_epsilon == pytest.approx(0.05)
    X, y = _imbalanced(n=300)
    clf = LogisticRegression(
        utility_check=None, epsilon=1.0, classes=[0, 1], random_state=0
    ).fit(X, y)
    assert not _laplace_leaves(clf.dp_event_) and clf.class_prior_ is None
    assert "not estimated" in clf.hyperparameters_["class_prior"]


# -- the estimators: accounting ------------------------------------------------


def test_histogram_event_in_dp_event_and_report():
    X, y = _imbalanced()
    clf = LogisticRegression(
        utility_check=None,
        feature_centring=None,  # the histogram's Laplace release alone
        epsilon=1.0,
        classes=[0, 1],
        random_state=0,
    ).fit(X, y)
    leaves = _laplace_leaves(clf.dp_event_)
    assert leaves == [dp_accounting.LaplaceDpEvent(1.0 / 0.025)]
    report = clf.privacy_report()
    assert "Laplace histogram of the class counts" in report.estimates
    assert "5.0% of epsilon=1" in report.estimates
    assert "private (Laplace histogram" in clf.hyperparameters_["class_prior"]
    assert clf.epsilon_ <= 1.0


@pytest.mark.parametrize(
    "solver, delta",
    [
        ("dp-sgd", 1e-5),
        ("adp-adagrad", 1e-5),
        ("dp-lssgd", 1e-5),
        ("dp-gd", 0.0),  # Laplace noise, replace-one, pure DP
        ("dp-nag", 1e-5),
    ],
)
@pytest.mark.parametrize("epsilon", [0.5, 2.0])
def test_epsilon_never_above_request(solver, delta, epsilon):
    X, y = _imbalanced(n=3000)
    clf = LogisticRegression(
        epsilon=epsilon, delta=delta, classes=[0, 1], solver=solver, random_state=1
    ).fit(X, y)
    assert _laplace_leaves(clf.dp_event_), "the histogram must be accounted"
    assert clf.epsilon_ <= epsilon
    assert clf.class_prior_ is not None


def test_initial_point_is_not_part_of_the_event():
    """The solver's event (and calibration key) ignore the initial intercept."""
    plan = ERMPlan(
        n_samples=1000,
        n_features=3,
        n_outputs=1,
        loss=0,
        alpha=1e-4,
        fit_intercept=True,
        clip_norm=1.0,
        max_iter=5,
        batch_size=50,
        learning_rate=0.5,
    )
    moved = replace(plan, intercept_init=(-2.5,))
    for name in ["dp-sgd", "adp-sgd", "dp-lssgd", "dp-gd", "dp-hb"]:
        solver = resolve_solver(name)
        assert solver.make_event(1.3, plan) == solver.make_event(1.3, moved)
        assert solver.calibration_key(plan) == solver.calibration_key(moved)
    assert plan == moved and hash(plan) == hash(moved) and repr(plan) == repr(moved)
    W, b = BaseSolver.initial_point(moved)
    assert not W.any() and b.tolist() == [-2.5]
    no_intercept = replace(moved, fit_intercept=False)
    assert BaseSolver.initial_point(no_intercept)[1].tolist() == [0.0]


def test_public_prior_keeps_the_solver_event():
    """A given (public) prior costs nothing: same event and epsilon as none."""
    X, y = _imbalanced(n=3000)
    # the column balance's Laplace releases aside (it runs at this epsilon n)
    kw = dict(epsilon=1.0, classes=[0, 1], random_state=0, feature_balance=None)
    none = LogisticRegression(utility_check=None, class_prior=None, **kw).fit(X, y)
    given = LogisticRegression(utility_check=None, class_prior=[0.9, 0.1], **kw).fit(
        X, y
    )
    assert given.dp_event_ == none.dp_event_
    assert given.epsilon_ == none.epsilon_
    assert not _laplace_leaves(none.dp_event_)
    np.testing.assert_allclose(given.class_prior_, [0.9, 0.1])
    assert none.class_prior_ is None


@pytest.mark.parametrize("solver", ["dp-scd", "seq-dp-scd", "objective-perturbation"])
def test_solvers_without_initial_point_estimate_nothing(solver):
    X, y = _imbalanced(n=3000)
    kw = dict(epsilon=1.0, classes=[0, 1], random_state=0, solver=solver)
    kw["feature_balance"] = None  # its Laplace releases aside
    auto = (
        LinearSVC(utility_check=None, **kw).fit(X, y)
        if solver != "objective-perturbation"
        else None
    )
    if auto is None:
        auto = LogisticRegression(utility_check=None, **kw).fit(X, y)
        off = LogisticRegression(utility_check=None, class_prior=None, **kw).fit(X, y)
    else:
        off = LinearSVC(utility_check=None, class_prior=None, **kw).fit(X, y)
    assert not _laplace_leaves(auto.dp_event_)
    assert auto.dp_event_ == off.dp_event_
    assert auto.class_prior_ is None
    assert "not used" in auto.hyperparameters_["class_prior"]
    np.testing.assert_array_equal(auto.coef_, off.coef_)


def test_fixed_noise_multiplier_estimates_nothing():
    X, y = _imbalanced(n=3000)
    clf = LogisticRegression(
        epsilon=None, noise_multiplier=2.0, classes=[0, 1], random_state=0
    ).fit(X, y)
    assert not _laplace_leaves(clf.dp_event_)
    assert clf.class_prior_ is None
    assert "not estimated" in clf.hyperparameters_["class_prior"]


# -- the prior intercept -------------------------------------------------------


class _Capture:
    """Records the plan handed to ``solve`` (monkeypatched)."""

    def __init__(self, monkeypatch, cls):
        self.plans = []
        original = cls.solve

        def solve(solver, X, Y, plan, nm, rng):
            self.plans.append(plan)
            return original(solver, X, Y, plan, nm, rng)

        monkeypatch.setattr(cls, "solve", solve)


def test_prior_at_epsilon_inf_is_the_log_odds(monkeypatch):
    from dpestim.solvers.sgd import DPSGD

    cap = _Capture(monkeypatch, DPSGD)
    X, y = _imbalanced()
    clf = LogisticRegression(epsilon=math.inf, classes=[0, 1], random_state=0)
    clf.fit(X, y)
    p = y.mean()
    np.testing.assert_allclose(clf.class_prior_, [1 - p, p])
    assert cap.plans[-1].intercept_init == pytest.approx((math.log(p / (1 - p)),))
    assert "exact" in clf.hyperparameters_["class_prior"]


def test_prior_multinomial_and_hinge(monkeypatch):
    from dpestim.solvers.sgd import DPSGD

    cap = _Capture(monkeypatch, DPSGD)
    X, y = _multiclass()
    p = np.bincount(y) / y.shape[0]
    LogisticRegression(epsilon=math.inf, classes=[0, 1, 2], random_state=0).fit(X, y)
    logp = np.log(p)
    np.testing.assert_allclose(cap.plans[-1].intercept_init, logp - logp.mean())
    LinearSVC(epsilon=math.inf, classes=[0, 1, 2], random_state=0).fit(X, y)
    np.testing.assert_allclose(cap.plans[-1].intercept_init, 2 * p - 1)
    yb = (y == 2).astype(int)
    LinearSVC(epsilon=math.inf, classes=[0, 1], loss="hinge", random_state=0).fit(X, yb)
    assert cap.plans[-1].intercept_init == pytest.approx((2 * yb.mean() - 1,))


@pytest.mark.filterwarnings("ignore::dpestim.exceptions.UtilityWarning")
@pytest.mark.parametrize("solver", ["dp-sgd", "adp-sgd", "dp-lssgd", "dp-gd", "dp-nag"])
def test_solver_starts_at_the_prior(solver):
    """On rows of zeros the intercept-only optimum is a fixed point: the run stays."""
    rng = np.random.default_rng(0)
    n = 2000
    X = np.zeros((n, 3))
    y = (rng.random(n) < 0.2).astype(int)
    p = y.mean()
    clf = LogisticRegression(
        epsilon=math.inf,
        classes=[0, 1],
        solver=solver,
        random_state=0,
        max_iter=2,
        batch_size=n,  # full batch: the exact gradient, zero at the prior
        feature_scale=None,
    ).fit(X, y)
    assert clf.intercept_[0] == pytest.approx(math.log(p / (1 - p)), abs=1e-9)
    off = LogisticRegression(
        epsilon=math.inf,
        classes=[0, 1],
        solver=solver,
        random_state=0,
        max_iter=2,
        batch_size=n,  # full batch: the exact gradient, zero at the prior
        feature_scale=None,
        class_prior=None,
    ).fit(X, y)
    assert off.intercept_[0] != pytest.approx(clf.intercept_[0], abs=1e-3)


def test_private_prior_is_near_the_truth():
    X, y = _imbalanced(n=20000, rate=0.05)
    clf = LogisticRegression(epsilon=1.0, classes=[0, 1], random_state=4).fit(X, y)
    assert abs(clf.class_prior_[1] - y.mean()) < 0.01
    assert clf.predict(X).any()  # not the constant majority predictor


# -- validation, leaks ---------------------------------------------------------


@pytest.mark.parametrize(
    "prior, match",
    [
        ([0.5, 0.3, 0.2], "class_prior"),
        ([1.0, -0.1], "class_prior"),
        ([0.5, np.nan], "class_prior"),
        ([[0.5, 0.5]], "class_prior"),
        ("balanced", "class_prior"),
    ],
)
def test_class_prior_validation(prior, match):
    X, y = _imbalanced(n=500)
    with pytest.raises(ValueError, match=match):
        LogisticRegression(epsilon=1.0, classes=[0, 1], class_prior=prior).fit(X, y)


def test_nothing_private_is_stored():
    """Only the DP release (class_prior_) reaches the estimator, never counts."""
    X, y = _imbalanced(n=5000)
    clf = LogisticRegression(epsilon=1.0, classes=[0, 1], random_state=0).fit(X, y)
    exact = np.bincount(y, minlength=2).astype(float)
    for name, value in vars(clf).items():
        if isinstance(value, np.ndarray) and value.shape == (2,):
            assert not np.allclose(value, exact), name
            assert not np.allclose(value, exact / exact.sum()), name
    assert clf._scale_fit is None
    # the released proportions are the noisy ones
    assert not np.allclose(clf.class_prior_, exact / exact.sum(), rtol=0, atol=1e-12)


# -- class_weight (item 3) -----------------------------------------------------


def _weighted_problem(loss, rng, n=40, d=6, sparse=False, scale=1.0):
    from twins import make_targets

    from dpestim.losses import HINGE, LOGISTIC, SQUARED_HINGE

    K = 1 if loss in (LOGISTIC, HINGE, SQUARED_HINGE) else 3
    X = rng.normal(size=(n, d)) * scale
    if sparse:
        import scipy.sparse as sp

        X[rng.random((n, d)) < 0.6] = 0.0
        X = sp.csr_matrix(X)
    Y = make_targets(loss, n, K, rng)
    W = rng.normal(size=(K, d))
    b = rng.normal(size=K)
    return X, Y, W, b


def _weighted_kernel_sum(X, Y, rows, W, b, loss, clip, fit_intercept, weights):
    import scipy.sparse as sp

    from dpestim._kernels import (
        weighted_clipped_grad_sum,
        weighted_clipped_grad_sum_csr,
    )

    K, d = W.shape
    G, g0 = np.zeros((K, d)), np.zeros(K)
    rows = np.asarray(rows, dtype=np.int64)
    z, dz = np.empty(K), np.empty(K)
    if sp.issparse(X):
        sq = np.asarray(X.multiply(X).sum(axis=1)).ravel()
        weighted_clipped_grad_sum_csr(
            X.data, X.indices, X.indptr, Y, rows, rows.shape[0], W, b, loss,
            clip, sq, fit_intercept, G, g0, z, dz, weights,
        )  # fmt: skip
    else:
        sq = np.einsum("ij,ij->i", X, X)
        weighted_clipped_grad_sum(
            X, Y, rows, rows.shape[0], W, b, loss, clip, sq, fit_intercept, G,
            g0, z, dz, weights,
        )  # fmt: skip
    return G, g0


def _losses():
    from dpestim.losses import HINGE, LOGISTIC, MULTINOMIAL, SQUARED_HINGE

    return [LOGISTIC, HINGE, SQUARED_HINGE, MULTINOMIAL]


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("loss_index", range(4))
def test_weighted_kernel_matches_numpy_twin(loss_index, sparse):
    from twins import np_clipped_grad_sum

    loss = _losses()[loss_index]
    rng = np.random.default_rng(5)
    X, Y, W, b = _weighted_problem(loss, rng, n=300, sparse=sparse)
    weights = rng.uniform(0.0, 1.0, size=300)
    rows = rng.choice(300, 200, replace=True)  # several 128-row blocks
    for clip in (0.1, 1.0, np.inf):
        for fit_intercept in (True, False):
            G, g0 = _weighted_kernel_sum(
                X, Y, rows, W, b, loss, clip, fit_intercept, weights
            )
            G2, g02 = np_clipped_grad_sum(
                X, Y, rows, W, b, loss, clip, fit_intercept, weights
            )
            np.testing.assert_allclose(G, G2, rtol=1e-10, atol=1e-12)
            np.testing.assert_allclose(g0, g02, rtol=1e-10, atol=1e-12)
    # empty weights: no weighting
    G, g0 = _weighted_kernel_sum(X, Y, rows, W, b, loss, 0.5, True, np.empty(0))
    G2, g02 = np_clipped_grad_sum(X, Y, rows, W, b, loss, 0.5, True)
    np.testing.assert_allclose(G, G2, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("relation", ["add_or_remove_one", "replace_one"])
@pytest.mark.parametrize("sparse", [False, True])
def test_weighted_sum_sensitivity_brute_force(relation, sparse):
    """Class-weighted clipped sums of neighbouring datasets differ by <= clip
    (add/remove) or 2 clip (replace-one): weights in [0, 1] after clipping."""
    from dpestim.solvers.base import row_class_codes

    rng = np.random.default_rng(7)
    bound = 1.0 if relation == "add_or_remove_one" else 2.0
    worst = 0.0
    for trial in range(80):
        loss = _losses()[trial % 4]
        clip = float(rng.choice([0.01, 0.5, 3.0]))
        scale = float(rng.choice([1e-2, 1.0, 1e3]))
        X, Y, W, b = _weighted_problem(loss, rng, n=25, sparse=sparse, scale=scale)
        K = max(Y.shape[1], 2)
        raw = rng.uniform(0.01, 20.0, size=K)  # any user / balanced weights
        cw = raw / raw.max()  # the normalisation the estimator applies
        fit_intercept = bool(trial % 2)
        if relation == "add_or_remove_one":
            full = np.arange(X.shape[0])
            other = np.delete(full, rng.integers(X.shape[0]))
            wts = cw[row_class_codes(Y)]
            G, g0 = _weighted_kernel_sum(
                X, Y, full, W, b, loss, clip, fit_intercept, wts
            )
            H, h0 = _weighted_kernel_sum(
                X, Y, other, W, b, loss, clip, fit_intercept, wts
            )
        else:
            X2 = X.toarray() if sparse else X.copy()
            Y2 = Y.copy()
            i, j = rng.integers(X.shape[0], size=2)
            X2[i] = X2[j] * 5.0  # another record, another class
            if sparse:
                import scipy.sparse as sp

                X2 = sp.csr_matrix(X2)
            Y2[i] = Y[(j + 1) % Y.shape[0]]
            rows = np.arange(X.shape[0])
            G, g0 = _weighted_kernel_sum(
                X, Y, rows, W, b, loss, clip, fit_intercept, cw[row_class_codes(Y)]
            )
            H, h0 = _weighted_kernel_sum(
                X2, Y2, rows, W, b, loss, clip, fit_intercept, cw[row_class_codes(Y2)]
            )
        diff = np.sqrt(np.sum((G - H) ** 2) + np.sum((g0 - h0) ** 2))
        worst = max(worst, diff / clip)
        assert diff <= bound * clip * (1 + 1e-9)
    assert worst > 0.5 * bound  # not vacuous: the weighted bound is approached


@pytest.mark.parametrize("sparse", [False, True])
def test_dp_sgd_with_weights_and_prior_equals_numpy_twin(sparse):
    """The solver with plan.class_weights and intercept_init, against the twin."""
    import scipy.sparse as sp
    from twins import make_targets, np_noisy_sgd

    from dpestim.losses import LOGISTIC
    from dpestim.solvers import DPSGD

    rng = np.random.default_rng(0)
    plan = _erm_plan(60, 4, LOGISTIC, alpha=0.01, clip_norm=0.7, batch_size=10)
    plan = replace(plan, class_weights=(0.25, 1.0), intercept_init=(-1.5,))
    X = rng.normal(size=(60, 4))
    Y = make_targets(LOGISTIC, 60, 1, rng)
    solver = DPSGD()
    res = solver.solve(
        sp.csr_matrix(X) if sparse else X, Y, plan, 1.3, np.random.default_rng(42)
    )
    T = solver.n_steps(plan)
    weights = np.where(Y[:, 0] > 0, 1.0, 0.25)
    W, b = np_noisy_sgd(
        X, Y, LOGISTIC, True, 0.7, 1.3 * 0.7, solver.sampling_prob(plan),
        plan.learning_rate, plan.alpha, T, np.random.default_rng(42),
        weights=weights, b0=[-1.5],
    )  # fmt: skip
    np.testing.assert_allclose(res.coef, W, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(res.intercept, b, rtol=1e-9, atol=1e-12)
    assert res.dp_event == solver.make_event(1.3, replace(plan, class_weights=None))


def _erm_plan(n, d, loss, **kw):
    kw = {"alpha": 1e-4, "clip_norm": 1.0, "max_iter": 2, "learning_rate": 0.5, **kw}
    return ERMPlan(
        n_samples=n, n_features=d, n_outputs=1, loss=loss, fit_intercept=True, **kw
    )


def test_plan_refuses_weights_above_one():
    from dpestim.losses import LOGISTIC
    from dpestim.solvers import DPSGD

    plan = _erm_plan(20, 2, LOGISTIC, batch_size=5)
    X, Y = np.ones((20, 2)), np.ones((20, 1))
    with pytest.raises(ValueError, match="class_weights"):
        DPSGD().solve(
            X, Y, replace(plan, class_weights=(1.0, 2.0)), 1.0, np.random.default_rng()
        )


def test_balanced_at_epsilon_inf_has_sklearns_weights():
    from sklearn.utils.class_weight import compute_class_weight

    X, y = _imbalanced(n=3000, rate=0.1)
    clf = LogisticRegression(
        epsilon=math.inf, classes=[0, 1], class_weight="balanced", random_state=0
    ).fit(X, y)
    np.testing.assert_allclose(
        clf.class_weight_,
        compute_class_weight("balanced", classes=np.array([0, 1]), y=y),
    )
    assert "balanced" in clf.hyperparameters_["class_weight"]


def test_balanced_uses_the_one_release():
    X, y = _imbalanced(n=6000, rate=0.05)
    clf = LogisticRegression(
        epsilon=1.0,
        classes=[0, 1],
        class_weight="balanced",
        random_state=0,
        utility_check=None,  # the histogram's release alone
        feature_centring=None,
    ).fit(X, y)
    assert len(_laplace_leaves(clf.dp_event_)) == 1  # prior and weights: one draw
    assert clf.epsilon_ <= 1.0
    counts = np.bincount(y)
    # the weights come from the noisy counts, not the exact ones
    exact = counts.sum() / (2 * counts)
    assert not np.allclose(clf.class_weight_, exact, rtol=0, atol=1e-12)
    np.testing.assert_allclose(clf.class_weight_, exact, rtol=0.2)
    np.testing.assert_allclose(
        clf.class_weight_[0] / clf.class_weight_[1],
        clf.class_prior_[1] / clf.class_prior_[0],
    )


def test_balanced_weights_floor_counts_at_the_noise():
    """A class listed in ``classes`` but absent from the data: its noisy count
    is floored at BALANCED_NOISE_FLOOR standard deviations of the histogram's
    noise (public), not at 1, so its weight stays bounded and the model
    rarely predicts it (with the floor at 1: weights 39-746, the absent
    class predicted for 26-44% of rows)."""
    from dpestim.linear_model._class_balance import BALANCED_NOISE_FLOOR

    rng = np.random.default_rng(5)
    n = 3000
    X = rng.normal(size=(2 * n, 6))
    y = np.argmax(X[:, :3] + 0.5 * rng.normal(size=(2 * n, 3)), axis=1)
    clf = LogisticRegression(
        epsilon=1.0,
        classes=[0, 1, 2, 3],
        class_weight="balanced",
        random_state=0,
        utility_check=None,  # the histogram's release alone
        feature_balance=None,
    ).fit(X[:n], y[:n])
    eps_h = _laplace_leaves(clf.dp_event_)
    assert len(eps_h) == 1
    sd = math.sqrt(2.0) * float(eps_h[0].noise_multiplier)  # L1 sensitivity 1
    assert clf.class_weight_[3] <= n * 1.2 / (4 * BALANCED_NOISE_FLOOR * sd)
    assert np.mean(clf.predict(X[n:]) == 3) < 0.1
    assert "floored" in clf.hyperparameters_["class_weight"]


def test_balanced_runs_even_when_the_prior_alone_would_not():
    X, y = _imbalanced(n=300, rate=0.3)
    clf = LogisticRegression(
        epsilon=1.0, classes=[0, 1], class_weight="balanced", random_state=0
    ).fit(X, y)
    assert _laplace_leaves(clf.dp_event_) and clf.epsilon_ <= 1.0


@pytest.mark.parametrize(
    "solver, delta, Est",
    [
        ("dp-sgd", 1e-5, LogisticRegression),
        ("dp-gd", 0.0, LogisticRegression),  # Laplace, pure DP (solver="auto")
        ("dp-nag", 1e-5, LogisticRegression),
        ("dp-masg-opt", 0.0, LogisticRegression),
        ("dp-scd", 1e-5, LogisticRegression),
        ("dp-scd", 1e-5, LinearSVC),
        ("seq-dp-scd", 1e-5, LinearSVC),
    ],
)
def test_class_weight_keeps_the_solver_event(solver, delta, Est):
    """Weights <= 1 after clipping: the solver's event is the unweighted one."""
    X, y = _imbalanced(n=3000)
    kw = dict(
        epsilon=1.0, delta=delta, classes=[0, 1], random_state=0, class_prior=None,
        solver=solver, utility_check=None,  # a weighted fit runs no check
    )  # fmt: skip
    none = Est(**kw).fit(X, y)
    weighted = Est(class_weight={0: 1.0, 1: 7.0}, **kw).fit(X, y)
    assert weighted.dp_event_ == none.dp_event_
    assert weighted.epsilon_ == none.epsilon_ <= 1.0
    assert not np.allclose(weighted.coef_, none.coef_)
    # unit weights run the unweighted arithmetic: bit for bit
    ones = Est(class_weight={0: 1.0, 1: 1.0}, **kw).fit(X, y)
    np.testing.assert_array_equal(ones.coef_, none.coef_)
    np.testing.assert_array_equal(ones.intercept_, none.intercept_)


def test_auto_pure_dp_default_takes_balanced():
    """solver="auto" with delta=0 (dp-gd, Laplace) takes class_weight="balanced"."""
    from sklearn.metrics import balanced_accuracy_score

    X, y = _imbalanced(n=20000, rate=0.04)
    kw = dict(epsilon=1.0, delta=0.0, classes=[0, 1], random_state=0)
    kw["feature_centring"] = None  # the histogram's Laplace release alone
    plain = LogisticRegression(**kw).fit(X, y)
    bal = LogisticRegression(class_weight="balanced", utility_check=None, **kw)
    bal = bal.fit(X, y)
    assert bal.solver_.name == "dp-gd" and bal.epsilon_ <= 1.0 and bal.delta_ == 0
    assert len(_laplace_leaves(bal.dp_event_)) == 1  # the histogram, composed
    assert "private (Laplace histogram" in bal.hyperparameters_["class_weight"]
    assert balanced_accuracy_score(y, bal.predict(X)) > 0.1 + balanced_accuracy_score(
        y, plain.predict(X)
    )


@pytest.mark.parametrize(
    "weight, match",
    [
        ({0: 1.0, 2: 3.0}, "class_weight has a key 2"),
        ({0: -1.0}, r"class_weight\[0\] must be a finite number >= 0"),
        ({1: float("nan")}, r"class_weight\[1\]"),
        ({1: "a"}, r"class_weight\[1\]"),
        ({0: 0.0, 1: 0.0}, "class_weight must give some class a weight"),
        ("balance", "class_weight"),
        ([1.0, 2.0], "class_weight"),
    ],
)
def test_class_weight_validation(weight, match):
    X, y = _imbalanced(n=500)
    with pytest.raises(ValueError, match=match):
        LogisticRegression(epsilon=1.0, classes=[0, 1], class_weight=weight).fit(X, y)


@pytest.mark.parametrize("solver", ["dp-smd-sco", "objective-perturbation"])
def test_solvers_without_weights_refuse_class_weight(solver, monkeypatch):
    """Refused before anything is charged or read, naming the parameter and solver."""
    X, y = _imbalanced(n=500)
    Est = LogisticRegression
    from dpestim.model_selection import PrivacyBudget

    with PrivacyBudget(1.0) as budget:
        with pytest.raises(ValueError, match=rf"class_weight=.*solver='{solver}'"):
            Est(
                epsilon=1.0, classes=[0, 1], class_weight="balanced", solver=solver
            ).fit(X, y)
    assert budget.records == []


def test_balanced_needs_epsilon():
    X, y = _imbalanced(n=500)
    with pytest.raises(ValueError, match="class_weight='balanced' needs epsilon"):
        LogisticRegression(
            epsilon=None, noise_multiplier=1.0, classes=[0, 1], class_weight="balanced"
        ).fit(X, y)
    # public weights with a fixed noise multiplier are fine
    LogisticRegression(
        epsilon=None, noise_multiplier=1.0, classes=[0, 1], class_weight={1: 3.0}
    ).fit(X, y)


def test_balanced_improves_balanced_accuracy():
    from sklearn.metrics import balanced_accuracy_score

    X, y = _imbalanced(n=20000, rate=0.04)
    kw = dict(epsilon=1.0, classes=[0, 1], random_state=0)
    plain = LogisticRegression(**kw).fit(X, y)
    bal = LogisticRegression(class_weight="balanced", utility_check=None, **kw)
    bal = bal.fit(X, y)
    assert balanced_accuracy_score(y, bal.predict(X)) > 0.1 + balanced_accuracy_score(
        y, plain.predict(X)
    )


def test_blocked_x_refuses_class_weight_but_takes_the_prior():
    from dpestim.model_selection import PrivacyBudget
    from dpestim.scaling import BlockedArray

    X, y = _imbalanced(n=6000, rate=0.2)
    Xb = BlockedArray(X, block_size=2000)
    with PrivacyBudget(5.0) as budget:
        with pytest.raises(ValueError, match="class_weight=.*blocked"):
            LogisticRegression(
                epsilon=1.0, classes=[0, 1], class_weight="balanced"
            ).fit(Xb, y)
        assert budget.records == []  # refused before anything was charged
        clf = LogisticRegression(epsilon=1.0, classes=[0, 1], random_state=0)
        clf.fit(Xb, y)
    assert _laplace_leaves(clf.dp_event_) and clf.class_prior_ is not None
    assert clf.epsilon_ <= 1.0


# -- the imbalance UtilityWarning (issue 25, item 5) ---------------------------


def _utility_messages(est, X, y):
    import warnings

    from dpestim import UtilityWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X, y)
    return [str(w.message) for w in caught if issubclass(w.category, UtilityWarning)]


@pytest.mark.parametrize("Est", [LogisticRegression, LinearSVC])
def test_imbalance_warning_from_the_private_counts(Est):
    """One class above 95% of the released proportions warns; 90% does not.

    The column balance is off: its share and draw move the seeded check's
    release, which decides whether the diagnosis is shown (its subject is
    the release of the class counts, not the check's verdict)."""
    X, y = _imbalanced(rate=0.03)
    msgs = _utility_messages(
        Est(epsilon=1.0, random_state=0, feature_balance=None), X, y
    )
    hits = [m for m in msgs if "in one class" in m]
    assert len(hits) == 1 and "class_weight='balanced'" in hits[0]
    X, y = _imbalanced(rate=0.1)
    msgs = _utility_messages(
        Est(epsilon=1.0, random_state=0, feature_balance=None), X, y
    )
    assert not [m for m in msgs if "in one class" in m]


def test_imbalance_warning_reads_only_the_release(monkeypatch):
    """The warning is post-processing of the released counts: it follows them,
    not the data (the histogram's output is replaced by a balanced one)."""
    from dpestim.linear_model import _class_balance as CB

    X, y = _imbalanced(rate=0.03)
    monkeypatch.setattr(
        CB._scales,
        "private_class_counts",
        lambda codes, K, *a, **k: np.full(K, len(codes) / K),
    )
    msgs = _utility_messages(
        LogisticRegression(utility_check=None, epsilon=1.0, random_state=0), X, y
    )
    assert not [m for m in msgs if "in one class" in m]
    monkeypatch.setattr(
        CB._scales,
        "private_class_counts",
        lambda codes, K, *a, **k: np.array([0.99, 0.01]) * len(codes),
    )
    X, y = _imbalanced(rate=0.3)
    msgs = _utility_messages(
        LogisticRegression(utility_check=None, epsilon=1.0, random_state=0), X, y
    )
    assert [m for m in msgs if "99.0% in one class" in m]


def test_imbalance_warning_public_prior_and_nonprivate():
    """A public prior warns in a private fit; a non-private fit never does;
    with class_weight='balanced' the advice is the metric, not the weights."""
    X, y = _imbalanced(rate=0.03)
    # the public diagnosis alone (with the check it is given with a failed check)
    prior = dict(class_prior=[0.97, 0.03], utility_check=None)
    msgs = _utility_messages(LogisticRegression(epsilon=1.0, **prior), X, y)
    assert [m for m in msgs if "given: 97.0% in one class" in m]
    msgs = _utility_messages(LogisticRegression(epsilon=math.inf, **prior), X, y)
    assert not [m for m in msgs if "in one class" in m]
    msgs = _utility_messages(LogisticRegression(epsilon=math.inf), X, y)
    assert not [m for m in msgs if "in one class" in m]
    # the released proportion is at the 95% edge here: the column balance's
    # draw (which finds nothing to scale) would move the seeded release
    est = LogisticRegression(
        epsilon=1.0,
        class_weight="balanced",
        random_state=0,
        utility_check=None,
        feature_balance=None,
    )
    hits = [m for m in _utility_messages(est, X, y) if "in one class" in m]
    assert len(hits) == 1 and "class_weight=" not in hits[0]
    assert any("in one class" in w for w in est.privacy_report().warnings)


def test_class_prior_with_unsorted_classes_is_refused():
    """classes_ is sorted; a prior given beside an unsorted classes= was read
    in classes_' order, silently giving each class another's proportion."""
    X, y = _imbalanced(n=300, rate=0.3)
    with pytest.raises(ValueError, match="order of classes_"):
        LogisticRegression(classes=[1, 0], class_prior=[0.9, 0.1]).fit(X, y)
    fit = LogisticRegression(classes=[0, 1], class_prior=[0.1, 0.9]).fit(X, y)
    np.testing.assert_allclose(fit.class_prior_, [0.1, 0.9])
