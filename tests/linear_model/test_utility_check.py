"""The classifiers' private utility check (``utility_check``, ``lift_``)."""

import math
import warnings
import zlib

import dp_accounting
import numpy as np
import pytest
from scipy import stats

from dpestim import LinearSVC, LogisticRegression, Ridge, UtilityWarning
from dpestim.linear_model._utility_check import (
    CHECK_CONFIDENCE,
    CHECK_MARGIN,
    CHECK_NOISE,
    CHECK_SHARE_CAP,
    LIFT_SENSITIVITY,
    check_epsilon,
    check_fires,
    lift_scale,
    lift_statistic,
)


def _seed(name):
    return zlib.crc32(name.encode())


def _laplace_events(event):
    """The Laplace events of a (composed) ``DpEvent``, flattened."""
    if isinstance(event, dp_accounting.ComposedDpEvent):
        return [e for part in event.events for e in _laplace_events(part)]
    return [event] if isinstance(event, dp_accounting.LaplaceDpEvent) else []


def _fit(est, X, y):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X, y)
    return est, [str(w.message) for w in caught if w.category is UtilityWarning]


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("n_classes", [2, 3, 5])
def test_lift_statistic_sensitivity_on_random_neighbours(n_classes, weighted):
    """``|D(x) - D(x')| <= LIFT_SENSITIVITY`` for a fixed model, both relations."""
    rng = np.random.default_rng(_seed(f"lift-sensitivity-{n_classes}-{weighted}"))
    worst = {"add_or_remove_one": 0.0, "replace_one": 0.0}
    for _ in range(300):
        # class weights over their largest (released or public: fixed)
        w = rng.random(n_classes) if weighted else None
        if w is not None:
            w = w / w.max()
        n = int(rng.integers(1, 40))
        # a fixed model: any function of the row; here a random lookup
        predicted = rng.integers(0, n_classes, size=n + 1)
        codes = rng.integers(0, n_classes, size=n + 1)
        if rng.random() < 0.5:  # skewed label sets reach the max-count ties
            codes = np.where(rng.random(n + 1) < 0.7, 0, codes)
        full = lift_statistic(predicted, codes, n_classes, w)
        i = int(rng.integers(0, n + 1))
        keep = np.arange(n + 1) != i
        removed = lift_statistic(predicted[keep], codes[keep], n_classes, w)
        worst["add_or_remove_one"] = max(
            worst["add_or_remove_one"], abs(full - removed)
        )
        replaced_codes, replaced_pred = codes.copy(), predicted.copy()
        replaced_codes[i] = rng.integers(0, n_classes)
        replaced_pred[i] = rng.integers(0, n_classes)
        replaced = lift_statistic(replaced_pred, replaced_codes, n_classes, w)
        worst["replace_one"] = max(worst["replace_one"], abs(full - replaced))
    for relation, seen in worst.items():
        assert seen <= LIFT_SENSITIVITY[relation] + 1e-12
        # the bound is attained, or nearly with random weights (the test can
        # see a wrong sensitivity)
        assert seen >= (0.9 if weighted else 1.0) * LIFT_SENSITIVITY[relation]


def test_lift_statistic_by_hand():
    # 4 correct, largest class 3 (class 1)
    assert lift_statistic([0, 1, 1, 2, 0], [0, 1, 1, 2, 1], 3) == 4 - 3
    assert lift_statistic([], np.array([], dtype=int), 2) == 0


def test_check_epsilon_buys_the_noise_target_within_the_cap():
    # large n * epsilon: the target's epsilon, below the cap
    eps = check_epsilon(1.0, 100_000, "add_or_remove_one")
    assert eps == pytest.approx(1.0 / (CHECK_NOISE * 100_000))
    assert eps < CHECK_SHARE_CAP * 1.0
    assert check_epsilon(1.0, 100_000, "replace_one") == pytest.approx(2 * eps)
    # small n: the cap
    assert check_epsilon(0.5, 300, "add_or_remove_one") == CHECK_SHARE_CAP * 0.5
    assert check_epsilon(0.5, 300, "add_or_remove_one", 0.01) == 0.01 * 0.5


def test_check_fires_below_the_margin_plus_half_the_noise_scale():
    for scale in (0.005, 0.05, 0.5):
        edge = CHECK_MARGIN + CHECK_CONFIDENCE * scale
        assert check_fires(edge - 1e-9, scale) and not check_fires(edge, scale)
    assert CHECK_MARGIN == 0.01 and CHECK_CONFIDENCE == 0.25


def _learnable(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    y = (X[:, 0] + 0.3 * rng.normal(size=n) > 0).astype(int)
    return X, y


def _noise_labels(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    y = (rng.random(n) < 0.2).astype(int)  # independent of X, 80% majority
    return X, y


@pytest.mark.parametrize("Est", [LogisticRegression, LinearSVC])
def test_check_is_in_the_event_and_the_budget(Est):
    X, y = _learnable(4000, _seed("check-event"))
    est, warned = _fit(Est(epsilon=1.0, classes=[0, 1], random_state=0), X, y)
    eps_c = check_epsilon(1.0, 4000, "add_or_remove_one")
    laplace = _laplace_events(est.dp_event_)
    assert any(e.noise_multiplier == pytest.approx(1.0 / eps_c) for e in laplace)
    assert est.epsilon_ <= 1.0
    assert "utility check" in str(est.privacy_report())
    # a learnable problem: a large released lift and no warning
    assert est.lift_ > 0.2
    assert warned == []


@pytest.mark.parametrize("Est", [LogisticRegression, LinearSVC])
def test_check_warns_on_a_fit_no_better_than_the_majority(Est):
    X, y = _noise_labels(20_000, _seed("check-noise"))
    est, warned = _fit(Est(epsilon=1.0, classes=[0, 1], random_state=0), X, y)
    assert est.lift_ < 0.01
    assert len(warned) == 1 and "private check" in warned[0]


def test_a_check_too_noisy_to_tell_says_so():
    """Where the Laplace scale exceeds NOISY_CHECK_SCALE the warning does not
    quote the release (it read -1227448.4% at epsilon 1e-6 in a user trial)
    and says the check cannot tell; below it, the release is quoted."""
    from dpestim.linear_model._utility_check import NOISY_CHECK_SCALE

    X, y = _learnable(200, _seed("check-too-noisy"))
    est, _ = _fit(LogisticRegression(epsilon=1.0, classes=[0, 1], random_state=0), X, y)
    Y = np.where(y == 1, 1.0, -1.0)[:, None]
    tiny = 1e-6
    assert lift_scale(tiny, 200, "add_or_remove_one") > NOISY_CHECK_SCALE
    # the verdict is as random as the release: the first seed whose draw fires
    for seed in range(20):
        rng = np.random.default_rng(seed)
        warned = est._utility_check(X, Y, tiny, "add_or_remove_one", rng, [], None)
        if warned:
            break
    (message,) = warned
    assert "too noisy to tell" in message and "%" not in message
    assert abs(est.lift_) <= 1  # the release clipped to the lift's range
    # the first advice is the one a larger epsilon does not fix
    assert message.index("large offset or scale") < message.index("more rows")


def test_released_lift_is_clipped_to_its_range_and_a_hopeless_check_warns():
    """A 1-row fit released +2011% unclipped (user trial 21) and did not
    warn; the release is clipped to [-1, 1] (post-processing), so where the
    Laplace scale exceeds about 4 every fit warns."""
    X, y = _learnable(200, _seed("check-clipped"))
    est, _ = _fit(LogisticRegression(epsilon=1.0, classes=[0, 1], random_state=0), X, y)
    Y = np.where(y == 1, 1.0, -1.0)[:, None]
    tiny = 1e-4  # Laplace scale 50 at n = 200
    for seed in range(20):
        rng = np.random.default_rng(seed)
        assert est._utility_check(X, Y, tiny, "add_or_remove_one", rng, [], None)
        assert -1.0 <= est.lift_ <= 1.0


def test_check_off_is_the_former_fit():
    """``utility_check=None``: no check event, and the public warnings as before."""
    X, y = _noise_labels(300, _seed("check-off"))
    kw = dict(epsilon=0.05, classes=[0, 1], random_state=0, solver="dp-gd")
    off, warned_off = _fit(LogisticRegression(utility_check=None, **kw), X, y)
    assert off.lift_ is None
    n_laplace = len(_laplace_events(off.dp_event_))
    on, warned_on = _fit(LogisticRegression(**kw), X, y)
    assert len(_laplace_events(on.dp_event_)) == n_laplace + 1
    # the public diagnosis is given only inside the measured verdict
    assert warned_off, "the tiny budget should trigger a public diagnosis"
    assert not any(m in w for m in warned_off for w in warned_on) or (
        len(warned_on) == 1 and "public diagnosis" in warned_on[0]
    )
    # a failed check (here without noise: epsilon 1e9) gives it as the reason
    Y = np.where(y == 1, 1.0, -1.0)[:, None]
    rng = np.random.default_rng(0)
    (message,) = on._utility_check(
        X, Y, 1e9, "add_or_remove_one", rng, warned_off, None
    )
    assert on.lift_ < 0.01
    assert "public diagnosis" in message and warned_off[0] in message
    # the check's share is taken from the solver's budget, nothing else moves
    assert on.epsilon_ <= 0.05 and off.epsilon_ <= 0.05


@pytest.mark.parametrize(
    "kw",
    [
        # a dict weight with a solver that measures no class counts (dp-scd
        # starts from its own point): no denominator for the weighted lift
        dict(class_weight={0: 1.0, 1: 3.0}, solver="dp-scd"),
        dict(epsilon=math.inf),
        dict(epsilon=None, noise_multiplier=1.0),
    ],
    ids=["class_weight_without_counts", "nonprivate", "noise_multiplier"],
)
def test_no_check_where_it_does_not_apply(kw):
    X, y = _learnable(2000, _seed("no-check"))
    params = dict(epsilon=1.0, classes=[0, 1], random_state=0) | kw
    est, _ = _fit(LogisticRegression(**params), X, y)
    assert est.lift_ is None


def test_released_lift_has_the_stated_laplace_noise():
    """Many releases for one fitted model: ``(lift - D / n)`` is Laplace."""
    X, y = _learnable(1000, _seed("check-laplace"))
    est, _ = _fit(LogisticRegression(epsilon=1.0, classes=[0, 1], random_state=0), X, y)
    codes = (y == 1).astype(int)
    predicted = (est.decision_function(X) > 0).astype(int)
    exact = lift_statistic(predicted, codes, 2) / 1000
    eps_c = check_epsilon(1.0, 1000, "add_or_remove_one")
    rng = np.random.default_rng(_seed("check-laplace-draws"))
    Y = np.where(y == 1, 1.0, -1.0)[:, None]
    draws = []
    for _ in range(400):
        est._utility_check(X, Y, eps_c, "add_or_remove_one", rng, [], None)
        draws.append(est.lift_ - exact)
    scale = LIFT_SENSITIVITY["add_or_remove_one"] / eps_c / 1000
    assert stats.kstest(draws, stats.laplace(scale=scale).cdf).pvalue > 1e-3
    # and not a tenth of it (the test sees a wrong scale)
    assert stats.kstest(draws, stats.laplace(scale=scale / 10).cdf).pvalue < 1e-6


def test_utility_check_parameter_is_validated():
    X, y = _learnable(200, _seed("check-param"))
    for bad in (0.0, 1.0, 1.5, "yes"):
        with pytest.raises(ValueError, match="utility_check"):
            LogisticRegression(utility_check=bad, classes=[0, 1]).fit(X, y)


def test_multiclass_check():
    rng = np.random.default_rng(_seed("check-multiclass"))
    X = rng.normal(size=(6000, 4))
    y = np.argmax(X[:, :3], axis=1)
    est, warned = _fit(
        LogisticRegression(epsilon=1.0, classes=[0, 1, 2], random_state=0), X, y
    )
    assert est.lift_ > 0.2 and warned == []


def test_check_is_charged_to_the_active_budget():
    from dpestim.model_selection import PrivacyBudget

    X, y = _learnable(2000, _seed("check-budget"))
    budget = PrivacyBudget(5.0, 1e-5)
    with budget:
        est, _ = _fit(LogisticRegression(epsilon=1.0, classes=[0, 1]), X, y)
    labels = [r[2] for r in budget.records]
    assert any("utility check" in label for label in labels)
    charged = [_laplace_events(r[0]) for r in budget.records]
    eps_c = check_epsilon(1.0, 2000, "add_or_remove_one")
    assert any(
        e.noise_multiplier == pytest.approx(1.0 / eps_c) for es in charged for e in es
    )
    assert budget.spent()[0] <= 1.0 + 1e-9


@pytest.mark.parametrize("kind", ["csr", "float32", "strings", "absent_class"])
def test_check_on_other_inputs_equals_a_direct_count(kind):
    """The released lift minus its noise is ``D / n`` of the released model,
    whatever the input's format and labels."""
    import scipy.sparse as sp

    X, y = _learnable(3000, _seed(f"check-inputs-{kind}"))
    classes = [0, 1]
    if kind == "csr":
        X = sp.csr_matrix(np.where(np.abs(X) > 0.5, X, 0.0))
    elif kind == "float32":
        X = X.astype(np.float32)
    elif kind == "strings":
        y = np.where(y == 1, "yes", "no")
        classes = ["no", "yes"]
    else:
        classes = [0, 1, 2]  # class 2 never occurs
    est = LogisticRegression(epsilon=1.0, classes=classes, random_state=0)
    est.fit(X, y)
    codes = np.searchsorted(est.classes_, y)
    predicted = np.searchsorted(est.classes_, est.predict(X))
    exact = lift_statistic(predicted, codes, len(classes)) / X.shape[0]
    est2, _ = _fit(
        LogisticRegression(epsilon=1.0, classes=classes, random_state=0), X, y
    )
    assert est2.lift_ == est.lift_  # the same seed, the same release
    scale = 1.0 / (check_epsilon(1.0, X.shape[0], "add_or_remove_one") * X.shape[0])
    # the release is within 12 Laplace scales of the exact lift (fails with
    # probability e^-12)
    assert abs(est.lift_ - exact) < 12 * scale
    assert exact > 0.2


def test_weighted_lift_by_hand():
    # weights 1 and 0.5: correct 1 + 0.5 + 0.5 + 1 = 3; totals 2 x 1, 3 x 0.5
    assert lift_statistic([0, 1, 1, 0, 0], [0, 1, 1, 1, 0], 2, [1.0, 0.5]) == 3 - 2


@pytest.mark.parametrize("Est", [LogisticRegression, LinearSVC])
def test_balanced_fit_checks_its_balanced_accuracy(Est):
    """class_weight="balanced": the lift is balanced accuracy minus 1 / K."""
    from sklearn.metrics import balanced_accuracy_score

    rng = np.random.default_rng(_seed("check-balanced"))
    n = 20_000
    X = rng.normal(size=(n, 5))
    y = (X[:, 0] + 0.3 * rng.normal(size=n) > 1.9).astype(int)  # ~3% positives
    kw = dict(epsilon=1.0, classes=[0, 1], class_weight="balanced", random_state=0)
    est, warned = _fit(Est(**kw), X, y)
    exact = balanced_accuracy_score(y, est.predict(X)) - 0.5
    # the lift weighs by the released weights over the released counts:
    # post-processing, so only the lift's Laplace noise remains, whose scale
    # is 0.5% of n over the weighted total (the minority's weight 1, the
    # majority's ~0.035)
    weighted, scale = _balanced_lift(est, X, y)
    assert 0.05 < scale < 0.1
    assert abs(est.lift_ - weighted) < 5 * scale  # P(|Laplace| > 5 b) < 0.7%
    assert abs(weighted - exact) < 0.01  # the counts' noise: n's, not the rows'
    assert exact > 0.2 and warned == []
    # labels unrelated to X: no better than one class; the release warns
    # exactly when check_fires says so (a one-sided margin of 0.25 of its
    # noise scale, so not on every draw)
    noise = (rng.random(n) < 0.03).astype(int)
    est, warned = _fit(Est(**kw), X, noise)
    weighted, scale = _balanced_lift(est, X, noise)
    assert weighted < 0.03 and est.lift_ < 5 * scale
    assert len(warned) == int(check_fires(est.lift_, scale))
    assert all("balanced accuracy" in message for message in warned)


def _balanced_lift(est, X, y):
    """The lift a balanced binary fit's check releases, without its noise, and
    that noise's Laplace scale (the released counts about ``n / (2 w)``, their
    floor not binding)."""
    n = X.shape[0]
    w = est.class_weight_ / est.class_weight_.max()
    total = float(np.sum(w * n / (2 * est.class_weight_)))
    eps = check_epsilon(1.0, n, "add_or_remove_one")
    lift = lift_statistic(est.predict(X), y, 2, w) / total
    return lift, lift_scale(eps, total, "add_or_remove_one")


def test_dict_weights_with_released_counts_are_checked():
    X, y = _learnable(3000, _seed("check-dict"))
    est, _ = _fit(
        LogisticRegression(
            epsilon=1.0, classes=[0, 1], class_weight={0: 1.0, 1: 2.0}, random_state=0
        ),
        X,
        y,
    )
    assert est.class_prior_ is not None  # the counts were released
    assert est.lift_ is not None and est.lift_ > 0.2


def test_nonprivate_fit_is_checked_exactly():
    """epsilon=inf: the check compares the training accuracy with the best
    constant's exactly (no budget, no noise) and warns when the fit is no
    better, e.g. when a constant column of 1,000 sets the row scale and the
    binary columns barely move the model (the columns not centred:
    ``feature_centring=None``; the default centres them exactly there)."""
    rng = np.random.default_rng(zlib.crc32(b"exact check"))
    n = 3000
    B = (rng.random((n, 20)) < 0.3).astype(float)
    y = (B[:, :5].sum(axis=1) + 0.5 * rng.normal(size=n) > 2.0).astype(int)
    X = np.hstack([B, np.full((n, 1), 1000.0)])
    with pytest.warns(UtilityWarning, match="non-private fit"):
        LogisticRegression(
            epsilon=math.inf, classes=[0, 1], random_state=0, feature_centring=None
        ).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UtilityWarning)
        good = LogisticRegression(epsilon=math.inf, classes=[0, 1], random_state=0)
        assert good.fit(B, y).score(B, y) > 0.8
        assert good.fit(X, y).score(X, y) > 0.8  # centred by default
        LogisticRegression(
            epsilon=math.inf, classes=[0, 1], random_state=0, utility_check=None
        ).fit(X, y)


def test_nonprivate_ridge_is_checked_exactly():
    """epsilon=inf, alpha="auto": the training R^2 is compared exactly with
    scikit-learn's Ridge on standardised columns; a year column (its offset
    sets the row scale, and with it alpha and the steps) warns when the
    columns are not centred (``feature_centring=None``); the same data
    centred (the default), without the column, or with an explicit alpha do
    not."""
    rng = np.random.default_rng(zlib.crc32(b"exact ridge check"))
    Z = rng.normal(size=(5000, 4))
    year = rng.integers(1990, 2021, 5000).astype(float)
    X = np.c_[Z, year]
    y = Z @ [1.0, 2.0, 3.0, 4.0] + 0.1 * (year - 2005) + rng.normal(size=5000)
    with pytest.warns(UtilityWarning, match="explains less than half as much"):
        Ridge(epsilon=math.inf, random_state=0, feature_centring=None).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UtilityWarning)
        centred = Ridge(epsilon=math.inf, random_state=0).fit(X, y)
        assert centred.score(X, y) > 0.9
        good = Ridge(epsilon=math.inf, random_state=0).fit(Z, y - 0.1 * year)
        assert good.score(Z, y - 0.1 * year) > 0.9
        Ridge(epsilon=math.inf, alpha=1e-4, random_state=0, feature_centring=None).fit(
            X, y
        )
