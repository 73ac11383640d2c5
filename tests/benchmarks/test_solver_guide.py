"""benchmarks/utility/solver_guide.py on a small synthetic results file."""

import importlib.util
import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def guide():
    spec = importlib.util.spec_from_file_location(
        "solver_guide", REPO / "benchmarks" / "utility" / "solver_guide.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _records():
    """Two tasks; dp-scd best approx. on Adult, dp-sgd on California."""
    out = []
    scores = {
        ("LogisticRegression", "adult"): {
            "dp-sgd": 0.80,
            "dp-scd": 0.84,
            "dp-nag-opt": 0.78,
        },
        ("Ridge", "california_housing"): {
            "dp-sgd": 0.60,
            "dp-scd": 0.55,
            "dp-nag-opt": 0.3,
        },
    }
    for (est, data), by_solver in scores.items():
        metric = "r2" if est == "Ridge" else "accuracy"
        for solver, base in by_solver.items():
            for eps in (0.5, 1.0, 2.0, "inf"):
                for seed in range(3):
                    bump = 0.0 if eps == "inf" else 0.01 * float(eps)
                    out.append(
                        dict(
                            estimator=est,
                            solver=solver,
                            dataset=data,
                            epsilon=eps,
                            seed=seed,
                            metric=metric,
                            score=base + bump + 0.001 * seed,
                            fit_cpu_s=0.1 * (seed + 1),
                        )
                    )
        for solver, score in (
            ("sklearn", 0.85),
            ("majority" if metric == "accuracy" else "constant", 0.76),
        ):
            out.append(
                dict(
                    estimator=est,
                    solver=solver,
                    dataset=data,
                    epsilon="inf",
                    seed=0,
                    metric=metric,
                    score=score,
                    fit_cpu_s=0.5,
                )
            )
    return out


def test_decision_table_picks_the_best_median_per_notion(guide, tmp_path):
    path = tmp_path / "defaults.json"
    path.write_text(
        json.dumps(
            dict(meta=dict(command="synthetic", date="today"), records=_records())
        )
    )
    meta, records = guide.load(path)
    med = guide.medians(records)
    adult = ("LogisticRegression", "adult")
    assert guide.best_solvers(med, adult, "approx", 1.0) == ["dp-scd", "dp-sgd"]
    assert guide.best_solvers(med, adult, "pure", 1.0) == ["dp-nag-opt"]
    cal = ("Ridge", "california_housing")
    assert guide.best_solvers(med, cal, "approx", 0.5)[0] == "dp-sgd"
    # median over the three seeds (0.84 + 0.01 + 0.001)
    assert med[(*adult, "dp-scd", 1.0)][0] == pytest.approx(0.851)
    text = guide.decision_table(meta, records)
    assert "**dp-scd** (0.851)" in text and "**dp-sgd** (0.606)" in text
    assert "scikit-learn, not private" in text and "trivial baseline" in text
    assert "synthetic" in text
    # adult before california, every solver row present
    assert text.index("adult (") < text.index("california_housing (")
    assert "0.000" in guide._fmt(-1e-6) and "-" not in guide._fmt(-1e-6)
    for solver in ("dp-sgd", "dp-scd", "dp-nag-opt"):
        assert f"``{solver}``" in text


def test_main_writes_table_and_figure(guide, tmp_path):
    pytest.importorskip("matplotlib")
    path = tmp_path / "defaults.json"
    path.write_text(json.dumps(dict(meta={}, records=_records())))
    guide.main(["--results", str(path), "--out", str(tmp_path / "out")])
    assert (tmp_path / "out" / "table.rst").read_text().startswith(".. list-table::")
    # one figure per estimator, none for an estimator without results
    for est in ("LogisticRegression", "Ridge"):
        png = tmp_path / "out" / f"privacy_utility_{est}.png"
        assert png.stat().st_size > 10_000
    assert not (tmp_path / "out" / "privacy_utility_LinearSVC.png").exists()
    assert not (tmp_path / "out" / "privacy_utility.png").exists()


def test_figure_styles_pure_dp_apart(guide):
    """Every iterative private solver has its own colour in its family."""
    from dpestim.solvers import SOLVERS

    styled = {name for members in guide.FAMILIES.values() for name, _, _ in members}
    private = {s for s in SOLVERS if s not in ("adassp", "objective-perturbation")}
    assert private <= styled
    colours = [c for members in guide.FAMILIES.values() for _, c, _ in members]
    assert len(set(colours)) == len(colours)
