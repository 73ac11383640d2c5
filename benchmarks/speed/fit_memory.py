"""Peak memory of a default in-memory fit, against scikit-learn, same run.

A user trial (2026-11-28) measured 981 MB peak RSS for a default
``LogisticRegression`` on 1,000,000 x 20 float64 rows (160 MB) against
scikit-learn's 403 MB: the in-fit centring, the column balance and the row
scale each held float64 copies of ``X``. Each case runs in a fresh Python
process: make the data (seeded), import, warm numba up on 5,000 rows,
``gc.collect()``, reset the process's peak RSS (``/proc/self/clear_refs``,
Linux), then one fit; the fit's **extra peak** is the peak RSS during it
minus the RSS before it (so the data and the imports, the same for both
libraries, are left out), reported with the fit's wall and CPU seconds and
the ratio to scikit-learn's ``LogisticRegression`` / ``Ridge`` on the same
rows (the baseline, measured in the same run). Cases alternate library by
library over ``--repeats``; the median is reported.

    PYTHONPATH=. python benchmarks/speed/fit_memory.py [--rows 1000000] \\
        [--repeats 3] [--out FILE]

Writes ``benchmarks/results/bench_fit_memory.{json,md}``.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RESULTS = Path(
    os.environ.get("DPESTIM_BENCH_RESULTS") or REPO / "benchmarks" / "results"
)

DP_LR = "dpestim.LogisticRegression(classes=[0, 1], random_state=0)"
SK_LR = "sklearn LogisticRegression"
#: (name, estimator expression, baseline name); ``X``, ``y`` in scope.
CASES = [
    ("dpestim LogisticRegression", DP_LR, SK_LR),
    (SK_LR, "sklearn.linear_model.LogisticRegression()", None),
    ("dpestim LogisticRegression, float32 X", DP_LR, SK_LR),
    ("dpestim Ridge", "dpestim.Ridge(random_state=0)", "sklearn Ridge"),
    ("sklearn Ridge", "sklearn.linear_model.Ridge()", None),
]

CHILD = r"""
import gc, json, resource, sys, time, warnings
import numpy as np
n, d, name, expr = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
rng = np.random.default_rng(0)
X = rng.standard_normal((n, d))
X[:, 0] = X[:, 0] * 10 + 40  # an offset (the in-fit centring runs)
w = rng.standard_normal(d) / np.sqrt(d) * 2
score = X @ w - 0.5
y = (rng.random(n) < 1 / (1 + np.exp(-score))).astype(int)
if "Ridge" in name:
    y = score + rng.standard_normal(n)
if "float32" in name:
    X = X.astype(np.float32)
import dpestim, sklearn.linear_model
dpestim.set_composition_warning(False)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    eval(expr).fit(X[:5000], y[:5000])  # numba and imports warm
gc.collect()
def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1]) / 1024.0  # MB
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # peak RSS := current RSS
before = status("VmRSS")
est = eval(expr)
t, c = time.perf_counter(), time.process_time()
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    est.fit(X, y)
wall, cpu = time.perf_counter() - t, time.process_time() - c
print(json.dumps(dict(extra_mb=status("VmHWM") - before, x_mb=X.nbytes / 2**20,
                      wall_s=wall, cpu_s=cpu, score=float(est.score(X, y)))))
"""


def _run(rows, d, name, expr):
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(rows), str(d), name, expr],
        capture_output=True,
        text=True,
        check=True,
        env=dict(os.environ, DPESTIM_COMPOSITION_WARNING="0"),
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--features", type=int, default=20)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--out", default=str(RESULTS / "bench_fit_memory"))
    args = p.parse_args(argv)
    runs = {name: [] for name, _, _ in CASES}
    for _ in range(args.repeats):
        for name, expr, _ in CASES:
            runs[name].append(_run(args.rows, args.features, name, expr))
            print(name, runs[name][-1], flush=True)
    med = {
        name: {k: statistics.median(r[k] for r in rs) for k in rs[0]}
        for name, rs in runs.items()
    }
    head = "| fit | X (MB) | extra peak RSS (MB) | vs baseline | wall (s) | CPU (s) "
    lines = [head + "| training score |", "|---|---:|---:|---:|---:|---:|---:|"]
    for name, _, base in CASES:
        m = med[name]
        ratio = (
            "baseline"
            if base is None
            else f"{m['extra_mb'] / med[base]['extra_mb']:.2f}x"
        )
        lines.append(
            f"| {name} | {m['x_mb']:.0f} | {m['extra_mb']:.0f} | {ratio} | "
            f"{m['wall_s']:.2f} | {m['cpu_s']:.2f} | {m['score']:.4f} |"
        )  # fmt: skip
    command = "python benchmarks/speed/fit_memory.py " + " ".join(sys.argv[1:])
    md = "\n".join(
        [
            "# Peak memory of a default in-memory fit",
            "",
            f"Command: `{command}`. {args.rows:,} x {args.features} rows, "
            f"median of {args.repeats} fresh processes per case (extra peak: "
            "the peak RSS during the fit minus the RSS before it; the data and "
            "the imports are left out). dpestim at its defaults (epsilon 1, "
            '`solver="auto"`), scikit-learn at its own; the ratio is the '
            "extra peak over scikit-learn's in the same run.",
            "",
            *lines,
            "",
        ]
    )
    out = Path(args.out)
    out.with_suffix(".json").write_text(json.dumps(dict(command=command, runs=runs)))
    out.with_suffix(".md").write_text(md)
    print(md)


if __name__ == "__main__":
    main()
