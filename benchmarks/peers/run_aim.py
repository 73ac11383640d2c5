"""AIM synthetic data (the DD-SSP family) against dpestim's defaults (issue 26).

Ferrando and Sheldon (TMLR 2025) release marginals of a discretized table
with AIM, post-process them into the sufficient statistics of linear or
(Chebyshev-approximated) logistic regression and report results "closely
aligning with AIM-Synth", i.e. training on AIM's synthetic rows. This script
measures AIM-synth on dpestim's small datasets, with the data and splits of
the defaults matrix (``benchmarks/utility/defaults.py``'s ``load``):

1. discretize the training split on a **public** domain (``SCHEMES`` below):
   every numeric feature is rounded to the nearest of ``K = 9`` equally
   spaced levels of a public range (the loaders' documented [0, 1]
   scaling; [-3, 3] / sqrt(d) for the standardized breast cancer features;
   [-3, 3] / sqrt(442) for diabetes, whose columns scikit-learn documents as
   centred with unit sum of squares over its 442 rows); each one-hot group
   (feature names ``attr=value``) becomes one categorical column with its
   fixed category list; the label is a column ({0, 1}), a regression
   target is rounded to a grid of step 0.25 on its public ``y_bound``;
2. run AIM (``worker_aim.py``, smartnoise-synth in its own venv) at
   ``epsilon`` and ``delta = 1e-5``, and sample ``n_train`` and
   ``10 n_train`` synthetic rows (the second approximates the
   sufficient-statistics limit that DD-SSP targets);
3. map the rows back (levels to their values, categories to one-hot) and
   fit scikit-learn's model of the matrix's non-private objective
   (``LogisticRegression(C = 1 / (alpha n))``, ``Ridge(alpha n)``,
   ``alpha = 1e-4``, ``n`` the number of rows fitted) and score it on the
   real test split.

Beside it: the same scikit-learn fit on the discretized-and-decoded real
training rows (``epsilon = inf``: what discretization alone costs), and,
read from ``benchmarks/results/defaults.json``, dpestim's ``solver="auto"``,
AdaSSP (Ridge) and scikit-learn on the real rows.

Usage (dpestim's venv; the AIM venv from ``install_peers.sh aim``)::

    DPESTIM_DATA=/work/shared/datasets PYTHONPATH=. nice -n 10 \\
        python benchmarks/peers/run_aim.py --datasets german breast_cancer \\
        --epsilons 0.5 1 2 --seeds 0 1 2 3 4
    python benchmarks/peers/run_aim.py --report-only

Resumable: records already in ``benchmarks/results/peer_aim.json`` are
skipped; the file is rewritten after every AIM run. ``peer_aim.md`` is
regenerated at the end.
"""

import argparse
import datetime
import json
import math
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
PEERS_SRC = REPO / "benchmarks" / "peers"
RESULTS = REPO / "benchmarks" / "results"
OUT = RESULTS / "peer_aim.json"
OUT_MD = RESULTS / "peer_aim.md"
sys.path.insert(0, str(REPO / "benchmarks" / "utility"))
sys.path.insert(0, str(PEERS_SRC))
from run_peers import run_worker as run_peer_worker  # noqa: E402

ALPHA = 1e-4
DELTA = 1e-5
FEATURE_LEVELS = 9
TARGET_STEP = 0.25
FACTORS = (1, 10)
DATASETS = ["german", "compas", "breast_cancer", "diabetes", "california"]
REGRESSION = {"diabetes": (0.0, 4.0), "california": (0.0, 5.0)}
#: the worker's own thread settings (the BLAS pools: run_peers.THREAD_VARS)
WORKER_ENV = {
    "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1",
    "JAX_PLATFORMS": "cpu",
}


def numeric_range(dataset, d):
    """Public range of every numeric feature of ``dataset`` (``d`` columns)."""
    if dataset == "breast_cancer":
        return -3.0 / math.sqrt(d), 3.0 / math.sqrt(d)
    if dataset == "diabetes":
        return -3.0 / math.sqrt(442), 3.0 / math.sqrt(442)
    return 0.0, 1.0  # the loaders' fixed scalings clip to [0, 1]


def scheme(dataset, names, d):
    """Attributes of the discretized table: numeric levels or one-hot groups.

    ``names`` are the loader's feature names (``None``: all numeric). Built
    from the names and public constants only, never from the data.
    """
    lo, hi = numeric_range(dataset, d)
    levels = np.linspace(lo, hi, FEATURE_LEVELS)
    attrs, groups = [], {}
    for j in range(d):
        name = names[j] if names is not None else f"x{j}"
        if "=" in name:
            key = name.split("=", 1)[0]
            if key not in groups:
                groups[key] = {"kind": "onehot", "name": key, "cols": []}
                attrs.append(groups[key])
            groups[key]["cols"].append(j)
        else:
            attrs.append({"kind": "numeric", "name": name, "col": j, "levels": levels})
    return attrs


def target_levels(dataset):
    lo, hi = REGRESSION[dataset]
    return np.arange(lo, hi + TARGET_STEP / 2, TARGET_STEP)


def encode(attrs, X, y, dataset):
    """Integer codes (n x k) and the public cardinalities, label last."""
    cols, cards = [], []
    for a in attrs:
        if a["kind"] == "numeric":
            v = np.clip(X[:, a["col"]], a["levels"][0], a["levels"][-1])
            cols.append(np.abs(v[:, None] - a["levels"][None, :]).argmin(axis=1))
            cards.append(len(a["levels"]))
        else:
            block = X[:, a["cols"]]
            if not np.all(block.sum(axis=1) == 1):
                raise ValueError(f"{a['name']}: not a one-hot group")
            cols.append(block.argmax(axis=1))
            cards.append(len(a["cols"]))
    if dataset in REGRESSION:
        lv = target_levels(dataset)
        v = np.clip(y, lv[0], lv[-1])
        cols.append(np.abs(v[:, None] - lv[None, :]).argmin(axis=1))
        cards.append(len(lv))
    else:
        cols.append(np.asarray(y, dtype=np.int64))
        cards.append(2)
    return np.stack(cols, axis=1).astype(np.int64), cards


def decode(attrs, D, d, dataset):
    """Feature rows and labels / targets from integer codes."""
    X = np.zeros((D.shape[0], d))
    for k, a in enumerate(attrs):
        if a["kind"] == "numeric":
            X[:, a["col"]] = a["levels"][D[:, k]]
        else:
            X[np.arange(D.shape[0]), np.asarray(a["cols"])[D[:, k]]] = 1.0
    if dataset in REGRESSION:
        y = target_levels(dataset)[D[:, -1]]
    else:
        y = D[:, -1].astype(np.int64)
    return X, y


def fit_score(dataset, X, y, X_test, y_test):
    """scikit-learn's optimum of the matrix's objective, scored on real data."""
    import sklearn.linear_model as skl
    from sklearn.metrics import r2_score

    n = X.shape[0]
    if dataset in REGRESSION:
        m = skl.Ridge(alpha=ALPHA * n).fit(X, y)
        return float(r2_score(y_test, m.predict(X_test)))
    if len(np.unique(y)) < 2:  # a one-class synthetic table: predict it
        return float(np.mean(y_test == y[0]))
    m = skl.LogisticRegression(C=1.0 / (ALPHA * n), max_iter=5000).fit(X, y)
    return float(np.mean(m.predict(X_test) == y_test))


def run_worker(python, task):
    """One AIM task in the peer's venv (``run_peers.run_worker``), timed."""
    t0 = time.perf_counter()
    out = run_peer_worker(python, "worker_aim.py", task, 1, extra_env=WORKER_ENV)
    out["subprocess_wall_s"] = time.perf_counter() - t0
    return out


def load_json():
    if OUT.exists():
        return json.loads(OUT.read_text())
    return {"meta": {}, "records": []}


def _rkey(r):
    return (r["dataset"], r["method"], str(r["epsilon"]), r["seed"], r.get("factor"))


def save_json(doc):
    """Merge ``doc`` into the file under a lock (drivers may run in parallel)."""
    import fcntl

    with open(os.path.join(tempfile.gettempdir(), "peer_aim.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        disk = load_json()
        have = {_rkey(r) for r in doc["records"]}
        doc["records"] += [r for r in disk["records"] if _rkey(r) not in have]
        cmds = disk["meta"].get("commands", []) + doc["meta"].get("commands", [])
        doc["meta"]["commands"] = list(dict.fromkeys(cmds))
        OUT.write_text(json.dumps(doc, indent=1) + "\n")


def run(args):
    import sklearn
    from defaults import load

    python = str(Path(args.peers_dir) / "aim" / "bin" / "python")
    if not Path(python).exists():
        sys.exit(f"no AIM venv at {python}: bash benchmarks/peers/install_peers.sh aim")
    doc = load_json()
    done = {_rkey(r) for r in doc["records"]}
    doc["meta"].update(
        {
            "commands": ["python " + " ".join(sys.argv)],
            "date": datetime.date.today().isoformat(),
            "delta": DELTA,
            "alpha": ALPHA,
            "feature_levels": FEATURE_LEVELS,
            "target_step": TARGET_STEP,
            "scikit-learn": sklearn.__version__,
        }
    )
    for name in args.datasets:
        X, y, X_test, y_test, _ = load(name)
        names = None
        if name in ("german", "compas", "california"):
            from dpestim import datasets as ds

            loader = f"load_{name}"
            if name == "california":
                loader = "load_california_housing"
            names = getattr(ds, loader)().feature_names
        d = X.shape[1]
        attrs = scheme(name, names, d)
        D, cards = encode(attrs, X, y, name)
        metric = "r2" if name in REGRESSION else "accuracy"
        base = {"dataset": name, "metric": metric, "n_train": X.shape[0]}
        base["n_test"] = X_test.shape[0]
        base["attributes"] = len(cards)
        if (name, "discretized", "inf", 0, 1) not in done:
            Xd, yd = decode(attrs, D, d, name)
            score = fit_score(name, Xd, yd, X_test, y_test)
            rec = dict(base, method="discretized", epsilon="inf", seed=0, factor=1)
            doc["records"].append(dict(rec, score=score, cards=cards))
            score = fit_score(name, X, y, X_test, y_test)
            rec = dict(base, method="sklearn", epsilon="inf", seed=0, factor=1)
            doc["records"].append(dict(rec, score=score))
            save_json(doc)
            print(name, "discretized / real", doc["records"][-2]["score"], score)
        n = X.shape[0]
        for eps in args.epsilons:
            for seed in args.seeds:
                if (name, "aim-synth", str(float(eps)), seed, 1) in done:
                    continue
                with tempfile.TemporaryDirectory() as tmp:
                    data = os.path.join(tmp, "table.npz")
                    np.savez(data, D=D, cards=np.asarray(cards))
                    out = os.path.join(tmp, "synth.npz")
                    task = {
                        "task": "synth",
                        "data": data,
                        "epsilon": float(eps),
                        "delta": DELTA,
                        "seed": seed,
                        "rows": [f * n for f in FACTORS],
                        "out": out,
                    }
                    info = run_worker(python, task)
                    with np.load(out) as f:
                        synth = {k: f[k].astype(np.int64) for k in f.files}
                doc["meta"]["library"] = info["library"]
                new = []
                for factor in FACTORS:
                    Xs, ys = decode(attrs, synth[f"S{factor * n}"], d, name)
                    score = fit_score(name, Xs, ys, X_test, y_test)
                    rec = dict(base, method="aim-synth", epsilon=float(eps))
                    rec.update(seed=seed, factor=factor, score=score)
                    for k in ("aim_wall_s", "aim_cpu_s", "worker_wall_s"):
                        rec[k] = info[k]
                    rec["rho"] = info["rho"]
                    rec["workload_size"] = info["workload_size"]
                    rec["model_cliques"] = len(info["model_cliques"])
                    # which measured marginals tie the label to a feature
                    names_k = [a["name"] for a in attrs] + ["label"]
                    rec["label_marginals"] = [
                        [names_k[int(c[3:])] for c in cl]
                        for cl in info["model_cliques"]
                        if f"col{len(cards) - 1}" in cl
                    ]
                    new.append(rec)
                doc["records"] += new
                save_json(doc)
                print(
                    f"{name} eps={eps} seed={seed}: "
                    + ", ".join(f"x{r['factor']} {r['score']:.4f}" for r in new)
                    + f"  (AIM {info['aim_wall_s']:.0f} s wall, "
                    f"{info['aim_cpu_s']:.0f} s CPU)",
                    flush=True,
                )


def _stats(values):
    if not values:
        return "-"
    if len(values) == 1:
        return f"{values[0]:.3f}"
    return f"{statistics.median(values):.3f} [{min(values):.3f}, {max(values):.3f}]"


def report():
    doc = load_json()
    recs = doc["records"]
    matrix = json.loads((RESULTS / "defaults.json").read_text())["records"]

    def ref(dataset, solver, eps):
        est = "Ridge" if dataset in REGRESSION else "LogisticRegression"
        return [
            r["score"]
            for r in matrix
            if r["dataset"] == dataset
            and r["estimator"] == est
            and r["solver"] == solver
            and r.get("preprocessing", "loader") == "loader"
            and str(r["epsilon"]) == str(eps)
        ]

    datasets = [d for d in DATASETS if any(r["dataset"] == d for r in recs)]
    m = doc["meta"]
    lines = [
        "# AIM synthetic data (DD-SSP family) against dpestim's defaults",
        "",
        "Generated by `benchmarks/peers/run_aim.py` (issue 26); data and splits of",
        "the defaults matrix (`benchmarks/utility/defaults.py`).",
        "",
        f"- date {m.get('date', '?')}; commands (dpestim's venv, repo root, with",
        "  `DPESTIM_DATA=/work/shared/datasets PYTHONPATH=. nice -n 10`; each",
        "  resumes the same JSON; two ran at a time on the 2-core machine):",
        *[f"  - `{c}`" for c in m.get("commands", [])],
        f"- AIM: {m.get('library', '?')}, `AIMSynthesizer` defaults (degree-2",
        "  workload with `max_cells=10000`, `max_model_size=80`, rounds = 16 x",
        f"  attributes), delta = {m.get('delta')}; scikit-learn"
        f" {m.get('scikit-learn', '?')}",
        f"- discretization: numeric features rounded to {FEATURE_LEVELS} equally",
        "  spaced levels of a public range ([0, 1] for the loaders' fixed",
        "  scalings; [-3, 3]/sqrt(30) for breast cancer; [-3, 3]/sqrt(442) for",
        "  diabetes); one-hot groups as one categorical column; label as a",
        f"  column; regression targets on a grid of step {TARGET_STEP} over",
        "  their public bound",
        "- AIM-synth: scikit-learn (`C = 1/(1e-4 n)` / `Ridge(1e-4 n)`) on n_train",
        "  (x1) or 10 n_train (x10) synthetic rows, scored on the real test split;",
        "  median [min, max] over seeds",
        "- dpestim auto / AdaSSP: median [min, max] of 5 seeds from",
        "  `benchmarks/results/defaults.json`; scikit-learn: the real training rows;",
        "  discretized: scikit-learn on the real rows after discretization;",
        "  majority class / constant mean from `defaults.json`",
        "",
        "| dataset (metric, n_train / n_test) | eps | AIM-synth x1 | AIM-synth x10 "
        "| dpestim auto | AdaSSP | seeds (inf: real-data references) |",
        "|---|---|---|---|---|---|---|",
    ]
    for name in datasets:
        rs = [r for r in recs if r["dataset"] == name]
        r0 = rs[0]
        label = f"{name} ({r0['metric']}, {r0['n_train']} / {r0['n_test']})"
        epss = sorted({r["epsilon"] for r in rs if r["method"] == "aim-synth"})
        for eps in epss:

            def aim(factor, eps=eps, rs=rs):
                return [
                    r["score"]
                    for r in rs
                    if r["method"] == "aim-synth"
                    and r["epsilon"] == eps
                    and r["factor"] == factor
                ]

            ada = _stats(ref(name, "adassp", eps)) if name in REGRESSION else "-"
            lines.append(
                f"| {label} | {eps:g} | {_stats(aim(1))} | {_stats(aim(10))} "
                f"| {_stats(ref(name, 'auto', eps))} | {ada} | {len(aim(1))} |"
            )
        base_name = "constant" if name in REGRESSION else "majority"
        sk = [r["score"] for r in rs if r["method"] == "sklearn"]
        disc = [r["score"] for r in rs if r["method"] == "discretized"]
        lines.append(
            f"| {label} | inf | discretized {_stats(disc)} | - "
            f"| {_stats(ref(name, 'auto', 'inf'))} | - | scikit-learn {_stats(sk)}; "
            f"{base_name} {_stats(ref(name, base_name, 'inf'))} |"
        )
    aims = [r for r in recs if r["method"] == "aim-synth" and r["factor"] == 1]
    if aims:
        lines += ["", "AIM cost per run (wall / CPU seconds, median [min, max]):", ""]
        for name in datasets:
            w = [r["aim_wall_s"] for r in aims if r["dataset"] == name]
            c = [r["aim_cpu_s"] for r in aims if r["dataset"] == name]
            if w:
                lines.append(
                    f"- {name}: wall {statistics.median(w):.0f} "
                    f"[{min(w):.0f}, {max(w):.0f}], CPU {statistics.median(c):.0f} "
                    f"[{min(c):.0f}, {max(c):.0f}] ({len(w)} runs)"
                )
    OUT_MD.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--datasets", nargs="+", default=DATASETS, choices=DATASETS)
    p.add_argument("--epsilons", nargs="+", type=float, default=[0.5, 1.0, 2.0])
    p.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2, 3, 4])
    p.add_argument(
        "--peers-dir", default=os.environ.get("DPESTIM_PEERS_DIR", "/work/venvs")
    )
    p.add_argument("--report-only", action="store_true")
    args = p.parse_args()
    if not args.report_only:
        run(args)
    report()


if __name__ == "__main__":
    main()
