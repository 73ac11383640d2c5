"""verbose progress bars change nothing; reports and plan lines read correctly."""

import zlib

import dp_accounting as dpa
import numpy as np
import pytest

from dpestim import LogisticRegression, Ridge
from dpestim.privacy.report import describe_event
from dpestim.solvers import ADPAdaGrad


def _data(n=300, d=4):
    rng = np.random.default_rng(zlib.crc32(b"verbose-report"))
    X = rng.normal(size=(n, d)) / 3
    y = (X[:, 0] + 0.3 * rng.normal(size=n) > 0).astype(int)
    return X, y


@pytest.mark.parametrize(
    "solver", ["dp-sgd", "adp-sgd", "adp-adagrad", "dp-lssgd", ADPAdaGrad(beta=8.0)]
)
def test_verbose_gives_bit_identical_coefficients(solver, capsys):
    X, y = _data()
    # 1 / q = 300 / 70 is not an integer: epoch-sized pieces of the run must
    # still respect adp-adagrad's restart period (ceil(1 / q) steps)
    kw = dict(solver=solver, classes=[0, 1], batch_size=70, max_iter=3, random_state=7)
    quiet = LogisticRegression(**kw).fit(X, y)
    loud = LogisticRegression(**kw, verbose=2).fit(X, y)
    np.testing.assert_array_equal(quiet.coef_, loud.coef_)
    np.testing.assert_array_equal(quiet.intercept_, loud.intercept_)
    err = capsys.readouterr().err
    name = getattr(solver, "name", solver)
    assert f"{name} fit" in err and "100%" in err  # the bar ran to the end
    # the per-epoch loss is printed, and marked non-private
    assert "training loss" in err and "NON-PRIVATE" in err


def test_verbose_1_prints_no_loss(capsys):
    X, y = _data()
    LogisticRegression(classes=[0, 1], batch_size=40, max_iter=2, verbose=1).fit(X, y)
    captured = capsys.readouterr()
    assert "training loss" not in captured.err + captured.out
    assert "[LogisticRegression] solver=dp-sgd" in captured.out


def test_pure_dp_plan_line_and_report_state_ignored_delta(capsys):
    X, y = _data()
    est = LogisticRegression(
        solver="dp-nag-opt", classes=[0, 1], max_iter=20, delta=1e-5, verbose=1
    ).fit(X, y)
    out = capsys.readouterr().out
    assert "delta=0 (pure DP; delta=1e-05 ignored)" in out
    text = str(est.privacy_report())
    assert "pure 1-differential privacy (delta = 0; the delta=1e-05" in text
    assert "ignored" in text


def test_smd_sco_plan_line_prints_steps_run(capsys):
    X, y = _data(n=500)
    est = LogisticRegression(
        utility_check=None, solver="dp-smd-sco", classes=[0, 1], verbose=1
    ).fit(X, y)
    out = capsys.readouterr().out
    assert f"steps={est.n_iter_} " in out
    text = str(est.privacy_report())
    count = est.dp_event_.count
    assert count != est.n_iter_
    assert f"steps       : {est.n_iter_} (the DpEvent composes {count}" in text


def test_seeded_random_state_is_flagged_in_report():
    X, y = _data()
    seeded = LogisticRegression(classes=[0, 1], max_iter=1, random_state=3).fit(X, y)
    # max_iter "auto": an explicit max_iter far from it adds a UtilityWarning;
    # no utility check either: fresh OS entropy (random_state=None) makes its
    # noisy release warn in about 1 fit of 100 on these 300 rows, a flaky test
    fresh = LogisticRegression(classes=[0, 1], utility_check=None).fit(X, y)
    assert "random_state=3 is an integer seed" in str(seeded.privacy_report())
    assert "warnings during fit: none" in str(fresh.privacy_report())
    gen = np.random.default_rng(0)
    ridge = Ridge(max_iter=1, random_state=gen).fit(X, y.astype(float))
    assert "integer seed" not in str(ridge.privacy_report())


def test_describe_event_summarises_long_compositions():
    short = dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(1.0), 3)
    assert describe_event(short) == repr(short)
    schedule = dpa.ComposedDpEvent(
        [dpa.LaplaceDpEvent(10.0 - 0.01 * t) for t in range(108)]
    )
    text = describe_event(schedule)
    assert text.startswith("ComposedDpEvent of 108 events: 108 x LaplaceDpEvent")
    assert "noise_multiplier first 10, last 8.93" in text
    assert len(text) < 200
    repeated = dpa.ComposedDpEvent(
        [dpa.GaussianDpEvent(2.0)] * 60 + [dpa.LaplaceDpEvent(1.0)] * 40
    )
    text = describe_event(repeated)
    assert "60 x GaussianDpEvent(noise_multiplier=2.0)" in text
    assert "40 x LaplaceDpEvent(noise_multiplier=1.0)" in text


def test_dp_scd_progress_per_class_is_bit_identical(monkeypatch):
    from dpestim.utils import _progress

    updates = []
    original = _progress._FitProgress.update

    def spy(self, n_steps):
        updates.append(n_steps)
        original(self, n_steps)

    monkeypatch.setattr(_progress._FitProgress, "update", spy)
    X, _ = _data()
    y3 = np.digitize(X[:, 1], [-0.1, 0.1])  # three classes
    kw = dict(solver="dp-scd", classes=[0, 1, 2], max_iter=2, random_state=5)
    quiet = LogisticRegression(**kw).fit(X, y3)
    assert updates == []
    loud = LogisticRegression(**kw, verbose=1).fit(X, y3)
    np.testing.assert_array_equal(quiet.coef_, loud.coef_)
    # about one update per epoch within each class (issue 24: the bar moves
    # during the fit), adding up to the whole run
    assert sum(updates) == loud.n_iter_
    assert len(updates) >= 2 * 3
