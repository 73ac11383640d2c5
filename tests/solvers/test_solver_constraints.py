"""Every solver parameter is validated, and no value can break the guarantee.

Issue 13: ``DPSMDSCO(step_size=-1.0)`` ran its vertex sampling at a
per-sample epsilon of -2 while reporting epsilon = 1, and ``DPSMD(step_size=
nan)`` returned a model with ``epsilon_ = nan``. Here every registered solver
(ERM and saddle) is fitted with every numeric parameter set to a negative,
zero, NaN, infinite and huge value: each must give a clean ``ValueError`` /
``TypeError`` naming the parameter, or a fit whose ``epsilon_`` is within the
requested epsilon.
"""

import math
import warnings
from numbers import Integral

import numpy as np
import pytest
from reliability_helpers import is_clean_error, time_limit
from sklearn.utils._param_validation import Interval, InvalidParameterError

from dpestim import LogisticRegression, MinimaxRegressor, Ridge
from dpestim.solvers import SADDLE_SOLVERS, SOLVERS, SaddlePlan
from dpestim.solvers.saddle import run_saddle
from dpestim.solvers.saddle._games import planted_game

EPS = 1.0
BAD = [-1, 0, math.nan, math.inf, -math.inf, 1e300]
HUGE_INT = 10**12
ALL_SOLVERS = {**SOLVERS, **SADDLE_SOLVERS}


def _numeric_params(cls):
    """``(name, is_integer)`` of every parameter constrained by an Interval."""
    for name, constraints in sorted(cls._parameter_constraints.items()):
        intervals = [c for c in constraints if isinstance(c, Interval)]
        if intervals:
            yield name, all(c.type is Integral for c in intervals)


CASES = [
    pytest.param(cls, name, is_int, id=f"{solver}-{name}")
    for solver, cls in sorted(ALL_SOLVERS.items())
    for name, is_int in _numeric_params(cls)
]


@pytest.mark.parametrize("solver", sorted(ALL_SOLVERS))
def test_every_parameter_has_a_constraint(solver):
    cls = ALL_SOLVERS[solver]
    assert set(cls._parameter_constraints) == set(cls().get_params()), solver


def _data(n=60):
    rng = np.random.default_rng(13)
    X = rng.normal(size=(n, 3))
    return X, (X[:, 0] > 0).astype(int), np.arange(n) % 2


def _fit(cls, params):
    """Fit through the estimator (or run_saddle for games); return epsilon_."""
    solver = cls(**params)
    X, y, a = _data(2000 if cls.name == "dp-smd-br" else 60)
    if cls.name in ("dp-smd", "dp-smd-br"):
        est = MinimaxRegressor(solver=solver, epsilon=EPS, groups=[0, 1])
        est.fit(X, np.clip(X[:, 0], -1, 1), sensitive_features=a)
        return est.epsilon_, np.r_[np.ravel(est.coef_), est.intercept_]
    if cls.name == "dp-sgda":
        from dpestim.solvers.saddle import resolve_saddle_solver

        solver = resolve_saddle_solver(solver)
        game = planted_game(4, 400, np.random.default_rng(0))
        plan = SaddlePlan(400, 4, 4, game.lipschitz, game.lipschitz, 0.0)
        res = run_saddle(solver, game, plan, EPS, 1e-5, np.random.default_rng(0))
        return res.epsilon, np.r_[res.x, res.y]
    losses = getattr(cls, "supported_losses", None)  # ERM solvers only
    if losses is not None and "logistic" not in losses:  # regression-only
        est = Ridge(solver=solver, epsilon=EPS, max_iter=2, y_bound=(0, 1))
        est.set_params(random_state=0).fit(X, y)
        return est.epsilon_, np.r_[np.ravel(est.coef_), est.intercept_]
    est = LogisticRegression(
        solver=solver, epsilon=EPS, max_iter=2, classes=[0, 1], random_state=0
    )
    est.fit(X, y)
    return est.epsilon_, np.r_[np.ravel(est.coef_), est.intercept_]


@pytest.mark.parametrize("cls, name, is_int", CASES)
def test_bad_values_are_refused_or_keep_the_guarantee(cls, name, is_int):
    values = BAD + ([HUGE_INT, -HUGE_INT] if is_int else [1e-300])
    for value in values:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                with time_limit(20):
                    epsilon, model = _fit(cls, {name: value})
            except Exception as exc:  # noqa: BLE001 - classified below
                assert is_clean_error(exc), (
                    f"{cls.__name__}({name}={value!r}): unclear "
                    f"{type(exc).__module__}.{type(exc).__name__}: {exc}"
                )
                assert name in str(exc), (
                    f"{cls.__name__}({name}={value!r}): the error does not name "
                    f"the parameter: {exc}"
                )
                continue
        assert epsilon <= EPS * (1 + 1e-9), (cls.__name__, name, value, epsilon)
        assert np.isfinite(model).all(), (cls.__name__, name, value)


@pytest.mark.parametrize(
    "cls, params",
    [
        (SOLVERS["dp-smd-sco"], {"step_size": -1.0}),
        (SADDLE_SOLVERS["dp-smd"], {"step_size": -1.0}),
        (SADDLE_SOLVERS["dp-smd"], {"step_size": np.nan}),
    ],
)
def test_issue_reproducers_are_refused_naming_the_solver_parameter(cls, params):
    with pytest.raises(
        InvalidParameterError, match=f"'step_size' parameter of {cls.__name__}"
    ):
        _fit(cls, params)


def test_smd_sco_accounts_the_step_size_it_runs():
    """The per-sample epsilon accounted is 4 tau L0 / B with the tau sampled."""
    X, y, _ = _data(400)
    est = LogisticRegression(
        utility_check=None,
        solver=SOLVERS["dp-smd-sco"](step_size=1e-3),
        epsilon=EPS,
        classes=[0, 1],
        random_state=0,
    ).fit(X, y)
    p = est.dp_params_
    assert p["eps_per_sample"] == pytest.approx(
        4 * p["step_size"] * p["lipschitz"] / p["batch_size"]
    )
    assert est.dp_event_.event.epsilon == p["eps_per_sample"]
    # a small step spends less than the request, and that is what is reported
    assert est.epsilon_ < EPS
