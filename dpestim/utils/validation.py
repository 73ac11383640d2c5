"""Validation helpers: random state -> Generator."""

import numbers

import numpy as np

__all__ = ["check_generator"]


def check_generator(random_state):
    """Turn ``random_state`` into a ``numpy.random.Generator``.

    Parameters
    ----------
    random_state : None, int, numpy.random.Generator or numpy.random.RandomState
        ``None`` draws fresh entropy from the operating system (the right
        choice for a release: the noise must be unpredictable); an int gives
        bit-reproducible fits; a Generator is used as is (and advanced); a
        legacy RandomState seeds a new Generator from its stream.

    Returns
    -------
    rng : numpy.random.Generator
    """
    if random_state is None:
        return np.random.default_rng()
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, numbers.Integral) and not isinstance(
        random_state, bool
    ):
        return np.random.default_rng(int(random_state))
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**32, size=4))
    raise TypeError(
        "random_state must be None, an int, a numpy.random.Generator or a "
        f"numpy.random.RandomState, got {type(random_state).__name__}."
    )
