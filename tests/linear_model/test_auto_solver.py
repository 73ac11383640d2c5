"""solver="auto": the public rule table of dpestim.solvers._auto."""

import numpy as np
import pytest

from dpestim import LinearSVC, LogisticRegression, Ridge
from dpestim.solvers._auto import ADASSP_MAX_SAMPLES, RULES, choose_solver


def _reg(n, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / 3
    return X, X @ np.ones(d) + 0.1 * rng.normal(size=n)


def test_small_ridge_with_wide_target_bound_picks_adassp():
    X, y = _reg(300)
    m = Ridge(solver="auto", y_bound=(-30, 30), random_state=0).fit(X, y)
    assert m.solver_.name == "adassp"
    assert m.hyperparameters_["solver"].startswith("adassp ('auto': Ridge")
    assert "adassp ('auto'" in str(m.privacy_report())
    assert m.epsilon_ <= 1.0


@pytest.mark.parametrize(
    "n, y_bound, expected",
    [
        (ADASSP_MAX_SAMPLES + 1, (-30, 30), "dp-sgd"),  # large n
        (300, None, "dp-sgd"),  # no bound
        (300, "data", "dp-sgd"),  # read from the data: not a public bound
        (300, (-3, 3), "dp-sgd"),  # target on the clip's scale
    ],
)
def test_large_or_unbounded_ridge_picks_dp_sgd(n, y_bound, expected):
    X, y = _reg(n)
    m = Ridge(solver="auto", y_bound=y_bound, random_state=0, max_iter=2).fit(X, y)
    assert m.solver_.name == expected


@pytest.mark.parametrize("Est", [LogisticRegression, LinearSVC])
def test_classifiers_pick_dp_sgd_and_pure_dp_picks_dp_gd(Est):
    X, y = _reg(200)
    y = (y > 0).astype(int)
    m = Est(solver="auto", classes=[0, 1], random_state=0).fit(X, y)
    assert m.solver_.name == "dp-sgd"
    m = Est(solver="auto", delta=0.0, classes=[0, 1], random_state=0).fit(X, y)
    assert m.solver_.name == "dp-gd" and m.delta_ == 0.0 and m.epsilon_ <= 1.0


def test_choice_reads_shapes_not_values():
    X, y = _reg(300)
    a = Ridge(solver="auto", y_bound=(-30, 30), random_state=0).fit(X, y)
    b = Ridge(solver="auto", y_bound=(-30, 30), random_state=0).fit(1e3 * X[::-1], -y)
    assert a.hyperparameters_["solver"] == b.hyperparameters_["solver"]


def test_explicit_solver_unchanged_and_table_ends_with_a_default():
    X, y = _reg(300)
    m = Ridge(solver="dp-sgd", y_bound=(-3, 3), random_state=0).fit(X, y)
    assert "solver" not in m.hyperparameters_
    name, reason = choose_solver(
        {"pure": False, "blocked": False, "loss": "hinge", "n": 10, "d": 1,
         "target_ratio": 0.0, "private": True, "sparse": False}
    )  # fmt: skip
    assert (name, reason) == RULES[-1][1:]
    # the paper solvers that never won at their defaults are never picked
    picked = {rule[1] for rule in RULES}
    assert picked == {"dp-gd", "dp-sgd", "adassp"}
