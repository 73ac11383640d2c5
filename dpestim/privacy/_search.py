"""Fast searches for a noise multiplier meeting a budget (hints, not authority).

The functions here find a *candidate* noise multiplier cheaply; the caller
(:func:`dpestim.privacy.calibrate_noise`) verifies every candidate with the
full ``dp_accounting`` accountant on the exact event before returning it.

RDP: the epsilon of an RDP accountant is a minimum over its orders, so an
accountant restricted to a subset of ``dp_accounting``'s default orders gives
an epsilon *no smaller* than the full one at every noise. A noise meeting the
budget on a subset therefore meets it on the full set, and the subset root is
the full root as soon as the full accountant's optimal order at that noise
lies in the subset (its epsilon is then the same number). The search starts
on a dozen cheap orders and adds the default orders around the optimum.

PLD: the root is searched with a coarser discretisation of the same
accountant, starting from an RDP hint, and then checked at full resolution
(the interval of :func:`dpestim.privacy.accounting.compute_epsilon`).
"""

import math

import numpy as np
from dp_accounting import pld, rdp

from .mixture import MaxRdpAccountant

__all__ = ["coarse_pld_root", "pld_epsilon", "rdp_root", "refine_full"]

_DEFAULT_ORDERS = np.asarray(rdp.rdp_privacy_accountant.DEFAULT_RDP_ORDERS, float)
# Cheap bracketing orders, all in the default set. Integer orders cost their
# value in terms; fractional ones are left to the refinement, because at large
# sampling rates dp_accounting's series for them runs to its 1000-term limit
# (slowly, with a logged warning) on every evaluation.
_COARSE = (2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0, 24.0, 32.0, 48.0, 63.0)
_LARGE = (128.0, 256.0, 512.0, 1024.0)
_PLD_SEARCH_INTERVAL = 1e-3


def _finite_log(value):
    return math.log(value) if 0 < value < math.inf else (700.0 if value else -700.0)


def rdp_epsilon(event, delta, relation, orders):
    """``(epsilon, optimal order)`` of ``event`` on the given RDP orders."""
    acc = MaxRdpAccountant(orders=list(orders), neighboring_relation=relation)
    try:
        eps, order = acc.compose(event).get_epsilon_and_optimal_order(delta)
    except (ZeroDivisionError, OverflowError):
        return math.inf, None
    return float(eps), order


def _conversion(order, delta):
    """Epsilon of a zero-RDP order (``dp_accounting``'s conversion term)."""
    return math.log1p(-1 / order) - math.log(delta * order) / (order - 1)


def _coarse_orders(epsilon, delta):
    """The bracketing orders: the large orders only when a budget needs them.

    An order whose conversion term alone exceeds ``epsilon`` cannot certify
    the budget at any noise; when that already holds at order 63 (small
    epsilon or delta) the root lies at a larger order.
    """
    orders = set(_COARSE)
    if delta > 0 and _conversion(_COARSE[-1], delta) > 0.5 * epsilon:
        orders |= set(_LARGE)
    return orders


def _grid_neighbours(order, width=5):
    """``order`` and ``width`` neighbours on each side in the default grid."""
    i = int(np.searchsorted(_DEFAULT_ORDERS, order))
    return set(_DEFAULT_ORDERS[max(i - width, 0) : i + width + 1])


def _root(f, epsilon, start, rtol, max_noise, slope=1.0):
    """Smallest ``s`` (to ``rtol``) with ``f(s) <= epsilon`` for decreasing ``f``.

    Works on ``log f`` against ``log s``: secant steps from ``start`` (slope
    ``-slope`` until two points are known, overshooting by 10% to cross it)
    bracket the root, then regula falsi (Illinois) refines it. Returns ``None`` when
    ``f`` stays above ``epsilon`` up to ``max_noise``, and ``1e-8`` when the
    budget is met there already.
    """
    cache = {}
    top, bottom = math.log(max_noise), math.log(1e-8)

    clamped = set()  # points where epsilon was 0 or inf (log clamped to +-700)

    def g(log_s):
        if log_s not in cache:
            value = f(math.exp(log_s))
            if not 0 < value < math.inf:
                clamped.add(log_s)
            cache[log_s] = _finite_log(value) - math.log(epsilon)
        return cache[log_s]

    a = min(max(math.log(start), bottom), top)
    ga = g(a)
    b, gb = a, ga
    for _ in range(60):
        step = gb / slope
        step = math.copysign(min(max(1.1 * abs(step), abs(step) + rtol), 2.0), step)
        a, ga = b, gb
        b = min(max(b + step, bottom), top)
        gb = g(b)
        if (ga > 0) != (gb > 0):
            break
        if b in (top, bottom):
            return None if gb > 0 else 1e-8
        # a clamped value (epsilon 0 or inf, log +-700) says nothing of the slope
        if a != b and ga != gb and not {a, b} & clamped:
            slope = max((ga - gb) / (b - a), 0.05)
    # Regula falsi with the Illinois modification on the bracket: ``log f``
    # is close to linear in ``log s``, so this converges in a few steps. The
    # upper end ``hi`` is always feasible (``g(hi) <= 0``).
    (lo, glo), (hi, ghi) = sorted([(a, ga), (b, gb)])
    side = 0
    for _ in range(100):
        if hi - lo <= rtol / 4:
            break
        secant = ghi != glo and not {lo, hi} & clamped
        x = hi - ghi * (hi - lo) / (ghi - glo) if secant else 0.5 * (lo + hi)
        # Keep the new point well inside the bracket.
        margin = min(rtol / 8, (hi - lo) / 4)
        x = min(max(x, lo + margin), hi - margin)
        gx = g(x)
        if gx > 0:
            lo, glo = x, gx
            if side == -1:
                ghi /= 2.0
            side = -1
        else:
            hi, ghi = x, gx
            if side == 1:
                glo /= 2.0
            side = 1
    return math.exp(hi)


def _windowed(make_event, delta, relation, coarse):
    """Epsilon on the coarse orders, evaluated on three of them only.

    The window is the subset's optimal order and its two coarse neighbours;
    when the optimum reaches an edge of the window, the window moves and the
    noise is evaluated again. Under the unimodality of epsilon in the order
    (the usual shape of an RDP curve) this is the epsilon of all the coarse
    orders at about a third of the cost; without it, it is still an upper
    bound on the full epsilon (any subset is), and the caller's later rounds
    and the full verification decide. ``state["order"]`` is the last optimum.
    """
    state = {"window": list(coarse), "order": None}

    def f(s):
        event = make_event(s)
        while True:
            eps, order = rdp_epsilon(event, delta, relation, state["window"])
            if order is None:
                return eps
            i = coarse.index(order)
            window = coarse[max(i - 1, 0) : i + 2]
            inside = set(window) <= set(state["window"])
            state["window"], state["order"] = window, order
            if inside:
                return eps

    return f, state


def _best_order(make_event, s, delta, relation, orders):
    """Optimal order at ``s`` among ``orders``, widened while it sits on an edge."""
    orders = set(orders)
    for _ in range(8):
        _, order = rdp_epsilon(make_event(s), delta, relation, sorted(orders))
        if order is None:
            return None
        if _grid_neighbours(order, 1) <= orders:  # not on an edge
            return order
        orders |= _grid_neighbours(order, 5)
    return order


def rdp_root(
    make_event, epsilon, delta, relation, rtol, max_noise, verify, coarse_only=False
):
    """Candidate RDP noise: root on a small, growing subset of the default orders.

    Three stages, each on a few orders (an RDP evaluation costs about the
    sum of its integer orders per distinct sampled Gaussian):

    1. the root on the coarse orders at a loose tolerance, each evaluation on
       a window of three coarse orders around the optimum (:func:`_windowed`);
    2. at that noise, the optimal default order near the coarse optimum (its
       five grid neighbours on each side, widened while the optimum sits on an
       edge), then the root at ``rtol`` on that order and its three grid
       neighbours on each side;
    3. ``verify(noise) -> (epsilon, optimal order)``, the full accountant: when
       its optimal order is in the subset, the subset root is the full root;
       otherwise that order joins the subset and the root is found again
       (five rounds at most).

    Returns the last noise that passed ``verify``, else the last candidate
    (the caller verifies it again and increases it if needed), or ``None``
    when the budget is unreachable. With ``verify=None`` the subset root is
    returned unverified (a hint); with ``coarse_only`` too, the root of
    stage 1 (a cheaper hint, no smaller than the stage-3 root).
    """

    def solve(orders, start, tol):
        sorted_orders = sorted(orders)

        def f(s):
            return rdp_epsilon(make_event(s), delta, relation, sorted_orders)[0]

        return _root(f, epsilon, start, tol, max_noise, slope=2.0)

    coarse = sorted(_coarse_orders(epsilon, delta))
    f, state = _windowed(make_event, delta, relation, coarse)
    candidate = _root(f, epsilon, 1.0, max(rtol, 3e-3), max_noise, slope=2.0)
    if coarse_only and verify is None and candidate is not None:
        return candidate
    if candidate is None:
        # The window assumes epsilon unimodal in the order. At very large
        # noise it is not: dp_accounting's KL bound certifies epsilon = 0 at
        # the smallest orders first. Before calling the budget unreachable,
        # search on all the coarse orders (as before the window existed).
        candidate = solve(coarse, 1.0, max(rtol, 3e-3))
        if candidate is None or candidate <= 1e-8:
            return candidate
        _, order = rdp_epsilon(make_event(candidate), delta, relation, coarse)
        state["order"], state["window"] = order, [order]
    if candidate <= 1e-8 or state["order"] is None:
        return candidate
    near = _grid_neighbours(state["order"], 5) | set(state["window"])
    order = _best_order(make_event, candidate, delta, relation, near)
    if order is None:
        return candidate
    # Three grid neighbours on each side: the optimum drifts as the noise
    # moves from the coarse root to the precise one.
    orders = _grid_neighbours(order, 3)
    precise = False
    noise = None
    last = None
    for _ in range(5):
        if not precise:
            candidate = solve(orders, candidate, rtol)
            precise = True
        if candidate is None or candidate <= 1e-8:
            return candidate if noise is None else noise
        last = candidate
        # The optimum must not sit on an edge of the subset (a cheap check).
        order = _best_order(make_event, candidate, delta, relation, orders)
        if order is not None and not _grid_neighbours(order, 1) <= orders:
            orders |= _grid_neighbours(order, 3)
            precise = False
            continue
        if verify is None:
            return candidate
        full_eps, full_order = verify(candidate)
        if full_eps <= epsilon:
            noise = candidate
        if full_order is None or full_order in orders:
            sub_eps = rdp_epsilon(
                make_event(candidate), delta, relation, sorted(orders)
            )[0]
            if not full_eps < sub_eps * (1 - 1e-9):
                return noise if noise is not None else last
            # The full accountant's epsilon at an order of the subset is
            # smaller than the subset's: the event's epsilon at one order
            # depends on the other orders (RepeatAndSelectDpEvent pairs
            # them), so no subset is faithful. Root on the full accountant.
            root = _root(lambda s: verify(s)[0], epsilon, candidate, rtol, max_noise)
            return root if root is not None else (noise or last)
        orders |= _grid_neighbours(full_order, 2)
        precise = False
    return noise if noise is not None else last


def pld_epsilon(event, delta, relation, interval):
    """PLD epsilon of ``event`` at ``interval`` (``inf`` on underflow)."""
    acc = pld.PLDAccountant(
        neighboring_relation=relation, value_discretization_interval=interval
    )
    try:
        return float(acc.compose(event).get_epsilon(delta))
    except (ZeroDivisionError, OverflowError):
        return math.inf


def coarse_pld_root(
    make_event, epsilon, delta, relation, rtol, start, max_noise, interval=None
):
    """Root of the PLD epsilon at a coarse discretisation (a search hint)."""
    interval = _PLD_SEARCH_INTERVAL if interval is None else interval

    def f(s):
        return pld_epsilon(make_event(s), delta, relation, interval)

    return _root(f, epsilon, start, rtol, max_noise)


def refine_full(full, epsilon, noise, rtol, max_evaluations):
    """Improve ``noise`` with at most ``1 + max_evaluations`` full evaluations.

    Secant steps on ``log epsilon`` against ``log noise`` (slope -1 until two
    points are known). Returns the smallest noise seen that meets the budget,
    or, if none did, the last one scaled up by the power law (the caller
    verifies and increases it further if needed).
    """
    points = [(math.log(noise), _finite_log(full(noise)))]
    target = math.log(epsilon)
    close = math.log1p(-max(rtol, 1e-3))
    for _ in range(max_evaluations):
        feasible = [p for p in points if p[1] <= target]
        infeasible = [p for p in points if p[1] > target]
        best = None
        if feasible:
            best = min(feasible)
            if best[1] >= target + close:
                break
        if feasible and infeasible:
            (x0, y0), (x1, y1) = max(infeasible), min(feasible)
            x = x0 + (target - y0) * (x1 - x0) / (y1 - y0) if y1 != y0 else x1
            x = min(max(x, x0), x1)
            x += 1e-3 * (x1 - x0)  # stay on the feasible side of the secant
        else:
            x, y = best if feasible else max(infeasible)
            x = x + (y - target) + (0.0 if feasible else 1e-3)
        if any(abs(x - p[0]) < rtol / 4 for p in points):
            break
        points.append((x, _finite_log(full(math.exp(x)))))
    feasible = [p for p in points if p[1] <= target]
    if feasible:
        return math.exp(min(feasible)[0])
    x, y = max(points)
    return math.exp(x + (y - target) + 1e-3)
