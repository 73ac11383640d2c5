"""Every public object that releases something private charges the budget.

Issue 24, item 2. The test walks the public API (``dpestim.__all__`` and the
``__all__`` of every public module of the package, found by
:func:`pkgutil.walk_packages`), fits every public class with a ``fit``
method on small data inside a :class:`~dpestim.model_selection.PrivacyBudget`,
and checks that whatever it reports releasing (a ``dp_event_`` other than
``NoOpDpEvent``, or an ``epsilon_ > 0``) was charged: at least one record, and
the composition of the charged events is at least the reported ``epsilon_``
at the reported ``delta_``. The list of classes is discovered, not written
down, so a new public class that releases without charging makes this test
fail; a new class that reports nothing (no ``dp_event_`` / ``epsilon_``)
fails too unless it is added, with a reason, to ``NOT_RELEASING``. Public
functions whose first parameter is data (``X``, ``values``, ``y``) and that
take an ``epsilon`` are discovered the same way and must charge the event
they return.
"""

import importlib
import inspect
import math
import pkgutil
import warnings

import dp_accounting
import numpy as np
import pytest
from sklearn.base import BaseEstimator, is_regressor

import dpestim
from dpestim.model_selection import PrivacyBudget
from dpestim.privacy.ledger import composed_epsilon

#: Public classes with a ``fit`` that release nothing computed from private
#: data (each with the reason). Anything else must report and charge.
NOT_RELEASING = {
    # clips rows to a public norm: fit reads only the shape; reports
    # NoOpDpEvent and epsilon_ = 0, which the walk also checks
    "RowNormClipper": "clips to a public norm (NoOpDpEvent, epsilon_ = 0)",
}

#: Values of constructor parameters that have no default (by parameter
#: name, not by class, so that new classes get them too).
REQUIRED = {
    "estimator": lambda: dpestim.LogisticRegression(
        epsilon=1.0,
        delta=1e-5,
        classes=[0, 1],
        max_iter=2,
        random_state=0,
        feature_scale=None,  # one charge per fit (the walk's accounting)
    ),
    "param_distributions": lambda: {"alpha": [1e-3, 1e-2]},
    "bounds": lambda: (-1.0, 1.0),  # StandardScaler's public data range
}

#: Public values of optional parameters, when the class has them (the
#: defaults otherwise): a finite budget, public classes and groups, a seed.
PUBLIC = {
    "epsilon": 1.0,
    "delta": 1e-5,
    "classes": [0, 1],
    "groups": [0, 1],
    "random_state": 0,
}


def _public_modules():
    yield dpestim
    for info in pkgutil.walk_packages(dpestim.__path__, "dpestim."):
        if any(part.startswith("_") for part in info.name.split(".")):
            continue  # private modules (and dpestim.__main__, the CLI)
        yield importlib.import_module(info.name)


def _public_classes():
    found = {}
    for module in _public_modules():
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name, None)
            if inspect.isclass(obj) and callable(getattr(obj, "fit", None)):
                found[obj.__name__] = obj
    return dict(sorted(found.items()))


CLASSES = _public_classes()

#: First parameter names of public functions that take private data.
DATA_ARGUMENTS = {"X", "values", "y"}


def _public_releasing_functions():
    """Public functions taking data first and an ``epsilon``."""
    found = {}
    for module in _public_modules():
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name, None)
            if not inspect.isfunction(obj):
                continue
            params = list(inspect.signature(obj).parameters)
            if params and params[0] in DATA_ARGUMENTS and "epsilon" in params:
                found[name] = obj
    return dict(sorted(found.items()))


FUNCTIONS = _public_releasing_functions()


def test_the_walk_finds_the_known_releasing_classes():
    """A sanity check of the walk itself (not the list the test runs on)."""
    for name in (
        "LogisticRegression", "LinearSVC", "Ridge", "FairLogisticRegression",
        "MinimaxLogisticRegression", "MinimaxRegressor", "PrivateSearchCV",
        "PrivateThresholdOptimizer", "StandardScaler", "PrivateRowNormClipper",
    ):  # fmt: skip
        assert name in CLASSES
    assert set(NOT_RELEASING) <= set(CLASSES), "stale NOT_RELEASING entry"
    assert {"private_quantile", "estimate_clip_norm"} <= set(FUNCTIONS)


def _build(cls):
    kwargs = {}
    for name, p in inspect.signature(cls.__init__).parameters.items():
        if name == "self" or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.default is inspect.Parameter.empty:
            if name not in REQUIRED:
                pytest.fail(
                    f"{cls.__name__}: no test value for its required parameter "
                    f"{name!r}; add one to REQUIRED in {__file__}."
                )
            kwargs[name] = REQUIRED[name]()
        elif name in PUBLIC:
            kwargs[name] = PUBLIC[name]
    return cls(**kwargs)


def _data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    a = (rng.random(n) < 0.5).astype(int)
    X = rng.uniform(-1, 1, (n, 3))
    y_class = (X[:, 0] + 0.3 * rng.normal(size=n) > 0).astype(int)
    y_real = np.clip(X[:, 0] + 0.1 * rng.normal(size=n), -1, 1)
    return X, y_class, y_real, a


def _fit(est):
    X, y_class, y_real, a = _data()
    y = y_real if is_regressor(est) else y_class
    params = inspect.signature(est.fit).parameters
    kwargs = {"sensitive_features": a} if "sensitive_features" in params else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # utility / leak warnings of tiny fits
        return est.fit(X, y, **kwargs)


@pytest.mark.parametrize("name", list(CLASSES))
def test_every_releasing_public_class_charges_the_active_budget(name):
    _check_charged(name, _build(CLASSES[name]))


class _UnchargedRelease(BaseEstimator):
    """What a new public class that forgets to charge would look like."""

    def __init__(self, epsilon=1.0, delta=1e-5):
        self.epsilon, self.delta = epsilon, delta

    def fit(self, X, y):
        self.dp_event_ = dp_accounting.GaussianDpEvent(5.0)
        self.epsilon_, self.delta_ = 1.0, self.delta
        return self


class _UnreportedFit(BaseEstimator):
    """A new public class with a fit that reports nothing."""

    def fit(self, X, y):
        self.mean_ = np.mean(X, axis=0)
        return self


@pytest.mark.parametrize("cls", [_UnchargedRelease, _UnreportedFit])
def test_the_check_fails_on_a_new_uncharged_class(cls):
    with pytest.raises(AssertionError, match="charged nothing|reports neither"):
        _check_charged(cls.__name__, _build(cls))


def _check_charged(name, est):
    budget = PrivacyBudget(1e6, 1e-5)
    with budget:
        _fit(est)
    event = getattr(est, "dp_event_", None)
    reported = getattr(est, "epsilon_", None)
    if event is None and reported is None:
        assert name in NOT_RELEASING, (
            f"{name} has fit but reports neither dp_event_ nor epsilon_: make it "
            "report (and charge) what it releases, or list it in NOT_RELEASING "
            "with the reason it releases nothing private."
        )
        return
    releases = not isinstance(event, dp_accounting.NoOpDpEvent) or (
        reported is not None and reported > 0
    )
    if not releases:
        assert name in NOT_RELEASING, f"{name} reports releasing nothing: list it."
        return
    assert name not in NOT_RELEASING, f"{name} releases: remove it from the list."
    records = budget.records
    assert records, f"{name} released ({event!r}) but charged nothing."
    if reported is None:  # an event without a reported epsilon: the event itself
        return
    delta = float(getattr(est, "delta_", budget.delta))
    relation = records[0][1]
    charged = composed_epsilon([r[0] for r in records], delta, "rdp", relation)
    assert charged >= reported * (1 - 1e-9) or math.isinf(charged), (
        f"{name}: charged epsilon {charged:.6g} at delta={delta:g} is below its "
        f"reported epsilon_ = {reported:.6g}; records: {records}"
    )


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_every_releasing_public_function_charges_the_active_budget(name):
    """The functions return ``(value, dp_event)``; the event must be charged."""
    X = _data()[0]
    first = next(iter(inspect.signature(FUNCTIONS[name]).parameters))
    data = np.linalg.norm(X, axis=1) if first == "values" else X  # 1-D values
    budget = PrivacyBudget(1e6, 1e-5)
    with budget, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, event = FUNCTIONS[name](
            data, quantile=0.5, epsilon=1.0, bounds=(1e-3, 10.0), random_state=0
        )
    records = budget.records
    assert records, f"{name} released ({event!r}) but charged nothing."
    assert [r[0] for r in records] == [event]
    charged = composed_epsilon([event], 1e-5, "rdp", records[0][1])
    assert charged >= 1.0 * (1 - 1e-9)
