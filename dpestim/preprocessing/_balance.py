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
   yet found dominant or :data:`OVER_MEAN` (10) times their mean, the
   looser (or, with the next largest, more than :data:`PAIR_DOMINANCE` of
   that sum: two columns in their own units hide each other from the
   first rule), and :func:`~._centring.laplace_move_threshold`
   noise scales (so that, over the ``d`` columns together, noise alone makes
   a column dominant with probability at most 5%); found one (or a pair)
   at a time, the largest first, until none qualifies;
3. each dominant column is divided by ``sqrt(m_j)`` (a mean square of about
   1); the others are left as given. The estimator fits on ``x / sigma`` and
   maps ``coef_`` back (``coef_j = w_j / sigma_j``).

**Later rounds** (where ``n epsilon`` affords them: :func:`plan_balance`).
One release resolves only the columns above its noise, whose scale is set
by the largest column (the radius ``R``), and the centring before it moved
only the offsets above its own noise, set by the same radius: with several
columns in their own units (a raw CSV: a weight, counts, an age), the
smaller ones stay unscaled and uncentred. Each later round runs on the rows
already balanced (``(x - c) / sigma``): the centring's round again (a
private median L1 norm and the Laplace mean of the rows clipped to it,
:func:`~._centring.laplace_centre`), then, on the re-centred rows, a
private median L2 norm ``R'`` and the mean squares of the rows clipped to
L2 norm ``R'`` (:func:`l2_column_squares`), and the same rule; the centres
add and the scales multiply (``c + sigma c'``, ``sigma sigma'``). A later
round runs only where the round before it scaled a column (a function of
released values), but every planned round is charged before the first
reads the data: the budget does not depend on the data. They take
:data:`LATER_SHARE` (1%) of epsilon more, planned only where ``n epsilon``
affords one (about 20,300; two from about 40,600).

A dataset whose columns are on comparable scales has no dominant column
(with ``d >= 3``, no column carries half of the rows' squared norms or
ten times their mean), so the rows are used as given: the project's
loaders, standardised or one-hot columns. With one or two columns, the
larger may be scaled to a mean square of 1, which the row scale then
absorbs. Measured: ``benchmarks/utility/
column_balance.py`` (``benchmarks/results/column_balance.md``).
"""

import numpy as np

from .._kernels.clipping import clip_factors
from ._centring import HALF_BIN, _row_norms, laplace_move_threshold
from ._fit_scales import MAX_DRAW_EPSILON
from ._grid_quantile import bin_quantile, feasible, positive_edges

__all__ = [
    "BALANCE_ROUNDS",
    "BALANCE_SHARE",
    "DOMINANCE",
    "LATER_SHARE",
    "OVER_MEAN",
    "PAIR_DOMINANCE",
    "dominant_scales",
    "exact_column_squares",
    "l2_column_squares",
    "laplace_column_squares",
    "plan_balance",
]

#: Share of ``epsilon`` of the noisy mean squares (where the centring runs).
BALANCE_SHARE = 0.01
#: A column is dominant when its mean square exceeds this share of the sum
#: of the columns not yet found dominant (itself included) ...
DOMINANCE = 0.5
#: ... or this many times their mean (the looser of the two: with ``k >= 20``
#: columns not yet found dominant, the mean's rule). Two or more columns in
#: their own units hide each other from the first rule (Adult's raw CSV:
#: age and hours per week, about 170 and 150 mean squares among one-hot
#: columns of 0.05); the project's loaders have no column above 5.8 times
#: the mean (Adult's dense loader, 107 columns; the others 1.0-3.8).
OVER_MEAN = 10.0
#: Two columns are dominant together when their mean squares exceed this
#: share of the sum (California's raw CSV: bedrooms and households, 0.47
#: and 0.42 of it once rooms and population are scaled); on the loaders the
#: two largest carry at most 0.54 (California's).
PAIR_DOMINANCE = 0.75


#: Most rounds of a balance: the first and up to two later ones.
BALANCE_ROUNDS = 3
#: Share of ``epsilon`` of the later rounds, where planned, on top of
#: :data:`BALANCE_SHARE`: shared equally between them, each in four equal
#: parts (the centring's radius and mean, the squares' radius and mean
#: squares).
LATER_SHARE = 0.01


def plan_balance(epsilon, n_samples):
    """``(first, later)``: the column balance's epsilons (public).

    ``first``: the first release's (on the centring's radius,
    :data:`BALANCE_SHARE`); ``later``: a tuple of ``(radius, mean, radius,
    squares)`` epsilons, one per later round (:data:`LATER_SHARE` in all):
    as many as :data:`BALANCE_ROUNDS` allows with each radius draw
    :func:`~._grid_quantile.feasible` (the median of ``n_samples`` norms),
    none where not even one is (``epsilon n`` below about 20,300). Each
    draw is capped as every scale draw.
    """
    first = min(BALANCE_SHARE * float(epsilon), MAX_DRAW_EPSILON)
    n_bins = positive_edges().shape[0] + 1
    for k in range(BALANCE_ROUNDS - 1, 0, -1):
        part = LATER_SHARE * float(epsilon) / k / 4.0
        if feasible(part, n_samples, 0.5, n_bins):
            return first, ((min(part, MAX_DRAW_EPSILON),) * 4,) * k
    return first, ()


def laplace_column_squares(X, radius, epsilon, sensitivity, rng, ord=1):
    """``(m, threshold)``: noisy mean squares of the columns of dense ``X``.

    ``X``: the centred rows (float); ``radius``: the released radius ``R``
    of the rows' L1 norms (``ord=1``: the centring's) or L2 norms
    (``ord=2``); ``sensitivity``: 1 (add/remove one) or 2 (replace-one), in units of
    ``R^2``. ``threshold``: :func:`~._centring.laplace_move_threshold`
    noise scales over ``n``, the least a dominant column's ``m_j`` must
    exceed.
    """
    n, d = X.shape
    b = sensitivity * radius * radius / epsilon
    m = (_clipped_squares(X, radius, ord) + rng.laplace(scale=b, size=d)) / n
    return m, laplace_move_threshold(d) * b / n


def l2_column_squares(X, radius_epsilon, epsilon, sensitivity, rng):
    """``(m, threshold)`` of a later round, on its re-centred rows ``X``.

    The radius ``R'``: a ``radius_epsilon``-DP median of the rows' L2 norms
    (:func:`~._grid_quantile.bin_quantile`, the upper edge of the drawn
    bin); then :func:`laplace_column_squares` with the rows clipped to L2
    norm ``R'``: a row's vector of squares still has L1 norm ``||x||_2^2 <=
    R'^2`` (sensitivity ``R'^2``, ``2 R'^2`` replace-one), and ``R'`` is
    smaller than an L1 radius by up to ``sqrt(d)``, its noise by up to
    ``d``. Events: ``ExponentialMechanismDpEvent(radius_epsilon)``,
    ``LaplaceDpEvent(1 / epsilon)`` (in units of the L1 sensitivity).
    """
    D = np.asarray(X, dtype=np.float64)
    l2 = _row_norms(D, 2)
    radius = bin_quantile(l2, 0.5, radius_epsilon, positive_edges(), rng) * HALF_BIN
    return laplace_column_squares(D, radius, epsilon, sensitivity, rng, ord=2)


def _clipped_squares(X, radius, ord=1):
    """Per column, the sum of the squared entries of the rows of ``X``
    clipped to L1 (``ord=1``) or L2 (``ord=2``) norm ``radius`` (a row whose
    norm is not finite adds nothing; rounding-safe factors,
    :func:`~dpestim._kernels.clipping.clip_factors`). A row adds a vector of
    L1 norm ``||x||_2^2 <= radius^2`` (``||x||_2 <= ||x||_1``).
    """
    D = np.asarray(X, dtype=np.float64)
    factors = clip_factors(_row_norms(D, ord), radius, D.shape[1])
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
    while active.any():
        # unbiased: the noise of the many small columns sums to about 0
        # (their positive parts alone would add half a noise scale each)
        rest = float(m[active].sum())
        idx = np.flatnonzero(active)
        top = idx[np.argsort(-m[idx], kind="stable")[:2]]
        bar = rest * min(DOMINANCE, OVER_MEAN / idx.size)
        if rest <= 0.0 or m[top[0]] <= threshold:
            break
        if m[top[0]] > bar:
            group = top[:1]
        elif (
            idx.size > 2  # a pair dominates other columns, not itself
            and m[top].sum() > PAIR_DOMINANCE * rest
            and m[top[1]] > threshold
        ):
            group = top
        else:
            break
        sigma[group] = np.sqrt(m[group])
        active[group] = False
    return None if active.all() else sigma
