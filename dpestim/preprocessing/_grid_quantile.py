"""The public grid and the exponential-mechanism quantile of the private scales.

Every quantile :mod:`~dpestim.preprocessing._fit_scales` estimates is one
draw of the exponential mechanism over a public grid of bins
(:func:`bin_quantile`), an ``epsilon``-DP mechanism under both neighbouring
relations (its event is
:class:`~dpestim.solvers.saddle.ExponentialMechanismDpEvent`), and a draw runs
only when :func:`feasible` says it is reliable at its epsilon.

The grid
--------
Bins are geometric, :data:`BINS_PER_OCTAVE` per factor 2 (relative width
``2 ** (1 / 8) - 1``, about 9%), covering magnitudes
``[2 ** -MAX_OCTAVE, 2 ** MAX_OCTAVE]`` (about ``1e-12`` to ``1e12``), with
one open bin at each end (a value beyond the range is estimated at the range's
edge) and, for signed values, the mirrored bins and a bin around 0. The
estimate is the geometric midpoint of the chosen bin.

Beyond the range
----------------
A private draw that lands in an open end bin says only "beyond the range":
the estimate is the range's edge, :func:`beyond_range` tells (from the
released value alone, post-processing), and the callers warn. A non-private
fit (``epsilon = inf``) whose best bin is an open end takes the exact
quantile instead, so its limit stays right at any scale.
"""

import math

import numpy as np

from ..exceptions import UtilityWarning
from ..utils.fit_warnings import warn_in_fit

__all__ = [
    "BINS_PER_OCTAVE",
    "FAILURE",
    "MAX_OCTAVE",
    "beyond_range",
    "bin_quantile",
    "bin_utility",
    "feasible",
    "feasible_epsilon",
    "positive_edges",
    "signed_edges",
    "warn_beyond_range",
]

#: Bins per factor 2 of the grid.
BINS_PER_OCTAVE = 8
#: The grid covers magnitudes ``2 ** -MAX_OCTAVE`` to ``2 ** MAX_OCTAVE``.
MAX_OCTAVE = 40
#: Largest probability that an estimate's rank misses its quantile by more
#: than half the distance to the nearest end (see :func:`feasible`). A
#: share raised to the feasible one (small ``n epsilon``) puts a draw at this
#: bound, and the bound is nearly attained: at 0.01 (before) the exact
#: probability that a median lands more than a factor 2 away was 0.96%
#: (German's row norms, 750 rows), 0.59% (diabetes, 331 rows) and 0.48%
#: (breast cancer, 426 rows), and such a draw wrecks the fit (diabetes,
#: AdaSSP at epsilon 1: R^2 -4.8 against 0.22-0.35 for the other seeds; a
#: row scale 3,400 times too small). At 0.002: 0.19%, 0.13%, 0.11%, for
#: about 12% more epsilon per draw at that bound.
FAILURE = 0.002


def positive_edges():
    """Public bin edges ``2 ** (k / BINS_PER_OCTAVE)`` over the grid's range."""
    k = np.arange(-MAX_OCTAVE * BINS_PER_OCTAVE, MAX_OCTAVE * BINS_PER_OCTAVE + 1)
    return np.exp2(k / BINS_PER_OCTAVE)


def signed_edges():
    """Public bin edges for signed values: mirrored geometric edges."""
    pos = positive_edges()
    return np.concatenate([-pos[::-1], pos])


def _representative(edges, j):
    """The estimate of bin ``j`` of ``(-inf, e_0), [e_0, e_1), ..., [e_m, inf)``."""
    if j == 0:
        return float(edges[0])
    if j == edges.shape[0]:
        return float(edges[-1])
    lo, hi = float(edges[j - 1]), float(edges[j])
    if lo < 0 < hi:  # the bin around 0
        return 0.0
    mid = math.sqrt(lo * hi) if lo > 0 else -math.sqrt(lo * hi)
    return mid


def bin_utility(values, quantile, edges):
    """Utility of every bin of ``edges`` for the ``quantile`` of ``values``.

    Bin ``j`` is ``[e_{j-1}, e_j)`` (open at both ends of the grid); with
    ``L_j`` the number of values below it and ``R_j`` the number at or above
    its upper edge, its utility is ``-max(L_j - q n, R_j - (1 - q) n, 0)``:
    0 for a bin holding a ``q``-quantile, and minus the number of values one
    would have to move for it to hold one. Adding, removing or replacing one
    value changes ``L_j`` and ``R_j`` by at most 1 and ``q n``, ``(1 - q) n``
    by at most ``max(q, 1 - q) <= 1`` (``n`` is the number of values given,
    public or not), each in a direction that moves each term of the maximum by
    at most 1: the sensitivity is 1 under both relations.
    """
    v = np.sort(np.asarray(values, dtype=np.float64).ravel())
    n = v.shape[0]
    below = np.searchsorted(v, edges, side="left")  # #{v < e}
    L = np.concatenate([[0], below])
    R = np.concatenate([n - below, [0]])  # #{v >= upper edge}
    return -np.maximum(np.maximum(L - quantile * n, R - (1.0 - quantile) * n), 0.0)


def bin_quantile(values, quantile, epsilon, edges, rng):
    """An ``epsilon``-DP estimate of the ``quantile`` of ``values`` (one draw).

    The exponential mechanism over the bins of ``edges`` with the utility of
    :func:`bin_utility` (sensitivity 1): bin ``j`` is drawn with probability
    proportional to ``exp(epsilon u_j / 2)`` (Gumbel-max). Returns the bin's
    representative value (:func:`_representative`). ``epsilon = inf`` (a
    non-private fit) is the mechanism's limit: the best bin (the first of
    ties), no randomness.
    An open end bin at ``epsilon = inf`` gives the exact quantile (when it is
    nonzero), not the grid's edge.
    """
    u = bin_utility(values, quantile, edges)
    if math.isinf(epsilon):
        j = int(np.argmax(u))
        if j in (0, edges.shape[0]) and np.size(values):
            exact = float(np.quantile(np.asarray(values, dtype=np.float64), quantile))
            if exact != 0.0 and math.isfinite(exact):
                return exact
        return _representative(edges, j)
    j = int(np.argmax(epsilon * u / 2.0 + rng.gumbel(size=u.shape[0])))
    return _representative(edges, j)


def beyond_range(value):
    """Whether a positive estimate lies outside the grid's open range.

    True for the representative of an open end bin (the grid's edge
    ``2 ** -MAX_OCTAVE`` or ``2 ** MAX_OCTAVE``) and for anything beyond it;
    a function of the released value only.
    """
    return not 2.0**-MAX_OCTAVE < abs(value) < 2.0**MAX_OCTAVE


def feasible(epsilon, n_samples, quantile, n_bins):
    """Whether one draw is reliable enough to be worth its budget (public).

    A bin beyond every value (below the smallest or above the largest) has
    utility ``-min(q, 1 - q) n`` (:func:`bin_utility`) and the best bin 0, so
    the draw lands outside the data's range with probability at most
    ``n_bins exp(-epsilon min(q, 1 - q) n / 2)``; the draw is feasible when
    this is at most :data:`FAILURE`, i.e. ``epsilon min(q, 1 - q) n >= 2
    (ln n_bins + ln(1 / FAILURE))`` (about 27 for the signed grid).
    """
    t = min(quantile, 1.0 - quantile) * n_samples
    return epsilon * t >= _feasible_margin(n_bins)


def feasible_epsilon(n_samples, quantile, n_bins):
    """The smallest epsilon at which one draw is :func:`feasible` (public),
    up to rounding: ``2 (ln n_bins + ln(1 / FAILURE)) / (min(q, 1 - q) n)``."""
    return _feasible_margin(n_bins) / (min(quantile, 1.0 - quantile) * n_samples)


def _feasible_margin(n_bins):
    """``2 (ln n_bins + ln(1 / FAILURE))``: the ``epsilon min(q, 1 - q) n``
    a feasible draw needs."""
    return 2.0 * (math.log(n_bins) + math.log(1.0 / FAILURE))


def warn_beyond_range(what, data, consequence):
    """A ``UtilityWarning``: a released scale estimate is the grid's edge.

    Post-processing of the released estimate (:func:`beyond_range`): the
    warning tells nothing the release does not.
    """
    lo, hi = 2.0**-MAX_OCTAVE, 2.0**MAX_OCTAVE
    warn_in_fit(
        f"{what} fell outside the scale grid's range ({lo:.2g} to {hi:.2g}); "
        f"{consequence}, and the fit is likely poor. Rescale {data} by a public "
        "constant to bring its scale inside that range.",
        UtilityWarning,
        stacklevel=3,
    )
