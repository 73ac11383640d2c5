"""Brute-force sensitivity checks for every registered solver.

On random neighbouring datasets (add/remove one record, or replace one for
solvers that declare ``neighbouring = "replace_one"``), the statistic a step
releases (before noise) must move by at most the sensitivity the solver's
``DpEvent`` assumes.

How a solver plugs in (the *sensitivity probe*)
----------------------------------------------
A probe is ``probe(solver, plan, rng) -> (statistic, ord, bound)``:

* ``statistic(X, Y)`` returns, as an array, the data-dependent quantity one
  step adds noise to (for gradient solvers: the sum of clipped per-example
  gradients at a random public state drawn from ``rng``; for a Laplace
  solver its L1 statistic; for an exponential mechanism the score vector).
  Records that a sampled step might include must all be included: the check
  is on the worst case over the sample.
* ``ord`` is the norm (2, 1 or ``np.inf``) and ``bound`` the sensitivity the
  event assumes, in the units the noise is scaled to (``clip_norm`` for
  dp-sgd, whose noise is ``noise_multiplier * clip_norm``).

A solver provides it either as a method ``solver.sensitivity_probe(plan,
rng)`` returning the same triple, or by an entry in ``PROBES`` below
(keyed by class; subclasses inherit it through the MRO). Solvers whose step
statistic does not fit this shape (coordinate descent, whose released step
includes per-record dual coordinates; exponential mechanisms) are listed in
``DEDICATED`` with the brute-force neighbouring-dataset test of their own
module, which ``test_every_solver_has_a_probe`` checks exists. A registered
solver with none of these fails that test.
"""

import importlib
import zlib

import numpy as np
import pytest
import scipy.sparse as sp
from twins import make_targets

from dpestim._kernels import (
    clipped_grad_sum,
    clipped_grad_sum_csr,
    l1_clipped_grad_sum,
    l1_clipped_grad_sum_csr,
    weighted_clipped_grad_sum,
    weighted_clipped_grad_sum_csr,
    weighted_l1_clipped_grad_sum,
    weighted_l1_clipped_grad_sum_csr,
)
from dpestim.losses import LOSS_NAMES, MULTINOMIAL, SQUARED
from dpestim.solvers import DPSGD, SOLVERS, AcceleratedSolver, ERMPlan
from dpestim.solvers.accelerated._kernels import _row_norms
from dpestim.solvers.base import row_weights
from dpestim.solvers.sgd._descent import _row_sq_norms

_CODES = {name: code for code, name in LOSS_NAMES.items()}


#: (dense, CSR, weighted dense, weighted CSR) kernels of the clipped sums.
_L2_SUMS = (
    clipped_grad_sum,
    clipped_grad_sum_csr,
    weighted_clipped_grad_sum,
    weighted_clipped_grad_sum_csr,
)
_L1_SUMS = (
    l1_clipped_grad_sum,
    l1_clipped_grad_sum_csr,
    weighted_l1_clipped_grad_sum,
    weighted_l1_clipped_grad_sum_csr,
)


def _clipped_sum_statistic(plan, rng, kernels, norms):
    """``statistic(X, Y)``: the clipped-gradient sum of ``kernels`` at a random
    public state drawn from ``rng``; ``norms(X)`` are the row norms the kernel
    clips by. Each record's class weight (``class_weight``) is applied when the
    plan has weights."""
    scale = rng.choice([0.1, 1.0, 10.0, 1e3])
    W = scale * rng.normal(size=(plan.n_outputs, plan.n_features))
    b = scale * rng.normal(size=plan.n_outputs)
    dense, csr, weighted_dense, weighted_csr = kernels

    def statistic(X, Y):
        K, d = W.shape
        G, g0, z, dz = np.zeros((K, d)), np.zeros(K), np.empty(K), np.empty(K)
        rows = np.arange(Y.shape[0], dtype=np.int64)
        args = (Y, rows, Y.shape[0], W, b, plan.loss, plan.clip_norm, norms(X))
        args += (plan.fit_intercept, G, g0, z, dz)
        head = (X.data, X.indices, X.indptr) if sp.issparse(X) else (X,)
        wts = row_weights(plan, Y)
        if wts is None:
            (csr if sp.issparse(X) else dense)(*head, *args)
        else:
            (weighted_csr if sp.issparse(X) else weighted_dense)(*head, *args, wts)
        return np.concatenate([G.ravel(), g0 if plan.fit_intercept else []])

    return statistic


def clipped_sum_probe(solver, plan, rng):
    """Probe of the clipped-gradient-sum solvers (dp-sgd and its family)."""
    statistic = _clipped_sum_statistic(plan, rng, _L2_SUMS, _row_sq_norms)
    return statistic, 2, plan.clip_norm


def l1_clipped_sum_probe(solver, plan, rng):
    """Probe of the accelerated family: L1-clipped sum (Laplace) or the L2 one.

    Under replacement of one record (their neighbouring relation) the L1
    sensitivity of the Laplace statistic is ``2 clip_norm``.
    """
    if not solver._laplace():
        statistic, order, bound = clipped_sum_probe(solver, plan, rng)
        return statistic, order, 2 * bound  # replace-one

    def l1_norms(X):
        return _row_norms(X, True)

    statistic = _clipped_sum_statistic(plan, rng, _L1_SUMS, l1_norms)
    return statistic, 1, 2 * plan.clip_norm


#: Solver class -> probe, for solvers without a ``sensitivity_probe`` method.
PROBES = {DPSGD: clipped_sum_probe, AcceleratedSolver: l1_clipped_sum_probe}

#: Solver registry name -> "test module:function" of its own brute-force
#: sensitivity test on random neighbouring datasets.
DEDICATED = {
    "dp-scd": "test_dp_scd:test_sensitivity_of_one_record_on_random_neighbours",
    "seq-dp-scd": "test_dp_scd:test_sensitivity_of_one_record_on_random_neighbours",
    "dp-smd-sco": "test_saddle:test_sco_sensitivity_of_running_mean",
}


def _dedicated_test(name):
    module, function = DEDICATED[name].split(":")
    return getattr(importlib.import_module(module), function, None)


def find_probe(solver):
    if hasattr(solver, "sensitivity_probe"):
        return lambda s, plan, rng: s.sensitivity_probe(plan, rng)
    for cls in type(solver).__mro__:
        if cls in PROBES:
            return PROBES[cls]
    return None


def _random_dataset(rng, loss, n, d, K, sparse):
    kind = rng.integers(4)
    X = rng.normal(size=(n, d))
    if kind == 1:  # a few huge records
        X[rng.integers(n, size=2)] *= 1e4
    elif kind == 2:  # tiny records (clipping inactive)
        X *= 1e-3
    elif kind == 3:  # constant and empty columns
        X[:, 0] = 3.0
        X[:, -1] = 0.0
    Y = make_targets(loss, n, K, rng)
    if loss == SQUARED and rng.random() < 0.5:
        Y = Y * 1e5
    if sparse:
        X = sp.csr_matrix(X * (rng.random(X.shape) < 0.4))
    return X, Y


def _neighbour(rng, X, Y, relation, loss, K):
    i = int(rng.integers(Y.shape[0]))
    keep = np.delete(np.arange(Y.shape[0]), i)
    if relation == "add_or_remove_one":
        return X[keep], Y[keep]
    X2 = X.toarray() if sp.issparse(X) else X.copy()
    Y2 = Y.copy()
    X2[i] = rng.normal(size=X2.shape[1]) * 1e3
    Y2[i] = make_targets(loss, 1, K, rng)[0]
    return (sp.csr_matrix(X2) if sp.issparse(X) else X2), Y2


def max_sensitivity_ratio(
    solver, loss, rng, n_datasets=15, sparse=False, class_weights=False
):
    """Largest observed ||stat(D) - stat(D')|| / assumed sensitivity.

    ``class_weights``: the plan carries random class weights (normalised to a
    largest value of 1, as the estimator hands them over); each record's
    weight follows its own label, so a replaced record may change class.
    """
    probe = find_probe(solver)
    worst = 0.0
    for _ in range(n_datasets):
        n, d = int(rng.integers(2, 30)), int(rng.integers(1, 6))
        K = int(rng.integers(2, 4)) if loss == MULTINOMIAL else int(rng.integers(1, 3))
        plan = ERMPlan(
            n_samples=n,
            n_features=d,
            n_outputs=K,
            loss=loss,
            alpha=0.0,
            fit_intercept=bool(rng.integers(2)),
            clip_norm=float(rng.choice([0.01, 0.5, 1.0, 7.0])),
            max_iter=1,
            batch_size=max(1, n // 2),
            learning_rate=0.1,
        )
        if class_weights:
            cw = rng.uniform(0.0, 1.0, size=max(K, 2)) ** 2  # some near 0
            cw[rng.integers(cw.size)] = 1.0
            plan = ERMPlan(**{**plan.__dict__, "class_weights": tuple(cw)})
        X, Y = _random_dataset(rng, loss, n, d, K, sparse)
        statistic, order, bound = probe(solver, plan, rng)
        X2, Y2 = _neighbour(rng, X, Y, solver.neighbouring, loss, K)
        diff = statistic(X, Y) - statistic(X2, Y2)
        worst = max(worst, np.linalg.norm(diff.ravel(), ord=order) / bound)
    return worst


def test_every_solver_has_a_probe():
    missing = [
        name
        for name, cls in SOLVERS.items()
        if find_probe(cls()) is None
        and (name not in DEDICATED or _dedicated_test(name) is None)
    ]
    assert not missing, (
        f"solvers {missing} have no sensitivity probe: add a "
        "sensitivity_probe(plan, rng) method or an entry in PROBES "
        "(tests/solvers/test_sensitivity.py)"
    )


def _solver_losses():
    for name in sorted(SOLVERS):
        if find_probe(SOLVERS[name]()) is None:
            continue  # covered by its DEDICATED test
        for loss in sorted(SOLVERS[name].supported_losses):
            yield name, loss


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("name,loss", list(_solver_losses()))
def test_released_statistic_moves_by_at_most_the_assumed_sensitivity(
    name, loss, sparse
):
    solver = SOLVERS[name]()
    if find_probe(solver) is None:
        pytest.fail(f"no sensitivity probe for {name}")
    if sparse and not solver.accepts_sparse:
        pytest.skip(f"{name} does not accept sparse input")
    # A stable seed: hash() of a str changes with PYTHONHASHSEED per process.
    rng = np.random.default_rng(zlib.crc32(f"{name}/{loss}/{sparse}".encode()))
    ratio = max_sensitivity_ratio(solver, _CODES[loss], rng, sparse=sparse)
    assert ratio <= 1 + 1e-9, f"{name}/{loss}: a step moved by {ratio:.4g} x bound"
    # The random datasets reach the bound (clipping active), so the check is
    # not vacuous (0.5: one neighbour's gradient clipped, the other's zero).
    assert ratio > 0.45


def _weighted_solver_losses():
    for name, loss in _solver_losses():
        if SOLVERS[name].supports_class_weight and loss != "squared":
            yield name, loss


def test_solvers_with_class_weight_are_covered():
    """Every solver taking class_weight has a weighted check (probe or dedicated)."""
    weighted = {n for n, c in SOLVERS.items() if c.supports_class_weight}
    probed = {name for name, _ in _weighted_solver_losses()}
    dedicated = {"dp-scd", "seq-dp-scd"}  # test_dp_scd: weights=True case
    assert weighted <= probed | dedicated, weighted - probed - dedicated
    assert {"dp-sgd", "dp-gd", "dp-nag", "dp-masg-opt", "dp-scd"} <= weighted


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("name,loss", list(_weighted_solver_losses()))
def test_class_weighted_statistic_moves_by_at_most_the_assumed_sensitivity(
    name, loss, sparse
):
    """class_weight: the weighted clipped sums keep the unweighted bound."""
    solver = SOLVERS[name]()
    if sparse and not solver.accepts_sparse:
        pytest.skip(f"{name} does not accept sparse input")
    rng = np.random.default_rng(zlib.crc32(f"w/{name}/{loss}/{sparse}".encode()))
    ratio = max_sensitivity_ratio(
        solver, _CODES[loss], rng, n_datasets=25, sparse=sparse, class_weights=True
    )
    assert ratio <= 1 + 1e-9, f"{name}/{loss}: a step moved by {ratio:.4g} x bound"
    assert ratio > 0.3  # not vacuous: weights near 1 reach the clipped bound


def test_weighted_check_catches_weights_above_one():
    """Negative control: weights > 1 after clipping break the bound."""

    def inflated(solver, plan, rng):
        statistic, order, bound = clipped_sum_probe(solver, plan, rng)

        def bigger(X, Y):
            return 5.0 * statistic(X, Y)  # every weight 5: outside [0, 1]

        return bigger, order, bound

    class Inflated(DPSGD):
        name = "inflated"

        def sensitivity_probe(self, plan, rng):
            return inflated(self, plan, rng)

    ratio = max_sensitivity_ratio(
        Inflated(), _CODES["logistic"], np.random.default_rng(1), class_weights=True
    )
    assert ratio > 1.5


def test_check_catches_a_probe_without_clipping():
    """Negative control: an unclipped statistic violates the assumed bound."""

    def unclipped(solver, plan, rng):
        statistic, order, bound = clipped_sum_probe(
            solver, ERMPlan(**{**plan.__dict__, "clip_norm": np.inf}), rng
        )
        return statistic, order, plan.clip_norm

    class Unclipped(DPSGD):
        name = "unclipped"

        def sensitivity_probe(self, plan, rng):
            return unclipped(self, plan, rng)

    ratio = max_sensitivity_ratio(
        Unclipped(), _CODES["logistic"], np.random.default_rng(1)
    )
    assert ratio > 10
