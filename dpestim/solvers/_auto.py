"""``solver="auto"``: a public rule table choosing among the built solvers.

The choice reads only public quantities: the estimator's loss, ``n`` and
``d`` (shapes), whether the fit is private (``epsilon``), whether
``delta = 0`` (pure DP), sparse or blocked (Dask, memory-mapped, zarr)
input, and, for :class:`~dpestim.Ridge`, whether a target bound
(``y_bound``) is set. Never the data values. The first matching row of
:data:`RULES` wins; its reason goes in ``hyperparameters_["solver"]`` and the
privacy report.

Derived from ``benchmarks/results/defaults.md`` (issue 14's matrix: dp-sgd
is the best or within noise of the best solver at its defaults in nearly
every cell) and ``benchmarks/results/small_data.md`` (issue 26): AdaSSP
beats every iterative solver on the small regression (diabetes, 331 rows,
raw target: R^2 0.005 vs dp-sgd -0.21 at epsilon 1, 0.037 vs -0.0001 at 2)
and loses on the large one (California, 15,480 rows: 0.43 vs 0.62);
objective perturbation never beat dp-sgd at its defaults (German, breast
cancer, COMPAS), so no row picks it. Only two regression sets set the
AdaSSP threshold: it is a rule of thumb, not a measured boundary.
"""

import math

__all__ = ["ADASSP_MAX_SAMPLES", "RULES", "choose_solver"]

#: Largest ``n`` at which ``Ridge`` picks AdaSSP (diabetes: 331 rows wins,
#: California: 15,480 loses; nothing measured in between).
ADASSP_MAX_SAMPLES = 2000

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
            and f["has_target_bound"]
            and f["n"] <= ADASSP_MAX_SAMPLES
        ),
        "adassp",
        f"Ridge with a target bound and n <= {ADASSP_MAX_SAMPLES}: one-shot "
        "sufficient statistics (AdaSSP) beat the iterative solvers on small "
        "regressions (benchmarks/results/small_data.md)",
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
    y_bound = getattr(estimator, "y_bound", None)
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
        "has_target_bound": y_bound is not None,
    }


def choose_solver(facts):
    """``(solver name, reason)``: the first row of :data:`RULES` that matches."""
    for condition, name, reason in RULES:
        if condition(facts):
            return name, reason
    raise AssertionError("the last rule always matches")  # pragma: no cover
