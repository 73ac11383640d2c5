"""Validation errors name the problem, never the private values.

scikit-learn's ``validate_data`` prints the whole array for complex input
and for a 1-D or scalar ``X``, and NumPy quotes the offending cell of a text
column (user trials, 2026-11-28); every estimator and transformer validates
through
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
from dpestim.model_selection import PrivateSearchCV
from dpestim.preprocessing import (
    PrivateCentrer,
    PrivateRowNormClipper,
    RowNormClipper,
    StandardScaler,
    estimate_clip_norm,
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


@pytest.mark.parametrize("name", list(_fit_calls()))
def test_one_dimensional_input_is_refused_without_printing_it(name):
    X, y = _rows()
    with pytest.raises(ValueError, match="Expected 2D array, got 1D") as info:
        _fit_calls()[name](X[:, 1], y)
    assert "987.65" not in _text(info)
    assert "reshape(-1, 1)" in str(info.value)  # scikit-learn's advice kept


def test_one_row_at_predict_and_search_and_clip_norm_without_printing_it():
    X, y = _rows()
    model = LogisticRegression(classes=[0, 1], random_state=0).fit(X, y)
    calls = [
        lambda: model.predict(X[7]),
        lambda: model.decision_function(X[7]),
        lambda: model.score(X[7], y[:3]),
        lambda: model.predict(np.float64(SECRET)),
        lambda: estimate_clip_norm(X[:, 1], epsilon=1.0, bounds=(1e-3, 1e4)),
        lambda: PrivateSearchCV(
            LogisticRegression(classes=[0, 1]), {"alpha": [1e-4, 1e-3]}, epsilon=1.0
        ).fit(X[:, 1], y),
    ]
    for call in calls:
        with pytest.raises(ValueError, match="Expected 2D array") as info:
            call()
        assert "987.65" not in _text(info)


def test_other_validation_errors_are_unchanged():
    X, y = _rows()
    with pytest.raises(ValueError, match="dim 3"):
        LogisticRegression(classes=[0, 1]).fit(X[:, :, None], y)
    with pytest.raises(ValueError, match="NaN"):
        X[0, 0] = np.nan
        Ridge().fit(X, y.astype(float))
