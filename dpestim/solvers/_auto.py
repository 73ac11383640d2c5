"""``solver="auto"``: a public rule table choosing among the built solvers.

The choice reads only public quantities: the estimator's loss, ``n`` and
``d`` (shapes), whether the fit is private (``epsilon``), whether
``delta = 0`` (pure DP), sparse or blocked (Dask, memory-mapped, zarr)
input, and, for :class:`~dpestim.Ridge`, the half-range of an explicit
numeric ``y_bound`` against ``clip_norm`` (``y_bound="data"`` is read from
the private targets, so it counts as no bound here). Never the data
values. The first matching row of :data:`RULES` wins; its reason goes in
``hyperparameters_["solver"]`` and the privacy report.

Derived from ``benchmarks/results/defaults.md`` (issue 14's matrix: dp-sgd
is the best or within noise of the best solver at its defaults in nearly
every cell) and ``benchmarks/results/small_data.md`` (issue 26): AdaSSP
beats every iterative solver on the small regression with its raw target
(diabetes, 331 rows, ``y_bound=(0, 400)``: R^2 0.005 vs dp-sgd -0.21 at
epsilon 1, 0.037 vs -0.0001 at 2: dp-sgd clips residuals of ~100 to 1) but
loses when the target is on the clip's scale (the same data with the target
/ 100 and ``y_bound=(0, 4)``: 0.019 vs 0.168 at epsilon 1) and on the large
regression (California, 15,480 rows: 0.43 vs 0.62). AdaSSP is
scale-equivariant in the target, dp-sgd is not: hence the rule on the
target half-range over ``clip_norm``. Objective perturbation never beat
dp-sgd at its defaults (German, breast cancer, COMPAS), so no row picks it.
Three regression cells set the AdaSSP row: a rule of thumb, not a measured
boundary.
"""

import math

import numpy as np

from ._policy import PRIVATE_CLIP_NORM

__all__ = ["ADASSP_MAX_SAMPLES", "ADASSP_MIN_TARGET_RATIO", "RULES", "choose_solver"]

#: Largest ``n`` at which ``Ridge`` picks AdaSSP (diabetes: 331 rows wins,
#: California: 15,480 loses; nothing measured in between).
ADASSP_MAX_SAMPLES = 2000
#: Smallest ``target half-range / clip_norm`` at which ``Ridge`` picks
#: AdaSSP (diabetes raw target: 200 wins; target / 100: 2 loses).
ADASSP_MIN_TARGET_RATIO = 10.0

#: The rule table: ``(condition, solver, reason)``, first match wins. Each
#: condition reads the dict built by :func:`public_facts`.
RULES = (
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
            and f["n"] <= ADASSP_MAX_SAMPLES
            and f["target_ratio"] >= ADASSP_MIN_TARGET_RATIO
        ),
        "adassp",
        f"Ridge, n <= {ADASSP_MAX_SAMPLES} and a public target half-range >= "
        f"{ADASSP_MIN_TARGET_RATIO:g} x clip_norm: one-shot sufficient "
        "statistics (AdaSSP) beat the clipped-gradient solvers there "
        "(benchmarks/results/small_data.md)",
    ),
    (
        lambda f: True,
        "dp-sgd",
        "default: dp-sgd is the best or within noise of the best solver at its "
        "defaults in the defaults matrix (benchmarks/results/defaults.md)",
    ),
)


def public_facts(estimator, X, blocked):
    """The public quantities the rule reads (shapes and settings, no values)."""
    import scipy.sparse as sp

    shape = getattr(X, "shape", None)
    if shape is None:
        try:
            shape = (len(X), len(X[0]) if len(X) else 0)
        except TypeError:  # not array-like: validation will say so
            shape = (0, 0)
    clip = estimator.clip_norm
    clip = PRIVATE_CLIP_NORM if isinstance(clip, str) else float(clip)
    nm, eps = estimator.noise_multiplier, estimator.epsilon
    if nm is not None:
        private = nm > 0
    else:
        private = eps is None or not math.isinf(eps)
    return {
        "loss": estimator._loss_name,
        "n": int(shape[0]),
        "d": int(shape[1]) if len(shape) > 1 else 1,
        "private": private,
        "pure": private and estimator.delta == 0,
        "sparse": sp.issparse(X),
        "blocked": blocked,
        "target_ratio": _target_half_range(getattr(estimator, "y_bound", None)) / clip,
    }


def _target_half_range(y_bound):
    """Half-range of an explicit numeric ``y_bound``; 0 for None or "data"."""
    if y_bound is None or isinstance(y_bound, str):
        return 0.0
    try:
        if np.ndim(y_bound) == 0:
            return abs(float(y_bound))
        low, high = (np.asarray(v, dtype=float) for v in y_bound)
        return float(np.max((high - low) / 2.0))
    except (TypeError, ValueError):
        return 0.0  # invalid: the estimator's validation will say so


def choose_solver(facts):
    """``(solver name, reason)``: the first row of :data:`RULES` that matches."""
    for condition, name, reason in RULES:
        if condition(facts):
            return name, reason
    raise AssertionError("the last rule always matches")  # pragma: no cover
