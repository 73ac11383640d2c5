"""Fast checks of benchmarks/peers/run_peers.py (no peer library needed)."""

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def rp():
    spec = importlib.util.spec_from_file_location(
        "run_peers", REPO / "benchmarks" / "peers" / "run_peers.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_synthetic_problem_is_seeded(rp):
    from _common import digest, make_synthetic

    a = make_synthetic(500, 10, 100, seed=3)
    b = make_synthetic(500, 10, 100, seed=3)
    c = make_synthetic(500, 10, 100, seed=4)
    assert digest(a[0], a[1]) == digest(b[0], b[1]) != digest(c[0], c[1])
    X, y, Xt, yt = a
    assert X.shape == (500, 10) and Xt.shape == (100, 10)
    assert set(np.unique(y)) <= {0, 1} and 0.2 < y.mean() < 0.8
    # Rows of norm about 1 (x ~ N(0, I/d)).
    assert 0.7 < np.linalg.norm(X, axis=1).mean() < 1.2


def test_benchmarks_md_block_is_replaced_between_markers(rp, tmp_path, monkeypatch):
    md = tmp_path / "BENCHMARKS.md"
    md.write_text("# Benchmarks\n\nintro\n")
    monkeypatch.setattr(rp, "BENCHMARKS_MD", md)
    rp.update_benchmarks_md("table one\n")
    first = md.read_text()
    assert first.startswith("# Benchmarks\n\nintro\n")
    assert rp.MARK_BEGIN in first and "table one" in first
    md.write_text(first + "\n## after\n")
    rp.update_benchmarks_md("table two\n")
    second = md.read_text()
    assert "table two" in second and "table one" not in second
    assert second.count(rp.MARK_BEGIN) == 1 and second.endswith("## after\n")


def test_missing_peer_venv_is_skipped_with_message(rp, tmp_path, monkeypatch):
    monkeypatch.setattr(rp, "dataset_available", lambda name: False)
    cfg = dict(rp.CONFIGS["quick"], synth_n=2000, synth_epochs=1)

    class Args:
        peers_dir = str(tmp_path)  # no venvs here
        threads = 1

    messages = []
    progress = rp.Progress(2)
    rows = rp.run_speed(cfg, Args, progress, messages)
    progress.close()
    assert any("peer Opacus: no venv" in m for m in messages)
    assert [r["library"] for r in rows] == ["dpestim dp-sgd"]
    row = rows[0]
    # q = 250 / 2000, one epoch = 8 steps, accountant epsilon is finite.
    assert row["sample_rate"] == pytest.approx(0.125) and row["steps"] == 8
    assert 0 < row["epsilon"] < np.inf and 0.4 < row["test_accuracy"] <= 1
    assert row["peak_rss_training_mib"] > 0 and row["floor_wall_s"] > 0


def test_unregistered_solvers_are_reported(rp):
    messages = []
    solvers = rp.registered_solvers(messages)
    assert "dp-sgd" in solvers
    for name in rp.EXPECTED_SOLVERS:
        assert (name in solvers) or any(repr(name) in m for m in messages)


def test_worker_failure_is_raised_with_its_stderr(rp):
    task = {"task": "fit", "data": {"kind": "nope"}}
    with pytest.raises(RuntimeError, match="unknown data kind"):
        rp.run_worker(sys.executable, "worker_dpestim.py", task, 1)
    assert json.dumps(task)  # the task is plain JSON


def test_publish_rebuilds_tables_from_raw(rp, tmp_path, monkeypatch):
    md = tmp_path / "BENCHMARKS.md"
    md.write_text("# Benchmarks\n")
    monkeypatch.setattr(rp, "BENCHMARKS_MD", md)
    common = dict(
        dataset="toy",
        key="synthetic",
        epochs=1,
        steps=8,
        sample_rate=0.125,
        noise_multiplier=1.0,
        clip_norm=1.0,
        learning_rate=1.0,
        batch_size=250,
        delta=1e-5,
        peak_rss_training_mib=10.0,
        rss_after_data_mib=9.0,
        epsilon=2.0,
        accountant="rdp",
        data_digest="abc",
    )
    speed = [
        dict(common, library="dpestim dp-sgd", version="dpestim", test_accuracy=0.80,
             wall_per_epoch_s=1.0, cpu_per_epoch_s=1.0, floor_wall_s=0.1,
             floor_cpu_s=0.1),
        dict(common, library="Opacus", version="opacus", test_accuracy=0.805,
             wall_per_epoch_s=30.0, cpu_per_epoch_s=10.0),
    ]  # fmt: skip
    summary = [
        dict(solver=s, notion="pure" if s.startswith("diff") else "approx",
             delta=0.0, epsilon=e, seeds=3, acc_median=acc, acc_q1=acc, acc_q3=acc,
             fit_s_median=0.1)
        for e in rp.EPSILONS
        for s, acc in (("diffprivlib LogisticRegression", 0.7), ("dp-sgd", 0.8))
    ]  # fmt: skip
    raw = dict(
        mode="full",
        meta="meta line",
        speed=speed,
        utility_fits=[],
        utility=summary,
        nonprivate_accuracy=0.85,
        cost=[],
        floors={},
        messages=["solver 'x' is not registered in this checkout: skipped"],
    )
    rp.publish(raw, tmp_path, update_md=True)
    text = md.read_text()
    # 30x wall but 10x CPU: the speed target needs both.
    assert "| 30.0x wall, 10.0x CPU | **no** |" in text
    assert "| -0.50 points | yes |" in text
    assert "dp-sgd 0.8000 vs 0.7000 | yes |" in text
    assert "no pure-DP solver registered" in text
    assert "solver 'x' is not registered" in text
    assert (tmp_path / "speed_opacus.csv").read_text().startswith("dataset,")
