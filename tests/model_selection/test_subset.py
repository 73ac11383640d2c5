"""SubsetSearchCV: the plan rule, the guarantee, parallel composition, streams."""

import itertools
import math

import dp_accounting
import numpy as np
import pytest

from dpestim import LogisticRegression
from dpestim.model_selection import PrivateSearchCV, SubsetSearchCV, subset_plan
from dpestim.model_selection._subset import SCORE_STD_MAX
from dpestim.privacy.charging import pop_target, push_target


@pytest.fixture
def data():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(6000, 4)) / 2
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    return X, y


def _lr():
    return LogisticRegression(classes=[0, 1], max_iter=2, batch_size=100)


# -- the plan: public rule of n and epsilon ---------------------------------------


def test_subset_plan_is_monotone_and_meets_its_score_rule():
    qs = {(n, e): subset_plan(n, e, 1e-5) for n in (700, 5000, 30000) for e in (1, 2)}
    assert qs[(700, 1)] == qs[(700, 2)] == 0.0  # small data: no search
    assert 0.1 <= qs[(30000, 2)] <= qs[(30000, 1)] <= 0.25
    # more rows or more epsilon never asks for a larger share
    for e in (1, 2):
        assert (qs[(30000, e)] or 1) <= (qs[(5000, e)] or 1)
    # the chosen share meets the score rule, a smaller one does not
    q = qs[(30000, 1)]
    from dpestim.model_selection._subset import _score_std_counts

    def std(share):
        n_val = round(0.5 * share * 30000)
        return _score_std_counts(1, 1e-5, "auto", n_val) / n_val

    assert std(q) <= SCORE_STD_MAX
    if q > 0.1:
        assert std(q - 0.05) > SCORE_STD_MAX
    # an explicit score noise: std in score units, independent of n
    assert subset_plan(700, 1, 1e-5, score_noise=0.01) == 0.1
    assert subset_plan(10**6, 1, 1e-5, score_noise=0.05) == 0.0


def test_subset_plan_regressor_rule_is_four_times_stricter():
    from dpestim.model_selection._subset import REGRESSION_FACTOR, _score_std_counts

    assert REGRESSION_FACTOR == 4.0
    for n, e in [(20000, 1), (15480, 2), (10**6, 0.5), (10**5, 1)]:
        q_c, q_r = subset_plan(n, e, 1e-5), subset_plan(n, e, 1e-5, regressor=True)
        assert (q_c or 1) <= (q_r or 1)  # never a smaller share for a regressor
        if q_r:
            n_val = int(round(0.5 * q_r * n))
            std = _score_std_counts(e, 1e-5, "auto", n_val) / n_val
            assert std <= SCORE_STD_MAX / 4
    # California's training rows: a classifier would search, a regressor not
    assert subset_plan(15480, 2, 1e-5) > 0
    assert subset_plan(15480, 2, 1e-5, regressor=True) == 0.0
    assert subset_plan(10**6, 1, 1e-5, regressor=True) > 0


def test_subset_search_plans_a_regressor_with_the_regressor_rule():
    from dpestim import Ridge

    rng = np.random.default_rng(0)
    X = rng.normal(size=(20000, 3)) / 2
    y = X @ np.array([1.0, -1.0, 0.5]) + rng.normal(size=20000) / 4
    assert subset_plan(20000, 1.0, 1e-5) > 0  # as a classifier it would search
    est = Ridge(y_bound=(-3.0, 3.0), random_state=0)
    s = SubsetSearchCV(est, epsilon=1.0, error_bound=9.0, random_state=0).fit(X, y)
    assert s.plan_ == "defaults" and s.search_ is None
    plain = Ridge(y_bound=(-3.0, 3.0), random_state=0).fit(X, y)
    assert np.array_equal(s.best_estimator_.coef_, plain.coef_)


def test_defaults_plan_is_one_fit_on_all_rows(data):
    X, y = data
    X, y = X[:500], y[:500]
    s = SubsetSearchCV(_lr(), epsilon=1.0, random_state=0).fit(X, y)
    assert s.plan_ == "defaults" and s.subset_ == 0.0 and s.search_ is None
    assert s.best_params_ == {} and s.best_score_ is None
    est = s.best_estimator_
    assert est.learning_rate == _lr().learning_rate  # its own parameters
    assert s.epsilon_ == est.epsilon_ <= 1.0
    assert s.dp_event_ == est.dp_event_
    assert "no search" in s.privacy_report()


@pytest.mark.parametrize("own", [3, 11])
def test_defaults_plan_releases_the_plain_fit_bit_for_bit(data, own):
    # no search: the estimator as given, with its own random_state, whatever
    # the meta-estimator's random_state (a paired comparison with one fit)
    X, y = data
    X, y = X[:500], y[:500]
    est = LogisticRegression(classes=[0, 1], epsilon=1.0, random_state=own)
    plain = est.__class__(**est.get_params()).fit(X, y)
    outs = [
        SubsetSearchCV(est, epsilon=1.0, random_state=rs).fit(X, y)
        for rs in (0, 7, None)
    ]
    for s in outs:
        assert s.plan_ == "defaults"
        assert np.array_equal(s.best_estimator_.coef_, plain.coef_)
        assert np.array_equal(s.best_estimator_.intercept_, plain.intercept_)
        assert s.dp_event_ == plain.dp_event_
        assert s.epsilon_ == plain.epsilon_
        assert s.best_estimator_.random_state == own
    # another seed of the estimator gives another model (the test can fail)
    other = LogisticRegression(classes=[0, 1], epsilon=1.0, random_state=own + 1)
    assert not np.array_equal(other.fit(X, y).coef_, plain.coef_)


# -- the guarantee ---------------------------------------------------------------


@pytest.mark.parametrize("subset", [0.3, "auto"])
def test_subset_search_guarantee_within_request(data, subset):
    X, y = data
    s = SubsetSearchCV(
        _lr(),
        epsilon=2.0,
        subset=subset,
        n_candidates=3,
        score_noise=0.02,  # the "auto" plan is then q = 0.1
        random_state=1,
    ).fit(X, y)
    assert s.subset_ == (0.1 if subset == "auto" else 0.3)
    assert s.plan_ == "subset"
    assert isinstance(s.search_, PrivateSearchCV)
    assert s.search_.epsilon_ <= 2.0 and s.best_estimator_.epsilon_ <= 2.0
    assert s.epsilon_ == max(s.search_.epsilon_, s.best_estimator_.epsilon_)
    assert 1.9 < s.epsilon_ <= 2.0
    # the event is the (looser) sequential composition of the two parts
    assert isinstance(s.dp_event_, dp_accounting.ComposedDpEvent)
    assert s.dp_event_.events == [s.search_.dp_event_, s.best_estimator_.dp_event_]
    assert s.score(X, y) > 0.8
    # the extrapolation: the winner's factors of the plan resolved on the other
    # rows (here the plan's learning rate 0.5 and clip norm 1.0 do not depend
    # on n, so the values are the search's)
    draw = s.search_.best_draw_
    assert set(draw) == set(s.best_params_) == {"learning_rate", "clip_norm"}
    assert s.best_params_["learning_rate"] == pytest.approx(0.5 * draw["learning_rate"])
    assert s.best_params_["clip_norm"] == pytest.approx(1.0 * draw["clip_norm"])
    assert s.best_estimator_.learning_rate == s.best_params_["learning_rate"]


def test_subset_search_charges_a_budget_with_both_parts(data):
    from dpestim.model_selection import PrivacyBudget

    X, y = data
    budget = PrivacyBudget(epsilon=10.0, delta=1e-4)
    SubsetSearchCV(
        _lr(), epsilon=1.0, subset=0.3, n_candidates=2, random_state=0, budget=budget
    ).fit(X, y)
    # sequential composition in the budget: more than either part
    assert len(budget.records) >= 2
    assert budget.spent()[0] > 1.0


def test_pipeline_refused(data):
    from sklearn.pipeline import make_pipeline

    from dpestim.preprocessing import StandardScaler

    X, y = data
    with pytest.raises(TypeError, match="Pipeline"):
        SubsetSearchCV(make_pipeline(StandardScaler(bounds=(-3, 3)), _lr())).fit(X, y)


# -- independent streams, reproducibility ---------------------------------------


class _Recorder:
    def __init__(self):
        self.states = []

    def charge(self, charge):
        est = charge.estimator
        if est is not None:
            rs = est.get_params(deep=False)["random_state"]
            self.states.append(rs.bit_generator.seed_seq.spawn_key)
        return None


def test_streams_independent_and_reproducible(data):
    X, y = data
    rec = _Recorder()
    push_target(rec)
    try:
        s = SubsetSearchCV(_lr(), subset=0.3, n_candidates=2, random_state=5)
        s.fit(X, y)
    finally:
        pop_target(rec)
    final_key = rec.states[-1]
    search_key = s.search_.random_state.bit_generator.seed_seq.spawn_key
    assert final_key != search_key and len(final_key) == len(search_key) == 1
    # the released model does not carry its stream
    assert s.best_estimator_.random_state is None
    again = SubsetSearchCV(_lr(), subset=0.3, n_candidates=2, random_state=5)
    np.testing.assert_array_equal(
        again.fit(X, y).best_estimator_.coef_, s.best_estimator_.coef_
    )
    other = SubsetSearchCV(_lr(), subset=0.3, n_candidates=2, random_state=6)
    assert not np.array_equal(
        other.fit(X, y).best_estimator_.coef_, s.best_estimator_.coef_
    )


# -- the relation: parallel composition, by brute force ---------------------------


def _rr(bit, p):
    """Randomized response: P(out = 1)."""
    return p if bit else 1.0 - p


def _joint(data, q, p1, p2):
    """Exact output law of (M1 on S, M2 on R adapted to M1) over the coins.

    M1 releases a randomized response of ``any(S)``, M2 one of ``any(R)``
    whose keep-probability depends on M1's output (adaptive).
    """
    out = np.zeros((2, 2))
    for coins in itertools.product([0, 1], repeat=len(data)):
        w = np.prod([q if c else 1 - q for c in coins])
        s_bit = any(b for b, c in zip(data, coins) if c)
        r_bit = any(b for b, c in zip(data, coins) if not c)
        for o1 in (0, 1):
            a = _rr(s_bit, p1) if o1 else 1 - _rr(s_bit, p1)
            for o2 in (0, 1):
                b = _rr(r_bit, p2[o1]) if o2 else 1 - _rr(r_bit, p2[o1])
                out[o1, o2] += w * a * b
    return out.ravel()


def _hs(p, q, eps):
    return float(np.maximum(p - np.exp(eps) * q, 0).sum())


def _rr_profile(p, eps):
    """Exact privacy profile of randomized response on a bit of sensitivity 1."""
    a, b = np.array([p, 1 - p]), np.array([1 - p, p])
    return max(_hs(a, b, eps), _hs(b, a, eps))


def _neighbours(rng, n):
    d = [int(b) for b in rng.integers(0, 2, n)]
    add = d + [int(rng.integers(0, 2))]  # add/remove-one
    rep = list(d)
    rep[int(rng.integers(n))] ^= 1  # replace-one
    return d, add, rep


def test_parallel_composition_brute_force():
    rng = np.random.default_rng(0)
    worst = 0.0
    for _ in range(40):
        q = float(rng.uniform(0.1, 0.9))
        p1 = float(rng.uniform(0.5, 0.95))
        p2 = [float(rng.uniform(0.5, 0.95)) for _ in range(2)]
        d, add, rep = _neighbours(rng, int(rng.integers(1, 5)))
        for a, b in ((d, add), (d, rep)):
            pa, pb = _joint(a, q, p1, p2), _joint(b, q, p1, p2)
            for eps in (0.0, 0.2, 0.5, 1.0, 2.0):
                d1 = _rr_profile(p1, eps)
                d2 = max(_rr_profile(p, eps) for p in p2)
                total = max(_hs(pa, pb, eps), _hs(pb, pa, eps))
                assert total <= q * d1 + (1 - q) * d2 + 1e-12
                assert total <= max(d1, d2) + 1e-12
                worst = max(worst, total - max(d1, d2) * 0.5)
    assert worst > 0  # the bound is not vacuous on this grid


def _joint_with_estimate(data, q, p0, p1, p2):
    """Exact output law of (E on R, M1 on S adapted to E, M2 on R adapted to
    both): the scale estimates measured on the final rows, given to the
    search and to the final fit (:meth:`SubsetSearchCV._estimate_scales`)."""
    out = np.zeros((2, 2, 2))
    for coins in itertools.product([0, 1], repeat=len(data)):
        w = np.prod([q if c else 1 - q for c in coins])
        s_bit = any(b for b, c in zip(data, coins) if c)
        r_bit = any(b for b, c in zip(data, coins) if not c)
        for e in (0, 1):
            pe = _rr(r_bit, p0) if e else 1 - _rr(r_bit, p0)
            for o1 in (0, 1):
                k1 = _rr(s_bit, p1[e])
                a = k1 if o1 else 1 - k1
                for o2 in (0, 1):
                    k2 = _rr(r_bit, p2[2 * e + o1])
                    out[e, o1, o2] += w * pe * a * (k2 if o2 else 1 - k2)
    return out.ravel()


def test_parallel_composition_with_estimates_on_the_final_rows_brute_force():
    """Pure DP: the search (epsilon e1 for every estimate it is given) and the
    final part (estimates e0 then the fit e2, basic composition) give the
    whole ``max(e1, e0 + e2)``, on random neighbours under both relations;
    and the whole is more than either the search or the fit alone."""
    rng = np.random.default_rng(1)
    logit = lambda p: math.log(p / (1 - p))  # noqa: E731
    tight = 0.0
    for _ in range(40):
        q = float(rng.uniform(0.1, 0.9))
        p0 = float(rng.uniform(0.5, 0.8))
        p1 = [float(rng.uniform(0.5, 0.95)) for _ in range(2)]
        p2 = [float(rng.uniform(0.5, 0.95)) for _ in range(4)]
        e0 = logit(p0)
        e1 = max(map(logit, p1))
        e2 = max(map(logit, p2))
        bound = max(e1, e0 + e2)
        d, add, rep = _neighbours(rng, int(rng.integers(1, 5)))
        for a, b in ((d, add), (d, rep)):
            pa = _joint_with_estimate(a, q, p0, p1, p2)
            pb = _joint_with_estimate(b, q, p0, p1, p2)
            ratio = float(np.max(np.abs(np.log(pa) - np.log(pb))))
            assert ratio <= bound + 1e-9
            tight = max(tight, ratio - max(e1, e2))
    assert tight > 0  # the estimates' e0 is needed: the check is not vacuous


def test_brute_force_detects_overlapping_parts():
    """The check can fail: both mechanisms reading all the rows exceed the max."""
    p1, p2 = 0.9, [0.9, 0.9]
    d, d2 = [0, 0], [0, 0, 1]

    # q = 1 for M1 and M2 both on the whole data: sequential composition
    def joint_all(data):
        bit = any(data)
        return np.array(
            [
                (_rr(bit, p1) if o1 else 1 - _rr(bit, p1))
                * (_rr(bit, p2[o1]) if o2 else 1 - _rr(bit, p2[o1]))
                for o1 in (0, 1)
                for o2 in (0, 1)
            ]
        )

    eps = 1.0
    total = _hs(joint_all(d2), joint_all(d), eps)
    assert total > max(_rr_profile(p1, eps), _rr_profile(p2[0], eps)) + 0.1


def test_scales_measured_on_the_final_rows_serve_both_parts():
    """The estimator's private scales are measured once on the final rows
    and given to the search on the subset and to the final fit as public
    values: the search estimates nothing itself, the final fit runs at
    epsilon less the estimates', and the final part states both."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(24000, 4)) + [0.0, 0.0, 1000.0, 0.0]
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    s = SubsetSearchCV(_lr(), epsilon=1.0, subset=0.2, n_candidates=2, random_state=0)
    s.fit(X, y)
    given, est = s._given, s.search_.estimator
    assert {"feature_centring", "feature_scale", "class_prior"} <= set(given)
    np.testing.assert_array_equal(est.feature_centring, given["feature_centring"])
    assert isinstance(
        s.search_.dp_event_, dp_accounting.dp_event.RepeatAndSelectDpEvent
    )
    final = s.best_estimator_
    estimates, _ = final.dp_event_.events
    assert estimates == dp_accounting.ComposedDpEvent(s._estimates.events())
    assert final.epsilon_ <= 1.0 + 1e-9
    assert s.epsilon_ == max(s.search_.epsilon_, final.epsilon_)
    np.testing.assert_array_equal(final.feature_centre_, given["feature_centring"])
    assert abs(final.feature_centre_[2] - 1000.0) < 10.0
    assert final.get_params()["feature_centring"] == "auto"
    assert "SubsetSearchCV" in final.hyperparameters_["feature_centring"]
    report = final.privacy_report()
    assert report.epsilon == final.epsilon_ and report.dp_event == final.dp_event_
    assert "measured once by SubsetSearchCV" in str(report)
    assert "private column means (SubsetSearchCV)" in str(report)
    assert final.get_params()["epsilon"] == 1.0  # the part's, as before
    assert "private scales measured on the final" in s.privacy_report()
    assert s.score(X, y) > 0.95


def test_subset_plan_does_not_search_multiclass():
    # MNIST-sized: a binary problem would search at epsilon 2, ten classes not
    assert subset_plan(10_000, 2, 1e-5) > 0
    assert subset_plan(10_000, 2, 1e-5, n_classes=2) > 0
    assert subset_plan(10_000, 2, 1e-5, n_classes=10) == 0.0
