"""dpestim: differentially private scikit-learn estimators.

>>> from dpestim import LogisticRegression
>>> clf = LogisticRegression(epsilon=1.0, delta=1e-5, classes=[0, 1])

``import dpestim`` is cheap: the estimators and the subpackages are loaded on
first access (PEP 562 module ``__getattr__``, as scikit-learn and SciPy do),
so that numba, dp-accounting and the kernels are imported only when they are
used. ``from dpestim import LogisticRegression``, ``dpestim.datasets``,
``dir(dpestim)`` and ``dpestim.__all__`` behave as with eager imports.
"""

import importlib

__version__ = "0.1.0"

from .exceptions import (  # noqa: E402  (light: no third-party import)
    BudgetExceededError,
    FitDivergedError,
    PrivacyBudgetWarning,
    PrivacyLeakWarning,
    UtilityWarning,
)

#: Public name -> submodule that defines it, imported on first access.
_LAZY_ATTRIBUTES = {
    "FairLogisticRegression": "minimax",
    "LinearSVC": "linear_model",
    "LogisticRegression": "linear_model",
    "MinimaxLogisticRegression": "minimax",
    "MinimaxRegressor": "minimax",
    "Ridge": "linear_model",
    "set_composition_warning": "privacy",
}

#: Subpackages reachable as ``dpestim.<name>`` after a bare ``import dpestim``.
_SUBMODULES = frozenset(
    {
        "audit",
        "datasets",
        "exceptions",
        "linear_model",
        "losses",
        "minimax",
        "model_selection",
        "postprocessing",
        "preprocessing",
        "privacy",
        "scaling",
        "solvers",
        "utils",
    }
)

__all__ = [
    "BudgetExceededError",
    "FairLogisticRegression",
    "FitDivergedError",
    "LinearSVC",
    "LogisticRegression",
    "MinimaxLogisticRegression",
    "MinimaxRegressor",
    "PrivacyBudgetWarning",
    "PrivacyLeakWarning",
    "Ridge",
    "UtilityWarning",
    "__version__",
    "set_composition_warning",
]


def __getattr__(name):
    if name in _LAZY_ATTRIBUTES:
        module = importlib.import_module(f".{_LAZY_ATTRIBUTES[name]}", __name__)
        value = getattr(module, name)
        globals()[name] = value  # later accesses skip this function
        return value
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__) | _SUBMODULES)
