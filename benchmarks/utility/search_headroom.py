"""How much a private search *could* gain over one default fit (issue 27).

A search at total ``epsilon`` trains its candidates at more noise than one
default fit at ``epsilon`` (the selection's tax, the ``noise x`` column of
``private_search.py``). So even a search whose selection were perfect and
free can release at best the best candidate trained at the budget the tax
leaves it: about ``epsilon / tax`` (DP-SGD's epsilon falls roughly as
``1 / noise multiplier``). This reads

* ``--search``: a ``private_search.py`` result (the default fit at each
  ``epsilon``, and the ``search`` method's noise multiples: the tax);
* ``--oracle``: ``private_search.py --oracle`` results at ``epsilon / tax``
  (the best of its 30 configurations picked *on the test set*, fitted on
  all the training rows: an optimistic bound on any candidate);

and writes, per (dataset, epsilon) where the default is at least
``GAP_MIN`` points from non-private, the headroom ``oracle(epsilon / tax) -
default(epsilon)``. A cell whose headroom is below ``GAIN_MIN`` point cannot
meet issue 27's "at least 1 point above the default" by any search over this
space paying at least that tax.

    PYTHONPATH=. python benchmarks/utility/search_headroom.py \\
        --search benchmarks/results/private_search.json \\
        --oracle benchmarks/results/search_headroom_oracle.json \\
        --tax 1.5 --out benchmarks/results/search_headroom.md
"""

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from private_search import (  # noqa: E402
    GAIN_MIN,
    GAP_MIN,
    _median,
    _oracle,
    _oracle_config,
)


def _records(paths):
    out = []
    for p in paths:
        out += json.loads(Path(p).read_text())["records"]
    return out


def _tax(sel):
    """Median noise multiple of the ``search`` candidates over the default."""
    nm = [r["noise_multiplier"] for r in sel if r["method"] == "search"]
    nd = [r["noise_multiplier"] for r in sel if r["method"] == "default"]
    return float(np.median(nm) / np.median(nd)) if nm and nd else float("nan")


def headroom(search, oracle, tax):
    """Table rows ``[dataset, eps, default, gap, oracle at eps/tax, ...]``."""
    rows = []
    for ds, eps in sorted({(r["dataset"], r["epsilon"]) for r in search}):
        sel = [r for r in search if r["dataset"] == ds and r["epsilon"] == eps]
        default = _median(sel, "default")
        gap = 100 * (_median(sel, "nonprivate") - default)
        if not gap >= GAP_MIN:
            continue
        osel = [
            r
            for r in oracle
            if r["dataset"] == ds and abs(r["epsilon"] - eps / tax) < 1e-3
        ]
        best = _oracle(osel) if osel else float("nan")
        room = 100 * (best - default)
        verdict = (
            "not measured"
            if np.isnan(room)
            else ("within reach" if room >= GAIN_MIN else "out of reach")
        )
        rows.append(
            [
                ds,
                f"{eps:g}",
                f"{default:.4f}",
                f"{gap:.2f}",
                f"{_tax(sel):.2f}",
                f"{best:.4f}" if osel else "-",
                _oracle_config(osel) if osel else "",
                f"{room:+.2f}" if osel else "-",
                verdict,
            ]
        )
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--search", nargs="+", required=True)
    p.add_argument("--oracle", nargs="+", required=True)
    p.add_argument("--tax", type=float, default=1.5)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    rows = headroom(_records(args.search), _records(args.oracle), args.tax)
    head = [
        "dataset",
        "epsilon",
        "default",
        "gap to non-private",
        "search's tax (noise x)",
        f"oracle at epsilon / {args.tax:g}",
        "its configuration",
        "headroom (points)",
        f"a +{GAIN_MIN:g} point search",
    ]
    lines = [
        "# Headroom of a private search over one default fit",
        "",
        "Command: `python benchmarks/utility/search_headroom.py "
        + " ".join(sys.argv[1:])
        + "`. Cells where the default is at least "
        f"{GAP_MIN:g} points from non-private. `oracle`: the best median test "
        "score of the 30 configurations, picked on the test set, fitted on all "
        f"the training rows at epsilon / {args.tax:g}; `headroom`: oracle minus "
        "the default at epsilon (0.01 R^2 = 1 point). `search's tax`: the "
        "median noise multiple of `PrivateSearchCV`'s candidates in that cell.",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    Path(args.out).write_text("\n".join(lines) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
