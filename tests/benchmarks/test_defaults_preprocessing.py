"""benchmarks/utility/defaults.py's preprocessing axis (issue 25).

The transforms do what they say; the ``loader`` records keep the keys of the
existing matrix; the axis never writes ``defaults.json``; the report shows
each cell's gap to scikit-learn on the same features.
"""

import json
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def bench(monkeypatch):
    monkeypatch.syspath_prepend(str(REPO / "benchmarks" / "utility"))
    for name in (
        "defaults",
        "defaults_report",
        "user_transforms",
        "preprocessing_report",
    ):
        sys.modules.pop(name, None)
    import defaults

    return defaults


@pytest.fixture
def transforms(bench):
    import user_transforms

    return user_transforms


def _data(rng, n=40, d=5):
    X = rng.normal(size=(n, d)) * np.arange(1, d + 1)
    X[3] = 0.0  # a zero row
    return X, rng.normal(size=n), rng.normal(size=(10, d)), rng.normal(size=10)


@pytest.mark.parametrize("sparse", [False, True])
def test_unit_norm_rows_have_norm_one_and_zero_rows_stay_zero(transforms, sparse):
    X, y, Xt, yt = _data(np.random.default_rng(0))
    if sparse:
        X, Xt = sp.csr_matrix(X), sp.csr_matrix(Xt)
    Xa, ya, Xta, yta, extra = transforms.apply("unit-norm", "adult", X, y, Xt, yt, {})
    dense = Xa.toarray() if sparse else Xa
    norms = np.linalg.norm(dense, axis=1)
    assert norms[3] == 0.0 and np.allclose(np.delete(norms, 3), 1.0)
    # the direction of every row is kept
    ref = X.toarray() if sparse else X
    i = 5
    assert np.allclose(dense[i] * np.linalg.norm(ref[i]), ref[i])
    assert ya is y and yta is yt and extra == {}
    # the input is not modified
    assert np.linalg.norm(ref[i]) > 1.5


def test_scaling_multiplies_features_only(transforms):
    X, y, Xt, yt = _data(np.random.default_rng(1))
    for name, k in (("x0.01", 0.01), ("x100", 100.0)):
        Xa, ya, Xta, _, extra = transforms.apply(
            name, "diabetes", X, y, Xt, yt, {"y_bound": (0, 4)}
        )
        assert np.allclose(Xa, X * k) and np.allclose(Xta, Xt * k)
        assert ya is y and extra == {"y_bound": (0, 4)}


def test_standard_is_fitted_on_the_training_rows_only(transforms):
    X, y, Xt, yt = _data(np.random.default_rng(2))
    Xt = Xt + 10.0  # a shifted test set keeps its shift
    Xa, _, Xta, _, _ = transforms.apply(
        "standard", "adult", sp.csr_matrix(X), y, Xt, yt, {}
    )
    assert isinstance(Xa, np.ndarray)
    assert np.allclose(Xa.mean(axis=0), 0.0) and np.allclose(Xa.std(axis=0), 1.0)
    assert np.allclose(Xta, (Xt - X.mean(axis=0)) / X.std(axis=0))
    assert "standard" in transforms.NON_PRIVATE
    assert transforms.label("standard") == "standard (non-private)"


def test_raw_target_rescales_y_and_drops_the_bound(transforms):
    X, y, Xt, yt = _data(np.random.default_rng(3))
    extra = {"y_bound": (0.0, 5.00001)}
    Xa, ya, _, yta, new = transforms.apply(
        "raw-target", "california", X, y, Xt, yt, extra
    )
    assert Xa is X and np.allclose(ya, y * 1e5) and np.allclose(yta, yt * 1e5)
    assert new == {} and extra == {"y_bound": (0.0, 5.00001)}  # input kept
    _, ya, _, _, new = transforms.apply("raw-target", "diabetes", X, y, Xt, yt, extra)
    assert np.allclose(ya, y * 100.0) and "y_bound" not in new
    assert transforms.apply("raw-target", "adult", X, y, Xt, yt, {}) is None
    assert transforms.apply("loader", "adult", X, y, Xt, yt, {})[0] is X
    with pytest.raises(ValueError, match="preprocessing"):
        transforms.apply("log", "adult", X, y, Xt, yt, {})


class _Fake:
    """Records what ``run`` passes to the estimator (no private fit)."""

    calls = []

    def __init__(self, **kw):
        self.kw = kw

    def fit(self, X, y):
        _Fake.calls.append((self.kw, np.asarray(y)))
        return self

    def score(self, X, y):
        return 0.5


def _args(**kw):
    import argparse

    base = dict(
        datasets=["diabetes"],
        estimators=None,
        solvers=["auto"],
        epsilons=[1.0],
        seeds=2,
        mnist_train=10,
        preprocessing=["loader", "raw-target", "x100"],
        commit="test",
    )
    return argparse.Namespace(**{**base, **kw})


def test_run_keeps_loader_keys_and_applies_each_preprocessing(
    bench, tmp_path, monkeypatch
):
    out = tmp_path / "defaults_preprocessing.json"
    # a record of the existing matrix, written before the axis: no field
    old = dict(
        estimator="Ridge", solver="auto", dataset="diabetes", epsilon=1.0, seed=0,
        metric="r2", score=0.2, fit_cpu_s=0.1, commit="old",
    )  # fmt: skip
    out.write_text(json.dumps({"meta": {}, "records": [old]}))
    monkeypatch.setattr(bench, "OUT", out)
    monkeypatch.setattr(bench, "_estimators", lambda d: {"Ridge": _Fake})
    _Fake.calls = []
    records = bench.run(_args())
    # the old record counts as the loader's seed 0: not refitted
    assert bench._key(old) == bench._key({**old, "preprocessing": "loader"})
    fitted = [r for r in records if r["solver"] == "auto" and r["commit"] == "test"]
    assert sorted((r["preprocessing"], r["seed"]) for r in fitted) == [
        ("loader", 1), ("raw-target", 0), ("raw-target", 1), ("x100", 0), ("x100", 1)
    ]  # fmt: skip
    assert len(_Fake.calls) == 5
    _, y, _, _, extra = bench.load("diabetes")
    (loader_kw, loader_y), raw, scaled = (
        _Fake.calls[0],
        _Fake.calls[1:3],
        _Fake.calls[3:],
    )
    assert loader_kw["y_bound"] == extra["y_bound"] and np.allclose(loader_y, y)
    for kw, y_fit in raw:  # raw target: no bound given, y in the raw unit
        assert "y_bound" not in kw and np.allclose(y_fit, y * 100.0)
    for kw, y_fit in scaled:  # x100 keeps the public bound and the target
        assert kw["y_bound"] == extra["y_bound"] and np.allclose(y_fit, y)
    # every new record carries its preprocessing and the old keys' fields
    assert all(set(old) <= set(r) for r in fitted)
    # scikit-learn's reference and the constant baseline, per preprocessing
    sk = {r["preprocessing"]: r["score"] for r in records if r["solver"] == "sklearn"}
    assert set(sk) == {"loader", "raw-target", "x100"}
    assert sk["raw-target"] == pytest.approx(sk["loader"], abs=1e-6)  # R^2: unit-free
    # a rerun fits nothing new
    _Fake.calls = []
    bench.run(_args())
    assert _Fake.calls == []


def test_axis_never_writes_defaults_json(bench, tmp_path, monkeypatch):
    argv = [
        "defaults.py",
        "--preprocessing",
        "x100",
        "--out",
        str(tmp_path / "defaults.json"),
    ]
    monkeypatch.setattr(sys, "argv", argv)
    with pytest.raises(SystemExit):
        bench.main()
    assert not (tmp_path / "defaults.json").exists()


def test_report_shows_the_gap_to_sklearn_on_the_same_features(bench):
    import preprocessing_report

    def rec(prep, solver, eps, score, seed=0):
        return dict(
            estimator="LogisticRegression", solver=solver, dataset="adult",
            preprocessing=prep, epsilon=eps, seed=seed, metric="accuracy",
            score=score, commit="c1",
        )  # fmt: skip

    records = [
        rec("loader", "sklearn", "inf", 0.85),
        rec("loader", "majority", "inf", 0.76),
        rec("standard", "sklearn", "inf", 0.80),
        rec("standard", "majority", "inf", 0.76),
        *[rec("loader", "auto", 1.0, s, i) for i, s in enumerate((0.84, 0.83, 0.9))],
        *[rec("standard", "auto", 1.0, s, i) for i, s in enumerate((0.75, 0.7, 0.76))],
    ]
    text = preprocessing_report.report(records, {"command": "cmd"})
    # median 0.84, gap -0.010 to 0.85; standard: its own reference 0.80
    assert "| adult | loader | auto | 0.850 | 0.760 | 0.840 (-0.010) |" in text
    row = "| adult | standard (non-private) | auto | 0.800 | 0.760 | 0.750 (-0.050) |"
    assert row in text
    moved = "| LogisticRegression | adult | standard (non-private) | auto | 1.0 |"
    assert moved + " 0.750 | 0.840 | -0.090 | -0.050 |" in text
    assert "standard (non-private preprocessing) auto eps=1.0: 0.750 <= 0.760" in text
