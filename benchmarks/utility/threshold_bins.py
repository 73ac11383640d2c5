"""``PrivateThresholdOptimizer``'s number of score bins: 50 against the rule.

A user trial (2026-11-28) found the post-processor at its former default of
50 bins worse than its base model on small data (German credit by sex,
base ``LogisticRegression(epsilon=0.8)``, histogram epsilon 0.2: accuracy
0.747 -> 0.577). Every count of the histogram gets the same Gaussian noise
whatever the number of bins, so more bins only shrink each cell against it.
The rule of ``n_bins="auto"`` (``clip(round(sqrt(n / (G s))), 2, 10)``, ``s``
the noise standard deviation of a count) was derived on German / sex,
COMPAS / six race groups and Adult / sex and checked on COMPAS /
African-American against the others, Adult / five race groups and Bank /
three age groups (under 30, 30-60, over 60).

For each task and seed: the base ``LogisticRegression(epsilon=0.8)`` once,
then ``PrivateThresholdOptimizer(base, epsilon=0.2)`` for each constraint and
each number of bins (``--bins``, and ``"auto"``); test accuracy, worst-group
accuracy and the targeted gap (demographic parity: the spread of the
groups' positive rates; equalized odds: the larger spread of their true and
false positive rates). The loaders' data and sensitive attributes
(``dpestim.datasets``); Adult on its test part, the others on a 30% split
(seeded by the seed).

    PYTHONPATH=. python benchmarks/utility/threshold_bins.py [--seeds 5] \\
        [--commit C] [--out FILE]
"""

import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from defaults import markdown_table, result_parser, run_and_save_stamped  # noqa: E402

BINS = (3, 5, 10, 20, 50, "auto")
CONSTRAINTS = ("demographic_parity", "equalized_odds")
TASKS = {  # task: (split, loader, attribute, group map)
    "german / sex": ("derive", "load_german", "sex", None),
    "compas / race (6)": ("derive", "load_compas", "race", None),
    "adult / sex": ("derive", "load_adult", "sex", None),
    "compas / African-American vs rest": (
        "held out", "load_compas", "race",
        lambda a: np.where(a == "African-American", "AA", "rest"),
    ),
    "adult / race (5)": ("held out", "load_adult", "race", None),
    "bank / age (3)": (
        "held out", "load_bank", "age",
        lambda a: np.where(a < 30, "a<30", np.where(a > 60, "c>60", "b30-60")),
    ),
}  # fmt: skip


def _data(loader, attribute, group_map, seed):
    from sklearn.model_selection import train_test_split

    import dpestim.datasets as ds

    b = getattr(ds, loader)()
    a = np.asarray(b.sensitive[attribute])
    if "data_test" in b:
        X, y, Xt, yt = b.data, b.target, b.data_test, b.target_test
        at = np.asarray(b.sensitive_test[attribute])
    else:
        X, Xt, y, yt, a, at = train_test_split(
            b.data, b.target, a, test_size=0.3, random_state=seed
        )
    if group_map is not None:
        a, at = group_map(a), group_map(at)
    return X, y, Xt, yt, np.asarray(a).astype(str), np.asarray(at).astype(str)


def _stats(yt, pred, a):
    acc, rate, tpr, fpr = {}, {}, {}, {}
    for g in np.unique(a):
        m = a == g
        acc[g], rate[g] = np.mean(pred[m] == yt[m]), np.mean(pred[m])
        if (m & (yt == 1)).any():
            tpr[g] = np.mean(pred[m & (yt == 1)])
        if (m & (yt == 0)).any():
            fpr[g] = np.mean(pred[m & (yt == 0)])

    def spread(d):
        return max(d.values()) - min(d.values())

    return {
        "accuracy": float(np.mean(pred == yt)),
        "worst group": float(min(acc.values())),
        "demographic_parity": float(spread(rate)),
        "equalized_odds": float(max(spread(tpr), spread(fpr))),
    }


def run(args):
    import dpestim
    from dpestim.postprocessing import PrivateThresholdOptimizer

    records = []
    for task, (split, loader, attribute, group_map) in TASKS.items():
        for seed in range(args.seeds):
            X, y, Xt, yt, a, at = _data(loader, attribute, group_map, seed)
            groups = sorted(set(a))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                base = dpestim.LogisticRegression(
                    epsilon=0.8, classes=[0, 1], random_state=seed
                ).fit(X, y)
            common = {"task": task, "split": split, "seed": seed}
            records.append(common | {"bins": "base", "constraint": None}
                           | _stats(yt, base.predict(Xt), at))  # fmt: skip
            for constraint in CONSTRAINTS:
                for bins in BINS:
                    post = PrivateThresholdOptimizer(
                        base, constraint=constraint, epsilon=0.2, groups=groups,
                        n_bins=bins, random_state=seed,
                    )  # fmt: skip
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        post.fit(X, y, sensitive_features=a)
                    pred = post.predict(Xt, sensitive_features=at)
                    records.append(
                        common | {"bins": bins, "constraint": constraint,
                                  "n_bins_": int(post.n_bins_)} | _stats(yt, pred, at)
                    )  # fmt: skip
            print(task, seed, flush=True)
    return records


def _median(records, key, **where):
    v = [r[key] for r in records if all(r.get(k) == x for k, x in where.items())]
    return float(np.median(v)) if v else float("nan")


def report(records, command, cpu_s, commit):
    head = ["split", "task", "constraint", "base"] + [f"{b}" for b in BINS]
    head += ["auto's bins", "auto - best fixed"]
    rows, gaps = [], {"derive": [], "held out": []}
    for task, (split, *_) in TASKS.items():
        for c in CONSTRAINTS:
            cells = {b: _median(records, "accuracy", task=task, constraint=c, bins=b)
                     for b in BINS}  # fmt: skip
            worst = {b: _median(records, "worst group", task=task, constraint=c,
                                bins=b) for b in BINS}  # fmt: skip
            gap = {b: _median(records, c, task=task, constraint=c, bins=b)
                   for b in BINS}  # fmt: skip
            used = _median(records, "n_bins_", task=task, constraint=c, bins="auto")
            best = max(cells[b] for b in BINS if b != "auto")
            gaps[split].append(cells["auto"] - best)
            base = _median(records, "accuracy", task=task, bins="base")
            rows.append(
                [split, task, c, f"{base:.3f}"]
                + [f"{cells[b]:.3f} / {worst[b]:.3f} / {gap[b]:.3f}" for b in BINS]
                + [f"{used:.0f}", f"{cells['auto'] - best:+.3f}"]
            )
    summary = [
        f"- {split}: `\"auto\"` minus the best fixed number of bins (accuracy, "
        f"chosen afterwards on the test set), mean {np.mean(v):+.3f}, worst "
        f"{np.min(v):+.3f} over {len(v)} cells" for split, v in gaps.items()
    ]  # fmt: skip
    return "\n".join(
        [
            "# `PrivateThresholdOptimizer`: the number of score bins",
            "",
            f"Command: `{command}` (code {commit}; {cpu_s:.0f} CPU s). Base "
            "`LogisticRegression(epsilon=0.8)`, histogram epsilon 0.2 "
            "(delta 1e-6); each cell: test accuracy / worst-group accuracy / "
            "the constraint's gap, medians over the seeds.",
            "",
            markdown_table(head, rows),
            "",
            *summary,
            "",
        ]
    )


def main(argv=None):
    p = result_parser(__doc__, "threshold_bins.md", seeds=5)
    args = p.parse_args(argv)
    run_and_save_stamped("threshold_bins.py", args, run, report)


if __name__ == "__main__":
    main()
