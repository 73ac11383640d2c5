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
   yet found dominant or :data:`OVER_MEAN` (20) times their mean, the
   looser (or, with the next largest, more than :data:`PAIR_DOMINANCE` of
   that sum: two columns in their own units hide each other from the
   first rule; or a group of three to :data:`MAX_GROUP` of the largest,
   above that share of the sum, the smallest twenty times the mean of the
   others: comparable raw columns), and
   :func:`~._centring.laplace_move_threshold` noise scales (so that, over
   the ``d`` columns together, noise alone makes a column dominant with
   probability at most 5%); found one (or a pair, or a group) at a time,
   the largest first, until none qualifies;
3. each dominant column is divided by ``sqrt(m_j)`` (a mean square of about
   1); the others are left as given. The estimator fits on ``x / sigma`` and
   maps ``coef_`` back (``coef_j = w_j / sigma_j``).

**Later rounds** (where ``n epsilon`` affords them: :func:`plan_balance`).
One release resolves only the columns above its noise, whose scale is set
by the largest column (the radius ``R``), and the centring before it moved
only the offsets above its own noise, set by the same radius: with several
columns in their own units (a raw CSV: a weight, counts, an age), the
smaller ones stay unscaled (and uncentred). Each later round runs on the
rows already balanced (``(x - c) / sigma``): a private median L2 norm
``R'`` and the mean squares of the rows clipped to L2 norm ``R'``
(:func:`l2_column_squares`; the L2 radius is up to ``sqrt(d)`` smaller
than an L1 one, the noise up to ``d`` times), and the same rule; the scales
multiply. A column the centring left uncentred is found by its offset and
spread together (its mean square is both) and divided by their root mean
square. Every planned round runs, whatever the rounds before it found, and
is charged before the first reads the data: the budget does not depend on
the data. A round that scales nothing can still let the next one see
further, since its radius is the rows' own L2 median where the first
release's was the centring's L1 radius (a constant of ``1e6`` or a row id
sets that far above the rest: a user trial, 0.678 before). The later
rounds draw from a stream spawned from the fit's generator, so a fit
whose rounds scale nothing has its solver's noise unchanged. Two later
rounds, :data:`LATER_SHARE` (1%) of epsilon more each where ``n epsilon``
makes that share's radius draw reliable (about 10,100); below, for a
solver of the dp-sgd family (``raises_balance_draws``), each draw is raised
to the epsilon that makes it reliable (:func:`draw_need`), and as many
rounds run as keep the whole balance within :data:`BALANCE_CAP` (15%) of
epsilon.

**Sparse rows** (a scikit-learn ``ColumnTransformer`` with one-hot columns
returns CSR by default) are not centred, since centring would fill them,
but they are balanced as given: each round draws a private median L2 norm
of the (balanced) rows and releases their mean squares clipped to it, with
the same rule (:func:`plan_balance_as_given`); dividing columns keeps the
matrix sparse. Uncentred, a column's mean square is its offset's square
plus its spread's, and both make it dominate the rows' norms alike (Adult's
raw CSV through the default pipeline: 0.769, the majority rate, before).

**Small data.** Dense rows too few for the in-fit centring (``epsilon n``
below about 5,070) are balanced as given in the same way, and every draw
whose share is too small for ``epsilon n`` is raised to :func:`draw_need`,
up to :data:`MAX_DRAW_SHARE` of epsilon each, with up to
:data:`RAISED_LATER_ROUNDS` later rounds, and :data:`BALANCE_CAP` in all
(so down to ``epsilon n`` of about 2,030), for the dp-sgd family's
solvers (the solver's ``raises_balance_draws``; ``solver="auto"`` picks
them there): a user trial found raw columns at the majority rate there
(Adult's raw CSV at 2,000-5,000 rows, epsilon 1: 0.766-0.770 against 0.834
on standardised columns; measured since: ``benchmarks/utility/
small_raw.py``). Where no column dominates, the balance costs its budget
only. Every other solver's balance keeps its shares, as before: their
accuracy at small ``epsilon n`` moves far more with their budget (dp-scd,
objective perturbation, the pure-DP dp-gd and dp-nag lost 1.7-8 points on
loaders with raised draws; ``BaseSolver.raises_balance_draws``).

A dataset whose columns are on comparable scales has no dominant column
(with ``d >= 3``, no column carries half of the rows' squared norms or
twenty times their mean), so the rows are used as given: the project's
loaders, standardised or one-hot columns. With one or two columns, the
larger may be scaled to a mean square of 1, which the row scale then
absorbs. Measured: ``benchmarks/utility/
column_balance.py`` (``benchmarks/results/column_balance.md``) and
``benchmarks/utility/small_raw.py``.
"""

import numpy as np
import scipy.sparse as sp

from .._kernels.clipping import clip_factors
from ._centring import (
    HALF_BIN,
    _row_norms,
    add_rows,
    clipped_chunks,
    laplace_move_threshold,
)
from ._fit_scales import MAX_DRAW_EPSILON
from ._grid_quantile import bin_quantile, feasible_epsilon, positive_edges

__all__ = [
    "BALANCE_CAP",
    "BALANCE_ROUNDS",
    "BALANCE_SHARE",
    "DOMINANCE",
    "LATER_SHARE",
    "MAX_DRAW_SHARE",
    "MAX_GROUP",
    "OVER_MEAN",
    "PAIR_DOMINANCE",
    "RAISED_LATER_ROUNDS",
    "SPARSE_RADIUS_SHARE",
    "dominant_scales",
    "draw_need",
    "exact_column_squares",
    "l2_column_squares",
    "laplace_column_squares",
    "plan_balance",
    "plan_balance_as_given",
    "smallest_epsilon_n",
]

#: Share of ``epsilon`` of the noisy mean squares (where the centring runs).
BALANCE_SHARE = 0.01
#: A column is dominant when its mean square exceeds this share of the sum
#: of the columns not yet found dominant (itself included) ...
DOMINANCE = 0.5
#: ... or this many times their mean (the looser of the two: with ``k >= 40``
#: columns not yet found dominant, the mean's rule). Two or more columns in
#: their own units hide each other from the first rule (Adult's raw CSV:
#: age and hours per week, about 50 times the mean of the others among
#: one-hot columns); the project's dense loaders have no column above 5.8
#: times the mean (Adult's dense loader, 107 columns; the others 1.0-3.8),
#: the sparse ones, uncentred, 8.5 (a9a) and 9.1 (w8a), and their private
#: mean squares up to 15 (w8a at epsilon 0.5-2; 10 scaled a binary column
#: in 5 of 9 fits there).
OVER_MEAN = 20.0
#: Two columns are dominant together when their mean squares exceed this
#: share of the sum (California's raw CSV: bedrooms and households, 0.47
#: and 0.42 of it once rooms and population are scaled); on the loaders the
#: two largest carry at most 0.54 (California's).
PAIR_DOMINANCE = 0.75
#: Three to this many columns are dominant together when they carry
#: :data:`PAIR_DOMINANCE` of the sum and the smallest of them is
#: :data:`OVER_MEAN` times the mean of the others: comparable raw columns
#: hide each other from both rules above (a user trial: six counts of 1,000
#: +- 500 beside one-hot columns, 0.661 with the balance against 0.684
#: without). Capped so that a block of busy pixels (MNIST's centre: its
#: border pixels are 0) is not a group.
MAX_GROUP = 8


#: Most rounds of a balance: the first and up to two later ones.
BALANCE_ROUNDS = 3
#: Share of ``epsilon`` of each later round, on top of :data:`BALANCE_SHARE`,
#: in two equal parts: the radius draw and the mean squares. A fixed share
#: per round: a first version split one share between the rounds and a fit
#: got worse with more rows or epsilon where a second round began (a user
#: trial: Adult, 40,700 rows 0.806 against 40,500 rows 0.829).
LATER_SHARE = 0.01
#: Share of ``epsilon`` of the sparse balance's first radius draw (sparse
#: rows are not centred, so there is no centring radius to reuse).
SPARSE_RADIUS_SHARE = 0.01


#: Largest share of ``epsilon`` of one balance draw raised above its share
#: (:func:`draw_need`): the balance runs below its shares' ``epsilon n`` only
#: down to about 2,030 (:func:`smallest_epsilon_n`). Below, a fit is so
#: short of budget that the draws cost more than they find: at 15% of
#: epsilon in all, measured on loaders where no column dominates (balance
#: on against off, the mean over seeds), MNIST at epsilon 0.1 (``epsilon n``
#: 1,000, ``LogisticRegression``, 4 seeds) -4.2 points, phishing at 0.1
#: (829, ``LinearSVC`` dp-gd / dp-nag, 30 seeds) -4.2 / -3.1; the raw
#: columns it rescued there gained little (Adult's raw CSV at 2,000 rows,
#: epsilon 1, 0.768 -> 0.787; German's 0.704 -> 0.708).
MAX_DRAW_SHARE = 0.025
#: Most of ``epsilon`` the whole balance may take with raised draws (the
#: later rounds that do not fit are dropped): small data with raw columns (a
#: user trial: Adult's raw CSV at 2,000-5,000 rows, epsilon 1, 0.766-0.770
#: without a balance, the majority rate).
BALANCE_CAP = 0.15
#: Most later rounds where the draws are raised (``epsilon n`` below about
#: 10,100): each round there sees only the columns above its raw noise
#: floor, so several raw columns need more of them than the two of larger
#: data (a user trial: California's raw CSV at 2,500-6,000 rows, ``Ridge``
#: at epsilon 1 and 2, 8 seeds each, fits at R^2 0.0-0.14 in 14 of 32 with
#: two later rounds, where rooms and population took a round each and
#: bedrooms, households and longitude stayed in their units; 0 of 32 with
#: up to five, median 0.626-0.636 against 0.09-0.52). As many as
#: :data:`BALANCE_CAP` affords.
RAISED_LATER_ROUNDS = 5


def draw_need(n_samples):
    """Smallest epsilon of one balance draw at ``n`` rows (public).

    The epsilon at which a private median of ``n`` row norms is
    :func:`~._grid_quantile.feasible` (about ``51 / n``). A round's mean
    squares get as much: with ``epsilon n`` of 51 a column holding a share
    ``ln(20 d) / 51`` of the clipped rows' mean squared norm (0.15 at ``d =
    100``, twice that replace-one) clears the release's threshold.
    """
    need = feasible_epsilon(n_samples, 0.5, positive_edges().shape[0] + 1)
    return need * (1.0 + 1e-9)  # rounding-safe: feasible() at exactly this


def _draw(epsilon, share, n_samples, raised):
    """One draw's epsilon: ``share`` of ``epsilon`` where it suffices
    (:func:`draw_need`), else, with ``raised``, the need up to
    :data:`MAX_DRAW_SHARE` of epsilon; ``None`` where neither (public)."""
    eps = float(epsilon)
    need = draw_need(n_samples)
    if share * eps >= need:
        return min(share * eps, MAX_DRAW_EPSILON)
    if raised and need <= MAX_DRAW_SHARE * eps:
        return min(need, MAX_DRAW_EPSILON)
    return None


def smallest_epsilon_n(raised=True):
    """``epsilon n`` below which the balance on rows as given does not run
    (public): about 2,030 with draws raised, 5,070 at the shares alone."""
    return draw_need(1) / (MAX_DRAW_SHARE if raised else SPARSE_RADIUS_SHARE)


def _later_rounds(epsilon, n_samples, spent, raised):
    """The later rounds' ``(radius, squares)`` epsilons, ``spent``: what the
    balance's first round takes.

    ``BALANCE_ROUNDS - 1`` rounds, each draw :data:`LATER_SHARE` / 2 of
    epsilon where ``epsilon n`` makes that reliable (about 10,100); below,
    with ``raised``, :func:`draw_need` (:func:`_draw`), up to
    :data:`RAISED_LATER_ROUNDS` rounds, as many as keep the whole balance
    within :data:`BALANCE_CAP` of epsilon; none otherwise (public).
    """
    part = _draw(epsilon, LATER_SHARE / 2.0, n_samples, raised)
    if part is None:
        return ()
    k = BALANCE_ROUNDS - 1
    if part > LATER_SHARE * float(epsilon) / 2.0:  # raised: more rounds, capped
        k = RAISED_LATER_ROUNDS
    while k and spent + 2.0 * k * part > BALANCE_CAP * float(epsilon):
        k -= 1
    return ((part, part),) * k


def plan_balance(epsilon, n_samples, raised=True):
    """``(first, later)``: the column balance's epsilons on dense rows (public).

    ``first``: the first release's (on the centring's radius,
    :data:`BALANCE_SHARE`); ``later``: a tuple of ``(radius, squares)``
    epsilons, one per later round (:func:`_later_rounds`: :data:`LATER_SHARE`
    each where ``epsilon n`` is about 10,100 or more; below, with ``raised``
    (the solver's ``raises_balance_draws``), each draw raised to
    :func:`draw_need`, within :data:`BALANCE_CAP`). Each draw is capped as
    every scale draw.
    """
    first = min(BALANCE_SHARE * float(epsilon), MAX_DRAW_EPSILON)
    return first, _later_rounds(epsilon, n_samples, first, raised)


def plan_balance_as_given(epsilon, n_samples, raised=True):
    """``(radius, first, later)`` of the balance on the rows as given, or
    ``None``.

    Sparse rows are balanced as given (not centred: centring would fill
    them), and so are the minimax estimators' dense rows and dense rows too
    few for the in-fit centring: the first round draws a private median L2
    norm (``radius``, :data:`SPARSE_RADIUS_SHARE`) and releases the mean
    squares clipped to it
    (``first``, :data:`BALANCE_SHARE`); ``later``: ``(radius, squares)``
    pairs (:func:`_later_rounds`). Where ``epsilon n`` is below about 5,070,
    with ``raised`` (the solver's ``raises_balance_draws``), each draw is
    raised to :func:`draw_need`. ``None``
    where the radius draw cannot run (:func:`smallest_epsilon_n`: about
    2,030 raised, 5,070 not).
    """
    radius = _draw(epsilon, SPARSE_RADIUS_SHARE, n_samples, raised)
    if radius is None:
        return None
    first = max(min(BALANCE_SHARE * float(epsilon), MAX_DRAW_EPSILON), radius)
    return radius, first, _later_rounds(epsilon, n_samples, radius + first, raised)


def laplace_column_squares(
    X, radius, epsilon, sensitivity, rng, ord=1, norms=None, divisor=None
):
    """``(m, threshold)``: noisy mean squares of the columns of dense ``X``.

    ``X``: the rows (float, dense or CSR; dense rows divided by the columns'
    ``divisor`` if given, chunk by chunk, without a copy of ``X``);
    ``radius``: the released radius ``R`` of the rows' L1 norms (``ord=1``:
    the centring's) or L2 norms (``ord=2``); ``sensitivity``: 1
    (add/remove one) or 2 (replace-one), in units of ``R^2``.
    ``threshold``: :func:`~._centring.laplace_move_threshold` noise scales
    over ``n``, the least a dominant column's ``m_j`` must exceed.
    ``norms``: the rows' norms of that order, if already computed.
    """
    n, d = X.shape
    b = sensitivity * radius * radius / epsilon
    squares = _clipped_squares(X, radius, ord, norms, divisor)
    m = (squares + rng.laplace(scale=b, size=d)) / n
    return m, laplace_move_threshold(d) * b / n


def l2_column_squares(X, radius_epsilon, epsilon, sensitivity, rng, divisor=None):
    """``(m, threshold)`` of a release on an L2 radius of its own.

    ``X``: a later round's balanced rows, or sparse rows as given (the
    sparse balance's first round; dense or CSR); dense rows may come with
    the columns' ``divisor`` of the rounds before (the rows ``X / divisor``,
    computed chunk by chunk).

    The radius ``R'``: a ``radius_epsilon``-DP median of the rows' L2 norms
    (:func:`~._grid_quantile.bin_quantile`, the upper edge of the drawn
    bin); then :func:`laplace_column_squares` with the rows clipped to L2
    norm ``R'``: a row's vector of squares still has L1 norm ``||x||_2^2 <=
    R'^2`` (sensitivity ``R'^2``, ``2 R'^2`` replace-one), and ``R'`` is
    smaller than an L1 radius by up to ``sqrt(d)``, its noise by up to
    ``d``. Events: ``ExponentialMechanismDpEvent(radius_epsilon)``,
    ``LaplaceDpEvent(1 / epsilon)`` (in units of the L1 sensitivity).
    """
    if sp.issparse(X) and divisor is not None:
        X, divisor = X @ sp.diags(1.0 / divisor), None
    D = _float64(X) if sp.issparse(X) else X
    l2 = _norms(D, 2, divisor)
    radius = bin_quantile(l2, 0.5, radius_epsilon, positive_edges(), rng) * HALF_BIN
    return laplace_column_squares(D, radius, epsilon, sensitivity, rng, 2, l2, divisor)


def _float64(X):
    """Dense rows as a float64 array, sparse ones as a float64 CSR matrix."""
    if sp.issparse(X):
        return sp.csr_matrix(X, dtype=np.float64)
    return np.asarray(X, dtype=np.float64)


def _norms(D, ord, divisor=None):
    """L1 (``ord=1``) or L2 norms of the rows of dense (in float64, divided
    by the columns' ``divisor`` if given) or float64 CSR ``D``."""
    if not sp.issparse(D):
        return _row_norms(D, ord, divisor)
    with np.errstate(over="ignore", invalid="ignore"):
        if ord == 1:
            return np.asarray(abs(D).sum(axis=1), dtype=np.float64).ravel()
        squares = D.multiply(D).sum(axis=1)
        return np.sqrt(np.asarray(squares, dtype=np.float64).ravel())


def _clipped_squares(X, radius, ord=1, norms=None, divisor=None):
    """Per column, the sum of the squared entries of the rows of ``X``
    clipped to L1 (``ord=1``) or L2 (``ord=2``) norm ``radius`` (a row whose
    norm is not finite adds nothing; rounding-safe factors,
    :func:`~dpestim._kernels.clipping.clip_factors`). A row adds a vector of
    L1 norm ``||x||_2^2 <= radius^2`` (``||x||_2 <= ||x||_1``). ``norms``:
    the rows' norms of order ``ord``, if the caller has them. Dense rows are
    read in float64, divided by the columns' ``divisor`` if given, chunk by
    chunk (:func:`~._centring.clipped_chunks`: the same sums as over all
    rows).
    """
    if sp.issparse(X):
        D = _float64(X if divisor is None else X @ sp.diags(1.0 / divisor))
        norms = _norms(D, ord) if norms is None else norms
        factors = clip_factors(norms, radius, D.shape[1])
        keep = factors > 0
        # the clipped rows' entries are at most the radius
        clipped = sp.diags(factors[keep]) @ D[keep]
        return np.asarray(clipped.multiply(clipped).sum(axis=0)).ravel()
    total = None
    with np.errstate(over="ignore"):
        for clipped in clipped_chunks(X, radius, ord, norms, divisor):
            if total is None:  # the one sum of earlier versions, bit for bit
                total = np.einsum("ij,ij->j", clipped, clipped)
            else:
                total = add_rows(total, clipped * clipped)
    return np.zeros(X.shape[1]) if total is None else total


def exact_column_squares(X):
    """Mean squares of the columns (``epsilon = inf``: the limit, no noise)."""
    D = _float64(X)
    with np.errstate(over="ignore"):
        if sp.issparse(D):
            return np.asarray(D.multiply(D).mean(axis=0)).ravel(), 0.0
        return np.einsum("ij,ij->j", D, D) / D.shape[0], 0.0


def _dominant_group(m, idx, rest, threshold):
    """The smallest group of 3 to :data:`MAX_GROUP` of the largest columns
    not yet found dominant (``idx``) that dominates the others together:
    above :data:`PAIR_DOMINANCE` of their sum ``rest``, its smallest member
    :data:`OVER_MEAN` times the mean of the others and above ``threshold``;
    or ``None``."""
    order = idx[np.argsort(-m[idx], kind="stable")]
    for k in range(3, min(MAX_GROUP, order.size // 2) + 1):
        group, others = order[:k], order[k:]
        smallest = m[group[-1]]
        if (
            smallest > threshold
            and smallest > OVER_MEAN * max(float(m[others].mean()), 0.0)
            and m[group].sum() > PAIR_DOMINANCE * rest
        ):
            return group
    return None


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
        elif (group := _dominant_group(m, idx, rest, threshold)) is None:
            break
        sigma[group] = np.sqrt(m[group])
        active[group] = False
    return None if active.all() else sigma
