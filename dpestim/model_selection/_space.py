"""Search spaces: the default one, and i.i.d. sampling of candidates."""

import math
import numbers

import numpy as np
from scipy.stats import loguniform
from sklearn.utils import check_random_state

from ..solvers._policy import PRIVATE_CLIP_NORM

__all__ = ["Relative", "default_space", "sample_candidate"]

#: Multiplicative range of the learning rate around the resolved value.
_LR_FACTOR = 4.0
#: Multiplicative range of the clip norm around the estimator's value.
_CLIP_FACTOR = 2.0
_ALPHA = (1e-6, 1e-3)


class Relative:
    """A distribution of factors of the value the estimator resolves.

    ``Relative(loguniform(0.25, 4))`` for ``learning_rate`` draws a factor
    ``f``; the candidate's learning rate is ``f`` times the value the
    estimator itself would use: its explicit value, or the value its solver
    resolves for ``"auto"`` from public quantities (read from the solver's
    plan, before anything runs).

    Parameters
    ----------
    dist : scipy distribution or sequence of float
        Distribution of the factor (an object with ``rvs``), or a non-empty
        list of positive finite factors drawn uniformly (with replacement,
        as lists in ``param_distributions``). Every drawn factor must be
        positive and finite.
    """

    def __init__(self, dist):
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

    def rvs(self, random_state=None):
        """Draw one factor (a :class:`Factor`)."""
        if isinstance(self.dist, list):
            return self.dist[_uniform_index(len(self.dist), random_state)]
        return Factor(self.dist.rvs(random_state=random_state))

    def __repr__(self):
        return f"Relative({self.dist!r})"


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


def resolve_relative(params, plan):
    """``params`` with every :class:`Factor` times the plan's value."""
    out = {}
    for name, value in params.items():
        if isinstance(value, Factor):
            attr = name.rsplit("__", 1)[-1]
            base = getattr(plan, attr, None)
            if not isinstance(base, numbers.Real):
                raise ValueError(
                    f"Relative values for {name!r} need an estimator whose solver "
                    f"plan resolves {attr!r}."
                )
            value = float(value) * float(base)
        out[name] = value
    return out


def _private_step(estimator):
    if hasattr(estimator, "steps"):
        name, step = estimator.steps[-1]
        return f"{name}__", step
    return "", estimator


def default_space(estimator):
    """The default search space of :class:`PrivateSearchCV` for ``estimator``.

    Centred on the estimator's own (public) settings: ``learning_rate`` a
    log-uniform factor in ``[1/4, 4]`` of the value the estimator resolves
    (its explicit value, or its solver's ``"auto"`` value; see
    :class:`Relative`), ``clip_norm`` log-uniform in ``[c / 2, 2 c]`` (``c``
    the clip norm, 1.0 for ``"auto"`` in a private fit) and
    ``alpha`` log-uniform in ``[1e-6, 1e-3]``. Parameters absent from the
    estimator are left alone. None of them changes the mechanism's
    ``DpEvent``.

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
            loguniform(1 / _LR_FACTOR, _LR_FACTOR)
        )
    c = params.get("clip_norm")
    if isinstance(c, str) and c == "auto":
        # a searched fit is private: "auto" is the private clip norm there
        c = PRIVATE_CLIP_NORM
    if isinstance(c, numbers.Real) and 0 < c < float("inf"):
        space[prefix + "clip_norm"] = loguniform(c / _CLIP_FACTOR, c * _CLIP_FACTOR)
    if "alpha" in params:
        space[prefix + "alpha"] = loguniform(*_ALPHA)
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
            values = list(dist)
            if not values:
                raise ValueError(f"param_distributions[{name!r}] is empty.")
            params[name] = values[int(rng.integers(len(values)))]
    return params
