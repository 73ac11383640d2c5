"""The guarantee of a workflow of fitted steps, and non-private steps in it."""

import warnings
from dataclasses import dataclass

import dp_accounting

from ..exceptions import PrivacyLeakWarning
from ..privacy.ledger import composed_epsilon

__all__ = ["WorkflowGuarantee", "check_private_steps", "workflow_guarantee"]

# scikit-learn transformers that learn nothing from the data when configured
# as stated (class name -> predicate on the parameters).
_DATA_INDEPENDENT = {
    "FunctionTransformer": lambda p: True,
    "Normalizer": lambda p: True,
    "PolynomialFeatures": lambda p: True,
    "OneHotEncoder": lambda p: not isinstance(p.get("categories"), str),
    "OrdinalEncoder": lambda p: not isinstance(p.get("categories"), str),
}


def _leaves(estimator, path=""):
    """``(path, step)`` of every leaf of Pipeline / ColumnTransformer / FeatureUnion."""
    if estimator is None or isinstance(estimator, str):  # "passthrough", "drop"
        return
    children = None
    if hasattr(estimator, "steps"):
        children = estimator.steps
    elif hasattr(estimator, "transformer_list"):
        children = estimator.transformer_list
    elif hasattr(estimator, "transformers"):
        fitted = getattr(estimator, "transformers_", None)
        children = [(t[0], t[1]) for t in (fitted or estimator.transformers)]
    if children is None:
        yield path or type(estimator).__name__, estimator
        return
    for name, child in children:
        yield from _leaves(child, f"{path}/{name}" if path else name)


def _is_private(step):
    return type(step).__module__.split(".")[0] == "dpestim" or hasattr(
        step, "dp_event_"
    )


def _is_data_independent(step):
    check = _DATA_INDEPENDENT.get(type(step).__name__)
    return check is not None and check(step.get_params(deep=False))


def check_private_steps(estimator, where="dpestim"):
    """Warn about steps fitted on the data without privacy.

    Every leaf step that is neither a dpestim step nor a known data-independent
    transformer (``FunctionTransformer``, ``Normalizer``, ``OneHotEncoder``
    with explicit ``categories``, ...) raises a
    :class:`~dpestim.PrivacyLeakWarning`: scikit-learn's ``StandardScaler``
    fitted on private data releases its means and variances without noise.

    Parameters
    ----------
    estimator : estimator
        A step, or a Pipeline / ColumnTransformer / FeatureUnion of steps.
    where : str, default="dpestim"
        Who is checking (for the message).

    Returns
    -------
    leaks : list of str
        The paths of the flagged steps.
    """
    leaks = [
        path
        for path, step in _leaves(estimator)
        if not _is_private(step) and not _is_data_independent(step)
    ]
    for path in leaks:
        warnings.warn(
            f"{where}: step {path!r} is fitted on the data without differential "
            "privacy; its fitted statistics are not covered by any guarantee. "
            "Use dpestim.preprocessing (or fix its parameters from public "
            "knowledge).",
            PrivacyLeakWarning,
            stacklevel=3,
        )
    return leaks


@dataclass(frozen=True)
class WorkflowGuarantee:
    """The composed guarantee of a fitted workflow.

    Attributes
    ----------
    epsilon, delta : float
        dp-accounting's epsilon of ``dp_event`` at ``delta``, or, when
        smaller, the basic composition of the steps' own guarantees (the sum
        of their ``epsilon_``, valid when the sum of their ``delta_`` is at
        most ``delta``): a step's own accounting can be tighter than the
        accountant's on its event (a search's privacy-profile bound, the
        parallel composition of :class:`SubsetSearchCV`).
    dp_event : dp_accounting.ComposedDpEvent
        Composition of every private step's event.
    steps : tuple of (str, DpEvent)
        Each private step and its event.
    non_private : tuple of str
        Steps fitted without privacy (flagged; not covered).
    accountant : str
    """

    epsilon: float
    delta: float
    dp_event: object
    steps: tuple
    non_private: tuple
    accountant: str

    def __str__(self):
        lines = [
            f"Workflow guarantee: epsilon={self.epsilon:.4g}, delta={self.delta:g} "
            + (
                "(basic composition of the steps' own guarantees, their "
                "epsilon_, tighter here than the accountant on their events)"
                if self.accountant == "basic"
                else f"({self.accountant.upper()} accountant of dp-accounting on "
                "the composition of the steps' events)"
            )
        ]
        lines += [f"  {path}: {event!r}" for path, event in self.steps]
        lines += [
            f"  {path}: NOT PRIVATE (fitted on the data)" for path in self.non_private
        ]
        return "\n".join(lines)


def workflow_guarantee(estimator, delta=None, *, accountant="rdp"):
    """The composed privacy guarantee of a fitted pipeline of private steps.

    Collects the ``dp_event_`` of every fitted step (dpestim estimators,
    :mod:`dpestim.preprocessing` transformers, :class:`PrivateSearchCV`) of a
    Pipeline / ColumnTransformer / FeatureUnion (or of a single estimator),
    composes them with ``dp_accounting.ComposedDpEvent`` and asks the
    accountant (:func:`dpestim.privacy.ledger.composed_epsilon`). Steps
    fitted without privacy raise a :class:`~dpestim.PrivacyLeakWarning` and
    are listed as not covered.

    Parameters
    ----------
    estimator : fitted estimator
    delta : float or None, default=None
        Delta of the guarantee; ``None`` uses the largest ``delta_`` of the
        steps.
    accountant : {"rdp", "pld"}, default="rdp"

    Returns
    -------
    guarantee : WorkflowGuarantee
    """
    non_private = tuple(check_private_steps(estimator, where="workflow_guarantee"))
    steps, deltas, relations, own = [], [], set(), []
    for path, step in _leaves(estimator):
        if not _is_private(step):
            continue
        if not hasattr(step, "dp_event_"):
            raise ValueError(f"Step {path!r} is not fitted (no dp_event_).")
        steps.append((path, step.dp_event_))
        deltas.append(float(getattr(step, "delta_", 0.0)))
        if own is not None and hasattr(step, "epsilon_"):
            own.append((float(step.epsilon_), deltas[-1]))
        else:
            own = None
        solver = getattr(step, "solver_", None)
        relations.add(
            getattr(step, "_relation", None)
            or getattr(solver, "neighbouring", "add_or_remove_one")
        )
    if len(relations) > 1:
        raise ValueError(
            f"Steps accounted under different neighbouring relations: {relations}. "
            "The preprocessing transformers are accounted under add/remove-one; "
            "fit the estimator with a solver under that relation (e.g. delta > 0 "
            "for the dp-sgd family) or compose the guarantees yourself (a "
            "replace-one guarantee at epsilon implies add/remove at 2 epsilon)."
        )
    relation = relations.pop() if relations else "add_or_remove_one"
    if delta is None:
        delta = max(deltas, default=0.0)
    event = dp_accounting.ComposedDpEvent([e for _, e in steps])
    eps = composed_epsilon([e for _, e in steps], delta, accountant, relation)
    # each step's own (epsilon_, delta_) composes too (basic composition)
    if own and sum(d for _, d in own) <= delta and sum(e for e, _ in own) < eps:
        eps, accountant = sum(e for e, _ in own), "basic"
    return WorkflowGuarantee(
        float(eps), float(delta), event, tuple(steps), non_private, accountant
    )
