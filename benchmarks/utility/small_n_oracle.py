"""Oracle search for the Poisson family and dp-scd on small tabular data.

Not a default: a grid over ``batch_size``, ``max_iter`` (epochs) and
``learning_rate`` (``clip_norm`` at its resolved 1.0, ``alpha`` the
estimator's default), several seeds, scored on the held-out split of
``benchmarks/utility/defaults.py``. It answers "does ANY setting beat the
majority rate at this epsilon?" before a public rule is derived from it.

    PYTHONPATH=. nice -n 10 python benchmarks/utility/small_n_oracle.py \
        --dataset german --solvers dp-sgd dp-scd --epsilons 0.5 1 --seeds 3
"""

import argparse
import itertools
import json
import math
import sys
import time
import warnings
from multiprocessing import Pool
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from defaults import load  # noqa: E402

GRID = {
    "batch_size": [41, 150, 375, 750],
    "max_iter": [10, 30, 100, 300],
    "learning_rate": [0.5, 2.0, 8.0],
}

_DATA = {}


def _fit(job):
    dataset, est_name, solver, eps, seed, params = job
    import dpestim

    if dataset not in _DATA:
        _DATA[dataset] = load(dataset)
    X, y, Xt, yt, extra = _DATA[dataset]
    Est = getattr(dpestim, est_name)
    kw = dict(extra)
    if est_name != "Ridge":
        kw["classes"] = np.unique(np.concatenate([y, yt]))
    est = Est(solver=solver, epsilon=eps, random_state=seed, **params, **kw)
    t = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            est.fit(X, y)
            score = float(est.score(Xt, yt))
            pred = est.predict(Xt)
            vals, counts = np.unique(pred, return_counts=True)
            top = float(counts.max() / len(pred))
        except ValueError as exc:
            return dict(job=job, score=math.nan, err=str(exc)[:80])
    return dict(
        job=job,
        score=score,
        top=top,
        cpu=time.process_time() - t,
        hp={k: v for k, v in est.hyperparameters_.items() if k != "coef_bound"},
    )


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--dataset", default="german")
    p.add_argument("--estimator", default="LogisticRegression")
    p.add_argument("--solvers", nargs="+", default=["dp-sgd"])
    p.add_argument("--epsilons", nargs="+", type=float, default=[0.5, 1.0])
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--batch", nargs="+", type=int, default=GRID["batch_size"])
    p.add_argument("--epochs", nargs="+", type=int, default=GRID["max_iter"])
    p.add_argument("--lr", nargs="+", type=float, default=GRID["learning_rate"])
    p.add_argument("--max-steps", type=int, default=2000)
    p.add_argument("--auto", action="store_true", help="also the defaults")
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--out", default=None)
    a = p.parse_args(argv)
    n = load(a.dataset)[0].shape[0]
    jobs = []
    for solver, eps in itertools.product(a.solvers, a.epsilons):
        lrs = [None] if solver in ("dp-scd",) else a.lr
        combos = [dict()] if a.auto else []
        for B, E, lr in itertools.product(a.batch, a.epochs, lrs):
            if math.ceil(E * n / min(B, n)) > a.max_steps:
                continue
            c = dict(batch_size=B, max_iter=E)
            if lr is not None:
                c["learning_rate"] = lr
            combos.append(c)
        for c in combos:
            for s in range(a.seeds):
                jobs.append((a.dataset, a.estimator, solver, eps, s, c))
    t0 = time.time()
    with Pool(a.workers) as pool:
        res = pool.map(_fit, jobs, chunksize=1)
    cells = {}
    for r in res:
        d, est, solver, eps, s, c = r["job"]
        cells.setdefault((solver, eps, json.dumps(c, sort_keys=True)), []).append(r)
    rows = []
    for (solver, eps, c), rs in sorted(cells.items(), key=lambda kv: kv[0][:2]):
        sc = [r["score"] for r in rs]
        tops = [r.get("top", math.nan) for r in rs]
        rows.append(
            dict(
                solver=solver,
                eps=eps,
                params=json.loads(c),
                median=float(np.median(sc)),
                scores=sc,
                top=float(np.median(tops)),
                hp=rs[0].get("hp"),
            )
        )
    for solver, eps in itertools.product(a.solvers, a.epsilons):
        sel = sorted(
            [r for r in rows if r["solver"] == solver and r["eps"] == eps],
            key=lambda r: -r["median"],
        )
        print(f"== {a.estimator} {a.dataset} {solver} eps={eps}")
        for r in sel[:12]:
            print(
                f"  {r['median']:.4f} {[round(x, 3) for x in r['scores']]} "
                f"top={r['top']:.2f} {r['params']} hp={r['hp']}"
            )
    print(f"{len(jobs)} fits, {time.time() - t0:.0f} s wall", flush=True)
    if a.out:
        Path(a.out).write_text(json.dumps(rows, indent=0))


if __name__ == "__main__":
    main()
