"""Private hyperparameter tuning on a random subset, final fit on the rest.

Koskela & Kulkarni (NeurIPS 2023) tune on a random subsample and
extrapolate the hyperparameters to the full data. Here the rows are split by
independent public coins: each row joins the tuning subset ``S`` with
probability ``q`` and the rest ``R`` otherwise. A
:class:`~dpestim.model_selection.PrivateSearchCV` runs on ``S`` at the full
``(epsilon, delta)``; its winner, drawn as factors of the ``"auto"`` plan
(:class:`~dpestim.model_selection.Relative`), is extrapolated by the public
rule "the same factor of the plan that the estimator resolves on ``R``" and
fitted once on ``R`` at the full ``(epsilon, delta)``.

**The neighbouring relation and the guarantee (parallel composition).** The
coins are drawn before the data is read and are independent of it; couple
neighbouring datasets so that the rows they share get the same coins. Under
add/remove-one the extra record has its own coin: with probability ``q`` it
is in ``S`` (then ``R`` is the same on both sides and only the search reads
a different dataset, neighbouring under the same relation), otherwise it is
in ``R`` (the search sees the same rows; the final fit, whose hyperparameters
are a function of the search's output, reads neighbouring datasets). Under
replace-one the replaced record keeps its coin: the same two cases. The
output distribution on each side is the mixture over that coin, and the
hockey-stick divergence is jointly convex, so for every ``epsilon``::

    delta_total(epsilon) <= q * delta_search(epsilon) + (1 - q) * delta_final(epsilon)
                          <= max(delta_search(epsilon), delta_final(epsilon)).

Both parts are calibrated to ``(epsilon, delta)``, so the whole is
``(epsilon, delta)``-DP (``epsilon_`` is the larger of the two parts'
epsilons). As everywhere in dpestim the numbers of rows (here of ``S`` and
of ``R``, which set each part's plan) are treated as public (see the privacy
model). ``dp-accounting`` has no event for parallel composition:
``dp_event_`` is the *sequential* composition of the two parts' events (a
valid but looser description, what a :class:`PrivacyBudget` charges: each
part charges its own event).

**The private scales, measured on ``R``.** An estimator whose policy
step estimates private scales (column means and scales, row scale, target
range, class counts; see :mod:`dpestim.model_selection._search_scale`)
has them measured once, on ``R``, at the estimator's own plan and share of
``epsilon``, before the search runs; the search on ``S`` and the final fit
are given the releases as public parameters, and the final fit runs at
``epsilon - e0``. Both parts then fit in the same units (a search on an
``S`` too small for the centring chose factors for rows the centred final
fit never saw). The final part is the estimates composed with the final
fit, ``(epsilon, delta)`` by basic composition (its ``epsilon_`` and
``dp_event_`` say so); the search reads them as public values: when the
differing record is in ``R`` the search's rows are the same and its output
a post-processing of the estimates, when it is in ``S`` the estimates are
the same on both sides. The argument above holds as before (checked by
brute force with randomized responses).

**The plan (public rule).** ``subset="auto"`` picks ``q`` from public
quantities only (``n``, ``epsilon``, ``delta``, ``validation_fraction``,
``score_noise``, whether the estimator is a regressor): the smallest ``q``
in ``[0.1, 0.25]`` at which the noisy validation score of the search has a
standard deviation of at most 2 accuracy points on the expected validation
rows (at most a quarter of the
rows: the final fit keeps three quarters or more; at ``q = 0.45`` on COMPAS
the rows lost cost the final fit more than the selection gained); for a
regressor, whose score is in units of its ``error_bound``, a standard
deviation 4 times smaller (see :func:`subset_plan`). When even
``q = 0.25`` cannot reach that (small data or small epsilon: the selection
would be close to random while costing rows), the plan is ``"defaults"``:
no search, one fit of the estimator at its own hyperparameters on all the
rows at ``(epsilon, delta)``. The plan never depends on the data.

**The "defaults" plan is the estimator itself.** It fits
``clone(estimator)`` with only ``epsilon`` and ``delta`` set to the
search's (and ``noise_multiplier=None``), with the estimator's *own*
``random_state``: the released model, ``dp_event_`` and ``epsilon_`` are
bit-for-bit those of ``clone(estimator).set_params(epsilon=epsilon,
delta=delta).fit(X, y)``, and ``SubsetSearchCV``'s ``random_state`` (which
seeds the coins, the search and the final fit of the ``"subset"`` plan) is
not used. That is the natural scikit-learn reading (with no search, the
meta-estimator is the estimator) and makes a comparison with one default
fit of the same seed paired. Privacy: the mechanism is exactly that of one
default fit at ``(epsilon, delta)`` with its own noise stream; the plan is
a public function of ``n``, so choosing it reads no data.
"""

import dataclasses
import math
from numbers import Real

import dp_accounting
import numpy as np
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone, is_regressor
from sklearn.utils import _safe_indexing
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ..privacy import calibrate_noise
from ..privacy.charging import _targets
from ._search import PrivateSearchCV
from ._search_candidates import _name_search_estimates
from ._search_rules import _final_private_step, _probe_charges, _streams
from ._search_scale import plan_search_scales
from ._solver_search import solver_key
from ._space import default_space, resolve_relative

__all__ = ["SubsetSearchCV", "subset_plan"]

#: Largest standard deviation (accuracy points / 100) of the noisy
#: validation score at which a search is planned.
SCORE_STD_MAX = 0.02
#: For a regressor the score is ``1 - min(err**2, B) / B`` (``B`` the
#: ``error_bound``): its differences are differences of mean squared error
#: in units of ``B``, i.e. of R^2 times ``var(y) / B``. The rule asks the
#: score's standard deviation to be this many times smaller, so that it is
#: 2 points of R^2 when ``var(y) >= B / 4`` (California with ``B`` the
#: squared half-range of its public target range: ``var(y) / B = 0.21``).
REGRESSION_FACTOR = 4.0
#: Range of the tuning share ``q`` of the ``"auto"`` plan.
Q_MIN, Q_MAX = 0.1, 0.25


def _score_std_counts(epsilon, delta, score_noise, n_val):
    """Noise std of the summed validation score (as PrivateSearchCV sets it)."""
    if score_noise != "auto":
        return float(score_noise) * n_val
    from dp_accounting import dp_event

    return calibrate_noise(
        dp_event.GaussianDpEvent,
        float(epsilon) / 10,
        float(delta),
        cache_key=("GaussianDpEvent",),
    )


def subset_plan(
    n,
    epsilon,
    delta,
    validation_fraction=0.5,
    score_noise="auto",
    regressor=False,
    n_classes=None,
):
    """The ``"auto"`` plan of :class:`SubsetSearchCV` (public quantities only).

    Parameters
    ----------
    n : int
        Number of rows.
    epsilon, delta : float
        The budget of the tuning (and of the final fit).
    validation_fraction : float, default=0.5
        Share of the subset used to score the candidates.
    score_noise : "auto" or float, default="auto"
        As :class:`PrivateSearchCV`.
    regressor : bool, default=False
        The estimator is a regressor (its score is the clipped squared
        error over ``error_bound``): the standard deviation must be
        ``REGRESSION_FACTOR`` (4) times smaller, about 2 points of R^2 when
        the target's variance is at least a quarter of ``error_bound``. With
        a 2-point rule in score units the subset search lost 1.9 / 2.1
        points of R^2 to one default fit on California at epsilon 1 / 2
        (``benchmarks/utility/private_search.py``), where the best of 30
        configurations picked on the test set gains at most 0.5 point.
    n_classes : int or None, default=None
        Number of classes of a classifier (public: its outputs). More than
        two: no search. On MNIST (10,000 rows, 10 classes), the one
        multi-class set where the score rule allows a search (epsilon 2,
        ``q = 0.2``), the subset search lost 2.0 points to one default fit
        (5 seeds, ``benchmarks/utility/private_search.py``) once the default
        rescaled multinomial rows to their own target: its earlier gain
        (+0.9) was what that target now gives the default fit.

    Returns
    -------
    q : float
        Tuning share in ``[0.1, 0.25]``, or ``0.0`` for the ``"defaults"``
        plan (no search).
    """
    if n_classes is not None and n_classes > 2:
        return 0.0
    std_max = SCORE_STD_MAX / (REGRESSION_FACTOR if regressor else 1.0)
    for q in np.round(np.arange(Q_MIN, Q_MAX + 1e-9, 0.05), 2):
        n_val = max(1, int(round(validation_fraction * q * n)))
        std = _score_std_counts(epsilon, delta, score_noise, n_val) / n_val
        if std <= std_max:
            return float(q)
    return 0.0


def _plan_of(est, X, y):
    """The solver plan ``est`` resolves on ``(X, y)`` (probed: nothing runs)."""
    charges = _probe_charges(est, X, y)
    if not charges or charges[-1].plan is None:
        raise TypeError("SubsetSearchCV: the estimator announced no solver plan.")
    return charges[-1].plan


class SubsetSearchCV(MetaEstimatorMixin, BaseEstimator):
    """Private tuning on a random subset, the winner refitted on the rest.

    Each row joins the tuning subset with probability ``q`` (public coins);
    :class:`PrivateSearchCV` selects hyperparameters there at ``(epsilon,
    delta)``; the winner's :class:`Relative` factors are applied to the plan
    the estimator resolves on the other rows (public extrapolation rule) and
    the estimator is fitted once on those rows at ``(epsilon, delta)`` (a
    factor of an ``"auto"`` clip norm is in the ``"auto"`` fit's units,
    :class:`~dpestim.model_selection.AutoUnits`: that fit keeps its private
    row scale, so a winner of factor 1 is the ``"auto"`` fit). The
    estimator's private scales are measured once on the other rows and
    given to both parts (see the module: the units of the two parts). The
    two parts read disjoint rows: the whole is ``(epsilon, delta)``-DP by
    parallel composition (the relation and its proof are in
    :mod:`dpestim.model_selection._subset`). With ``subset="auto"`` a
    public rule of ``n`` and ``epsilon`` picks ``q``, or no search at all
    where the selection could not pay for itself (see :func:`subset_plan`).

    Parameters
    ----------
    estimator : estimator
        A dpestim estimator with a ``noise_multiplier`` parameter (not a
        Pipeline). Its ``epsilon`` and ``delta`` are replaced by the
        search's.
    param_distributions : dict or None, default=None
        As :class:`PrivateSearchCV` (``None``: its default space). Factors
        (:class:`Relative`) are extrapolated; absolute values are kept.
    epsilon : float, default=1.0
        Epsilon of the whole (each part is calibrated to it).
    delta : float, default=1e-5
    subset : "auto" or float in (0, 1), default="auto"
        Probability ``q`` that a row is in the tuning subset.
    n_candidates, distribution, shape, score_noise, error_bound, accountant
        Passed to :class:`PrivateSearchCV`.
    validation_fraction : float, default=0.5
        Share of the subset that scores the candidates (the candidates'
        models are discarded, so the ranking gets half the subset).
    random_state : None, int or numpy.random.Generator, default=None
        Seeds a ``numpy.random.SeedSequence`` from which the coins, the
        search and the final fit get independent streams (the ``"subset"``
        plan; the estimator's own ``random_state`` is overridden there). The
        ``"defaults"`` plan fits the estimator with its own ``random_state``:
        it releases exactly what ``clone(estimator).set_params(epsilon=...,
        delta=...).fit(X, y)`` would (the same model, ``dp_event_`` and
        ``epsilon_``; the mechanism of one default fit).
    budget : PrivacyBudget or None, default=None
        Charged with each part's event (their sum: a budget has no
        parallel composition).

    Attributes
    ----------
    plan_ : {"subset", "defaults"}
    subset_ : float
        The tuning share ``q`` (``0.0`` for the ``"defaults"`` plan).
    search_ : PrivateSearchCV or None
        The search on the subset.
    best_estimator_ : estimator
        The final model, fitted on the rows outside the subset (all the rows
        for the ``"defaults"`` plan). With scales measured on those rows its
        ``epsilon_`` and ``dp_event_`` are the final part's (the estimates
        and its own fit), its ``feature_centre_``, ``feature_scale_`` etc.
        the estimates, and its parameters the estimator's own.
    best_params_ : dict
        Its searched hyperparameters, resolved on its rows.
    best_score_ : float or None
        The search's noisy validation score of the winner.
    dp_event_ : dp_accounting.DpEvent
        The two parts' events composed (sequential composition: looser than
        the parallel bound of ``epsilon_``).
    epsilon_, delta_ : float
        The guarantee: the larger of the two parts'.

    References
    ----------
    A. Koskela and T. Kulkarni, "Practical differentially private
    hyperparameter tuning with subsampling", NeurIPS 2023.
    F. McSherry, "Privacy integrated queries", SIGMOD 2009 (parallel
    composition).
    """

    # the search's own, with a fixed epsilon, a subset share and no refit
    # (the final fit on the other rows is the refit)
    _parameter_constraints = {
        **{
            k: v
            for k, v in PrivateSearchCV._parameter_constraints.items()
            if k != "refit"
        },
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "subset": [Interval(Real, 0, 1, closed="neither"), StrOptions({"auto"})],
    }

    def __init__(
        self,
        estimator,
        param_distributions=None,
        *,
        epsilon=1.0,
        delta=1e-5,
        subset="auto",
        n_candidates=10,
        distribution="geometric",
        shape=0.5,
        validation_fraction=0.5,
        score_noise="auto",
        error_bound=None,
        accountant="auto",
        random_state=None,
        budget=None,
    ):
        self.estimator = estimator
        self.param_distributions = param_distributions
        self.epsilon = epsilon
        self.delta = delta
        self.subset = subset
        self.n_candidates = n_candidates
        self.distribution = distribution
        self.shape = shape
        self.validation_fraction = validation_fraction
        self.score_noise = score_noise
        self.error_bound = error_bound
        self.accountant = accountant
        self.random_state = random_state
        self.budget = budget

    def _final(self, params, seed):
        """The final fit; ``seed=None`` keeps the estimator's own random_state.

        With scales measured on its rows (:meth:`_estimate_scales`) it is
        given them and runs at ``epsilon`` less their epsilon.
        """
        est = clone(self.estimator).set_params(**self._given, **params)
        epsilon = self.epsilon
        if self._estimates is not None:
            epsilon = self.epsilon - self._estimates.epsilon
        est.set_params(epsilon=epsilon, delta=self.delta, noise_multiplier=None)
        if seed is not None:
            est.set_params(random_state=np.random.Generator(np.random.PCG64(seed)))
        return est

    def _n_classes(self, y):
        """Number of classes of a classifier (``None`` for a regressor).

        Its public label set (``classes``) when given, else the labels' set
        (the outputs, which scikit-learn reads from ``y``).
        """
        if is_regressor(self.estimator):
            return None
        classes = self.estimator.get_params().get("classes")
        return len(classes) if classes is not None else len(np.unique(y))

    def fit(self, X, y):
        """Tune on the subset, fit the winner on the rest.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self : object
        """
        self._validate_params()
        if hasattr(self.estimator, "steps"):
            raise TypeError(
                "SubsetSearchCV takes a dpestim estimator, not a Pipeline "
                "(use PrivateSearchCV for pipelines)."
            )
        _final_private_step(self.estimator)  # TypeError without noise_multiplier
        y = np.asarray(y)
        n = len(y)
        q = (
            subset_plan(
                n,
                self.epsilon,
                self.delta,
                self.validation_fraction,
                self.score_noise,
                regressor=is_regressor(self.estimator),
                n_classes=self._n_classes(y),
            )
            if self.subset == "auto"
            else float(self.subset)
        )
        # Independent streams: the coins, the search, the final fit, the
        # scale estimates (spawn(4)'s first three children are spawn(3)'s)
        streams = _streams(self.random_state).spawn(4)
        coin_seed, search_seed, final_seed, scale_seed = streams
        in_s = np.random.Generator(np.random.PCG64(coin_seed)).random(n) < q
        s_idx, r_idx = np.flatnonzero(in_s), np.flatnonzero(~in_s)
        self.search_ = None
        params, self.best_score_ = {}, None
        X_r, y_r = _safe_indexing(X, r_idx), y[r_idx]
        self._given, self._estimates = {}, None
        if q > 0:
            if len(s_idx) < 2 or len(r_idx) < 1:
                raise ValueError(
                    f"SubsetSearchCV: {n} rows are too few to split with subset={q:g}."
                )
            # the estimator's private scales, measured on R (part of the
            # final part's budget) and given to both parts as public values
            self._estimate_scales(X_r, y_r, scale_seed)
            search = PrivateSearchCV(
                clone(self.estimator).set_params(**self._given),
                self.param_distributions,
                epsilon=self.epsilon,
                delta=self.delta,
                n_candidates=self.n_candidates,
                distribution=self.distribution,
                shape=self.shape,
                validation_fraction=self.validation_fraction,
                score_noise=self.score_noise,
                error_bound=self.error_bound,
                accountant=self.accountant,
                random_state=np.random.Generator(np.random.PCG64(search_seed)),
                budget=self.budget,
            ).fit(_safe_indexing(X, s_idx), y[s_idx])
            self.search_, self.best_score_ = search, search.best_score_
            params = search.best_draw_
        if params:  # the public extrapolation: factors of the plan on R
            # The probe stops at the model's charge. A private scale estimate
            # it may compute first draws from the same stream as the final
            # fit, so it is the final fit's own (released, accounted) value:
            # the plan read here is a post-processing of the final part.
            plan = _plan_of(self._final({}, final_seed), X_r, y_r)
            params = resolve_relative(params, plan, self.estimator)
        # "defaults" plan: the estimator as given, its own random_state (so
        # the release is that of one plain fit); "subset": the final stream
        final = self._final(params, final_seed if q > 0 else None)
        if self.budget is not None and not any(t is self.budget for t in _targets()):
            with self.budget:  # charged like the search (budget=)
                final.fit(X_r, y_r)
        else:
            final.fit(X_r, y_r)
        # the released model must not carry the stream of its noise, nor the
        # estimates as its parameters (its fitted attributes hold them)
        own = self.estimator.get_params(deep=False)
        final.set_params(
            random_state=own["random_state"], **{k: own[k] for k in self._given}
        )
        if self._estimates is not None:  # the final part: estimates, then fit
            _name_search_estimates(final, self._given, "SubsetSearchCV")
            self._state_final_part(final)
            final.set_params(epsilon=self.epsilon)  # the part's (epsilon_ says)
        self._finish(final, params, q)
        return self

    def _state_final_part(self, final):
        """The final model states its part's guarantee: the scale estimates
        on its rows composed with its own fit (basic composition), in
        ``epsilon_``, ``dp_event_`` and its privacy report."""
        estimates = self._estimates
        e0 = estimates.epsilon
        own = float(final.epsilon_)
        final.dp_event_ = dp_accounting.ComposedDpEvent(
            [dp_accounting.ComposedDpEvent(estimates.events()), final.dp_event_]
        )
        final.epsilon_ = own + e0
        report = getattr(final, "_report", None)
        if report is not None and hasattr(report, "estimates"):
            final._report = dataclasses.replace(
                report,
                epsilon=final.epsilon_,
                dp_event=final.dp_event_,
                estimates=(
                    f"measured once by SubsetSearchCV on these rows, before its "
                    f"search ({len(estimates.events())} pure-DP draws of total "
                    f"epsilon {e0:.4g}), given to this fit and to the search as "
                    f"public values; this fit alone is epsilon {own:.6g}, the "
                    "two composed by basic composition"
                ),
            )

    def _estimate_scales(self, X_r, y_r, seed):
        """Measure the estimator's private scales on the final rows ``R``.

        :func:`~dpestim.model_selection._search_scale.plan_search_scales`
        at ``epsilon`` on ``R`` (the estimator's own plan and share, as one
        default fit on ``R``); the releases are given to the search on ``S``
        and to the final fit as public parameters, and the final fit runs at
        ``epsilon - e0``. Both parts then work in the same units (a search
        on ``S`` too small for the centring chose factors for rows the final
        fit, which centres, never saw: raw Adult at epsilon 0.5 lost 4
        points). Privacy: the final part is the estimates composed with the
        final fit, ``(epsilon, delta)`` by basic composition; the search
        reads them as public values, a post-processing when the differing
        record is in ``R`` (the search's rows are then the same), and fixed
        when it is in ``S``: the parallel composition of the module's proof
        holds as before.
        """
        space = self.param_distributions
        if space is None:
            space = default_space(self.estimator)
        if solver_key(self.estimator) in space:
            return  # a search over solvers: each its own units, not measured here
        scales = plan_search_scales(self, X_r, y_r, None, space)
        if scales is None:
            return
        self._given = scales.estimate(X_r, y_r, seed, self.budget)[None]
        self._estimates = scales

    def _finish(self, final, params, q):
        parts = [final] if self.search_ is None else [self.search_, final]
        self.plan_ = "defaults" if q == 0 else "subset"
        self.subset_ = q
        self.best_estimator_ = final
        self.best_params_ = params
        self.dp_event_ = (
            final.dp_event_
            if len(parts) == 1
            else dp_accounting.ComposedDpEvent([p.dp_event_ for p in parts])
        )
        self.epsilon_ = max(float(p.epsilon_) for p in parts)
        self.delta_ = max(float(getattr(p, "delta_", self.delta)) for p in parts)
        if not self.epsilon_ <= self.epsilon * (1 + 1e-9) or math.isnan(self.epsilon_):
            raise RuntimeError("SubsetSearchCV: a part exceeds the requested epsilon.")
        self.n_features_in_ = final.n_features_in_
        if hasattr(final, "classes_"):
            self.classes_ = final.classes_

    def predict(self, X):
        """Predict with the final model."""
        check_is_fitted(self)
        return self.best_estimator_.predict(X)

    def predict_proba(self, X):
        """Class probabilities of the final model."""
        check_is_fitted(self)
        return self.best_estimator_.predict_proba(X)

    def decision_function(self, X):
        """Decision function of the final model."""
        check_is_fitted(self)
        return self.best_estimator_.decision_function(X)

    def score(self, X, y):
        """Score of the final model (non-private if X is private)."""
        check_is_fitted(self)
        return self.best_estimator_.score(X, y)

    def privacy_report(self):
        """A readable statement of the guarantee."""
        check_is_fitted(self)
        if self.search_ is None:
            how = (
                "plan 'defaults' (public rule of n and epsilon): no search, one "
                "fit of the estimator's own hyperparameters on all the rows"
            )
        else:
            how = (
                f"PrivateSearchCV on a random subset (each row with probability "
                f"{self.subset_:g}, public coins), its winner refitted on the "
                "other rows; parallel composition (disjoint rows): the larger of "
                f"the parts' epsilons ({self.search_.epsilon_:.4g} search, "
                f"{self.best_estimator_.epsilon_:.4g} final fit"
                + (
                    f", the estimator's private scales measured on the final "
                    f"fit's rows, epsilon {self._estimates.epsilon:.4g}, "
                    "included and given to both parts"
                    if self._estimates is not None
                    else ""
                )
                + ")"
            )
        return (
            f"SubsetSearchCV: {how}.\nGuarantee: epsilon={self.epsilon_:.4g}, "
            f"delta={self.delta_:g}."
        )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        sub = self.estimator.__sklearn_tags__()
        tags.estimator_type = sub.estimator_type
        tags.input_tags.sparse = sub.input_tags.sparse
        return tags
