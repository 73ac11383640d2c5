"""Property-based hardening: any input gives a fitted finite model or a clear
ValueError/TypeError; never a numba traceback or a silently wrong model; and
fitting mutates no global state (warnings filters, NumPy's global RNG)."""

import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from dpestim import LinearSVC, LogisticRegression, PrivacyBudgetWarning, Ridge
from dpestim.solvers import SOLVERS, resolve_solver

SETTINGS = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,
)


def _target_bound(kw):
    # adassp needs a public target bound (y_bound="auto" estimates none at
    # these sizes, and adassp then refuses clearly, by design)
    return {"y_bound": (-10.0, 10.0)} if kw.get("solver") == "adassp" else {}


def _pairs():
    for solver in sorted(SOLVERS):
        for make, name in (
            (lambda **kw: LogisticRegression(classes=[0, 1, 2], **kw), "logistic"),
            (lambda **kw: LinearSVC(loss="hinge", classes=[0, 1], **kw), "hinge"),
            (lambda **kw: LinearSVC(classes=[0, 1], **kw), "squared_hinge"),
            (lambda **kw: Ridge(**_target_bound(kw), **kw), "squared"),
        ):
            if name in SOLVERS[solver].supported_losses:
                yield pytest.param(solver, make, id=f"{solver}-{name}")


PAIRS = list(_pairs())
FINITE = st.floats(allow_nan=False, allow_infinity=False, width=64)
SCALE = st.sampled_from([0.0, 1e-300, 1e-3, 1.0, 1e3, 1e100, 1e153, 1e160, 1e300])


def _accepts(exc):
    """A clear error: ValueError/TypeError raised by dpestim or scikit-learn."""
    mod = type(exc).__module__
    return isinstance(exc, ValueError | TypeError) and "numba" not in mod


def _fit_or_clear_error(est, X, y):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = est.fit(X, y)
    except Exception as exc:
        assert _accepts(exc), f"unclear error {type(exc).__name__}: {exc}"
        assert str(exc), "an error must say what is wrong"
        return None
    coef = np.asarray(model.coef_)
    assert np.isfinite(coef).all() and np.isfinite(model.intercept_).all(), (
        "fit returned a non-finite model without an error"
    )
    return model


@st.composite
def datasets(draw):
    n = draw(st.integers(1, 25))
    d = draw(st.integers(1, 4))
    X = draw(arrays(np.float64, (n, d), elements=st.floats(-1, 1, width=64)))
    X = X * draw(SCALE)
    if draw(st.booleans()):
        X[:, 0] = draw(FINITE)  # constant column (possibly huge)
    if d > 1 and draw(st.booleans()):
        X[:, -1] = 0.0  # empty column
    labels = draw(arrays(np.int64, (n,), elements=st.integers(0, 2)))
    targets = draw(arrays(np.float64, (n,), elements=st.floats(-1, 1, width=64)))
    targets = targets * draw(SCALE)
    sparse = draw(st.booleans())
    return X, labels, targets, sparse


def _to_sparse_with_explicit_zeros(X):
    M = sp.csr_matrix(X)
    rows, cols = np.nonzero(X == 0)
    if rows.size:  # store some zeros explicitly
        data = np.concatenate([M.tocoo().data, np.zeros(rows.size)])
        r = np.concatenate([M.tocoo().row, rows])
        c = np.concatenate([M.tocoo().col, cols])
        M = sp.csr_matrix((data, (r, c)), shape=X.shape)
        M = sp.csr_matrix((M.data, M.indices, M.indptr), shape=X.shape)
    return M


@pytest.mark.parametrize("solver,make", PAIRS)
@SETTINGS
@given(data=datasets(), eps=st.sampled_from([0.5, 8.0, math.inf]))
def test_any_data_gives_finite_model_or_clear_error(solver, make, data, eps):
    X, labels, targets, sparse = data
    est = make(solver=solver, epsilon=eps, random_state=0, max_iter=2)
    y = targets if isinstance(est, Ridge) else labels
    if isinstance(est, LinearSVC):
        y = y % 2
    Xf = _to_sparse_with_explicit_zeros(X) if sparse else X
    _fit_or_clear_error(est, Xf, y)


@pytest.mark.parametrize("solver,make", PAIRS)
@SETTINGS
@given(
    epsilon=st.one_of(st.none(), FINITE, st.just(math.inf)),
    delta=FINITE,
    noise_multiplier=st.one_of(st.none(), FINITE),
    clip_norm=st.one_of(FINITE, st.just(math.inf)),
    learning_rate=FINITE,
    alpha=FINITE,
)
def test_any_privacy_parameters_give_finite_model_or_clear_error(
    solver, make, epsilon, delta, noise_multiplier, clip_norm, learning_rate, alpha
):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3)) / 3
    y = (X[:, 0] > 0).astype(int)
    est = make(
        solver=solver,
        epsilon=epsilon,
        delta=delta,
        noise_multiplier=noise_multiplier,
        clip_norm=clip_norm,
        learning_rate=learning_rate,
        alpha=alpha,
        random_state=0,
        max_iter=1,
        batch_size=10,
    )
    model = _fit_or_clear_error(est, X, y)
    if model is not None and epsilon is not None and math.isfinite(epsilon):
        assert model.epsilon_ <= epsilon


@pytest.mark.parametrize("solver,make", PAIRS)
def test_fit_mutates_no_global_state(solver, make):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    y = (X[:, 0] > 0).astype(int)
    make(solver=solver, random_state=0).fit(X, y)  # lazy imports happen here
    np.random.seed(123)  # noqa: NPY002
    before_rng = np.random.get_state()[1].copy()  # noqa: NPY002
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        before_filters = list(warnings.filters)
        make(solver=solver, random_state=None, delta=0.5).fit(X, y)
        make(solver=solver, random_state=3).fit(sp.csr_matrix(X), y)
        assert list(warnings.filters) == before_filters
    np.testing.assert_array_equal(np.random.get_state()[1], before_rng)  # noqa: NPY002


@pytest.mark.parametrize("solver,make", PAIRS)
def test_delta_above_one_over_n_warns_and_is_reported(solver, make):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    y = (X[:, 0] > 0).astype(int)
    est = make(solver=solver, delta=0.05, random_state=0)
    if resolve_solver(solver).guarantee_delta(0.05) == 0:
        # Pure epsilon-DP (Laplace): the guarantee holds with delta = 0, so the
        # user's delta is not used and nothing is warned.
        with warnings.catch_warnings():
            warnings.simplefilter("error", PrivacyBudgetWarning)
            model = est.fit(X, y)
        assert model.delta_ == 0
        return
    with pytest.warns(PrivacyBudgetWarning, match="1/n_samples"):
        model = est.fit(X, y)
    assert any("PrivacyBudgetWarning" in w for w in model.privacy_report().warnings)


@pytest.mark.parametrize("solver,make", PAIRS)
def test_huge_rows_are_refused_not_silently_dropped(solver, make):
    """Rows whose squared norm overflows would be clipped to nothing."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    y = (X[:, 0] > 0).astype(int)
    X[0] = 1e200
    with pytest.raises(ValueError, match="X"):
        make(solver=solver, random_state=0).fit(X, y)


@pytest.mark.parametrize("cls", [LogisticRegression, LinearSVC])
@SETTINGS
@given(
    labels=arrays(np.int64, st.integers(2, 30), elements=st.integers(-2, 4)),
    classes=st.lists(st.integers(-2, 4), min_size=1, max_size=5, unique=True),
    n_extra=st.integers(-2, 2),
)
def test_labels_and_sizes(cls, labels, classes, n_extra):
    """Labels outside classes= and mismatched sizes are refused by name; a
    class in classes= but absent from y is fine (the label set is public)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(labels.shape[0] + n_extra, 2))
    est = cls(classes=classes, random_state=0, max_iter=1)
    outside = ~np.isin(labels, classes)
    if n_extra != 0:
        with pytest.raises(ValueError, match="inconsistent numbers of samples"):
            est.fit(X, labels)
    elif outside.any():
        with pytest.raises(ValueError, match="not in classes="):
            est.fit(X, labels)
    elif len(classes) < 2:
        with pytest.raises(ValueError, match="at least two classes"):
            est.fit(X, labels)
    else:
        model = est.fit(X, labels)
        np.testing.assert_array_equal(model.classes_, np.sort(classes))
        assert set(model.predict(X)) <= set(classes)


@pytest.mark.parametrize("solver,make", PAIRS)
def test_extreme_budgets(solver, make):
    """Found by the property tests: a budget so large that no noise is needed
    used to fail inside the root finder, and a huge noise multiplier overflowed
    inside dp_accounting."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2)) / 2
    y = (X[:, 0] > 0).astype(int)
    try:
        model = make(solver=solver, epsilon=1e300, random_state=0).fit(X, y)
    except ValueError as exc:
        # Solvers whose composition theorem has a bounded domain (dp-smd-sco:
        # epsilon < 8 ln(1/delta)) refuse clearly, naming the parameter.
        assert "epsilon" in str(exc)
    else:
        assert model.epsilon_ <= 1e300 and model.noise_multiplier_ > 0
    with pytest.raises(ValueError, match="noise_multiplier"):
        make(solver=solver, epsilon=None, noise_multiplier=1e300).fit(X, y)
