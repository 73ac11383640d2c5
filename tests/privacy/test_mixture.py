"""MaxRdpDpEvent / MaxRdpAccountant: the RDP of a search over solvers."""

import math

import dp_accounting
import numpy as np
import pytest
from dp_accounting import dp_event, rdp
from scipy.special import logsumexp

from dpestim.privacy import compute_epsilon, make_accountant
from dpestim.privacy.mixture import MaxRdpAccountant, MaxRdpDpEvent

REL = {
    "add_or_remove_one": dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE,
    "replace_one": dp_accounting.NeighboringRelation.REPLACE_ONE,
}


def _sgd(sigma, q=0.01, steps=300):
    return dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)),
        steps,
    )


def _inner(fit, score=40.0):
    return dp_accounting.ComposedDpEvent([fit, dp_accounting.GaussianDpEvent(score)])


def _curve(event, relation="add_or_remove_one", cls=MaxRdpAccountant):
    return cls(neighboring_relation=REL[relation]).compose(event).rdp


EVENTS = [
    dp_accounting.GaussianDpEvent(1.3),
    _sgd(1.1),
    dp_event.RepeatAndSelectDpEvent(_inner(_sgd(1.4)), 10.0, 1.0),
    dp_event.RepeatAndSelectDpEvent(_inner(_sgd(0.9, 0.05, 40)), 5.0, math.inf),
    dp_accounting.ComposedDpEvent(
        [dp_accounting.LaplaceDpEvent(2.0), dp_accounting.ZCDpEvent(0.01, 0.1)]
    ),
]


@pytest.mark.parametrize("event", EVENTS)
def test_other_events_exactly_as_dp_accounting(event):
    ours = _curve(event)
    theirs = _curve(event, cls=rdp.RdpAccountant)
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("mean,shape", [(10.0, 1.0), (5.0, 0.0), (8.0, math.inf)])
@pytest.mark.parametrize("relation", ["add_or_remove_one", "replace_one"])
def test_one_solver_list_is_dp_accountings_repeat_and_select(mean, shape, relation):
    if relation == "replace_one":
        fit = dp_accounting.SelfComposedDpEvent(dp_accounting.LaplaceDpEvent(30.0), 20)
    else:
        fit = _sgd(1.2)
    plain = dp_event.RepeatAndSelectDpEvent(_inner(fit), mean, shape)
    mixed = dp_event.RepeatAndSelectDpEvent(MaxRdpDpEvent([_inner(fit)]), mean, shape)
    np.testing.assert_array_equal(
        _curve(mixed, relation), _curve(plain, relation, cls=rdp.RdpAccountant)
    )
    stock = rdp.RdpAccountant(neighboring_relation=REL[relation]).compose(plain)
    assert compute_epsilon(mixed, 1e-5, "rdp", relation) == stock.get_epsilon(1e-5)


def test_mixture_curve_is_the_pointwise_max_and_never_below_a_solver():
    a, b = _inner(_sgd(1.0)), _inner(dp_accounting.GaussianDpEvent(4.0))
    ca, cb = _curve(a), _curve(b)
    assert (ca > cb).any() and (cb > ca).any()  # the curves cross
    np.testing.assert_array_equal(_curve(MaxRdpDpEvent([a, b])), np.maximum(ca, cb))
    for mean, shape in [(10.0, 1.0), (3.0, 0.5)]:
        mix = compute_epsilon(
            dp_event.RepeatAndSelectDpEvent(MaxRdpDpEvent([a, b]), mean, shape),
            1e-5,
        )
        for one in (a, b):
            alone = compute_epsilon(
                dp_event.RepeatAndSelectDpEvent(one, mean, shape), 1e-5
            )
            assert mix >= alone
        # and strictly more than the better one (the max is paid)
        assert mix > min(
            compute_epsilon(dp_event.RepeatAndSelectDpEvent(e, mean, shape), 1e-5)
            for e in (a, b)
        )


def test_unsupported_inside_is_unsupported():
    acc = make_accountant("rdp")
    bad = MaxRdpDpEvent(
        [dp_accounting.GaussianDpEvent(1.0), dp_accounting.UnsupportedDpEvent()]
    )
    assert not acc.supports(bad)
    assert not make_accountant("pld").supports(
        MaxRdpDpEvent([dp_accounting.GaussianDpEvent(1.0)])
    )
    with pytest.raises(ValueError):
        MaxRdpDpEvent([])


def test_pickles_and_hashes():
    import pickle

    e = MaxRdpDpEvent([dp_accounting.GaussianDpEvent(1.0), _sgd(2.0)])
    assert pickle.loads(pickle.dumps(e)) == e
    hash(MaxRdpDpEvent([dp_accounting.GaussianDpEvent(1.0)]))


# -- brute force: joint quasi-convexity on small discrete mechanisms ---------------


def _renyi(p, q, alpha):
    """Exact D_alpha(p || q) of two discrete laws (q > 0 where p > 0)."""
    mask = p > 0
    return logsumexp(alpha * np.log(p[mask]) + (1 - alpha) * np.log(q[mask])) / (
        alpha - 1
    )


def _rr(x, p, k):
    out = np.full(k, p / k)
    out[x] += 1 - p
    return out


def _count_law(c, b, m):
    """Truncated geometric noisy count on {0..m} (add/remove: c vs c + 1)."""
    w = np.exp(-np.abs(np.arange(m + 1) - c) / b)
    return w / w.sum()


ALPHAS = [1.5, 2.0, 3.0, 5.0, 8.0, 16.0, 32.0]


@pytest.mark.parametrize("seed", range(5))
def test_brute_force_mixture_of_randomized_responses_replace_one(seed):
    """Replace-one: k-ary randomized response, a record's value x -> x'."""
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 6))
    ps = rng.uniform(0.05, 0.95, size=int(rng.integers(2, 5)))
    w = rng.dirichlet(np.ones(len(ps)))
    events = [dp_event.RandomizedResponseDpEvent(float(p), k) for p in ps]
    acc = MaxRdpAccountant(orders=ALPHAS, neighboring_relation=REL["replace_one"])
    bound = acc.compose(MaxRdpDpEvent(events)).rdp
    for x, x2 in [(0, 1), (1, 0), (0, k - 1)]:
        P = sum(wi * _rr(x, p, k) for wi, p in zip(w, ps))
        Q = sum(wi * _rr(x2, p, k) for wi, p in zip(w, ps))
        for i, alpha in enumerate(ALPHAS):
            exact = _renyi(P, Q, alpha)
            each = max(_renyi(_rr(x, p, k), _rr(x2, p, k), alpha) for p in ps)
            assert exact <= each + 1e-12
            assert exact <= bound[i] + 1e-9  # dp-accounting's curves, max


@pytest.mark.parametrize("seed", range(5))
def test_brute_force_mixture_of_noisy_counts_add_or_remove(seed):
    """Add/remove: truncated geometric counts, c rows vs c + 1 rows."""
    rng = np.random.default_rng(100 + seed)
    m = 12
    bs = rng.uniform(0.3, 3.0, size=int(rng.integers(2, 5)))
    w = rng.dirichlet(np.ones(len(bs)))
    c = int(rng.integers(0, m))
    for D, D2 in [(c, c + 1), (c + 1, c)]:
        P = sum(wi * _count_law(D, b, m) for wi, b in zip(w, bs))
        Q = sum(wi * _count_law(D2, b, m) for wi, b in zip(w, bs))
        for alpha in ALPHAS:
            each = max(
                _renyi(_count_law(D, b, m), _count_law(D2, b, m), alpha) for b in bs
            )
            assert _renyi(P, Q, alpha) <= each + 1e-12


def test_brute_force_gaussian_mixture_add_or_remove():
    """Mixtures of Gaussian mechanisms of different noise: numerical D_alpha."""
    sigmas, w = np.array([0.8, 1.5, 3.0]), np.array([0.2, 0.5, 0.3])
    x = np.linspace(-40, 41, 200001)
    dx = x[1] - x[0]

    def law(mu):
        dens = [
            np.exp(-((x - mu) ** 2) / (2 * s * s)) / (s * math.sqrt(2 * math.pi))
            for s in sigmas
        ]
        return sum(wi * d for wi, d in zip(w, dens))

    P, Q = law(0.0) * dx, law(1.0) * dx
    events = [dp_accounting.GaussianDpEvent(float(s)) for s in sigmas]
    acc = MaxRdpAccountant(
        orders=ALPHAS[:4], neighboring_relation=REL["add_or_remove_one"]
    )
    bound = acc.compose(MaxRdpDpEvent(events)).rdp
    for i, alpha in enumerate(ALPHAS[:4]):
        for a, b in [(P, Q), (Q, P)]:
            assert _renyi(a, b, alpha) <= bound[i] * (1 + 1e-6)


def test_brute_force_discriminates_a_wrong_rule():
    """The mixture's divergence exceeds the *smallest* curve: max is needed."""
    ps, k, w = [0.1, 0.9], 2, [0.5, 0.5]
    P = sum(wi * _rr(0, p, k) for wi, p in zip(w, ps))
    Q = sum(wi * _rr(1, p, k) for wi, p in zip(w, ps))
    smallest = min(_renyi(_rr(0, p, k), _rr(1, p, k), 2.0) for p in ps)
    assert _renyi(P, Q, 2.0) > smallest
