"""Privacy accounting and noise calibration through ``dp_accounting``.

Every solver describes the mechanism it runs as a ``dp_accounting.DpEvent``.
This module turns an event into an epsilon (:func:`compute_epsilon`) and
finds the smallest noise multiplier meeting a target budget
(:func:`calibrate_noise`). No accountant is written here: the RDP and PLD
accountants are the ones of Google's ``dp_accounting`` package, which is the
authority on every noise returned (see :func:`calibrate_noise`).
"""

import math
import numbers
from collections import OrderedDict

import dp_accounting
from dp_accounting import pld

from . import _disk_cache, _search
from ._disk_cache import set_calibration_cache
from ._quiet import quiet_accounting
from .mixture import MaxRdpAccountant

__all__ = [
    "ACCOUNTANTS",
    "calibrate_noise",
    "compute_epsilon",
    "make_accountant",
    "set_calibration_cache",
]

#: Names accepted by ``accountant=``.
ACCOUNTANTS = ("rdp", "pld")

_NEIGHBOURING = {
    "add_or_remove_one": dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE,
    "replace_one": dp_accounting.NeighboringRelation.REPLACE_ONE,
}

#: dp_accounting's default PLD discretisation (``value_discretization_interval``).
PLD_INTERVAL = 1e-4
#: The interval of the cheap first PLD evaluation that sets the scale, and the
#: coarsest one used (``1e-4 * 2**7``: a power-of-two multiple of the default).
_PLD_PROBE_INTERVAL = PLD_INTERVAL * 128
#: Work bound of one PLD evaluation: total privacy-loss range of the event's
#: base PLDs over the interval (:func:`_work_interval`).
_PLD_MAX_POINTS = 40000
#: Coarsest interval of the work bound (``1e-4 * 2**9``; reached only by
#: events of very small noise, whose epsilon is then in the tens).
_PLD_MAX_INTERVAL = PLD_INTERVAL * 512

# Largest noise multiplier the calibration will consider; a budget that needs
# more than this is reported as unreachable rather than silently capped.
_MAX_NOISE = 1e6
_CACHE_SIZE = 256
_calibration_cache = OrderedDict()
_epsilon_cache = OrderedDict()
_order_cache = OrderedDict()  # optimal RDP order of the entries above


def make_accountant(accountant="rdp", neighbouring="add_or_remove_one"):
    """Return a fresh, empty ``dp_accounting`` accountant.

    Parameters
    ----------
    accountant : {"rdp", "pld"}, default="rdp"
        Renyi-DP accountant (default orders of ``dp_accounting``; its
        :class:`~dpestim.privacy.mixture.MaxRdpAccountant`, which also
        accounts :class:`~dpestim.privacy.mixture.MaxRdpDpEvent`) or the
        privacy-loss-distribution accountant (tighter, slower).
    neighbouring : {"add_or_remove_one", "replace_one"}, default="add_or_remove_one"
        Neighbouring relation under which the guarantee holds.

    Returns
    -------
    accountant : dp_accounting.PrivacyAccountant
    """
    if neighbouring not in _NEIGHBOURING:
        raise ValueError(
            f"neighbouring must be one of {sorted(_NEIGHBOURING)}, "
            f"got {neighbouring!r}."
        )
    relation = _NEIGHBOURING[neighbouring]
    if accountant == "rdp":
        # dp-accounting's RdpAccountant, plus MaxRdpDpEvent (a solver search)
        return MaxRdpAccountant(neighboring_relation=relation)
    if accountant == "pld":
        return pld.PLDAccountant(neighboring_relation=relation)
    raise ValueError(f"accountant must be one of {ACCOUNTANTS}, got {accountant!r}.")


def pld_interval(epsilon_scale):
    """Discretisation interval of the ``"pld"`` accountant at this epsilon scale.

    ``1e-4 * 2**k`` with ``2**k`` the smallest power of two ``>= max(1,
    epsilon_scale)``: dp-accounting's default ``1e-4`` up to epsilon 1, then
    the same precision *relative* to epsilon. The cost of a PLD evaluation
    grows with the range of its privacy losses over the interval, and that
    range grows with epsilon: at the default interval a single evaluation of
    a two-step adp-sgd event at epsilon 50 took 4-10 s; at ``1e-4 * 64`` it
    takes about 0.1 s and the epsilon moves by about 1e-6 relative. Every
    interval gives a pessimistic (upper) bound (``dp_accounting`` rounds
    privacy losses up, and its truncated tails count as infinite loss), and
    the intervals are power-of-two multiples of ``1e-4``, so each grid refines
    the coarser ones and the epsilon can only be larger than at ``1e-4``.

    Parameters
    ----------
    epsilon_scale : float
        The epsilon of the event (a coarse estimate is enough).

    Returns
    -------
    interval : float
        Between ``1e-4`` and ``1.28e-2`` (``1e-4 * 2**7``).
    """
    scale = max(1.0, float(epsilon_scale))
    if not math.isfinite(scale):
        return _PLD_PROBE_INTERVAL
    return min(PLD_INTERVAL * 2.0 ** math.ceil(math.log2(scale)), _PLD_PROBE_INTERVAL)


def _pld_loss_range(event, relation):
    """Total width of the privacy-loss ranges of the base PLDs of ``event``.

    The PLD accountant builds one base PLD per distinct (possibly
    Poisson-subsampled) Gaussian of the event, over that mechanism's
    privacy-loss range (tails of mass ``exp(-50)`` cut, as ``dp_accounting``
    does), with one privacy-loss inversion per grid point: the dominant cost
    of an evaluation. Width over interval measures the work. A
    ``SelfComposedDpEvent`` builds its inner PLD once (its self-composition
    by FFT is cheap). ``None`` when the event holds another mechanism (the
    interval is then set by the epsilon alone). Only public quantities (noise
    multipliers, sampling rates) are read.
    """
    if isinstance(event, dp_accounting.ComposedDpEvent):
        widths = [_pld_loss_range(e, relation) for e in event.events]
        return None if None in widths else sum(widths)
    if isinstance(event, dp_accounting.SelfComposedDpEvent):
        return _pld_loss_range(event.event, relation)
    if isinstance(event, dp_accounting.NoOpDpEvent):
        return 0.0
    q = 1.0
    if isinstance(event, dp_accounting.PoissonSampledDpEvent):
        q, event = event.sampling_probability, event.event
    if not isinstance(event, dp_accounting.GaussianDpEvent):
        return None
    sigma = event.noise_multiplier
    if not (0 < sigma < math.inf and 0 < q <= 1):
        return None
    adjacency = pld.privacy_loss_mechanism.AdjacencyType
    width = 0.0
    try:
        for kind in (adjacency.ADD, adjacency.REMOVE):
            loss = pld.privacy_loss_mechanism.GaussianPrivacyLoss(
                sigma, sampling_prob=q, adjacency_type=kind
            )
            tail = loss.privacy_loss_tail()
            width += abs(
                loss.privacy_loss(tail.lower_x_truncation)
                - loss.privacy_loss(tail.upper_x_truncation)
            )
    except (ValueError, ZeroDivisionError, OverflowError):
        return None
    return width if math.isfinite(width) else None


def _work_interval(width):
    """Finest ``1e-4 * 2**k`` with at most :data:`_PLD_MAX_POINTS` grid points."""
    interval = PLD_INTERVAL
    while width / interval > _PLD_MAX_POINTS and interval < _PLD_MAX_INTERVAL:
        interval *= 2.0
    return interval


def _pld_evaluate(event, delta, neighbouring):
    """Epsilon of the ``"pld"`` accountant at a bounded amount of work.

    For events of (subsampled) Gaussians the interval is the finest
    power-of-two multiple of ``1e-4`` whose base PLDs have at most
    :data:`_PLD_MAX_POINTS` grid points in all (:func:`_work_interval`): one
    evaluation then costs about 0.1-0.3 s whatever the number of distinct
    noise levels (adp-sgd composes about eight). Otherwise a cheap probe at
    ``1.28e-2`` sets the interval :func:`pld_interval`. Any interval gives a
    pessimistic (upper) bound: ``dp_accounting`` rounds privacy losses up and
    counts its truncated tails as infinite loss, and the intervals are
    power-of-two multiples of ``1e-4``, so each grid refines the coarser
    ones and the epsilon is never below the one at ``1e-4``.
    """
    relation = _NEIGHBOURING[neighbouring]
    width = _pld_loss_range(event, relation)
    if width is not None:
        return _search.pld_epsilon(event, delta, relation, _work_interval(width))
    probe = _search.pld_epsilon(event, delta, relation, _PLD_PROBE_INTERVAL)
    if not math.isfinite(probe):
        return math.inf
    interval = pld_interval(probe)
    if interval >= _PLD_PROBE_INTERVAL:
        return probe
    return _search.pld_epsilon(event, delta, relation, interval)


def _check_real(**values):
    """``TypeError`` unless every value is a real number (not a str or bool)."""
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"{name} must be a real number, got {value!r}.")


def _epsilon_key(event, delta, accountant, neighbouring):
    try:
        key = (event, float(delta), accountant, neighbouring)
        hash(key)
    except TypeError:
        # Events holding lists (ComposedDpEvent) are unhashable; their repr
        # is exact (dataclass fields, floats printed round-trip) and serves.
        key = (repr(event), float(delta), accountant, neighbouring)
    return key


def _remember(cache, key, value):
    cache[key] = value
    if len(cache) > _CACHE_SIZE:
        cache.popitem(last=False)


def _evaluate(event, delta, accountant, neighbouring):
    """``(epsilon, optimal RDP order or None)`` by the full accountant, cached."""
    key = _epsilon_key(event, delta, accountant, neighbouring)
    if key in _epsilon_cache:
        _epsilon_cache.move_to_end(key)
        return _epsilon_cache[key], _order_cache.get(key)
    acc = make_accountant(accountant, neighbouring)
    if not acc.supports(event):
        raise ValueError(f"The {accountant!r} accountant does not support {event!r}.")
    order = None
    if accountant == "pld":
        epsilon = _pld_evaluate(event, delta, neighbouring)
        _remember(_epsilon_cache, key, epsilon)
        _remember(_order_cache, key, order)
        return epsilon, order
    try:
        acc.compose(event)
        if accountant == "rdp":
            epsilon, order = acc.get_epsilon_and_optimal_order(delta)
        else:
            epsilon = acc.get_epsilon(delta)
        epsilon = float(epsilon)
    except (ZeroDivisionError, OverflowError):
        # Noise so small that the accountant's arithmetic underflows (e.g. a
        # noise multiplier of 1e-190, whose square is 0): no finite epsilon
        # can be certified, and inf is the honest upper bound.
        epsilon = math.inf
    _remember(_epsilon_cache, key, epsilon)
    _remember(_order_cache, key, order)
    return epsilon, order


@quiet_accounting
def compute_epsilon(event, delta, accountant="rdp", neighbouring="add_or_remove_one"):
    """Epsilon of ``event`` at ``delta`` according to ``accountant``.

    Parameters
    ----------
    event : dp_accounting.DpEvent
        The mechanism, for example
        ``SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(s)), T)``.
    delta : float
        Target delta in ``[0, 1)``.
    accountant : {"rdp", "pld"}, default="rdp"
        ``"pld"``: dp-accounting's PLD accountant at a bounded amount of
        work: for events of (subsampled) Gaussians the finest interval
        ``1e-4 * 2**k`` whose base PLDs have at most 40000 grid points; for
        others the interval :func:`pld_interval` of the event's epsilon (read
        from a cheap evaluation at interval ``1.28e-2``). An upper bound at
        any interval, never below the epsilon at ``1e-4``.
    neighbouring : {"add_or_remove_one", "replace_one"}, default="add_or_remove_one"

    Returns
    -------
    epsilon : float
        ``inf`` for a non-private event (for example zero noise).

    Notes
    -----
    Results are cached on ``(event, delta, accountant, neighbouring)``
    (``DpEvent`` objects are frozen and hashable), so that repeated fits of
    the same configuration (cross-validation, audits) account once.
    """
    _check_real(delta=delta)
    if not 0 <= float(delta) <= 1:
        raise ValueError(f"delta must be in [0, 1], got {delta!r}.")
    return _evaluate(event, delta, accountant, neighbouring)[0]


@quiet_accounting
def calibrate_noise(
    make_event,
    epsilon,
    delta,
    *,
    accountant="rdp",
    neighbouring="add_or_remove_one",
    rtol=1e-4,
    cache_key=None,
):
    """Smallest noise multiplier whose event meets ``(epsilon, delta)``.

    The search is cheap and ``dp_accounting`` has the last word. With the
    RDP accountant the root is found on a subset of ``dp_accounting``'s
    default orders (a dozen cheap ones, then the default orders around the
    optimum); a subset never gives a smaller epsilon than the full set, and
    the subset root is the full root once the full accountant's optimal
    order lies in the subset, which is checked. With the PLD accountant the
    root is found at a coarser discretisation (four times the bounded-work
    interval of :func:`compute_epsilon`, or ten times :func:`pld_interval`),
    starting from an RDP hint, then refined by at most two full-resolution
    evaluations.
    Either way the returned value ``s`` is *verified* on the exact event with
    the accountant's full settings: ``compute_epsilon(make_event(s), delta)
    <= epsilon`` always holds (``s`` is increased until it does). It may
    spend up to about ``rtol`` (relative, in noise) less than the budget.

    Parameters
    ----------
    make_event : callable
        ``make_event(noise_multiplier) -> DpEvent``; epsilon must decrease as
        the noise multiplier grows. It must not touch private data.
    epsilon : float
        Target epsilon, ``> 0``.
    delta : float
        Target delta, in ``[0, 1)``.
    accountant : {"rdp", "pld"}, default="rdp"
    neighbouring : {"add_or_remove_one", "replace_one"}, default="add_or_remove_one"
    rtol : float, default=1e-4
        Relative precision of the returned noise multiplier.
    cache_key : hashable or None, default=None
        If given, the result is cached under
        ``(cache_key, epsilon, delta, accountant, neighbouring, rtol)`` in
        memory and on disk (see :func:`set_calibration_cache`), so that
        repeated identical fits (cross-validation, grid search, joblib
        workers, repeated scripts) calibrate once. The key must determine
        ``make_event`` completely. A disk entry is used only if it is intact
        (key and checksum match, same ``dp_accounting`` version) and the
        event it stores is exactly ``make_event`` of its noise with an
        epsilon within the budget; otherwise it is ignored.

    Returns
    -------
    noise_multiplier : float
    """
    _check_real(epsilon=epsilon, delta=delta)
    epsilon = float(epsilon)
    delta = float(delta)
    if not epsilon > 0 or math.isinf(epsilon) or math.isnan(epsilon):
        raise ValueError(f"epsilon must be a positive finite number, got {epsilon!r}.")
    if not 0 <= delta < 1:
        raise ValueError(f"delta must be in [0, 1), got {delta!r}.")
    make_accountant(accountant, neighbouring)  # validates both names
    key = disk_key = None
    if cache_key is not None:
        key = (cache_key, epsilon, delta, accountant, neighbouring, rtol)
        if key in _calibration_cache:
            _calibration_cache.move_to_end(key)
            return _calibration_cache[key]
        if _disk_cache.cache_directory() is not None:
            disk_key = _disk_cache.make_key(
                [accountant, neighbouring, epsilon, delta, rtol, repr(cache_key)]
                + [repr(make_event(1.0))]
            )
            noise = _from_disk(
                disk_key, make_event, epsilon, delta, accountant, neighbouring
            )
            if noise is not None:
                _remember(_calibration_cache, key, noise)
                return noise

    noise = _search_noise(make_event, epsilon, delta, accountant, neighbouring, rtol)

    # Verification by the full accountant on the exact event: never return a
    # noise whose epsilon exceeds the target.
    step = rtol * noise
    while compute_epsilon(make_event(noise), delta, accountant, neighbouring) > epsilon:
        noise += step
        step *= 2.0
    if key is not None:
        _remember(_calibration_cache, key, noise)
    if disk_key is not None:
        event = make_event(noise)
        spent = compute_epsilon(event, delta, accountant, neighbouring)
        _disk_cache.store(
            disk_key, {"noise": noise, "event": repr(event), "epsilon": spent}
        )
    return noise


def _from_disk(disk_key, make_event, epsilon, delta, accountant, neighbouring):
    """A cached noise that passes every check, or ``None``."""
    payload = _disk_cache.load(disk_key)
    if payload is None:
        return None
    noise, stored_event, spent = (payload.get(k) for k in ("noise", "event", "epsilon"))
    if not (
        isinstance(noise, float)
        and isinstance(spent, float)
        and isinstance(stored_event, str)
        and 0 < noise <= _MAX_NOISE
        and 0 <= spent <= epsilon
    ):
        return None
    event = make_event(noise)
    if repr(event) != stored_event:
        return None  # the solver's event changed since: stale
    key = _epsilon_key(event, delta, accountant, neighbouring)
    if key not in _epsilon_cache:
        _remember(_epsilon_cache, key, spent)
    return noise


def _unreachable(epsilon, delta):
    return ValueError(
        f"The privacy budget epsilon={epsilon}, delta={delta} cannot be met "
        f"with a noise multiplier below {_MAX_NOISE:g}; increase epsilon, "
        "delta or the dataset size, or reduce the number of steps."
    )


def _search_noise(make_event, epsilon, delta, accountant, neighbouring, rtol):
    """A candidate noise (verified by the caller), see :func:`calibrate_noise`."""
    relation = _NEIGHBOURING[neighbouring]
    probe = make_event(1.0)
    if not make_accountant(accountant, neighbouring).supports(probe):
        raise ValueError(f"The {accountant!r} accountant does not support {probe!r}.")
    if accountant == "rdp":

        def verify(s):
            return _evaluate(make_event(s), delta, accountant, neighbouring)

        noise = _search.rdp_root(
            make_event, epsilon, delta, relation, rtol, _MAX_NOISE, verify
        )
        if noise is None:
            raise _unreachable(epsilon, delta)
        return noise
    start = 1.0
    bounded = _pld_loss_range(probe, relation) is not None
    if make_accountant("rdp", neighbouring).supports(probe):
        start = (
            _search.rdp_root(
                make_event, epsilon, delta, relation, 1e-2, _MAX_NOISE, None,
                coarse_only=bounded,
            )
            or start
        )  # fmt: skip
    # A coarser interval than the full one (cheaper): the full refinement
    # below then needs few evaluations. Ten times coarser than the interval at
    # the target epsilon; when the work bound sets the full interval, four times
    # (a hint, to 1%: ten times would bias the root by several percent).
    width = _pld_loss_range(make_event(start), relation)
    interval, tol = min(10 * pld_interval(epsilon), _PLD_PROBE_INTERVAL), rtol
    if width is not None:
        interval, tol = min(4 * _work_interval(width), _PLD_MAX_INTERVAL), 1e-2
    noise = _search.coarse_pld_root(
        make_event, epsilon, delta, relation, max(tol, 1e-3), start, _MAX_NOISE,
        interval=interval,
    )  # fmt: skip
    if noise is None:
        raise _unreachable(epsilon, delta)

    def full(s):
        return compute_epsilon(make_event(s), delta, accountant, neighbouring)

    return _search.refine_full(full, epsilon, noise, rtol, max_evaluations=2)
