"""epsilon = inf: each estimator reaches scikit-learn's optimum.

Tolerances (stated here and in the docs): full-batch steps (batch_size >= n,
so Poisson sampling takes every record), no clipping, no noise.
* smooth losses: max |coef - coef_sklearn| <= 1e-6 and the same for the
  intercept (multinomial intercepts compared after centring, as softmax is
  invariant to a common shift);
* hinge loss (non-smooth, constant-step subgradient method): objective within
  1e-4 relative of scikit-learn's optimum.
With Poisson mini-batches (q < 1) and no noise the iterates stay within a
stated neighbourhood of the optimum (SGD's constant-step bias).
"""

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn.linear_model as sk
import sklearn.svm as sksvm

from dpestim import LinearSVC, LogisticRegression, Ridge

ALPHA = 0.01
TOL = 1e-6


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    n, d = 300, 5
    X = rng.normal(size=(n, d))
    w = rng.normal(size=d)
    s = X @ w
    return dict(
        X=X,
        y2=(s + 0.5 * rng.normal(size=n) > 0).astype(int),
        y3=np.digitize(s + 0.3 * rng.normal(size=n), [-1, 1]),
        yr=s + 0.3 * rng.normal(size=n),
        Yr=np.column_stack([s, -2 * s + 1]) + 0.3 * rng.normal(size=(n, 2)),
    )


def _np(n, **kw):
    return dict(
        epsilon=np.inf,
        clip_norm=np.inf,
        alpha=ALPHA,
        batch_size=n,
        random_state=0,
        **kw,
    )


@pytest.mark.parametrize("solver", ["dp-sgd", "dp-gd"])
@pytest.mark.parametrize("sparse", [False, True])
def test_logistic_binary(data, solver, sparse):
    X, y = data["X"], data["y2"]
    n = X.shape[0]
    ours = LogisticRegression(
        **_np(n, max_iter=3000, learning_rate=1.0), solver=solver, classes=[0, 1]
    )
    ours.fit(sp.csr_matrix(X) if sparse else X, y)
    ref = sk.LogisticRegression(C=1 / (ALPHA * n), tol=1e-12, max_iter=10_000)
    ref.fit(X, y)
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=TOL)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, atol=TOL)
    assert ours.epsilon_ == np.inf and ours.noise_multiplier_ == 0.0
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=TOL)


def test_logistic_multinomial(data):
    X, y = data["X"], data["y3"]
    n = X.shape[0]
    ours = LogisticRegression(
        **_np(n, max_iter=3000, learning_rate=1.0), classes=[0, 1, 2]
    ).fit(X, y)
    ref = sk.LogisticRegression(C=1 / (ALPHA * n), tol=1e-12, max_iter=10_000)
    ref.fit(X, y)
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=TOL)
    np.testing.assert_allclose(
        ours.intercept_ - ours.intercept_.mean(),
        ref.intercept_ - ref.intercept_.mean(),
        atol=TOL,
    )
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=TOL)


@pytest.mark.parametrize("target", ["yr", "Yr"])
def test_ridge(data, target):
    X, y = data["X"], data[target]
    n = X.shape[0]
    ours = Ridge(**_np(n, max_iter=2000, learning_rate=0.5)).fit(X, y)
    ref = sk.Ridge(alpha=ALPHA * n, tol=1e-12).fit(X, y)
    assert ours.coef_.shape == ref.coef_.shape
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=TOL)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, atol=TOL)


@pytest.mark.parametrize("classes", [[0, 1], [0, 1, 2]])
def test_linear_svc_squared_hinge(data, classes):
    X = data["X"]
    y = data["y2"] if len(classes) == 2 else data["y3"]
    n = X.shape[0]
    ours = LinearSVC(
        **_np(n, max_iter=3000, learning_rate=0.5, fit_intercept=False), classes=classes
    ).fit(X, y)
    ref = sksvm.LinearSVC(
        C=1 / (ALPHA * n), tol=1e-12, max_iter=100_000, fit_intercept=False
    ).fit(X, y)
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=TOL)


def _hinge_objective(X, y, w):
    m = np.where(y == 1, 1.0, -1.0) * (X @ w)
    return np.mean(np.maximum(0, 1 - m)) + ALPHA / 2 * w @ w


def test_linear_svc_hinge_objective(data):
    X, y = data["X"], data["y2"]
    n = X.shape[0]
    ours = LinearSVC(
        **_np(n, max_iter=3000, learning_rate=0.1, fit_intercept=False),
        loss="hinge",
        classes=[0, 1],
    ).fit(X, y)
    ref = sksvm.LinearSVC(
        C=1 / (ALPHA * n),
        loss="hinge",
        tol=1e-12,
        max_iter=100_000,
        fit_intercept=False,
    ).fit(X, y)
    f_ours = _hinge_objective(X, y, ours.coef_[0])
    f_ref = _hinge_objective(X, y, ref.coef_[0])
    assert f_ours <= f_ref * (1 + 1e-4)


def test_minibatch_without_noise_reaches_neighbourhood(data):
    X, y = data["X"], data["y2"]
    n = X.shape[0]
    ours = LogisticRegression(
        epsilon=np.inf,
        clip_norm=np.inf,
        alpha=ALPHA,
        batch_size=30,
        max_iter=300,
        learning_rate=0.05,
        classes=[0, 1],
        random_state=0,
    ).fit(X, y)
    ref = sk.LogisticRegression(C=1 / (ALPHA * n), tol=1e-12).fit(X, y)
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=0.05)
