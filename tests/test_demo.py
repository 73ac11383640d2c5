"""The ``python -m dpestim`` demo runs and reports honest numbers."""

import math
import subprocess
import sys

from dpestim import _demo
from dpestim.solvers import SOLVERS


def test_demo_rows_cover_every_estimator_and_solver():
    rows = _demo.run(epsilons=(1.0, math.inf))
    assert {r["estimator"] for r in rows} == {
        "LogisticRegression",
        "LinearSVC",
        "Ridge",
    }
    assert {r["solver"] for r in rows} == set(SOLVERS)
    for r in rows:
        assert r["epsilon"] <= r["target_epsilon"]
    private = [r for r in rows if r["metric"] == "accuracy" and r["epsilon"] <= 1]
    assert min(r["score"] for r in private) > 0.7  # a9a / digits are learnable
    table = _demo.format_table(rows)
    assert "LogisticRegression" in table and "epsilon_" in table


def test_demo_entry_point_help():
    out = subprocess.run(
        [sys.executable, "-m", "dpestim", "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "privacy-utility" in out.stdout
