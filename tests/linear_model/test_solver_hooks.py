"""The estimator honours the solver hooks: calibrate, spent_epsilon, attributes."""

import dataclasses

import numpy as np
import pytest

from dpestim import LogisticRegression, Ridge
from dpestim.solvers import DPSGD, SOLVERS, SolverResult


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


def _std_in(line):
    """The number after the last '=' of a report's noise line."""
    return float(line.rsplit("=", 1)[1].split()[0])


@pytest.mark.parametrize("name", sorted(SOLVERS))
def test_report_states_the_noise_actually_added_and_who_accounted(name):
    """The noise and accountant lines follow the solver, not a Gaussian default."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 3)) / 3
    y = (X[:, 0] > 0).astype(int)
    if "logistic" in SOLVERS[name].supported_losses:
        clf = LogisticRegression(
            classes=[0, 1], solver=name, max_iter=3, epsilon=2.0, random_state=0
        ).fit(X, y)
    else:  # regression-only solvers (adassp)
        clf = Ridge(solver=name, y_bound=(0, 1), epsilon=2.0, random_state=0)
        clf.fit(X, y)
    report = clf.privacy_report()
    solver = clf.solver_
    pure = solver.privacy_notion == "pure"
    assert ("Laplace" in report.noise) == pure
    closed_form = pure or name in ("dp-smd-sco", "objective-perturbation")
    assert ("not dp_accounting" in report.accountant) == closed_form
    assert report.accountant.endswith("(dp_accounting)") != closed_form
    assert f"noise       : {report.noise}" in str(report)
    if name in ("dp-sgd", "dp-lssgd"):
        expected = clf.noise_multiplier_ * clf.clip_norm_
        assert _std_in(report.noise) == pytest.approx(expected, rel=1e-5)
    if name in ("dp-scd", "seq-dp-scd"):  # noise scaled by its own sensitivity
        assert _std_in(report.noise) == pytest.approx(clf.noise_std_, rel=1e-5)
    if name in ("dp-gd", "dp-hb", "dp-nag", "dp-masg"):  # Laplace scale 2 C nm
        expected = 2 * clf.clip_norm_ * clf.noise_multiplier_
        assert _std_in(report.noise) == pytest.approx(expected, rel=1e-5)


def test_report_of_a_non_private_fit_says_no_noise():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(100, 2))
    y = (X[:, 0] > 0).astype(int)
    clf = LogisticRegression(classes=[0, 1], epsilon=np.inf, max_iter=1).fit(X, y)
    assert clf.privacy_report().noise.startswith("none")
