"""Rules of PrivateSearchCV's runs: one mechanism, independent streams.

The analysis of Papernot & Steinke (2022) holds for independent runs of one
randomized algorithm whose RDP curve is the accounted one. These helpers
refuse searched parameters that set the mechanism (before any draw or read
of the data) and give every run its own random stream.
"""

import math
import numbers

import numpy as np

from ..utils import check_generator
from ._space import Factor, Relative

__all__ = ["MECHANISM_PARAMS"]

#: Parameters that set or change the mechanism of a fit (its ``DpEvent``,
#: relation or calibration) for every solver, or its randomness: never
#: searched (refused up front, whatever the draw).
MECHANISM_PARAMS = frozenset(
    {
        "solver",
        "epsilon",
        "delta",
        "noise_multiplier",
        "accountant",
        "max_iter",
        "batch_size",
        "random_state",
    }
)


def _check_searched_keys(space):
    """Refuse a searched parameter that changes the mechanism (no data read)."""
    for name in sorted(space):
        if name.rsplit("__", 1)[-1] in MECHANISM_PARAMS:
            raise ValueError(
                f"PrivateSearchCV cannot search {name!r}: it changes the private "
                "mechanism (its DpEvent, relation or calibration) or its "
                "randomness, and every candidate of the search must run the one "
                "accounted mechanism. Fix it on the estimator and search the "
                "other hyperparameters; to compare such settings, run one "
                "PrivateSearchCV per setting under a PrivacyBudget."
            )


def _probe_values(dist):
    """Draw-independent values of a searched parameter (for the up-front check)."""
    if isinstance(dist, Relative):
        dist = dist.dist
        wrap = Factor
    else:
        wrap = None
    if hasattr(dist, "rvs"):
        if not hasattr(dist, "ppf"):
            return []
        values = [float(dist.ppf(q)) for q in (1e-3, 0.5, 1 - 1e-3)]
        return [wrap(v) if wrap else v for v in values if math.isfinite(v)]
    return list(dist)


def _streams(random_state):
    """The search's ``SeedSequence``: an int gives bit-reproducible searches."""
    if isinstance(random_state, numbers.Integral) and not isinstance(
        random_state, bool
    ):
        return np.random.SeedSequence(int(random_state))
    # None: fresh entropy; a Generator or RandomState: entropy drawn from it
    entropy = check_generator(random_state).integers(2**63, size=4)
    return np.random.SeedSequence([int(e) for e in entropy])


def _private_steps(estimator):
    """The dpestim steps of an estimator or pipeline (whose noise is private)."""
    steps = (
        [s for _, s in estimator.steps] if hasattr(estimator, "steps") else [estimator]
    )
    return [
        s
        for s in steps
        if any(c.__module__.startswith("dpestim.") for c in type(s).__mro__)
        and "random_state" in s.get_params(deep=False)
    ]
