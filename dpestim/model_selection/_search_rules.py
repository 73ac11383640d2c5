"""Rules of PrivateSearchCV's runs: one mechanism, independent streams.

Also the probes that read a candidate's mechanism without running it
(:class:`_Interceptor`) and the draw of the number of runs ``K``.

The analysis of Papernot & Steinke (2022) holds for independent runs of one
randomized algorithm whose RDP curve is the accounted one. These helpers
refuse searched parameters that set the mechanism (before any draw or read
of the data) and give every run its own random stream.
"""

import math
import numbers
import warnings

import numpy as np
from dp_accounting.rdp.rdp_privacy_accountant import (
    _gamma_truncated_negative_binomial,
)

from ..privacy.charging import pop_target, push_target
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


def _check_searched_keys(space, allowed=None):
    """Refuse a searched parameter that changes the mechanism (no data read).

    ``allowed``: the final step's ``solver`` key of a search over solvers
    (checked on its own, see ``_solver_search``).
    """
    for name in sorted(space):
        if name != allowed and name.rsplit("__", 1)[-1] in MECHANISM_PARAMS:
            raise ValueError(
                f"PrivateSearchCV cannot search {name!r}: it changes the private "
                "mechanism (its DpEvent, relation or calibration) or its "
                "randomness, and every candidate of the search must run the one "
                "accounted mechanism. Fix it on the estimator and search the "
                "other hyperparameters (the final step's 'solver' may be a list "
                "of solver names: a search over solvers); to compare such "
                "settings, run one PrivateSearchCV per setting under a "
                "PrivacyBudget."
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


#: distribution name -> shape parameter of ``RepeatAndSelectDpEvent``
_SHAPES = {"poisson": math.inf, "geometric": 1.0, "logarithmic": 0.0}


class _Probe(Exception):
    """Stops a probing fit at the model's charge (nothing has run)."""


class _Interceptor:
    """Charge target of one candidate fit: records, checks, stops propagation.

    In probe mode it records the charges and stops the fit at the one that
    carries ``make_event`` (the model whose noise the search calibrates). In
    run mode it checks that every charge is the event the search accounted
    for, and refuses anything else before it runs.
    """

    def __init__(self, expected=None):
        self.charges = []
        self.expected = expected

    def charge(self, charge):
        if self.expected is None:
            self.charges.append(charge)
            if charge.make_event is not None:
                raise _Probe
            return False
        i = len(self.charges)
        if i >= len(self.expected) or charge.dp_event != self.expected[i]:
            raise ValueError(
                f"PrivateSearchCV: {charge.label} runs a mechanism that differs "
                "from the one accounted for (a searched parameter changes the "
                "DpEvent); fix such parameters on the estimator."
            )
        self.charges.append(charge)
        return False


def _probe_charges(estimator, X, y):
    """The charges of ``estimator.fit(X, y)`` up to its model's (nothing runs)."""
    probe = _Interceptor()
    push_target(probe, thread_local=True)
    try:
        # the probes' warnings are about a plan that never runs (a fixed
        # noise_multiplier's "no budget to share", once per probe: a user
        # trial saw 81-90 per search); the released candidate's are given
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            estimator.fit(X, y)
    except _Probe:
        pass
    finally:
        pop_target(probe)
    return probe.charges


def _final_private_step(estimator):
    step = estimator[-1] if hasattr(estimator, "steps") else estimator
    if "noise_multiplier" not in step.get_params(deep=False):
        raise TypeError(
            "PrivateSearchCV needs a dpestim estimator with a noise_multiplier "
            f"parameter (or a Pipeline ending in one), got {type(step).__name__}."
        )
    return step


def _sample_repetitions(rng, mean, shape):
    """Draw ``K`` from the distribution of ``RepeatAndSelectDpEvent(mean, shape)``."""
    if math.isinf(shape):
        return int(rng.poisson(mean))
    if mean <= 1.0:
        return 1  # the truncated distributions of mean 1 are a point mass
    gamma = _gamma_truncated_negative_binomial(shape, mean)
    if shape == 0:
        return int(rng.logseries(1.0 - gamma))
    while True:  # negative binomial conditioned on K >= 1
        k = int(rng.negative_binomial(shape, gamma))
        if k >= 1:
            return k
