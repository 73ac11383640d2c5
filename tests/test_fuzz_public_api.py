"""Hypothesis fuzz test of the whole public surface (issue 13).

Estimators x solvers (by name or as objects with drawn parameters) x
estimator parameters x inputs, good and bad. Every fit must end, within a
time limit, in a clean ``ValueError`` / ``TypeError`` (never a numba or
NumPy internal error, a hang or a ``MemoryError``) or in a finite model whose
``epsilon_`` is within the requested epsilon and whose predictions are labels
of ``classes_``. Transformers (``StandardScaler``), the private helpers
(``private_quantile``, ``estimate_clip_norm``, the noise and audit
statistics) and ``PrivacyBudget`` / ``Relative`` are called with drawn
arguments under the same rule (issue 24). The default run is bounded
(``derandomize=True``, a few dozen examples); ``-m slow`` runs a longer
search.
"""

import math
import os
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from reliability_helpers import is_clean_error, time_limit

from dpestim import (
    FairLogisticRegression,
    LinearSVC,
    LogisticRegression,
    MinimaxLogisticRegression,
    MinimaxRegressor,
    Ridge,
)
from dpestim.audit import clopper_pearson_upper
from dpestim.audit._statistics import epsilon_lower_bound
from dpestim.model_selection import PrivacyBudget, Relative
from dpestim.preprocessing import StandardScaler, estimate_clip_norm, private_quantile
from dpestim.privacy import gaussian_noise
from dpestim.scaling import BlockedArray
from dpestim.solvers import SADDLE_SOLVERS, SOLVERS

ERM = [LogisticRegression, LinearSVC, Ridge]
MINIMAX = [MinimaxLogisticRegression, MinimaxRegressor, FairLogisticRegression]
LINEAR_SADDLE = ["dp-smd", "dp-smd-br"]


def _mostly(good, bad, odds=15):
    """``good`` ``odds`` times out of ``odds + 1``, else ``bad``: each field is
    usually valid, so that many examples get past validation and fit."""
    return st.integers(0, odds).flatmap(lambda k: bad if k == 0 else good)


def _pick(*values):
    return st.sampled_from(values)


REALS = st.sampled_from(
    [-1.0, 0.0, 1e-300, 1e-3, 0.3, 1.0, 4.0, 1e3, 1e300, math.inf, -math.inf, math.nan]
)
INTS = st.sampled_from([-1, 0, 1, 2, 3, 50, 10**12])


def _solver_params(cls):
    """Each parameter: its default, or a drawn (often bad) value."""
    fields = {}
    for name, default in cls().get_params().items():
        if isinstance(default, bool):
            bad = st.sampled_from([True, False, "yes"])
        elif isinstance(default, str):
            bad = st.sampled_from([default, "unknown"])
        elif isinstance(default, int):
            bad = INTS
        else:
            bad = st.one_of(REALS, INTS)
        fields[name] = _mostly(st.just(default), bad, odds=6)
    return st.fixed_dictionaries(fields).map(lambda p: cls(**p))


def _solver(names, registry):
    return st.one_of(
        st.sampled_from(names),
        st.sampled_from(names).flatmap(lambda n: _solver_params(registry[n])),
    )


@st.composite
def _matrix(draw, n, d):
    scale = draw(_mostly(_pick(1.0, 0.1, 10.0), _pick(0.0, 1e-300, 1e3, 1e100, 1e160)))
    X = np.random.default_rng(draw(st.integers(0, 2**16))).normal(size=(n, d)) * scale
    poison = draw(_mostly(st.none(), _pick(np.nan, np.inf)))
    if poison is not None:
        X[0, 0] = poison
    return X


@st.composite
def _labels(draw, n):
    kind = draw(_mostly(_pick("int", "int3", "str"), _pick("mixed", "float", "one")))
    base = np.arange(n) % (3 if kind == "int3" else 2)
    if kind == "str":
        return np.where(base == 1, "yes", "no")
    if kind == "mixed":
        mixed = base.astype(object)
        mixed[base == 1] = "yes"
        return mixed
    if kind == "float":
        return base + 0.5
    if kind == "one":
        return np.zeros(n, dtype=int)
    return base


def _classes(y):
    return _mostly(
        _pick(None, "exact"),
        _pick([0, 1], [0, 1, math.nan], np.array([0, "a"], dtype=object)),
    ).map(
        lambda c: (
            list(dict.fromkeys(np.asarray(y).tolist())) if isinstance(c, str) else c
        )
    )


COMMON = {
    "epsilon": _mostly(_pick(0.5, 1.0, 10.0, math.inf), _pick(1e-300, -1.0, math.nan)),
    "delta": _mostly(_pick(1e-5, 1e-3), _pick(0.0, 0.5, 1.0, -1.0)),
    "fit_intercept": _mostly(_pick(True, False), st.just("yes")),
    "random_state": st.integers(0, 3),
}


@st.composite
def erm_case(draw):
    cls = draw(st.sampled_from(ERM))
    n, d = draw(_pick(1, 2, 7, 30)), draw(_pick(1, 3))
    X = draw(_matrix(n, d))
    layout = draw(_mostly(_pick("dense", "csr"), _pick("blocked", "readonly", "frame")))
    if layout == "csr":
        X = sp.csr_matrix(X)
    if cls is Ridge:
        y = X[:, 0].toarray().ravel() if sp.issparse(X) else X[:, 0].copy()
        y = draw(_mostly(st.just(y), _pick(np.asarray(y, dtype=str), y * 1e200)))
        extra = {}
    else:
        y = draw(_labels(n))
        extra = {"classes": draw(_classes(y))}
    params = draw(st.fixed_dictionaries(COMMON)) | extra
    params |= draw(
        st.fixed_dictionaries(
            {
                "max_iter": _mostly(_pick(1, 2, 3), _pick(0, 10**12)),
                "batch_size": _mostly(_pick(1, 4, 256), st.just(0)),
                "learning_rate": _mostly(_pick(0.1, 0.5), _pick(1e300, 0.0, math.nan)),
                "alpha": _mostly(_pick(0.0, 1e-4, 1.0), _pick(1e300, -1.0)),
                "clip_norm": _mostly(_pick(1.0, 0.1), _pick(1e-300, 1e100, math.inf)),
                "noise_multiplier": _mostly(st.none(), _pick(0.0, 1.0, 1e-3)),
                "solver": _solver(sorted(SOLVERS), SOLVERS),
            }
        )
    )
    if params["noise_multiplier"] is not None and draw(st.booleans()):
        params["epsilon"] = None
    return cls(**params), _layout(X, layout), y, {}


def _layout(X, layout):
    """The same matrix as a read-only array, a DataFrame or blocked input."""
    if layout == "readonly":
        X = X.copy()
        X.flags.writeable = False
    elif layout == "frame":
        X = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
    elif layout == "blocked":
        X = BlockedArray(X, block_size=3)
    return X


@st.composite
def minimax_case(draw):
    cls = draw(st.sampled_from(MINIMAX))
    n, d = draw(_pick(2, 9, 40, 400)), draw(_pick(1, 3))
    X = draw(_matrix(n, d))
    a = np.arange(n) % 2
    params = draw(st.fixed_dictionaries(COMMON))
    params |= draw(
        st.fixed_dictionaries(
            {
                "l1_radius": _mostly(_pick(1.0, 4.0), REALS),
                "feature_bound": _mostly(_pick(1.0, 2.0), REALS),
                "groups": _mostly(_pick(None, [0, 1]), _pick([], [0])),
                "group_proportions": _mostly(
                    _pick("private", "uniform", [0.5, 0.5]),
                    _pick([math.inf, math.inf], [0.0, 1.0], [0.5]),
                ),
                "min_group_proportion": _mostly(_pick(None, 0.1), _pick(1e-300, 0.0)),
                "solver": _solver(LINEAR_SADDLE, SADDLE_SOLVERS),
            }
        )
    )
    if cls is MinimaxRegressor:
        params["target_bound"] = draw(_mostly(_pick(1.0, 3.0), REALS))
        y = X[:, 0].copy()
    else:
        y = draw(_labels(n))
        params["classes"] = draw(_classes(y))
    return cls(**params), X, y, {"sensitive_features": a}


# -- transformers, private helpers and search spaces (issue 24) -----------------

ANY = st.one_of(REALS, INTS, _pick("0.5", None, True, [0.5, 2.0], []))


def _call_scaler(draw):
    lo = draw(
        _mostly(_pick(-1.0, 0.0, -10.0), _pick(-1e300, -1e-300, 1e-300, math.nan))
    )
    hi = draw(_mostly(_pick(1.0, 10.0), _pick(1e300, 1e-300, math.inf, -2.0)))
    est = StandardScaler(
        bounds=(lo, hi),
        epsilon=draw(COMMON["epsilon"]),
        delta=draw(COMMON["delta"]),
        random_state=0,
    )
    X = draw(_matrix(draw(_pick(1, 5, 40)), draw(_pick(1, 3))))

    def run():
        Z = est.fit(X).transform(X)
        assert np.isfinite(est.scale_).all() and np.isfinite(est.mean_).all()
        if np.isfinite(X).all():
            assert np.isfinite(Z).all()
        return Z

    return run


def _call_quantile(draw):
    fn = draw(_pick("private_quantile", "estimate_clip_norm"))
    kwargs = {
        "quantile": draw(_mostly(_pick(0.5, 0.9), _pick(0.0, 1.0, "0.5", math.nan))),
        "epsilon": draw(_mostly(_pick(0.1, 1.0), _pick(math.inf, -1.0, "1", 0.0))),
        "bounds": draw(_mostly(_pick((1e-3, 1e3)), _pick((1.0, 0.5), (0.0, 1.0), ()))),
        "n_grid": draw(_mostly(_pick(2, 256), _pick(1, 10**12, math.inf, 2.5))),
        "random_state": 0,
    }
    X = draw(_matrix(draw(_pick(1, 5, 40)), 2))
    if fn == "private_quantile":
        values = np.abs(X[:, 0])
        q, eps = kwargs.pop("quantile"), kwargs.pop("epsilon")
        bounds = kwargs.pop("bounds")

        def run():
            value, _ = private_quantile(values, q, eps, bounds, **kwargs)
            assert bounds[0] <= value <= bounds[1]

        return run

    def run():
        value, _ = estimate_clip_norm(X, **kwargs)
        assert math.isfinite(value) and value > 0

    return run


def _call_helper(draw):
    kind = draw(_pick("clopper", "bound", "noise", "budget", "relative"))
    a, b = draw(ANY), draw(ANY)
    if kind == "clopper":
        k, n = draw(_mostly(_pick(0, 3, 10), ANY)), draw(_mostly(_pick(10, 50), ANY))
        alpha = draw(_mostly(_pick(0.05, 0.5), ANY))

        def run():
            value = clopper_pearson_upper(k, n, alpha)
            assert 0.0 <= value <= 1.0

        return run
    if kind == "bound":

        def run():
            eps, fpr, fnr = epsilon_lower_bound(a, b, 10, 1e-5, 0.05)
            assert eps >= 0 and not math.isnan(eps)

        return run
    if kind == "noise":
        rng = draw(_pick(np.random.default_rng(0), np.random.RandomState(0)))
        # the shape is the caller's memory request: small or malformed only
        shape = draw(_pick(-1, 0, 3, (2, -1), (2, 3), 2.5, "3", None))
        return lambda: np.isfinite(gaussian_noise(rng, a, shape)).all()
    if kind == "budget":

        def run():
            budget = PrivacyBudget(a, draw(_mostly(_pick(1e-5), ANY)))
            assert not math.isnan(budget.remaining())

        return run

    def run():
        factor = Relative(a if isinstance(a, list) else [a]).rvs(0)
        assert 0 < factor < math.inf

    return run


@st.composite
def misc_case(draw):
    """A call of a transformer, a private helper or a search-space class."""
    make = draw(st.sampled_from([_call_scaler, _call_quantile, _call_helper]))
    return make(draw)


def _check_call(run):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with time_limit(30):
                run()
    except Exception as exc:  # noqa: BLE001 - classified below
        assert is_clean_error(exc), (
            f"{type(exc).__module__}.{type(exc).__name__}: {exc}"
        )
        event("refused")
        return
    event("ran")


def _check(case):
    est, X, y, fit_params = case
    requested = est.epsilon
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with time_limit(30):
                est.fit(X, y, **fit_params)
                pred = est.predict(X.X if isinstance(X, BlockedArray) else X)
    except Exception as exc:  # noqa: BLE001 - classified below
        assert is_clean_error(exc), (
            f"{est!r}: {type(exc).__module__}.{type(exc).__name__}: {exc}"
        )
        event("refused")
        if os.environ.get("DPESTIM_FUZZ_LOG"):
            print("REFUSED", type(exc).__name__, str(exc)[:100])
        return
    event(f"fitted {type(est).__name__}")
    if os.environ.get("DPESTIM_FUZZ_LOG"):
        print("FITTED", type(est).__name__, est.solver_.name)
    coef = np.asarray(est.coef_, dtype=float)
    assert np.isfinite(coef).all() and np.isfinite(est.intercept_).all()
    if requested is not None and math.isfinite(requested):
        assert est.epsilon_ <= requested * (1 + 1e-9), (est.epsilon_, requested)
    else:
        assert not math.isnan(est.epsilon_)
    assert pred.shape[0] == (X.X if isinstance(X, BlockedArray) else X).shape[0]
    if hasattr(est, "classes_"):
        assert np.isin(pred, est.classes_).all()
        assert np.isin(np.asarray(y), est.classes_).all()


FAST = settings(
    max_examples=int(os.environ.get("DPESTIM_FUZZ_EXAMPLES", 40)),
    deadline=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
    database=None,
)
SLOW = settings(FAST, max_examples=600)


@FAST
@given(case=st.one_of(erm_case(), minimax_case()))
def test_fuzz_public_surface(case):
    _check(case)


@pytest.mark.slow
@SLOW
@given(case=st.one_of(erm_case(), minimax_case()))
def test_fuzz_public_surface_long(case):
    _check(case)


@FAST
@given(run=misc_case())
def test_fuzz_transformers_and_helpers(run):
    _check_call(run)


@pytest.mark.slow
@SLOW
@given(run=misc_case())
def test_fuzz_transformers_and_helpers_long(run):
    _check_call(run)
