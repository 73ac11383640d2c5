"""Tests for ``dpestim.datasets``; data-dependent tests skip without data.

Expected shapes and label counts come from the datasets' README.
"""

import numpy as np
import pytest
import scipy.sparse as sp

from dpestim.datasets import (
    DatasetNotFoundError,
    dataset_available,
    get_data_home,
    load_adult,
    load_adult_a9a,
    load_bank,
    load_california_housing,
    load_compas,
    load_farm_ads,
    load_german,
    load_mnist,
    load_phishing,
    load_w8a,
)

NAMES = [
    "adult_a9a",
    "adult",
    "mnist",
    "phishing",
    "w8a",
    "farm_ads",
    "california_housing",
    "compas",
    "german",
    "bank",
]


def needs(name):
    return pytest.mark.skipif(
        not dataset_available(name), reason=f"dataset {name!r} not available"
    )


def counts(y):
    return np.bincount(y).tolist()


# ------------------------------------------------------------ no data needed
def test_missing_data_raises(tmp_path, monkeypatch):
    monkeypatch.setenv("DPESTIM_DATA", str(tmp_path))
    assert get_data_home() == tmp_path
    assert not any(dataset_available(name) for name in NAMES)
    with pytest.raises(DatasetNotFoundError, match="DPESTIM_DATA") as exc:
        load_adult_a9a()
    assert isinstance(exc.value, FileNotFoundError)
    assert "a9a" in str(exc.value)
    with pytest.raises(DatasetNotFoundError, match="german.data"):
        load_german()


def test_unknown_dataset_name():
    with pytest.raises(ValueError, match="Unknown dataset"):
        dataset_available("iris")


# --------------------------------------------------------------- with data
@pytest.fixture(scope="module")
def mnist():
    if not dataset_available("mnist"):
        pytest.skip("dataset 'mnist' not available")
    return load_mnist()


def test_mnist(mnist):
    assert mnist.data.shape == (60000, 784)
    assert mnist.data_test.shape == (10000, 784)
    assert mnist.data.dtype == np.float64
    assert mnist.data.min() == 0.0 and mnist.data.max() == 1.0
    assert counts(mnist.target) == [
        5923,
        6742,
        5958,
        6131,
        5842,
        5421,
        5918,
        6265,
        5851,
        5949,
    ]
    assert counts(mnist.target_test) == [
        980,
        1135,
        1032,
        1010,
        982,
        892,
        958,
        1028,
        974,
        1009,
    ]
    assert mnist.data.mean() == pytest.approx(0.1307, abs=1e-4)


@needs("adult_a9a")
def test_adult_a9a():
    b = load_adult_a9a()
    assert sp.issparse(b.data) and b.data.format == "csr"
    assert b.data.shape == (32561, 123) and b.data_test.shape == (16281, 123)
    assert counts(b.target) == [24720, 7841]
    assert counts(b.target_test) == [12435, 3846]


@needs("adult")
def test_adult_raw():
    b = load_adult()
    assert b.data.shape == (32561, len(b.feature_names))
    assert b.data_test.shape == (16281, len(b.feature_names))
    assert counts(b.target) == [24720, 7841]
    assert counts(b.target_test) == [12435, 3846]
    for X in (b.data, b.data_test):
        assert X.dtype == np.float64
        assert X.min() >= 0.0 and X.max() <= 1.0
    sex = b.sensitive["sex"]
    assert (sex == "Male").sum() == 21790 and (sex == "Female").sum() == 10771
    sex_test = b.sensitive_test["sex"]
    assert (sex_test == "Male").sum() == 10860
    assert (sex_test == "Female").sum() == 5421
    assert len(b.sensitive["race"]) == 32561
    # exactly one active category per categorical column (8 of them)
    onehot = [i for i, n in enumerate(b.feature_names) if "=" in n]
    assert np.all(b.data[:, onehot].sum(axis=1) == 8)
    assert "workclass=?" in b.feature_names


@needs("adult")
def test_adult_encoding_is_not_fitted(tmp_path):
    """Loading a subset must give the same rows: nothing is fit on data."""
    src = get_data_home() / "adult"
    (tmp_path / "adult").mkdir()
    for fname, n_skip in (("adult.data", 0), ("adult.test", 1)):
        lines = (src / fname).read_text().splitlines(keepends=True)
        (tmp_path / "adult" / fname).write_text("".join(lines[: n_skip + 50]))
    full, part = load_adult(), load_adult(data_home=tmp_path)
    np.testing.assert_array_equal(part.data, full.data[:50])
    np.testing.assert_array_equal(part.data_test, full.data_test[:50])


@needs("phishing")
def test_phishing():
    b = load_phishing()
    assert isinstance(b.data, np.ndarray) and b.data.shape == (11055, 68)
    assert counts(b.target) == [4898, 6157]
    assert np.all((b.data != 0).sum(axis=1) == 30)


@needs("w8a")
def test_w8a():
    b = load_w8a()
    assert sp.issparse(b.data) and b.data.shape == (49749, 300)
    assert counts(b.target) == [48270, 1479]


@needs("farm_ads")
def test_farm_ads():
    b = load_farm_ads()
    assert sp.issparse(b.data) and b.data.shape == (4143, 54877)
    assert counts(b.target) == [1933, 2210]
    assert np.all(b.data.data == 1.0)


@needs("california_housing")
def test_california_housing():
    b = load_california_housing()
    assert b.data.shape == (20640 - 207, 13)
    assert b.target.dtype == np.float64
    assert b.target.max() == pytest.approx(5.00001)
    assert b.data.min() >= 0.0 and b.data.max() <= 1.0
    assert np.all(b.data[:, -5:].sum(axis=1) == 1)


@needs("compas")
def test_compas():
    b = load_compas()
    assert b.data.shape == (6172, len(b.feature_names))
    assert counts(b.target) == [3363, 2809]
    assert set(b.sensitive) == {"race", "sex"}
    assert len(b.sensitive["race"]) == 6172
    assert b.data.min() >= 0.0 and b.data.max() <= 1.0


@needs("german")
def test_german():
    b = load_german()
    assert b.data.shape == (1000, len(b.feature_names))
    assert counts(b.target) == [300, 700]
    assert b.data.min() >= 0.0 and b.data.max() <= 1.0
    assert set(b.sensitive["sex"]) == {"female", "male"}


@needs("bank")
def test_bank():
    b = load_bank()
    assert b.data.shape == (4521, len(b.feature_names))
    assert counts(b.target) == [4000, 521]
    assert "duration" not in b.feature_names
    assert b.data.min() >= -1.0 and b.data.max() <= 1.0


# ------------------------------------------- scikit-learn style returns
def test_finish_return_X_y_and_frames_without_files():
    # the shared helper, on a synthetic Bunch (runs without the data)
    from sklearn.utils import Bunch

    from dpestim.datasets._bunch import finish

    X, y = np.arange(6.0).reshape(3, 2), np.array([0, 1, 0])
    got = finish(Bunch(data=X, target=y), True, False)
    assert got[0] is X and got[1] is y
    pd = pytest.importorskip("pandas")
    b = finish(
        Bunch(
            data=sp.csr_matrix(X),
            target=y,
            data_test=sp.csr_matrix(X),
            target_test=y,
        ),
        False,
        True,
    )
    assert isinstance(b.data, pd.DataFrame) and list(b.data.columns) == ["x0", "x1"]
    assert isinstance(b.data_test, pd.DataFrame)
    assert isinstance(b.target_test, pd.Series) and b.target.name == "target"
    np.testing.assert_array_equal(b.data.sparse.to_dense().to_numpy(), X)
    assert list(b.frame.columns) == ["x0", "x1", "target"]


def test_california_split_is_fixed_and_public():
    from dpestim.datasets import california_test_rows

    mask = california_test_rows()
    assert mask.sum() == 20433 // 5
    np.testing.assert_array_equal(mask, california_test_rows(20433))


@needs("california_housing")
def test_california_housing_split_and_frame():
    b = load_california_housing()
    assert b.data_train.shape == (16347, 13) and b.data_test.shape == (4086, 13)
    np.testing.assert_array_equal(
        np.sort(np.concatenate([b.target_train, b.target_test])), np.sort(b.target)
    )
    X, y = load_california_housing(return_X_y=True)
    np.testing.assert_array_equal(X, b.data)
    pd = pytest.importorskip("pandas")
    f = load_california_housing(as_frame=True)
    assert isinstance(f.data_test, pd.DataFrame)
    assert list(f.data.columns) == list(b.feature_names)


@needs("adult_a9a")
def test_adult_a9a_return_X_y():
    X, y = load_adult_a9a(return_X_y=True)
    assert X.shape == (32561, 123) and y.shape == (32561,)
