"""benchmarks/utility/defaults.py: merges replace whole cells; reasons in the report."""

import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def bench(monkeypatch):
    monkeypatch.syspath_prepend(str(REPO / "benchmarks" / "utility"))
    for name in ("defaults", "defaults_report"):
        sys.modules.pop(name, None)
    import defaults

    return defaults


def _rec(solver, eps, seed, score, **extra):
    return dict(
        estimator="LogisticRegression",
        solver=solver,
        dataset="adult",
        epsilon=eps,
        seed=seed,
        metric="accuracy",
        score=score,
        fit_cpu_s=0.1,
        **extra,
    )


def test_merge_replaces_whole_cells_and_labels_unstamped_records(
    bench, tmp_path, monkeypatch
):
    out = tmp_path / "defaults.json"
    old = [_rec("dp-sgd", 1.0, s, 0.5) for s in range(5)]
    old += [_rec("dp-sgd", 2.0, s, 0.6) for s in range(5)]
    out.write_text(json.dumps({"meta": {}, "records": old}))
    new = tmp_path / "defaults_other.json"
    new.write_text(
        json.dumps(
            {"meta": {}, "records": [_rec("dp-sgd", 1.0, s, 0.8) for s in (0, 1)]}
        )
    )
    monkeypatch.setattr(bench, "OUT", out)
    records = bench.merge([f"{new}=branch@abc"])
    at_1 = [r for r in records if r["epsilon"] == 1.0]
    # the old five seeds of the cell are gone, not mixed with the new two
    assert sorted(r["seed"] for r in at_1) == [0, 1]
    assert {r["score"] for r in at_1} == {0.8}
    assert {r["commit"] for r in at_1} == {"branch@abc"}
    # other cells untouched, still unstamped (first session)
    at_2 = [r for r in records if r["epsilon"] == 2.0]
    assert len(at_2) == 5 and all("commit" not in r for r in at_2)
    assert json.loads(out.read_text())["meta"]["merged"][0]["cells"] == 1


def test_report_lists_misses_with_reasons_commits_and_not_run(bench):
    import defaults_report as report

    records = [
        _rec("sklearn", "inf", 0, 0.85, commit="c1"),
        _rec("majority", "inf", 0, 0.76, commit="c1"),
        _rec("dp-sgd", 1.0, 0, 0.76, commit="c1"),  # at the baseline: a miss
        _rec("dp-sgd", "inf", 0, 0.85),  # first session
    ]
    matrix = [
        ("LogisticRegression", "adult", "dp-sgd"),
        ("LogisticRegression", "adult", "dp-lssgd"),
    ]
    families = {"f": ["dp-sgd", "dp-lssgd"]}
    text, missed = report.summary(records, matrix, families, ["adult"])
    assert any("dp-sgd eps=1.0" in m and "<= majority" in m for m in missed)
    assert "c1 (0.1-2.0)" not in text  # only the measured epsilons are named
    assert "| dp-sgd (1) |" in text and "c1 (1.0), s1 (inf)" in text
    assert "- LogisticRegression adult dp-lssgd: eps 0.1, 0.5, 1.0, 2.0, inf" in text
    assert "reason not established" in text  # no rule for this synthetic miss
