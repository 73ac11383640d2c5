"""diffprivlib worker (runs in the diffprivlib venv; see install_peers.sh).

Task ``utility``: ``diffprivlib.models.LogisticRegression`` (objective
perturbation, pure epsilon-DP) with its default ``C``, ``max_iter`` and
``tol`` and ``data_norm`` set to the public bound on the row norms given by
run_peers.py (so that diffprivlib does not compute it from the data), for
every epsilon and seed of the task. Prints one row per fit: test accuracy
and fit wall time.
"""

import os
import sys
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import digest, load_task_data, run_worker  # noqa: E402


def utility(task):
    import diffprivlib
    import numpy as np
    import sklearn
    from diffprivlib.models import LogisticRegression

    X, y, Xt, yt = load_task_data(task["data"])
    norm = float(task["data_norm"])
    if np.max(np.linalg.norm(X, axis=1)) > norm * (1 + 1e-12):
        raise ValueError("data_norm is not a bound on the training rows")
    rows = []
    for eps in task["epsilons"]:
        for seed in task["seeds"]:
            model = LogisticRegression(
                epsilon=float(eps), data_norm=norm, random_state=seed
            )
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t0 = time.perf_counter()
                model.fit(X, y)
                fit_s = time.perf_counter() - t0
            acc = float(np.mean(model.predict(Xt) == yt))
            rows.append(
                {"epsilon": eps, "seed": seed, "test_accuracy": acc, "fit_s": fit_s}
            )
    return {
        "library": (
            f"diffprivlib {diffprivlib.__version__} "
            f"(scikit-learn {sklearn.__version__})"
        ),
        "rows": rows,
        "data_digest": digest(X, y),
    }


if __name__ == "__main__":
    run_worker({"utility": utility})
