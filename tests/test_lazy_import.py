"""``import dpestim`` is lazy (PEP 562) and the public API still behaves eagerly.

Each check that looks at ``sys.modules`` runs in a fresh interpreter: the
test process has imported everything already.
"""

import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import dpestim

REPO = Path(__file__).resolve().parents[1]


def _run(code):
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=True,
    )
    return out.stdout.strip().splitlines()[-1]


def test_import_dpestim_loads_no_heavy_dependency():
    heavy = ("numba", "llvmlite", "dp_accounting", "matplotlib", "dask", "sklearn")
    loaded = _run(
        f"import sys, dpestim; print(sorted(m for m in {heavy!r} if m in sys.modules))"
    )
    assert loaded == "[]"


def test_lazy_names_resolve_in_a_fresh_process():
    # Every public name, the subpackages and dir() after a bare import.
    out = _run(
        "import dpestim, sys\n"
        "for name in dpestim.__all__: getattr(dpestim, name)\n"
        "from dpestim import LogisticRegression, FairLogisticRegression\n"
        "assert LogisticRegression is dpestim.LogisticRegression\n"
        "assert dpestim.datasets.get_data_home is not None\n"
        "assert set(dpestim.__all__) <= set(dir(dpestim))\n"
        "assert 'solvers' in dir(dpestim)\n"
        "print('ok')"
    )
    assert out == "ok"


def test_public_names_are_the_eager_ones():
    from dpestim.linear_model import LinearSVC, LogisticRegression, Ridge
    from dpestim.minimax import (
        FairLogisticRegression,
        MinimaxLogisticRegression,
        MinimaxRegressor,
    )

    for cls in (
        LinearSVC,
        LogisticRegression,
        Ridge,
        FairLogisticRegression,
        MinimaxLogisticRegression,
        MinimaxRegressor,
    ):
        assert getattr(dpestim, cls.__name__) is cls
    assert sorted(dpestim.__all__) == dpestim.__all__
    with pytest.raises(AttributeError, match="no attribute 'NotAThing'"):
        dpestim.NotAThing  # noqa: B018
    with pytest.raises(ImportError):
        exec("from dpestim import NotAThing", {})


def test_fitted_estimator_unpickles_after_a_bare_import(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] > 0).astype(int)
    est = dpestim.LogisticRegression(epsilon=1.0, classes=[0, 1], random_state=0)
    est.fit(X, y)
    path = tmp_path / "est.pkl"
    path.write_bytes(pickle.dumps(est))
    expected = est.predict(X).tolist()
    out = _run(
        "import pickle, numpy as np, dpestim\n"
        f"est = pickle.loads(open({str(path)!r}, 'rb').read())\n"
        "rng = np.random.default_rng(0)\n"
        "print(est.predict(rng.normal(size=(60, 3))).tolist())"
    )
    assert out == str(expected)
