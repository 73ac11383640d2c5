"""Noise calibration cost per Gaussian solver: new search vs the previous one.

For every solver whose mechanism is Gaussian (the accelerated family with
``noise="gaussian"``), on the public plan of an Adult fit (n = 32,561,
d = 123, estimator defaults: 10 epochs, batch 256, epsilon = 1,
delta = 1e-5), this measures the CPU and wall time of

* ``baseline``: the previous calibration (doubling bracket, then
  ``dp_accounting.calibrate_dp_mechanism`` with fresh full accountants, then
  the verification loop), reproduced below from the previous
  ``dpestim/privacy/accounting.py``;
* ``fresh``: :func:`dpestim.privacy.calibrate_noise` with every in-process
  cache emptied and the disk cache disabled;
* ``disk``: the same with the in-process caches emptied but the disk cache
  filled (what a second script or a joblib worker pays);
* ``floor``: one evaluation of the calibrated event by a fresh full
  ``dp_accounting`` accountant (all default orders), the verification that
  every fresh calibration includes.

The three variants alternate (A B C A B C ...) so that background load hits
them alike; medians are reported. Both noises are checked against the full
``dp_accounting`` accountant, and the new one must not exceed the baseline's.
PLD rows (dp-sgd and the issue-13 case adp-sgd with batch_size=1) time only
the new search (the baseline ran for minutes on the latter).

Usage::

    PYTHONPATH=. python benchmarks/speed/calibration.py [--repeats 3] [--solvers ...]

Writes ``benchmarks/results/bench_calibration.{json,md}`` (with ``--solvers``,
``bench_calibration_subset.{json,md}``).

``--pld-small`` measures instead the PLD calibration CPU of small fits (issue
24: the two fits that took minutes, and dp-sgd / adp-sgd fits of 10 to 10^4
steps at epsilon 0.1 to 50) and checks each released event with a fresh PLD
accountant at dp-accounting's default interval 1e-4 (``epsilon <= target``);
writes ``bench_calibration_pld_small.{json,md}``.
"""

import argparse
import json
import math
import os
import statistics
import tempfile
import time
from pathlib import Path

import dp_accounting

from dpestim.privacy import accounting, set_calibration_cache
from dpestim.solvers import SOLVERS, ERMPlan
from dpestim.solvers.oneshot._base import OneShotSolver

RESULTS = Path(
    os.environ.get("DPESTIM_BENCH_RESULTS")
    or Path(__file__).resolve().parents[2] / "benchmarks" / "results"
)
GAUSSIAN_PARAMS = {"noise": "gaussian"}


def baseline_calibrate(make_event, epsilon, delta, accountant, neighbouring, rtol=1e-4):
    """The previous ``calibrate_noise`` (no caches), for the same-run baseline."""

    def eps_of(s):
        return accounting.compute_epsilon(
            make_event(s), delta, accountant, neighbouring
        )

    hi = 1.0
    while eps_of(hi) > epsilon:
        hi *= 2.0
    lo = hi / 2.0
    while lo > 1e-8 and eps_of(lo) <= epsilon:
        hi, lo = lo, lo / 2.0
    noise = dp_accounting.calibrate_dp_mechanism(
        lambda: accounting.make_accountant(accountant, neighbouring),
        make_event,
        epsilon,
        delta,
        dp_accounting.ExplicitBracketInterval(lo, hi),
        tol=rtol * lo,
    )
    noise = min(float(noise), hi)
    step = rtol * noise
    while eps_of(noise) > epsilon:
        noise += step
        step *= 2.0
    return noise


def _forget():
    for cache in (
        accounting._calibration_cache,
        accounting._epsilon_cache,
        accounting._order_cache,
    ):
        cache.clear()


def _timed(fn):
    _forget()
    c, w = time.process_time(), time.perf_counter()
    out = fn()
    return out, time.process_time() - c, time.perf_counter() - w


def _solver(name):
    cls = SOLVERS[name]
    solver = cls()
    if "noise" in solver.get_params() and solver.privacy_notion != "approx":
        solver = cls(**GAUSSIAN_PARAMS)
    return solver


def _plan(batch_size=256):
    return ERMPlan(
        n_samples=32561,
        n_features=123,
        n_outputs=1,
        loss=0,
        alpha=1e-4,
        fit_intercept=True,
        clip_norm=1.0,
        max_iter=10,
        batch_size=batch_size,
        learning_rate=0.5,
    )


def run(repeats, cache_dir, only=None):
    eps, delta = 1.0, 1e-5
    rows = []
    names = [
        n
        for n in SOLVERS
        if _solver(n).privacy_notion == "approx"
        and _solver(n).problem == "erm"
        and n != "dp-smd-sco"
        # one-shot solvers (AdaSSP, objective perturbation) have no step
        # count to calibrate: their noise is a closed form
        and not isinstance(_solver(n), OneShotSolver)
    ]
    cases = [(n, "rdp", 256, True) for n in names]
    # adp-sgd refuses PLD calibration from 100 steps on (issue 24): dp-sgd only
    cases += [("dp-sgd", "pld", 256, False)]
    if only:
        cases = [c for c in cases if c[0] in only and c[1] == "rdp"]
    for name, acc_name, batch, with_baseline in cases:
        solver, plan = _solver(name), _plan(batch)
        nb = solver.neighbouring

        def new(solver=solver, plan=plan, acc_name=acc_name):
            return solver.calibrate(eps, delta, plan, accountant=acc_name)

        def base(solver=solver, plan=plan, acc_name=acc_name, nb=nb):
            return baseline_calibrate(
                lambda s: solver.make_event(s, plan), eps, delta, acc_name, nb
            )

        times = {"baseline": [], "fresh": [], "disk": []}
        noises = {}
        reps = repeats if acc_name == "rdp" else 1
        for _ in range(reps):
            if with_baseline:
                noises["baseline"], c, w = _timed(base)
                times["baseline"].append((c, w))
            set_calibration_cache(False)
            noises["fresh"], c, w = _timed(new)
            times["fresh"].append((c, w))
            set_calibration_cache(True, cache_dir)
            _forget()
            new()  # fill the disk entry (a hit after the first repeat)
            noises["disk"], c, w = _timed(new)
            times["disk"].append((c, w))
        full = accounting.make_accountant(acc_name, nb)
        full_eps = full.compose(solver.make_event(noises["fresh"], plan)).get_epsilon(
            delta
        )
        # The floor: one evaluation of the exact event by a fresh full
        # accountant, which every fresh calibration performs (verification).
        floor = []
        for _ in range(reps):
            c = time.process_time()
            acc = accounting.make_accountant(acc_name, nb)
            acc.compose(solver.make_event(noises["fresh"], plan)).get_epsilon(delta)
            floor.append(time.process_time() - c)
        assert full_eps <= eps, (name, full_eps)
        assert noises["disk"] == noises["fresh"]
        if with_baseline:
            assert noises["fresh"] <= noises["baseline"] * (1 + 1e-12), name
        row = {
            "solver": name,
            "accountant": acc_name,
            "batch_size": batch,
            "noise_new": noises["fresh"],
            "noise_baseline": noises.get("baseline"),
            "epsilon_full_accountant": full_eps,
            "floor_cpu_s": statistics.median(floor),
        }
        for k, v in times.items():
            if v:
                row[f"{k}_cpu_s"] = statistics.median(c for c, _ in v)
                row[f"{k}_wall_s"] = statistics.median(w for _, w in v)
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def _fmt(x):
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.3f}"


def markdown(rows, command):
    lines = [
        f"Command: `{command}`; Adult plan (n=32561, 10 epochs, batch 256 unless "
        "stated), epsilon=1, delta=1e-5; medians; CPU s (wall s).",
        "",
        "| solver | accountant | baseline | fresh (new) | floor: one full "
        "evaluation (CPU) | disk-cached | speed-up (CPU) | noise new / baseline |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        base = r.get("baseline_cpu_s")
        ratio = base / r["fresh_cpu_s"] if base else None
        nr = r["noise_new"] / r["noise_baseline"] if r["noise_baseline"] else None
        acc = r["accountant"] + ("" if r["batch_size"] == 256 else ", batch 1")
        lines.append(
            f"| {r['solver']} | {acc} | {_fmt(base)} ({_fmt(r.get('baseline_wall_s'))})"
            f" | {_fmt(r['fresh_cpu_s'])} ({_fmt(r['fresh_wall_s'])}) | "
            f"{_fmt(r['floor_cpu_s'])} | "
            f"{_fmt(r['disk_cpu_s'])} ({_fmt(r['disk_wall_s'])}) | "
            f"{'-' if ratio is None else f'{ratio:.1f}x'} | "
            f"{'-' if nr is None else f'{nr:.6f}'} |"
        )
    return "\n".join(lines) + "\n"


# -- PLD calibration of small fits (issue 24) -------------------------------------


def _pld_cases():
    """``(label, estimator factory, n rows)``: the issue's two fits and a grid
    of dp-sgd / adp-sgd / adp-adagrad fits of 10 to 10^4 steps at epsilon 0.1
    to 50."""
    from dpestim import LinearSVC, LogisticRegression

    yield (
        "LinearSVC adp-sgd eps=50 max_iter=1 (issue)",
        lambda: LinearSVC(solver="adp-sgd", epsilon=50, max_iter=1),
        60,
    )
    yield (
        "LogisticRegression eps=0.1 delta=0.1 max_iter=1 batch=16 (issue)",
        lambda: LogisticRegression(epsilon=0.1, delta=0.1, max_iter=1, batch_size=16),
        20,
    )
    grid = {
        "dp-sgd": (10, 1000, 10000),
        "adp-sgd": (10, 100, 1000, 10000),
        "adp-adagrad": (10, 100, 1000, 10000),
    }
    for solver, all_steps in grid.items():
        for steps in all_steps:
            for eps in (0.1, 1.0, 10.0, 50.0):
                yield (
                    (
                        f"LogisticRegression {solver} {steps} steps eps={eps:g}",
                        lambda s=solver, e=eps, k=steps: LogisticRegression(
                            solver=s, epsilon=e, max_iter=k // 100, batch_size=10
                        ),
                        1000,
                    )
                    if steps >= 100
                    else (
                        f"LogisticRegression {solver} {steps} steps eps={eps:g}",
                        lambda s=solver, e=eps: LogisticRegression(
                            solver=s, epsilon=e, max_iter=1, batch_size=10
                        ),
                        100,
                    )
                )


def run_pld_small(fine_check=True):
    """CPU of PLD calibration per fit, and the fine (1e-4) accountant's check.

    Each fit runs with every calibration cache emptied and the disk cache
    off; its CPU is the CPU spent inside the solvers' ``calibrate_noise``
    (the fit itself, on at most 1000 rows, costs milliseconds and is
    reported too). ``fine_check``: the released event evaluated by a fresh
    ``dp_accounting`` PLD accountant at the default interval 1e-4 must be
    within the requested epsilon (the calibration is conservative).
    """
    import warnings

    import numpy as np
    from dp_accounting import pld

    from dpestim.solvers import _policy, base

    spent = [0.0]

    def timed(fn):
        def wrapper(*args, **kwargs):
            c = time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[0] += time.process_time() - c

        return wrapper

    base.calibrate_noise = timed(base.calibrate_noise)
    _policy.calibrate_noise = timed(_policy.calibrate_noise)
    set_calibration_cache(False)
    rows = []
    rng = np.random.default_rng(0)
    for label, make, n in _pld_cases():
        X = rng.normal(size=(n, 3))
        y = (X[:, 0] > 0).astype(int)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # feature_scale=None: the whole budget goes to the calibrated noise
            make().set_params(accountant="rdp", classes=[0, 1], feature_scale=None).fit(
                X, y
            )  # compile
            _forget()
            spent[0] = 0.0
            est = make().set_params(
                accountant="pld", classes=[0, 1], random_state=0, feature_scale=None
            )
            c = time.process_time()
            try:
                est.fit(X, y)
            except ValueError as err:  # refused up front (adp-*, >= 100 steps)
                row = {"case": label, "refused": str(err).split(":")[0]}
                rows.append(row)
                print(json.dumps(row), flush=True)
                continue
            fit_cpu = time.process_time() - c
        row = {
            "case": label,
            "n_steps": int(est.n_iter_),
            "epsilon": float(est.epsilon),
            "delta": float(est.delta),
            "calibration_cpu_s": spent[0],
            "fit_cpu_s": fit_cpu,
            "noise_multiplier": float(est.noise_multiplier_),
            "epsilon_reported": float(est.epsilon_),
        }
        assert est.epsilon_ <= est.epsilon, row
        if fine_check:
            acc = pld.PLDAccountant(
                neighboring_relation=accounting._NEIGHBOURING[est.solver_.neighbouring],
                value_discretization_interval=accounting.PLD_INTERVAL,
            )
            c = time.process_time()
            row["epsilon_fine_1e-4"] = float(
                acc.compose(est.dp_event_).get_epsilon(est.delta)
            )
            row["fine_check_cpu_s"] = time.process_time() - c
            assert row["epsilon_fine_1e-4"] <= est.epsilon, row
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def markdown_pld(rows, command):
    lines = [
        f"Command: `{command}`; every cache emptied before each fit; CPU s.",
        "",
        "| fit | steps | calibration CPU | fit CPU | noise multiplier | epsilon_ | "
        "epsilon by PLD at 1e-4 (check) | check CPU |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if "refused" in r:
            lines.append(f"| {r['case']} | refused up front: {r['refused']} |||||||")
            continue
        lines.append(
            f"| {r['case']} | {r['n_steps']} | {r['calibration_cpu_s']:.2f} | "
            f"{r['fit_cpu_s']:.2f} | {r['noise_multiplier']:.5g} | "
            f"{r['epsilon_reported']:.6g} | {r.get('epsilon_fine_1e-4', math.nan):.6g}"
            f" | {_fmt(r.get('fine_check_cpu_s'))} |"
        )
    worst = max(r["calibration_cpu_s"] for r in rows if "refused" not in r)
    lines += ["", f"Largest calibration CPU: {worst:.2f} s."]
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--pld-small",
        action="store_true",
        help="PLD calibration CPU of small fits (issue 24) instead",
    )
    parser.add_argument(
        "--solvers", nargs="*", help="only these solvers (RDP rows); default: all"
    )
    args = parser.parse_args()
    if args.pld_small:
        rows = run_pld_small()
        command = "PYTHONPATH=. python benchmarks/speed/calibration.py --pld-small"
        RESULTS.mkdir(parents=True, exist_ok=True)
        (RESULTS / "bench_calibration_pld_small.json").write_text(
            json.dumps({"command": command, "rows": rows}, indent=1)
        )
        md = markdown_pld(rows, command)
        (RESULTS / "bench_calibration_pld_small.md").write_text(md)
        print(md)
        return
    with tempfile.TemporaryDirectory() as tmp:
        rows = run(args.repeats, Path(tmp), args.solvers)
    command = (
        f"PYTHONPATH=. python benchmarks/speed/calibration.py --repeats {args.repeats}"
    )
    suffix = ""
    if args.solvers:
        command += " --solvers " + " ".join(args.solvers)
        suffix = "_subset"
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"bench_calibration{suffix}.json").write_text(
        json.dumps({"command": command, "rows": rows}, indent=1)
    )
    md = markdown(rows, command)
    (RESULTS / f"bench_calibration{suffix}.md").write_text(md)
    print(md)


if __name__ == "__main__":
    main()
