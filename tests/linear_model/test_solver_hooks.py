"""The estimator honours the solver hooks: calibrate, spent_epsilon, attributes."""

import dataclasses

import numpy as np
import pytest

from dpestim import LogisticRegression
from dpestim.solvers import DPSGD, SolverResult


class _WithAttributes(DPSGD):
    def solve(self, X, Y, plan, noise_multiplier, rng):
        result = super().solve(X, Y, plan, noise_multiplier, rng)
        return dataclasses.replace(result, attributes={"noise_schedule_": np.ones(3)})

    def calibrate(self, epsilon, delta, plan, *, accountant):
        return 7.0

    def composition(self, plan):
        return "custom composition"


def test_solver_attributes_calibration_and_composition_reach_the_estimator():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = (X[:, 0] > 0).astype(int)
    clf = LogisticRegression(classes=[0, 1], solver=_WithAttributes(), max_iter=1)
    clf.fit(X, y)
    np.testing.assert_array_equal(clf.noise_schedule_, np.ones(3))
    assert clf.noise_multiplier_ == 7.0
    assert clf.privacy_report().composition == "custom composition"
    assert "custom composition" in str(clf.privacy_report())


def test_attribute_names_must_end_with_underscore():
    with pytest.raises(ValueError, match="end in '_'"):
        SolverResult(
            coef=np.zeros((1, 1)),
            intercept=np.zeros(1),
            n_iter=1,
            dp_event=None,
            noise_multiplier=0.0,
            attributes={"bad": 1},
        )
