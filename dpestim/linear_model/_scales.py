"""The policy step of the linear estimators: private scales before the solver.

A mixin of :class:`~dpestim.linear_model._base.BaseDPLinearModel`. Which
estimates a fit runs is public (n, the number of targets, ``epsilon``,
``scale_share``, which scales are left to ``"auto"``); each estimate is a
mechanism of its own (:mod:`dpestim.preprocessing._fit_scales`), charged
before it reads the data, composed into ``dp_event_`` and counted inside the
requested epsilon.
"""

import math
import numbers
import warnings

import numpy as np
import scipy.sparse as sp

from ..preprocessing import _fit_scales as _scales
from ..preprocessing._balance import (
    exact_column_squares,
    laplace_column_squares,
    plan_balance,
)
from ..preprocessing._centring import TOO_FEW_ROWS, laplace_centre, plan_centring
from ..preprocessing._scale_plan import _pure_epsilon
from ..privacy import check_guarantee
from ..privacy.ledger import composed_epsilon
from ..solvers import _policy
from ._balance_step import (
    CENTRING_ESTIMATES_CAP,
    ColumnBalanceMixin,
    _divided,
    _raised,
)
from ._public_columns import centred, is_public_columns, public_columns

__all__ = ["AutoUnits", "PrivateScalesMixin"]


class AutoUnits(float):
    """A ``clip_norm`` in the units of the ``"auto"`` fit.

    ``clip_norm=AutoUnits(c)`` clips at ``c`` in the units that
    ``clip_norm="auto"`` uses: the fit keeps its private row scale
    (``feature_scale="auto"``, estimated and accounted exactly as for
    ``"auto"``) and clips the rescaled rows' gradients at ``c``, where a
    plain number is in the units of ``X`` and switches the row scale off.
    ``AutoUnits(1.0)`` is therefore ``"auto"`` for a private fit (the same
    mechanism and, with the same seed, the same model). This is what
    :class:`~dpestim.model_selection.Relative` factors of an ``"auto"`` clip
    norm resolve to (importable as ``dpestim.model_selection.AutoUnits``).
    Where no row scale is estimated (a fixed ``noise_multiplier``, an
    explicit ``feature_scale``, blocked ``X``) it is the number ``c``.

    Parameters
    ----------
    value : float
        Positive (``inf`` only for a non-private fit, as ``clip_norm``).

    Examples
    --------
    >>> import numpy as np
    >>> from dpestim import LogisticRegression
    >>> from dpestim.model_selection import AutoUnits
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(3000, 4)) * 100  # rows far from unit norm
    >>> y = (X[:, 0] > 0).astype(int)
    >>> auto = LogisticRegression(epsilon=1.0, random_state=0).fit(X, y)
    >>> same = LogisticRegression(
    ...     epsilon=1.0, random_state=0, clip_norm=AutoUnits(1.0)
    ... ).fit(X, y)
    >>> bool(np.array_equal(auto.coef_, same.coef_))
    True
    >>> AutoUnits(2.0)  # twice the "auto" clip, the row scale kept
    AutoUnits(2.0)
    """

    def __new__(cls, value):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"AutoUnits needs a real number, got {value!r}.")
        if not float(value) > 0:
            raise ValueError(f"AutoUnits needs a positive value, got {value!r}.")
        return super().__new__(cls, float(value))

    def __repr__(self):
        return f"AutoUnits({float(self)!r})"


def in_auto_units(clip_norm):
    """Whether ``clip_norm`` is in the ``"auto"`` fit's units (``"auto"`` too)."""
    return _policy.is_auto(clip_norm) or isinstance(clip_norm, AutoUnits)


class PrivateScalesMixin(ColumnBalanceMixin):
    """Private feature scale and target ranges of a fit (see the module)."""

    #: At ``epsilon = inf`` the row scale is read exactly (see
    #: ``feature_scale``), at this quantile of the row statistic: the median,
    #: so that the non-private fit is the limit of the private ones.
    _exact_row_quantile = 0.5

    def _estimated_targets(self, y):
        """How many targets' ranges the fit estimates privately (Ridge only)."""
        return 0

    def _estimated_classes(self, y, solver, blocked=False):
        """Keywords of the class histogram for :func:`plan_estimates` ({}: none).

        Classifiers only (see
        :class:`~dpestim.linear_model._class_balance.ClassBalanceMixin`).
        """
        return {}

    #: ``(per-row statistic, its name)`` whose private median sets the row
    #: scale: the L2 norm (the solvers clip per-example gradients in L2).
    _row_statistic = (_scales.row_norms, "row norm")

    def _row_norm_target(self, y, solver):
        """Median row norm the rows are rescaled to (public: solver, loss, K).

        The solver's ``row_norm_target`` when it declares one, else the
        project's :data:`~dpestim.preprocessing._fit_scales.ROW_NORM_TARGET`
        (classifiers with a multinomial loss override this).
        """
        return solver.row_norm_target

    def _rows_estimated(self, blocked):
        """Whether the row scale is estimated (public: the parameters).

        An explicit ``clip_norm`` is in the units of ``X``: nothing then
        (an :class:`AutoUnits` one is in the ``"auto"`` fit's units: the
        scale is estimated as for ``"auto"``).
        """
        return (
            _policy.is_auto(self.feature_scale)
            and in_auto_units(self.clip_norm)
            and not blocked
        )

    def _plan_scales(self, n, y, blocked, solver=None):
        """The :class:`~dpestim.preprocessing._fit_scales.ScalePlan` of this fit.

        Public: ``n``, the number of targets, ``epsilon``, ``scale_share``
        and whether the class counts are estimated (the classifiers'
        ``class_prior`` / ``class_weight`` and the solver's kind).
        Estimates run only for a private fit with ``epsilon`` given (a fixed
        ``noise_multiplier`` has no budget to share) and only for the scales
        left to ``"auto"``: the row scale with ``feature_scale="auto"`` and
        ``clip_norm="auto"`` (an explicit ``clip_norm`` is in the units of
        ``X``) on in-memory ``X``. A solver with a ``scale_share_cap`` (the
        one-shot solvers, whose bounds are the statistics' scale; the dp-sgd
        and accelerated families, for the row scale at small ``n``) gets the
        share raised, up to that cap, when ``scale_share`` is too small for
        the estimates to be reliable at this ``n`` and ``epsilon``.
        """
        eps = self.epsilon
        rows = self._rows_estimated(blocked)
        targets = self._estimated_targets(y)
        classes = self._estimated_classes(y, solver, blocked)
        if eps is None or getattr(self, "noise_multiplier", None) is not None:
            # refused later: run nothing
            return _scales.ScalePlan(None, None, 0, {})
        if not math.isfinite(eps) or not (rows or targets or classes):
            # epsilon = inf: no mechanism; the row scale is read exactly, so
            # the non-private fit is the limit of the private ones (the same
            # "auto" units and alpha at any feature scale)
            exact = rows and math.isinf(eps)
            return _scales.ScalePlan(None, None, 0, {}, exact_rows=exact)
        return _scales.plan_estimates(
            float(eps),
            n,
            share=float(self.scale_share),
            rows=rows,
            targets=targets,
            max_share=None if solver is None else solver.share_cap(self._loss_name),
            **classes,
        )

    #: What ``feature_centring="auto"`` means for this estimator (public): on
    #: for every linear estimator (measured, ``benchmarks/results/
    #: fit_centring.md``: ``Ridge`` since the fifteenth session, the
    #: classifiers since the sixteenth).
    _centring_default = True

    def _centring_requested(self):
        """Whether ``feature_centring`` asks for the in-fit centring."""
        centring = getattr(self, "feature_centring", None)
        if isinstance(centring, str):  # "auto"
            return self._centring_default
        return not is_public_columns(centring) and bool(centring)

    def _plan_public_columns(self, plan, n, d, sparse, blocked, solver):
        """Put the public ``feature_centring`` / ``feature_balance`` arrays in
        ``plan`` (validated; raised on before anything is charged); ``True``
        when a public centre is given (nothing of the private centring is
        planned then: the balance, unless public, runs on the centred rows
        as given).
        """
        centre = public_columns(self.feature_centring, "feature_centring", d)
        balance = public_columns(self.feature_balance, "feature_balance", d)
        if (centre is not None or balance is not None) and blocked:
            raise ValueError(
                "feature_centring / feature_balance given as arrays need X in "
                "memory (blocked X, Dask, memmap or zarr, is read as given)."
            )
        plan.public_centre, plan.public_balance = centre, balance
        if balance is not None:
            plan.notes["feature_balance"] = "public column scales (feature_balance)"
        if centre is None:
            return False
        if not self.fit_intercept:
            raise ValueError(
                "feature_centring given as an array needs fit_intercept=True "
                "(the intercept carries the centre)."
            )
        if sparse:
            raise ValueError(
                "feature_centring given as an array needs dense X (centring "
                "would fill sparse rows)."
            )
        plan.notes["feature_centring"] = "public centre (feature_centring)"
        self._plan_balance_as_given(plan, n, solver)  # the centred rows
        return True

    def _plan_centring(self, plan, n, d, sparse, blocked, solver):
        """Add the in-fit centring to ``plan`` where it runs (public rule).

        Only with ``fit_intercept`` (centring moves the offset into the
        intercept), dense in-memory ``X`` (it would fill a sparse matrix)
        and the private row scale estimated (``feature_scale="auto"``,
        ``clip_norm`` in the ``"auto"`` units), for a fit with ``epsilon``
        given; ``epsilon = inf``: the exact column means (the limit). Where
        ``n`` and ``epsilon`` are too small
        (:func:`~dpestim.preprocessing._centring.plan_centring`) nothing
        runs and ``hyperparameters_`` says why. Sparse rows, never centred,
        get the column balance alone (:meth:`_plan_balance_as_given`).
        """
        if self._plan_public_columns(plan, n, d, sparse, blocked, solver):
            return
        if not self._centring_requested():
            if sparse and not blocked:  # the balance needs no centring there
                self._plan_balance_as_given(plan, n, solver)
            return
        why = None
        if not self.fit_intercept:
            why = "fit_intercept=False (the intercept would carry the centre)"
        elif sparse:
            why = "sparse X (centring would fill it)"
        elif blocked:
            why = "blocked X (Dask, memmap, zarr: read once, in blocks)"
        elif (
            self.epsilon is None or getattr(self, "noise_multiplier", None) is not None
        ):
            why = (
                "no epsilon to share (a fixed noise_multiplier; "
                "PrivateSearchCV gives its candidates a private centre of its "
                "own when they fit in its units)"
            )
        elif not self._rows_estimated(blocked):
            why = "the row scale is not estimated (explicit clip_norm or feature_scale)"
        if why is not None:
            plan.notes["feature_centring"] = f"not run: {why}"
            self._warn_centring_not_run(plan.notes["feature_centring"])
            if sparse and not blocked:  # balanced as given, not centred
                self._plan_balance_as_given(plan, n, solver)
            else:
                self._note_balance_not_run(
                    plan, f"the in-fit centring did not run ({why})"
                )
            return
        if math.isinf(self.epsilon):
            plan.exact_centre = True
            plan.exact_balance = self._balance_requested()
            return
        sensitivity = 2.0 if solver.neighbouring == "replace_one" else 1.0
        radius_eps, mean_eps, note = plan_centring(self.epsilon, n, d, sensitivity)
        cap = CENTRING_ESTIMATES_CAP * self.epsilon
        if note is None and plan.epsilon + radius_eps + mean_eps > cap:
            note = (
                f"not run: the other scale estimates already take "
                f"{plan.epsilon / self.epsilon:.3g} of epsilon (scale_share), "
                f"and all together may take at most {CENTRING_ESTIMATES_CAP:g}"
            )
        if note is not None:
            plan.notes["feature_centring"] = note
            self._warn_centring_not_run(note)
            if note.startswith(TOO_FEW_ROWS):
                # too few rows for the centre: balanced as given (not centred)
                self._plan_balance_as_given(plan, n, solver)
            else:
                self._note_balance_not_run(
                    plan,
                    f"the in-fit centring did not run ({note[len('not run: ') :]})",
                )
            return
        plan.centre_radius_epsilon = radius_eps
        plan.centre_epsilon = mean_eps
        plan.centre_sensitivity = sensitivity
        if self._balance_requested():
            self._set_balance(plan, *plan_balance(self.epsilon, n, _raised(solver)))

    def _warn_centring_not_run(self, note):
        """Warn when an explicit ``feature_centring=True`` does not run.

        ``"auto"`` only notes why in ``hyperparameters_``; a user who asked
        for the centring by name is told. The reason is public (the
        parameters, ``n``, ``d``, sparse or blocked input).
        """
        if self.feature_centring is True:
            auto = (
                " (feature_centring='auto' plans it only where it runs)"
                if self._centring_default
                else ""
            )
            warnings.warn(
                f"feature_centring=True was {note}; the fit runs on the columns "
                f"as given{auto}.",
                UserWarning,
                stacklevel=4,
            )

    def _apply_centring(self, X, plan, rng):
        """``(X', c, sigma, notes)``: the columns centred, then balanced.

        ``c`` is ``None`` when no centring ran and ``sigma`` is ``None`` when
        no column was rescaled. The estimator fits ``w . ((x - c) / sigma) +
        b'`` and releases ``coef_ = w / sigma`` and ``intercept_ = b' - coef_
        . c`` (post-processing).
        """
        given, c, sigma = X, plan.public_centre, plan.public_balance
        if c is not None:  # public: X - c, then balanced as given
            X = centred(X, c)
        X, own_c, own_sigma, notes = self._estimated_centring(X, plan, rng)
        if sigma is not None:  # public column scales (nothing was estimated)
            X = _divided(X, sigma, in_place=X is not given)
            own_sigma = sigma
        return X, own_c if c is None else c, own_sigma, notes

    def _estimated_centring(self, X, plan, rng):
        """``(X', c, sigma, notes)`` of the private centring and balance
        (see :meth:`_apply_centring`; rows centred by a public centre are
        balanced as given)."""
        if (
            sp.issparse(X)
            or plan.balance_radius_epsilon is not None
            or plan.public_centre is not None
        ):
            return self._apply_balance_as_given(X, plan, rng)
        Xc, c, radius, notes = self._centre_columns(X, plan, rng)
        if c is None or not (plan.exact_balance or plan.balance_epsilon):
            note = plan.notes.get("feature_balance")
            return Xc, c, None, notes | ({"feature_balance": note} if note else {})
        if plan.exact_balance:
            m, threshold = exact_column_squares(Xc)
            how = "exact mean squares (epsilon = inf: read from the data, not private)"
        else:
            m, threshold = laplace_column_squares(
                Xc, radius, plan.balance_epsilon, plan.centre_sensitivity, rng
            )
            how = f"private mean squares, epsilon {plan.balance_epsilon:.4g}"
        sigma, note = self._balance_rounds(Xc, m, threshold, how, plan, rng)
        notes = notes | {"feature_balance": note}
        if sigma is None:
            return Xc, c, None, notes
        return _divided(Xc, sigma, in_place=True), c, sigma, notes

    def _centre_columns(self, X, plan, rng):
        """``(X - c, c, radius, notes)`` of the in-fit centring (``c`` None:
        not run; ``radius``: the released L1 radius, inf when exact)."""
        if plan.exact_centre:
            c = X.mean(axis=0, dtype=np.float64)
            radius = math.inf
            note = "exact column means (epsilon = inf: read from the data, not private)"
        elif plan.centre_epsilon is not None:
            c, radius = laplace_centre(
                X,
                plan.centre_radius_epsilon,
                plan.centre_epsilon,
                plan.centre_sensitivity,
                rng,
            )
            note = (
                f"{int(np.count_nonzero(c))} of {c.shape[0]} columns moved by "
                f"their private means (L1 radius {radius:.4g})"
            )
        else:
            return (
                X,
                None,
                None,
                {k: v for k, v in plan.notes.items() if k == "feature_centring"},
            )
        # cannot overflow: validated rows are below about 1e154 and the
        # centre within the radius plus the noise's threshold of them
        # computed in float64, stored in X's dtype (no float64 copy of
        # float32 rows)
        Xc = centred(X, c)
        return Xc, c, radius, {"feature_centring": note}

    def _apply_feature_scale(self, X, scale_plan, rng, target=None, owned=False):
        """``(X / s, s, notes)``: the rows in the units the rules assume.

        ``owned``: ``X`` is the fit's own copy (centred or balanced), never
        the caller's array, and may be divided in place.

        ``s`` is the private row scale (``feature_scale="auto"``), the given
        ``feature_scale`` (a public float), or 1. The estimator fits ``w' = s
        w`` and maps ``coef_ = w' / s`` back; an explicit ``alpha`` keeps the
        user's objective (``alpha' = alpha / s^2``), ``alpha="auto"`` is
        ``1e-4`` on ``w'`` (:func:`~dpestim.solvers._policy.resolve_alpha`).
        """
        fs = self.feature_scale
        if fs is None:
            return X, 1.0, {}
        if isinstance(fs, str):
            eps = math.inf if scale_plan.exact_rows else scale_plan.row_epsilon
            if eps is None:
                return (
                    X,
                    1.0,
                    {k: v for k, v in scale_plan.notes.items() if k == "feature_scale"},
                )
            target = target or _scales.ROW_NORM_TARGET
            statistic, what = self._row_statistic
            q = self._exact_row_quantile if scale_plan.exact_rows else 0.5
            s = _scales.private_row_scale(X, eps, rng, target, statistic, q)
            which = "median" if q == 0.5 else f"{100 * q:g}th percentile"
            notes = {
                "feature_scale": (
                    f"{s:.6g} ({which} {what} / "
                    f"{target:.4g}, read from the data: epsilon = inf, not private)"
                    if scale_plan.exact_rows
                    else f"{s:.6g} (private median {what} / {target:.4g}, "
                    f"epsilon {eps:.4g})"
                )
            }
        else:
            s = float(fs)
            notes = {}
        if s == 1.0:
            return X, 1.0, notes
        return _scales.rescale_rows(X, s, in_place=owned), s, notes

    def _total_epsilon(self, solver, scale_events, dp_event, solver_epsilon):
        """Epsilon of the estimates composed with the solver's run.

        The smaller of two valid bounds: basic composition (the estimates'
        epsilons plus the solver's) and dp-accounting's composition of the
        whole event (:func:`~dpestim.privacy.ledger.composed_epsilon`).
        """
        basic = sum(_pure_epsilon(e) for e in scale_events) + solver_epsilon
        try:
            accounted = composed_epsilon(
                [dp_event], self.delta_, self.accountant, solver.neighbouring
            )
        except (ValueError, TypeError, NotImplementedError):
            accounted = math.inf
        total = min(basic, accounted)
        check_guarantee(total, self.epsilon, what=f"solver={solver.name!r}")
        return float(total)
