"""Every estimator x solver at its defaults: the matrix behind "useful by default".

For each estimator (LogisticRegression, LinearSVC, Ridge), each registered
solver that supports its loss, each dataset and each epsilon in {0.1, 0.5, 1,
2, inf}, fits with **every hyperparameter at its default** (``"auto"``), only
``epsilon``, ``classes`` (public label set), ``y_bound`` (public target
range, Ridge) and ``random_state`` given, ``delta = 1e-5`` (ignored by the
pure-DP solvers), over several seeds, and scores on held-out data. Beside
them: scikit-learn's optimum of the same objective (``C = 1 / (alpha n)``,
``alpha_sklearn = alpha n``) and the majority-class / constant-mean rate.

Results: ``benchmarks/results/defaults.json`` (schema in the module
``SCHEMA`` string below; read by the solver guide's decision table), one PNG
per estimator (``benchmarks/results/defaults_<Estimator>.png``).

The script is resumable: records already in the JSON are skipped, and the
file is rewritten after every (estimator, solver, dataset) group, so an
interrupted run loses at most one group. Subsets via flags::

    PYTHONPATH=. nice -n 10 python benchmarks/utility/defaults.py \
        --datasets adult california --solvers dp-sgd dp-gd --seeds 5
    PYTHONPATH=. python benchmarks/utility/defaults.py --plot-only

Data preparation (all public, per-record or fixed constants, except where
stated): the shared loaders' scaling (``dpestim.datasets``); held-out split
25% (seeded, fixed) where the dataset has no test part; MNIST subsampled to
``--mnist-train`` training rows (default 10,000) and 5,000 test rows to fit
the 2-core budget (n is smaller than the full data: the private results
there are pessimistic); breast cancer standardised with the training
statistics (non-private preprocessing, the same for every method, stated
here); digits / 16 (documented pixel range); diabetes as shipped by
scikit-learn (already scaled) with the target / 100 and ``y_bound=(0, 4)``;
California with ``y_bound=(0, 5.00001)`` (the census top-code in $100k).

Preprocessing axis (issue 25): ``--preprocessing NAME ...|all`` fits on the
features as a user may have prepared them (``user_transforms.py``: loader,
unit-norm, x0.01, x100, standard (non-private), raw-target), each beside
scikit-learn refitted on the same features; it writes
``defaults_preprocessing.json`` / ``.md`` (``preprocessing_report.py``),
never ``defaults.json``. ``python -m benchmarks run defaults_preprocessing``.
"""

import argparse
import datetime
import json
import math
import os
import sys
import time
import warnings
from collections import defaultdict
from pathlib import Path

import numpy as np
from defaults_report import LEGACY, OWN_REFERENCE, medians, summary
from user_transforms import LOADER, PREPROCESSINGS, apply

SCHEMA = """{"meta": {...}, "records": [{"estimator", "solver" (registry name,
"sklearn", "majority" or "constant"), "dataset", "epsilon" (float or "inf"),
"seed", "metric" ("accuracy" or "r2"), "score", "fit_cpu_s", "preprocessing"
(``user_transforms.PREPROCESSINGS``; absent on records written before the
axis: "loader"), "commit" (the
code's commit; absent on the first session's records), "utility_warning"
(bool: a UtilityWarning fired during the fit; absent on
records written before it was added and on the baselines), "lift" (the
classifiers' private utility check, ``lift_``, when it ran), "picked" (solver
"auto" only: the registry name its rule chose)}]}"""

EPSILONS = [0.1, 0.5, 1.0, 2.0, math.inf]
RESULTS = Path(
    os.environ.get("DPESTIM_BENCH_RESULTS")
    or Path(__file__).resolve().parents[1] / "results"
)
OUT = RESULTS / "defaults.json"
#: Where runs with a preprocessing other than the loader's go.
OUT_PREPROCESSING = RESULTS / "defaults_preprocessing.json"

#: The estimators' default, ``solver="auto"`` (``dpestim/solvers/_auto.py``):
#: not a registry name, it fits every loss and picks a solver per fit.
AUTO = "auto"

#: Solver families, in plot order.
FAMILIES = {
    "solver='auto' (the default)": [AUTO],
    "Poisson SGD (Gaussian)": ["dp-sgd", "dp-lssgd", "adp-sgd", "adp-adagrad"],
    "dual CD (Gaussian)": ["dp-scd", "seq-dp-scd"],
    "accelerated (Laplace, pure DP)": [
        "dp-gd",
        "dp-hb",
        "dp-nag",
        "dp-nag-opt",
        "dp-masg",
        "dp-masg-opt",
    ],
    "mirror descent (exp. mech.)": ["dp-smd-sco"],
    "one-shot (Gaussian)": ["adassp", "objective-perturbation"],
}

FULL_BATCH = set(FAMILIES["accelerated (Laplace, pure DP)"])
#: Solvers whose eps=inf default fit draws no random numbers: run once.
DETERMINISTIC_INF = FULL_BATCH | {"dp-smd-sco"}

CLASSIFICATION = ["adult", "phishing", "w8a", "mnist", "compas", "german"]
CLASSIFICATION += ["breast_cancer", "digits"]
REGRESSION = ["california", "diabetes"]
#: Run order: the datasets of the issue's targets first, the costly last.
DEFAULT_ORDER = ["adult", "california", "breast_cancer", "digits", "compas"]
DEFAULT_ORDER += ["german", "diabetes", "phishing", "w8a", "mnist"]


def _split(X, y, seed=0):
    from sklearn.model_selection import train_test_split

    X, X_test, y, y_test = train_test_split(X, y, test_size=0.25, random_state=seed)
    return X, y, X_test, y_test


def load(name, mnist_train=10_000):
    """``(X, y, X_test, y_test, extra_fit_kwargs)`` of a benchmark dataset."""
    from dpestim import datasets as ds

    if name == "adult":
        b = ds.load_adult_a9a()
        return b.data, b.target, b.data_test, b.target_test, {}
    if name == "mnist":
        b = ds.load_mnist()
        rng = np.random.default_rng(0)
        tr = rng.choice(b.data.shape[0], mnist_train, replace=False)
        te = rng.choice(b.data_test.shape[0], 5000, replace=False)
        return b.data[tr], b.target[tr], b.data_test[te], b.target_test[te], {}
    # bank: a second held-out set for solver="auto" (benchmarks/results/
    # bank_heldout.md); not in CLASSIFICATION, so not in defaults.md's matrix
    if name in ("phishing", "w8a", "compas", "german", "bank"):
        b = getattr(ds, f"load_{name}")()
        return (*_split(b.data, b.target), {})
    if name == "california":
        b = ds.load_california_housing()
        return (*_split(b.data, b.target), {"y_bound": (0.0, 5.00001)})
    from sklearn import datasets as skd

    if name == "breast_cancer":
        from sklearn.preprocessing import StandardScaler

        X, y, X_te, y_te = _split(*skd.load_breast_cancer(return_X_y=True))
        sc = StandardScaler().fit(X)  # non-private preprocessing (stated)
        r = np.sqrt(X.shape[1])
        return sc.transform(X) / r, y, sc.transform(X_te) / r, y_te, {}
    if name == "digits":
        X, y = skd.load_digits(return_X_y=True)
        return (*_split(X / 16.0, y), {})
    if name == "diabetes":
        X, y = skd.load_diabetes(return_X_y=True)
        return (*_split(X, y / 100.0), {"y_bound": (0.0, 4.0)})
    raise ValueError(f"unknown dataset {name!r}")


def _estimators(dataset):
    from dpestim import LinearSVC, LogisticRegression, Ridge

    if dataset in REGRESSION:
        return {"Ridge": Ridge}
    return {"LogisticRegression": LogisticRegression, "LinearSVC": LinearSVC}


def _sklearn(est_name, n, alpha):
    import sklearn.linear_model as skl
    import sklearn.svm as sks

    if est_name == "LogisticRegression":
        return skl.LogisticRegression(C=1.0 / (alpha * n), max_iter=5000)
    if est_name == "LinearSVC":
        return sks.LinearSVC(C=1.0 / (alpha * n), max_iter=20000)
    return skl.Ridge(alpha=alpha * n)


def _utility_warned(caught):
    """Whether a :class:`~dpestim.UtilityWarning` fired during the fit."""
    from dpestim import UtilityWarning

    return any(issubclass(w.category, UtilityWarning) for w in caught)


def _supports(est, solver):
    """Whether ``solver`` (a registry name or ``"auto"``) fits ``est``'s loss."""
    from dpestim.solvers import SOLVERS

    return solver == AUTO or est()._loss_name in SOLVERS[solver].supported_losses


def _eps_key(eps):
    return "inf" if math.isinf(eps) else float(eps)


def _key(r):
    return (*_cell(r), r["seed"])


def _cell(r):
    prep = r.get("preprocessing", LOADER)
    return (r["estimator"], r["solver"], r["dataset"], str(r["epsilon"]), prep)


def write_table(out, lines):
    """Write a small result table (markdown ``lines``) to ``out``; say so."""
    Path(out).write_text("\n".join(lines) + "\n")
    print(f"wrote {out}")


def paired_cells(plan_scores, former_scores=None, digits=4):
    """``[plan, former, change in points]`` medians, or ``same plan``.

    ``former_scores`` ``None``: the former plan is the built one (its cells
    read ``same plan`` and an empty change).
    """
    plan = float(np.median(plan_scores))
    if former_scores is None:
        return [f"{plan:.{digits}f}", "same plan", ""]
    old = float(np.median(former_scores))
    return [f"{plan:.{digits}f}", f"{old:.{digits}f}", f"{100 * (plan - old):+.2f}"]


def markdown_table(head, rows):
    """A markdown table of ``head`` and ``rows`` (lists of strings)."""
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])


def run_and_save(script, args, run, report):
    """``run(args)``, timed; write ``args.out`` ``.json`` and ``.md``.

    The JSON holds the records and ``meta`` (the command, wall and CPU
    seconds); the markdown is ``report(records, command, cpu_s)``.
    """
    t0, c0 = time.time(), time.process_time()
    records = run(args)
    command = f"python benchmarks/utility/{script} " + " ".join(sys.argv[1:])
    cpu_s = time.process_time() - c0
    out = Path(args.out)
    meta = dict(command=command, wall_s=time.time() - t0, cpu_s=cpu_s)
    out.with_suffix(".json").write_text(json.dumps(dict(meta=meta, records=records)))
    out.with_suffix(".md").write_text(report(records, command, cpu_s))
    print("wrote", out.with_suffix(".md"))


def run_and_save_stamped(script, args, run, report):
    """:func:`run_and_save` with ``report(records, command, cpu_s, commit)``.

    ``commit``: ``args.commit`` (a ``git archive`` snapshot's stamp) or the
    checkout's (:func:`_commit`).
    """
    commit = args.commit or _commit()
    run_and_save(
        script,
        args,
        run,
        lambda records, command, cpu_s: report(records, command, cpu_s, commit),
    )


def result_parser(doc, out_name, seeds=3):
    """The argument parser of a small result-table script.

    ``--seeds`` (default ``seeds``), ``--commit`` (the stamp of a
    ``git archive`` snapshot run) and ``--out`` (default
    ``RESULTS / out_name``); the description is ``doc``'s first line.
    """
    p = argparse.ArgumentParser(description=doc.split("\n")[0])
    p.add_argument("--seeds", type=int, default=seeds)
    p.add_argument("--commit", default=None, help="stamp (a git-archive snapshot)")
    p.add_argument("--out", default=str(RESULTS / out_name))
    return p


def _commit():
    """Short hash of the checkout's HEAD, ``+dirty`` if ``dpestim/`` differs.

    ``--commit`` overrides it (a run from an exported snapshot of a commit).
    """
    import subprocess

    root = Path(__file__).resolve().parents[2]

    def git(*args):
        return subprocess.run(
            ["git", *args], cwd=root, capture_output=True, text=True, check=True
        ).stdout.strip()

    try:
        head = git("rev-parse", "--short=9", "HEAD")
        dirty = git("status", "--porcelain", "dpestim")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+dirty" if dirty else "")


def _save(meta, records):
    RESULTS.mkdir(exist_ok=True)
    tmp = OUT.with_suffix(".json.tmp")
    tmp.write_text(json.dumps({"meta": meta, "records": records}, indent=0))
    os.replace(tmp, OUT)


def merge(paths):
    """Merge other result files (a parallel or later ``--out`` run) into OUT.

    Files are applied in order; a cell (estimator, solver, dataset, epsilon)
    present in a merged file replaces **all** records of that cell already
    in OUT, so that every cell holds the seeds of one run on one commit.
    ``paths`` items are ``file`` or ``file=label``; the label stamps records
    that carry no ``"commit"`` (default: the file's stem without
    ``defaults_``).
    """
    data = json.loads(OUT.read_text())
    for spec in paths:
        # "file=label": records of the file without a commit stamp (written
        # by an older copy of this script) are labelled so, default the stem
        path, _, label = spec.partition("=")
        label = label or Path(path).stem.removeprefix("defaults_")
        other = json.loads(Path(path).read_text())
        for r in other["records"]:
            r.setdefault("commit", label)
        cells = {_cell(r) for r in other["records"]}
        kept = [r for r in data["records"] if _cell(r) not in cells]
        data["records"] = kept + other["records"]
        data["meta"].setdefault("commands", []).extend(
            other["meta"].get("commands", [])
        )
        merged = data["meta"].setdefault("merged", [])
        merged[:] = [m for m in merged if m["file"] != Path(path).name]
        merged.append(
            dict(file=Path(path).name, cells=len(cells), date=other["meta"].get("date"))
        )
    data["meta"]["command"] = (
        "benchmarks/utility/defaults.py runs merged; the commit of every cell is in "
        f"benchmarks/results/{OUT.with_suffix('.md').name}"
    )
    data["meta"]["date"] = datetime.datetime.now(datetime.timezone.utc).isoformat(
        timespec="seconds"
    )
    _save(data["meta"], data["records"])
    return data["records"]


def _l1ball_score(est_name, X, y, Xt, yt):
    """dp-smd-sco's eps=inf reference: scikit-learn's optimum of its own
    l1-ball problem at its default radius and feature bound
    (``benchmarks/utility/l1ball_reference.py``); ``(accuracy, cpu seconds)``."""
    from l1ball_reference import l1ball_reference, lifted

    from dpestim.solvers import DPSMDSCO

    sco = DPSMDSCO()
    t = time.process_time()
    model, _ = l1ball_reference(est_name, X, y, sco.l1_radius, sco.feature_bound)
    score = model.score(lifted(Xt, sco.feature_bound), yt)
    return score, time.process_time() - t


def _int32_indices(X, Xt):
    """Sparse ``X``, ``Xt`` with 32-bit indices (liblinear wants them)."""
    import scipy.sparse as sp

    if not sp.issparse(X):
        return X, Xt
    X, Xt = (sp.csr_matrix(A) for A in (X, Xt))
    for A in (X, Xt):
        A.indices, A.indptr = A.indices.astype(np.int32), A.indptr.astype(np.int32)
    return X, Xt


def _sklearn_score(est_name, alpha, X, y, Xt, yt):
    """``(test score, CPU s)`` of scikit-learn on the objective with ``alpha``."""
    X, Xt = _int32_indices(X, Xt)
    t = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = _sklearn(est_name, X.shape[0], alpha).fit(X, y)
    return float(ref.score(Xt, yt)), time.process_time() - t


def _objective_reference(est, solver, data, cache):
    """``{alpha, reference}`` of an ``epsilon=inf`` fit: the test score of the
    optimum of the problem it solved, one fit per distinct problem
    (``cache``). scikit-learn with the fit's ``alpha_`` (``alpha="auto"`` is
    ``1e-4 s^2`` with the row scale ``s`` read at ``epsilon=inf``); for a
    solver with its own problem (:data:`OWN_REFERENCE`, dp-smd-sco's l1
    ball) that problem on the rows ``x / s`` it ran on."""
    X, y, Xt, yt = data[:4]
    name = type(est).__name__
    if solver in OWN_REFERENCE:
        s = float(est.feature_scale_)
        key = (name, solver, s)
        if key not in cache:
            cache[key] = _l1ball_score(name, X / s, y, Xt / s, yt)[0]
        return dict(feature_scale=s, reference=cache[key])
    key = (name, float(est.alpha_))
    if key not in cache:
        cache[key] = _sklearn_score(*key, X, y, Xt, yt)[0]
    return dict(alpha=key[1], reference=cache[key])


def _baselines(est_name, dataset, X, y, Xt, yt, metric, commit, l1ball, prep):
    from sklearn.metrics import r2_score

    out = [("sklearn", *_sklearn_score(est_name, 1e-4, X, y, Xt, yt))]
    if metric == "accuracy" and l1ball:
        out.append(("sklearn-l1ball", *_l1ball_score(est_name, X, y, Xt, yt)))
    if metric == "accuracy":
        values, counts = np.unique(y, return_counts=True)
        out.append(("majority", float(np.mean(yt == values[np.argmax(counts)])), 0.0))
    else:
        out.append(("constant", float(r2_score(yt, np.full(len(yt), y.mean()))), 0.0))
    return [
        dict(
            estimator=est_name,
            solver=s,
            dataset=dataset,
            preprocessing=prep,
            epsilon="inf",
            seed=0,
            metric=metric,
            score=float(score),
            fit_cpu_s=float(cpu),
            commit=commit,
        )
        for s, score, cpu in out
    ]


def run(args):
    old = json.loads(OUT.read_text()) if OUT.exists() else {"meta": {}, "records": []}
    records = old["records"]
    done = {_key(r) for r in records}
    command = " ".join(["python", "benchmarks/utility/defaults.py", *sys.argv[1:]])
    commit = args.commit or _commit()
    meta = dict(
        command=command,
        commit=commit,
        commands=[*old["meta"].get("commands", []), command],
        date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        seeds=list(range(args.seeds)),
        delta=1e-5,
        mnist_train=args.mnist_train,
        preprocessing=args.preprocessing,
        note="defaults only; see the module docstring for data preparation",
    )
    solvers = args.solvers or [s for fam in FAMILIES.values() for s in fam]
    for dataset in args.datasets:
        try:
            loaded = load(dataset, args.mnist_train)
        except Exception as exc:  # missing data: skip the dataset, say so
            print(f"skip {dataset}: {exc}", flush=True)
            continue
        for prep in args.preprocessing:
            data = apply(prep, dataset, *loaded)
            if data is not None:  # None: raw-target on a classification set
                ctx = (meta, records, done, commit)
                _run_features(args, dataset, prep, data, solvers, ctx)
    return records


def _run_features(args, dataset, prep, data, solvers, ctx):
    """Every (estimator, solver, epsilon, seed) on one dataset's features."""
    meta, records, done, commit = ctx
    X, y, Xt, yt, extra = data
    metric = "r2" if dataset in REGRESSION else "accuracy"
    classes = None if metric == "r2" else np.unique(np.concatenate([y, yt]))
    references = {}  # (estimator, alpha_) -> scikit-learn on that objective
    for est_name, Est in _estimators(dataset).items():
        if args.estimators and est_name not in args.estimators:
            continue
        l1ball = "dp-smd-sco" in solvers and metric == "accuracy"
        if (est_name, "sklearn", dataset, "inf", prep, 0) not in done or (
            l1ball and (est_name, "sklearn-l1ball", dataset, "inf", prep, 0) not in done
        ):
            new = _baselines(
                est_name, dataset, X, y, Xt, yt, metric, commit, l1ball, prep
            )
            new = [r for r in new if _key(r) not in done]
            records += new
            done |= {_key(r) for r in new}
            _save(meta, records)
        for solver in solvers:
            if not _supports(Est, solver):
                continue
            t0 = time.time()
            added = 0
            for eps in args.epsilons:
                # full-batch solvers draw no random numbers without noise:
                # their epsilon=inf fit is the same for every seed, so it
                # is run (and recorded) once
                # (dp-smd-sco's eps=inf default is its exact FISTA solve)
                deterministic = math.isinf(eps) and solver in DETERMINISTIC_INF
                for seed in range(1 if deterministic else args.seeds):
                    rec = dict(
                        estimator=est_name,
                        solver=solver,
                        dataset=dataset,
                        preprocessing=prep,
                        epsilon=_eps_key(eps),
                        seed=seed,
                        metric=metric,
                    )
                    if _key(rec) in done:
                        continue
                    kw = dict(extra)
                    if classes is not None:
                        kw["classes"] = classes
                    est = Est(solver=solver, epsilon=eps, random_state=seed, **kw)
                    t = time.process_time()
                    with warnings.catch_warnings(record=True) as caught:
                        warnings.simplefilter("always")
                        try:
                            est.fit(X, y)
                            score = float(est.score(Xt, yt))
                        except ValueError as exc:  # e.g. a diverged fit
                            print(f"  {solver} {eps} {seed}: {exc}", flush=True)
                            score = float("nan")
                    rec.update(
                        score=score,
                        utility_warning=_utility_warned(caught),
                        fit_cpu_s=time.process_time() - t,
                        commit=commit,
                    )
                    if getattr(est, "lift_", None) is not None:
                        rec["lift"] = est.lift_
                    if solver == AUTO and hasattr(est, "solver_"):
                        rec["picked"] = est.solver_.name
                    if math.isinf(eps) and np.isfinite(score):
                        rec.update(_objective_reference(est, solver, data, references))
                    records.append(rec)
                    done.add(_key(rec))
                    added += 1
            if added:
                _save(meta, records)
                print(
                    f"{est_name:18s} {dataset:13s} {prep:10s} {solver:12s} "
                    f"{added:3d} fits {time.time() - t0:6.1f}s wall",
                    flush=True,
                )


def _matrix():
    """Every (estimator, dataset, solver) cell of the full matrix, in order."""
    order = ("LogisticRegression", "LinearSVC", "Ridge")
    return [
        (est_name, d, s)
        for est_name in order
        for d in CLASSIFICATION + REGRESSION
        if est_name in _estimators(d)
        for fam in FAMILIES.values()
        for s in fam
        if _supports(_estimators(d)[est_name], s)
    ]


def plot(records):
    """One PNG per estimator: a panel per dataset, solvers grouped by family.

    Filled markers: cells measured on a stamped commit; hollow: first-session
    records (``s1``, not rerun); a triangle on a panel's floor: a median
    below its scale; a grey "x" on the floor: a cell not run.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    med = medians(records)
    legacy = defaultdict(set)
    for r in records:
        legacy[(r["estimator"], r["dataset"], r["solver"], str(r["epsilon"]))].add(
            "commit" not in r
        )
    eps_labels = ["0.1", "0.5", "1.0", "2.0", "inf"]
    colours = plt.cm.viridis(np.linspace(0.0, 0.9, len(eps_labels)))
    matrix = _matrix()
    for est in sorted({r["estimator"] for r in records}):
        dsets = [
            d for d in CLASSIFICATION + REGRESSION if (est, d, "sklearn", "inf") in med
        ]
        if not dsets:
            continue
        order = [s for fam in FAMILIES.values() for s in fam]
        solvers = [s for s in order if any((est, d, s) in matrix for d in dsets)]
        ncol = 2
        nrow = math.ceil(len(dsets) / ncol)
        fig, axes = plt.subplots(
            nrow,
            ncol,
            figsize=(13, 3.1 * nrow + 1.2),
            squeeze=False,
            sharex=True,
            layout="constrained",
        )
        for ax, d in zip(axes.flat, dsets):
            sk = med[(est, d, "sklearn", "inf")]
            base_name = "constant" if est == "Ridge" else "majority"
            base = med.get((est, d, base_name, "inf"), np.nan)
            lo = min(base, sk) - 0.1 if est != "Ridge" else -0.3
            top = [v for (e_, d_, _, _), v in med.items() if (e_, d_) == (est, d)]
            hi = max(sk, base, *(v for v in top if np.isfinite(v))) + 0.03
            ax.set_ylim(lo, hi)
            floor = lo + 0.015 * (hi - lo)
            for i, s in enumerate(solvers):
                for j, e in enumerate(eps_labels):
                    xi = i + (j - 2) * 0.14
                    key = (est, d, s, e)
                    v = med.get(key)
                    if v is None or np.isnan(v):
                        ax.scatter(xi, floor, s=14, marker="x", color="0.6", lw=0.8)
                        continue
                    old = legacy[key] == {True}
                    ax.scatter(
                        xi,
                        max(v, floor),
                        s=18,
                        marker="v" if v < lo else "o",
                        facecolors="none" if old else colours[j],
                        edgecolors=colours[j],
                        linewidths=1.0,
                    )
            ax.axhline(sk, color="k", lw=1)
            ax.axhline(base, color="r", lw=1, ls="--")
            start = 0
            for members in FAMILIES.values():
                k = sum(s in solvers for s in members)
                if k and start:
                    ax.axvline(start - 0.5, color="0.75", lw=0.8)
                start += k
            ax.set_title(d, fontsize=10)
            ax.set_ylabel("R^2" if est == "Ridge" else "accuracy", fontsize=8)
            ax.tick_params(labelsize=7)
            ax.grid(axis="y", alpha=0.3)
        for ax in axes.flat[len(dsets) :]:
            ax.set_visible(False)
        for ax in axes.flat:
            ax.set_xticks(np.arange(len(solvers)))
            ax.set_xticklabels(solvers, rotation=60, ha="right", fontsize=7)
            ax.tick_params(labelbottom=True)
        handles = [
            Line2D([], [], ls="", marker="o", color=c, label=f"eps={e}")
            for e, c in zip(eps_labels, colours)
        ]
        handles += [
            Line2D([], [], color="k", lw=1, label="scikit-learn"),
            Line2D(
                [],
                [],
                color="r",
                lw=1,
                ls="--",
                label="constant" if est == "Ridge" else "majority",
            ),
            Line2D(
                [],
                [],
                ls="",
                marker="o",
                mfc="none",
                color="0.3",
                label=f"hollow: {LEGACY} (first session)",
            ),
            Line2D([], [], ls="", marker="v", color="0.3", label="below the scale"),
            Line2D([], [], ls="", marker="x", color="0.6", label="not run"),
        ]
        fig.suptitle(
            f"{est} at its defaults: median test score over seeds.  Families, left "
            "to right: "
            + " | ".join(f for f in FAMILIES if any(s in solvers for s in FAMILIES[f])),
            fontsize=9,
        )
        fig.legend(handles=handles, loc="outside lower center", ncol=6, fontsize=8)
        path = RESULTS / f"defaults_{est}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        print("wrote", path)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--datasets", nargs="+", default=DEFAULT_ORDER)
    p.add_argument("--estimators", nargs="+", default=None)
    p.add_argument("--solvers", nargs="+", default=None)
    p.add_argument("--epsilons", nargs="+", type=float, default=EPSILONS)
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--mnist-train", type=int, default=10_000)
    p.add_argument("--plot-only", action="store_true", help="no fits")
    p.add_argument("--out", default=None, help="write here (default defaults.json)")
    p.add_argument(
        "--merge",
        nargs="+",
        default=None,
        help="merge these files (file or file=label; see merge())",
    )
    p.add_argument("--commit", default=None, help="stamp records with this label")
    p.add_argument(
        "--preprocessing",
        nargs="+",
        choices=[*PREPROCESSINGS, "all"],
        default=[LOADER],
        help="features as a user may have prepared them (user_transforms.py); "
        "besides 'loader', writes defaults_preprocessing.json / .md",
    )
    args = p.parse_args()
    if "all" in args.preprocessing:
        args.preprocessing = list(PREPROCESSINGS)
    axis = args.preprocessing != [LOADER]
    global OUT
    if args.out or axis:
        OUT = Path(args.out or OUT_PREPROCESSING).resolve()
    if axis and OUT.name == "defaults.json":
        p.error("--preprocessing other than 'loader' never writes defaults.json")
    if args.merge:
        records = merge(args.merge)
    elif args.plot_only:
        records = json.loads(OUT.read_text())["records"]
    else:
        records = run(args)
    if axis:  # the preprocessing axis's report only (no plots, no defaults.md)
        import preprocessing_report

        meta = json.loads(OUT.read_text()).get("meta", {})
        OUT.with_suffix(".md").write_text(preprocessing_report.report(records, meta))
        print(f"wrote {OUT.with_suffix('.md')}")
        return
    if args.out:
        return
    plot(records)
    meta = json.loads(OUT.read_text()).get("meta", {})
    text, misses = summary(
        records, _matrix(), FAMILIES, CLASSIFICATION + REGRESSION, meta
    )
    (RESULTS / "defaults.md").write_text(text)
    print(f"wrote {RESULTS / 'defaults.md'} ({len(misses)} cells miss a target)")


if __name__ == "__main__":
    main()
