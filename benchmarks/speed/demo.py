"""CPU and wall time of the demo (``python -m dpestim``), cold and warm.

Each run is a fresh process ``python -m dpestim --no-plot`` whose CPU time
(user + system, from the operating system's accounting of the finished child,
``resource.getrusage(RUSAGE_CHILDREN)``) and wall time are recorded:

* cold: a new, empty numba cache (``NUMBA_CACHE_DIR``) and calibration cache
  (``DPESTIM_CACHE_DIR``) per run, as on a first run after installing: numba
  compiles every kernel the demo runs and every noise calibration is computed;
* warm: both caches shared by the runs and filled by one run that is not
  counted, as on every later run.

Runs alternate cold, warm, cold, warm, ... so a drift of the machine's speed
affects both alike. The figure the README quotes is the median.

Usage::

    PYTHONPATH=. DPESTIM_DATA=... python benchmarks/speed/demo.py [--repeats 3]

Writes ``bench_demo.{json,md}`` to ``benchmarks/results/`` (or
``$DPESTIM_BENCH_RESULTS``).
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RESULTS = Path(
    os.environ.get("DPESTIM_BENCH_RESULTS") or REPO / "benchmarks" / "results"
)


def _run(env, extra):
    """One demo process: ``(cpu_s, wall_s, the demo's own total line)``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "dpestim", "--no-plot", *extra],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    wall = time.perf_counter() - wall
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    total = [line for line in out.stdout.splitlines() if line.startswith("total ")]
    return cpu, wall, total[-1] if total else ""


def _stats(values):
    return dict(
        median=statistics.median(values), min=min(values), max=max(values), runs=values
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--seeds",
        type=int,
        default=None,
        help="passed to the demo (default: the demo's own, 3)",
    )
    args = parser.parse_args()
    extra = [] if args.seeds is None else ["--seeds", str(args.seeds)]
    env = dict(os.environ)
    env.setdefault("PYTHONPATH", str(REPO))
    runs = {"cold": [], "warm": []}
    with tempfile.TemporaryDirectory(prefix="dpestim_demo_bench_") as tmp:
        warm_env = dict(
            env,
            NUMBA_CACHE_DIR=os.path.join(tmp, "warm_numba"),
            DPESTIM_CACHE_DIR=os.path.join(tmp, "warm_calibration"),
        )
        _run(warm_env, extra)  # fills the warm caches; not counted
        for i in range(args.repeats):
            cold_env = dict(
                env,
                NUMBA_CACHE_DIR=os.path.join(tmp, f"cold{i}_numba"),
                DPESTIM_CACHE_DIR=os.path.join(tmp, f"cold{i}_calibration"),
            )
            runs["cold"].append(_run(cold_env, extra))
            runs["warm"].append(_run(warm_env, extra))
    command = f"PYTHONPATH=. python benchmarks/speed/demo.py --repeats {args.repeats}"
    if args.seeds is not None:
        command += f" --seeds {args.seeds}"
    out = dict(
        command=command,
        demo_command="python -m dpestim --no-plot " + " ".join(extra),
        date=time.strftime("%Y-%m-%d"),
        load_average=os.getloadavg(),
    )
    for kind, rs in runs.items():
        out[kind] = dict(
            cpu_s=_stats([r[0] for r in rs]),
            wall_s=_stats([r[1] for r in rs]),
            demo_total_lines=[r[2] for r in rs],
        )
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "bench_demo.json").write_text(json.dumps(out, indent=1))
    lines = [
        f"Command: `{command}`; `{out['demo_command'].strip()}` in fresh processes, "
        f"{args.repeats} cold and {args.repeats} warm runs, alternating.",
        "Cold: empty numba and calibration caches per run (a first run); warm: "
        "both caches filled by an earlier run.",
        "",
        "| run | CPU s median | CPU s min - max | wall s median | wall s min - max |",
        "|---|---|---|---|---|",
    ]
    for kind in ("cold", "warm"):
        c, w = out[kind]["cpu_s"], out[kind]["wall_s"]
        lines.append(
            f"| {kind} | {c['median']:.1f} | {c['min']:.1f} - {c['max']:.1f} | "
            f"{w['median']:.1f} | {w['min']:.1f} - {w['max']:.1f} |"
        )
    lines += [
        "",
        "Load average (1, 5, 15 min) at the end: "
        + ", ".join(f"{x:.2f}" for x in out["load_average"])
        + " (on a loaded machine the wall time grows; the CPU time much less).",
    ]
    md = "\n".join(lines) + "\n"
    (RESULTS / "bench_demo.md").write_text(md)
    print(md)


if __name__ == "__main__":
    main()
