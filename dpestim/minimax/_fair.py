"""Private fair logistic regression: one Lagrangian saddle point."""

from numbers import Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from ..losses import LOGISTIC
from ..solvers.saddle import LinearSaddleProblem
from ..solvers.saddle._sgda_kernels import DUAL_BOX, FAIR_REDUCTION
from ..solvers.saddle.sgda import LagrangianProblem, NoisySGDA
from ._base import _DOC_ATTRIBUTES, _DOC_COMMON, BaseMinimaxModel
from ._check import _DOC_CHECK_ATTR, _DOC_CHECK_PARAM
from ._minimax import BinaryLinearClassifierMixin

__all__ = ["FairLogisticRegression"]


class FairLogisticRegression(BinaryLinearClassifierMixin, BaseMinimaxModel):
    _parameter_constraints = {
        **BaseMinimaxModel._parameter_constraints,
        "classes": ["array-like", None],
        "utility_check": [
            StrOptions({"auto"}),
            Interval(Real, 0, 1, closed="neither"),
            None,
        ],
        "constraint": [StrOptions({"demographic_parity", "equalized_odds"})],
        "difference_bound": [
            Interval(Real, 0, None, closed="left"),
            StrOptions({"auto"}),
        ],
        "multiplier_bound": [
            Interval(Real, 0, None, closed="neither"),
            StrOptions({"auto"}),
        ],
    }

    def __init__(
        self,
        *,
        constraint="demographic_parity",
        difference_bound="auto",
        multiplier_bound="auto",
        epsilon=1.0,
        delta=1e-5,
        l1_radius=4.0,
        feature_bound=1.0,
        fit_intercept=True,
        classes=None,
        groups=None,
        group_proportions="private",
        proportions_budget=0.1,
        min_group_proportion=None,
        solver="auto",
        random_state=None,
        feature_scale="auto",
        scale_share=0.05,
        feature_centring=None,
        feature_balance="auto",
        utility_check="auto",
    ):
        super().__init__(
            epsilon=epsilon,
            delta=delta,
            l1_radius=l1_radius,
            feature_bound=feature_bound,
            fit_intercept=fit_intercept,
            groups=groups,
            group_proportions=group_proportions,
            proportions_budget=proportions_budget,
            min_group_proportion=min_group_proportion,
            solver=solver,
            random_state=random_state,
            feature_scale=feature_scale,
            scale_share=scale_share,
            feature_centring=feature_centring,
            feature_balance=feature_balance,
        )
        self.constraint = constraint
        self.difference_bound = difference_bound
        self.multiplier_bound = multiplier_bound
        self.utility_check = utility_check
        self.classes = classes

    def _n_cells(self, n_groups):
        return n_groups * (2 if self.constraint == "equalized_odds" else 1)

    def _cells(self, codes, target):
        if self.constraint == "equalized_odds":
            return 2 * codes + (target > 0).astype(np.int64)
        return codes

    def _problem(self, Xc, target, cells, pi, pi_min):
        n, E = Xc.shape[0], pi.shape[0]
        if self.constraint == "equalized_odds":
            # parent of cell (g, c) is the label c; pi_c = sum_g pi_(g, c)
            parent_of = np.arange(E) % 2
            pi_parent = np.array([pi[parent_of == c].sum() for c in (0, 1)])
        else:
            parent_of = np.zeros(E, dtype=np.int64)
            pi_parent = np.ones(1)
        parent = parent_of[cells]
        # s_e(z) = 1{cell = e} / pi_e - 1{parent = parent(e)} / pi_parent(e):
        # E[s_e(z) theta.x] = E[score | e] - E[score | parent(e)]
        S = -(parent[:, None] == parent_of[None, :]).astype(float)
        S /= pi_parent[parent_of][None, :]
        S[np.arange(n), cells] += 1.0 / pi[cells]
        Bl, bound = self._bounds(sgda=False)
        # multipliers Bl * y on constraints (+s_e, -s_e) and one slack vertex
        Bm = np.zeros((n, 2 * E + 1))
        Bm[:, :E] = Bl * S
        Bm[:, E : 2 * E] = -Bl * S
        C = np.zeros(2 * E + 1)
        C[: 2 * E] = Bl * bound
        R, b = float(self.l1_radius), float(self.feature_bound)
        rb = R * b
        s_max = 1.0 / pi_min  # |s_e(z)| <= 1 / pi_min
        clamp_x = 1.0 + Bl * s_max
        clamp_y = Bl * (rb * s_max + bound)
        L0 = max(rb * clamp_x, clamp_y)
        L1 = rb**2 / 4 + 2 * rb * Bl * s_max
        L2 = rb**3 / (6 * 3**0.5)
        problem = LinearSaddleProblem(
            X=Xc,
            target=np.ascontiguousarray(target, dtype=np.float64),
            A=np.zeros((n, 2 * E + 1)),
            B=np.ascontiguousarray(Bm),
            C=C,
            a0=1.0,
            center=0.0,
            loss=LOGISTIC,
            radius=R,
            clamp_x=clamp_x,
            clamp_y=clamp_y,
        )
        return problem, L0, L1, L2

    def _bounds(self, sgda):
        """``(multiplier_bound, difference_bound)`` with ``"auto"`` resolved.

        noisy-sgda constrains positive-prediction *rates*: ``"auto"`` is 5 and
        0 (as fair as the run gets); dp-smd constrains mean *scores*:
        ``"auto"`` is 1 and 0.05 (its Lipschitz bound grows with the
        multiplier bound).
        """
        B, bound = self.multiplier_bound, self.difference_bound
        if B == "auto":
            B = 5.0 if sgda else 1.0
        if bound == "auto":
            bound = 0.0 if sgda else 0.05
        return float(B), float(bound)

    def _lagrangian(self, Xc, target, cells, pi):
        """noisy-sgda: the exponentiated-gradient Lagrangian, on sums.

        Constraint ``k`` (a cell: group, or (group, label)) is written on sums,
        ``c_k = E[(1{cell = k} - q_k 1{parent}) 1{theta.x > 0}]
        = P(cell k) (rate_k - rate_parent)``, with ``q_k`` the (public or
        privately estimated) share of cell ``k`` in its parent, and bounded by
        ``|c_k| <= pi_k difference_bound``. A record's dual gradient is then
        ``M[k_i] 1{s > 0}`` with ``||M[k_i]|| <= sqrt(2)``: O(1) whatever the
        size of its group, instead of ``1 / pi`` for group means.
        """
        E = pi.shape[0]
        if self.constraint == "equalized_odds":
            parent_of = np.arange(E) % 2
        else:
            parent_of = np.zeros(E, dtype=np.int64)
        share = pi / np.array([pi[parent_of == parent_of[k]].sum() for k in range(E)])
        same_parent = parent_of[:, None] == parent_of[None, :]
        M = np.eye(E) - same_parent * share[None, :]
        return LagrangianProblem(
            X=Xc,
            target=np.ascontiguousarray(target, dtype=np.float64),
            cells=np.ascontiguousarray(cells, dtype=np.int64),
            kind=FAIR_REDUCTION,
            loss=LOGISTIC,
            M=np.ascontiguousarray(M),
            dual_kind=DUAL_BOX,
            props=pi,
            bound=self._bounds(sgda=True)[0],
            slack=pi * self._bounds(sgda=True)[1],
            dual_init=np.zeros(E),
        )

    def _release(self, coef, intercept, y):
        self.coef_ = coef[None, :]
        self.intercept_ = np.array([intercept])
        self.multipliers_ = (
            self._bounds(sgda=isinstance(self.solver_, NoisySGDA))[0] * y[:-1]
        )


FairLogisticRegression.__doc__ = f"""Private logistic regression, fairness-constrained.

    With the default ``solver="auto"`` (``"noisy-sgda"``) it solves the Lagrangian game
    of fairlearn's exponentiated-gradient reduction (Agarwal et al. 2018) in
    one private run: the multipliers ``mu`` (one per cell, in
    ``[-B, B]``) price the constraints ``|P(cell) (rate_cell -
    rate_parent)| <= P(cell) difference_bound`` on the *rates of positive
    predictions*, and ``theta`` descends the logistic surrogate of the
    resulting cost-sensitive classification::

        min_theta max_(|mu_k| <= B) E[|cost_i| log(1 + exp(-t_i theta.x))]
            + sum_k (mu_k c_k(theta) - B_k |mu_k|)

    Cells are the groups (``"demographic_parity"``, parent: everyone) or the
    (group, label) pairs (``"equalized_odds"``, parent: the label). The
    constraints are written on sums, so one record moves a dual gradient by
    O(1) whatever its group's size. The non-private limit matches fairlearn's
    ``ExponentiatedGradient`` with a logistic-regression learner (Adult:
    0.826 accuracy at a demographic-parity difference of 0.003 against its
    0.829 at 0.015) with one deterministic linear model instead of a
    randomized mixture.

    With ``solver="dp-smd"`` (or ``"dp-smd-br"``) it solves instead the
    convex surrogate on mean *scores* on the l1 ball (``|E[theta.x | cell] -
    E[theta.x | parent]| <= difference_bound``, multipliers on a scaled
    simplex) by private mirror descent with vertex sampling.

    Parameters
    ----------
    constraint : {{"demographic_parity", "equalized_odds"}}, \
default="demographic_parity"
    difference_bound : float or "auto", default="auto"
        Allowed difference of positive-prediction rates (noisy-sgda; ``"auto"``:
        0, as fair as the run gets) or of mean scores (dp-smd; ``"auto"``:
        0.05).
    multiplier_bound : float or "auto", default="auto"
        ``B``: bound on the multipliers (noisy-sgda: each, ``"auto"``: 5;
        dp-smd: their l1 norm, ``"auto"``: 1, as it raises the Lipschitz
        bound, hence the privacy cost per step).
    {_DOC_COMMON}
    classes : array-like or None, default=None
        The public label set (two labels).
    {_DOC_CHECK_PARAM}

    Attributes
    ----------
    {_DOC_ATTRIBUTES}
    classes_ : ndarray of shape (2,)
    {_DOC_CHECK_ATTR}
    multipliers_ : ndarray of shape (2 * n_cells,)
        The released (private) Lagrange multipliers ``B y`` (constraints
        ``+D_e`` then ``-D_e``), the average of vertex samples.
    """
