"""``"auto"``'s adp-sgd row for ``Ridge`` (n <= 3,000, epsilon >= 1), checked
on held-out regression tasks and at larger n (issue 26).

The row was derived on diabetes, California subsamples and regression tasks
built from Adult and Bank (``public_target_bound_family.md``). This fits
``Ridge`` at its defaults with ``solver="dp-sgd"`` and ``"adp-sgd"`` (same
rows and seeds, epsilon 1 and 2, median of 3 seeds) at 3,000 / 4,500 / 7,000 /
12,000 rows on those tasks and on tasks the row never saw (California's
median income, Adult's years of education, Bank's balance; the held-out tasks
of ``final_intercept.py``), test R^2.

    PYTHONPATH=. python benchmarks/utility/adp_sgd_heldout.py [--seeds 3] \\
        [--commit C] [--out FILE]
"""

import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from defaults import (  # noqa: E402
    load,
    markdown_table,
    result_parser,
    run_and_save_stamped,
)
from final_intercept import HELD_OUT, _split  # noqa: E402
from public_target_bound import EXTRA_TASKS, TASKS, _task  # noqa: E402

SIZES = (3000, 4500, 7000, 12000)
EPSILONS = (1.0, 2.0)
DERIVED = ("california", "adult-age", "adult-hours", "bank-age")
CHECKED = ("compas-age", "compas-priors")  # the former held-out split
NEW = ("california-income", "adult-education", "bank-balance")


def tasks():
    """``(split, name, X, y, X_test, y_test)``."""
    X, y, Xt, yt, _ = load("california")
    yield "derive", "california", X, y, Xt, yt
    for split, names in (("derive", DERIVED[1:]), ("check", CHECKED), ("new", NEW)):
        for name in names:
            X, y, _ = _task(*{**TASKS, **EXTRA_TASKS, **HELD_OUT}[name])
            yield (split, name, *_split(X, y, None)[:4])


def run(args):
    from dpestim import Ridge

    records = []
    for split, name, X, y, Xt, yt in tasks():
        for size in SIZES:
            if size > len(y):
                continue
            for eps in EPSILONS:
                for seed in range(args.seeds):
                    rows = np.random.default_rng(seed).choice(
                        len(y), size, replace=False
                    )
                    for solver in ("dp-sgd", "adp-sgd"):
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            m = Ridge(epsilon=eps, solver=solver, random_state=seed)
                            m.fit(X[rows], y[rows])
                        records.append(
                            dict(
                                split=split,
                                task=name,
                                n=size,
                                epsilon=eps,
                                seed=seed,
                                solver=solver,
                                r2=float(m.score(Xt, yt)),
                            )
                        )
        print(split, name, "done", flush=True)
    return records


def report(records, command, cpu_s, commit="?"):
    cells = {}
    for r in records:
        key = (r["split"], r["task"], r["n"], r["epsilon"])
        cells.setdefault(key, {}).setdefault(r["solver"], []).append(r["r2"])
    head = ["split", "task", "n", "eps", "dp-sgd", "adp-sgd", "adp-sgd - dp-sgd"]
    rows = []
    for (split, task, n, eps), by in cells.items():
        a, b = np.median(by["dp-sgd"]), np.median(by["adp-sgd"])
        rows.append(
            [split, task, str(n), f"{eps:g}", f"{a:.3f}", f"{b:.3f}", f"{b - a:+.3f}"]
        )
    return (
        '# `"auto"`\'s adp-sgd row for `Ridge`, held out and at larger n\n\n'
        f"Command: `{command}` (code {commit}; {cpu_s:.0f} CPU s). `Ridge` at its "
        "defaults with the named solver, test R^2, median over the seeds (same "
        "rows and seeds for both). `derive`: the tasks the row was derived on; "
        "`check`: its former held-out split; `new`: tasks it never saw.\n\n"
        + markdown_table(head, rows)
        + "\n"
    )


def main():
    p = result_parser(__doc__, "adp_sgd_heldout.md", seeds=3)
    args = p.parse_args()
    run_and_save_stamped("adp_sgd_heldout.py", args, run, report)


if __name__ == "__main__":
    main()
