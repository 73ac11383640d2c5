"""dpestim speed worker (runs in dpestim's own environment).

Task ``fit``: ``dpestim.LogisticRegression`` with a fixed noise multiplier
(``epsilon=None``), the given solver and schedule, on the task's data (float64,
or ``task["dtype"]``).
numba compilation is excluded by a warm-up fit on the first 1,000 rows. Prints
the whole-fit wall time divided by the number of epochs (this includes
dpestim's own validation, row norms and accounting of the run), peak RSS
during the timed fit, test accuracy and the epsilon that dpestim's
accountant reports. For the DP-SGD family it also prints the time of the
training loop alone (``loop_cpu_per_epoch_s``: the numba loop of Poisson
sampling, clipped sums, noise and steps, which is what Opacus's per-epoch
time measures) by timing the calls of ``_descent._noisy_sgd_loop``.
"""

import os
import sys
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import (  # noqa: E402
    digest,
    load_task_data,
    matvec_floor,
    reset_peak_rss,
    rss_mib,
    run_worker,
)


def fit(task):
    import numpy as np

    import dpestim

    X, y, Xt, yt = load_task_data(task["data"])
    data_digest = digest(X, y)
    # float64 by default; task["dtype"] = "float32" times float32 input
    # (kept as is by the gradient solvers, no float64 copy).
    X = np.ascontiguousarray(X, dtype=np.dtype(task.get("dtype", "float64")))
    classes = list(range(int(task["n_classes"])))
    params = dict(
        solver=task["solver"],
        epsilon=None,
        noise_multiplier=float(task["noise_multiplier"]),
        delta=float(task["delta"]),
        clip_norm=float(task["clip_norm"]),
        alpha=0.0,
        batch_size=int(task["batch_size"]),
        learning_rate=float(task["learning_rate"]),
        classes=classes,
        accountant="rdp",
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dpestim.LogisticRegression(max_iter=1, random_state=0, **params).fit(
            X[:1000], y[:1000]
        )
    from dpestim.solvers.sgd import _descent

    loop, spent = _descent._noisy_sgd_loop, [0.0, 0.0]

    def timed_loop(*args):
        t, c = time.perf_counter(), time.process_time()
        loop(*args)
        spent[0] += time.perf_counter() - t
        spent[1] += time.process_time() - c

    _descent._noisy_sgd_loop = timed_loop
    rss_data, _ = rss_mib()
    reset_peak_rss()
    epochs = int(task["epochs"])
    model = dpestim.LogisticRegression(
        max_iter=epochs, random_state=int(task["seed"]), **params
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0, c0 = time.perf_counter(), time.process_time()
        model.fit(X, y)
        fit_s = time.perf_counter() - t0
        fit_cpu_s = time.process_time() - c0
    _, peak_train = rss_mib()
    acc = float(np.mean(model.predict(Xt) == yt))
    return {
        "library": f"dpestim {dpestim.__version__} ({task['solver']})",
        "fit_s": fit_s,
        "fit_cpu_s": fit_cpu_s,
        "time_per_epoch_s": fit_s / epochs,
        "cpu_per_epoch_s": fit_cpu_s / epochs,
        "loop_wall_per_epoch_s": spent[0] / epochs if spent[1] else None,
        "loop_cpu_per_epoch_s": spent[1] / epochs if spent[1] else None,
        "floor": matvec_floor(X, len(classes) if len(classes) > 2 else 1),
        "steps": int(model.n_iter_),
        "sample_rate": min(1.0, int(task["batch_size"]) / len(X)),
        "test_accuracy": acc,
        "epsilon": float(model.epsilon_),
        "accountant": "dpestim " + model.privacy_report().accountant,
        "rss_after_data_mib": rss_data,
        "peak_rss_training_mib": peak_train,
        "data_digest": data_digest,
    }


if __name__ == "__main__":
    run_worker({"fit": fit})
