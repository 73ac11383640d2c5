"""Regenerate the published benchmark results at the current commit.

    PYTHONPATH=. python -m benchmarks list
    PYTHONPATH=. python -m benchmarks all --quick     # smoke run, into scratch
    PYTHONPATH=. python -m benchmarks all --full      # the published results
    PYTHONPATH=. python -m benchmarks run audit_gdp --full

Each entry runs its script as a separate process (``PYTHONPATH`` = this
checkout). ``--quick`` writes to ``benchmarks/results/scratch/quick/`` (never
over the published files) with each script's smallest settings; ``--full``
writes to ``benchmarks/results/``. Every file a run writes is stamped in the
``MANIFEST.json`` of that folder with the commit, whether the tree was
modified, the command and the time, so each published number can be traced to
the command that made it. Entries that need the peer libraries (diffprivlib,
Opacus: ``benchmarks/peers/install_peers.sh``) are marked and skipped when the
peers are missing.
"""

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"
QUICK = RESULTS / "scratch" / "quick"


@dataclass(frozen=True)
class Entry:
    """One benchmark: its script, its smoke and full arguments."""

    name: str
    script: str
    quick: tuple = ()
    full: tuple = ()
    needs: tuple = field(default=())  # importable modules it needs


#: Shared arguments of the private-target-range entries (``--y-bound auto``).
_PRIVATE_RANGE = ("--y-bound", "auto")
_RANGE_SOLVERS = ("--seeds", "5", "--solvers", "auto", "dp-sgd", "adp-sgd", "adassp")

ENTRIES = [
    # reproductions, one module per paper
    Entry("reproduce_accelerated", "reproduce/accelerated.py", ("--quick",)),
    # part F of the saddle reproduction is the fairness entry below: run once
    Entry(
        "reproduce_saddle",
        "reproduce/saddle.py",
        ("--quick", "--only", "A,S,B,C"),
        ("--only", "A,S,B,C"),
    ),
    # smoke: Adult only (the dataset with the paper's numbers to compare)
    Entry("reproduce_scd", "reproduce/scd.py", ("--quick", "--datasets", "adult")),
    Entry("reproduce_adaptive", "reproduce/adaptive.py", ("--quick",)),
    Entry("reproduce_lssgd", "reproduce/lssgd.py", ("--quick",)),
    # utility: defaults matrix, fairness, private search
    Entry(
        "defaults",
        "utility/defaults.py",
        ("--datasets", "german", "--seeds", "1", "--epsilons", "1", "inf"),
    ),
    # the defaults under the user's preprocessing (issue 25): its own files,
    # defaults_preprocessing.json / .md (resumable: delete the JSON to rerun)
    Entry(
        "defaults_preprocessing",
        "utility/defaults.py",
        ("--preprocessing", "all", "--solvers", "auto", "--datasets", "german")
        + ("diabetes", "--seeds", "1", "--epsilons", "1"),
        ("--preprocessing", "all", "--solvers", "auto", "dp-gd", "--seeds", "3")
        + ("--epsilons", "1", "0.5", "inf", "--datasets", "adult", "breast_cancer")
        + ("digits", "german", "california", "diabetes"),
    ),
    Entry(
        "auto_rule",
        "utility/auto_rule.py",
        (
            "--input",
            "benchmarks/results/defaults.json",
            "--datasets",
            "german",
            "compas",
            "diabetes",
        ),
    ),
    Entry("auto_rule_probe", "utility/auto_rule_probe.py", ("--seeds", "1")),
    Entry(
        "public_target_bound",
        "utility/public_target_bound.py",
        ("--seeds", "1", "--out", "/tmp/public_target_bound_quick.md"),
    ),
    Entry(
        "private_target_range",
        "utility/public_target_bound.py",
        (
            *_PRIVATE_RANGE,
            "--sizes",
            "331",
            "--seeds",
            "1",
            "--out",
            "/tmp/private_target_range_quick.md",
        ),
        (
            *_PRIVATE_RANGE,
            "--sizes",
            "331",
            "1000",
            "3000",
            *_RANGE_SOLVERS,
            "--out",
            "benchmarks/results/private_target_range.md",
        ),
    ),  # fmt: skip
    Entry(
        "private_target_range_heldout",
        "utility/public_target_bound.py",
        (
            *_PRIVATE_RANGE,
            "--tasks",
            "german-amount",
            "--sizes",
            "331",
            "--seeds",
            "1",
            "--out",
            "/tmp/private_target_range_heldout_quick.md",
        ),
        (
            *_PRIVATE_RANGE,
            "--tasks",
            "compas-age",
            "compas-priors",
            "german-amount",
            "german-duration",
            "--sizes",
            "331",
            "750",
            "1000",
            "3000",
            *_RANGE_SOLVERS,
            "--out",
            "benchmarks/results/private_target_range_heldout.md",
        ),
    ),  # fmt: skip
    Entry("minimax_target_range", "utility/minimax_target_range.py", ("--seeds", "1")),
    Entry("wide_data", "utility/wide_data.py", ("--seeds", "1")),
    Entry(
        "nonprivate_limit",
        "utility/nonprivate_limit.py",
        ("--seeds", "1", "--datasets", "breast_cancer"),
    ),
    Entry("raw_columns", "utility/raw_columns.py", ("--seeds", "1")),
    Entry("fairness", "utility/fairness.py", ("--quick",), needs=("fairlearn",)),
    Entry("small_data", "utility/small_data.py", ("--seeds", "1")),
    Entry(
        "op_hinge",
        "utility/op_hinge.py",
        ("--seeds", "1", "--datasets", "breast_cancer"),
    ),
    Entry(
        "scale_invariance",
        "utility/scale_invariance.py",
        ("--seeds", "1", "--parts", "california"),
        ("--seeds", "2", "--california-seeds", "5"),
    ),
    Entry(
        "imbalance",
        "utility/imbalance_probe.py",
        ("--quick", "--datasets", "compas", "--solvers", "dp-sgd", "--skip-adult"),
        ("--seeds", "2", "--adult-seeds", "5"),
    ),
    Entry(
        "class_weight_solvers",
        "utility/class_weight_solvers.py",
        ("--seeds", "1", "--w8a-rows", "2000"),
        ("--seeds", "3"),
    ),
    Entry(
        "share_cap_sweep",
        "utility/share_cap_sweep.py",
        ("--seeds", "1", "--caps", "0.25", "0.35", "--out", "/tmp/share_cap_quick"),
        ("--seeds", "5"),
    ),
    Entry(
        "minimax_scale",
        "utility/minimax_scale.py",
        ("--seeds", "1", "--out", "/tmp/minimax_scale_quick.md"),
        ("--seeds", "3"),
    ),
    Entry(
        "dpgd_decay",
        "utility/dpgd_decay.py",
        ("--seeds", "1", "--epsilons", "1", "--out", "/tmp/dpgd_decay_quick"),
        ("--seeds", "5"),
    ),
    Entry(
        "scd_epochs",
        "utility/scd_epochs.py",
        ("--seeds", "1", "--epsilons", "1", "--out", "/tmp/scd_epochs_quick"),
        ("--seeds", "5"),
    ),
    Entry(
        "constant_predictors",
        "utility/constant_predictors.py",
        ("--seeds", "1", "--epsilons", "1", "--out", "/tmp/constant_quick.md"),
        ("--seeds", "5", "--out", "benchmarks/results/constant_bank.md"),
    ),
    Entry(
        "target_spread",
        "utility/target_spread.py",
        ("--seeds", "1", "--sizes", "331", "--out", "/tmp/target_spread_quick.md"),
        ("--seeds", "5"),
    ),
    Entry(
        "empty_rows",
        "utility/empty_rows.py",
        ("--seeds", "1", "--out", "/tmp/empty_rows_quick.md"),
        ("--seeds", "5"),
    ),
    Entry(
        "adp_sgd_heldout",
        "utility/adp_sgd_heldout.py",
        ("--seeds", "1", "--out", "/tmp/adp_sgd_heldout_quick.md"),
        ("--seeds", "3"),
    ),
    Entry(
        "final_intercept",
        "utility/final_intercept.py",
        ("--seeds", "1", "--out", "/tmp/final_intercept_quick.md"),
        ("--seeds", "3"),
    ),
    Entry(
        "centring_probe",
        "utility/centring_probe.py",
        ("--seeds", "1", "--out", "/tmp/centring_probe_quick.md"),
        ("--seeds", "3"),
    ),
    Entry(
        "private_centring",
        "utility/private_centring.py",
        ("--seeds", "1", "--out", "/tmp/private_centring_quick.md"),
        ("--seeds", "3"),
    ),
    Entry(
        "fit_centring",
        "utility/fit_centring.py",
        ("--seeds", "1", "--out", "/tmp/fit_centring_quick.md"),
        ("--seeds", "3"),
    ),
    Entry(
        "ridge_settling",
        "utility/ridge_settling.py",
        ("--seeds", "1", "--out", "/tmp/ridge_settling_quick.md"),
        ("--seeds", "3"),
    ),
    Entry(
        "column_balance",
        "utility/column_balance.py",
        ("--seeds", "1", "--out", "/tmp/column_balance_quick.md"),
        ("--seeds", "3"),
    ),
    Entry(
        "small_raw",
        "utility/small_raw.py",
        ("--seeds", "1", "--out", "/tmp/small_raw_quick.md"),
        ("--seeds", "5"),
    ),
    Entry(
        "threshold_bins",
        "utility/threshold_bins.py",
        ("--seeds", "1", "--out", "/tmp/threshold_bins_quick.md"),
        ("--seeds", "5"),
    ),
    Entry(
        "german_splits",
        "utility/german_splits.py",
        ("--splits", "2", "--seeds", "1", "--out", "/tmp/german_splits_quick.md"),
        ("--splits", "20", "--seeds", "3"),
    ),
    Entry(
        "final_intercept_pure",
        "utility/final_intercept.py",
        ("--pure", "--seeds", "1", "--out", "/tmp/final_intercept_pure_quick.md"),
        ("--pure", "--seeds", "3"),
    ),
    Entry(
        "multiclass_heldout",
        "utility/multiclass_heldout.py",
        ("--seeds", "1", "--out", "/tmp/multiclass_heldout_quick.md"),
        ("--seeds", "5"),
    ),
    Entry("private_search", "utility/private_search.py", ("--quick",)),
    Entry(
        "search_units",
        "utility/search_units.py",
        ("--methods", "default,search", "--seeds", "1"),
        ("--seeds", "3"),
    ),
    Entry(
        "fair_multiplier_bound",
        "utility/fair_multiplier_bound.py",
        ("--seeds", "1", "--out", "/tmp/fair_multiplier_bound_quick"),
        ("--seeds", "5"),
    ),
    Entry(
        "search_raw",
        "utility/search_raw.py",
        (
            "--seeds",
            "1",
            "--methods",
            "default,search",
            "--out",
            "/tmp/search_raw_quick.md",
        ),
        ("--seeds", "5"),
    ),  # fmt: skip
    # reads the defaults matrix (its utility_warning field): run after it
    Entry("utility_warning", "utility/utility_warning.py"),
    Entry(
        "budget_composition",
        "utility/budget_composition.py",
        needs=("diffprivlib",),
    ),
    # privacy audits
    Entry("audit_gdp", "privacy/audit_gdp.py", ("--quick",)),
    Entry("audit_solvers", "privacy/audit_solvers.py", ("--quick",)),
    # speed, each against a baseline measured in the same run
    Entry("calibration", "speed/calibration.py", ("--repeats", "1")),
    Entry("fullbatch", "speed/fullbatch.py", ("--repeats", "1")),
    Entry("startup", "speed/startup.py", ("--repeats", "1")),
    Entry(
        "fit_memory",
        "speed/fit_memory.py",
        ("--rows", "100000", "--repeats", "1", "--out", "/tmp/bench_fit_memory"),
    ),
    Entry("demo", "speed/demo.py", ("--repeats", "1", "--seeds", "1")),
    Entry("sparse", "speed/sparse_epochs.py", ("--repeats", "1", "--epochs", "1", "2")),
    Entry("gridsearch", "speed/gridsearch.py", ("--repeats", "1")),
    Entry("dpsgd", "speed/dpsgd.py", needs=("diffprivlib",)),
    Entry(
        "dask",
        "speed/dask_fit.py",
        (
            "--fit-rows",
            "200000",
            "--rows",
            "100000",
            "--block",
            "50000",
            "--steps",
            "1",
            "--repeats",
            "1",
            "--skip-memory-limit",
        ),
        (
            "--fit-rows",
            "1000000",
            "--rows",
            "1000000",
            "--block",
            "250000",
            "--steps",
            "2",
            "--repeats",
            "3",
            "--skip-memory-limit",
            "--out",
            "bench_dask",
        ),
        needs=("dask.distributed", "zarr"),
    ),
    Entry("mnist_epoch", "speed/mnist_epoch.py", needs=("diffprivlib", "opacus")),
    Entry("peers", "peers/run_peers.py", needs=("diffprivlib", "opacus")),
]
BY_NAME = {e.name: e for e in ENTRIES}


def _git(*args):
    out = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True)
    return out.stdout.strip()


def _missing(entry):
    import importlib.util

    return [m for m in entry.needs if importlib.util.find_spec(m) is None]


def _written_since(folder, start):
    return sorted(
        p
        for p in folder.rglob("*")
        if p.is_file()
        and p.name != "MANIFEST.json"
        and p.stat().st_mtime >= start
        and "scratch" not in p.relative_to(folder).parts[:-1]
    )


def run(entry, quick):
    """Run one entry; stamp what it wrote. Returns the process's exit code."""
    out = QUICK if quick else RESULTS
    out.mkdir(parents=True, exist_ok=True)
    args = entry.quick if quick else entry.full
    cmd = [sys.executable, str(REPO / "benchmarks" / entry.script), *args]
    env = dict(os.environ, PYTHONPATH=str(REPO))
    # benchmarks refit the same rows on purpose: the session's composition
    # warning (dpestim.privacy._composition) would only fill the logs
    env.setdefault("DPESTIM_COMPOSITION_WARNING", "0")
    if quick:
        env["DPESTIM_BENCH_RESULTS"] = str(out)
    start = time.time()
    t0 = os.times()
    code = subprocess.call(cmd, cwd=REPO, env=env)
    t1 = os.times()
    cpu = (t1.children_user - t0.children_user) + (
        t1.children_system - t0.children_system
    )
    wall = time.time() - start
    manifest_path = out / "MANIFEST.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    stamp = {
        "commit": _git("rev-parse", "HEAD"),
        "modified_tree": bool(_git("status", "--porcelain", "--untracked-files=no")),
        "command": "PYTHONPATH=. python "
        + shlex.join([f"benchmarks/{entry.script}", *args]),
        "mode": "quick" if quick else "full",
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "exit_code": code,
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu, 1),
    }
    for p in _written_since(out, start):
        manifest[str(p.relative_to(out))] = stamp
    manifest_path.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    print(f"[benchmarks] {entry.name}: exit {code}, {wall:.0f} s wall, {cpu:.0f} s CPU")
    return code


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    p.add_argument("action", choices=["list", "all", "run"])
    p.add_argument("names", nargs="*", help="entries for 'run'")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="smoke run (default)")
    mode.add_argument("--full", action="store_true", help="the published results")
    a = p.parse_args(argv)
    if a.action == "list":
        for e in ENTRIES:
            need = f"  (needs {', '.join(e.needs)})" if e.needs else ""
            print(f"{e.name:24s} benchmarks/{e.script}{need}")
        return 0
    unknown = [n for n in a.names if n not in BY_NAME]
    if unknown:
        p.error(f"unknown entries {unknown}; see 'python -m benchmarks list'")
    entries = ENTRIES if a.action == "all" else [BY_NAME[n] for n in a.names]
    failed = []
    for e in entries:
        missing = _missing(e)
        if missing:
            print(f"[benchmarks] {e.name}: skipped, needs {', '.join(missing)}")
            continue
        if run(e, quick=not a.full) != 0:
            failed.append(e.name)
    if failed:
        print(f"[benchmarks] failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
