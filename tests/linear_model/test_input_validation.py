"""Bad input gives a clear error naming the parameter, never a numba traceback."""

import numpy as np
import pytest
import scipy.sparse as sp

from dpestim import LinearSVC, LogisticRegression, Ridge
from dpestim.solvers import DPSGD

ESTIMATORS = [
    lambda **kw: LogisticRegression(classes=[0, 1], **kw),
    lambda **kw: LinearSVC(classes=[0, 1], **kw),
    lambda **kw: Ridge(**kw),
]
IDS = ["logistic", "svc", "ridge"]


@pytest.fixture
def Xy():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 3))
    return X, (X[:, 0] > 0).astype(int)


@pytest.mark.parametrize("make", ESTIMATORS, ids=IDS)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_X(make, bad, Xy):
    X, y = Xy
    X = X.copy()
    X[3, 1] = bad
    with pytest.raises(ValueError, match="Input X contains"):
        make().fit(X, y)
    with pytest.raises(ValueError, match="Input X contains"):
        make().fit(sp.csr_matrix(X), y)


@pytest.mark.parametrize("make", ESTIMATORS, ids=IDS)
def test_non_finite_y(make, Xy):
    X, y = Xy
    y = y.astype(float)
    y[0] = np.nan
    with pytest.raises(ValueError, match="y"):
        make().fit(X, y)


@pytest.mark.parametrize("make", ESTIMATORS, ids=IDS)
def test_wrong_shapes(make, Xy):
    X, y = Xy
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        make().fit(X, y[:-1])
    with pytest.raises(ValueError, match="Expected 2D array"):
        make().fit(X[:, 0], y)
    est = make(random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        est.predict(X[:, :2])


@pytest.mark.parametrize(
    "param,value,match",
    [
        ("epsilon", -1.0, "epsilon"),
        ("epsilon", 0.0, "epsilon"),
        ("epsilon", np.nan, "epsilon"),
        ("delta", 1.0, "delta"),
        ("delta", -1e-6, "delta"),
        ("clip_norm", 0.0, "clip_norm"),
        ("clip_norm", -1.0, "clip_norm"),
        ("noise_multiplier", -1.0, "noise_multiplier"),
        ("alpha", -1.0, "alpha"),
        ("max_iter", 0, "max_iter"),
        ("batch_size", 0, "batch_size"),
        ("learning_rate", 0.0, "learning_rate"),
        ("solver", "dp-nope", "solver"),
        ("accountant", "moments", "accountant"),
    ],
)
@pytest.mark.parametrize("make", ESTIMATORS, ids=IDS)
def test_bad_parameters_name_the_parameter(make, param, value, match, Xy):
    X, y = Xy
    with pytest.raises(ValueError, match=match):
        make(**{param: value}).fit(X, y)


@pytest.mark.parametrize("make", ESTIMATORS, ids=IDS)
def test_epsilon_and_noise_multiplier_both_given(make, Xy):
    X, y = Xy
    with pytest.raises(ValueError, match="either epsilon or noise_multiplier"):
        make(epsilon=1.0, noise_multiplier=1.0).fit(X, y)
    with pytest.raises(ValueError, match="One of epsilon and noise_multiplier"):
        make(epsilon=None).fit(X, y)


@pytest.mark.parametrize("make", ESTIMATORS, ids=IDS)
def test_gaussian_solver_needs_positive_delta(make, Xy):
    X, y = Xy
    with pytest.raises(ValueError, match="delta must be > 0"):
        make(solver="dp-sgd", delta=0.0).fit(X, y)
    make(solver="dp-sgd", delta=0.0, epsilon=np.inf).fit(X, y)  # non-private: fine
    # the default solver="auto" answers delta=0 with a pure-DP solver
    assert make(delta=0.0).fit(X, y).solver_.privacy_notion == "pure"


@pytest.mark.parametrize("make", ESTIMATORS, ids=IDS)
def test_infinite_clip_only_without_privacy(make, Xy):
    X, y = Xy
    with pytest.raises(ValueError, match="clip_norm must be finite"):
        make(clip_norm=np.inf).fit(X, y)
    with pytest.raises(ValueError, match="clip_norm must be finite"):
        make(clip_norm=np.inf, epsilon=None, noise_multiplier=1.0).fit(X, y)


@pytest.mark.parametrize("cls", [LogisticRegression, LinearSVC])
def test_one_class(cls, Xy):
    X, _ = Xy
    y = np.zeros(X.shape[0], dtype=int)
    with pytest.raises(ValueError, match="at least two classes"), pytest.warns():
        cls().fit(X, y)
    with pytest.raises(ValueError, match="at least two classes"):
        cls(classes=[0]).fit(X, y)


@pytest.mark.parametrize("cls", [LogisticRegression, LinearSVC])
def test_labels_outside_classes(cls, Xy):
    X, y = Xy
    with pytest.raises(ValueError, match=r"not in classes=\[0, 2\]") as info:
        cls(classes=[0, 2]).fit(X, y)
    # the message names the public label set, never a count of private rows
    assert not any(ch.isdigit() for ch in str(info.value).split("classes=")[0])
    with pytest.raises(ValueError, match="duplicate"):
        cls(classes=[0, 1, 1]).fit(X, y)
    with pytest.raises(ValueError, match="1-d"):
        cls(classes=[[0, 1]]).fit(X, y)


@pytest.mark.parametrize("cls", [LogisticRegression, LinearSVC])
def test_continuous_target_refused(cls, Xy):
    X, _ = Xy
    with pytest.raises(ValueError, match="Unknown label type"):
        cls(classes=[0, 1]).fit(X, np.linspace(0, 1, X.shape[0]))


def test_unsupported_solver_loss_pair_is_refused_before_data(Xy):
    class LogisticOnly(DPSGD):
        name = "logistic-only"
        supported_losses = frozenset({"logistic"})

    X, y = Xy
    with pytest.raises(ValueError, match="does not support the 'hinge' loss"):
        LinearSVC(loss="hinge", classes=[0, 1], solver=LogisticOnly()).fit(X, y)
    # "before any data is touched": even invalid data gives the solver error.
    with pytest.raises(ValueError, match="does not support the 'squared' loss"):
        Ridge(solver=LogisticOnly()).fit("not data", None)


def test_solver_of_wrong_type(Xy):
    X, y = Xy
    with pytest.raises(ValueError, match="solver"):
        LogisticRegression(solver=3, classes=[0, 1]).fit(X, y)


def test_sparse_with_explicit_zeros_and_duplicates_matches_dense(Xy):
    """Non-canonical CSR (duplicate entries, explicit zeros) must clip and fit
    exactly as the matrix it represents: as its canonical CSR form (sparse
    fits draw their noise lazily, in another order than dense ones) and, at
    epsilon = inf (no noise), as the dense matrix."""
    X, y = Xy
    n, d = X.shape
    data, indices, indptr = [], [], [0]
    for i in range(n):
        for j in range(d):  # every value stored as two halves
            data += [X[i, j] / 2, X[i, j] / 2]
            indices += [j, j]
        data.append(0.0)  # and an explicit zero
        indices.append(0)
        indptr.append(len(data))
    Xdup = sp.csr_matrix(
        (np.array(data), np.array(indices), np.array(indptr)), shape=X.shape
    )
    assert not Xdup.has_canonical_format
    est = dict(classes=[0, 1], random_state=3, clip_norm=0.1)
    canonical = LogisticRegression(**est).fit(sp.csr_matrix(X), y)
    sparse = LogisticRegression(**est).fit(Xdup, y)
    np.testing.assert_allclose(sparse.coef_, canonical.coef_, rtol=1e-10, atol=1e-12)
    exact = dict(est, epsilon=np.inf)
    dense = LogisticRegression(**exact).fit(X, y)
    sparse = LogisticRegression(**exact).fit(Xdup, y)
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-10, atol=1e-12)
    assert not Xdup.has_canonical_format  # the user's matrix is not modified


def test_huge_values_stay_finite(Xy):
    X, y = Xy
    model = LogisticRegression(classes=[0, 1], random_state=0).fit(X * 1e150, y)
    assert np.isfinite(model.coef_).all() and np.isfinite(model.intercept_).all()
