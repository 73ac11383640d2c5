"""Search spaces: the default one, and i.i.d. sampling of candidates."""

import math
import numbers

import numpy as np
from scipy.stats import loguniform
from sklearn.utils import check_random_state

from ..linear_model._scales import AutoUnits, in_auto_units

__all__ = ["Relative", "default_space", "sample_candidate"]

#: Multiplicative range of the learning rate around the resolved value.
_LR_FACTOR = 3.0
#: Multiplicative range of the clip norm around the resolved value.
_CLIP_FACTOR = 2.0
#: Probability that a default candidate keeps a parameter's resolved value.
_CENTRE = 0.5


class Relative:
    """A distribution of factors of the value the estimator resolves.

    ``Relative(loguniform(0.25, 4))`` for ``learning_rate`` draws a factor
    ``f``; the candidate's learning rate is ``f`` times the value the
    estimator itself would use: its explicit value, or the value its solver
    resolves for ``"auto"`` from public quantities (read from the solver's
    plan, before anything runs), in the units the estimator's own fit uses:
    ``alpha`` in the units of ``X``; ``clip_norm``, when the estimator's is
    ``"auto"``, in the units of the ``"auto"`` fit (:class:`AutoUnits`: the
    fit keeps its private row scale, ``feature_scale="auto"``), so that the
    factor 1 is the ``"auto"`` fit itself. (A number would be in the units
    of ``X`` and switch the row scale off: another model.) Candidates of
    :class:`PrivateSearchCV` run at a fixed noise multiplier, which
    estimates no row scale itself (no budget to share): the search estimates
    it once for all of them (and accounts it) and gives every candidate the
    released scale, so their ``"auto"`` clip norm and its factors are in the
    ``"auto"`` fit's units too; the fit of :class:`SubsetSearchCV` on the
    other rows runs at ``(epsilon, delta)`` and estimates (and accounts) its
    row scale as the ``"auto"`` fit does.

    Parameters
    ----------
    dist : scipy distribution or sequence of float
        Distribution of the factor (an object with ``rvs``), or a non-empty
        list of positive finite factors drawn uniformly (with replacement,
        as lists in ``param_distributions``). Every drawn factor must be
        positive and finite.
    centre : float in [0, 1], default=0.0
        Probability of the factor 1 (the estimator's own value) instead of a
        draw from ``dist``: a mixture, so candidates stay i.i.d.
    """

    def __init__(self, dist, centre=0.0):
        if not (isinstance(centre, numbers.Real) and 0.0 <= centre <= 1.0):
            raise ValueError(f"centre must be in [0, 1], got {centre!r}.")
        if not hasattr(dist, "rvs"):
            if isinstance(dist, (str, bytes)) or not hasattr(dist, "__iter__"):
                raise TypeError(
                    "Relative(dist): dist must be a scipy distribution (with rvs) "
                    f"or a list of positive factors, got {dist!r}."
                )
            values = list(dist)
            if not values:
                raise ValueError("Relative(dist): the list of factors is empty.")
            dist = [Factor(v) for v in values]  # each validated
        self.dist = dist
        self.centre = centre

    def rvs(self, random_state=None):
        """Draw one factor (a :class:`Factor`)."""
        if self.centre > 0:
            if random_state is None or not hasattr(random_state, "random"):
                raise TypeError("Relative with centre > 0 needs a Generator.")
            if random_state.random() < self.centre:
                return Factor(1.0)
        if isinstance(self.dist, list):
            return self.dist[_uniform_index(len(self.dist), random_state)]
        return Factor(float(self.dist.rvs(random_state=random_state)))

    def __repr__(self):
        return f"Relative({self.dist!r}, centre={self.centre!r})"


def _uniform_index(k, random_state):
    """A uniform index in ``range(k)`` from any random_state scikit-learn takes."""
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(k))
    return int(check_random_state(random_state).randint(k))


class Factor(float):
    """A drawn factor, resolved against the estimator's value at fit time.

    Parameters
    ----------
    value : float
        Positive and finite.
    """

    def __new__(cls, value):
        if isinstance(value, (bool, np.bool_)) or not isinstance(
            value, (numbers.Real, np.ndarray)
        ):
            raise TypeError(f"A Relative factor must be a real number, got {value!r}.")
        value = float(value)
        if not 0 < value < math.inf:
            raise ValueError(
                f"A Relative factor must be positive and finite, got {value!r}."
            )
        return super().__new__(cls, value)

    def __repr__(self):
        return repr(float(self))


def resolve_relative(params, plan, estimator=None):
    """``params`` with every :class:`Factor` times the plan's value.

    The value is in the units the estimator's own fit uses: ``alpha`` in
    ``X``'s units (the plan's ``user_alpha``); ``clip_norm``, when the
    estimator's is ``"auto"`` (or already :class:`AutoUnits`), as
    :class:`AutoUnits` (the ``"auto"`` fit's units: the fit keeps its
    private row scale, so that the factor 1 is the ``"auto"`` fit), else a
    number in
    ``X``'s units. ``estimator``: the estimator (or pipeline) whose plan
    ``plan`` is (``None``: numbers throughout).
    """
    own = estimator.get_params() if estimator is not None else {}
    out = {}
    for name, value in params.items():
        if isinstance(value, Factor):
            attr = name.rsplit("__", 1)[-1]
            base = getattr(plan, attr, None)
            if attr == "alpha" and getattr(plan, "user_alpha", None) is not None:
                # the plan's alpha is in the rescaled rows' units; the
                # candidate's alpha is read in X's units
                base = plan.user_alpha
            if not isinstance(base, numbers.Real):
                raise ValueError(
                    f"Relative values for {name!r} need an estimator whose solver "
                    f"plan resolves {attr!r}."
                )
            value = float(value) * float(base)
            if attr == "clip_norm" and in_auto_units(own.get(name)):
                # an explicit number would switch the private row scale off
                value = AutoUnits(value)
        out[name] = value
    return out


def _private_step(estimator):
    if hasattr(estimator, "steps"):
        name, step = estimator.steps[-1]
        return f"{name}__", step
    return "", estimator


def default_space(estimator):
    """The default search space of :class:`PrivateSearchCV` for ``estimator``.

    Small and centred on the estimator's own plan (its explicit values, or
    what its solver resolves for ``"auto"`` from public quantities; see
    :class:`Relative`): ``learning_rate`` and ``clip_norm``, each with
    probability 1/2 the resolved value and otherwise a log-uniform factor
    of it in ``[1/3, 3]`` (learning rate) or ``[1/2, 2]`` (clip norm). A
    candidate is therefore the plain ``"auto"`` plan with probability 1/4,
    and a search of ``K`` candidates contains it with probability ``1 -
    (3/4)**K``. ``alpha`` is not searched (its effect is small at the
    default). Neither parameter changes the ``DpEvent`` of ``dp-sgd``; with
    a solver where one does (the learning rate of ``adp-sgd`` and of the
    ``-opt`` accelerated solvers), :class:`PrivateSearchCV` leaves it out of
    this space (probed at fixed values: a public rule). Parameters absent
    from the estimator are left alone.

    Parameters
    ----------
    estimator : estimator or Pipeline
        A dpestim estimator or a pipeline ending in one.

    Returns
    -------
    space : dict
        Parameter name (with the pipeline step prefix) -> distribution.
    """
    prefix, step = _private_step(estimator)
    params = step.get_params(deep=False)
    space = {}
    if "learning_rate" in params:
        space[prefix + "learning_rate"] = Relative(
            loguniform(1 / _LR_FACTOR, _LR_FACTOR), centre=_CENTRE
        )
    c = params.get("clip_norm")
    if (isinstance(c, str) and c == "auto") or (
        isinstance(c, numbers.Real) and 0 < c < float("inf")
    ):
        # a searched fit is private: its plan resolves a finite clip norm
        space[prefix + "clip_norm"] = Relative(
            loguniform(1 / _CLIP_FACTOR, _CLIP_FACTOR), centre=_CENTRE
        )
    if not space:
        raise ValueError(
            f"No default search space for {type(step).__name__}: give "
            "param_distributions."
        )
    return space


def sample_candidate(space, rng):
    """One candidate: every parameter drawn independently (lists uniformly).

    Unlike scikit-learn's ``ParameterSampler``, lists are always sampled
    with replacement: the candidates must be i.i.d. for the analysis of
    private selection.
    """
    params = {}
    for name in sorted(space):
        dist = space[name]
        if hasattr(dist, "rvs"):
            params[name] = dist.rvs(random_state=rng)
        else:
            if isinstance(dist, str) or not hasattr(dist, "__iter__"):
                raise TypeError(
                    f"param_distributions[{name!r}] must be a list of values or a "
                    f"distribution with rvs(), got {dist!r} (write [{dist!r}] for "
                    "one value)."
                )
            values = list(dist)
            if not values:
                raise ValueError(f"param_distributions[{name!r}] is empty.")
            params[name] = values[int(rng.integers(len(values)))]
    return params
