"""The private scales of :class:`PrivateSearchCV`, estimated once for all
candidates.

A fit with ``feature_scale="auto"`` and ``clip_norm="auto"`` (or
:class:`~dpestim.linear_model._scales.AutoUnits`) runs its policy step
before the solver: private column means (``feature_centring``), private
scales of the columns that dominate the rows (``feature_balance``), a
private median row norm ``m`` (the rows are divided by ``s = m / target``)
and, for :class:`~dpestim.Ridge` with ``y_bound="auto"``, a private range of
each target. Its public step, clip and regularisation rules then see rows
(and targets) of a known scale whatever the units and offsets of the data.
The candidates of a search run at a fixed noise multiplier and estimate
nothing (no budget to share). The search therefore runs that policy step
once, with the estimator's own machinery and rules (its ``scale_share`` of
the search's ``epsilon``, the centring and balance plans of
:class:`~dpestim.linear_model._scales.PrivateScalesMixin`, the row target of
the candidates' solver), on all the rows it is given, before any candidate
runs, and gives every candidate (and the refit) the releases as public
parameters: ``feature_centring=c``, ``feature_balance=sigma``,
``feature_scale=s``, ``y_bound=(low, high)`` and, for the classifiers,
``class_prior`` (and the balanced ``class_weight`` as a dict) from a Laplace
histogram of the class counts. The candidates fit in the
``"auto"`` fit's units, so that a :class:`Relative` factor 1 of the
``"auto"`` clip norm is the ``"auto"`` plan.

**Privacy.** Every estimate is a pure-DP draw (exponential-mechanism
quantiles, Laplace sums of rows clipped to a released radius) whose
sensitivity holds under the relation of the candidates' solver (the
centring's and balance's Laplace scales are doubled under replace-one, as
in the estimator). Every candidate and the refit read the releases as
public values: post-processing. The search's event is
``ComposedDpEvent([ComposedDpEvent(estimates), selection...])``; the
selection (candidates, scores, refit) is calibrated for ``(epsilon - e0,
delta)`` with ``e0`` the estimates' total epsilon, so by basic composition
the whole is ``(epsilon, delta)``-DP under the relation of the estimator's
solver; where it leaves the candidates less noise (one solver), the
selection is instead calibrated with the estimates by dp-accounting's RDP
accountant (an exponential-mechanism draw of epsilon ``e`` is ``e^2 / 2``
-zCDP, a Laplace release its own RDP event), which certifies the whole
directly. The estimates are charged to the active budgets before they read
the data, the selection before any candidate runs.

Only a bare dpestim linear estimator (not a pipeline, whose final step sees
transformed rows), with ``epsilon`` given (or ``epsilon=None`` with an RDP
budget: the estimates are planned on what it has left), in-memory
``X`` and a feasible row-scale estimate at this ``n`` (else nothing is
estimated and nothing is spent, as in the estimator itself). In a search
over solvers the one median ``m`` gives each listed solver its own ``s = m
/ target`` (post-processing: the targets are public).
"""

import math
import warnings

import dp_accounting
import numpy as np
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.utils import check_array

from .._distributed import as_blocked
from ..linear_model._scales import in_auto_units
from ..preprocessing import _fit_scales as _scales
from ..privacy.charging import FitCharge, charge_fit
from ..solvers import _policy, resolve_solver
from ..solvers._auto import choose_solver, public_facts
from ..utils.validation import data_errors_without_values
from ._space import Relative

__all__ = ["SearchScales", "plan_search_scales"]


class SearchScales:
    """The search's scale estimates: their public plan, then their values.

    Attributes
    ----------
    plan : ScalePlan
        Public: which estimates run and their epsilons (the estimator's
        own policy step at the search's epsilon, without the utility check,
        which belongs to the released fit).
    targets : dict
        Public: arm (a listed solver, or ``None`` for the estimator's own)
        -> the median row norm that arm's rows are brought to.
    neighbouring : str
        The relation of the candidates' solver (the estimates' sensitivities
        are planned for it).
    """

    def __init__(self, plan, targets, neighbouring, step, solver, shapes):
        self.plan, self.targets, self.neighbouring = plan, targets, neighbouring
        self._step, self._solver = step, solver
        # public: n_features, n_targets and the label set (classifiers)
        self._d, self._k, self._labels = shapes

    @property
    def epsilon(self):
        return float(self.plan.epsilon)

    def events(self):
        return self.plan.events()

    def stand_ins(self):
        """arm -> public parameters of the same shapes as the estimates (a
        centre of 0, scales of 1, targets in (-1, 1)), for the probes before
        the estimates are drawn (nothing is read)."""
        plan, d, k = self.plan, self._d, self._k
        params = {"feature_scale": 1.0}
        if plan.centre_epsilon is not None:
            params["feature_centring"] = np.zeros(d)
        if plan.balance_epsilon is not None:
            params["feature_balance"] = np.ones(d)
        if plan.target_epsilon is not None:
            params["y_bound"] = (-np.ones(k), np.ones(k))
        if plan.class_epsilon is not None:
            params.update(self._class_params(np.ones(len(self._labels))))
        return {arm: dict(params) for arm in self.targets}

    def _class_params(self, counts):
        """The candidates' public class parameters from class ``counts`` (the
        step's own rules: proportions for ``class_prior``, scikit-learn's
        balanced weights as a dict for ``class_weight="balanced"``)."""
        step, out = self._step, {}
        if step._prior_wanted(self._solver) and step.fit_intercept:
            out["class_prior"] = counts / counts.sum()
        if step._balanced():
            out["class_weight"] = dict(zip(self._labels, counts))
        return out | self._sorted_classes()

    def _sorted_classes(self):
        """``{"classes": sorted labels}`` where the estimator's public label
        set is given unsorted (a class prior is read in ``classes_`` order,
        which is sorted, and the estimator refuses one beside an unsorted
        ``classes``: the same set, sorted, is the same model); else ``{}``."""
        given = getattr(self._step, "classes", None)
        if given is None or list(np.asarray(given).tolist()) == self._labels:
            return {}
        return {"classes": list(self._labels)}

    def estimate(self, X, y, seed, budget=None):
        """Charge the estimates, then draw them from ``X`` and ``y`` (once):
        arm -> the candidates' public parameters.

        The draws of the estimator's policy step, in its order: the
        centring and the balance
        (:meth:`~dpestim.linear_model._scales.PrivateScalesMixin._apply_centring`),
        one private median row norm ``m`` of the rows so centred and
        balanced (:func:`~dpestim.preprocessing._fit_scales.private_row_scale`
        at target 1), each arm's ``s = m / target`` (post-processing, with
        the estimator's rule that ``s`` within 1e-9 of 1 is 1), then the
        targets' ranges, then the class counts (classifiers: the Laplace
        histogram, given as ``class_prior`` proportions and, for
        ``class_weight="balanced"``, as a dict of the balanced weights, the
        estimator's own rules). A balance that found no dominant column is
        given as ``None`` (off); an estimate not planned is not given (the
        candidate keeps the estimator's value, which estimates nothing at a
        fixed noise multiplier).
        """
        with data_errors_without_values():
            X = check_array(X, accept_sparse="csr", dtype=[np.float64, np.float32])
        charge_fit(
            FitCharge(
                dp_accounting.ComposedDpEvent(self.events()),
                self.neighbouring,
                f"PrivateSearchCV(scale estimates, n={X.shape[0]})",
            ),
            extra=budget,
        )
        rng = np.random.Generator(np.random.PCG64(seed))
        plan, step = self.plan, self._step
        params = {}
        if plan.centre_epsilon is not None or plan.balance_epsilon is not None:
            X, c, sigma, _ = step._apply_centring(X, plan, rng)
            if plan.centre_epsilon is not None:
                params["feature_centring"] = c
            if plan.balance_epsilon is not None:
                params["feature_balance"] = sigma
        m = _scales.private_row_scale(
            X, plan.row_epsilon, rng, 1.0, step._row_statistic[0]
        )
        if plan.target_epsilon is not None:
            Y = np.asarray(y, dtype=np.float64).reshape(len(y), -1)
            step._scale_fit = (plan, rng)  # what the estimator's rule reads
            params["y_bound"] = step._private_y_bound(Y)
            step._scale_fit = None
        if plan.class_epsilon is not None:
            # the estimator's Laplace histogram and its rules (floored counts,
            # balanced weights); its warnings are the candidates' to give
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _, Y = step._encode_targets(np.asarray(y))
                step._class_balance(Y, plan, rng, self._solver)
            if step.class_prior_ is not None:
                params["class_prior"] = step.class_prior_
            if step.class_weight_ is not None:
                params["class_weight"] = dict(
                    zip(self._labels, step.class_weight_.tolist())
                )
            params |= self._sorted_classes()
        out = {}
        for arm, target in self.targets.items():
            s = float(m) / target
            out[arm] = params | {"feature_scale": 1.0 if abs(s - 1.0) < 1e-9 else s}
        return out


def _candidate_solver(step, X, y):
    """The solver a candidate resolves (public: the rule of ``solver="auto"``)."""
    if not _policy.is_auto(step.solver):
        return resolve_solver(step.solver)
    return resolve_solver(choose_solver(public_facts(step, X, False))[0])


def _space_uses_auto_clip(space):
    """Whether a candidate can draw a clip norm in the ``"auto"`` units.

    A searched ``clip_norm`` that is not :class:`Relative` (its factors of an
    ``"auto"`` clip resolve to ``AutoUnits``) draws numbers in the units of
    ``X``, unless it is a list holding ``"auto"`` or ``AutoUnits`` values:
    with none, no candidate would read the scale (nothing is estimated).
    """
    for key, dist in dict(space).items():
        if key.rsplit("__", 1)[-1] != "clip_norm" or isinstance(dist, Relative):
            continue
        if hasattr(dist, "rvs") or not any(in_auto_units(v) for v in dist):
            return False
    return True


#: Parameters the search's estimates set on its candidates: searching one
#: of them leaves every candidate its drawn value (nothing is estimated).
ESTIMATED = (
    "feature_scale",
    "feature_centring",
    "feature_balance",
    "y_bound",
    "class_prior",
    "class_weight",
)


def plan_search_scales(search, X, y, solvers, space=()):
    """The search's :class:`SearchScales`, or ``None`` when it estimates none.

    Public: the estimator's parameters, the search's ``epsilon`` (with
    ``epsilon=None``, what its RDP budget has left: the estimates are
    charged to it first, and the selection is calibrated on the rest), ``n``,
    ``d``, the number of targets, whether ``X`` is sparse or in memory and
    the solver(s) a candidate resolves. ``solvers``: the listed solvers of
    a search over solvers, or ``None``; ``space``: the searched parameters.
    The plan is the estimator's own (row scale, target ranges, then the
    centring and balance planned as in its fit) for the arm whose plan gives
    the row scale the largest epsilon (a solver's ``share_cap`` for the
    estimator's loss may raise the share at small ``n``, as in the
    estimator itself); ``None`` when no arm's row scale is reliable at this
    ``n``.
    """
    est = search.estimator
    eps = search.epsilon
    if eps is None:  # the rest of a budget: plan on what it has left (public)
        budget = getattr(search, "budget", None)
        if budget is None or getattr(budget, "accountant", None) != "rdp":
            return None  # the search raises its own error
        eps = budget.remaining()
        if not 0 < eps < math.inf:
            return None
    if hasattr(est, "steps"):
        return None
    searched = {k.rsplit("__", 1)[-1] for k in space} & set(ESTIMATED)
    if "feature_scale" in searched:  # no candidate would read the row scale
        return None
    if not _space_uses_auto_clip(space):
        return None
    params = est.get_params(deep=False)
    if not (
        hasattr(est, "_row_norm_target")
        and _policy.is_auto(params.get("feature_scale"))
        and in_auto_units(params.get("clip_norm"))
        and math.isfinite(eps)
        and as_blocked(X) is None
    ):
        return None
    shape = np.shape(X)
    if len(shape) != 2:  # the candidates' validation says why (no values)
        return None
    n, d = len(y), shape[1]
    plan, arms, best = None, {}, None
    for arm in solvers or (None,):
        cand = clone(est).set_params(epsilon=None, noise_multiplier=1.0)
        if arm is not None:
            cand.set_params(solver=arm)
        solver = _candidate_solver(cand, X, y)
        step = clone(cand).set_params(epsilon=float(eps), noise_multiplier=None)
        # a searched parameter keeps each candidate's drawn value: its
        # estimate is not planned (the step's own "off" value)
        step.set_params(**dict.fromkeys(searched, None))
        p = _scales.plan_estimates(
            float(eps),
            n,
            share=float(est.scale_share),
            rows=True,
            targets=step._estimated_targets(y),
            max_share=solver.share_cap(cand._loss_name),
            **step._estimated_classes(y, solver),
        )
        arms[arm] = (cand, solver)
        if p.row_epsilon is not None and (
            plan is None or p.row_epsilon > plan.row_epsilon
        ):
            plan, best = p, (step, solver)
    if plan is None:  # unreliable at this n: nothing spent
        return None
    step, solver = best
    # the estimator's centring and balance plan (public: n, d, sparse)
    step._plan_centring(plan, n, d, sp.issparse(X), False, solver)
    targets = {}
    for arm, (cand, arm_solver) in arms.items():
        cand._scale_fit = (plan, None)  # what the estimator's rule reads
        target = cand._row_norm_target(y, arm_solver) or _scales.ROW_NORM_TARGET
        targets[arm] = float(target)
    relation = arms[next(iter(arms))][1].neighbouring
    k = 1 if np.ndim(y) == 1 else int(np.shape(y)[1])
    labels = None
    if plan.class_epsilon is not None:  # public classes=, or released classes_
        given = getattr(step, "classes", None)
        labels = np.unique(np.asarray(y) if given is None else given).tolist()
    return SearchScales(plan, targets, relation, step, solver, (d, k, labels))
