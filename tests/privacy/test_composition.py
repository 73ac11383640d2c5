"""The warning on private fits of already fitted records (outside a budget)."""

import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.model_selection import GridSearchCV, cross_val_score

import dpestim
from dpestim import LogisticRegression, PrivacyBudgetWarning
from dpestim.model_selection import PrivacyBudget, PrivateSearchCV
from dpestim.preprocessing import StandardScaler
from dpestim.privacy import _composition
from dpestim.privacy.charging import restart_worker_pool


@pytest.fixture
def registry(tmp_path, monkeypatch):
    """The warning on (the suite turns it off), with a fresh registry."""
    monkeypatch.setenv(_composition.ENV_SWITCH, "1")
    monkeypatch.setenv(_composition.ENV_REGISTRY, str(tmp_path / "registry"))
    restart_worker_pool()  # workers inherit the switch and the registry
    yield tmp_path / "registry"
    monkeypatch.undo()
    restart_worker_pool()


@pytest.fixture
def data():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(400, 3)) / 2
    y = (X[:, 0] > 0).astype(int)
    return X, y


def _lr(eps=1.0):
    return LogisticRegression(
        epsilon=eps, classes=[0, 1], max_iter=1, batch_size=100, random_state=0
    )


def _composed(records):
    """The composed epsilons stated by the warnings, in order."""
    out = []
    for r in records:
        if issubclass(r.category, PrivacyBudgetWarning) and "compose" in str(r.message):
            out.append(float(re.search(r"epsilon <= ([0-9.e+]+)", str(r.message))[1]))
    return out


def _fits(fn):
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        fn()
    return _composed(rec)


def test_warning_class_is_public_and_a_user_warning():
    assert dpestim.PrivacyBudgetWarning is PrivacyBudgetWarning
    assert issubclass(PrivacyBudgetWarning, UserWarning)
    assert dpestim.set_composition_warning is _composition.set_composition_warning


def test_loop_of_fits_warns_with_the_basic_sum(registry, data):
    X, y = data
    assert _fits(lambda: _lr(0.5).fit(X, y)) == []  # first fit: nothing to compose
    assert _fits(lambda: _lr(1.0).fit(X, y)) == [1.5]
    assert _fits(lambda: _lr(0.25).fit(X[:200], y[:200])) == [1.75]  # a subset
    # a private fit of other records composes with nothing
    rng = np.random.default_rng(8)
    other = rng.normal(size=(300, 3)) / 2
    assert _fits(lambda: _lr(1.0).fit(other, other[:, 0] > 0)) == []
    # the warning is local: whether it fires depends on the records, so it is
    # not part of the fit's release (its privacy report)
    clf = _lr(0.5)
    assert _fits(lambda: clf.fit(X, y)) == [2.25]
    assert "PrivacyBudgetWarning" not in str(clf.privacy_report())


def test_warning_message_points_to_budget_and_search(registry, data):
    X, y = data
    _lr().fit(X, y)
    with pytest.warns(PrivacyBudgetWarning) as rec:
        _lr().fit(X, y)
    msg = next(str(r.message) for r in rec if r.category is PrivacyBudgetWarning)
    for part in ("PrivacyBudget", "PrivateSearchCV", "set_composition_warning"):
        assert part in msg
    assert "basic composition" in msg


def test_grid_search_warns_in_process(registry, data):
    X, y = data
    grid = GridSearchCV(_lr(), {"alpha": [1e-4, 1e-3]}, cv=3, n_jobs=1)
    composed = _fits(lambda: grid.fit(X, y))
    # 6 fits of the folds, then the refit on every row: per record, each
    # record is in 2 of the 3 training folds of each candidate (basic
    # composition of the fits that read it, maximum over the records)
    assert composed == [2.0, 2.0, 3.0, 4.0, 4.0, 5.0]


def test_grid_search_with_two_worker_processes(registry, data):
    # loky workers are processes: they share the on-disk registry, so the
    # parent's refit sees the 6 fits its workers made.
    X, y = data
    grid = GridSearchCV(_lr(), {"alpha": [1e-4, 1e-3]}, cv=3, n_jobs=2)
    composed = _fits(lambda: grid.fit(X, y))
    assert composed == [5.0]
    assert len(list(registry.glob("*.npz"))) == 7
    # cross_val_score in workers: the parent's next fit sees those 3 fits too
    cross_val_score(_lr(), X, y, cv=3, n_jobs=2)
    assert _fits(lambda: _lr().fit(X, y)) == [8.0]


def test_no_warning_inside_a_budget_or_for_a_search(registry, data):
    X, y = data
    budget = PrivacyBudget(10.0)
    with budget:
        assert _fits(lambda: _lr().fit(X, y)) == []
        assert _fits(lambda: _lr().fit(X, y)) == []
    # each fit: its private row scale (400 rows: a raised share) and its run
    assert len(budget.records) == 4
    # fits in a budget are remembered: a later fit outside composes with them
    assert _fits(lambda: _lr().fit(X, y)) == [3.0]
    # a search charges its one event: its candidates do not warn, the search does
    search = PrivateSearchCV(_lr(), epsilon=1.0, n_candidates=3, random_state=0)
    composed = _fits(lambda: search.fit(X, y))
    assert len(composed) == 1
    assert composed[0] == pytest.approx(3.0 + search.epsilon_, rel=1e-3)


def test_off_switch(registry, data, monkeypatch):
    X, y = data
    dpestim.set_composition_warning(False)
    try:
        assert _fits(lambda: [_lr().fit(X, y) for _ in range(3)]) == []
        assert not list(registry.glob("*.npz"))  # nothing recorded either
    finally:
        dpestim.set_composition_warning(True)
    _lr().fit(X, y)
    assert _fits(lambda: _lr().fit(X, y)) == [2.0]


def test_non_private_fits_are_not_recorded(registry, data):
    X, y = data
    _lr(float("inf")).fit(X, y)
    assert _fits(lambda: _lr().fit(X, y)) == []


def test_private_transformer_composes_with_a_fit(registry, data):
    X, y = data
    scaler = StandardScaler(bounds=(-2, 2), epsilon=0.5, random_state=0)
    scaler.fit(X)
    assert _fits(lambda: _lr().fit(X, y)) == [1.5]


def test_minimax_fits_compose_with_plain_fits_of_the_same_records(registry, data):
    """The minimax estimators register the rows as given (not their centred
    and rescaled rows, which were other records to the registry: a user
    trial's fifth fit said "up to 1 of them") with their whole epsilon_ (it
    said 0.95 where epsilon_ was 1)."""
    X, y = data
    a = np.arange(len(y)) % 2
    fair = dpestim.FairLogisticRegression(
        epsilon=1.0, classes=[0, 1], groups=[0, 1], random_state=0
    )
    assert _fits(lambda: fair.fit(X, y, sensitive_features=a)) == []
    assert 0.9 < fair.epsilon_ <= 1.0
    (stated,) = _fits(lambda: _lr(0.5).fit(X, y))
    # the warning states epsilon to three significant digits
    assert stated == pytest.approx(0.5 + fair.epsilon_, abs=0.006)


def test_fingerprints_agree_dense_sparse_and_float32():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 6)) * (rng.random((50, 6)) < 0.5)
    X[[4, 9]] = 0.0  # empty rows are not fingerprinted (common to any data)
    X[7] = X[8]  # a duplicated row counts once
    X[3, 0] = 1.0
    expected = np.unique(X[(X != 0).any(axis=1)], axis=0).shape[0]
    assert expected <= 47
    salt = np.array([3, 5], np.uint64)
    dense = _composition.fingerprints(X, salt)
    assert dense.size == expected
    assert np.array_equal(dense, _composition.fingerprints(sp.csr_matrix(X), salt))
    assert np.array_equal(dense, _composition.fingerprints(sp.csc_matrix(X), salt))
    X32 = X.astype(np.float32)
    assert np.array_equal(
        _composition.fingerprints(X32, salt),
        _composition.fingerprints(X32.astype(np.float64), salt),
    )
    # row order does not matter; changing one value changes one fingerprint
    assert np.array_equal(dense, _composition.fingerprints(X[::-1], salt))
    Y = X.copy()
    Y[3, 2] += 1e-9
    assert (
        np.intersect1d(dense, _composition.fingerprints(Y, salt)).size == expected - 1
    )
    # another salt gives other fingerprints
    assert not np.intersect1d(
        dense, _composition.fingerprints(X, np.array([4, 5], np.uint64))
    ).size


def test_large_fits_keep_a_bounded_sketch(registry, monkeypatch):
    # Bottom-k sketch: overlapping subsets of a large dataset still overlap.
    monkeypatch.setattr(_composition, "MAX_FINGERPRINTS", 64)
    rng = np.random.default_rng(1)
    X = rng.normal(size=(2000, 2))
    _composition.note_fit(X[:1500], 1.0, 0.0, label="a")
    with pytest.warns(PrivacyBudgetWarning, match="epsilon <= 2"):
        _composition.note_fit(X[500:], 1.0, 0.0, label="b")
    sizes = [np.load(p)["fingerprints"].size for p in registry.glob("*.npz")]
    assert sizes == [64, 64]


def _per_fit_reference(kept, limit, records):
    """The composition fit by fit (what the grouped totals must equal)."""
    eps, dlt = np.zeros(kept.size), np.zeros(kept.size)
    count = np.zeros(kept.size, dtype=np.int64)
    for fps, lim, e, d in records:
        if not _composition._overlaps(kept, limit, fps, lim):
            continue
        inside = np.isin(kept, fps) | (kept >= lim)
        eps, dlt, count = eps + e * inside, dlt + d * inside, count + inside
    if not count.any():
        return None
    return int(count.max()), float(eps.max()), float(dlt.max())


def test_registry_keeps_running_totals_per_sketch(registry, monkeypatch):
    """Fits of the same rows share one group (a running count and sums), so a
    loop of refits does not re-read every earlier fit; the grouped totals are
    the fit-by-fit basic composition, truncated sketches included."""
    monkeypatch.setattr(_composition, "MAX_FINGERPRINTS", 32)
    X = np.random.default_rng(3).normal(size=(120, 2))
    parts = [X[:40], X[:40], X[20:100], X[:40], X, X[20:100], X[100:], X[:10]]
    parts += [X[100:]] * 5
    path = _composition._registry()
    salt = _composition._salt(path)
    records = []
    for i, Z in enumerate(parts):
        eps, delta = 0.5 + i / 10, 1e-6 * (i + 1)
        found = _composition.fingerprints(Z, salt)
        limit = _composition._ALL if found.size <= 32 else found[32]
        kept = found[:32]
        got = _composition._composed(
            kept, limit, _composition._load(path).groups.values()
        )
        want = _per_fit_reference(kept, limit, records)
        assert (got is None) == (want is None)
        if want is not None:
            assert got[0] == want[0]
            assert got[1:] == pytest.approx(want[1:], rel=1e-12)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _composition.note_fit(Z, eps, delta, label=f"fit {i}")
        records.append((kept, limit, eps, delta))
    index = _composition._load(path)
    # one group per distinct set of rows, holding all their fits
    assert len(index.groups) == 5
    assert sorted(g[2] for g in index.groups.values()) == [1, 1, 2, 3, 6]
    # another process (a fresh cache) reads the files into the same totals
    _composition._loaded.pop(path)
    again = _composition._load(path)
    assert again.groups.keys() == index.groups.keys()
    for key, group in index.groups.items():
        assert again.groups[key][2] == group[2]
        assert again.groups[key][3:] == pytest.approx(group[3:], rel=1e-12)
    assert len(again.seen) == len(parts)
