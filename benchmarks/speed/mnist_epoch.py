"""MNIST DP-SGD epoch: dpestim (float64, float32) against Opacus and the floors.

The MNIST problem of ``run_peers.py`` (multinomial logistic regression,
60,000 x 784, 10 classes, Poisson rate 250/60000, noise multiplier 1, clip 1,
learning rate 1, 2 epochs), run through the same worker scripts, one fresh
process per fit, interleaved (dpestim float64, dpestim float32, Opacus, ...),
threads pinned to 1 (``--threads``). Each dpestim worker also times the floor
``X @ V`` (one streaming pass over X forming all 10 scores) in its own dtype.
Reported: per-epoch CPU and wall (medians), test accuracy, and the ratios of
the targets: Opacus / dpestim (>= 20x) and dpestim / float32 floor (<= 2x).
Two dpestim figures per run: the whole fit divided by the number of epochs
(validation, row norms and the accounting of the run included: a per-fit
cost, paid once) and the training loop alone (``loop``: Poisson sampling,
clipped sums, noise and steps), which is what Opacus's per-epoch time
covers (its worker times the epoch loop only, not ``make_private`` or its
accountant). The load average of the machine is recorded before and after.

Usage::

    PYTHONPATH=. python benchmarks/speed/mnist_epoch.py [--repeats 2]

Opacus needs its venv (``benchmarks/peers/install_peers.sh opacus``); it is
skipped (and said so) without it. Writes
``benchmarks/results/bench_mnist_epoch.{json,md}``.
"""

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "peers"))

from run_peers import SPEED_COMMON, peer_python, run_worker  # noqa: E402

from dpestim.datasets import dataset_available, get_data_home  # noqa: E402

RESULTS = Path(
    os.environ.get("DPESTIM_BENCH_RESULTS")
    or Path(__file__).resolve().parents[2] / "benchmarks" / "results"
)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--peers-dir", default="/work/venvs")
    args = parser.parse_args()
    if not dataset_available("mnist"):
        sys.exit("MNIST not found (DPESTIM_DATA)")
    task = dict(
        data={"kind": "mnist", "folder": str(Path(get_data_home()) / "mnist")},
        n_classes=10,
        epochs=args.epochs,
        delta=1e-5,
        seed=0,
        threads=args.threads,
        solver="dp-sgd",
        **SPEED_COMMON,
    )
    runs = {
        "dpestim float64": (
            sys.executable,
            "worker_dpestim.py",
            dict(task, task="fit"),
        ),
        "dpestim float32": (
            sys.executable,
            "worker_dpestim.py",
            dict(task, task="fit", dtype="float32"),
        ),
    }
    opacus = peer_python(args.peers_dir, "opacus")
    messages = []
    if opacus is None:
        messages.append("Opacus venv not found: Opacus skipped")
    else:
        runs["Opacus"] = (opacus, "worker_opacus.py", dict(task, task="dpsgd"))
    load_before = os.getloadavg()
    raw = {k: [] for k in runs}
    for _ in range(args.repeats):
        for name, (py, script, t) in runs.items():
            raw[name].append(run_worker(py, script, t, args.threads))
    med = {}
    for name, outs in raw.items():
        med[name] = {
            "cpu_per_epoch_s": statistics.median(o["cpu_per_epoch_s"] for o in outs),
            "wall_per_epoch_s": statistics.median(o["time_per_epoch_s"] for o in outs),
            "test_accuracy": statistics.median(o["test_accuracy"] for o in outs),
            "library": outs[0]["library"],
        }
        loops = [
            o["loop_cpu_per_epoch_s"] for o in outs if o.get("loop_cpu_per_epoch_s")
        ]
        if loops:
            med[name]["loop_cpu_per_epoch_s"] = statistics.median(loops)
            med[name]["loop_wall_per_epoch_s"] = statistics.median(
                o["loop_wall_per_epoch_s"] for o in outs
            )
        floors = [o.get("floor") for o in outs if o.get("floor")]
        if floors:
            med[name]["floor_cpu_s"] = statistics.median(f["cpu_s"] for f in floors)
    dp64, dp32 = med["dpestim float64"], med["dpestim float32"]
    best = min(dp64["cpu_per_epoch_s"], dp32["cpu_per_epoch_s"])
    ratios = {
        "dpestim_float64_over_float32_floor": dp64["cpu_per_epoch_s"]
        / dp32["floor_cpu_s"],
        "dpestim_float32_over_float32_floor": dp32["cpu_per_epoch_s"]
        / dp32["floor_cpu_s"],
        "dpestim_float64_over_float64_floor": dp64["cpu_per_epoch_s"]
        / dp64["floor_cpu_s"],
    }
    if "loop_cpu_per_epoch_s" in dp32:
        ratios["dpestim_float32_loop_over_float32_floor"] = (
            dp32["loop_cpu_per_epoch_s"] / dp32["floor_cpu_s"]
        )
    if "Opacus" in med:
        ratios["opacus_over_best_dpestim"] = med["Opacus"]["cpu_per_epoch_s"] / best
        if "loop_cpu_per_epoch_s" in dp32:
            best_loop = min(
                dp64.get("loop_cpu_per_epoch_s", np.inf), dp32["loop_cpu_per_epoch_s"]
            )
            ratios["opacus_over_best_dpestim_loop"] = (
                med["Opacus"]["cpu_per_epoch_s"] / best_loop
            )
        ratios["accuracy_gap_points"] = 100 * (
            med["Opacus"]["test_accuracy"] - dp64["test_accuracy"]
        )
    command = (
        f"PYTHONPATH=. python benchmarks/speed/mnist_epoch.py --repeats "
        f"{args.repeats} --epochs {args.epochs}"
    )
    load = {"before": load_before, "after": os.getloadavg()}
    out = {"command": command, "median": med, "ratios": ratios, "raw": raw}
    out["load_average_1_5_15min"] = load
    out["messages"] = messages
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "bench_mnist_epoch.json").write_text(json.dumps(out, indent=1))
    lines = [
        f"Command: `{command}`; one fresh process per fit, threads pinned to "
        f"{args.threads}; medians of {args.repeats}.",
        "",
        "Load average (1, 5, 15 min) before "
        + ", ".join(f"{v:.1f}" for v in load["before"])
        + "; after "
        + ", ".join(f"{v:.1f}" for v in load["after"])
        + ".",
        "",
        "| run | CPU s/epoch (whole fit / epochs) | wall s/epoch | loop CPU s/epoch | "
        "loop wall s/epoch | floor X @ V CPU s | test accuracy |",
        "|---|---|---|---|---|---|---|",
    ]

    def fmt(v):
        return "-" if v is None else f"{v:.3f}"

    for name, m in med.items():
        lines.append(
            f"| {name} ({m['library']}) | {m['cpu_per_epoch_s']:.3f} | "
            f"{m['wall_per_epoch_s']:.3f} | {fmt(m.get('loop_cpu_per_epoch_s'))} | "
            f"{fmt(m.get('loop_wall_per_epoch_s'))} | {fmt(m.get('floor_cpu_s'))} | "
            f"{m['test_accuracy']:.4f} |"
        )
    lines += [""] + [f"- {k}: {v:.2f}" for k, v in ratios.items()]
    lines += [f"- {m}" for m in messages]
    md = "\n".join(lines) + "\n"
    (RESULTS / "bench_mnist_epoch.md").write_text(md)
    print(md)


if __name__ == "__main__":
    main()
