"""dpestim.audit.audit_solver: tight white-box audits within the fast budget.

Each family gets a correct solver that must not be flagged and whose bound is
close to its reported epsilon, and broken variants (noise halved, sensitivity
doubled without telling the accountant) that must be flagged with the same
number of fits. The full-budget runs are in test_audit_slow.py and
benchmarks/privacy/audit_solvers.py.
"""

import math

import numpy as np
import pytest
from broken_solvers import (
    DoubledSensitivity,
    GameDoubledSensitivity,
    GameHalfNoise,
    HalfNoise,
    LaplaceDoubledSensitivity,
    LaplaceHalfNoise,
    ScdDoubledSensitivity,
    ScdHalfNoise,
    SgdaDoubledSensitivity,
    SgdaHalfNoise,
)
from game_audit import audit_game_solver

from dpestim import FairLogisticRegression, MinimaxLogisticRegression, Ridge
from dpestim.audit import audit_estimator, audit_solver
from dpestim.solvers import DPGD, DPSGDA

LAPLACE = dict(max_iter=1, n_trials=3000, random_state=1)
GAUSS = dict(max_iter=2, delta=1e-2, n_trials=4000, random_state=1)
SCD = dict(max_iter=2, delta=1e-2, n_trials=3000, penalty=0.01, random_state=1)
SGDA = dict(max_iter=1, delta=1e-2, n_trials=1500, random_state=1)
GAME = dict(delta=1e-2, n_trials=4000, random_state=1)


def test_laplace_family_is_tight_and_catches_broken_variants():
    ok = audit_solver("dp-gd", **LAPLACE)
    assert ok.delta == 0.0 and ok.epsilon == pytest.approx(1.0)
    assert not ok.violation
    assert ok.epsilon_lower_bound > 0.75  # 0.9x at 20000 fits (slow tier)
    assert ok.n_eval == 2700
    for broken in (LaplaceHalfNoise(), LaplaceDoubledSensitivity()):
        res = audit_solver(broken, **LAPLACE)
        assert res.violation and res.epsilon_lower_bound > 1.3, res


def test_gaussian_family_catches_broken_variants_with_the_same_fits():
    ok = audit_solver("dp-sgd", **GAUSS)
    assert ok.delta == 1e-2 and not ok.violation
    assert ok.epsilon_lower_bound > 0.4  # 0.8x at 50000 fits (slow tier)
    for broken in (HalfNoise(), DoubledSensitivity()):
        res = audit_solver(broken, **GAUSS)
        assert res.violation and res.epsilon_lower_bound > 1.2, res


def test_dual_coordinate_family_catches_broken_variants_with_the_same_fits():
    # dp-scd: one canary, full batch, the noisy shared vector v is the
    # Gaussian mechanism of sensitivity C per step (0.65x at 4000 fits)
    ok = audit_solver("dp-scd", **SCD)
    assert ok.delta == 1e-2 and not ok.violation
    assert ok.epsilon_lower_bound > 0.4
    for broken in (ScdHalfNoise(), ScdDoubledSensitivity()):
        res = audit_solver(broken, **SCD)
        assert res.violation and res.epsilon_lower_bound > 1.2, res


def test_noisy_sgda_catches_broken_variants_with_the_same_fits():
    # one full-batch step of the minimax estimator's default saddle solver:
    # theta = -G / n, the Gaussian mechanism of the jointly clipped gradient
    ok = audit_solver("noisy-sgda", **SGDA)
    assert ok.delta == 1e-2 and not ok.violation
    assert ok.epsilon_lower_bound > 0.2
    for broken in (SgdaHalfNoise(), SgdaDoubledSensitivity()):
        res = audit_solver(broken, **SGDA)
        assert res.violation and res.epsilon_lower_bound > 1.05, res


def test_dp_sgda_game_catches_broken_variants_with_the_same_fits():
    # replace-one, the canary placed in the batch the public permutation
    # makes visible (the guarantee holds for every permutation)
    ok = audit_game_solver(DPSGDA(), **GAME)
    assert not ok.violation and ok.epsilon_lower_bound > 0.3
    for broken in (GameHalfNoise(), GameDoubledSensitivity()):
        res = audit_game_solver(broken, **GAME)
        assert res.violation and res.epsilon_lower_bound > 1.1, res


def test_estimator_audit_accepts_minimax_estimators():
    X = np.zeros((12, 2))
    y = np.zeros(12, dtype=int)
    a = np.arange(12) % 3
    est = MinimaxLogisticRegression(
        epsilon=math.inf, classes=[0, 1], groups=[0, 1, 2], fit_intercept=False,
        group_proportions="uniform",
    )  # fmt: skip
    res = audit_estimator(est, X, y, sensitive_features=a, n_trials=4)
    # noisy-sgda: add/remove-one; the canary (label 1) raises its coefficient
    assert np.all(res.scores_out == 0) and np.all(res.scores_in > 0)
    smd = est.set_params(solver="dp-smd", epsilon=1.0, delta=1e-2)
    res = audit_estimator(smd, X, y, sensitive_features=a, canary_group=2, n_trials=4)
    assert res.n_trials == 4 and res.delta == 1e-2  # replace-one ran
    fair = FairLogisticRegression(
        epsilon=1.0, delta=1e-3, classes=[0, 1], groups=[0, 1, 2],
        fit_intercept=False, group_proportions="uniform",
    )  # fmt: skip
    res = audit_estimator(fair, X, y, sensitive_features=a, n_trials=4)
    # the fit's epsilon_: its scale estimates and utility check composed with
    # the run (dp-accounting's bound of the whole event, below the request)
    assert 0.9 < res.epsilon <= 1.0 and res.delta == 1e-3
    with pytest.raises(ValueError, match="sensitive_features"):
        audit_estimator(est, X, y, sensitive_features=a[:5], n_trials=4)
    with pytest.raises(ValueError, match="canary_group"):
        audit_estimator(Ridge(), X, y, canary_group=1, n_trials=4)


def test_discrete_laplace_mode_passes_the_audit():
    # seeded like every audit of this file: an unseeded run fails by chance with
    # probability up to alpha (5%) when the bound is tight (one failed in CI)
    res = audit_solver(
        DPGD(noise="discrete_laplace"), max_iter=1, n_trials=1000, random_state=1
    )
    assert res.delta == 0.0 and not res.violation
    assert res.epsilon_lower_bound > 0.5


def test_momentum_solver_at_one_step_runs_its_own_path():
    res = audit_solver(
        "dp-nag-opt", penalty=0.01, max_iter=1, n_trials=500, random_state=1
    )
    assert res.delta == 0.0 and not res.violation


def test_fixed_threshold_uses_every_trial_and_bad_threshold_raises():
    res = audit_solver("dp-gd", max_iter=1, n_trials=50, threshold=0.0)
    assert res.n_eval == 50 and res.threshold == 0.0
    with pytest.raises(ValueError, match="threshold"):
        audit_solver("dp-gd", n_trials=50, threshold="best")
    for bad, match in [
        (dict(n_trials=3), "n_trials"),
        (dict(alpha=0.0), "alpha"),
        (dict(selection_fraction=1.0), "selection_fraction"),
        (dict(n_samples=0), "n_samples"),
        (dict(solver="dp-sgd", batch_size=10), "same number of steps"),
    ]:
        with pytest.raises(ValueError, match=match):
            audit_solver(**{"solver": "dp-gd", **bad})


def test_estimator_audit_uses_the_solvers_neighbouring_relation():
    X = np.zeros((10, 2))
    y = np.zeros(10)
    noiseless = dict(epsilon=math.inf, max_iter=1, alpha=0.0, fit_intercept=False)
    replace = audit_estimator(Ridge(solver="dp-gd", **noiseless), X, y, n_trials=4)
    add = audit_estimator(Ridge(solver="dp-sgd", **noiseless), X, y, n_trials=4)
    # Replace-one: the canary's mirror image pushes the coefficient the other
    # way; add/remove-one: without the canary nothing moves it.
    assert np.all(replace.scores_out < 0) and np.all(replace.scores_in > 0)
    assert np.all(add.scores_out == 0) and np.all(add.scores_in > 0)
    forced = audit_estimator(
        Ridge(solver="dp-gd", **noiseless), X, y, n_trials=4,
        neighbouring="add_or_remove_one",
    )  # fmt: skip
    assert np.all(forced.scores_out == 0)
    with pytest.raises(ValueError, match="neighbouring"):
        audit_estimator(Ridge(), X, y, n_trials=4, neighbouring="swap")
