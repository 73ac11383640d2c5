"""The public plan of a fit's private scale estimates, and its report line.

:class:`ScalePlan` says which draws of :mod:`~dpestim.preprocessing._fit_scales`
a fit runs and at which epsilons (decided from public quantities only, by
:func:`~dpestim.preprocessing._fit_scales.plan_estimates`), with the
classifiers' utility check (:mod:`dpestim.linear_model._utility_check`);
:func:`estimates_line` states them in :meth:`privacy_report`.
"""

import dp_accounting

from ..solvers.saddle import ExponentialMechanismDpEvent

__all__ = ["CENTRE_STAGES", "ROBUST_SPREAD_UNITS", "ScalePlan", "estimates_line"]

#: Private medians of the target's centre, each around the previous one (see
#: ``_fit_scales.private_target_range``; measured: with 2, California in
#: $100k shifted by 1e4 gave R^2 -1.35 / -0.78, against 0.62 / 0.65
#: unshifted). Where the budget cannot make that many draws reliable, fewer
#: stages run (``_fit_scales.affordable_stages``, down to one): a centre
#: within the grid's resolution of the median, about 4.4% of ``|median|``,
#: which the spread's draw then covers (measured, ``"auto"``, 331 rows,
#: epsilon 1, median of 5: Adult's age -4.37 with no range, -0.01 with one
#: stage; Bank's age -4.74 / -0.04; ``doc/benchmarks/private_target_range.md``).
CENTRE_STAGES = 4
#: Epsilon of a target's robust spread draw (its 75th percentile of ``|y -
#: c|``, ``_fit_scales.SPREAD_QUANTILES``) in units of a centre draw's. A
#: draw beyond the data has utility ``-n / 4`` on the high side, half the
#: median's, so at twice the epsilon it is exactly as reliable as a median at
#: one (``_fit_scales.feasible``); a spread too high wrecks the fit as a
#: collapsed one does (the targets then fill a sliver of the solver's range
#: and the noise is scaled back up with it).
ROBUST_SPREAD_UNITS = 2


def _pure_epsilon(event):
    """Epsilon of one pure-DP estimate's event (exponential mechanism, Laplace)."""
    if isinstance(event, dp_accounting.LaplaceDpEvent):
        return 1.0 / float(event.noise_multiplier)
    return float(event.epsilon)


class ScalePlan:
    """Which private scale estimates a fit runs, and their epsilons (public).

    Attributes
    ----------
    row_epsilon : float or None
        Epsilon of the row-norm median, or ``None`` (not estimated).
    target_epsilon : float or None
        Epsilon of each of the ``centre_stages`` centre draws of each
        target's range, or ``None``; its spread's draw has ``spread_units``
        times that.
    n_targets : int
    notes : dict
        Why an estimate was skipped (for ``hyperparameters_``).
    class_epsilon : float or None
        Epsilon of the Laplace histogram of the class counts, or ``None``.
    centre_stages : int
        Private medians of each target's centre (``_fit_scales.affordable_stages``;
        :data:`CENTRE_STAGES` unless the budget is short).
    exact_rows : bool
        A non-private fit (``epsilon = inf``) whose row scale is read from
        the data, exactly (the private median's limit; no event).
    spread_units : int
        1: the target's spread is its median absolute deviation (a budget
        too short for more); :data:`ROBUST_SPREAD_UNITS`: its 75th
        percentile of absolute deviations, at that many units.
    check_epsilon : float or None
        Epsilon of a classifier's utility check (one Laplace count, run after
        the solver: :mod:`dpestim.linear_model._utility_check`), or ``None``.
    centre_radius_epsilon, centre_epsilon : float or None
        Epsilons of the in-fit centring (``feature_centring``): the median
        L1 row norm and the Laplace mean of the rows clipped to it
        (:func:`~dpestim.preprocessing._centring.laplace_centre`); ``None``:
        not run. Set by the estimator after :func:`plan_estimates`; they run
        first, before the row scale, which is then measured on the centred
        rows.
    centre_sensitivity : float
        The Laplace mean's L1 sensitivity in units of the radius (1 under
        add/remove one, 2 under replace-one).
    exact_centre : bool
        A non-private fit (``epsilon = inf``) centred by the exact column
        means (the mechanism's limit; no event).
    balance_epsilon : float or None
        Epsilon of the column balance (``feature_balance``): the Laplace
        mean squares of the centred rows clipped to the centring's radius
        (:mod:`~dpestim.preprocessing._balance`); ``None``: not run. Its
        L1 sensitivity is ``centre_sensitivity`` in units of the radius
        squared. The first release, where later rounds are planned.
    balance_radius_epsilon : float or None
        Sparse rows only (not centred): the epsilon of the balance's first
        private median L2 row norm (``_balance.plan_balance_as_given``).
    balance_rounds : tuple of (float, float)
        The balance's later rounds, each run and charged: the
        epsilons of a private median L2 norm of the balanced rows and of
        their Laplace mean squares clipped to it (``_balance.plan_balance``,
        ``_balance.plan_balance_as_given``).
    exact_balance : bool
        A non-private fit balanced by the exact mean squares (no event).
    public_centre, public_balance : ndarray or None
        Public per-column constants given as ``feature_centring`` /
        ``feature_balance`` arrays (no event): the rows are centred by, or
        their columns divided by, them.
    """

    def __init__(
        self,
        row_epsilon,
        target_epsilon,
        n_targets,
        notes,
        class_epsilon=None,
        centre_stages=CENTRE_STAGES,
        exact_rows=False,
        spread_units=1,
    ):
        self.row_epsilon = row_epsilon
        self.exact_rows = bool(exact_rows)
        self.target_epsilon = target_epsilon
        self.n_targets = int(n_targets)
        self.notes = notes
        self.class_epsilon = class_epsilon
        self.centre_stages = int(centre_stages)
        self.spread_units = int(spread_units)
        self.check_epsilon = None
        self.centre_radius_epsilon = None
        self.centre_epsilon = None
        self.centre_sensitivity = 1.0
        self.exact_centre = False
        self.balance_epsilon = None
        self.balance_radius_epsilon = None
        self.balance_rounds = ()
        self.exact_balance = False
        self.public_centre = None
        self.public_balance = None

    def events(self):
        """The events of every draw, in the order they run (the check last)."""
        out = []
        if self.centre_epsilon is not None:
            out.append(ExponentialMechanismDpEvent(self.centre_radius_epsilon))
            # Laplace noise scale / L1 sensitivity: noise multiplier 1 / eps
            out.append(dp_accounting.LaplaceDpEvent(1.0 / self.centre_epsilon))
        if self.balance_epsilon is not None:
            if self.balance_radius_epsilon is not None:
                out.append(ExponentialMechanismDpEvent(self.balance_radius_epsilon))
            out.append(dp_accounting.LaplaceDpEvent(1.0 / self.balance_epsilon))
            for radius_eps, squares_eps in self.balance_rounds:
                out.append(ExponentialMechanismDpEvent(radius_eps))
                out.append(dp_accounting.LaplaceDpEvent(1.0 / squares_eps))
        if self.row_epsilon is not None:
            out.append(ExponentialMechanismDpEvent(self.row_epsilon))
        if self.target_epsilon is not None:
            one = [
                ExponentialMechanismDpEvent(self.target_epsilon)
            ] * self.centre_stages
            spread = self.spread_units * self.target_epsilon
            out += (one + [ExponentialMechanismDpEvent(spread)]) * self.n_targets
        if self.class_epsilon is not None:
            # scale (L1 sensitivity) / class_epsilon: noise multiplier 1 / eps
            out.append(dp_accounting.LaplaceDpEvent(1.0 / self.class_epsilon))
        if self.check_epsilon is not None:
            out.append(dp_accounting.LaplaceDpEvent(1.0 / self.check_epsilon))
        return out

    @property
    def epsilon(self):
        """Total epsilon of the draws (basic composition; all are pure DP)."""
        return float(sum(_pure_epsilon(e) for e in self.events()))


def estimates_line(plan, epsilon):
    """The privacy report's line on a fit's scale estimates ("" if none)."""
    events = plan.events()
    if not events:
        return ""
    spent = plan.epsilon
    centred = plan.centre_epsilon is not None
    balanced = plan.balance_epsilon is not None
    n_em = (
        len(events)
        - (plan.class_epsilon is not None)
        - (plan.check_epsilon is not None)
        - 2 * centred
        - balanced
        - (plan.balance_radius_epsilon is not None)
        - 2 * len(plan.balance_rounds)
    )
    parts = []
    if centred:
        parts.append(
            "private centring: an exponential-mechanism draw of the rows' "
            f"median L1 norm R of epsilon {plan.centre_radius_epsilon:.4g} and "
            f"a Laplace mean of the rows clipped to R of epsilon "
            f"{plan.centre_epsilon:.4g} (L1 sensitivity R add/remove, 2 R "
            "replace-one)"
        )
    if balanced:
        parts.append(_balance_line(plan))
    if n_em:
        em_eps = plan.row_epsilon
        em_eps = plan.target_epsilon if em_eps is None else em_eps
        spread = (
            f" (each target's spread at {plan.spread_units}x)"
            if plan.target_epsilon is not None and plan.spread_units != 1
            else ""
        )
        parts.append(
            f"{n_em} exponential-mechanism draw(s) of epsilon {em_eps:.4g} each{spread}"
        )
    if plan.class_epsilon is not None:
        parts.append(
            f"a Laplace histogram of the class counts of epsilon "
            f"{plan.class_epsilon:.4g} (L1 sensitivity 1 add/remove, 2 replace-one)"
        )
    if plan.check_epsilon is not None:
        parts.append(
            "a Laplace count of the training accuracy's lift over the majority "
            f"class (the utility check, after the fit) of epsilon "
            f"{plan.check_epsilon:.4g} (sensitivity 1 add/remove, 2 replace-one)"
        )
    return (
        f"{' and '.join(parts)} (pure DP, both relations), {spent:.4g} "
        f"in all = {spent / float(epsilon):.1%} of epsilon={float(epsilon):g}, "
        "counted in the guarantee; the solver ran on the rest"
    )


def _balance_line(plan):
    """The report's words on the column balance (``feature_balance``)."""
    rounds = plan.balance_rounds
    later = (
        f", then {len(rounds)} later round(s) on the balanced rows, "
        f"each a median L2 norm R' and Laplace mean squares of the rows "
        f"clipped to R' (L1 sensitivity R'^2), of epsilon {rounds[0][0]:.4g} "
        "each"
        if rounds
        else ""
    )
    if plan.balance_radius_epsilon is None:
        first = "Laplace mean squares of the centred rows clipped to R"
    else:
        first = (
            "a median L2 norm R of the rows as given (not centred) of "
            f"epsilon {plan.balance_radius_epsilon:.4g} and Laplace mean "
            "squares of the rows clipped to R"
        )
    return (
        f"a column balance: {first} of epsilon {plan.balance_epsilon:.4g} (L1 "
        f"sensitivity R^2 add/remove, 2 R^2 replace-one){later}"
    )
