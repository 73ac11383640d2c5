"""dp_accounting's absl log lines are silenced only while dpestim accounts."""

import logging

import dp_accounting as dpa
import numpy as np
import pytest
from absl import logging as absl_logging

from dpestim import LogisticRegression
from dpestim.privacy import compute_epsilon
from dpestim.privacy._quiet import quiet_accounting

# RDP at fractional orders fails to converge for this event and dp_accounting
# logs one absl warning per excluded order.
NOISY_EVENT = dpa.SelfComposedDpEvent(
    dpa.PoissonSampledDpEvent(0.3, dpa.GaussianDpEvent(0.3)), 10
)


class _Collect(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.records = []

    def emit(self, record):
        self.records.append(record)


def _state(name):
    logger = logging.getLogger(name)
    return (logger.level, list(logger.handlers), list(logger.filters), logger.propagate)


@pytest.fixture(autouse=True)
def _absl_warnings_on():
    # another module (a benchmark script imported by a test) may have raised
    # the absl level; these tests need dp_accounting's warnings to be emitted
    absl = logging.getLogger("absl")
    level = absl.level
    absl.setLevel(logging.WARNING)
    yield
    absl.setLevel(level)


def _with_user_handler(run):
    root = logging.getLogger()
    handler = _Collect()
    root.addHandler(handler)
    before = {name: _state(name) for name in ("", "absl")}
    try:
        run()
    finally:
        root.removeHandler(handler)
    root.addHandler(handler)  # restore the user's set-up to compare states
    after = {name: _state(name) for name in ("", "absl")}
    root.removeHandler(handler)
    return handler.records, before, after


def test_unwrapped_accountant_does_log():
    # The reproducer is live: without the wrapper dp_accounting logs.
    records, _, _ = _with_user_handler(
        lambda: dpa.rdp.RdpAccountant().compose(NOISY_EVENT).get_epsilon(1e-5)
    )
    assert any("failed to converge" in r.getMessage() for r in records)


def test_fit_prints_no_third_party_log_lines(capfd):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3)) / 3
    y = (X[:, 0] > 0).astype(int)

    def fit():
        compute_epsilon(NOISY_EVENT, 1e-5)
        LogisticRegression(epsilon=2.0, batch_size=120, max_iter=3, classes=[0, 1]).fit(
            X, y
        )

    records, before, after = _with_user_handler(fit)
    assert records == []
    assert before == after  # the user's logging configuration is untouched
    captured = capfd.readouterr()
    assert "absl" not in captured.err + captured.out
    assert "failed to converge" not in captured.err + captured.out


def test_other_absl_records_pass_and_filter_is_removed():
    def run():
        with quiet_accounting():
            with quiet_accounting():  # re-entrant
                absl_logging.warning("user message through absl")
            assert logging.getLogger("absl").filters  # still inside
        assert logging.getLogger("absl").filters == []

    records, before, after = _with_user_handler(run)
    assert [r.getMessage() for r in records] == ["user message through absl"]
    assert before == after
