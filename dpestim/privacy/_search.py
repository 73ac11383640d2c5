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
accountant (ten times cheaper), starting from the RDP root, and then checked
at full resolution.
"""

import math

import numpy as np
from dp_accounting import pld, rdp
from scipy.optimize import brentq

__all__ = ["coarse_pld_root", "rdp_root", "refine_full"]

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
    acc = rdp.RdpAccountant(orders=list(orders), neighboring_relation=relation)
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


def _neighbourhood(order):
    """Default orders strictly between the coarse orders around ``order``."""
    coarse = np.asarray(_COARSE + _LARGE)
    below = coarse[coarse < order]
    above = coarse[coarse > order]
    lo = below.max() if below.size else 1.0
    hi = above.min() if above.size else math.inf
    return set(_DEFAULT_ORDERS[(_DEFAULT_ORDERS > lo) & (_DEFAULT_ORDERS < hi)])


def _grid_neighbours(order, width=5):
    """``order`` and ``width`` neighbours on each side in the default grid."""
    i = int(np.searchsorted(_DEFAULT_ORDERS, order))
    return set(_DEFAULT_ORDERS[max(i - width, 0) : i + width + 1])


def _root(f, epsilon, start, rtol, max_noise, slope=1.0):
    """Smallest ``s`` (to ``rtol``) with ``f(s) <= epsilon`` for decreasing ``f``.

    Works on ``log f`` against ``log s``: secant steps from ``start`` (slope
    ``-slope`` until two points are known, overshooting by 10% to cross it)
    bracket the root, then Brent's method refines it. Returns ``None`` when
    ``f`` stays above ``epsilon`` up to ``max_noise``, and ``1e-8`` when the
    budget is met there already.
    """
    cache = {}
    top, bottom = math.log(max_noise), math.log(1e-8)

    def g(log_s):
        if log_s not in cache:
            cache[log_s] = _finite_log(f(math.exp(log_s))) - math.log(epsilon)
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
        if a != b and ga != gb:
            slope = max((ga - gb) / (b - a), 0.05)
    lo, hi = (a, b) if a < b else (b, a)
    root = brentq(g, lo, hi, xtol=rtol / 4, rtol=4 * np.finfo(float).eps)
    # brentq may stop on either side of the root: step up to the feasible one.
    step = rtol / 4
    while root < hi and g(root) > 0:
        root = min(root + step, hi)
        step *= 2.0
    return math.exp(root)


def rdp_root(make_event, epsilon, delta, relation, rtol, max_noise, verify):
    """Candidate RDP noise: root on a small, growing subset of the default orders.

    The root on the coarse orders is found first; at each candidate the
    default orders around the subset's optimal order are evaluated once, and
    if the best of them is not in the subset, it joins with five grid
    neighbours on each side and the root is found again.
    ``verify(noise) -> (epsilon, optimal order)`` is the full accountant:
    when its optimal order is in the subset, the subset root is the full
    root; otherwise that order joins the subset and the loop goes on (five
    rounds at most). Returns the last noise that passed ``verify``, else the
    last candidate (the caller verifies it again and increases it if
    needed), or ``None`` when the budget is unreachable. With ``verify=None``
    the subset root is returned unverified (a hint).
    """

    def solve(orders, start, tol):
        sorted_orders = sorted(orders)

        def f(s):
            return rdp_epsilon(make_event(s), delta, relation, sorted_orders)[0]

        return _root(f, epsilon, start, tol, max_noise, slope=2.0)

    orders = _coarse_orders(epsilon, delta)
    candidate = solve(orders, 1.0, max(rtol, 3e-3))
    precise = rtol >= 3e-3
    noise = None
    last = None
    for _ in range(5):
        if candidate is None or candidate <= 1e-8:
            return candidate if noise is None else noise
        last = candidate
        # The optimal order among the default orders around the subset's
        # optimum (cheap: one evaluation, no root finding); re-solve if it is
        # not yet in the subset.
        _, order = rdp_epsilon(make_event(candidate), delta, relation, sorted(orders))
        if order is not None:
            local = sorted(orders | _neighbourhood(order))
            _, order = rdp_epsilon(make_event(candidate), delta, relation, local)
            if order is not None and order not in orders:
                orders |= _grid_neighbours(order)
                candidate, precise = solve(orders, candidate, rtol), True
                continue
        if not precise:
            candidate, precise = solve(orders, candidate, rtol), True
            continue
        if verify is None:
            return candidate
        full_eps, full_order = verify(candidate)
        if full_eps <= epsilon:
            noise = candidate
        if full_order is None or full_order in orders:
            return noise if noise is not None else last
        orders |= _grid_neighbours(full_order)
        candidate = solve(orders, candidate, rtol)
    return noise if noise is not None else last


def coarse_pld_root(make_event, epsilon, delta, relation, rtol, start, max_noise):
    """Root of the PLD epsilon at a coarse discretisation (a search hint)."""

    def f(s):
        acc = pld.PLDAccountant(
            neighboring_relation=relation,
            value_discretization_interval=_PLD_SEARCH_INTERVAL,
        )
        try:
            return float(acc.compose(make_event(s)).get_epsilon(delta))
        except (ZeroDivisionError, OverflowError):
            return math.inf

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
