"""Private column balance: a column that dominates the rows' norms is scaled.

Every estimator's rules read one private row scale (the median row norm).
One column left in its own units among scaled ones (a sampling weight of
1e5, a population count, an amount in dollars) sets that scale alone, so
every other column is tiny in the rules' units and the fit learns nearly
nothing, at any epsilon (user trial, 2026-11-28: Adult with its raw
``fnlwgt`` column and the other columns standardised, ``LogisticRegression``
at epsilon 1, 2 and inf: 0.764, the majority rate, against scikit-learn's
0.853; California with its raw ``population``, ``Ridge`` R^2 0.015 against
0.650). The in-fit centring removes offsets, not spreads.

The mechanism runs after the in-fit centring (:mod:`._centring`), with its
released L1 radius ``R`` (the rows' private median L1 norm):

1. the centred rows clipped to L1 norm ``R`` (a row whose norm is not
   finite adds nothing), their entries squared and summed per column, plus
   Laplace noise of scale ``b = sensitivity R^2 / epsilon`` per column, over
   ``n`` (public): the noisy mean squares ``m``. A row's vector of squares
   has L1 norm ``||x||_2^2 <= ||x||_1^2 <= R^2``, so the L1 sensitivity is
   ``R^2`` under add/remove one and ``2 R^2`` under replace-one
   (``LaplaceDpEvent(1 / epsilon)`` in units of it);
2. post-processing: a column is dominant where its ``m_j`` exceeds
   :data:`DOMINANCE` (one half) of the sum of the ``m`` of the columns not
   yet found dominant, and :func:`~._centring.laplace_move_threshold`
   noise scales (so that, over the ``d`` columns together, noise alone makes
   a column dominant with probability at most 5%); found one at a time, the
   largest first, until none qualifies;
3. each dominant column is divided by ``sqrt(m_j)`` (a mean square of about
   1); the others are left as given. The estimator fits on ``x / sigma`` and
   maps ``coef_`` back (``coef_j = w_j / sigma_j``).

A dataset whose columns are on comparable scales has no dominant column
(with ``d >= 3``, no column carries half of the rows' squared norms), so
the rows are used as given: the project's loaders, standardised or one-hot
columns. With one or two columns, the larger may be scaled to a mean square
of 1, which the row scale then absorbs. Measured: ``benchmarks/utility/
column_balance.py`` (``benchmarks/results/column_balance.md``).
"""

import math

import numpy as np

from .._kernels.clipping import clip_factors
from ._centring import _row_norms, laplace_move_threshold
from ._fit_scales import MAX_DRAW_EPSILON

__all__ = [
    "BALANCE_SHARE",
    "DOMINANCE",
    "dominant_scales",
    "exact_column_squares",
    "laplace_column_squares",
    "plan_balance",
]

#: Share of ``epsilon`` of the noisy mean squares (where the centring runs).
BALANCE_SHARE = 0.01
#: A column is dominant when its mean square exceeds this share of the sum
#: of the columns not yet found dominant (itself included).
DOMINANCE = 0.5


def plan_balance(epsilon):
    """Epsilon of the column balance's Laplace release (public)."""
    return min(BALANCE_SHARE * float(epsilon), MAX_DRAW_EPSILON)


def laplace_column_squares(X, radius, epsilon, sensitivity, rng):
    """``(m, threshold)``: noisy mean squares of the columns of dense ``X``.

    ``X``: the centred rows (float); ``radius``: the released L1 radius
    ``R``; ``sensitivity``: 1 (add/remove one) or 2 (replace-one), in units
    of ``R^2``. ``threshold``: :func:`~._centring.laplace_move_threshold`
    noise scales over ``n``, the least a dominant column's ``m_j`` must
    exceed.
    """
    n, d = X.shape
    b = sensitivity * radius * radius / epsilon
    m = (_clipped_squares(X, radius) + rng.laplace(scale=b, size=d)) / n
    return m, laplace_move_threshold(d) * b / n


def _clipped_squares(X, radius):
    """Per column, the sum of the squared entries of the rows of ``X``
    clipped to L1 norm ``radius`` (a row whose norm is not finite adds
    nothing; rounding-safe factors, :func:`~dpestim._kernels.clipping.
    clip_factors`). A row adds a vector of L1 norm ``||x||_2^2 <= radius^2``.
    """
    D = np.asarray(X, dtype=np.float64)
    factors = clip_factors(_row_norms(D, 1), radius, D.shape[1])
    keep = factors > 0
    with np.errstate(over="ignore"):
        clipped = D[keep] * factors[keep, None]
        return np.einsum("ij,ij->j", clipped, clipped)


def exact_column_squares(X):
    """Mean squares of the columns (``epsilon = inf``: the limit, no noise)."""
    D = np.asarray(X, dtype=np.float64)
    with np.errstate(over="ignore"):
        return np.einsum("ij,ij->j", D, D) / D.shape[0], 0.0


def dominant_scales(m, threshold):
    """``sigma``: ``sqrt(m_j)`` for each dominant column, 1 elsewhere.

    ``None`` when no column is dominant (or ``m`` is not finite: a release
    that overflowed says nothing). Post-processing of ``m``.
    """
    m = np.asarray(m, dtype=np.float64)
    if not np.isfinite(m).all():
        return None
    sigma = np.ones(m.shape[0])
    active = np.ones(m.shape[0], dtype=bool)
    while True:
        # unbiased: the noise of the many small columns sums to about 0
        # (their positive parts alone would add half a noise scale each)
        rest = float(m[active].sum())
        candidates = np.flatnonzero(active & (m > DOMINANCE * rest) & (m > threshold))
        if candidates.size == 0 or rest <= 0.0:
            break
        j = candidates[np.argmax(m[candidates])]
        sigma[j] = math.sqrt(m[j])
        active[j] = False
    return None if active.all() else sigma
