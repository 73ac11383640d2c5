"""Private scales measured inside ``fit`` (the ``feature_scale="auto"`` step).

The ``"auto"`` rules of the solvers (:mod:`dpestim.solvers._policy`) assume
rows of norm of order :data:`ROW_NORM_TARGET` and, for :class:`~dpestim.Ridge`,
targets of order 1. This module measures, privately, the scales those rules
need, so that an estimator can run them in those units whatever the user's
preprocessing:

* the **row-norm scale**: a private median of the norms ``||x_i||`` of the
  nonzero rows;
* the **target's centre and range** (Ridge): a private median of ``y``,
  refined three times around itself, and a private spread ``m`` around that
  centre ``c``, the 75th percentile of ``|y - c|`` where the budget affords
  it and the median absolute deviation otherwise; the range is ``c -+ f m``
  (``f``: :data:`FENCES`, about 3.4 standard deviations of a normal target);
* the **class counts** (classifiers: ``class_prior="auto"``,
  ``class_weight="balanced"``): a Laplace histogram of the labels
  (:func:`private_class_counts`), ``LaplaceDpEvent``.

Every quantile is one draw of the exponential mechanism over a public grid of
bins (:func:`bin_quantile`), an ``epsilon``-DP mechanism under both
neighbouring relations whose event is
:class:`~dpestim.solvers.saddle.ExponentialMechanismDpEvent`; the class
histogram is the ``epsilon``-DP Laplace mechanism (``LaplaceDpEvent``). Which estimates
run and their epsilons are decided from public quantities only (``n``, the
number of targets, the budget and the share; :func:`plan_estimates`), before
any data is read. The grid and the quantile draw are in
:mod:`~dpestim.preprocessing._grid_quantile`.
"""

import math

import numpy as np
import scipy.sparse as sp

from ..utils._rows import forget_row_norms
from ._grid_quantile import (
    BINS_PER_OCTAVE,
    FAILURE,
    MAX_OCTAVE,
    beyond_range,
    bin_quantile,
    bin_utility,
    feasible,
    feasible_epsilon,
    positive_edges,
    signed_edges,
    warn_beyond_range,
)
from ._scale_plan import CENTRE_STAGES, ROBUST_SPREAD_UNITS, ScalePlan, estimates_line
from ._target_range import (
    FENCE,
    FENCES,
    SPREAD_QUANTILES,
    TARGET_HALF_RANGE,
    exact_target_range,
    private_target_range,
    target_map,
    target_note,
)

__all__ = [
    "BINS_PER_OCTAVE",
    "FAILURE",
    "bin_utility",
    "COUNT_L1_SENSITIVITY",
    "class_counts",
    "private_class_counts",
    "MAX_OCTAVE",
    "MULTINOMIAL_ROW_NORM_TARGET",
    "MULTIOUTPUT_HINGE_ROW_NORM_TARGET",
    "ROW_NORM_TARGET",
    "SCALE_SHARE",
    "FENCE",
    "FENCES",
    "SPREAD_QUANTILES",
    "TARGET_HALF_RANGE",
    "ScalePlan",
    "beyond_range",
    "bin_quantile",
    "feasible",
    "feasible_share",
    "plan_estimates",
    "positive_edges",
    "private_row_scale",
    "private_target_range",
    "estimates_line",
    "exact_target_range",
    "rescale_rows",
    "signed_edges",
    "target_map",
    "target_note",
]

#: Default share of ``epsilon`` spent on the scale estimates of one fit.
SCALE_SHARE = 0.05
#: Median row norm the ``"auto"`` rules were calibrated at (``2 ** 1.5625``,
#: about 2.95, the midpoint of a grid bin: the project loaders' Adult 2.96,
#: German 3.92, w8a 3, a9a 3.74); rows are rescaled so that their estimated
#: median norm is this (Adult's rows are then left as they are).
ROW_NORM_TARGET = 2.0 ** (12.5 / BINS_PER_OCTAVE)
#: Median row norm of the multinomial (softmax) rules, ``2 ** 3.0625`` (about
#: 8.36, a bin midpoint): measured with :class:`~dpestim.LogisticRegression`
#: at its defaults, epsilon 1 (test accuracy, median of seeds), rows left as
#: given / rescaled to 2.95 / to 8.36: digits (derivation, 5 seeds) 0.864 /
#: 0.833 / 0.873; MNIST, 10,000 training rows (check, 3 seeds) 0.850 / 0.802 /
#: 0.846. Binary problems keep :data:`ROW_NORM_TARGET` (German 0.724 at 2.95
#: and 0.720 at 5.9; breast cancer 0.951 / 0.937).
MULTINOMIAL_ROW_NORM_TARGET = 2.0 ** (24.5 / BINS_PER_OCTAVE)
#: Median row norm of the multi-output (one-vs-rest) hinge of
#: :class:`~dpestim.LinearSVC` with more than two classes, ``2 ** 2.0625``
#: (about 4.18, a bin midpoint), with the dp-sgd family's solvers (their
#: ``multiclass_hinge_row_target``; dp-scd lost 5 points on digits at 8.36
#: and keeps 2.95). Measured at the defaults, eps 0.5 / 1, median test
#: accuracy (digits 5 seeds, MNIST 10,000 rows 3 seeds), rescaled to 2.95 /
#: 4.18 / 8.36: digits as loaded 0.733 / 0.738 / 0.742, 0.840 / 0.847 /
#: 0.844; digits after ``StandardScaler`` 0.784 / 0.758 / 0.642, 0.873 /
#: 0.860 / 0.769; MNIST as loaded 0.776 / 0.796 / 0.829, 0.779 / 0.801 /
#: 0.838; MNIST after ``StandardScaler`` 0.807 / 0.818 / 0.824, 0.817 /
#: 0.831 / 0.843. The best target depends on the data (digits after
#: standardisation wants 2.95, MNIST 8.36); 4.18 has the smallest worst
#: loss against the best of the three (3.7 points, against 5.9 at 2.95
#: and 14.2 at 8.36) and the smallest sum. (8.36, used briefly, was chosen
#: on the loaders' scaling alone.)
MULTIOUTPUT_HINGE_ROW_NORM_TARGET = 2.0 ** (16.5 / BINS_PER_OCTAVE)
#: Largest share of epsilon a plan with a target range may be raised to,
#: whatever the solver's ``scale_share_cap``: without a range the squared
#: loss is fitted in the target's own units (R^2 about -3 on diabetes's raw
#: target), so the range is worth up to half the budget (the one-shot
#: solvers' cap). Measured with ``y_bound="auto"``, ``solver="auto"``, median
#: of 5 row draws, before / after (``doc/benchmarks/private_target_range.md``):
#: Adult's age, 1,000 rows, epsilon 0.5: -4.70 / 0.14; Bank's age -15.0 /
#: 0.14; California 1,000 rows, epsilon 1 (AdaSSP before): 0.148 / 0.459.
TARGET_SHARE_CAP = 0.5
#: Largest epsilon of one draw (huge budgets: keeps ``epsilon ** 2`` finite).
MAX_DRAW_EPSILON = 1e6
#: Exponential-mechanism draws of one target's range at full precision: the
#: centre's stages and the spread.
TARGET_DRAWS = CENTRE_STAGES + 1


#: L1 sensitivity of the vector of class counts under each neighbouring
#: relation: adding or removing a record changes one count by 1; replacing
#: one moves a unit from its old class to its new one (two counts by 1).
COUNT_L1_SENSITIVITY = {"add_or_remove_one": 1.0, "replace_one": 2.0}


def _units(rows, targets, stages, spread_units):
    """Epsilon units of the row and target draws (a spread takes ``spread_units``)."""
    return (1 if rows else 0) + (stages + spread_units) * targets


def feasible_share(
    epsilon, n_samples, *, rows, targets, stages=CENTRE_STAGES, spread_units=1
):
    """Smallest share of ``epsilon`` that makes every draw :func:`feasible`.

    Public (``epsilon``, ``n``, which estimates run, the centre's ``stages``,
    the spread's units): the draws share the budget in equal units
    (:func:`plan_estimates`; a robust spread takes two, which makes it as
    reliable as a median at one), so each unit needs the epsilon of the
    hardest draw (the signed grid's when a target range is estimated).
    """
    draws = _units(rows, targets, stages, spread_units)
    if not draws:
        return 0.0
    n_bins = (signed_edges() if targets else positive_edges()).shape[0] + 1
    each = feasible_epsilon(n_samples, 0.5, n_bins)
    return draws * each / epsilon


def affordable_stages(epsilon, n_samples, share, *, rows, targets):
    """Centre stages of a target range that ``share`` of ``epsilon`` affords.

    Public: the largest number, :data:`CENTRE_STAGES` down to 1, at which
    :func:`feasible_share` is at most ``share`` with the spread of one unit
    (the median absolute deviation: the plan's fallback when the robust
    spread does not fit); :data:`CENTRE_STAGES` when none is (the range is
    then dropped, :func:`plan_estimates`) or no range is estimated.
    """
    for stages in range(CENTRE_STAGES, 0, -1):
        need = feasible_share(
            epsilon, n_samples, rows=rows, targets=targets, stages=stages
        )
        if need <= share:
            return stages
    return CENTRE_STAGES


#: Largest standard deviation of the class histogram's noise, as a share of
#: the mean count ``n / K``, for the class prior to be worth its budget.
COUNT_NOISE_LIMIT = 0.1


def _histogram_epsilon(n_samples, n_classes, sensitivity):
    """Smallest epsilon at which the class histogram is precise enough.

    Its noise has standard deviation ``sqrt(2) sensitivity / epsilon`` per
    count; :func:`histogram_feasible` asks for at most
    :data:`COUNT_NOISE_LIMIT` times the mean count ``n / K``.
    """
    return (
        math.sqrt(2.0)
        * sensitivity
        * max(int(n_classes), 1)
        / (COUNT_NOISE_LIMIT * n_samples)
    )


def histogram_feasible(epsilon, n_samples, n_classes, sensitivity):
    """Whether the Laplace class histogram is precise enough (public).

    That is, ``epsilon`` at least :func:`_histogram_epsilon`.
    """
    return n_samples > 0 and epsilon >= _histogram_epsilon(
        n_samples, n_classes, sensitivity
    )


def plan_estimates(
    epsilon,
    n_samples,
    *,
    share,
    rows,
    targets,
    classes=False,
    n_classes=2,
    count_sensitivity=1.0,
    classes_required=False,
    max_share=None,
):
    """The :class:`ScalePlan` of one fit, from public quantities only.

    ``share * epsilon`` is split equally between the draws asked for
    (``rows``: the row-norm median; ``targets``: the number of targets whose
    range is estimated, ``stages + 1`` draws each, the centre's ``stages``
    the most that the share, raised up to ``max_share``, makes reliable:
    :func:`affordable_stages`; ``classes``: the
    Laplace histogram of the class counts, one draw). With ``max_share``
    (a solver that cannot do without the scales, ``scale_share_cap``) a share
    too small for the row and target draws is raised to the smallest
    feasible one when that is at most ``max_share`` (at least
    :data:`TARGET_SHARE_CAP` when a target range is asked for), an optional class
    histogram then dropped (:func:`_raised_share`). A median that would
    not be :func:`feasible` at its epsilon is dropped (with a note), and the
    budget of the remaining draws is recomputed, so that what runs is worth
    its cost; what is dropped costs nothing. The histogram (``n_classes``
    counts of L1 sensitivity ``count_sensitivity``) is dropped likewise when
    not :func:`histogram_feasible`, unless ``classes_required`` (a
    ``class_weight="balanced"`` fit needs its counts whatever their noise).
    """
    notes = {}
    if targets:  # a range is worth up to TARGET_SHARE_CAP, whatever the solver
        max_share = max(max_share or 0.0, TARGET_SHARE_CAP)
    cap = share if max_share is None else max(share, max_share)
    spread_units, stages = ROBUST_SPREAD_UNITS, CENTRE_STAGES
    if not targets or cap < feasible_share(
        epsilon, n_samples, rows=rows, targets=targets, spread_units=spread_units
    ):  # short: the median absolute deviation
        spread_units = 1
        stages = affordable_stages(epsilon, n_samples, cap, rows=rows, targets=targets)
    if max_share is not None:
        share, classes = _raised_share(
            epsilon,
            n_samples,
            share,
            max_share,
            rows=rows,
            targets=targets,
            stages=stages,
            spread_units=spread_units,
            classes=classes,
            n_classes=n_classes,
            count_sensitivity=count_sensitivity,
            classes_required=classes_required,
        )
        if classes is None:  # dropped so that the row / target draws fit
            classes = False
            notes["class_prior"] = (
                f"not estimated: {share:.4g} x epsilon x n_samples too small "
                "for the row scale and a useful class histogram, and the row "
                "scale comes first (the run starts at intercept 0)"
            )
    n_pos = positive_edges().shape[0] + 1
    n_signed = signed_edges().shape[0] + 1
    total = share * epsilon
    hist = 1 if classes else 0
    for _ in range(4):
        draws = _units(rows, targets, stages, spread_units) + hist
        if not draws:
            return ScalePlan(None, None, targets, notes)
        each = total / draws
        if rows and not feasible(each, n_samples, 0.5, n_pos):
            rows = False
            notes["feature_scale"] = (
                f"not estimated: {share:g} x epsilon x n_samples too small for a "
                f"reliable private median{_beyond(cap, share)} (rows used as given)"
            )
            continue
        if targets and not feasible(each, n_samples, 0.5, n_signed):
            targets = 0
            notes["y_bound"] = (
                f"not estimated: {share:g} x epsilon x n_samples too small for "
                f"a reliable private range of y{_beyond(cap, share)} (no bound)"
            )
            continue
        if (
            hist
            and not classes_required
            and not histogram_feasible(each, n_samples, n_classes, count_sensitivity)
        ):
            hist = 0
            classes = False
            notes["class_prior"] = (
                f"not estimated: {share:g} x epsilon x n_samples too small for "
                "a useful private class histogram (the run starts at intercept 0)"
            )
            continue
        break
    draws = _units(rows, targets, stages, spread_units) + hist
    if not draws:
        return ScalePlan(None, None, 0, notes)
    # capped: beyond it a draw is exact anyway, and eps^2 stays finite
    each = min(total / draws, MAX_DRAW_EPSILON)
    return ScalePlan(
        each if rows else None,
        each if targets else None,
        targets,
        notes,
        class_epsilon=each if classes else None,
        centre_stages=stages,
        spread_units=spread_units if targets else 1,
    )


def _beyond(cap, share):
    """The notes' words on a share that could not be raised enough."""
    if cap > share:
        return f", even at the largest share this fit may take ({cap:g})"
    return ""


def _raised_share(
    epsilon,
    n_samples,
    share,
    max_share,
    *,
    rows,
    targets,
    stages,
    classes,
    n_classes,
    count_sensitivity,
    classes_required,
    spread_units=1,
):
    """``(share, classes)`` of a solver with a ``scale_share_cap`` (public).

    Only when a row scale or a target range is asked for and ``share`` is too
    small for every draw (equal split: each draw gets the epsilon of the
    hardest, the class histogram's included): the share is raised to the
    smallest one at which every draw is feasible when that is at most twice
    ``share`` (and ``max_share``); otherwise, up to ``max_share``, to the
    smallest one at which the row / target draws are feasible, and an
    optional class histogram is dropped (``classes`` is then ``None``): at
    such ``n`` the row scale is worth its budget, the prior intercept is not
    (measured: German, 750 rows, epsilon 0.5, row scale and histogram at
    23.6% of epsilon 0.692, the row scale alone at 11.8% 0.709; epsilon 1,
    11.1% 0.719, 5.9% 0.726). A required histogram
    (``class_weight="balanced"``) is kept and counted in the share.
    """
    need = feasible_share(
        epsilon,
        n_samples,
        rows=rows,
        targets=targets,
        stages=stages,
        spread_units=spread_units,
    )
    draws = _units(rows, targets, stages, spread_units)
    if not draws:
        return share, classes
    if not classes:
        if share < need <= max_share:
            share = need * (1.0 + 1e-9)
        return share, classes
    hist_each = _histogram_epsilon(n_samples, n_classes, count_sensitivity)
    need_all = (draws + 1) * max(need * epsilon / draws, hist_each) / epsilon
    if need_all <= share:
        return share, classes
    if need_all <= min(max_share, 2.0 * share):
        return need_all * (1.0 + 1e-9), classes
    if classes_required:
        if need_all <= max_share:
            share = need_all * (1.0 + 1e-9)
        return share, classes
    if need <= max_share:
        return max(share, need * (1.0 + 1e-9)), None
    return share, classes


def row_norms(X):
    """L2 norm of every row of a dense or CSR ``X``."""
    if sp.issparse(X):
        return np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    return np.sqrt(np.einsum("ij,ij->i", X, X, dtype=np.float64))


def row_max_abs(X):
    """Largest ``|x_j|`` of every row of a dense or CSR ``X`` (its L-inf norm)."""
    if sp.issparse(X):
        return np.asarray(abs(X).max(axis=1).todense(), dtype=np.float64).ravel()
    return np.max(np.abs(X), axis=1).astype(np.float64, copy=False)


def nonzero_row_statistic(X, statistic=row_norms):
    """The per-row ``statistic`` of ``X``'s nonzero rows (the scale's values).

    An all-zero row says nothing about the scale of the rows (and contributes
    nothing to a linear model's coefficients). Counted, the empty rows sit
    below every bin of the grid: with more than half the rows empty the
    median of all rows is 0 and the draw lands at the grid's lowest edge (a
    ``UtilityWarning``; rows scaled up by about ``1e12``), and with fewer the
    hundreds of bins between that edge and the smallest nonzero norm all miss
    the median by only the empty rows' share of ranks, so a draw of small
    epsilon often lands there (``Ridge``'s, about 0.009 at epsilon 1: on 6,000
    rows 30% empty, 2 fits of 5 fell to R^2 -8 and -12). Dropping them keeps
    the sensitivity of :func:`bin_utility` at 1: adding, removing or
    replacing one row adds, removes or replaces at most one value, and
    :func:`bin_utility` takes ``n`` from the values it is given. The plan's
    feasibility rule (:func:`feasible`) counts all ``n`` rows, which is
    public; with most rows empty the draw is only as reliable as one on the
    nonzero rows (fewer values), a loss of utility, not of privacy.
    """
    values = statistic(X)
    return values[values > 0]


def private_row_scale(
    X, epsilon, rng, target=ROW_NORM_TARGET, statistic=row_norms, quantile=0.5
):
    """``s`` such that rows ``x / s`` have median norm about ``target``.

    ``s = m / target`` with ``m`` an ``epsilon``-DP median of the norms of the
    nonzero rows (:func:`nonzero_row_statistic`; :func:`bin_quantile` on
    :func:`positive_edges`). ``target`` is public:
    :data:`ROW_NORM_TARGET` unless the solver declares its own
    (``row_norm_target``, e.g. a solver that clips the rows themselves).
    ``statistic``: the per-row norm (:func:`row_norms`, L2; the minimax
    estimators, which clip each coordinate, :func:`row_max_abs`); one value
    per row either way, so the draw's sensitivity is the same.
    ``epsilon = inf`` (a non-private fit): the grid bin of the exact median
    (the mechanism's limit), or the exact median beyond the grid's range; a
    private draw beyond it warns (:func:`warn_beyond_range`). ``quantile``:
    another quantile of the statistic
    than the median (the minimax estimators' non-private fits read its
    90th percentile); the draw's sensitivity is 1 for any quantile.
    """
    m = bin_quantile(
        nonzero_row_statistic(X, statistic), quantile, epsilon, positive_edges(), rng
    )
    if not math.isinf(epsilon) and beyond_range(m):
        warn_beyond_range(
            "the private median row norm (feature_scale='auto'; for the "
            "minimax estimators each row's largest |x_j|)",
            "X",
            "the rows are rescaled as if their norms were at that edge, so "
            "clip_norm and the step rules see rows far from their intended scale",
        )
    s = m / target
    # the target is a bin's midpoint: that bin means "leave the rows as they are"
    return 1.0 if abs(s - 1.0) < 1e-9 else s


def class_counts(codes, n_classes):
    """Exact count of each class code ``0 .. n_classes - 1`` (the private statistic)."""
    return np.bincount(np.asarray(codes), minlength=n_classes).astype(np.float64)


def private_class_counts(codes, n_classes, epsilon, neighbouring, rng):
    """An ``epsilon``-DP vector of class counts (the Laplace mechanism).

    :func:`class_counts` plus independent Laplace noise of scale
    ``COUNT_L1_SENSITIVITY[neighbouring] / epsilon`` on each count: the
    mechanism of ``LaplaceDpEvent(1 / epsilon)`` in dp-accounting's units
    (sensitivity one), under the solver's neighbouring relation. Laplace
    rather than Gaussian: the histogram is one pure-DP draw of the fit's
    estimates, composed with the others by basic composition inside the
    budget the solver is calibrated to leave (see
    :class:`~dpestim.linear_model._scales.PrivateScalesMixin`); at such a
    share its noise (standard deviation ``sqrt(2) Delta_1 / epsilon``) is
    several times smaller than a Gaussian's at the same ``(epsilon, delta')``.
    """
    scale = COUNT_L1_SENSITIVITY[neighbouring] / float(epsilon)
    return class_counts(codes, n_classes) + rng.laplace(scale=scale, size=n_classes)


def rescale_rows(X, s, in_place=False):
    """``X / s`` in ``X``'s dtype and format (a copy; public ``s > 0``).

    ``in_place``: dense ``X`` is divided in place (the same values;
    only for an array the fit owns, never the caller's). ``ValueError`` when
    a row's squared norm then overflows float64.
    """
    if not (sp.issparse(X) or isinstance(X, np.ndarray)):
        raise ValueError(
            "feature_scale=<float> needs X in memory (a NumPy array or a "
            "SciPy sparse matrix); rescale blocked X by a public constant."
        )
    if sp.issparse(X):
        X = X.copy()
        X.data = (X.data.astype(np.float64) / s).astype(X.dtype)
    elif in_place:
        forget_row_norms(X)  # nothing may reuse norms of the rows before
        np.divide(X, s, out=X, dtype=np.float64)
    else:
        X = np.divide(X, s, dtype=np.float64).astype(X.dtype, copy=False)
    if not np.isfinite(row_norms(X) ** 2).all():
        raise ValueError(
            f"X / feature_scale (feature_scale={s:.3g}) has rows whose squared "
            "L2 norm overflows float64; rescale X by a public constant."
        )
    return X
