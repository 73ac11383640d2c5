"""Import time and first fit in a fresh process (CPU time), against scikit-learn.

Fresh Python processes, interleaved (A B C D A B C D ...), each printing its
own CPU time (``time.process_time``):

* ``import sklearn.linear_model`` (the baseline of the import target);
* ``import sklearn.linear_model, numba, dp_accounting`` (the floor of an
  import of dpestim that loads its two extra dependencies eagerly);
* ``import dpestim`` (lazy: loads the estimators and their dependencies on
  first access, PEP 562);
* ``from dpestim import LogisticRegression`` against ``from
  sklearn.linear_model import LogisticRegression`` (what a script does: the
  estimator's modules, numba and dp_accounting, which a fit needs, are
  imported here);
* numba's first call: after ``import dpestim.linear_model``, the CPU time of
  the first call of one small cached kernel (``poisson_sample``): numba's
  one-time initialisation of its typing and target contexts plus the load
  of one kernel from the cache;
* a first fit: ``from dpestim import LogisticRegression``, load Adult
  (a9a), then the CPU time of ``LogisticRegression(classes=[0,
  1]).fit(X, y)`` (warm numba cache and warm on-disk calibration cache, as
  after a first run; the first, cold run is discarded), the same fit with
  ``DPESTIM_CALIBRATION_CACHE=0``, and the sum of the estimator's import
  and its first fit (what lazy imports cannot reduce: they only move the
  import of what a fit needs into the first fit).

Usage::

    PYTHONPATH=. DPESTIM_DATA=... python benchmarks/speed/startup.py [--repeats 3]

Writes ``benchmarks/results/bench_startup.{json,md}``.
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

IMPORT = (
    "import time; c = time.process_time(); import {}; print(time.process_time() - c)"
)
FROM = (
    "import time; c = time.process_time(); "
    "from {} import LogisticRegression; print(time.process_time() - c)"
)
FIRST_CALL = """
import time
import numpy as np
import dpestim.linear_model
from dpestim._kernels import poisson_sample
rng, out = np.random.default_rng(0), np.empty(10, dtype=np.int64)
c = time.process_time()
poisson_sample(rng, 10, 0.5, out)
print(time.process_time() - c)
"""
FIRST_FIT = """
import time, warnings
warnings.simplefilter("ignore")
c = time.process_time()
from dpestim import LogisticRegression
imported = time.process_time() - c
from dpestim.datasets import load_adult_a9a
d = load_adult_a9a()
c = time.process_time()
LogisticRegression(classes=[0, 1], random_state=0).fit(d.data, d.target)
fit = time.process_time() - c
print(imported + fit if {total} else fit)
"""


def _cpu(code, env):
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return float(out.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    env = dict(os.environ)
    env.setdefault("PYTHONPATH", str(REPO))
    off = dict(env, DPESTIM_CALIBRATION_CACHE="0")
    variants = {
        "import sklearn.linear_model": (IMPORT.format("sklearn.linear_model"), env),
        "import sklearn.linear_model, numba, dp_accounting": (
            IMPORT.format("sklearn.linear_model, numba, dp_accounting"),
            env,
        ),
        "import dpestim": (IMPORT.format("dpestim"), env),
        "from sklearn.linear_model import LogisticRegression": (
            FROM.format("sklearn.linear_model"),
            env,
        ),
        "from dpestim import LogisticRegression": (FROM.format("dpestim"), env),
        "numba first call (one cached kernel)": (FIRST_CALL, env),
        "first fit on Adult (CPU after import and load)": (
            FIRST_FIT.format(total=False),
            env,
        ),
        "first fit on Adult, disk calibration cache off": (
            FIRST_FIT.format(total=False),
            off,
        ),
        "from dpestim import LogisticRegression + first fit on Adult": (
            FIRST_FIT.format(total=True),
            env,
        ),
    }
    _cpu(FIRST_FIT.format(total=False), env)  # warm the caches; discarded
    _cpu(FIRST_CALL, env)
    raw = {k: [] for k in variants}
    for _ in range(args.repeats):
        for name, (code, e) in variants.items():
            raw[name].append(_cpu(code, e))
    med = {k: statistics.median(v) for k, v in raw.items()}
    ratio = med["import dpestim"] / med["import sklearn.linear_model"]
    from_ratio = (
        med["from dpestim import LogisticRegression"]
        / med["from sklearn.linear_model import LogisticRegression"]
    )
    floor = (
        med["import sklearn.linear_model, numba, dp_accounting"]
        / med["import sklearn.linear_model"]
    )
    command = (
        f"PYTHONPATH=. python benchmarks/speed/startup.py --repeats {args.repeats}"
    )
    out = {
        "command": command,
        "raw_cpu_s": raw,
        "median_cpu_s": med,
        "import_ratio": ratio,
        "import_floor_ratio": floor,
        "from_import_ratio": from_ratio,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "bench_startup.json").write_text(json.dumps(out, indent=1))
    lines = [
        f"Command: `{command}`; fresh processes, medians of {args.repeats}, CPU s.",
        "",
        "| run | CPU s (median) | all runs |",
        "|---|---|---|",
    ]
    for k, v in med.items():
        lines.append(f"| {k} | {v:.3f} | {', '.join(f'{x:.3f}' for x in raw[k])} |")
    lines += [
        "",
        f"import dpestim / import sklearn.linear_model: {ratio:.2f} "
        f"(floor with numba and dp_accounting: {floor:.2f})",
        "",
        "from dpestim import LogisticRegression / from sklearn.linear_model "
        f"import LogisticRegression: {from_ratio:.2f}",
    ]
    md = "\n".join(lines) + "\n"
    (RESULTS / "bench_startup.md").write_text(md)
    print(md)


if __name__ == "__main__":
    main()
