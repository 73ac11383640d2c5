"""Validation errors name the problem, never the private values.

scikit-learn's ``validate_data`` prints the whole array for complex input and
NumPy quotes the offending cell of a text column (user trial, 2026-11-28);
every estimator and transformer validates through
``dpestim.utils.validation.validate_private_data`` instead.
"""

import traceback

import numpy as np
import pytest

from dpestim import (
    LinearSVC,
    LogisticRegression,
    MinimaxLogisticRegression,
    Ridge,
)
from dpestim.preprocessing import (
    PrivateCentrer,
    PrivateRowNormClipper,
    RowNormClipper,
    StandardScaler,
)

SECRET = 987.654321  # a value that must not reach a message
SECRET_TEXT = "secret-label-xyz"


def _rows(n=40, d=3):
    X = np.random.default_rng(0).normal(size=(n, d))
    X[7, 1] = SECRET
    return X, (X[:, 0] > 0).astype(int)


def _fit_calls():
    X, y = _rows()
    a = np.arange(len(y)) % 2
    return {
        "LogisticRegression": lambda X, y: LogisticRegression(classes=[0, 1]).fit(X, y),
        "LinearSVC": lambda X, y: LinearSVC(classes=[0, 1]).fit(X, y),
        "Ridge": lambda X, y: Ridge().fit(X, y),
        "Minimax": lambda X, y: MinimaxLogisticRegression(
            classes=[0, 1], groups=[0, 1]
        ).fit(X, y, sensitive_features=a),
        "StandardScaler": lambda X, y: StandardScaler(bounds=(-1, 1)).fit(X),
        "PrivateCentrer": lambda X, y: PrivateCentrer().fit(X),
        "PrivateRowNormClipper": lambda X, y: PrivateRowNormClipper().fit(X),
        "RowNormClipper": lambda X, y: RowNormClipper(max_norm=1.0).fit(X),
    }


def _text(info):
    """The message and the whole printed traceback (its context included)."""
    return str(info.value) + "".join(traceback.format_exception(info.value))


@pytest.mark.parametrize("name", list(_fit_calls()))
def test_complex_input_is_refused_without_printing_it(name):
    X, y = _rows()
    with pytest.raises(ValueError, match="Complex data not supported") as info:
        _fit_calls()[name](X.astype(complex), y)
    assert "987.65" not in _text(info)


@pytest.mark.parametrize("name", list(_fit_calls()))
def test_text_cell_is_refused_without_quoting_it(name):
    X, y = _rows()
    X = X.astype(object)
    X[3, 2] = SECRET_TEXT
    with pytest.raises(ValueError, match="not a number") as info:
        _fit_calls()[name](X, y)
    assert SECRET_TEXT not in _text(info)


def test_other_validation_errors_are_unchanged():
    X, y = _rows()
    with pytest.raises(ValueError, match="dim 3"):
        LogisticRegression(classes=[0, 1]).fit(X[:, :, None], y)
    with pytest.raises(ValueError, match="NaN"):
        X[0, 0] = np.nan
        Ridge().fit(X, y.astype(float))
