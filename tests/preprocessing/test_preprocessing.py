"""Private preprocessing: sensitivity, events, pipeline guarantee, leaks."""

import math

import dp_accounting
import numpy as np
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder
from sklearn.preprocessing import StandardScaler as SkScaler

from dpestim import LogisticRegression
from dpestim.exceptions import PrivacyLeakWarning
from dpestim.model_selection import PrivacyBudget, workflow_guarantee
from dpestim.preprocessing import (
    PrivateRowNormClipper,
    RowNormClipper,
    StandardScaler,
    estimate_clip_norm,
    private_quantile,
)
from dpestim.privacy import compute_epsilon
from dpestim.privacy.ledger import accountable_event


def _stats(X, lo, hi):
    """The vector the scaler noises (NumPy restatement of its fit)."""
    mid, half = (lo + hi) / 2, (hi - lo) / 2
    Z = (np.clip(X, lo, hi) - mid) / half
    return np.concatenate([Z.sum(0), (Z * Z - 0.5).sum(0)])


def test_scaler_sensitivity_on_neighbours():
    rng = np.random.default_rng(5)
    d = 6
    lo, hi = -np.ones(d), np.full(d, 3.0)
    worst = 0.0
    for _ in range(200):
        X = rng.uniform(-5, 7, size=(20, d))
        worst = max(worst, np.linalg.norm(_stats(X, lo, hi) - _stats(X[1:], lo, hi)))
    extreme = np.array([np.where(rng.random(d) < 0.5, -9.0, 9.0)])
    worst = max(worst, np.linalg.norm(_stats(extreme, lo, hi)))
    assert worst <= math.sqrt(1.25 * d) + 1e-12


def test_scaler_limit_and_noise():
    rng = np.random.default_rng(6)
    X = rng.normal(2.0, 0.5, size=(4000, 3))
    exact = StandardScaler(bounds=(0, 4), epsilon=math.inf).fit(X)
    Xc = np.clip(X, 0, 4)
    np.testing.assert_allclose(exact.mean_, Xc.mean(0))
    np.testing.assert_allclose(exact.scale_, Xc.std(0))
    priv = StandardScaler(bounds=(0, 4), epsilon=1.0, random_state=0).fit(X)
    assert np.all(np.abs(priv.mean_ - 2.0) < 0.05)
    assert priv.epsilon_ <= 1.0
    assert priv.epsilon_ == compute_epsilon(priv.dp_event_, 1e-6)
    Xt = priv.transform(X)
    assert np.all(np.abs(Xt.mean(0)) < 0.2)
    with pytest.raises(ValueError, match="bounds"):
        StandardScaler(bounds=(1, 1)).fit(X)


def test_pipeline_guarantee_is_composition():
    rng = np.random.default_rng(7)
    X = rng.uniform(0, 10, size=(1000, 3))
    y = (X[:, 0] > 5).astype(int)
    pipe = make_pipeline(
        StandardScaler(bounds=(0, 10), epsilon=0.3, random_state=0),
        RowNormClipper(2.0),
        LogisticRegression(
            epsilon=0.5, classes=[0, 1], max_iter=2, batch_size=100, random_state=0
        ),
    ).fit(X, y)
    g = workflow_guarantee(pipe, delta=1e-5)
    events = [pipe[0].dp_event_, dp_accounting.NoOpDpEvent(), pipe[2].dp_event_]
    # the model's row-scale estimate (an exponential-mechanism draw) in the
    # accountant's terms, as the ledger composes it
    events = [accountable_event(e) for e in events]
    assert g.epsilon == compute_epsilon(dp_accounting.ComposedDpEvent(events), 1e-5)
    assert max(pipe[0].epsilon_, pipe[2].epsilon_) < g.epsilon < 0.8
    assert g.non_private == ()
    assert "Workflow guarantee" in str(g)


def test_non_private_step_flagged():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(300, 2))
    y = (X[:, 0] > 0).astype(int)
    ct = ColumnTransformer(
        [
            ("num", SkScaler(), [0]),
            ("cat", OneHotEncoder(categories=[[0.0, 1.0]]), [1]),
        ]
    )
    X[:, 1] = X[:, 1] > 0
    pipe = make_pipeline(ct, LogisticRegression(epsilon=1, classes=[0, 1], max_iter=1))
    pipe.fit(X, y)
    with pytest.warns(PrivacyLeakWarning, match="num") as rec:
        g = workflow_guarantee(pipe)
    assert len(rec) == 1  # the encoder with public categories is not flagged
    assert g.non_private == ("columntransformer/num",)


def test_private_quantile_and_clip_norm():
    rng = np.random.default_rng(9)
    values = rng.uniform(0, 10, size=20000)
    q, ev = private_quantile(values, 0.5, 2.0, (0.01, 100), random_state=0)
    assert abs(q - 5.0) < 0.5
    assert ev.epsilon == 2.0
    X = rng.normal(size=(5000, 3))
    budget = PrivacyBudget(1.0, 1e-5)
    with budget:
        c, _ = estimate_clip_norm(X, quantile=0.9, epsilon=0.5, random_state=0)
        clipper = PrivateRowNormClipper(quantile=0.5, epsilon=0.5, random_state=0)
        Xc = clipper.fit_transform(X)
    true90 = np.quantile(np.hypot(np.linalg.norm(X, axis=1), 1.0), 0.9)
    assert abs(c - true90) / true90 < 0.1
    assert np.linalg.norm(Xc, axis=1).max() <= clipper.max_norm_ * (1 + 1e-12)
    # two pure 0.5-DP draws: dp-accounting on their zCDP translation (2.9
    # here) or basic composition (1.0), whichever is smaller
    zcdp = compute_epsilon(
        accountable_event(
            dp_accounting.ComposedDpEvent([clipper.dp_event_, clipper.dp_event_])
        ),
        1e-5,
    )
    assert zcdp > 1.0
    assert budget.spent()[0] == 1.0
    with pytest.raises(ValueError, match="quantile"):
        private_quantile(values, 1.5, 1.0, (1, 2))
    with pytest.raises(ValueError, match="bounds"):
        private_quantile(values, 0.5, 1.0, (2, 1))
    # one value per record: a 2-D input (one record moving a whole row of
    # values, beyond the event's sensitivity) is refused before any charge
    spent = budget.spent()
    with budget, pytest.raises(ValueError, match=r"shape \(n_samples,\)"):
        private_quantile(np.ones((10, 3)), 0.5, 1.0, (0.01, 100))
    assert budget.spent() == spent


def test_scaler_bounds_of_the_wrong_length_are_refused_clearly():
    X = np.random.default_rng(0).uniform(size=(50, 3))
    with pytest.raises(ValueError, match=r"arrays of shape \(3,\)"):
        StandardScaler(bounds=([0, 0], [1, 1]), epsilon=1.0).fit(X)
