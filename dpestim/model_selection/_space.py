"""Search spaces: the default one, and i.i.d. sampling of candidates."""

import numbers

from scipy.stats import loguniform

__all__ = ["default_space", "sample_candidate"]

#: Multiplicative range around the estimator's own value.
_FACTORS = {"learning_rate": 4.0, "clip_norm": 2.0}
_ALPHA = (1e-6, 1e-3)


def _private_step(estimator):
    if hasattr(estimator, "steps"):
        name, step = estimator.steps[-1]
        return f"{name}__", step
    return "", estimator


def default_space(estimator):
    """The default search space of :class:`PrivateSearchCV` for ``estimator``.

    Centred on the estimator's own (public) settings: ``learning_rate`` log-
    uniform in ``[lr / 4, 4 lr]``, ``clip_norm`` log-uniform in ``[c / 2, 2 c]``
    and ``alpha`` log-uniform in ``[1e-6, 1e-3]``. Parameters absent from the
    estimator, or set to a string (``"auto"``, resolved per solver at fit
    time), are left alone. None of them changes the mechanism's ``DpEvent``.

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
    for name, factor in _FACTORS.items():
        value = params.get(name)
        if isinstance(value, numbers.Real) and 0 < value < float("inf"):
            space[prefix + name] = loguniform(value / factor, value * factor)
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
