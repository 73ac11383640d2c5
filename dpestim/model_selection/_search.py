"""Private hyperparameter search with a random number of candidates.

Papernot & Steinke (2022), "Hyperparameter tuning with Renyi differential
privacy" (ICLR): run a private mechanism ``K`` times, with ``K`` drawn from a
public distribution and kept secret, and release only the best run. The RDP
of the whole search is a function of the RDP of one run and of the
distribution of ``K``; dp-accounting computes it for
``RepeatAndSelectDpEvent(event, mean, shape)`` with its RDP accountant.
"""

import copy
import math
import warnings
from numbers import Real

import numpy as np
from dp_accounting import dp_event
from sklearn.base import BaseEstimator, MetaEstimatorMixin
from sklearn.utils import _safe_indexing
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ..exceptions import FitDivergedError, UtilityWarning
from ..privacy import calibrate_noise, check_guarantee
from ..privacy.charging import FitCharge, charge_fit, pop_target, push_target
from ..privacy.ledger import accountable_event, composed_epsilon
from ..utils.fit_warnings import warn_outside
from ._search_candidates import (
    CandidateMixin,
    quiet,
    require_error_bound,
    state_search_guarantee,
)
from ._search_rules import (
    _check_searched_keys,
    _final_private_step,
    _Interceptor,
    _sample_repetitions,
    _streams,
)
from ._search_scale import plan_search_scales
from ._select_accounting import budget_spent, calibrate_search, search_epsilon
from ._solver_search import (
    SearchEvents,
    calibrate_mixture,
    search_report,
    searched_solvers,
    solver_key,
)
from ._space import default_space, resolve_relative, sample_candidate
from ._workflow import check_private_steps

__all__ = ["PrivateSearchCV"]

#: Score noise (std, in score units) above which the selection is near random.
_SCORE_STD_WARN = 0.02


def _estimates_and_selection(event, basic, delta, relation):
    """The search's epsilon with its scale estimates: ``basic`` (their pure
    epsilon plus the selection's) or, where smaller, dp-accounting's RDP
    bound of the whole event, as a budget composes it (with ``epsilon=None``
    the basic sum exceeded the budget the search spent exactly: 1.078 of a
    fresh budget of 1, a user trial)."""
    try:
        accounted = composed_epsilon([event], delta, "rdp", relation)
    except (ValueError, TypeError, NotImplementedError):
        accounted = math.inf
    return float(min(basic, accounted))


def _joint_calibration(scale, make_event, search, relation):
    """Noise of every candidate such that the scale estimates composed with
    the selection meet ``(epsilon, delta)`` by dp-accounting's RDP
    accountant (the exponential-mechanism draws as their zCDP events,
    :func:`~dpestim.privacy.ledger.accountable_event`); ``inf`` where no
    noise meets it."""
    estimates = accountable_event(dp_event.ComposedDpEvent(scale.events()))
    try:
        return calibrate_noise(
            lambda s: dp_event.ComposedDpEvent([estimates, make_event(s)]),
            float(search.epsilon),
            search._delta(),
            accountant="rdp",
            neighbouring=relation,
        )
    except ValueError:
        # the estimates' zCDP translation alone can exceed a small budget
        # (breast cancer at epsilon 0.5: the raised row-scale draw): the
        # basic split stands
        return math.inf


class PrivateSearchCV(CandidateMixin, MetaEstimatorMixin, BaseEstimator):
    """Differentially private random search (Papernot & Steinke 2022).

    Draws a secret random number ``K`` of candidates from a public
    distribution of mean ``n_candidates``; each candidate draws its
    hyperparameters independently from ``param_distributions``, is fitted on
    a public random training split with noise ``noise_multiplier_`` and
    scored by a noisy count of correct predictions on the validation split.
    Only the best candidate is released: its fitted model, its hyperparameters
    and its noisy score. The whole search, selection included, is
    ``(epsilon, delta)``-DP: its event is
    ``RepeatAndSelectDpEvent(ComposedDpEvent([fit, score]), n_candidates,
    shape)``, accounted by dp-accounting's RDP accountant, and the noise of
    every candidate is calibrated once so that this event meets the budget.

    Parameters
    ----------
    estimator : estimator
        A dpestim estimator with a ``noise_multiplier`` parameter, or a
        :class:`~sklearn.pipeline.Pipeline` ending in one (its other private
        steps are charged inside every candidate with their own budget; a
        non-private step fitted on the data raises a
        :class:`~dpestim.PrivacyLeakWarning`). Its ``epsilon`` is ignored:
        the search sets the noise. With ``feature_scale="auto"`` and an
        ``"auto"`` (or :class:`AutoUnits`) ``clip_norm`` the search runs the
        estimator's private scale estimates (column means and scales, row
        scale, ``Ridge``'s target range) once for all candidates (see
        Notes).
    param_distributions : dict or None, default=None
        Parameter name -> list (uniform choice) or scipy distribution (with
        ``rvs``), or :class:`Relative` (factors of the value the estimator
        resolves). Parameters that set the mechanism (``solver``,
        ``epsilon``, ``delta``, ``noise_multiplier``, ``accountant``,
        ``max_iter``, ``batch_size``, ``random_state``, of any step) are
        refused with a ``ValueError`` before anything is drawn or read,
        except the final private step's ``solver`` given as a list of
        registered solver names: a search over solvers (see Notes); any
        other parameter whose value moves the ``DpEvent`` with the chosen
        solver (the learning rate of ``adp-sgd``, ``alpha`` under some
        ``"auto"`` schedules) is refused too, whatever the draw: it is probed
        (nothing runs) at every listed value or at the 0.001, 0.5 and 0.999
        quantiles of its distribution (see the privacy model). ``None`` uses
        :func:`default_space`: learning rate and clip norm by multiplicative
        factors around the estimator's values (its ``"auto"`` learning rate
        included), and ``alpha``.
    epsilon : float or None, default=1.0
        Total epsilon of the search, selection included. ``None`` spends
        exactly what remains of ``budget`` (at the budget's delta): the noise
        is calibrated so that the composition of the budget's past fits and
        of the search meets the budget.
    delta : float, default=1e-5
        Delta of the search (ignored with ``epsilon=None``: the budget's).
    n_candidates : float, default=10
        Mean number of candidates (``>= 1``).
    distribution : {"geometric", "logarithmic", "poisson", "negative-binomial"}, \
default="geometric"
        Distribution of the number of candidates. ``"negative-binomial"`` is
        the truncated negative binomial with shape ``shape``.
    shape : float, default=0.5
        Shape of the truncated negative binomial (ignored otherwise).
    validation_fraction : float, default=0.2
        Probability that a row scores the candidates (public independent
        coins); the candidates are fitted on the other rows.
    score_noise : "auto" or float, default="auto"
        Noise of each candidate's validation score. A float is the standard
        deviation in score units (accuracy): the noisy count has noise
        ``score_noise * n_validation``. ``"auto"`` gives the count the noise
        of a Gaussian mechanism that alone meets ``(epsilon / 10, delta)``
        (``epsilon`` less the scale estimates' share when the search runs
        them)
        (about 48 counts at epsilon 1, delta 1e-5: 0.007 of accuracy on
        6,500 validation rows); the fits get the rest of the budget.
    error_bound : float or None, default=None
        Regressors only: per-example score ``1 - min((y - y_hat)**2, B) / B``
        with ``B = error_bound`` (public), so that the summed score has
        sensitivity 1.
    accountant : {"auto", "rdp", "profile", "pld"}, default="auto"
        How the selection is accounted. ``"rdp"``: dp-accounting's RDP
        accountant on ``RepeatAndSelectDpEvent`` (Papernot & Steinke).
        ``"profile"`` (alias ``"pld"``): the privacy-profile bound of
        :mod:`dpestim.privacy.repeat_select` (Koskela, Redberg & Wang 2024),
        built on dp-accounting's PLD of one candidate; 7-39% less epsilon
        (median 14%) than RDP at the same noise on the grid of
        ``tests/privacy/test_repeat_select.py``, 12-15% less noise at equal
        epsilon on the benchmark datasets. ``"auto"`` calibrates with both and keeps
        the smaller noise (both bounds hold, so the reported ``epsilon_`` is
        the smaller of the two); it is ``"rdp"`` when the search is charged
        to a budget (``budget=`` or an active ``with budget:`` block), whose
        RDP accountant would otherwise charge more than the requested
        epsilon. ``"profile"`` needs ``epsilon`` (not ``None``).
    refit : bool, default=False
        Fit the selected hyperparameters again on all the rows (training and
        validation) and release that model instead of the candidate fitted on
        the training split. The refit is one more private fit with the
        candidates' noise multiplier; it is part of the search's event and
        of the requested epsilon (the candidates get more noise).
    random_state : None, int or numpy.random.Generator, default=None
        Seeds a ``numpy.random.SeedSequence`` from which the search spawns
        one stream for ``K``, the candidates, the split and the score noise,
        and one independent stream per candidate run. Every dpestim step of
        every candidate gets its own stream: the estimator's own
        ``random_state`` is overridden, because the analysis of the search
        needs independent runs (two candidates with the same seed would
        share their noise). An int gives a bit-reproducible search.
    budget : PrivacyBudget or None, default=None
        A budget charged with the event of the whole search (once, before any
        candidate runs). Active ``with budget:`` blocks are charged as well.

    Attributes
    ----------
    best_estimator_ : estimator
        The selected candidate, fitted on the training split (on all the
        rows with ``refit=True``).
    best_params_ : dict
        Its hyperparameters.
    best_draw_ : dict
        The same, as drawn: :class:`Relative` factors unresolved (what
        :class:`SubsetSearchCV` extrapolates to other rows).
    best_score_ : float
        Its noisy validation score (part of the released output).
    cv_results_ : dict
        Only what the guarantee covers: one row, the selected candidate.
        Neither ``K`` nor the other candidates' scores or parameters are
        released (revealing ``K`` would void the analysis).
    noise_multiplier_ : float
        Noise multiplier of every candidate's fit (of the selected solver's
        candidates in a search over solvers).
    noise_multipliers_ : dict
        Search over solvers only: solver name -> its candidates' noise
        multiplier.
    dp_event_ : dp_accounting.DpEvent
        ``RepeatAndSelectDpEvent`` of the search (composed with the refit's
        events with ``refit=True``, and preceded by the scale estimates'
        pure-DP events when the search runs them:
        ``ComposedDpEvent([ComposedDpEvent(estimates), selection,
        refit...])``); in a search
        over solvers its inner event is a
        :class:`~dpestim.privacy.mixture.MaxRdpDpEvent` of the listed
        solvers' candidate events (and the refit a ``MaxRdpDpEvent`` of
        theirs).
    epsilon_, delta_ : float
        Its guarantee, by the accountant in ``accountant_`` (plus the scale
        estimates' pure epsilon, basic composition, when they run; then the
        smaller of that sum and dp-accounting's RDP bound of the whole
        event, as a budget composes it).
    accountant_ : {"rdp", "profile"}
        The accountant whose bound ``epsilon_`` is.

    Notes
    -----
    Cost: at equal total epsilon, a search of mean 10 candidates needs more
    noise per candidate than a single fit (about 1.3-2x on the estimators of
    dpestim at epsilon in [0.5, 2]; see the private-workflow guide). The
    distribution trades tail and cost: the logarithmic and negative binomial
    with small shape are cheapest in privacy but sometimes try very few
    candidates; the Poisson is the most concentrated and the most expensive;
    the geometric is in between. Timing reveals ``K``: do not publish how
    long the search took. Nor does an unreleased candidate speak: its
    warnings are held back and a fit that diverges (non-finite
    coefficients, :class:`~dpestim.exceptions.FitDivergedError`) is scored
    as the worst; the search raises that error only when the selected
    candidate diverged.

    *Units of the candidates.* An estimator with ``feature_scale="auto"``
    and ``clip_norm="auto"`` runs a policy step before its solver: private
    column means (``feature_centring``), private scales of the columns that
    dominate the rows (``feature_balance``), a private median row norm, and
    for ``Ridge`` with ``y_bound="auto"`` a private range of each target, so
    that its public rules see rows and targets of a known scale whatever
    the units and offsets of the data. Candidates at a fixed noise
    multiplier cannot estimate them (no budget to share). When the
    estimator's ``feature_scale`` is ``"auto"`` and its ``clip_norm`` is
    ``"auto"`` or :class:`AutoUnits` (and ``X`` is in memory, the
    estimator is not a pipeline and ``n`` makes the row scale reliable;
    with ``epsilon=None`` the estimates are planned on what the RDP budget
    has left and charged to it first), the search runs that policy step
    once, on all the rows it is
    given and before any candidate runs, with the estimator's own
    mechanisms, plans and share of the search's ``epsilon`` (pure-DP draws
    under the solver's relation), charges them to the active budgets before
    they read the data, and gives every candidate and the refit the
    releases as public parameters (``feature_centring`` and
    ``feature_balance`` arrays, ``feature_scale``, ``y_bound``):
    ``clip_norm`` and its :class:`Relative` factors are in the ``"auto"``
    fit's units, the factor 1 is the ``"auto"`` plan, and the search does
    not depend on the units or offsets of ``X`` or ``y``. The selection is
    calibrated for the rest of ``epsilon``, by basic composition, or, where
    that leaves the candidates less noise (one solver), together with the
    estimates by dp-accounting's RDP accountant (their draws as zCDP
    events); either way the whole is ``(epsilon, delta)``-DP under the
    solver's relation. In a search
    over solvers the one median gives each solver its own public target.
    The released model keeps the estimator's own parameters (``"auto"``);
    its ``feature_centre_``, ``feature_balance_``, ``feature_scale_`` and
    ``y_bound_`` are the search's releases, and its ``hyperparameters_``
    say so. Otherwise (an explicit ``clip_norm`` is in the units of ``X``;
    an explicit or ``None`` ``feature_scale``; any of these parameters
    searched) nothing is estimated and the candidates run in the units of
    ``X``, as the estimator itself would.

    *Search over solvers.* ``param_distributions={"solver": ["dp-sgd",
    "dp-scd"], ...}`` (``"<step>__solver"`` for a pipeline's final step):
    each candidate draws its solver uniformly from the list (public coins)
    and runs it with that solver's own noise multiplier. Every name must be
    a registered solver the estimator accepts for its loss (research solvers
    only when named), all under one neighbouring relation, else
    ``ValueError``. A candidate is then a mixture of mechanisms; the Renyi
    divergence is jointly quasi-convex (van Erven & Harremoes 2014, Theorem
    13), so at every order its RDP is at most the largest of the listed
    solvers' RDP, and Papernot & Steinke's theorem, which needs only the RDP
    curve of one run, applies to that pointwise maximum
    (:class:`~dpestim.privacy.mixture.MaxRdpDpEvent`, accounted by
    dp-accounting's RDP accountant extended with it). Each solver's noise is
    calibrated so that the search with that solver alone meets a common
    target ``t``; ``t <= epsilon`` is lowered until the mixture meets
    ``(epsilon, delta)``. RDP only: ``accountant="auto"`` means ``"rdp"``,
    ``"profile"`` / ``"pld"`` raise ``ValueError``, and so does a budget
    with ``accountant="pld"``. Other searched parameters are probed with
    every listed solver and must leave each one's ``DpEvent`` unchanged.
    The mixture costs each solver a little noise over an RDP-accounted
    search with that solver alone (0.3% at epsilon 1 with the default
    schedules of ``dp-sgd`` and ``dp-scd`` on German, breast cancer and
    Adult; 5% with ``max_iter=2`` in the tests), more over a default search
    of that solver, whose privacy-profile bound it gives up (about 17%).

    References
    ----------
    N. Papernot and T. Steinke, "Hyperparameter tuning with Renyi differential
    privacy", ICLR 2022, https://arxiv.org/abs/2110.03620.

    T. van Erven and P. Harremoes, "Renyi divergence and Kullback-Leibler
    divergence", IEEE Trans. Inf. Theory 60(7), 2014 (Theorem 13: joint
    quasi-convexity).

    Examples
    --------
    >>> import numpy as np
    >>> from dpestim import LogisticRegression
    >>> from dpestim.model_selection import PrivateSearchCV
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(20000, 4)) / 2
    >>> y = (X[:, 0] + X[:, 1] > 0).astype(int)
    >>> search = PrivateSearchCV(
    ...     LogisticRegression(classes=[0, 1]), epsilon=1.0, n_candidates=3,
    ...     random_state=0).fit(X, y)
    >>> search.epsilon_ <= 1.0
    True
    """

    _parameter_constraints = {
        "estimator": [object],
        "param_distributions": [dict, None],
        "epsilon": [Interval(Real, 0, None, closed="neither"), None],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "n_candidates": [Interval(Real, 1, None, closed="left")],
        "distribution": [
            StrOptions({"geometric", "logarithmic", "poisson", "negative-binomial"})
        ],
        "shape": [Interval(Real, 0, None, closed="neither")],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
        "score_noise": [
            Interval(Real, 0, None, closed="neither"),
            StrOptions({"auto"}),
        ],
        "error_bound": [Interval(Real, 0, None, closed="neither"), None],
        "random_state": ["random_state", np.random.Generator],
        "accountant": [StrOptions({"auto", "rdp", "profile", "pld"})],
        "refit": ["boolean"],
        "budget": [object, None],
    }

    def __init__(
        self,
        estimator,
        param_distributions=None,
        *,
        epsilon=1.0,
        delta=1e-5,
        n_candidates=10,
        distribution="geometric",
        shape=0.5,
        validation_fraction=0.2,
        score_noise="auto",
        error_bound=None,
        accountant="auto",
        refit=False,
        random_state=None,
        budget=None,
    ):
        self.estimator = estimator
        self.param_distributions = param_distributions
        self.epsilon = epsilon
        self.delta = delta
        self.n_candidates = n_candidates
        self.distribution = distribution
        self.shape = shape
        self.validation_fraction = validation_fraction
        self.score_noise = score_noise
        self.error_bound = error_bound
        self.accountant = accountant
        self.refit = refit
        self.random_state = random_state
        self.budget = budget

    # -- fit ---------------------------------------------------------------------

    def fit(self, X, y):
        """Run the private search and keep the best candidate.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self : object
        """
        self._validate_params()
        check_private_steps(self.estimator, where="PrivateSearchCV")
        require_error_bound(self.estimator, self.error_bound)
        space = self.param_distributions
        if space is None:
            space = default_space(self.estimator)
        # up front: no data read, no draw made
        solvers = searched_solvers(self, space)
        key = solver_key(self.estimator)
        _check_searched_keys(space, key if solvers else None)
        # One stream for the search (split, K, candidates, score noise) and
        # one independent stream per candidate run, all spawned from one
        # SeedSequence: runs are independent, an int seed reproducible.
        # (spawn(3)'s first two children are spawn(2)'s: the row scale's
        # stream leaves the others as they were)
        search_seed, runs_seed, scale_seed = _streams(self.random_state).spawn(3)
        rng = np.random.Generator(np.random.PCG64(search_seed))
        n = len(y)
        y = np.asarray(y)
        # Public randomness, drawn before the data is read: split, K, candidates.
        # Coins, not fixed sizes (under add/remove a fixed-size split can push
        # a row across: a replacement in the training rows).
        in_val = rng.random(n) < self.validation_fraction
        val, train = np.flatnonzero(in_val), np.flatnonzero(~in_val)
        if len(val) == 0 or len(train) == 0:
            raise ValueError(
                f"PrivateSearchCV: {n} rows are too few for validation_fraction="
                f"{self.validation_fraction:g} (an empty part)."
            )
        n_val = len(val)
        mean, shape = float(self.n_candidates), self._shape()
        k = _sample_repetitions(rng, mean, shape)
        candidates = [sample_candidate(space, rng) for _ in range(k)]
        if k == 0:  # Poisson only, probability exp(-n_candidates)
            raise RuntimeError(
                "PrivateSearchCV drew zero candidates (Poisson distribution): "
                "nothing was fitted or released; fit again."
            )
        # The private scales of the estimator's policy step (public plan),
        # charged and drawn once before any candidate runs; the candidates
        # and the refit read them as public parameters (see _search_scale).
        scale = plan_search_scales(self, X, y, solvers, space)
        # Until they are drawn, the probes below run on public stand-ins: a
        # space that moves the mechanism is refused before the estimates are
        # charged.
        self._scales = None if scale is None else scale.stand_ins()
        # the selection (candidates, scores, refit) gets the rest of epsilon
        sel = self
        if scale is not None and self.epsilon is not None:
            # (epsilon=None: the budget's rest, the estimates charged in it)
            sel = copy.copy(self)
            sel.epsilon = float(self.epsilon) - scale.epsilon
        X_tr, X_val = _safe_indexing(X, train), _safe_indexing(X, val)
        y_tr, y_val = y[train], y[val]

        # Each listed solver (or the estimator's own) is an arm: its mechanism
        # probed (nothing runs), relative values resolved against its plan.
        arms = solvers or (None,)
        base = {a: {key: a} if a else {} for a in arms}
        charges = {a: self._probe(base[a], X_tr, y_tr, 1.0) for a in arms}
        default = self.param_distributions is None
        rest = {k: v for k, v in space.items() if k != key}
        kept = set(rest)
        for a in arms if rest else ():
            kept &= set(
                self._check_mechanism_fixed(
                    rest, charges[a], X_tr, y_tr, default, base[a]
                )
            )
        space = {k: v for k, v in space.items() if k in kept or k == key}
        if scale is not None:
            # arm -> s (one private median, each arm's public target); the
            # arms probed again in its units (the backstop below re-checks
            # every candidate's mechanism in them)
            self._scales = scale.estimate(X, y, scale_seed, self.budget)
            charges = {a: self._probe(base[a], X_tr, y_tr, 1.0) for a in arms}
        # a dropped key is left at the estimator's value (drawn before: public)
        draws = [{k: v for k, v in c.items() if k in space} for c in candidates]
        arm_of = [d[key] if solvers else None for d in draws]
        candidates = [
            resolve_relative(d, charges[a][-1].plan, self.estimator)
            for d, a in zip(draws, arm_of)
        ]
        relations = {c.neighbouring for a in arms for c in charges[a]}
        if len(relations) != 1:
            raise ValueError("PrivateSearchCV: steps under different relations.")
        relation = relations.pop()
        if scale is not None and relation != scale.neighbouring:
            raise RuntimeError(  # both resolve the same public solver rule
                "PrivateSearchCV: the row scale and the candidates disagree on "
                "the neighbouring relation."
            )
        sigma = sel._score_sigma(n_val)
        if sigma / n_val > _SCORE_STD_WARN:  # public: n, epsilon, delta
            warn_outside(
                f"PrivateSearchCV: the noisy validation score has a standard "
                f"deviation of {100 * sigma / n_val:.1f} points on {n_val} "
                "validation rows, so the selection is close to random; one fit "
                "at the estimator's defaults is likely better (or give more "
                "rows, a larger validation_fraction or epsilon).",
                UtilityWarning,
            )
        score_event = dp_event.GaussianDpEvent(sigma)

        full = None
        if self.refit:  # the refit's mechanism on all the rows, probed per arm
            full = {a: self._probe(base[a], X, y, 1.0) for a in arms}
        make_event = SearchEvents(charges, score_event, mean, shape, full)
        refit_events = make_event.refit
        if solvers is None:
            nm, accountant = calibrate_search(
                sel, lambda s: make_event({None: s}), relation
            )
            noises = {None: nm}
        else:  # RDP only (the profile bound does not cover mixtures)
            spent = budget_spent(self, relation) if self.epsilon is None else ()
            noises = calibrate_mixture(
                sel, lambda a, s: make_event({a: s}), make_event, arms, relation,
                spent,
            )  # fmt: skip
            accountant = "rdp"
        if scale is not None and self.epsilon is not None and len(arms) == 1:
            # the estimates and the selection composed by RDP (the estimates'
            # draws as dp-accounting events) may leave the candidates less
            # noise than the basic split: the smaller noise, each certified
            # by its own bound (one arm: a mixture is calibrated as a whole)
            (arm,) = arms
            joint = _joint_calibration(
                scale, lambda s: make_event({arm: s}), self, relation
            )
            if joint < noises[arm]:
                noises, accountant = {arm: joint}, "rdp"
        event = make_event(noises)
        expected = {a: make_event.fit(a, noises[a]) for a in arms}
        for params, a in zip(candidates, arm_of):  # backstop (mechanism fixed)
            with warnings.catch_warnings():  # once per candidate: K stays secret
                warnings.simplefilter("ignore")
                other = self._probe(params, X_tr, y_tr, noises[a])
            if [c.dp_event for c in other] != expected[a]:
                raise ValueError(
                    "PrivateSearchCV: a candidate's mechanism differs from the "
                    f"estimator's (parameters {params}); parameters that change "
                    "the DpEvent must be fixed on the estimator."
                )
        # Charge the whole search once, before any candidate runs.
        delta = self._delta()
        accountant, epsilon = search_epsilon(event, delta, relation, accountant)
        selection = event  # charged now (the row scale already was)
        if scale is not None:  # basic composition with the pure-DP estimate
            parts = (
                selection.events
                if isinstance(selection, dp_event.ComposedDpEvent)
                else [selection]
            )  # [estimates, selection, refit...]
            estimates = dp_event.ComposedDpEvent(scale.events())
            event = dp_event.ComposedDpEvent([estimates, *parts])
            epsilon = _estimates_and_selection(event, epsilon + scale.epsilon, delta,
                                               relation)  # fmt: skip
            check_guarantee(epsilon, self.epsilon, what="PrivateSearchCV")
        charge_fit(
            FitCharge(
                selection, relation, f"PrivateSearchCV(mean {mean:g} candidates)"
            ),
            extra=self.budget,
            data=X,
            epsilon=epsilon,
            delta=delta,
        )

        best, best_score, best_params, best_arm = None, -math.inf, None, None
        *run_seeds, refit_seed = runs_seed.spawn(k + 1)
        # K must stay secret (revealing it voids the analysis): the candidates
        # print nothing (verbose off) and their warnings are held back; only
        # the released candidate's are given, once, after the loop.
        best_caught, best_diverged = [], None
        for params, draw, seed, a in zip(candidates, draws, run_seeds, arm_of):
            est = quiet(self._candidate(params, seed))
            _final_private_step(est).set_params(noise_multiplier=noises[a])
            guard = _Interceptor(expected[a])
            push_target(guard, thread_local=True)
            diverged = None
            try:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    est.fit(X_tr, y_tr)
            except FitDivergedError as exc:
                # non-finite coefficients (post-processing of the candidate's
                # output): the worst score, not an exception that would
                # reveal the draw of a candidate that is not released
                diverged = exc
            finally:
                pop_target(guard)
            self._restore_random_state(est)
            total = 0.0 if diverged else float(self._scores(est, X_val, y_val).sum())
            score = (total + rng.normal(0.0, sigma)) / n_val
            if score > best_score:
                best, best_score, best_params, best_arm = est, score, params, a
                self.best_draw_ = draw  # factors unresolved (extrapolation)
                best_caught, best_diverged = caught, diverged
        if best_diverged is not None:  # post-processing of the released output
            raise FitDivergedError(
                "PrivateSearchCV: the selected candidate's fit diverged "
                f"({best_diverged}); narrow param_distributions."
            )
        if not self.refit:  # the released candidate's own warnings
            for w in best_caught:
                warn_outside(w.message, w.category)

        if self.refit:  # the selected parameters on all the rows (accounted)
            best = self._candidate(best_params, refit_seed)
            nm = noises[best_arm]
            _final_private_step(best).set_params(noise_multiplier=nm)
            guard = _Interceptor(refit_events(best_arm, nm))
            push_target(guard, thread_local=True)
            try:
                best.fit(X, y)
            finally:
                pop_target(guard)
            self._restore_random_state(best)

        state_search_guarantee(best, event, epsilon, delta, accountant)
        self.best_estimator_ = best
        self.best_params_ = best_params
        self.best_score_ = best_score
        self.cv_results_ = {
            "params": [best_params],
            "mean_test_score": np.array([best_score]),
            "rank_test_score": np.array([1]),
        }
        self.noise_multiplier_ = float(noises[best_arm])
        self.__dict__.pop("noise_multipliers_", None)  # of an earlier fit
        if solvers is not None:
            self.noise_multipliers_ = {a: float(s) for a, s in noises.items()}
        self.dp_event_ = event
        self.delta_ = delta
        self.accountant_, self.epsilon_ = accountant, epsilon
        self.n_features_in_ = best.n_features_in_
        if hasattr(best, "classes_"):
            self.classes_ = best.classes_
        self._relation = relation
        return self

    # -- delegation ----------------------------------------------------------------

    def predict(self, X):
        """Predict with the selected candidate."""
        check_is_fitted(self)
        return self.best_estimator_.predict(X)

    def predict_proba(self, X):
        """Class probabilities of the selected candidate."""
        check_is_fitted(self)
        return self.best_estimator_.predict_proba(X)

    def decision_function(self, X):
        """Decision function of the selected candidate."""
        check_is_fitted(self)
        return self.best_estimator_.decision_function(X)

    def score(self, X, y):
        """Score of the selected candidate (non-private if X is private)."""
        check_is_fitted(self)
        return self.best_estimator_.score(X, y)

    def privacy_report(self):
        """A readable statement of the search's guarantee."""
        check_is_fitted(self)
        return search_report(self)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        sub = self.estimator.__sklearn_tags__()
        tags.estimator_type = sub.estimator_type
        tags.input_tags.sparse = sub.input_tags.sparse
        return tags
