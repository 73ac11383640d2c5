"""noisy-SGDA's primal step shrinks when a step's noise dominates (small n)."""

import math

import pytest

from dpestim.solvers import NoisySGDA
from dpestim.solvers.saddle import sgda


class _Plan:
    def __init__(self, n, d):
        self.n_samples, self.n_features = n, d


def test_step_is_damped_only_where_the_noise_dominates():
    # Adult-sized plan (30,000 rows, 108 features, B 256, sigma 2.4): no change
    assert sgda._damped_step(0.5, 2.43, _Plan(32561, 108), 256) == 0.5
    # 1,000 rows, 100 features, B 32, sigma 6: ratio 6 sqrt(101) / 32 = 1.9
    small = sgda._damped_step(0.5, 6.0, _Plan(1000, 100), 32)
    ratio = 6.0 * math.sqrt(101) / 32
    assert small == pytest.approx(0.5 * (sgda.SADDLE_NOISE_TO_SIGNAL / ratio) ** 2)
    assert small < 0.02
    # more features than rows: n dimensions are counted
    wide = sgda._damped_step(0.5, 6.0, _Plan(200, 5000), 32)
    assert wide == sgda._damped_step(0.5, 6.0, _Plan(200, 200), 32)


def test_the_auto_step_is_the_damped_one_and_an_explicit_step_is_kept(monkeypatch):
    """At 400 rows the auto fit is the fit with its damped step given
    explicitly (same seed: the same model); 0.5 given explicitly is kept."""
    import warnings

    import numpy as np

    from dpestim import MinimaxRegressor

    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 30))
    y = X[:, 0] + 0.1 * rng.normal(size=400)
    a = (X[:, 1] > 0).astype(int)

    def fit(**kw):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return MinimaxRegressor(
                epsilon=1.0, groups=[0, 1], random_state=0, **kw
            ).fit(X, y, sensitive_features=a)

    steps = []
    real = sgda._damped_step
    monkeypatch.setattr(
        sgda, "_damped_step", lambda *args: steps.append(real(*args)) or steps[-1]
    )
    auto = fit()
    assert len(steps) == 1 and steps[0] < 0.05
    same = fit(solver=NoisySGDA(learning_rate=steps[0]))
    assert len(steps) == 1  # an explicit step is not damped
    np.testing.assert_array_equal(same.coef_, auto.coef_)
    undamped = fit(solver=NoisySGDA(learning_rate=0.5))
    assert not np.array_equal(undamped.coef_, auto.coef_)
