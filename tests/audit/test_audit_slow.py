"""Slow audit tier (``pytest -m slow tests/audit``): every registered solver
passes the audit; the broken variants are caught.

The configuration is the one of ``benchmarks/audit_solvers.py`` (which
records the numbers in BENCHMARKS.md); fewer trials here.
"""

import importlib.util
from pathlib import Path

import pytest
from broken_solvers import HalfNoise, NoClipping, ShuffledAsPoisson

from dpestim.solvers import SOLVERS

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "audit_solvers.py"
_spec = importlib.util.spec_from_file_location("audit_solvers", _PATH)
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)

pytestmark = pytest.mark.slow


def _correct():
    for name in sorted(SOLVERS):
        for label, est, target in bench.estimators(name):
            yield pytest.param(label, est, target, id=f"{name}-{label}")


@pytest.mark.parametrize("label,est,target", list(_correct()))
def test_correct_solver_lower_bound_below_reported_epsilon(label, est, target):
    row = bench.run_one(label, est, target, trials=1000, seed=1)
    assert "error" not in row, row.get("error")
    assert not row["violation"], row


@pytest.mark.parametrize("solver", [NoClipping(), HalfNoise()], ids=lambda s: s.name)
def test_audit_catches_broken_variant(solver):
    label, est, target = next(
        e for e in bench.estimators(solver, full_batch=True) if e[0] == "Ridge"
    )
    row = bench.run_one(label, est, target, trials=4000, seed=1)
    assert row["violation"], row


def test_participation_counts_catch_shuffling_accounted_as_poisson():
    assert bench.participation_test("dp-sgd", 300, 1)["poisson_consistent"]
    assert not bench.participation_test(ShuffledAsPoisson(), 300, 1)[
        "poisson_consistent"
    ]


def test_parallel_audit_equals_sequential():
    import numpy as np

    from dpestim import Ridge
    from dpestim.audit import audit_estimator

    X, _, y = bench.audit_data()
    est = Ridge(epsilon=1.0, delta=1e-3, solver="dp-gd", max_iter=2)
    a = audit_estimator(est, X, y, n_trials=10, random_state=0)
    b = audit_estimator(est, X, y, n_trials=10, random_state=0, n_jobs=2)
    np.testing.assert_array_equal(a.scores_in, b.scores_in)
    np.testing.assert_array_equal(a.scores_out, b.scores_out)
