"""PrivateThresholdOptimizer: sensitivity under both relations, budget, input checks.

Issue 24, items 1-3. The sensitivity claim is tested by brute force on random
neighbouring datasets under each relation; the noise actually drawn is
measured from the fit's own release (``_add_noise`` hook), and the reported
epsilon is compared with the epsilon of a Gaussian of that measured standard
deviation and the brute-force sensitivity.
"""

import math
import zlib

import numpy as np
import pytest
from dp_accounting import ComposedDpEvent, GaussianDpEvent, NonPrivateDpEvent
from dp_accounting.pld import privacy_loss_distribution as pld_lib
from scipy.special import expit
from sklearn.linear_model import LogisticRegression as SkLogisticRegression

from dpestim import (
    FairLogisticRegression,
    LinearSVC,
    LogisticRegression,
    MinimaxRegressor,
    Ridge,
)
from dpestim.exceptions import BudgetExceededError
from dpestim.model_selection import PrivacyBudget, PrivateSearchCV
from dpestim.postprocessing import PrivateThresholdOptimizer
from dpestim.postprocessing._threshold import HISTOGRAM_SENSITIVITY
from dpestim.privacy import compute_epsilon
from dpestim.privacy.ledger import composed_epsilon

DELTA = 1e-6
GROUPS = [0, 1]


def _data(n, seed):
    rng = np.random.default_rng(seed)
    a = (rng.random(n) < 0.4).astype(int)
    X = np.column_stack([rng.uniform(-1, 1, (n, 2)), a])
    y = (rng.random(n) < expit(3 * X[:, 0] + a - 0.5)).astype(int)
    return X, y, a


# Base estimators whose privacy_report() states each relation: the default
# dp-sgd is add-or-remove-one, dp-gd (Laplace noise) is replace-one. No
# private row scale (feature_scale=None): one charge per base fit, whose
# event is the model's dp_event_ (the scale's own charge is tested in
# tests/linear_model/test_private_scales.py).
# one charge per base fit: no row-scale estimate, no utility check
BASES = {
    "add_or_remove_one": dict(solver="dp-sgd", feature_scale=None, utility_check=None),
    "replace_one": dict(solver="dp-gd", feature_scale=None, utility_check=None),
}


def _base(relation, epsilon, X, y):
    return LogisticRegression(
        epsilon=epsilon, delta=DELTA, classes=[0, 1], max_iter=3, random_state=0,
        **BASES[relation],
    ).fit(X, y)  # fmt: skip


class _Capture:
    """Records the exact counts and the noise of every histogram release."""

    def __init__(self, monkeypatch):
        self.calls = []
        original = PrivateThresholdOptimizer._add_noise

        def spy(counts, noise):
            self.calls.append((counts.copy(), np.array(noise, copy=True)))
            return original(counts, noise)

        monkeypatch.setattr(PrivateThresholdOptimizer, "_add_noise", staticmethod(spy))


def _random_neighbour(rng, X, y, a, relation):
    """A random neighbouring dataset (add/remove one, or replace one)."""
    n = X.shape[0]
    new_x = np.array([*rng.uniform(-1, 1, 2), rng.integers(0, 2)])
    new_y, new_a = rng.integers(0, 2), int(new_x[2])
    i = rng.integers(0, n)
    if relation == "replace_one":
        X2, y2, a2 = X.copy(), y.copy(), a.copy()
        X2[i], y2[i], a2[i] = new_x, new_y, new_a
        return X2, y2, a2
    if rng.random() < 0.5:  # remove record i
        keep = np.arange(n) != i
        return X[keep], y[keep], a[keep]
    return (np.vstack([X, new_x]), np.append(y, new_y), np.append(a, new_a))


@pytest.mark.parametrize("relation", sorted(BASES))
def test_histogram_sensitivity_and_epsilon_by_brute_force(relation, monkeypatch):
    """Brute force: the histogram's L2 change over random neighbours is at most
    (and reaches) the assumed sensitivity; the noise drawn makes the reported
    epsilon the epsilon of a Gaussian with that true sensitivity."""
    X, y, a = _data(300, zlib.crc32(relation.encode()))
    base = _base(relation, 1.0, X, y)
    assert base.privacy_report().neighbouring == relation
    capture = _Capture(monkeypatch)
    rng = np.random.default_rng(zlib.crc32(b"neighbours" + relation.encode()))

    def histogram(Xd, yd, ad):
        PrivateThresholdOptimizer(
            base, epsilon=1.0, delta=DELTA, groups=GROUPS, n_bins=8, random_state=0
        ).fit(Xd, yd, sensitive_features=ad)
        return capture.calls[-1][0]

    h = histogram(X, y, a)
    diffs = [
        np.linalg.norm(h - histogram(*_random_neighbour(rng, X, y, a, relation)))
        for _ in range(40)
    ]
    true_sensitivity = max(diffs)
    assumed = HISTOGRAM_SENSITIVITY[relation]
    assert true_sensitivity <= assumed + 1e-12
    assert true_sensitivity == pytest.approx(assumed)  # the bound is reached

    # The noise actually drawn, measured on many cells.
    pp = PrivateThresholdOptimizer(
        base, epsilon=0.5, delta=DELTA, groups=GROUPS, n_bins=1500, random_state=1
    ).fit(X, y, sensitive_features=a)
    noise = capture.calls[-1][1]
    std = float(np.sqrt(np.mean(noise**2)))  # mean zero by construction
    assert pp.sensitivity_ == assumed
    assert std == pytest.approx(pp.noise_multiplier_ * assumed, rel=0.05)
    # Epsilon of a Gaussian of this std and the *true* sensitivity: RDP (what
    # dpestim reports) and the exact privacy profile (PLD, a lower value).
    hist_true = GaussianDpEvent(std / true_sensitivity)
    rdp_true = compute_epsilon(hist_true, DELTA, "rdp", "add_or_remove_one")
    assert rdp_true == pytest.approx(0.5, rel=0.06)
    exact = pld_lib.from_gaussian_mechanism(
        std, sensitivity=true_sensitivity, value_discretization_interval=1e-3
    ).get_epsilon_for_delta(DELTA)
    assert exact <= 0.5 * 1.06
    # The reported total is the composition with the true histogram event.
    total_true = compute_epsilon(
        ComposedDpEvent([base.dp_event_, hist_true]), pp.delta_, "rdp", relation
    )
    if "RDP" in pp.privacy_report().composition:
        assert pp.epsilon_ == pytest.approx(total_true, rel=0.06)
    else:  # basic composition of the two guarantees
        assert pp.epsilon_ == pytest.approx(base.epsilon_ + rdp_true, rel=0.06)


def test_replace_one_histogram_noise_is_sqrt2_larger(monkeypatch):
    """Same request, same calibration: replace-one draws sqrt(2) more noise."""
    X, y, a = _data(200, 5)
    capture = _Capture(monkeypatch)
    stds = {}
    for relation in sorted(BASES):
        PrivateThresholdOptimizer(
            _base(relation, 1.0, X, y), epsilon=0.5, delta=DELTA, groups=GROUPS,
            n_bins=10, random_state=3,
        ).fit(X, y, sensitive_features=a)  # fmt: skip
        stds[relation] = capture.calls[-1][1]
    # same seed, same standard normals: the ratio is exact
    np.testing.assert_allclose(
        stds["replace_one"], math.sqrt(2) * stds["add_or_remove_one"], rtol=1e-12
    )


# -- budget -----------------------------------------------------------------------


@pytest.mark.parametrize("relation", sorted(BASES))
def test_histogram_is_charged_to_the_active_budget(relation):
    X, y, a = _data(400, 11)
    budget = PrivacyBudget(20.0, 2 * DELTA)
    with budget:
        base = _base(relation, 0.8, X, y)
        pp = PrivateThresholdOptimizer(
            base, epsilon=0.5, delta=DELTA, groups=GROUPS, random_state=0
        ).fit(X, y, sensitive_features=a)
    records = budget.records
    assert len(records) == 2
    assert records[1][0] == GaussianDpEvent(pp.noise_multiplier_)
    assert records[1][1] == relation
    assert "PrivateThresholdOptimizer" in records[1][2]
    charged = composed_epsilon([r[0] for r in records], pp.delta_, "rdp", relation)
    assert charged >= pp.epsilon_ * (1 - 1e-9)

    # an unfitted base: its fit and the histogram are both charged
    budget = PrivacyBudget(20.0, 2 * DELTA)
    with budget:
        pp = PrivateThresholdOptimizer(
            LogisticRegression(
                epsilon=0.8, delta=DELTA, classes=[0, 1], max_iter=3, random_state=0,
                **BASES[relation],
            ),
            epsilon=0.5, delta=DELTA, groups=GROUPS, random_state=0,
        ).fit(X, y, sensitive_features=a)  # fmt: skip
    assert len(budget.records) == 2
    assert budget.records[0][0] == pp.estimator_.dp_event_
    charged = composed_epsilon(
        [r[0] for r in budget.records], pp.delta_, "rdp", relation
    )
    assert charged >= pp.epsilon_ * (1 - 1e-9)


def test_over_budget_optimizer_is_refused_before_the_histogram(monkeypatch):
    """The issue's case: PrivacyBudget(1.05) held the base fit and let the
    optimizer through; now the histogram is refused before it is computed."""
    X, y, a = _data(400, 12)
    computed = []
    original = PrivateThresholdOptimizer._histogram

    def spy(self, *args):
        computed.append(True)
        return original(self, *args)

    monkeypatch.setattr(PrivateThresholdOptimizer, "_histogram", spy)
    budget = PrivacyBudget(1.05, 2 * DELTA)
    with budget:
        base = _base("add_or_remove_one", 0.9, X, y)
        pp = PrivateThresholdOptimizer(
            base, epsilon=0.8, delta=DELTA, groups=GROUPS, random_state=0
        )
        with pytest.raises(BudgetExceededError, match="PrivateThresholdOptimizer"):
            pp.fit(X, y, sensitive_features=a)
    assert not computed
    assert not hasattr(pp, "positive_probability_")
    assert not hasattr(pp, "estimator_")
    assert len(budget.records) == 1  # the base fit only


def test_non_private_histogram_is_charged_as_non_private():
    X, y, a = _data(200, 13)
    base = _base("add_or_remove_one", 0.5, X, y)
    with PrivacyBudget(5.0, 1e-5) as budget:
        with pytest.raises(BudgetExceededError):
            PrivateThresholdOptimizer(base, epsilon=math.inf, groups=GROUPS).fit(
                X, y, sensitive_features=a
            )
    assert budget.records == []
    pp = PrivateThresholdOptimizer(base, epsilon=math.inf, groups=GROUPS).fit(
        X, y, sensitive_features=a
    )
    assert pp.epsilon_ == math.inf and pp.noise_multiplier_ == 0.0
    assert pp.dp_event_ == ComposedDpEvent([base.dp_event_, NonPrivateDpEvent()])


# -- the estimator is checked before any data is read -----------------------------


class _Untouchable:
    """Stands for X, y or sensitive_features: any use fails the test."""

    def __getattr__(self, name):
        raise AssertionError(f"data was read ({name})")

    def __len__(self):
        raise AssertionError("data was read (len)")

    def __array__(self, *args, **kwargs):
        raise AssertionError("data was read (__array__)")


@pytest.mark.parametrize(
    "estimator",
    [
        Ridge(epsilon=1.0),
        MinimaxRegressor(epsilon=1.0),
        SkLogisticRegression(),
        LogisticRegression,  # the class, not an instance
        PrivateThresholdOptimizer(LogisticRegression()),
        PrivateSearchCV(Ridge(), {"alpha": [1e-3, 1e-2]}),
    ],
    ids=lambda e: getattr(e, "__name__", type(e).__name__),
)
def test_rejects_anything_but_a_dpestim_classifier_before_reading_data(estimator):
    pp = PrivateThresholdOptimizer(estimator, groups=GROUPS)
    with pytest.raises(TypeError, match="estimator must be a dpestim classifier"):
        pp.fit(_Untouchable(), _Untouchable(), sensitive_features=_Untouchable())


def test_rejects_a_multiclass_request_before_reading_data():
    pp = PrivateThresholdOptimizer(LogisticRegression(classes=[0, 1, 2]))
    with pytest.raises(ValueError, match="binary classifier"):
        pp.fit(_Untouchable(), _Untouchable(), sensitive_features=_Untouchable())


def test_rejects_mismatched_lengths_before_the_charge():
    X, y, a = _data(100, 14)
    base = _base("add_or_remove_one", 0.5, X, y)
    with PrivacyBudget(5.0, 1e-5) as budget:
        with pytest.raises(ValueError, match="sensitive_features must have one"):
            PrivateThresholdOptimizer(base, groups=GROUPS).fit(
                X, y, sensitive_features=a[:-1]
            )
    assert budget.records == []


def test_accepts_every_kind_of_dpestim_classifier():
    X, y, a = _data(300, 15)
    common = dict(epsilon=1.0, delta=DELTA, classes=[0, 1], random_state=0)
    for base in (
        LinearSVC(max_iter=3, **common),  # decision_function only
        FairLogisticRegression(groups=GROUPS, **common),
        PrivateSearchCV(
            LogisticRegression(max_iter=2, **common), {"alpha": [1e-3, 1e-2]},
            epsilon=1.0, delta=DELTA, n_candidates=2, random_state=0,
        ),
    ):  # fmt: skip
        pp = PrivateThresholdOptimizer(
            base, epsilon=0.5, delta=DELTA, groups=GROUPS, n_bins=10, random_state=0
        ).fit(X, y, sensitive_features=a)
        assert set(np.unique(pp.predict(X, sensitive_features=a))) <= {0, 1}
        assert math.isfinite(pp.epsilon_)


def test_auto_bins_follow_the_public_rule():
    """``n_bins="auto"``: ``clip(round(sqrt(n / (G s))), 2, 10)`` from public
    quantities (a user trial: 50 bins left German credit's cells below one
    noise standard deviation, accuracy 0.747 -> 0.577); an int is kept."""
    from dpestim.postprocessing._threshold import MAX_AUTO_BINS

    pp = PrivateThresholdOptimizer(LogisticRegression(classes=[0, 1]))
    assert pp.n_bins == "auto"
    assert pp._resolve_n_bins(700, 2, 21.59) == 4  # German at epsilon 0.2
    assert pp._resolve_n_bins(32_561, 2, 21.59) == MAX_AUTO_BINS  # Adult
    assert pp._resolve_n_bins(10, 5, 21.59) == 2  # the floor
    assert pp._resolve_n_bins(700, 2, 0.0) == MAX_AUTO_BINS  # epsilon = inf
    assert pp.set_params(n_bins=37)._resolve_n_bins(700, 2, 21.59) == 37
