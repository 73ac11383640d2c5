"""Shared fixtures."""

import os

# The suite fits the same data many times on purpose: no composition warning
# (set before dpestim is imported, inherited by joblib's workers) unless the
# environment asks for it. Its own tests turn it on
# (tests/privacy/test_composition.py).
os.environ.setdefault("DPESTIM_COMPOSITION_WARNING", "0")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from dpestim.privacy import set_calibration_cache  # noqa: E402


@pytest.fixture(autouse=True, scope="session")
def _private_calibration_cache(tmp_path_factory):
    """Keep the test run's on-disk calibration cache out of the user's cache."""
    set_calibration_cache(True, tmp_path_factory.mktemp("calibration-cache"))
    yield
    set_calibration_cache(True, None)


@pytest.fixture
def binary_data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 5))
    w = rng.normal(size=5)
    y = (X @ w + 0.5 * rng.normal(size=300) > 0).astype(int)
    return X, y
