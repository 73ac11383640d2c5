"""compute_epsilon caches on (event, delta, accountant, neighbouring)."""

import dp_accounting as dpa
import pytest

from dpestim.privacy import accounting, compute_epsilon


def test_repeated_accounting_is_cached_and_exact():
    event = dpa.SelfComposedDpEvent(
        dpa.PoissonSampledDpEvent(0.1, dpa.GaussianDpEvent(1.3)), 17
    )
    first = compute_epsilon(event, 1e-5)
    key = (event, 1e-5, "rdp", "add_or_remove_one")
    assert accounting._epsilon_cache[key] == first
    same = dpa.SelfComposedDpEvent(
        dpa.PoissonSampledDpEvent(0.1, dpa.GaussianDpEvent(1.3)), 17
    )
    assert compute_epsilon(same, 1e-5) == first  # equal events share the entry
    assert compute_epsilon(event, 1e-6) > first  # delta is part of the key
    fresh = dpa.rdp.RdpAccountant().compose(event).get_epsilon(1e-5)
    assert first == pytest.approx(fresh, rel=0, abs=0)


def test_unsupported_event_still_raises():
    with pytest.raises(ValueError, match="does not support"):
        compute_epsilon(dpa.UnsupportedDpEvent(), 1e-5)


def test_underflowing_noise_gives_infinite_epsilon_not_a_crash():
    import dp_accounting

    from dpestim.privacy import compute_epsilon

    event = dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(0.5, dp_accounting.GaussianDpEvent(1e-190)),
        3,
    )
    assert compute_epsilon(event, 1e-5) == float("inf")


def test_composed_events_are_cached_by_their_exact_repr():
    import dp_accounting

    from dpestim.privacy import accounting, compute_epsilon

    def event(sigma):
        return dp_accounting.ComposedDpEvent(
            [dp_accounting.GaussianDpEvent(sigma), dp_accounting.GaussianDpEvent(2.0)]
        )

    first = compute_epsilon(event(1.0), 1e-5)
    assert compute_epsilon(event(1.0), 1e-5) == first
    assert (repr(event(1.0)), 1e-5, "rdp", "add_or_remove_one") in (
        accounting._epsilon_cache
    )
    # a different noise is a different key, not a stale hit
    assert compute_epsilon(event(3.0), 1e-5) < first
