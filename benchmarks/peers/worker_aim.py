"""AIM worker (runs in the aim venv; see install_peers.sh).

Task ``synth``: runs the AIM mechanism of smartnoise-synth
(``snsynth.AIMSynthesizer``, McKenna et al. 2022, on private-pgm's ``mbi``)
on an already discretized table with a **public** domain, then samples
synthetic rows from the fitted graphical model.

The table comes as a ``.npz`` (``D``: ``n x k`` integer codes, ``cards``:
the public number of levels of each column) written by ``run_aim.py``. The
synthesizer's ``fit`` is bypassed only for its table transformer, which
infers each column's categories from the private data; the domain is given
here instead (``mbi.Domain(columns, cards)``) and the package's own
``AIMSynthesizer.AIM`` runs on it with the synthesizer's defaults: all
2-way marginals with at most ``max_cells=10000`` cells as the workload,
``max_model_size=80`` (MB), ``rounds = 16 k``, mirror descent with 1000
iterations per round. ``epsilon`` and ``delta`` of the task go through
the package's ``cdp_rho``.

Seeding: ``np.random.seed(seed)`` fixes the exponential-mechanism draws and
the randomized rounding of ``synthetic_data``; the Gaussian noise comes
from OpenDP's samplers, which take no seed, so a rerun with the same seed
differs.

Writes ``out`` (``.npz`` with one integer array ``S<rows>`` per requested
number of synthetic rows) and prints wall and CPU time of the mechanism.
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import run_worker  # noqa: E402


def synth(task):
    import contextlib
    import importlib.metadata as md
    import io

    import numpy as np
    import pandas as pd
    from mbi import Dataset, Domain
    from snsynth.aim import AIMSynthesizer
    from snsynth.utils import cdp_rho

    with np.load(task["data"]) as f:
        D, cards = f["D"].astype(np.int64), [int(c) for c in f["cards"]]
    if D.min() < 0 or np.any(D.max(axis=0) >= np.asarray(cards)):
        raise ValueError("codes outside the public domain")
    cols = [f"col{i}" for i in range(D.shape[1])]
    domain = Domain(cols, cards)
    data = Dataset(pd.DataFrame(D, columns=cols), domain=domain)

    # snsynth and mbi draw from NumPy's global state: seed it.
    np.random.seed(int(task["seed"]))  # noqa: NPY002
    aim = AIMSynthesizer(epsilon=float(task["epsilon"]), delta=float(task["delta"]))
    t0, c0 = time.perf_counter(), time.process_time()
    aim.rho = cdp_rho(aim.epsilon, aim.delta)
    workload = aim.get_workload(
        data, degree=aim.degree, max_cells=aim.max_cells, num_marginals=None
    )
    with contextlib.redirect_stdout(io.StringIO()):  # AIM prints its sigma
        aim.AIM(data, workload)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    model = aim.synthesizer
    out = {}
    for rows in task["rows"]:
        S = model.synthetic_data(rows=int(rows)).df[cols].to_numpy()
        out[f"S{int(rows)}"] = S.astype(np.int16)
    np.savez_compressed(task["out"], **out)
    return {
        "library": (
            f"smartnoise-synth {md.version('smartnoise-synth')} "
            f"(mbi {md.version('mbi')}, jax {md.version('jax')}, "
            f"opendp {md.version('opendp')})"
        ),
        "rho": float(aim.rho),
        "workload_size": len(workload),
        "default_rounds": 16 * len(cards),
        "model_cliques": [list(cl) for cl in model.cliques],
        "aim_wall_s": wall,
        "aim_cpu_s": cpu,
    }


if __name__ == "__main__":
    run_worker({"synth": synth})
