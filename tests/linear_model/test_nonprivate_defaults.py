"""clip_norm="auto" (the non-private limit at the defaults) and coef_bound.

* ``clip_norm="auto"`` is ``inf`` for a non-private fit and 1.0 for a private
  one; explicit values are kept exactly; an unclipped non-private plan reads
  the data's row norms for its step rule, a private plan never does.
* ``coef_bound`` (margin models): a public radius on ``coef_`` applied by
  projection after the fit (post-processing: the mechanism is unchanged).
"""

import math
import warnings
import zlib

import numpy as np
import pytest
import sklearn.linear_model as skl
import sklearn.svm as sks
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV

from dpestim import LinearSVC, LogisticRegression, Ridge
from dpestim.model_selection import default_space
from dpestim.solvers import SOLVERS, ERMPlan, resolve_solver
from dpestim.solvers._policy import unclipped_smoothness

ROW_NORMS_KEY = "row norms (max, rms; read from the data: not private)"


def _rng(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


def _data(name, n=300, d=5, scale=1.0):
    rng = _rng(name)
    X = rng.normal(size=(n, d)) * scale
    y = (X @ rng.normal(size=d) + 0.3 * rng.normal(size=n) > 0).astype(int)
    return X, y


def _fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, y)


def test_clip_norm_auto_is_the_default_and_survives_clone_and_grid_search():
    for Est in (LogisticRegression, LinearSVC, Ridge):
        assert Est().get_params()["clip_norm"] == "auto"
        assert clone(Est(clip_norm=0.5)).get_params()["clip_norm"] == 0.5
    X, y = _data("grid")
    grid = GridSearchCV(
        LogisticRegression(classes=[0, 1], random_state=0),
        {"clip_norm": ["auto", 0.5]},
        cv=2,
    )
    _fit(grid, X, y)
    assert grid.best_estimator_.clip_norm_ in (1.0, 0.5)


@pytest.mark.parametrize(
    "kw,expected",
    [
        (dict(epsilon=1.0), 1.0),
        (dict(epsilon=np.inf), math.inf),
        (dict(epsilon=None, noise_multiplier=0.0), math.inf),
        (dict(epsilon=None, noise_multiplier=1.0), 1.0),
        (dict(epsilon=np.inf, clip_norm=2.0), 2.0),
        (dict(epsilon=1.0, clip_norm=0.5), 0.5),
    ],
)
def test_clip_norm_resolution(kw, expected):
    X, y = _data("resolution")
    est = _fit(LogisticRegression(classes=[0, 1], random_state=0, **kw), X, y)
    assert est.clip_norm_ == expected
    assert est.privacy_report().clip_norm == expected
    unclipped = math.isinf(expected)
    assert (ROW_NORMS_KEY in est.hyperparameters_) == unclipped
    if unclipped:
        assert est.epsilon_ == math.inf
        assert "not private" in str(est.privacy_report())


def test_explicit_clip_norm_fits_as_before():
    """clip_norm=1.0 given explicitly is bit for bit the private default.

    (Without the private row scale, which an explicit clip_norm turns off.)
    """
    X, y = _data("explicit")
    a = _fit(
        LogisticRegression(classes=[0, 1], random_state=3, feature_scale=None), X, y
    )
    b = _fit(LogisticRegression(classes=[0, 1], random_state=3, clip_norm=1.0), X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.noise_multiplier_ == b.noise_multiplier_
    assert a.learning_rate_ == b.learning_rate_


@pytest.mark.parametrize("solver", sorted(SOLVERS))
def test_private_plan_ignores_the_data_scale(solver):
    """A private fit's plan is public: rescaling X by 100 changes nothing.

    (At epsilon = inf the unclipped step rule reads the row norms; a private
    plan must not, and carries none.)
    """
    losses = SOLVERS[solver].supported_losses
    fits = []
    for scale in (1.0, 100.0):
        X, y = _data("scale", n=200, d=4, scale=scale)
        if "logistic" in losses:
            est = LogisticRegression(solver=solver, classes=[0, 1])
        else:
            est, y = Ridge(solver=solver, y_bound=(-5.0, 5.0)), X[:, 0] / scale
        fits.append(_fit(est.set_params(epsilon=1.0, random_state=0), X, y))
    a, b = fits

    def public(h):  # the private scale estimate is a DP release, not a rule
        # (coef_bound is in X's units: a public radius / feature_scale_)
        return {
            k: v for k, v in h.items() if "private" not in str(v) and k != "coef_bound"
        }

    assert public(a.hyperparameters_) == public(b.hyperparameters_)
    if a.hyperparameters_.get("coef_bound") is not None:
        assert a.coef_bound_ * a.feature_scale_ == pytest.approx(
            b.coef_bound_ * b.feature_scale_, rel=1e-12
        )
    assert ROW_NORMS_KEY not in a.hyperparameters_
    assert (a.clip_norm_, a.max_iter_, a.batch_size_, a.learning_rate_) == (
        b.clip_norm_,
        b.max_iter_,
        b.batch_size_,
        b.learning_rate_,
    )
    assert a.noise_multiplier_ == b.noise_multiplier_ and a.n_iter_ == b.n_iter_


def _plan(**kw):
    base = dict(
        n_samples=100,
        n_features=3,
        n_outputs=1,
        loss=0,
        alpha=1e-4,
        fit_intercept=True,
        clip_norm=math.inf,
        max_iter="auto",
        batch_size="auto",
        learning_rate="auto",
    )
    return ERMPlan(**{**base, **kw})


def test_unclipped_smoothness_needs_an_unclipped_plan_with_norms():
    assert unclipped_smoothness(_plan()) is None  # no norms
    assert unclipped_smoothness(_plan(clip_norm=1.0, row_norm=2.0)) is None
    full = unclipped_smoothness(_plan(row_norm=2.0, row_norm_rms=1.0))
    batch = unclipped_smoothness(_plan(row_norm=2.0, row_norm_rms=1.0), 10)
    assert full == pytest.approx(0.25 * 1.0 + 1e-4)  # logistic: s = 1/4
    assert batch == pytest.approx(0.25 * (1.0 + 4.0 / 10) + 1e-4)
    # zero rows without penalty, or astronomically large rows: the clipped rules
    zero = _plan(row_norm=0.0, row_norm_rms=0.0, alpha=0.0)
    assert unclipped_smoothness(zero) is None
    assert unclipped_smoothness(_plan(row_norm=1e60, row_norm_rms=1e60)) is None


def test_a_private_plan_carrying_row_norms_is_refused():
    est = LogisticRegression(classes=[0, 1], epsilon=1.0)
    plan = _plan(clip_norm=1.0, row_norm=2.0, row_norm_rms=1.0, max_iter=2)
    plan = plan.__class__(**{**plan.__dict__, "batch_size": 10, "learning_rate": 0.5})
    with pytest.raises(RuntimeError, match="row norm"):
        est._resolve_noise(resolve_solver("dp-sgd"), plan)


def test_default_search_space_reads_auto_as_the_private_clip_norm():
    # the clip norm is a factor of the value the (private) candidate's plan
    # resolves: "auto" is the private clip norm there, not the unclipped one
    from dpestim.model_selection import PrivateSearchCV
    from dpestim.solvers._policy import PRIVATE_CLIP_NORM

    space = default_space(LogisticRegression())
    assert space["clip_norm"].dist.support() == pytest.approx((0.5, 2.0))
    rng = _rng("space")
    X = rng.normal(size=(300, 3))
    y = (X[:, 0] > 0).astype(int)
    search = PrivateSearchCV(LogisticRegression(classes=[0, 1]))
    charges = search._probe({}, X, y, 1.0)
    assert charges[-1].plan.clip_norm == PRIVATE_CLIP_NORM


@pytest.mark.parametrize("solver", ["dp-sgd", "dp-gd", "dp-scd"])
def test_unclipped_default_steps_are_stable_on_badly_scaled_rows(solver):
    """Rows of norm ~30: the old data-free step (0.5) diverges for Ridge."""
    rng = _rng("scaled" + solver)
    X = rng.normal(size=(400, 4)) * 15.0
    y = X @ rng.normal(size=4) + rng.normal(size=400)
    ours = _fit(Ridge(solver=solver, epsilon=np.inf, y_bound=None), X, y)
    ref = skl.Ridge(alpha=1e-4 * 400).fit(X, y)
    assert np.all(np.isfinite(ours.coef_))
    assert ours.score(X, y) >= ref.score(X, y) - 0.02


@pytest.mark.parametrize("solver", ["adp-adagrad", "adp-sgd", "dp-sgd"])
def test_unclipped_step_respects_a_strong_penalty(solver):
    """alpha dominating the curvature: step x alpha stays below 2 (no refusal)."""
    X, y = _data("penalty" + solver)
    est = _fit(
        LogisticRegression(solver=solver, epsilon=np.inf, alpha=1.0, classes=[0, 1]),
        X * 1e-3,
        y,
    )
    assert est.learning_rate_ * 1.0 <= 1.0 and np.all(np.isfinite(est.coef_))


# -- coef_bound -------------------------------------------------------------------


@pytest.mark.parametrize(
    "Est,classes,radius",
    [
        (LogisticRegression, [0, 1], math.sqrt(2 * math.log(2) / 1e-4)),
        (LogisticRegression, [0, 1, 2], math.sqrt(2 * math.log(3) / 1e-4)),
        (LinearSVC, [0, 1], math.sqrt(2 * 1 / 1e-4)),
        (LinearSVC, [0, 1, 2], math.sqrt(2 * 3 / 1e-4)),
    ],
)
def test_auto_coef_bound_is_the_public_ball_holding_the_optimum(Est, classes, radius):
    X, y = _data("ball")
    if len(classes) == 3:
        y = np.digitize(X[:, 0] + X[:, 1], [-0.5, 0.5])
    est = _fit(Est(classes=classes, alpha=1e-4, random_state=0), X, y)
    assert est.coef_bound_ == pytest.approx(radius)
    assert est.hyperparameters_["coef_bound"] == pytest.approx(radius)
    assert est.privacy_report().hyperparameters["coef_bound"] == pytest.approx(radius)
    # the optimum of the same objective lies inside (weak penalty, separable-ish)
    C = 1 / (1e-4 * X.shape[0])
    if Est is LogisticRegression:
        ref = skl.LogisticRegression(C=C, max_iter=5000).fit(X, y)
    else:
        ref = sks.LinearSVC(C=C, max_iter=50000).fit(X, y)
    assert np.linalg.norm(ref.coef_) <= radius


def test_coef_bound_projects_and_costs_no_privacy():
    X, y = _data("project")
    kw = dict(classes=[0, 1], random_state=5, epsilon=1.0)
    free = _fit(LogisticRegression(coef_bound=None, **kw), X, y)
    tight = _fit(LogisticRegression(coef_bound=0.05, **kw), X, y)
    loose = _fit(LogisticRegression(coef_bound=1e6, **kw), X, y)
    assert free.coef_bound_ is None
    norm = np.linalg.norm(free.coef_)
    assert norm > 0.05
    np.testing.assert_allclose(tight.coef_, free.coef_ * (0.05 / norm))
    np.testing.assert_array_equal(tight.intercept_, free.intercept_)
    np.testing.assert_array_equal(loose.coef_, free.coef_)
    # the mechanism is the same: the projection is post-processing
    assert tight.epsilon_ == free.epsilon_
    assert tight.noise_multiplier_ == free.noise_multiplier_
    assert repr(tight.dp_event_) == repr(free.dp_event_)
    scores = tight.decision_function(X)
    bound = 0.05 * np.linalg.norm(X, axis=1) + np.abs(tight.intercept_)
    assert np.all(np.abs(scores) <= bound + 1e-12)


def test_coef_bound_without_penalty_and_bad_values():
    X, y = _data("alpha0")
    est = _fit(LinearSVC(classes=[0, 1], alpha=0.0, solver="dp-sgd"), X, y)
    assert est.coef_bound_ is None
    for bad in (0.0, -1.0, "big"):
        with pytest.raises(ValueError, match="coef_bound"):
            LogisticRegression(classes=[0, 1], coef_bound=bad).fit(X, y)


# -- the non-private limit on California housing (data-backed, slow) -------------


def _california():
    from sklearn.model_selection import train_test_split

    from dpestim.datasets import dataset_available, load_california_housing

    if not dataset_available("california_housing"):
        pytest.skip("dataset 'california_housing' not available")
    b = load_california_housing()
    return train_test_split(b.data, b.target, test_size=0.25, random_state=0)


@pytest.mark.slow
@pytest.mark.parametrize(
    "solver", sorted(s for s in SOLVERS if "squared" in SOLVERS[s].supported_losses)
)
def test_nonprivate_limit_at_defaults_california(solver):
    """Ridge at epsilon = inf, defaults: within 0.02 R^2 of scikit-learn.

    (Before clip_norm="auto", every solver missed by 0.035-0.07: the clipped
    problem's optimum; benchmarks/results/defaults_i14limit.json.)
    """
    X, Xt, y, yt = _california()
    ref = skl.Ridge(alpha=1e-4 * X.shape[0]).fit(X, y)
    ours = Ridge(solver=solver, epsilon=np.inf, y_bound=(0.0, 5.00001))
    seeds = [0] if solver in ("dp-gd", "dp-hb", "dp-nag", "dp-masg") else [0, 1, 2]
    scores = [_fit(ours.set_params(random_state=s), X, y).score(Xt, yt) for s in seeds]
    assert np.median(scores) >= ref.score(Xt, yt) - 0.02
