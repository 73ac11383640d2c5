"""The ``"auto"`` plan of blocked (Dask, out-of-core) input: few, large steps.

Every step on blocked data is a round trip to the workers (or a pass over
the blocks), so with ``batch_size="auto"`` the rule caps the steps at
``BLOCKED_MAX_STEPS`` and takes larger batches for the same passes. The plan
is public (the container's type, not its values) and the accounting is that
of the plan that runs.
"""

import math
import zlib

import numpy as np
import pytest

from dpestim import LogisticRegression
from dpestim.losses import LOGISTIC, MULTINOMIAL, SQUARED
from dpestim.scaling import BlockedArray
from dpestim.solvers import ERMPlan, resolve_solver
from dpestim.solvers._policy import BLOCKED_MAX_STEPS, blocked_steps

pytestmark = pytest.mark.filterwarnings("ignore::dpestim.PrivacyBudgetWarning")

FAMILY = ["dp-sgd", "dp-lssgd", "adp-sgd", "adp-adagrad"]


def _plan(n, d, K, loss, blocked, batch="auto"):
    return ERMPlan(
        n, d, K, loss, 1e-4, True, 1.0, "auto", batch, "auto", blocked=blocked
    )


@pytest.mark.parametrize("name", FAMILY)
def test_blocked_auto_plan_bounds_the_steps(name):
    """<= 200 steps for n >= 2,000 (<= 200 + ceil(n / B) below), 10+ passes."""
    solver = resolve_solver(name)
    capped = 0
    for n in (300, 1999, 2000, 30_000, 10**6, 2 * 10**7):
        for d, K, loss in ((5, 1, LOGISTIC), (500, 1, SQUARED), (50, 10, MULTINOMIAL)):
            for eps in (0.1, 1.0, 8.0, math.inf):
                plan, _ = solver.resolve_hyperparameters(
                    _plan(n, d, K, loss, True), eps, 1e-6
                )
                steps = solver.n_steps(plan)
                extra = 0 if n >= 2000 else math.ceil(n / plan.batch_size)
                bound = BLOCKED_MAX_STEPS + extra
                assert steps <= bound, (n, d, eps, steps)
                assert plan.max_iter >= 10
                memory, _ = solver.resolve_hyperparameters(
                    _plan(n, d, K, loss, False), eps, 1e-6
                )
                assert plan.batch_size >= memory.batch_size
                capped += solver.n_steps(memory) > steps
    assert capped > 0  # the rule changed some plans (it can fail)
    assert blocked_steps(5000) == BLOCKED_MAX_STEPS and blocked_steps(150) == 150


def test_explicit_batch_size_is_kept_on_blocked_data():
    solver = resolve_solver("dp-sgd")
    plan, _ = solver.resolve_hyperparameters(
        _plan(10**6, 50, 1, LOGISTIC, True, batch=256), 1.0, 1e-6
    )
    assert plan.batch_size == 256


def test_memmap_auto_fit_runs_the_blocked_plan_and_accounts_for_it(tmp_path):
    """The blocked "auto" fit is the in-memory fit of that plan, event included."""
    rng = np.random.default_rng(zlib.crc32(b"plan"))
    n, d = 40_000, 4
    X = rng.normal(size=(n, d))
    y = (X[:, 0] - X[:, 1] > 0).astype(int)
    np.save(tmp_path / "X.npy", X)
    Xm = np.load(tmp_path / "X.npy", mmap_mode="r")
    # feature_scale=None: blocked X is never privately rescaled (in-memory X is)
    kw = dict(
        classes=[0, 1], epsilon=1.0, delta=1e-6, random_state=3, feature_scale=None
    )
    blocked = LogisticRegression(utility_check=None, **kw).fit(
        BlockedArray(Xm, block_size=9_000), y
    )
    auto = LogisticRegression(utility_check=None, **kw).fit(X, y)
    assert blocked.n_iter_ <= BLOCKED_MAX_STEPS < auto.n_iter_
    assert blocked.batch_size_ > auto.batch_size_
    same = LogisticRegression(
        utility_check=None,
        **kw,
        batch_size=blocked.batch_size_,
        max_iter=blocked.max_iter_,
    ).fit(X, y)
    assert same.n_iter_ == blocked.n_iter_ and same.dp_event_ == blocked.dp_event_
    assert (
        blocked.epsilon_ <= 1.0 and same.noise_multiplier_ == blocked.noise_multiplier_
    )
    np.testing.assert_allclose(blocked.coef_, same.coef_, rtol=0, atol=1e-10)
