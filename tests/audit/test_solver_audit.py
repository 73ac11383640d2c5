"""dpestim.audit.audit_solver: tight white-box audits within the fast budget.

Each family gets a correct solver that must not be flagged and whose bound is
close to its reported epsilon, and broken variants (noise halved, sensitivity
doubled without telling the accountant) that must be flagged with the same
number of fits. The full-budget runs are in test_audit_slow.py and
benchmarks/audit_solvers.py.
"""

import math

import numpy as np
import pytest
from broken_solvers import (
    DoubledSensitivity,
    HalfNoise,
    LaplaceDoubledSensitivity,
    LaplaceHalfNoise,
)

from dpestim import Ridge
from dpestim.audit import audit_estimator, audit_solver
from dpestim.solvers import DPGD

LAPLACE = dict(max_iter=1, n_trials=3000, random_state=1)
GAUSS = dict(max_iter=2, delta=1e-2, n_trials=4000, random_state=1)


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


def test_discrete_laplace_mode_passes_the_audit():
    res = audit_solver(DPGD(noise="discrete_laplace"), max_iter=1, n_trials=1000)
    assert res.delta == 0.0 and not res.violation
    assert res.epsilon_lower_bound > 0.5


def test_momentum_solver_at_one_step_runs_its_own_path():
    res = audit_solver("dp-nag-opt", penalty=0.01, max_iter=1, n_trials=500)
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
