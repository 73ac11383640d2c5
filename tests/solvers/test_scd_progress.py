"""dp-scd / seq-dp-scd advance the verbose progress bar by the work done
(issue 24 item 10), and a chunked run is the same run as one call."""

import numpy as np
import pytest

from dpestim import LogisticRegression, Ridge
from dpestim.utils import _progress


@pytest.mark.parametrize("solver", ["dp-scd", "seq-dp-scd"])
@pytest.mark.parametrize("epsilon", [1.0, np.inf])
def test_bar_advances_in_chunks_and_the_model_is_unchanged(
    solver, epsilon, monkeypatch
):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4)) / 3
    y = X @ np.array([1.0, -1.0, 0.5, 0.0])
    updates = []
    original = _progress._FitProgress.update

    def record(self, n_steps):
        updates.append((n_steps, self.bar.total))
        original(self, n_steps)

    monkeypatch.setattr(_progress._FitProgress, "update", record)
    common = dict(solver=solver, epsilon=epsilon, random_state=0, y_bound=(-3, 3))
    quiet = Ridge(**common).fit(X, y)
    assert not updates
    loud = Ridge(verbose=1, **common).fit(X, y)
    np.testing.assert_array_equal(quiet.coef_, loud.coef_)
    np.testing.assert_array_equal(quiet.intercept_, loud.intercept_)
    total = updates[0][1]
    assert total == loud.n_iter_
    assert sum(n for n, _ in updates) == total
    assert len(updates) >= min(total, 10)  # many chunks, not one jump at the end


def test_multiclass_chunked_run_is_unchanged():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 3))
    y = np.argmax(X, axis=1)
    common = dict(solver="seq-dp-scd", classes=[0, 1, 2], random_state=0, max_iter=3)
    quiet = LogisticRegression(**common).fit(X, y)
    loud = LogisticRegression(verbose=1, **common).fit(X, y)
    np.testing.assert_array_equal(quiet.coef_, loud.coef_)
