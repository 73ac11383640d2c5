"""The column balance of the linear estimators' policy step.

A mixin of :class:`~dpestim.linear_model._scales.PrivateScalesMixin`:
``feature_balance`` planned (public rule: ``n``, ``epsilon``, the solver)
and run, on the centred rows (with the in-fit centring, on its radius) or on
the rows as given (sparse rows, dense rows too few for the centring, rows
centred by a public centre, the minimax estimators' rows). Each round is a
private median L2 norm and Laplace mean squares of the rows clipped to it
(:mod:`dpestim.preprocessing._balance`), charged with the fit's other
estimates.
"""

import math
import warnings

import numpy as np
import scipy.sparse as sp

from ..preprocessing._balance import (
    dominant_scales,
    exact_column_squares,
    l2_column_squares,
    plan_balance_as_given,
    smallest_epsilon_n,
)
from ..preprocessing._fit_scales import TARGET_SHARE_CAP
from ..utils._rows import forget_row_norms
from ._public_columns import is_public_columns

__all__ = ["CENTRING_ESTIMATES_CAP", "ColumnBalanceMixin"]

#: The centring runs only where the scale estimates, it included, take at
#: most this share of epsilon (a public rule: the largest share the other
#: estimates may be raised to, so the solver keeps at least half).
CENTRING_ESTIMATES_CAP = TARGET_SHARE_CAP


class ColumnBalanceMixin:
    """The column balance (``feature_balance``) of a fit: plan and rounds."""

    def _balance_requested(self):
        """Whether ``feature_balance`` asks for the private column balance (on
        by default: it runs with the centring, on its radius; public column
        scales are not estimated)."""
        balance = getattr(self, "feature_balance", None)
        return not is_public_columns(balance) and bool(balance)

    def _note_balance_not_run(self, plan, why):
        """Say in ``hyperparameters_`` why a requested balance did not run
        (public), and warn when it was asked for by name (``True``)."""
        if not self._balance_requested():
            return
        plan.notes["feature_balance"] = f"not run: {why}"
        if self.feature_balance is True:
            warnings.warn(
                f"feature_balance=True was not run: {why}; the columns are used "
                "at their given scales.",
                UserWarning,
                stacklevel=5,
            )

    def _plan_balance_as_given(self, plan, n, solver):
        """Plan the column balance on the rows as given (public rule).

        Sparse rows are not centred (centring would fill them), but dividing
        columns keeps them sparse; the minimax estimators, which clip every
        coordinate, are not centred either, nor are dense rows too few for
        the in-fit centring. The balance runs on the rows as given
        (:func:`~dpestim.preprocessing._balance.plan_balance_as_given`; its
        draws raised at small ``epsilon n`` where the solver
        ``raises_balance_draws``), with the row scale estimated and
        ``epsilon`` given; ``epsilon = inf``: the exact mean squares.
        """
        if not self._balance_requested():
            return
        raised = _raised(solver)
        why = None
        if self.epsilon is None or getattr(self, "noise_multiplier", None) is not None:
            why = "no epsilon to share (a fixed noise_multiplier)"
        elif not self._rows_estimated(False):
            why = "the row scale is not estimated (explicit clip_norm or feature_scale)"
        elif math.isinf(self.epsilon):
            plan.exact_balance = True
            return
        elif (planned := plan_balance_as_given(self.epsilon, n, raised)) is None:
            why = (
                "epsilon x n_samples too small for a reliable private median of "
                f"the rows' L2 norms (about "
                f"{round(smallest_epsilon_n(raised), -1):,.0f} needed"
                f"{'' if raised else f' by solver {solver.name!r}'})"
            )
        if why is not None:
            self._note_balance_not_run(plan, why)
            return
        plan.centre_sensitivity = 2.0 if solver.neighbouring == "replace_one" else 1.0
        radius, first, rounds = planned
        self._set_balance(plan, first, rounds, radius)

    def _set_balance(self, plan, first, rounds, radius=None):
        """Put the balance's draws in ``plan`` within the estimates' cap
        (:data:`CENTRING_ESTIMATES_CAP`): the later rounds are dropped first,
        the whole balance if its first round does not fit either."""
        cap = CENTRING_ESTIMATES_CAP * self.epsilon
        own = first + (radius or 0.0)
        if plan.epsilon + own + sum(map(sum, rounds)) > cap:
            rounds = ()  # the first round alone, if it fits
        if plan.epsilon + own > cap:  # plan.epsilon: the centring in
            self._note_balance_not_run(
                plan,
                f"the scale estimates would take more than "
                f"{CENTRING_ESTIMATES_CAP:g} of epsilon",
            )
            return
        plan.balance_radius_epsilon = radius
        plan.balance_epsilon = first
        plan.balance_rounds = rounds

    def _apply_balance_as_given(self, X, plan, rng):
        """``(X', None, sigma, notes)``: the rows balanced as given (sparse
        rows; the minimax estimators' dense ones), not centred.

        Each round: a private median L2 norm of the rows balanced so far and
        their mean squares clipped to it
        (:func:`~dpestim.preprocessing._balance.l2_column_squares`), the
        same rule; every planned later round runs (:meth:`_balance_rounds`).
        Columns are divided in place of the sparse structure.
        """
        notes = {k: v for k, v in plan.notes.items() if k == "feature_centring"}
        given = f"the {'sparse ' if sp.issparse(X) else ''}rows as given, " + (
            "centred by the public centre"
            if plan.public_centre is not None
            else "not centred"
        )
        if plan.exact_balance:
            m, threshold = exact_column_squares(X)
            how = f"exact mean squares of {given} (epsilon = inf: not private)"
        elif plan.balance_epsilon is not None:
            m, threshold = l2_column_squares(
                X,
                plan.balance_radius_epsilon,
                plan.balance_epsilon,
                plan.centre_sensitivity,
                rng,
            )
            how = f"private mean squares of {given}, epsilon {plan.balance_epsilon:.4g}"
        else:
            note = plan.notes.get("feature_balance")
            return X, None, None, notes | ({"feature_balance": note} if note else {})
        sigma, note = self._balance_rounds(X, m, threshold, how, plan, rng)
        notes = notes | {"feature_balance": note}
        if sigma is None:
            return X, None, None, notes
        return _divided(X, sigma), None, sigma, notes

    def _balance_rounds(self, X, m, threshold, how, plan, rng):
        """``(sigma, note)``: the rule on the first release, then the later
        rounds.

        Every planned later round (``plan.balance_rounds``) runs, whatever
        the rounds before it found: a private median L2 norm of the rows
        balanced so far (``X / sigma``; ``X`` dense and centred, or sparse as
        given) and their mean squares clipped to it
        (:func:`~dpestim.preprocessing._balance.l2_column_squares`), the same
        rule; the scales multiply. A round that scales nothing can still
        let the next one see further: its radius is the rows' own, where the
        first release's was the centring's L1 radius, which one huge column
        (a constant of ``1e6``, a row id) sets far above the rest. The later
        rounds draw from a stream of their own, spawned from the fit's
        generator, so a fit whose rounds scale nothing gets the same noise in
        its solver as before the rounds existed.
        ``note``: ``hyperparameters_["feature_balance"]``.
        """
        sigma = dominant_scales(m, threshold)
        if plan.balance_rounds:
            (rounds_rng,) = rng.spawn(1)
        for radius_eps, squares_eps in plan.balance_rounds:
            # the rows X / sigma, divided chunk by chunk (no copy of X)
            m, threshold = l2_column_squares(
                X, radius_eps, squares_eps, plan.centre_sensitivity, rounds_rng,
                divisor=sigma,
            )  # fmt: skip
            more = dominant_scales(m, threshold)
            if more is not None:
                sigma = more if sigma is None else sigma * more
        if plan.balance_rounds:
            how += f", {1 + len(plan.balance_rounds)} rounds"
        return sigma, _balance_note(sigma, how)


def _raised(solver):
    """Whether the column balance may raise its draws above their shares at
    small ``epsilon n`` in a fit by ``solver`` (public: the solver's
    ``raises_balance_draws``)."""
    return bool(getattr(solver, "raises_balance_draws", False))


def _divided(X, sigma, in_place=False):
    """The columns of dense ``X`` divided by ``sigma`` (computed in float64,
    stored in ``X``'s dtype; ``in_place``: into ``X``, which must be the
    fit's own copy, never the caller's array: the same values without a
    second copy), or of sparse ``X`` (computed in float64, in ``X``'s format
    and dtype)."""
    if sp.issparse(X):
        return (
            (X @ sp.diags(1.0 / sigma)).asformat(X.format).astype(X.dtype, copy=False)
        )
    if in_place:
        forget_row_norms(X)  # nothing may reuse norms of the rows before
        return np.divide(X, sigma, out=X, dtype=np.float64)
    return np.divide(X, sigma, dtype=np.float64).astype(X.dtype, copy=False)


def _balance_note(sigma, how):
    """``hyperparameters_["feature_balance"]``: what the balance did."""
    if sigma is None:
        return f"no column dominant ({how})"
    return (
        f"{np.count_nonzero(sigma != 1.0)} of {sigma.shape[0]} columns dominated "
        f"the rows' norms and were divided by their root mean squares ({how})"
    )
