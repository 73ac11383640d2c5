"""The private row scale of :class:`PrivateSearchCV` (``feature_scale="auto"``).

A fit with ``feature_scale="auto"`` and ``clip_norm="auto"`` (or
:class:`~dpestim.linear_model._scales.AutoUnits`) estimates a private median
row norm ``m`` and runs on ``x / s``, ``s = m / target``, so that its public
step, clip and regularisation rules see rows of a known norm whatever the
units of ``X``. The candidates of a search run at a fixed noise multiplier
and estimate no scale (no budget to share). The search therefore estimates
``s`` once, with the estimator's own machinery
(:func:`~dpestim.preprocessing._fit_scales.plan_estimates` at the
estimator's ``scale_share`` of the search's ``epsilon``,
:func:`~dpestim.preprocessing._fit_scales.private_row_scale` with the
estimator's ``row_norm_target`` for the candidates' solver), on all the rows
it is given, before any candidate runs, and gives every candidate (and the
refit) the public ``feature_scale=s``: the candidates fit in the ``"auto"``
fit's units, so that a :class:`Relative` factor 1 of the ``"auto"`` clip
norm is the ``"auto"`` plan.

**Privacy.** The estimate is one exponential-mechanism draw of epsilon
``e0 = share * epsilon`` (pure DP under both neighbouring relations: the
median's rank utility has sensitivity 1 under add/remove-one and
replace-one). Every candidate and the refit read ``s`` as a public value:
post-processing of that release. The search's event is
``ComposedDpEvent([ExponentialMechanismDpEvent(e0), selection])``; the
selection (candidates, scores, refit) is calibrated for ``(epsilon - e0,
delta)``, so by basic composition the whole is ``(epsilon, delta)``-DP
under the relation of the estimator's solver. The scale estimate is charged
to the active budgets before it reads the data, the selection before any
candidate runs.

Only a bare dpestim estimator (not a pipeline, whose final step sees
transformed rows), with ``epsilon`` given (not ``epsilon=None``), in-memory
``X`` and a feasible estimate at this ``n`` (else nothing is estimated and
nothing is spent, as in the estimator itself). In a search over solvers the
one median ``m`` gives each listed solver its own ``s = m / target``
(post-processing: the targets are public).
"""

import math

import dp_accounting
import numpy as np
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

__all__ = ["RowScale", "plan_row_scale"]


class RowScale:
    """The search's row-scale estimate: its public plan, then its values.

    Attributes
    ----------
    plan : ScalePlan
        Public: the estimate's epsilon (``plan.row_epsilon``).
    targets : dict
        Public: arm (a listed solver, or ``None`` for the estimator's own)
        -> the median row norm that arm's rows are brought to.
    neighbouring : str
        The relation of the candidates' solver (the estimate is pure DP
        under both).
    """

    def __init__(self, plan, targets, neighbouring):
        self.plan, self.targets, self.neighbouring = plan, targets, neighbouring

    @property
    def epsilon(self):
        return float(self.plan.epsilon)

    def events(self):
        return self.plan.events()

    def estimate(self, X, seed, budget=None):
        """Charge the estimate, then draw it from ``X`` (once): arm -> ``s``.

        One private median row norm ``m``
        (:func:`~dpestim.preprocessing._fit_scales.private_row_scale` at
        target 1); each arm's ``s = m / target`` is post-processing, with
        the estimator's rule that ``s`` within 1e-9 of 1 is 1.
        """
        with data_errors_without_values():
            X = check_array(X, accept_sparse="csr", dtype=[np.float64, np.float32])
        charge_fit(
            FitCharge(
                dp_accounting.ComposedDpEvent(self.events()),
                self.neighbouring,
                f"PrivateSearchCV(row scale estimate, n={X.shape[0]})",
            ),
            extra=budget,
        )
        rng = np.random.Generator(np.random.PCG64(seed))
        m = _scales.private_row_scale(X, self.plan.row_epsilon, rng, 1.0)
        out = {}
        for arm, target in self.targets.items():
            s = float(m) / target
            out[arm] = 1.0 if abs(s - 1.0) < 1e-9 else s
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


def plan_row_scale(search, X, y, solvers, space=()):
    """The search's :class:`RowScale`, or ``None`` when it estimates none.

    Public: the estimator's parameters, the search's ``epsilon``, ``n``,
    whether ``X`` is in memory and the solver(s) a candidate resolves.
    ``solvers``: the listed solvers of a search over solvers, or ``None``;
    ``space``: the searched parameters (searching ``feature_scale`` itself
    leaves every candidate its drawn value: no estimate).
    The estimate's epsilon is the largest that one arm's plan gives (a
    solver's ``share_cap`` for the estimator's loss may raise the share at
    small ``n``, as in the estimator itself);
    ``None`` when no arm's estimate is reliable at this ``n``.
    """
    est = search.estimator
    eps = search.epsilon
    if hasattr(est, "steps") or eps is None:
        return None
    if any(k.rsplit("__", 1)[-1] == "feature_scale" for k in space):
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
    plan, arms = None, {}
    for arm in solvers or (None,):
        cand = clone(est).set_params(epsilon=None, noise_multiplier=1.0)
        if arm is not None:
            cand.set_params(solver=arm)
        solver = _candidate_solver(cand, X, y)
        p = _scales.plan_estimates(
            float(eps),
            len(y),
            share=float(est.scale_share),
            rows=True,
            targets=0,
            max_share=solver.share_cap(cand._loss_name),
        )
        arms[arm] = (cand, solver)
        if p.row_epsilon is not None and (
            plan is None or p.row_epsilon > plan.row_epsilon
        ):
            plan = p
    if plan is None:  # unreliable at this n: nothing spent
        return None
    targets = {}
    for arm, (cand, solver) in arms.items():
        cand._scale_fit = (plan, None)  # what the estimator's rule reads
        target = cand._row_norm_target(y, solver) or _scales.ROW_NORM_TARGET
        targets[arm] = float(target)
    relation = arms[next(iter(arms))][1].neighbouring
    return RowScale(plan, targets, relation)
