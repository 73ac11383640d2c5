"""Fast calibration: tight, verified by the full accountant, and its disk cache."""

import json
import math

import dp_accounting as dpa
import pytest

from dpestim.privacy import (
    _disk_cache,
    _search,
    calibrate_noise,
    compute_epsilon,
    set_calibration_cache,
)
from dpestim.privacy import accounting as acc_mod


def _levels_event(q, levels):
    """adp-sgd-like: several Poisson-sampled Gaussian levels composed."""

    def make(s):
        return dpa.ComposedDpEvent(
            [
                dpa.SelfComposedDpEvent(
                    dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(s * a)), c
                )
                for a, c in levels
            ]
        )

    return make


def _sgd(q, steps):
    return lambda s: dpa.SelfComposedDpEvent(
        dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(s)), steps
    )


EVENTS = {
    "levels": (_levels_event(0.008, [(0.7, 50), (1.0, 300), (1.6, 900)]), "add"),
    "sgd-small-eps": (_sgd(0.004, 2000), "add"),
    "gaussian-replace": (dpa.GaussianDpEvent, "replace"),
    "full-batch": (
        lambda s: dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(s), 50),
        "add",
    ),
}
RELATIONS = {"add": "add_or_remove_one", "replace": "replace_one"}


@pytest.fixture(autouse=True)
def _fresh_caches(monkeypatch):
    monkeypatch.setattr(acc_mod, "_calibration_cache", type(acc_mod._epsilon_cache)())
    monkeypatch.setattr(acc_mod, "_epsilon_cache", type(acc_mod._epsilon_cache)())
    monkeypatch.setattr(acc_mod, "_order_cache", type(acc_mod._epsilon_cache)())


@pytest.mark.parametrize("name", sorted(EVENTS))
@pytest.mark.parametrize("epsilon,delta", [(0.05, 1e-7), (1.0, 1e-5), (30.0, 1e-5)])
def test_fast_rdp_calibration_is_the_full_accountants_root(name, epsilon, delta):
    make, rel = EVENTS[name]
    nb = RELATIONS[rel]
    noise = calibrate_noise(make, epsilon, delta, neighbouring=nb)
    # Verified by a fresh full dp_accounting accountant (all default orders).
    acc = dpa.rdp.RdpAccountant(neighboring_relation=acc_mod._NEIGHBOURING[nb]).compose(
        make(noise)
    )
    assert acc.get_epsilon(delta) <= epsilon
    # ... and tight: 0.05% less noise exceeds the budget on the full accountant.
    assert compute_epsilon(make(noise * (1 - 5e-4)), delta, "rdp", nb) > epsilon


def test_subset_of_orders_never_certifies_less_than_the_full_set():
    """The search's premise: fewer orders, never a smaller epsilon."""
    make = _levels_event(0.01, [(0.8, 100), (1.3, 400)])
    relation = acc_mod._NEIGHBOURING["add_or_remove_one"]
    for s in (0.5, 0.9, 1.7, 4.0, 20.0):
        full = compute_epsilon(make(s), 1e-5)
        for orders in (_search._COARSE, (2.0, 7.5, 40.0), _search._LARGE):
            assert _search.rdp_epsilon(make(s), 1e-5, relation, orders)[0] >= full


def test_windowed_search_is_the_coarse_orders_epsilon():
    """Three orders around the optimum give the epsilon of all coarse orders."""
    make = _levels_event(0.008, [(0.7, 50), (1.0, 300), (1.6, 900)])
    relation = acc_mod._NEIGHBOURING["add_or_remove_one"]
    coarse = sorted(_search._COARSE)
    f, state = _search._windowed(make, 1e-5, relation, coarse)
    # A sweep in both directions moves the window across the coarse orders.
    for s in (1.0, 3.0, 9.0, 0.4, 0.2, 1.3, 30.0, 0.6):
        expected = _search.rdp_epsilon(make(s), 1e-5, relation, coarse)
        assert f(s) == expected[0]
        assert state["order"] == expected[1]
        assert len(state["window"]) <= 3


def test_budget_met_only_by_the_kl_bound_at_small_orders_is_found():
    """Not unimodal in the order: at huge noise dp_accounting certifies
    epsilon = 0 at the smallest orders (its KL bound) while the large orders
    stay above a tiny budget; the windowed search alone would call it
    unreachable."""
    make = EVENTS["full-batch"][0]
    noise = calibrate_noise(make, 1e-300, 1e-5)
    assert compute_epsilon(make(noise), 1e-5) <= 1e-300
    assert compute_epsilon(make(noise * (1 - 5e-4)), 1e-5) > 1e-300


def test_fast_calibration_search_evaluates_few_orders(monkeypatch):
    """The cost of the search (orders times levels) stays a fraction of one full
    evaluation (156 orders): the windowed search, not all coarse orders."""
    evaluated = []
    inner = _search.rdp_epsilon

    def counting(event, delta, relation, orders):
        orders = list(orders)
        evaluated.append(len(orders))
        return inner(event, delta, relation, orders)

    monkeypatch.setattr(_search, "rdp_epsilon", counting)
    make = _levels_event(0.008, [(0.7, 50), (1.0, 300), (1.6, 900)])
    noise = calibrate_noise(make, 1.0, 1e-5)
    assert compute_epsilon(make(noise), 1e-5) <= 1.0
    assert sum(evaluated) <= 130, evaluated


def test_fast_calibration_uses_few_full_evaluations(monkeypatch):
    calls = []
    full = acc_mod._evaluate

    def counting(*args):
        calls.append(args)
        return full(*args)

    monkeypatch.setattr(acc_mod, "_evaluate", counting)
    make = _levels_event(0.008, [(0.7, 50), (1.0, 300), (1.6, 900)])
    calibrate_noise(make, 1.0, 1e-5)
    distinct = {repr(a[0]) for a in calls}
    assert len(distinct) <= 3


def test_pld_calibration_is_verified_and_nearly_tight():
    make = _sgd(0.01, 300)
    noise = calibrate_noise(make, 1.0, 1e-5, accountant="pld")
    fresh = dpa.pld.PLDAccountant().compose(make(noise)).get_epsilon(1e-5)
    assert fresh <= 1.0
    assert compute_epsilon(make(noise * 0.99), 1e-5, "pld") > 1.0


def test_unreachable_budget_still_raises():
    make = _sgd(1.0, 10**9)
    with pytest.raises(ValueError, match="cannot be met"):
        calibrate_noise(make, 1e-3, 1e-9)


# -- on-disk cache -----------------------------------------------------------------


@pytest.fixture
def cache_dir(tmp_path):
    set_calibration_cache(True, tmp_path)
    yield tmp_path / "calibration"
    set_calibration_cache(True, None)


def _calibrate(make, key="k"):
    return calibrate_noise(make, 1.0, 1e-5, cache_key=("test", key))


def _forget_memory():
    acc_mod._calibration_cache.clear()
    acc_mod._epsilon_cache.clear()
    acc_mod._order_cache.clear()


def _no_search(monkeypatch):
    searched = []

    def fail(*args, **kwargs):
        searched.append(args)
        return real(*args, **kwargs)

    real = acc_mod._search_noise
    monkeypatch.setattr(acc_mod, "_search_noise", fail)
    return searched


def test_disk_cache_hit_skips_the_search_and_reports_the_same(cache_dir, monkeypatch):
    make = _sgd(0.01, 500)
    first = _calibrate(make)
    (entry,) = cache_dir.glob("*.json")
    _forget_memory()
    searched = _no_search(monkeypatch)
    assert _calibrate(make) == first
    assert not searched
    # The reported epsilon comes with the entry and equals the accountant's.
    fresh = dpa.rdp.RdpAccountant().compose(make(first)).get_epsilon(1e-5)
    assert compute_epsilon(make(first), 1e-5) == fresh
    assert json.loads(entry.read_text())["payload"]["epsilon"] == fresh


def _rewrite(entry, mutate, *, fix_checksum):
    data = json.loads(entry.read_text())
    mutate(data)
    if fix_checksum:
        data["checksum"] = _disk_cache._checksum(data["key"], data["payload"])
    entry.write_text(json.dumps(data))


@pytest.mark.parametrize(
    "damage",
    [
        "garbage",
        "truncated",
        "tampered-noise",
        "foreign-key",
        "wrong-event",
        "over-budget",
        "not-a-number",
    ],
)
def test_stale_or_corrupted_entries_are_ignored(cache_dir, monkeypatch, damage):
    make = _sgd(0.01, 500)
    honest = _calibrate(make)
    (entry,) = cache_dir.glob("*.json")
    if damage == "garbage":
        entry.write_bytes(b"\x00\xffnot json")
    elif damage == "truncated":
        entry.write_text(entry.read_text()[:40])
    elif damage == "tampered-noise":  # checksum no longer matches
        _rewrite(entry, lambda d: d["payload"].update(noise=0.01), fix_checksum=False)
    elif damage == "foreign-key":  # e.g. another dp_accounting version
        _rewrite(
            entry,
            lambda d: d.update(key=d["key"].replace("0.", "9.", 1)),
            fix_checksum=True,
        )
    elif damage == "wrong-event":  # the solver's event changed since (stale)
        _rewrite(
            entry,
            lambda d: d["payload"].update(noise=0.5, event=repr(_sgd(0.02, 500)(0.5))),
            fix_checksum=True,
        )
    elif damage == "over-budget":
        _rewrite(entry, lambda d: d["payload"].update(epsilon=1.5), fix_checksum=True)
    else:
        _rewrite(entry, lambda d: d["payload"].update(noise="nan"), fix_checksum=True)
    _forget_memory()
    searched = _no_search(monkeypatch)
    assert _calibrate(make) == honest
    assert searched  # recomputed, not trusted
    # and the entry was rewritten with the honest value
    assert json.loads(entry.read_text())["payload"]["noise"] == honest


def test_dp_accounting_version_is_part_of_the_key(cache_dir, monkeypatch):
    make = _sgd(0.01, 500)
    _calibrate(make)
    _forget_memory()
    monkeypatch.setattr(_disk_cache, "_dp_accounting_version", lambda: "0.0-other")
    searched = _no_search(monkeypatch)
    _calibrate(make)
    assert searched
    assert len(list(cache_dir.glob("*.json"))) == 2


def test_cache_can_be_disabled(tmp_path, monkeypatch):
    set_calibration_cache(False, tmp_path)
    try:
        _calibrate(_sgd(0.01, 500))
        assert not (tmp_path / "calibration").exists()
    finally:
        set_calibration_cache(True, None)
    monkeypatch.setenv("DPESTIM_CALIBRATION_CACHE", "0")
    monkeypatch.setattr(_disk_cache, "_state", {"enabled": None, "directory": None})
    assert _disk_cache.cache_directory() is None
    monkeypatch.setenv("DPESTIM_CALIBRATION_CACHE", "1")
    monkeypatch.setenv("DPESTIM_CACHE_DIR", str(tmp_path))
    assert _disk_cache.cache_directory() == tmp_path / "calibration"


def test_unwritable_cache_directory_does_not_break_fitting(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    set_calibration_cache(True, blocker)  # a file, not a directory
    try:
        noise = _calibrate(_sgd(0.01, 500), key="unwritable")
    finally:
        set_calibration_cache(True, None)
    assert math.isfinite(noise)


def test_disk_cache_is_hit_by_a_fresh_process(tmp_path):
    """What a joblib worker does: a new process with the same environment reads
    the entry the parent wrote, and does not search again."""
    import os
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from dpestim.privacy import accounting\n"
        "from dpestim.solvers import DPSGD, ERMPlan\n"
        "if sys.argv[1] == 'child':\n"
        "    def no_search(*a, **k):\n"
        "        raise AssertionError('searched: the disk entry was not used')\n"
        "    accounting._search_noise = no_search\n"
        "plan = ERMPlan(n_samples=5000, n_features=10, n_outputs=1, loss=0,\n"
        "    alpha=1e-4, fit_intercept=True, clip_norm=1.0, max_iter=3,\n"
        "    batch_size=100, learning_rate=0.5)\n"
        "print(repr(DPSGD().calibrate(1.0, 1e-5, plan, accountant='rdp')))\n"
    )
    env = dict(
        os.environ, DPESTIM_CACHE_DIR=str(tmp_path), DPESTIM_CALIBRATION_CACHE="1"
    )

    def run(role):
        out = subprocess.run(
            [sys.executable, "-c", code, role],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        return out.stdout.strip().splitlines()[-1]

    parent = run("parent")
    assert list(tmp_path.rglob("*.json"))
    assert run("child") == parent
