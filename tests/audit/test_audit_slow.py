"""Slow audit tier (``pytest -m slow tests/audit``): the full-budget targets.

The configurations are those of ``benchmarks/privacy/audit_solvers.py`` (which
records the numbers in BENCHMARKS.md): dp-sgd at full batch and epsilon = 1
reaches 0.8x its reported epsilon, the Laplace solvers 0.9x, every other
registered solver stays below its reported epsilon, and every broken variant
of the families that can be audited tightly is flagged with the same number
of fits. The rows of broken seq-dp-scd and dp-smd variants measure that no
test of the released model can flag them (see BENCHMARKS.md).
"""

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from broken_solvers import BROKEN_BY_FAMILY, ShuffledAsPoisson

from dpestim import Ridge
from dpestim.audit import audit_estimator

_PATH = (
    Path(__file__).resolve().parents[2] / "benchmarks" / "privacy" / "audit_solvers.py"
)
_spec = importlib.util.spec_from_file_location("audit_solvers", _PATH)
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)

pytestmark = pytest.mark.slow
_ROWS = {label: (solver, kw) for label, solver, kw in bench.configs()}
_TARGETS = {"dp-sgd q=1 T=2 delta=0.01": 0.8, "dp-gd T=1": 0.9}
#: Broken variants whose release is as private as reported in every setting
#: the audit can build (not flagged, by design of the measurement).
_UNDETECTABLE = {
    "broken-seq-scd-half-noise (same settings)",
    "broken-seq-scd-parallel-sensitivity (same settings)",
    "broken-smd-uncapped-step (same settings)",
}


@pytest.mark.parametrize("label", sorted(_ROWS), ids=str)
def test_full_budget_row(label):
    solver, kw = _ROWS[label]
    row = bench.run_row(label, solver, kw, seed=0)
    assert "error" not in row or "does not support" in row["error"], row
    if "error" in row:
        return
    broken = label.startswith("broken") and label not in _UNDETECTABLE
    assert row["violation"] == broken, row
    if label in _TARGETS:
        assert row["ratio"] >= _TARGETS[label], row


def test_every_family_has_broken_variants():
    names = {
        getattr(s, "label", s.name) for pair in BROKEN_BY_FAMILY.values() for s in pair
    }
    assert {f"{n} (same settings)" for n in names} <= set(_ROWS)


def _participation(solver, trials, seed):
    """Noise-free fits: does the canary's participation count vary as Poisson?

    With no noise, alpha = 0 and a Dirac canary whose clipped gradient is
    always ``clip_norm`` (Ridge, huge target), the canary's coefficient is
    ``count * lr * c / (q n)``: the number of steps it took part in is read
    off the released model. Poisson sampling gives Binomial(T, q); shuffled
    epochs give a constant. A final-model audit cannot see the difference.
    """
    rng = np.random.default_rng(seed)
    n, q_batch = 61, 15
    X = np.vstack([np.zeros((n - 1, 1)), [[4.0]]])
    y = np.append(np.zeros(n - 1), 1e6)
    est = Ridge(
        epsilon=None, noise_multiplier=0.0, solver=solver, max_iter=2,
        batch_size=q_batch, learning_rate=0.5, alpha=0.0, fit_intercept=False,
    )  # fmt: skip
    q = q_batch / n
    steps = int(np.ceil(2 / q - 1e-9))
    unit = 0.5 / (q * n)
    counts = [
        est.set_params(random_state=int(rng.integers(2**31))).fit(X, y).coef_[0] / unit
        for _ in range(trials)
    ]
    return np.var(counts, ddof=1) / (steps * q * (1 - q))


def test_participation_counts_catch_shuffling_accounted_as_poisson():
    assert _participation("dp-sgd", 300, 1) > 0.5
    assert _participation(ShuffledAsPoisson(), 300, 1) < 0.5


def test_parallel_audit_equals_sequential():
    X = np.zeros((20, 1))
    y = np.zeros(20)
    est = Ridge(epsilon=1.0, delta=1e-3, solver="dp-gd", max_iter=2)
    a = audit_estimator(est, X, y, n_trials=10, random_state=0)
    b = audit_estimator(est, X, y, n_trials=10, random_state=0, n_jobs=2)
    np.testing.assert_array_equal(a.scores_in, b.scores_in)
    np.testing.assert_array_equal(a.scores_out, b.scores_out)
