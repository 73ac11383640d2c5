"""dp-sgd's settling steps for ``Ridge``: against constant steps, held out.

Every cell fits ``Ridge`` at its defaults twice with the same seeds: as the
library does (a private squared-loss run with ``learning_rate="auto"`` takes
:func:`dpestim.solvers.sgd.dp_sgd.settling_rates`: level for half the steps,
then a linear decay, the same total travel) and with the former constant
steps (the same plan: ``learning_rate`` set to the value the default
resolved to, which keeps the steps constant and changes nothing else).
Test R^2, median over the seeds, at epsilon 0.1 / 0.5 / 1 / 2.

Splits (chosen before any held-out cell was seen):

- **derive** (the settling shape was chosen on them, among four public
  shapes): the user trial's age-like column beside four features of order
  one, a synthetic regression with a year column, California's median
  income from the loader's other columns, California (``fit_centring``'s
  tasks);
- **held out**: raw loader columns predicted from the others, never used
  before: California's latitude (the longitude an offset of -119) and house
  age, Adult's years of education (its ``education=`` columns removed),
  COMPAS's age;
- **matrix**: the defaults matrix's regression sets (California, diabetes)
  under every preprocessing of its axis (``user_transforms``), at
  ``solver="auto"`` and ``solver="dp-sgd"``; the gate that keeps a
  noise-damped plan's constant steps was set here (diabetes at epsilon 0.1).

    PYTHONPATH=. python benchmarks/utility/ridge_settling.py [--seeds 3] \\
        [--commit C] [--out FILE]
"""

import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from defaults import load, markdown_table, result_parser, run_and_save_stamped  # noqa: E402
from fit_centring import age_like  # noqa: E402
from fit_centring import tasks as centring_tasks  # noqa: E402
from private_centring import _split  # noqa: E402
from user_transforms import PREPROCESSINGS, apply  # noqa: E402

EPSILONS = (0.1, 0.5, 1.0, 2.0)
DERIVE = ("california", "california income", "synthetic + year")
#: Held-out tasks: (loader, column predicted from the others, columns dropped).
HELDOUT = {
    "california latitude": ("load_california_housing", "latitude", None),
    "california house age": ("load_california_housing", "housing_median_age", None),
    "adult education years": ("load_adult", "education-num", "education="),
    "compas age": ("load_compas", "age", None),
}


def age_task():
    """The user trial's age-like column (mean 40, sd 13) beside four features."""
    X, y = age_like()
    return X[:9000], y[:9000], X[9000:], y[9000:]


def column_task(loader, column, drop_prefix):
    from dpestim import datasets

    bunch = getattr(datasets, loader)()
    X = np.asarray(bunch.data, dtype=np.float64)
    names = list(bunch.feature_names)
    j = names.index(column)
    keep = [
        i
        for i, name in enumerate(names)
        if i != j and not (drop_prefix and name.startswith(drop_prefix))
    ]
    Xa, Xb, ya, yb = _split(X[:, keep], X[:, j])
    return Xa, ya, Xb, yb


def tasks():
    """``(split, task, solver, X, y, X_test, y_test, fit keywords)``."""
    yield ("derive", "age-like column", "auto", *age_task(), {})
    for name, kind, X, y, Xt, yt in centring_tasks():
        if kind == "reg" and name in DERIVE:
            yield "derive", name, "auto", X, y, Xt, yt, {}
    for name, spec in HELDOUT.items():
        yield ("held out", name, "auto", *column_task(*spec), {})
    for dataset in ("california", "diabetes"):
        loaded = load(dataset)
        for prep in PREPROCESSINGS:
            out = apply(prep, dataset, *loaded)
            if out is None:
                continue
            X, y, Xt, yt, extra = out
            for solver in ("auto", "dp-sgd"):
                yield "matrix", f"{dataset} {prep}", solver, X, y, Xt, yt, extra


def run(args):
    from dpestim import Ridge

    records = []
    for split, task, solver, X, y, Xt, yt, extra in tasks():
        for eps in EPSILONS:
            for seed in range(args.seeds):
                kw = dict(epsilon=eps, random_state=seed, solver=solver, **extra)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    model = Ridge(**kw).fit(X, y)
                    settled = model.score(Xt, yt)
                    hp = model.hyperparameters_
                    constant = (
                        Ridge(learning_rate=hp["learning_rate"], **kw)
                        .fit(X, y)
                        .score(Xt, yt)
                        if "step schedule" in hp
                        else settled
                    )
                records.append(
                    dict(
                        split=split,
                        task=task,
                        solver=solver,
                        epsilon=eps,
                        seed=seed,
                        settling=float(settled),
                        constant=float(constant),
                        ran="step schedule" in hp,
                    )
                )
            print(split, task, solver, eps, "done", flush=True)
    return records


def report(records, command, cpu_s, commit="?"):
    cells = {}
    for r in records:
        key = (r["split"], r["task"], r["solver"], r["epsilon"])
        cell = cells.setdefault(key, {"settling": [], "constant": [], "ran": []})
        for k in cell:
            cell[k].append(r[k])
    rows, gains = [], {}
    order = {"derive": 0, "held out": 1, "matrix": 2}
    for (split, task, solver, eps), m in sorted(
        cells.items(), key=lambda kv: (order[kv[0][0]], *kv[0][1:])
    ):
        new, old = float(np.median(m["settling"])), float(np.median(m["constant"]))
        ran = sum(m["ran"])
        if ran:
            gains.setdefault(split, []).append(new - old)
        rows.append(
            [
                split,
                task,
                solver,
                f"{eps:g}",
                f"{old:.3f}",
                f"{new:.3f}",
                f"{new - old:+.3f}" if ran else "(constant)",
                f"{ran}/{len(m['ran'])}",
            ]
        )
    summary = "".join(
        f"- {split}: {len(g)} cells where the steps settle, median change "
        f"{np.median(g):+.3f}, better by > 0.005 in {sum(x > 0.005 for x in g)}, "
        f"worse by > 0.005 in {sum(x < -0.005 for x in g)} (worst {min(g):+.3f}, "
        f"best {max(g):+.3f})\n"
        for split, g in sorted(gains.items(), key=lambda kv: order[kv[0]])
    )
    return (
        "# dp-sgd's settling steps for `Ridge`\n\n"
        f"Command: `{command}` (code {commit}; {cpu_s:.0f} CPU s). Defaults, test "
        "R^2, median over the seeds, with constant steps (the former rule) and "
        'the settling steps (the library\'s). "settles": fits whose plan took '
        "them (a noise-damped plan, a non-private one and the other solvers "
        "keep constant steps: the two fits are then one). See the script's "
        "docstring.\n\n"
        + summary
        + "\n"
        + markdown_table(
            [
                "split",
                "task",
                "solver",
                "eps",
                "constant",
                "settling",
                "change",
                "settles",
            ],
            rows,
        )  # fmt: skip
        + "\n"
    )


def main():
    p = result_parser(__doc__, "ridge_settling.md", seeds=3)
    args = p.parse_args()
    run_and_save_stamped("ridge_settling.py", args, run, report)


if __name__ == "__main__":
    main()
