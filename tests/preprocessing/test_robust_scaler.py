"""The private RobustScaler: limit, accuracy, events, sensitivity, bad input."""

import math
import warnings
import zlib

import dp_accounting
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import RobustScaler as SkRobust

from dpestim import Ridge, UtilityWarning
from dpestim.model_selection import PrivacyBudget, workflow_guarantee
from dpestim.preprocessing import RobustScaler
from dpestim.preprocessing._grid_quantile import bin_utility, signed_edges
from dpestim.solvers.saddle import ExponentialMechanismDpEvent


def _columns(n, seed):
    """A longitude-like, a dollar-like, a binary and a mostly-zero column."""
    rng = np.random.default_rng(zlib.crc32(seed.encode()))
    return np.column_stack(
        [
            rng.normal(-120.0, 2.0, n),
            rng.lognormal(8.0, 1.0, n),
            (rng.random(n) < 0.6).astype(float),
            (rng.random(n) < 0.1).astype(float),
        ]
    )


@pytest.mark.parametrize("centering", [True, False])
@pytest.mark.parametrize("scaling", [True, False])
@pytest.mark.parametrize("qr", [(25.0, 75.0), (10.0, 90.0)])
def test_epsilon_inf_is_scikit_learns_robust_scaler(centering, scaling, qr):
    X = _columns(3000, "inf")
    ours = RobustScaler(
        epsilon=math.inf, with_centering=centering, with_scaling=scaling,
        quantile_range=qr,
    ).fit(X)  # fmt: skip
    ref = SkRobust(with_centering=centering, with_scaling=scaling, quantile_range=qr)
    ref.fit(X)
    np.testing.assert_allclose(ours.transform(X), ref.transform(X), rtol=1e-12)
    np.testing.assert_allclose(ours.inverse_transform(ours.transform(X)), X)
    assert isinstance(ours.dp_event_, (dp_accounting.NonPrivateDpEvent,
                                       dp_accounting.NoOpDpEvent))  # fmt: skip


def test_private_estimates_are_close_and_keep_binary_columns_sane():
    X = _columns(20000, "private")
    ref = SkRobust().fit(X)
    sc = RobustScaler(epsilon=1.0, random_state=0).fit(X)
    assert sc.centre_stages_ == 4
    # the centre within 5% of the IQR, the IQR within 10% (the grid's bins are
    # about 9% wide; the staged centre brings -120 to within its resolution)
    assert abs(sc.center_[0] - ref.center_[0]) < 0.05 * ref.scale_[0]
    np.testing.assert_allclose(sc.scale_[:2], ref.scale_[:2], rtol=0.1)
    # binary 0/1 columns: an IQR of 1 (60% ones) and a zero IQR -> scale 1
    assert sc.scale_[2] == pytest.approx(1.0, rel=0.1) and sc.scale_[3] == 1.0
    Z = sc.transform(X)
    assert np.abs(Z[:, 2:]).max() <= 1.1
    assert np.median(np.abs(Z[:, :2]), axis=0).max() < 1.0


def test_event_is_the_composition_of_the_draws_inside_epsilon():
    X = _columns(20000, "event")
    for kw, per_feature in (({}, 4 + 2), ({"with_centering": False}, 2),
                            ({"with_scaling": False}, 4),
                            ({"centre_stages": 1}, 1 + 2)):  # fmt: skip
        sc = RobustScaler(epsilon=0.8, random_state=0, **kw).fit(X)
        draws = sc.dp_event_.events
        assert len(draws) == X.shape[1] * per_feature
        assert all(isinstance(e, ExponentialMechanismDpEvent) for e in draws)
        assert sum(e.epsilon for e in draws) == pytest.approx(0.8)
        assert sum(e.epsilon for e in draws) <= 0.8 * (1 + 1e-12)
        assert (sc.epsilon_, sc.delta_) == (0.8, 0.0)
    budget = PrivacyBudget(1.0, 1e-5)
    with budget:
        RobustScaler(epsilon=0.5, random_state=0).fit(X)
    # the budget composes the draws at its delta (zCDP) or by basic composition
    assert 0 < budget.spent()[0] <= 0.5 + 1e-12


@pytest.mark.parametrize("q", [0.5, 0.25, 0.75, 0.1])
def test_each_draw_has_sensitivity_one_on_neighbouring_datasets(q):
    """A draw's utility (the values of ``x - c`` for the released ``c``)
    moves by at most 1 in every bin when one row is added, removed or
    replaced: the exponential mechanism's ``epsilon / draws`` is then each
    draw's guarantee."""
    rng = np.random.default_rng(zlib.crc32(f"sens{q}".encode()))
    edges = signed_edges()
    worst = 0.0
    for _ in range(200):
        x = rng.choice([rng.normal(size=40) * 10.0 ** rng.integers(-3, 4),
                        rng.integers(0, 2, 40).astype(float)])  # fmt: skip
        c = float(rng.normal() * np.abs(x).max())
        u = bin_utility(x - c, q, edges)
        i = rng.integers(40)
        new = rng.normal() * 10.0 ** rng.integers(-3, 4)
        removed = np.delete(x, i)
        replaced = x.copy()
        replaced[i] = new
        for other in (removed, np.append(x, new), replaced):
            worst = max(worst, np.abs(bin_utility(other - c, q, edges) - u).max())
    assert worst <= 1.0 + 1e-9


def test_too_little_budget_warns_with_public_quantities_only():
    msgs = []
    for seed in ("a", "b"):
        X = _columns(500, seed) * (1.0 if seed == "a" else 7.0)
        with pytest.warns(UtilityWarning) as rec:
            sc = RobustScaler(epsilon=0.05, random_state=0).fit(X)
        msgs.append([str(w.message) for w in rec if w.category is UtilityWarning])
        assert sc.centre_stages_ == 1
    assert msgs[0] == msgs[1]  # n, d and epsilon only: nothing from the data
    with warnings.catch_warnings():
        warnings.simplefilter("error", UtilityWarning)
        RobustScaler(epsilon=1.0, random_state=0).fit(_columns(20000, "quiet"))


@pytest.mark.parametrize(
    "kw,exc,match",
    [
        ({"quantile_range": (75, 25)}, ValueError, "quantile_range"),
        ({"quantile_range": (0, 50)}, ValueError, "quantile_range"),
        ({"quantile_range": "iqr"}, ValueError, "quantile_range"),
        ({"epsilon": 0.0}, ValueError, "epsilon"),
        ({"centre_stages": 5}, ValueError, "centre_stages"),
    ],
)
def test_bad_parameters_name_themselves(kw, exc, match):
    with pytest.raises(exc, match=match):
        RobustScaler(**kw).fit(_columns(100, "bad"))


def test_bad_input():
    X = _columns(100, "input")
    with pytest.raises(TypeError, match="[Ss]parse"):
        RobustScaler().fit(sp.csr_matrix(X))
    X[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        RobustScaler().fit(X)


def test_raw_columns_pipeline_and_its_guarantee():
    """Columns in their own units (a coordinate, dollars): the scaler first,
    then Ridge; the pipeline's guarantee composes both fits."""
    rng = np.random.default_rng(zlib.crc32(b"pipe"))
    n = 8000
    X = np.column_stack([rng.normal(-120, 2, n), rng.lognormal(8, 0.5, n)])
    y = 0.5 * (X[:, 0] + 120) + 0.001 * (X[:, 1] - 3000) + rng.normal(size=n)
    pipe = make_pipeline(
        RobustScaler(epsilon=0.2, random_state=0),
        Ridge(epsilon=0.8, y_bound=(-10, 10), random_state=0),
    ).fit(X, y)
    assert pipe.score(X, y) > 0.5
    g = workflow_guarantee(pipe, delta=1e-5)
    assert g.epsilon <= 1.0 + 1e-9 and g.non_private == ()
    ct = ColumnTransformer([("num", RobustScaler(epsilon=0.2, random_state=0), [0])],
                           remainder="passthrough")  # fmt: skip
    ct.fit(X)
    assert workflow_guarantee(ct).epsilon == pytest.approx(0.2)
