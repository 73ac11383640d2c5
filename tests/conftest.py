"""Shared fixtures."""

import numpy as np
import pytest


@pytest.fixture
def binary_data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 5))
    w = rng.normal(size=5)
    y = (X @ w + 0.5 * rng.normal(size=300) > 0).astype(int)
    return X, y
