"""dpestim.audit: the statistics of the bound and the audit itself (fast)."""

import math
import warnings

import numpy as np
import pytest
from broken_solvers import HalfNoise, NoClipping, ShuffledAsPoisson
from scipy.stats import beta

from dpestim import LogisticRegression, Ridge
from dpestim.audit import audit_estimator, clopper_pearson_upper, epsilon_lower_bound


def test_clopper_pearson_closed_forms():
    # k = 0: the upper bound solves (1 - p)^n = alpha.
    assert clopper_pearson_upper(0, 100, 0.05) == pytest.approx(1 - 0.05 ** (1 / 100))
    assert clopper_pearson_upper(100, 100, 0.05) == 1.0
    assert clopper_pearson_upper(7, 50, 0.1) == pytest.approx(beta.ppf(0.9, 8, 43))
    with pytest.raises(ValueError, match="'n' parameter of clopper_pearson_upper"):
        clopper_pearson_upper(0, 0, 0.05)


def test_lower_bound_closed_form_and_no_evidence():
    eps, fpr, fnr = epsilon_lower_bound(0, 0, 1000, 0.0, 0.05)
    u = 1 - 0.025 ** (1 / 1000)
    assert fpr == fnr == pytest.approx(u)
    assert eps == pytest.approx(math.log((1 - u) / u))
    assert epsilon_lower_bound(500, 500, 1000, 1e-5, 0.05)[0] == 0.0
    # delta only lowers the bound.
    assert (
        epsilon_lower_bound(5, 5, 1000, 0.1, 0.05)[0]
        < epsilon_lower_bound(5, 5, 1000, 0.0, 0.05)[0]
    )


def test_lower_bound_is_valid_on_a_mechanism_with_known_epsilon():
    """Randomized response with epsilon = 1: the optimal test has
    FPR = FNR = 1 / (1 + e). The bound may exceed 1 in at most alpha of the
    repetitions."""
    rng = np.random.default_rng(0)
    p = 1 / (1 + math.e)
    n, reps, alpha = 500, 2000, 0.05
    fp, fn = rng.binomial(n, p, reps), rng.binomial(n, p, reps)
    bounds = np.array(
        [epsilon_lower_bound(a, b, n, 0.0, alpha)[0] for a, b in zip(fp, fn)]
    )
    assert np.mean(bounds > 1.0) <= alpha
    assert np.median(bounds) > 0.5  # and it is not vacuous


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = np.hstack([rng.normal(size=(40, 3)) / 4, np.zeros((40, 1))])
    return X, X[:, 0] + 0.1 * rng.normal(size=40), (X[:, 0] > 0).astype(int)


def _ridge(solver="dp-gd", **kw):
    kw = {"epsilon": 1.0, **kw}
    return Ridge(delta=1e-3, solver=solver, max_iter=2, alpha=0.0, **kw)


def test_audit_catches_missing_clipping_and_passes_correct_solver(data):
    X, y, _ = data
    broken = audit_estimator(
        _ridge(NoClipping(), batch_size=1000), X, y, n_trials=120, random_state=0
    )
    assert broken.violation and broken.epsilon_lower_bound > 2.0
    assert broken.false_positives + broken.false_negatives < 12
    correct = audit_estimator(_ridge(), X, y, n_trials=120, random_state=0)
    assert not correct.violation
    assert correct.epsilon == pytest.approx(1.0, rel=1e-3)
    assert correct.n_eval == 60 and correct.scores_out.shape == (120,)
    assert "consistent with the reported epsilon" in str(correct)
    assert "VIOLATION" in str(broken)


def test_broken_variants_report_the_correct_event(data):
    X, y, _ = data
    common = dict(
        batch_size=10,
        random_state=0,
        clip_norm=0.01,
        epsilon=None,
        noise_multiplier=1.0,
    )
    ref = _ridge("dp-sgd", **common).fit(X, y)
    for solver in (NoClipping(), HalfNoise(), ShuffledAsPoisson()):
        model = _ridge(solver, **common).fit(X, y)
        assert model.dp_event_ == ref.dp_event_
        assert model.epsilon_ == ref.epsilon_
        assert not np.allclose(model.coef_, ref.coef_)


def test_input_and_custom_canaries_classifier(data):
    X, _, y = data
    clf = LogisticRegression(epsilon=1.0, delta=1e-3, classes=[0, 1], max_iter=1)
    res = audit_estimator(clf, X, y, canary="input", n_trials=40, random_state=1)
    assert res.canary == "input" and 0 <= res.epsilon_lower_bound <= res.epsilon
    res = audit_estimator(
        clf, X, y, canary=(np.ones(4), 0), n_trials=40, random_state=1
    )
    assert res.canary == "custom"


def test_audit_is_reproducible_and_mutates_nothing(data):
    X, y, _ = data
    est = _ridge()
    params = est.get_params()
    np.random.seed(5)  # noqa: NPY002
    state = np.random.get_state()[1].copy()  # noqa: NPY002
    filters = list(warnings.filters)
    a = audit_estimator(est, X, y, n_trials=20, random_state=3)
    b = audit_estimator(est, X, y, n_trials=20, random_state=3)
    np.testing.assert_array_equal(a.scores_in, b.scores_in)
    assert a.threshold == b.threshold
    assert est.get_params() == params and not hasattr(est, "coef_")
    np.testing.assert_array_equal(np.random.get_state()[1], state)  # noqa: NPY002
    assert list(warnings.filters) == filters


def test_step_count_depending_on_n_is_flagged(data):
    X, y, _ = data
    with pytest.warns(UserWarning, match="number of steps depends on n_samples"):
        audit_estimator(
            _ridge("dp-sgd", batch_size=40), X, y, n_trials=8, random_state=0
        )


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(n_trials=2), "n_trials"),
        (dict(alpha=1.5), "alpha"),
        (dict(canary="nope"), "canary"),
        (dict(canary=(np.ones(3), 1.0)), "features"),
        (dict(selection_fraction=1.0), "selection_fraction"),
        (dict(canary_scale=-1.0), "canary_scale"),
    ],
)
def test_bad_audit_arguments(kwargs, match, data):
    X, y, _ = data
    with pytest.raises(ValueError, match=match):
        audit_estimator(_ridge(), X, y, **kwargs)


def test_classifier_audit_needs_public_classes(data):
    X, _, y = data
    with pytest.raises(ValueError, match="classes="):
        audit_estimator(LogisticRegression(), X, y, n_trials=8)


def test_custom_regression_canary_is_scored_towards_its_target(data):
    X, y, _ = data
    est = Ridge(epsilon=math.inf, solver="dp-gd", max_iter=3)
    res = audit_estimator(est, X, y, canary=(np.ones(4), -100.0), n_trials=8)
    # The canary pulls the prediction at x down; the score is oriented so that
    # it goes up, and without noise the test separates perfectly.
    assert res.scores_in.min() > res.scores_out.max()
    assert res.false_positives == res.false_negatives == 0


def test_audit_refuses_what_is_not_one_dpestim_estimator():
    from sklearn.linear_model import LogisticRegression as SkLR
    from sklearn.pipeline import make_pipeline

    from dpestim.model_selection import PrivateSearchCV

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(60, 3)), np.arange(60) % 2
    dp = LogisticRegression(classes=[0, 1])
    for bad in (SkLR(), PrivateSearchCV(dp), make_pipeline(dp)):
        with pytest.raises(TypeError, match="audits one dpestim estimator"):
            audit_estimator(bad, X, y, n_trials=10)
