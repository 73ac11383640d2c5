"""Helpers shared by the peer workers (NumPy and the standard library only).

Each worker runs in its own virtual environment (see ``install_peers.sh``),
where dpestim may not be importable, so the data loading and the measurement
utilities live here. Workers read one JSON task from ``argv[1]`` and print
one JSON object on the last line of stdout.
"""

import gzip
import hashlib
import json
import os
import resource
import sys
import time

import numpy as np


def set_threads(n):
    """Pin the BLAS / OpenMP / numba thread pools to ``n`` threads.

    Must run before NumPy's BLAS is first used; workers call it at import
    time from the ``PEER_THREADS`` environment variable set by run_peers.py.
    """
    for var in (
        "OMP_NUM_THREADS",
        "OPENBLAS_NUM_THREADS",
        "MKL_NUM_THREADS",
        "NUMBA_NUM_THREADS",
    ):
        os.environ[var] = str(n)
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(n)
    except ImportError:
        pass


def _read_idx(path):
    with gzip.open(path, "rb") as f:
        raw = f.read()
    ndim = raw[3]
    shape = tuple(
        int.from_bytes(raw[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim)
    )
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim).reshape(shape)


def load_mnist(folder):
    """MNIST as float64 pixels / 255 (as ``dpestim.datasets.load_mnist``)."""
    names = (
        "train-images-idx3-ubyte.gz",
        "train-labels-idx1-ubyte.gz",
        "t10k-images-idx3-ubyte.gz",
        "t10k-labels-idx1-ubyte.gz",
    )
    Xtr, ytr, Xte, yte = (_read_idx(os.path.join(folder, n)) for n in names)
    return (
        Xtr.reshape(len(Xtr), -1) / 255.0,
        ytr.astype(np.int64),
        Xte.reshape(len(Xte), -1) / 255.0,
        yte.astype(np.int64),
    )


def make_synthetic(n_samples, n_features, n_test, seed):
    """Seeded dense binary problem: ``x ~ N(0, I / d)``, labels {0, 1}.

    ``y = 1[x . w + 0.5 e > 0]`` with ``w ~ N(0, I)`` and ``e ~ N(0, 1)``
    (rows of norm about 1). The same seed gives the same bytes in every
    environment with the same NumPy major version (checked by ``digest``).
    """
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(n_features)
    n = n_samples + n_test
    X = rng.standard_normal((n, n_features))
    X *= 1.0 / np.sqrt(n_features)
    y = (X @ w + 0.5 * rng.standard_normal(n) > 0).astype(np.int64)
    return X[:n_samples], y[:n_samples], X[n_samples:], y[n_samples:]


def load_task_data(spec):
    """Return ``(X, y, X_test, y_test)`` for a data spec of run_peers.py."""
    kind = spec["kind"]
    if kind == "mnist":
        return load_mnist(spec["folder"])
    if kind == "synthetic":
        return make_synthetic(
            spec["n_samples"], spec["n_features"], spec["n_test"], spec["seed"]
        )
    if kind == "npz":
        with np.load(spec["path"]) as f:
            return f["X"], f["y"], f["X_test"], f["y_test"]
    raise ValueError(f"unknown data kind {kind!r}")


def digest(*arrays):
    """Short SHA-256 of the arrays' bytes (to show peers saw the same data)."""
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:16]


def reset_peak_rss():
    """Reset the kernel's peak-RSS mark (VmHWM) of this process, if allowed."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def rss_mib():
    """``(current RSS, peak RSS since the last reset)`` in MiB.

    Read from ``/proc/self/status`` (VmRSS, VmHWM); falls back to
    ``resource.getrusage(RUSAGE_SELF).ru_maxrss`` (peak since start).
    """
    cur = peak = None
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    cur = int(line.split()[1]) / 1024
                elif line.startswith("VmHWM:"):
                    peak = int(line.split()[1]) / 1024
    except OSError:
        pass
    if peak is None:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return cur, peak


def matvec_floor(X, n_outputs=1, repeats=7):
    """Shortest wall and CPU time of ``X @ V`` (one streaming pass over X).

    The physical lower bound of an epoch: every epoch of a first-order
    method reads X at least once and forms every score. ``V`` is a vector
    for one output and a ``(d, n_outputs)`` matrix otherwise (multinomial
    models score all classes in the pass). Returns ``{"wall_s", "cpu_s"}``
    (minima over ``repeats``; one warm-up product first).
    """
    X = np.ascontiguousarray(X)
    shape = X.shape[1] if n_outputs == 1 else (X.shape[1], n_outputs)
    v = np.ones(shape, dtype=X.dtype)
    X @ v
    walls, cpus = [], []
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        X @ v
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return {"wall_s": min(walls), "cpu_s": min(cpus)}


def run_worker(handlers):
    """Read the task from argv, run ``handlers[task["task"]]``, print JSON."""
    task = json.loads(sys.argv[1])
    t0 = time.perf_counter()
    out = handlers[task["task"]](task)
    out["worker_wall_s"] = time.perf_counter() - t0
    out["python"] = sys.version.split()[0]
    out["numpy"] = np.__version__
    print(json.dumps(out))
