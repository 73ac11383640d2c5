"""Warn when private fits of the same records compose outside a budget.

scikit-learn's model selection (``GridSearchCV``, ``cross_val_score``) or a
plain loop fits the same records many times; every fit reports only its own
``epsilon_``, while the records they share are protected only by the
composition of all of them. Outside an explicit
:class:`~dpestim.model_selection.PrivacyBudget` (which composes and bounds
on purpose), :func:`note_fit` warns with a
:class:`~dpestim.exceptions.PrivacyBudgetWarning` when a private fit uses
records that an earlier private fit of the session already used, and states
the composed guarantee by *basic composition*: for each record of this fit,
the sums of the epsilons and of the deltas of this fit and of the earlier
fits that read it; the maxima over the records are stated (valid whatever
the mechanisms and their neighbouring relations).

How records are recognised. Each row of the data a fit reads (its feature
values, dense or sparse, in float64; not ``y``) gets a 64-bit fingerprint,
a keyed hash (splitmix64 mixing, order-free over the nonzero entries, keyed
by a random salt of the registry) computed locally; rows of zeros only are
left out. A fit keeps at most
:data:`MAX_FINGERPRINTS` of them (the smallest: a bottom-k sketch, so that
two fits of overlapping subsets keep the same sample of their common rows);
two fits overlap when they share a kept fingerprint. Cross-validation folds
are different subsets of the same rows, so they overlap. Fits with the same
sketch (refits of the same rows) are kept as one running total (their
number and the sums of their epsilons and deltas): a fit is compared with
each distinct earlier sketch once, so a loop of thousands of refits of the
same rows costs the same per fit throughout (measured: 2,000 fits of a
small ``LogisticRegression`` on 200 rows, 4 ms of CPU per fit for the first
200 and 5.5 ms for the last 200, 8 and 95 ms fit by fit). Fingerprints and
epsilons are stored in a private temporary directory (mode 0700, removed at
the exit of the process that created it) named by the environment variable
``DPESTIM_COMPOSITION_REGISTRY``, which joblib's worker processes inherit:
fits run with ``n_jobs > 1`` are seen by their siblings and by the parent
(for instance ``GridSearchCV``'s refit). Nothing of it is ever released:
the warning states only the user's own requested epsilons and deltas, and
how many earlier fits they come from. It is a local warning, not part of
what the fit releases: whether it fires depends on the records (a single
shared record can decide it), so it is never recorded in the fitted
estimator nor in its privacy report.

Limits: duplicated feature rows in distinct datasets count as the same
record (a spurious warning, on the safe side); an overlap of fewer rows than
about ``n / MAX_FINGERPRINTS`` of an earlier fit of ``n`` rows may be missed;
out-of-core (blocked) input is not fingerprinted; the warnings of fits run
in worker processes are printed by the workers (the parent's next fit of the
same records, e.g. the refit, warns with the whole sum).

Turn it off with :func:`set_composition_warning` ``(False)`` or the
environment variable ``DPESTIM_COMPOSITION_WARNING=0``.
"""

import atexit
import hashlib
import math
import os
import shutil
import tempfile
import threading
import uuid

import numpy as np
import scipy.sparse as sp

from ..exceptions import PrivacyBudgetWarning
from ..utils.fit_warnings import warn_outside

__all__ = ["ENV_REGISTRY", "ENV_SWITCH", "note_fit", "set_composition_warning"]

#: Environment variable switching the warning off (``0``, ``false``, ``off``).
ENV_SWITCH = "DPESTIM_COMPOSITION_WARNING"
#: Environment variable naming the registry directory (inherited by workers).
ENV_REGISTRY = "DPESTIM_COMPOSITION_REGISTRY"
#: Fingerprints kept per fit (the smallest ones).
MAX_FINGERPRINTS = 2**14

_OFF = ("0", "false", "no", "off")
_ALL = np.uint64(np.iinfo(np.uint64).max)
_M1, _M2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31 = np.uint64(30), np.uint64(27), np.uint64(31)
_lock = threading.Lock()
_loaded = {}  # registry directory -> _Index


def enabled():
    """Whether the composition warning is on (the default)."""
    return os.environ.get(ENV_SWITCH, "1").strip().lower() not in _OFF


def _restart_workers():
    from .charging import restart_worker_pool

    restart_worker_pool()


def set_composition_warning(enabled=True):
    """Turn the warning on private fits of already fitted records on or off.

    The setting goes to the environment (``DPESTIM_COMPOSITION_WARNING``), so
    that joblib's worker processes follow it: their reusable pool is
    restarted.

    Parameters
    ----------
    enabled : bool, default=True
    """
    os.environ[ENV_SWITCH] = "1" if enabled else "0"
    if enabled:
        _registry()
    _restart_workers()


def _registry():
    """The registry directory (created, with its salt, on first use)."""
    path = os.environ.get(ENV_REGISTRY)
    if not path:
        path = tempfile.mkdtemp(prefix="dpestim-composition-")
        atexit.register(shutil.rmtree, path, True)
        os.environ[ENV_REGISTRY] = path
        # Workers started before know no registry: restart the reusable pool.
        _restart_workers()
    salt = os.path.join(path, "salt")
    if not os.path.exists(salt):
        os.makedirs(path, mode=0o700, exist_ok=True)
        tmp = f"{salt}.{uuid.uuid4().hex}"
        with open(tmp, "wb") as fh:
            fh.write(os.urandom(16))
        try:
            os.link(tmp, salt)  # atomic, never replaces a salt already there
        except FileExistsError:
            pass
        finally:
            os.unlink(tmp)
    return path


def _salt(path):
    with open(os.path.join(path, "salt"), "rb") as fh:
        return np.frombuffer(fh.read(16), dtype=np.uint64)


def _mix(z):
    """splitmix64's finaliser, elementwise on a uint64 array (wraps mod 2**64)."""
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


def _entries(values, columns, key):
    """Keyed hash of each (column, value) entry; 0 for the zero entries."""
    values = np.ascontiguousarray(values, dtype=np.float64)
    h = _mix(values.view(np.uint64) ^ _mix(columns.astype(np.uint64) ^ key))
    h[values == 0] = 0  # -0.0 too: a sparse and a dense copy agree
    return h


def fingerprints(X, salt):
    """Sorted unique fingerprints of the rows of ``X`` (``None``: not supported).

    Order-free sum over the nonzero entries, so that a dense array and a
    sparse matrix of the same values give the same fingerprints. Rows of
    zeros only are left out.
    """
    with np.errstate(over="ignore"):
        if sp.issparse(X):
            X = sp.csr_matrix(X)
            if not X.has_canonical_format:
                X = X.copy()
                X.sum_duplicates()
            h = _entries(X.data, X.indices, salt[0])
            cum = np.concatenate(
                [np.zeros(1, np.uint64), np.cumsum(h, dtype=np.uint64)]
            )
            rows = cum[X.indptr[1:]] - cum[X.indptr[:-1]]
        elif isinstance(X, np.ndarray) and X.ndim in (1, 2) and X.dtype.kind in "biuf":
            X = X.reshape(len(X), -1)
            n, d = X.shape
            columns = np.arange(d, dtype=np.uint64)[None, :]
            rows = np.empty(n, np.uint64)
            step = max(1, 2**20 // max(d, 1))
            for i in range(0, n, step):
                h = _entries(X[i : i + step], columns, salt[0])
                rows[i : i + step] = h.sum(axis=1, dtype=np.uint64)
        else:
            return None
        # An empty row (all zeros) is left out: it is common to unrelated
        # data sets (a spurious overlap), and a nonzero row sums to 0 with
        # probability 2**-64.
        return np.unique(_mix(rows[rows != 0] ^ salt[1]))


class _Index:
    """The fits of one registry, grouped by their sketch (running totals).

    Fits of the same records keep the same sketch (the same fingerprints and
    limit): a group holds it once, with the number of its fits and the sums
    of their epsilons and deltas, updated as each fit's file is first seen.
    A new fit is compared with every group, not with every earlier fit, so
    that a loop of refits of the same rows costs the same per fit however
    long it runs. Exactly the per-fit sums: a group's fits overlap a new fit
    or not together, and read the same rows.
    """

    def __init__(self):
        self.seen = set()  # file names already added
        # (limit, size, digest) -> [fingerprints, limit, n, eps, delta]
        self.groups = {}

    def add(self, name, kept, limit, epsilon, delta):
        if name in self.seen:
            return
        self.seen.add(name)
        digest = hashlib.blake2b(kept.tobytes(), digest_size=16).digest()
        key = (int(limit), kept.size, digest)
        group = self.groups.get(key)
        if group is not None and not np.array_equal(group[0], kept):
            key, group = (*key, name), None  # pragma: no cover (a collision)
        if group is None:
            self.groups[key] = [kept, limit, 1, float(epsilon), float(delta)]
        else:
            group[2] += 1
            group[3] += float(epsilon)
            group[4] += float(delta)


def _load(path):
    """The registry's fits, grouped (files are immutable: each read once)."""
    index = _loaded.setdefault(path, _Index())
    for name in sorted(os.listdir(path)):
        if name.endswith(".npz") and name not in index.seen:
            try:
                with np.load(os.path.join(path, name)) as f:
                    index.add(
                        name,
                        f["fingerprints"],
                        f["limit"][()],
                        float(f["epsilon"]),
                        float(f["delta"]),
                    )
            except (OSError, ValueError, KeyError):  # pragma: no cover
                continue  # a file being removed at exit
    return index


def _store(path, kept, limit, epsilon, delta):
    name = f"{uuid.uuid4().hex}.npz"
    tmp = os.path.join(path, f".{name}.tmp")
    with open(tmp, "wb") as fh:
        np.savez(fh, fingerprints=kept, limit=limit, epsilon=epsilon, delta=delta)
    os.replace(tmp, os.path.join(path, name))  # readers see whole files only
    _loaded.setdefault(path, _Index()).add(name, kept, limit, epsilon, delta)


def _overlaps(a, limit_a, b, limit_b):
    limit = min(limit_a, limit_b)
    a, b = a[a < limit], b[b < limit]
    if not a.size or not b.size:
        return False
    pos = np.searchsorted(b, a).clip(max=b.size - 1)
    return bool((b[pos] == a).any())


def _composed(kept, limit, groups):
    """Basic composition of the earlier fits over this fit's worst record.

    For each kept fingerprint, the sums of the epsilons and deltas of the
    earlier fits that read that row (a row beyond an earlier fit's sketch
    counts as read when that fit overlaps this one: the safe side); the
    maxima over the rows, or ``None`` when no earlier fit shares a row.
    ``groups``: the earlier fits grouped by sketch (:class:`_Index`), each
    ``(fingerprints, limit, number of fits, sum of epsilons, sum of deltas)``.
    """
    eps = np.zeros(kept.size)
    dlt = np.zeros(kept.size)
    count = np.zeros(kept.size, dtype=np.int64)
    for fps, lim, n, e, d in groups:
        if not _overlaps(kept, limit, fps, lim):
            continue
        inside = np.isin(kept, fps, assume_unique=True) | (kept >= lim)
        eps += e * inside
        dlt += d * inside
        count += n * inside
    if not count.any():
        return None
    return int(count.max()), float(eps.max()), float(dlt.max())


def note_fit(data, epsilon, delta, *, label, warn=True):
    """Record a private fit of ``data``; warn if it composes with earlier ones.

    Parameters
    ----------
    data : ndarray or sparse matrix or None
        The records the fit reads (rows); ``None`` or another type: nothing
        is recorded.
    epsilon, delta : float
        The fit's guarantee (public: the user's request).
    label : str
        Readable name of the fit (for the message).
    warn : bool, default=True
        ``False`` records without warning (fits charged to a budget).
    """
    if data is None or not enabled():
        return
    epsilon, delta = float(epsilon), float(delta)
    if not 0 < epsilon < math.inf:
        return  # not private: no guarantee to compose
    with _lock:
        try:
            path = _registry()
            found = fingerprints(data, _salt(path))
            if found is None:
                return
            limit = _ALL if found.size <= MAX_FINGERPRINTS else found[MAX_FINGERPRINTS]
            kept = found[:MAX_FINGERPRINTS]
            composed = _composed(kept, limit, _load(path).groups.values())
            _store(path, kept, limit, epsilon, delta)
        except OSError:  # no usable temporary directory: nothing is recorded
            return
    if not warn or composed is None:
        return
    n_earlier, earlier_eps, earlier_delta = composed
    total_eps, total_delta = epsilon + earlier_eps, delta + earlier_delta
    # A plain warning, never recorded in the fitted estimator or its privacy
    # report: whether it fires depends on the records (one shared record can
    # decide it), so it must not be part of what the fit releases.
    warn_outside(
        f"{label} (epsilon={epsilon:.4g}) fits records that earlier private "
        f"fits of this session already used (up to {n_earlier} of them for one "
        "record): their guarantees compose. By basic composition, every record "
        f"of this fit is protected by epsilon <= {total_eps:.4g}, delta <= "
        f"{total_delta:.3g} so far, not by this fit's epsilon_. Compose fits "
        "on purpose inside a dpestim.model_selection."
        "PrivacyBudget (it bounds the total and refuses what would exceed it), or "
        "tune with dpestim.model_selection.PrivateSearchCV (one guarantee for the "
        "whole search). Records are recognised by local fingerprints of their "
        "rows, never released. This warning itself is NOT private (whether it "
        "fires can depend on one record): it is for the data holder, do not "
        "publish it; turn it off with "
        "dpestim.set_composition_warning(False) or DPESTIM_COMPOSITION_WARNING=0.",
        PrivacyBudgetWarning,
    )


# Create the registry when dpestim's estimators are imported, before any
# joblib worker starts, so that workers inherit its path.
if enabled():
    _registry()
