"""The ``python -m dpestim`` demo runs and reports honest numbers."""

import math
import subprocess
import sys

import pytest

from dpestim import _demo
from dpestim.solvers import SOLVERS


def test_quick_demo_rows_table_and_plot(tmp_path):
    rows = _demo.run(epsilons=(1.0, math.inf), seeds=(0,), progress=False)
    assert {r["estimator"] for r in rows} == {"LogisticRegression", "Ridge"}
    private = [r for r in rows if r["notion"] != "non-private"]
    assert {r["solver"] for r in private} == set(_demo.QUICK_SOLVERS)
    for r in private:
        assert r["epsilon"] <= r["target_epsilon"]
        assert (r["notion"] == "pure") == (r["delta"] == 0)
    baselines = {(r["estimator"], r["solver"]) for r in rows} - {
        (r["estimator"], r["solver"]) for r in private
    }
    assert baselines == {
        ("LogisticRegression", "scikit-learn"),
        ("LogisticRegression", "majority"),
        ("Ridge", "scikit-learn"),
        ("Ridge", "constant"),
    }
    acc = [r for r in private if r["metric"] == "accuracy" and r["notion"] == "approx"]
    majority = next(r["score"] for r in rows if r["solver"] == "majority")
    # every approx-DP solver learns (Adult: 0.76 majority, digits: 0.1)
    assert min(r["score"] for r in acc) > majority + 0.05
    if acc[0]["dataset"].startswith("Adult"):
        assert min(r["score"] for r in acc) > 0.8
    table = _demo.format_table(rows, (1.0, math.inf))
    assert "eps=1" in table and "eps=inf" in table and "scikit-learn" in table
    assert len(table.splitlines()) < 25  # a short table, not the matrix
    # the defaults-benchmark schema, read by benchmarks/utility/solver_guide.py
    records = _demo.to_records(rows)
    keys = {"estimator", "solver", "dataset", "epsilon", "seed", "metric"}
    assert all(keys | {"score", "fit_cpu_s"} == set(r) for r in records)
    assert {r["epsilon"] for r in records} == {1.0, "inf"}
    assert {r["metric"] for r in records} == {"accuracy", "r2"}
    assert "sklearn" in {r["solver"] for r in records}
    pytest.importorskip("matplotlib")
    path = tmp_path / "demo.png"
    _demo.plot(rows, path)
    assert path.stat().st_size > 10_000


@pytest.mark.slow
def test_full_demo_covers_every_estimator_and_solver():
    rows = _demo.run(
        epsilons=(1.0,),
        solvers=sorted(SOLVERS),
        estimators=("LogisticRegression", "LinearSVC", "Ridge"),
        seeds=(0,),
        progress=False,
    )
    assert {r["solver"] for r in rows if r["notion"] != "non-private"} == set(SOLVERS)


def test_demo_entry_point_help():
    out = subprocess.run(
        [sys.executable, "-m", "dpestim", "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "privacy-utility" in out.stdout and "--full" in out.stdout
