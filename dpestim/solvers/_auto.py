"""``solver="auto"``, the estimators' default: a public rule table.

The choice reads only public quantities: the estimator's loss, ``n`` and
``d`` (shapes), whether the fit is private (``epsilon``), whether
``delta = 0`` (pure DP), sparse or blocked (Dask, memory-mapped, zarr)
input. Never the data values. The
first matching row of :data:`RULES` wins; its reason goes in
``hyperparameters_["solver"]`` and the privacy report.

====================================================================  ==========
condition (first match wins)                                          solver
====================================================================  ==========
``Ridge`` or ``LinearSVC``, ``delta = 0`` (pure DP)                     ``dp-nag``
``delta = 0`` (pure DP; the hinge loss is refused)                    ``dp-gd``
blocked (Dask / out-of-core) input                                    ``dp-sgd``
``Ridge``, ``epsilon = inf``, ``d <= D``                              ``adassp``
``Ridge``, private, ``n <= 3000``, ``epsilon >= 1``                   ``adp-sgd``
otherwise                                                             ``dp-sgd``
====================================================================  ==========

(``D`` = :data:`ADASSP_MAX_FEATURES` = 2,000: AdaSSP forms the ``d x d``
Gram matrix.) The minimax and fairness estimators have one sensible solver,
``noisy-sgda`` (:data:`SADDLE_AUTO`).

**Derivation** (``benchmarks/utility/auto_rule.py``,
``benchmarks/results/auto_rule.md``). On the defaults matrix
(``benchmarks/results/defaults.json``: every solver at its defaults,
median of 5 seeds) the rule was derived on Adult, w8a, MNIST, digits and
California and checked on the held-out COMPAS, German credit, breast
cancer, phishing and diabetes. On the matrix regenerated with the
classifiers' utility check (fits at c8f698f and 94de071, which fit
identically) the rule is within 1 point (0.02 R^2) of the best solver in
39 of 43 derivation cells and 36 of 45 held-out ones (37 before the
check's share: breast cancer ``LinearSVC`` at ``epsilon = 0.5``, adp-sgd
+2.1 points; 40 and 38 before the ``epsilon = inf`` cells were rerun
once non-private fits read the row scale: California ``Ridge``, where
AdaSSP's exact solution of its own objective, ``alpha_`` 3.4e-4, gives
R^2 0.657 against seq-dp-scd's 0.679 and dp-sgd's 0.660, the one cell
below dp-sgd; breast cancer ``LinearSVC``, where research-only
dp-smd-sco leads). The
cells where another solver leads by more are at ``epsilon = 0.1``, on
German credit / breast cancer (250 / 143 test rows: 1 point is 2.5 / 1.4
rows), multi-output ``LinearSVC`` (digits, MNIST) or diabetes, and the
leader changes from cell to cell (dp-lssgd, adp-sgd, dp-scd,
adp-adagrad, AdaSSP). Of the alternative rules those
cells suggest, dp-lssgd at ``epsilon <= 0.1``, dp-scd at ``n <= 1000`` and
adp-adagrad at ``d >= 500`` lose more cells than they gain on one of the
splits; adp-sgd for Ridge at ``epsilon <= 0.1`` gains one cell on each but
rests on one derivation cell (California at 0.1) with a held-out gain
within seed noise, and at epsilon 0.2 it already falls 0.029 R^2 below
dp-sgd on diabetes, so it is not a row.
Re-checked at the code of issue 26's last round (the six small and medium
datasets re-measured, Adult / w8a / MNIST / phishing from the matrix): four
more rows, each added in front of this table, were scored
(``auto_rule.py``'s ``CANDIDATES``). ``dp-scd`` for ``LinearSVC`` at ``n <=
1000`` puts ``"auto"`` below dp-sgd in five held-out cells (German at 1,
breast cancer at 0.1-2; 36 cells within against 40); ``dp-lssgd`` at
``epsilon <= 0.1`` and ``d >= 500`` gains the two MNIST cells and has no
held-out cell to check it (no held-out set has ``d >= 500``). Multi-class
tasks built from the shared data since (Adult's occupation and
relationship, Bank's job and education: 4-13 classes, ``d`` 38-101,
``benchmarks/utility/multiclass_heldout.py``,
``benchmarks/results/multiclass_heldout.md``) check the multi-output
``LinearSVC`` rows the digits and MNIST cells suggest (any ``d``): dp-sgd
is within 1 point of the best solver in 14 of 16 held-out cells; dp-lssgd
at ``epsilon <= 0.1`` (or 0.5) gains one derivation cell and falls 7.5
points below dp-sgd on Adult's relationship at 0.1; adp-adagrad at
``epsilon >= 1`` gains none and falls below dp-sgd on MNIST at 2. So
dp-sgd stays.
``dp-lssgd`` for ``Ridge`` at ``epsilon <= 0.1``
and ``adassp`` for ``Ridge`` at ``n <= 2000`` (any target bound) gain
held-out cells on diabetes, but on California subsamples (331 / 1,000 /
3,000 rows, three draws each, ``benchmarks/utility/auto_rule_probe.py``,
``benchmarks/results/auto_rule_probe.md``) dp-lssgd falls below dp-sgd in 7
of 9 at epsilon 0.1 (up to 0.08 R^2; adp-sgd in 9 of 9) and AdaSSP in every
one at every epsilon (by 0.07-0.37 R^2), so none is a row.
Non-private ``Ridge`` (``epsilon = inf``): AdaSSP without noise is the
exact ridge solution, where dp-sgd's steps stop short. Checked on the
regression tasks of ``benchmarks/utility/public_target_bound.py`` at
``epsilon = inf`` (public bounds, 331 / 3,000 rows, 3 seeds,
``benchmarks/results/public_target_bound_inf.md``): AdaSSP ahead of dp-sgd
in 13 of 19 cells, by up to 0.22 R^2 (German credit's duration, ill-
conditioned one-hot features: 0.333 / 0.447 against 0.093 / 0.250,
scikit-learn 0.369 / 0.512), behind in 4 (Adult's hours at 331 rows:
-0.150 against -0.053, where scikit-learn's own optimum is -0.283: dp-sgd's
early stop regularises), and on the full California set 0.0014 below
dp-sgd (its own row target makes ``alpha_`` 3.4e-4). Until 2026-11-27 the
row asked for a numeric ``y_bound``; without one (the default ``"auto"``
reads no range at ``epsilon = inf``) AdaSSP now fits the unclipped targets
(it refuses only a private fit without a bound), so the default
non-private ``Ridge`` is the exact solution too (German duration, 750
rows: 0.266 -> 0.446). A former row, ``adassp`` for
``Ridge`` at ``n <= 2000`` with a public target half-range of at least 10
``clip_norm``, was dropped when a public ``y_bound`` came to be scaled to
``-+ 4`` as the private range is (``Ridge._encode_targets``): it existed
because dp-sgd fitted a wide public range in its own units (diabetes,
``y_bound=(0, 400)``: dp-sgd -0.21 at epsilon 1); once scaled, dp-sgd sees
the same problem in any unit and a rule on the half-range would make the
pick depend on the target's unit. At 331 rows, epsilon 1, median of 3 seeds,
with public ranges (``benchmarks/utility/public_target_bound.py``,
``benchmarks/results/public_target_bound.md``): dp-sgd ahead on California
(0.259 against AdaSSP 0.056), Adult's age (0.105 / -0.083) and Bank's age
(0.163 / -0.063), AdaSSP ahead on diabetes (0.301 / 0.107) and Adult's hours
per week (-0.082 / -0.241, where scikit-learn itself is at -0.28). Pure DP:
dp-gd for the classifiers (the momentum methods lead it on some cells and
trail it on others, COMPAS and phishing; research solvers,
:data:`RESEARCH_ONLY`). For ``Ridge`` dp-nag (Nesterov momentum, its
private ``"auto"`` plan settled over the run) leads dp-gd in every pure-DP
cell of the matrix's regression sets: California (derivation) by 0.06-0.09
R^2 at epsilon 0.1-2, within 0.011 of the best pure solver; diabetes (held
out) by 0.02-0.19 at epsilon 0.1-1 and 0.008 at 2 (0.029 below
dp-nag-opt there). Checked on the held-out regression tasks of
``benchmarks/utility/public_target_bound.py --delta 0`` (Adult's age and
hours, Bank's age, COMPAS's age and prior count; 1,000 and 3,000 rows,
epsilon 0.5 / 1 / 2, 3 seeds; ``benchmarks/results/public_target_bound_pure.md``):
ahead in 20 of 30 cells, by up to 0.54 R^2 where dp-gd falls far below a
constant (Adult's age, 1,000 rows, epsilon 0.5: -0.82 against -0.29),
behind by at most 0.06 (COMPAS's age and prior count, which no private fit
explains: every one below R^2 0.05). For ``LinearSVC`` (the squared hinge)
at ``delta = 0`` dp-nag is within a point of the best pure-DP solver in 16
of 16 derivation cells (dp-gd, with its decaying steps: 15, digits at
epsilon 2) and 13 of 16 held-out ones (dp-gd: 9; phishing by 1-2.6
points; ``benchmarks/results/auto_rule.md``); on Bank (a second held-out
split) within -1.2 to +0.7 points of dp-gd with its decaying steps. For
``LogisticRegression`` the two tie (31 of 32 cells each) and dp-gd stays.
dp-nag is therefore not a research solver.

The ``adp-sgd`` row for small ``Ridge`` fits: with a
public target range scaled to the rules' units, dp-sgd and its family were
compared on the matrix's regression sets (diabetes; California at 331 and
3,000 rows: the derivation) and on regression tasks built from Adult and
Bank (331 and 3,000 rows: held out), epsilon 0.5 / 1 / 2, 3 seeds
(``benchmarks/utility/public_target_bound.py --solvers ...``,
``benchmarks/results/public_target_bound_family.md``). adp-sgd leads dp-sgd
at epsilon >= 1 in 9 of the 12 held-out cells and trails by at most 0.01 in
the others; on the derivation it leads on diabetes (0.184 / 0.274 against
0.112 / 0.178) and trails on California at 331 rows and epsilon 1 (0.215
against 0.267); at epsilon 0.5 it trails on diabetes, and on the full
California (15,480 rows) by 0.02: hence ``n <= 3000`` (the largest size
measured to gain) and ``epsilon >= 1``. Checked since on tasks it never saw
(``benchmarks/utility/adp_sgd_heldout.py``,
``benchmarks/results/adp_sgd_heldout.md``, with the final private
intercept in both solvers): it trails dp-sgd on California's median income
by 0.07 at every size and on Adult's years of education by 0.10 at 3,000
rows and epsilon 1, a tie on Bank's balance; not robust held out, kept
for its derivation gains (no public quantity separates the tasks).
Re-derived on 2026-11-28, after dp-sgd's private ``Ridge`` plan took
settling steps (``benchmarks/utility/ridge_settling.py``). With public
target bounds (``public_target_bound_family.md``, rerun) the evidence is
mixed: at epsilon 1 / 2 dp-sgd now leads on the derivation tasks in 4 of 6
cells (California at 331 rows by 0.049 / 0.129), adp-sgd on the first
held-out split in 8 of 12 (0.19 R^2 in sum), dp-sgd on the other
held-out tasks of ``adp_sgd_heldout.md`` in 8 of 10 (California's income
at 3,000 rows by up to 0.137). With the **private** target range, the
default ``y_bound="auto"`` (``benchmarks/results/private_target_range.md``
and ``private_target_range_heldout.md``, 5 seeds, epsilon 1 / 2) adp-sgd
leads in 17 of 26 cells of diabetes and the California, Adult and Bank
tasks at 331 / 1,000 / 3,000 rows (dp-sgd in all six of California's) and
in 19 of 24 held-out ones (COMPAS's age and prior count, German's amount
and duration, 331-3,000 rows; 17 and 17 of 24 rerun at 724103f, with the
column balance), and dp-sgd's losses are the large ones:
Adult's age at 331 rows and epsilon 1 -0.535 against -0.008, German's
duration -0.654 against -0.255, Bank's age -0.239 against -0.041 (adp-sgd's
largest: diabetes at epsilon 2, 0.067 against 0.206). The default path
decides: the row stays (a commit that dropped it, 4844dcc, was reverted).

A former row, ``adassp`` for ``Ridge`` with ``y_bound="auto"`` when the
private target range needs more than ``scale_share`` of ``epsilon`` (up to
half), existed because dp-sgd could not raise its share that far and ran
without a range, in the target's own units (diabetes, raw target, epsilon
2: AdaSSP R^2 0.286, dp-sgd -0.377). Since any solver's plan may raise a
target range's share to half the budget
(:data:`~dpestim.preprocessing._fit_scales.TARGET_SHARE_CAP`), the row was
measured again with private ranges (``y_bound="auto"``, median of 5 row
draws, ``benchmarks/utility/public_target_bound.py --y-bound auto``,
``benchmarks/results/private_target_range.md``): AdaSSP trails the better
of adp-sgd and dp-sgd in 32 of 34 cells, by up to 0.32 R^2 (California,
1,000 rows, epsilon 1: 0.142 against 0.459; held-out Bank's age, 3,000
rows: 0.156 against 0.365); it leads on diabetes at epsilon 2 (0.177
against 0.067) and by 0.02 on Adult's age at 331 rows, so the row was
dropped. A second held-out split, run after (COMPAS's age and prior count,
German's amount and duration, ``private_target_range_heldout.md``), goes
the other way by less: AdaSSP ahead in 23 of 32 cells, mean 0.021 R^2
(low-signal targets, where its shrinkage keeps R^2 near 0); no public
quantity separates the two kinds of task, and AdaSSP's losses are the
larger (up to 0.35 against 0.26).

No row picks a solver of :data:`RESEARCH_ONLY` (tested): the paper
solvers kept for research and reproduction, selectable by name.
"""

import math

import numpy as np

__all__ = [
    "ADASSP_MAX_FEATURES",
    "RESEARCH_ONLY",
    "RULES",
    "SADDLE_AUTO",
    "choose_solver",
    "public_facts",
]

#: Solvers kept for research and the reproduction of their papers: never
#: picked by ``"auto"`` (they never win at their defaults on the project's
#: datasets, or are the baselines of a paper), selectable by name.
RESEARCH_ONLY = frozenset(
    {
        "dp-smd-sco",
        "dp-hb",
        "dp-nag-opt",
        "dp-masg",
        "dp-masg-opt",
        "seq-dp-scd",
        "objective-perturbation",
        "dp-smd",
        "dp-smd-br",
        "dp-sgda",
    }
)

#: ``solver="auto"`` of the minimax and fairness estimators: ``(name,
#: reason)``. One sensible solver: noisy SGDA (benchmarks/results/fairness.md:
#: Adult, epsilon 1, MinimaxLogisticRegression 0.838 against dp-smd's 0.748).
SADDLE_AUTO = (
    "noisy-sgda",
    "the one general-purpose saddle solver: dp-smd / dp-smd-br are the "
    "paper's (research and reproduction; benchmarks/results/fairness.md)",
)

#: ``Ridge`` at ``n <= ADP_SGD_MAX_SAMPLES`` and ``epsilon >=
#: ADP_SGD_MIN_EPSILON`` picks adp-sgd (see its row in :data:`RULES`).
ADP_SGD_MAX_SAMPLES = 3000
ADP_SGD_MIN_EPSILON = 1.0
#: Largest ``d`` at which ``Ridge`` picks AdaSSP: it forms the ``d x d``
#: Gram matrix (32 MB at 2,000 features; sparse wide data would not fit).
ADASSP_MAX_FEATURES = 2000

#: The rule table: ``(condition, solver, reason)``, first match wins. Each
#: condition reads the dict built by :func:`public_facts`.
RULES = (
    (
        lambda f: f["pure"] and f["loss"] in ("squared", "squared_hinge"),
        "dp-nag",
        "delta=0, Ridge or LinearSVC: pure epsilon-DP asked, dp-nag (Laplace, Nesterov "
        "momentum) leads dp-gd on the pure-DP regression and squared-hinge cells "
        "(benchmarks/results/auto_rule.md)",
    ),
    (
        lambda f: f["pure"],
        "dp-gd",
        "delta=0: pure epsilon-DP asked, dp-gd (Laplace) is the pure-DP default",
    ),
    (
        lambda f: f["blocked"],
        "dp-sgd",
        "blocked (Dask / out-of-core) input: dp-sgd sums clipped gradients by block",
    ),
    (
        lambda f: (
            f["loss"] == "squared"
            and not f["private"]
            and f["d"] <= ADASSP_MAX_FEATURES
        ),
        "adassp",
        "Ridge, epsilon=inf: without noise AdaSSP is the exact ridge solution "
        "(scikit-learn's Ridge on the same objective), where the iterative "
        "solvers stop short (German credit's duration, 750 rows, no bound: R^2 "
        "0.446 against dp-sgd's 0.266, scikit-learn 0.512; "
        "benchmarks/results/public_target_bound_inf.md)",
    ),
    (
        lambda f: (
            f["loss"] == "squared"
            and f["private"]
            and 0 < f["n"] <= ADP_SGD_MAX_SAMPLES
            and f.get("epsilon", 0.0) >= ADP_SGD_MIN_EPSILON
        ),
        "adp-sgd",
        f"Ridge, n <= {ADP_SGD_MAX_SAMPLES} and epsilon >= "
        f"{ADP_SGD_MIN_EPSILON:g}: adp-sgd (decaying steps, the noise of each "
        "matched to its size) leads dp-sgd on small regressions with the "
        "private target range, the default y_bound='auto' (34 of 50 cells of "
        "331-3,000 rows, where dp-sgd's losses are the large ones: Adult's age, "
        "331 rows, epsilon 1: R^2 -0.008 against -0.535; "
        "benchmarks/results/private_target_range.md); with a public bound the "
        "two trade cells (diabetes: 0.261 against 0.252 at epsilon 1)",
    ),
    (
        lambda f: True,
        "dp-sgd",
        "default: dp-sgd is the best or within 1 point of the best solver at "
        "its defaults in 79 of 90 cells of the defaults matrix, no other solver "
        "better in more (benchmarks/results/auto_rule.md)",
    ),
)


def public_facts(estimator, X, blocked):
    """The public quantities the rule reads (shapes and settings, no values)."""
    import scipy.sparse as sp

    shape = getattr(X, "shape", None)
    if shape is None and hasattr(X, "__array__"):
        shape = np.asarray(X).shape  # e.g. a wrapper exposing only __array__
    if shape is None:
        try:
            shape = (len(X), len(X[0]) if len(X) else 0)
        except TypeError:  # not array-like: validation will say so
            shape = (0, 0)
    nm, eps = estimator.noise_multiplier, estimator.epsilon
    if nm is not None:
        private = nm > 0
    else:
        private = eps is None or not math.isinf(eps)
    return {
        "loss": estimator._loss_name,
        "n": _dim(shape[0]),
        "d": _dim(shape[1]) if len(shape) > 1 else 1,
        "private": private,
        "pure": private and estimator.delta == 0,
        "sparse": sp.issparse(X),
        "blocked": blocked,
        # the epsilon the rules plan for (public; 1 for a fixed noise multiplier)
        "epsilon": estimator._policy_epsilon(),
    }


def _dim(value):
    """A shape entry as an int; 0 when it is not known before computing
    (a Dask DataFrame's lazy length, a Dask array's unknown chunks)."""
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def choose_solver(facts):
    """``(solver name, reason)``: the first row of :data:`RULES` that matches.

    Raises
    ------
    ValueError
        ``delta = 0`` with the hinge loss: no pure-DP solver supports it.
    """
    if facts["pure"] and facts["loss"] == "hinge":
        raise ValueError(
            "solver='auto' with delta=0 (pure DP): no pure-DP solver supports "
            "loss='hinge'; use loss='squared_hinge' (dp-nag), or delta > 0."
        )
    for condition, name, reason in RULES:
        if condition(facts):
            return name, reason
    raise AssertionError("the last rule always matches")  # pragma: no cover
