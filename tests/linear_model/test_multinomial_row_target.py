"""Multi-output classifiers (K > 2) rescale rows to their own median-norm target."""

import numpy as np
import pytest

from dpestim import LinearSVC, LogisticRegression
from dpestim.preprocessing import _fit_scales


def _data(n_classes, n=4000, d=8, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * 3.0
    y = rng.integers(0, n_classes, size=n)
    return X, y


def _scale(est, X, y):
    return est.fit(X, y).feature_scale_


@pytest.mark.parametrize("n_classes", [2, 4])
def test_target_depends_on_the_number_of_classes_only(n_classes):
    X, y = _data(n_classes)
    est = LogisticRegression(epsilon=1e4, random_state=0, max_iter=1)
    s = _scale(est, X, y)
    median = np.median(np.linalg.norm(X, axis=1))
    target = (
        _fit_scales.MULTINOMIAL_ROW_NORM_TARGET
        if n_classes > 2
        else _fit_scales.ROW_NORM_TARGET
    )
    # at a huge epsilon the private median is the grid bin of the true one
    assert s == pytest.approx(median / target, rel=0.05)
    assert f"/ {target:.4g}" in est.hyperparameters_["feature_scale"]


def test_classes_given_decide_like_the_labels():
    X, y = _data(2)
    a = LogisticRegression(epsilon=1e4, random_state=0, max_iter=1)
    b = LogisticRegression(epsilon=1e4, random_state=0, max_iter=1, classes=[0, 1, 2])
    assert _scale(b, X, y) == pytest.approx(
        _scale(a, X, y)
        * _fit_scales.ROW_NORM_TARGET
        / _fit_scales.MULTINOMIAL_ROW_NORM_TARGET
    )


@pytest.mark.parametrize("solver", ["auto", "dp-sgd"])
@pytest.mark.parametrize("loss", ["hinge", "squared_hinge"])
def test_multi_output_hinge_takes_its_own_target(loss, solver):
    # issue 25: LinearSVC's one-vs-rest outputs (K > 2) were rescaled to the
    # binary 2.95 with dp-sgd (MNIST -2.2 points at epsilon 1), then to the
    # softmax's 8.36 (digits after StandardScaler -11 points): 4.18
    target = _fit_scales.MULTIOUTPUT_HINGE_ROW_NORM_TARGET
    assert _fit_scales.ROW_NORM_TARGET < target
    assert target < _fit_scales.MULTINOMIAL_ROW_NORM_TARGET
    X, y = _data(4)
    svc = LinearSVC(epsilon=1e4, random_state=0, max_iter=1, loss=loss, solver=solver)
    median = np.median(np.linalg.norm(X, axis=1))
    assert _scale(svc, X, y) == pytest.approx(median / target, rel=0.05)
    assert f"/ {target:.4g}" in svc.hyperparameters_["feature_scale"]


def test_binary_hinge_solver_target_and_explicit_scales_keep_their_targets():
    X, y = _data(2)
    median = np.median(np.linalg.norm(X, axis=1))
    svc = LinearSVC(epsilon=1e4, random_state=0, max_iter=1)
    assert _scale(svc, X, y) == pytest.approx(
        median / _fit_scales.ROW_NORM_TARGET, rel=0.05
    )
    # a solver's own row_norm_target wins over the number of classes
    X4, y4 = _data(4)
    op = LinearSVC(epsilon=1e4, random_state=0, solver="objective-perturbation")
    own = op.fit(X4, y4).solver_.row_norm_target
    assert own is not None
    assert f"/ {own:.4g}" in op.hyperparameters_["feature_scale"]
    # nothing estimated: no target at all
    fixed = LinearSVC(epsilon=1.0, random_state=0, feature_scale=None)
    assert _scale(fixed, X4, y4) == 1.0
    fixed = LogisticRegression(epsilon=1.0, random_state=0, feature_scale=None)
    assert _scale(fixed, X, y) == 1.0


@pytest.mark.parametrize("solver", ["dp-scd", "dp-gd"])
def test_multi_output_hinge_keeps_the_binary_target_outside_dp_sgd(solver):
    # the rule is the solver's (multiclass_hinge_row_target): dp-scd lost
    # about 5 points on digits at 8.36, the accelerated family is not measured
    # (the multi-output target is the dp-sgd family's rule)
    X, y = _data(4)
    svc = LinearSVC(epsilon=1e4, random_state=0, max_iter=1, solver=solver)
    median = np.median(np.linalg.norm(X, axis=1))
    assert _scale(svc, X, y) == pytest.approx(
        median / _fit_scales.ROW_NORM_TARGET, rel=0.05
    )
