"""AdaSSP: sufficient-statistics perturbation for ridge regression.

Wang, "Revisiting differentially private linear regression: optimal and
adaptive prediction & estimation" (UAI 2018), Algorithm 2. Three Gaussian
releases of the data (two by default: the first only with
``eigenvalue_share > 0``), then a closed-form solve (post-processing):

1. ``lambda_min(X^T X)``, the smallest eigenvalue of the Gram matrix, with
   noise, shifted down by ``sqrt(2 ln(1 / rho))`` noise standard deviations
   and floored at 0 (a high-probability lower bound);
2. the Gram matrix ``X^T X`` (its upper triangle, mirrored);
3. ``X^T Y``.

The ridge ``lambda = max(0, f sqrt(p ln(2 p^2 / rho)) s_XX - lambda_min~)``
(``f = ridge_factor``, 1 in the paper)
(``s_XX`` the standard deviation of the Gram noise, ``p`` the columns) makes
the noisy Gram matrix well conditioned with probability ``1 - rho``; the
model is ``(X^T X~ + lambda I + n alpha I')^{-1} X^T Y~``, ``I'`` the
identity without the intercept's entry (scikit-learn's ``Ridge`` does not
penalise the intercept; ``lambda`` does, as in the paper, since the noise
reaches every entry).

Sensitivities (add/remove one row ``(x, y)``, ``x`` clipped to ``clip_norm``
and, with an intercept, augmented by the constant ``clip_norm``, so that
``||x~|| <= B = clip_norm sqrt(1 + fit_intercept)``; ``||y|| <= B_y``, the
estimator's public target bound):

* ``lambda_min``: Weyl's inequality, ``0 <= lambda_min(A + x x^T) -
  lambda_min(A) <= ||x||^2 <= B^2``;
* the upper triangle of ``x x^T`` (diagonal included): L2 norm at most
  ``||x||^2 <= B^2`` (``||x||^4 = sum_i x_i^4 + 2 sum_{i<j} x_i^2 x_j^2``);
* ``x y^T``: Frobenius norm ``||x|| ||y|| <= B B_y``.

The Gram matrix and ``X^T Y`` get Gaussian noise of standard deviation
``noise_multiplier x sensitivity``; ``lambda_min`` gets the multiplier
``noise_multiplier sqrt((1 - w) / (2 w))``, ``w = eigenvalue_share`` (its
share of the Gaussians' precision ``sum 1 / s_i^2``). The event is
``ComposedDpEvent`` of the Gaussians: with ``w = 1/3`` three
``GaussianDpEvent(noise_multiplier)`` (the paper's equal three-way split of
``(epsilon, delta)``, composed by the accountant, which is tighter). With
``w = 0`` (the default) ``lambda_min`` is not released: its lower bound is
0, always valid, and the ridge is the paper's bound on the Gram noise alone;
the two remaining releases then each have a third more precision.

Defaults (measured in ``benchmarks/utility/small_data.py``, derived on
California subsamples of n = 500 ... 8000 and synthetic Gaussian / t(3) data,
n = 500 ... 8000, at epsilon 1 and 2, with oracle scales; diabetes held
out): ``eigenvalue_share = 0`` beat the paper's 1/3 on 7 of 8 sets by 0.01
to 0.09 R^2 (the eigenvalue release buys a smaller ridge only once
``lambda_min(X^T X)`` exceeds the Gram noise, beyond these n); rows
brought to a median norm of the one-shot solvers' ``row_norm_target``
(:data:`~dpestim.solvers.base.ROW_CLIPPING_TARGET`, 0.96) under
``clip_norm`` 1, about half the rows clipped, beat the one-shot default
0.52 on every set (epsilon 1: mean R^2 0.31 against 0.18 over the eight
sets; 1.35, most rows clipped, gave 0.36 there but lost at large epsilon:
on diabetes 0.29 against 0.42 at epsilon 100): clipping biases the
statistics less than the noise of a loose bound costs. ``ridge_factor =
0.7`` (the ridge 0.7 times the paper's high-probability bound on the Gram
noise) beat 1 on all 12 cells of California n = 500 / 1000 / 2000 and
synthetic n = 500 / 1000 / t(3) 500 at epsilon 1 and 2 (mean R^2 0.277
against 0.241 at epsilon 1, 0.353 against 0.316 at epsilon 2; 0.5 gave
0.155 / 0.323, 0.35 went negative): the bound holds the noisy Gram matrix
positive definite with probability ``1 - rho``, more than a prediction
needs.
"""

import math
from dataclasses import replace
from numbers import Real

import numpy as np
import scipy.linalg
import scipy.sparse as sp
from dp_accounting import ComposedDpEvent, GaussianDpEvent, NonPrivateDpEvent
from sklearn.utils._param_validation import Interval

from ..base import SolverResult
from ._base import OneShotSolver

__all__ = ["AdaSSP", "adassp_statistics", "clip_rows"]


def _shrink(norms, bound):
    """Factors ``min(1, bound / norm)`` (1 for a zero norm)."""
    scale = np.ones_like(norms)
    big = norms > bound
    scale[big] = bound / norms[big]
    return scale


def clip_rows(X, clip_norm, fit_intercept):
    """Rows of ``X`` scaled to L2 norm at most ``clip_norm``, then augmented.

    Returns a dense float64 array; with ``fit_intercept`` a last column equal
    to ``clip_norm`` (``1`` when ``clip_norm`` is infinite) is appended.
    """
    X = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)
    X = np.array(X, dtype=np.float64, order="C")
    if math.isfinite(clip_norm):
        X *= _shrink(np.sqrt(np.einsum("ij,ij->i", X, X)), clip_norm)[:, None]
    if fit_intercept:
        c = clip_norm if math.isfinite(clip_norm) else 1.0
        X = np.hstack([X, np.full((X.shape[0], 1), c)])
    return X


def adassp_statistics(Xc, Y):
    """The three statistics AdaSSP releases, before noise.

    Returns ``(lambda_min, upper, XtY)``: the smallest eigenvalue of ``Xc^T
    Xc``, the upper triangle (diagonal included, row-major) of ``Xc^T Xc``,
    and ``Xc^T Y``.
    """
    G = Xc.T @ Xc
    lam = float(np.linalg.eigvalsh(G)[0]) if G.shape[0] else 0.0
    iu = np.triu_indices(G.shape[0])
    return lam, G[iu], Xc.T @ Y


class AdaSSP(OneShotSolver):
    """Sufficient-statistics perturbation with an adaptive ridge (``"adassp"``).

    Wang (UAI 2018), Algorithm 2, for :class:`~dpestim.Ridge` only. One pass
    over the data: noisy ``X^T X``, ``X^T Y`` and smallest eigenvalue of
    ``X^T X`` (three Gaussian mechanisms, composed by the accountant), then
    a closed-form ridge solve. No step size, batch or iterations: the
    estimator's ``max_iter``, ``batch_size`` and ``learning_rate`` are not
    used.

    Needs public bounds, enforced by the code: each row ``x`` is clipped to
    L2 norm ``clip_norm`` (the estimator's, resolved; with an intercept a
    constant column ``clip_norm`` is appended) and each target row to the
    estimator's ``y_bound`` (``Ridge`` clips and centres it; the solver
    clips again to the resulting bound ``target_bound``). A fit without a
    target bound (``y_bound=None``) is refused. Utility depends on these
    bounds being tight: the Gram noise has standard deviation
    ``noise_multiplier x clip_norm^2 x (1 + fit_intercept)`` per entry.

    Parameters
    ----------
    eigenvalue_share : float in [0, 1), default=0.0
        Share of the budget (of the Gaussians' precision) spent on
        ``lambda_min``: ``1/3`` is the paper's equal split; ``0`` (default)
        releases no eigenvalue and uses the lower bound 0 (see the module
        docstring for the measurements).
    ridge_factor : float, default=0.7
        Multiplies the paper's ridge ``sqrt(p ln(2 p^2 / rho)) s_XX`` (1 is
        the paper's; see the module docstring for the measurements).
    rho : float, default=0.05
        Failure probability of the eigenvalue bound (the paper's ``rho``):
        the released ``lambda_min`` is shifted down by ``sqrt(2 ln(1/rho))``
        standard deviations, and the ridge is ``sqrt(p ln(2 p^2 / rho))``
        Gram-noise standard deviations minus that bound.

    Notes
    -----
    Non-private limit (``epsilon=inf``): no noise, ``lambda = 0``: the
    ridge solution with penalty ``n alpha`` on the coefficients (not on the
    intercept), scikit-learn's ``Ridge(alpha=alpha * n)`` on the clipped
    rows (no clipping with ``clip_norm="auto"``, which is ``inf`` there).
    """

    name = "adassp"
    supported_losses = frozenset({"squared"})
    accepts_sparse = True
    _parameter_constraints = {
        "eigenvalue_share": [Interval(Real, 0, 1, closed="left")],
        "ridge_factor": [Interval(Real, 0, None, closed="neither")],
        "rho": [Interval(Real, 0, 1, closed="neither")],
    }

    def __init__(self, eigenvalue_share=0.0, ridge_factor=0.7, rho=0.05):
        self.eigenvalue_share = eigenvalue_share
        self.ridge_factor = ridge_factor
        self.rho = rho

    # -- public quantities ------------------------------------------------------

    def row_bound(self, plan):
        """``B``: the L2 bound on an augmented, clipped row."""
        return plan.clip_norm * math.sqrt(1.0 + int(plan.fit_intercept))

    def resolve_hyperparameters(self, plan, epsilon, delta):
        """No iterative knobs: one pass (placeholders in the plan)."""
        plan = replace(plan, max_iter=1, batch_size=plan.n_samples, learning_rate=1.0)
        return plan, {
            "eigenvalue_share": float(self.eigenvalue_share),
            "ridge_factor": float(self.ridge_factor),
            "rho": float(self.rho),
        }

    @staticmethod
    def _require_target_bound(plan):
        """A private run needs a bound on the targets (refused without one).

        Without ``plan.target_bound`` the ``X^T Y`` release has no
        sensitivity. A non-private run (no noise: ``epsilon=inf`` or
        ``noise_multiplier=0``) needs none: the exact ridge solution.
        """
        if plan.target_bound is None:
            raise ValueError(
                "solver='adassp' needs a public bound on the targets: set Ridge's "
                "y_bound (a range, or a number b for (-b, b)); y_bound=None is not "
                "allowed with this solver (except at epsilon=inf)."
            )

    def calibrate(self, epsilon, delta, plan, *, accountant):
        """The noise multiplier (refused without a target bound)."""
        self._require_target_bound(plan)
        return super().calibrate(epsilon, delta, plan, accountant=accountant)

    def eigenvalue_factor(self):
        """``lambda_min``'s noise multiplier over the others' (inf: not released)."""
        w = float(self.eigenvalue_share)
        return math.inf if w == 0 else math.sqrt((1.0 - w) / (2.0 * w))

    def noise_stds(self, noise_multiplier, plan):
        """Standard deviations of the three releases: ``(lambda_min, X^T X, X^T Y)``.

        ``lambda_min``'s is ``inf`` when it is not released
        (``eigenvalue_share=0``).
        """
        B = self.row_bound(plan)
        s_xx = noise_multiplier * B * B
        s_ev = s_xx * self.eigenvalue_factor()
        return s_ev, s_xx, noise_multiplier * B * float(plan.target_bound)

    def make_event(self, noise_multiplier, plan):
        if noise_multiplier > 0:  # a fixed noise_multiplier is not calibrated
            self._require_target_bound(plan)
        if noise_multiplier == 0:
            return NonPrivateDpEvent()
        g = GaussianDpEvent(noise_multiplier)
        f = self.eigenvalue_factor()
        if math.isinf(f):
            return ComposedDpEvent([g, g])
        return ComposedDpEvent([GaussianDpEvent(noise_multiplier * f), g, g])

    def event_inputs(self, plan):
        return None  # the event depends on the noise multiplier only

    def mechanism(self, plan):
        ev = "" if math.isinf(self.eigenvalue_factor()) else "lambda_min(X^T X), "
        return (
            "sufficient-statistics perturbation (AdaSSP, Wang 2018): Gaussian noise "
            f"on {ev}X^T X and X^T Y of the clipped rows, then a "
            "ridge solve (post-processing)"
        )

    def sampling(self, plan):
        return "none: every row enters each statistic once"

    def composition(self, plan):
        k = 2 if math.isinf(self.eigenvalue_factor()) else 3
        return f"{k} Gaussian releases composed by the accountant (dp_accounting)"

    def added_noise(self, noise_multiplier, plan):
        s_ev, s_xx, s_xy = self.noise_stds(noise_multiplier, plan)
        B = self.row_bound(plan)
        ev = (
            "lambda_min not released (lower bound 0)"
            if math.isinf(s_ev)
            else f"standard deviation {s_ev:.6g} on lambda_min"
        )
        return (
            f"Gaussian, noise multiplier {noise_multiplier:.6g} on X^T X and X^T Y: "
            f"{ev}, {s_xx:.6g} per entry "
            f"of X^T X (sensitivity B^2, B = {B:.6g} the augmented row bound), "
            f"{s_xy:.6g} per entry of X^T Y (sensitivity B x target bound "
            f"{float(plan.target_bound):.6g})"
        )

    def sensitivity_probe(self, plan, rng):
        """The three statistics, each divided by its sensitivity, concatenated.

        For the brute-force test on neighbouring datasets
        (``tests/solvers/test_sensitivity.py``): three Gaussian releases of
        multiplier ``s`` on statistics of sensitivity 1 are, together, a
        Gaussian of multiplier ``s`` on a vector of L2 sensitivity
        ``sqrt(3)`` (this is the composed event). The eigenvalue, released
        with multiplier ``s f`` (:meth:`eigenvalue_factor`), enters divided
        by ``f`` (the sensitivity ``sqrt(2 + 1 / f^2)``), or not at all when
        it is not released. A plan without a target bound gets 1. ``rng`` is
        unused (no state).
        """
        if plan.target_bound is None:
            plan = replace(plan, target_bound=1.0)
        B, By = self.row_bound(plan), float(plan.target_bound)
        f = self.eigenvalue_factor()

        def statistic(X, Y):
            Xc = clip_rows(X, plan.clip_norm, plan.fit_intercept)
            norms = np.sqrt(np.einsum("ij,ij->i", Y, Y))
            Yc = Y * _shrink(norms, By)[:, None]
            lam, upper, xty = adassp_statistics(Xc, Yc)
            ev = [] if math.isinf(f) else [lam / B**2 / f]
            return np.concatenate([ev, upper / B**2, xty.ravel() / (B * By)])

        return statistic, 2, math.sqrt(2.0 + (0.0 if math.isinf(f) else f**-2))

    # -- the algorithm ------------------------------------------------------------

    def solve(self, X, Y, plan, noise_multiplier, rng):
        """Algorithm 2: three noisy statistics, then the ridge solve.

        Noise is drawn in this order from ``rng``: one ``standard_normal()``
        (eigenvalue; not drawn with ``eigenvalue_share=0``), a ``(p, p)``
        ``standard_normal`` whose upper triangle is used (Gram), a ``(p, K)``
        one (``X^T Y``).
        """
        p, K = self._dim(plan), plan.n_outputs
        Xc = clip_rows(X, plan.clip_norm, plan.fit_intercept)
        Y = np.asarray(Y, dtype=np.float64)
        if plan.target_bound is not None and math.isfinite(plan.target_bound):
            # enforce the bound on each target row (L2), whatever the caller did
            norms = np.sqrt(np.einsum("ij,ij->i", Y, Y))
            Y = Y * _shrink(norms, float(plan.target_bound))[:, None]
        lam_min, upper, XtY = adassp_statistics(Xc, Y)
        lam = 0.0
        iu = np.triu_indices(p)
        if noise_multiplier > 0:
            s_ev, s_xx, s_xy = self.noise_stds(noise_multiplier, plan)
            if math.isinf(s_ev):  # not released: the valid lower bound 0
                lam_tilde = 0.0
            else:
                z_ev = rng.standard_normal()
                shift = math.sqrt(2.0 * math.log(1.0 / self.rho))
                lam_tilde = max(lam_min + s_ev * z_ev - shift * s_ev, 0.0)
            z_xx = rng.standard_normal((p, p))[iu]
            z_xy = rng.standard_normal((p, K))
            upper = upper + s_xx * z_xx
            XtY = XtY + s_xy * z_xy
            bound = math.sqrt(p * math.log(2.0 * p * p / self.rho)) * s_xx
            lam = max(0.0, float(self.ridge_factor) * bound - lam_tilde)
            released = {"lambda_min_": lam_tilde}
        else:
            released = {"lambda_min_": lam_min}
        G = np.zeros((p, p))
        G[iu] = upper
        G = G + np.triu(G, 1).T
        pen = np.full(p, plan.n_samples * plan.alpha)
        if plan.fit_intercept:
            pen[-1] = 0.0
        A = G + np.diag(pen + lam)
        try:
            W = scipy.linalg.solve(A, XtY, assume_a="sym")
        except (np.linalg.LinAlgError, ValueError):
            W = np.linalg.lstsq(A, XtY, rcond=None)[0]
        W = W.T  # (K, p)
        if plan.fit_intercept:
            c = plan.clip_norm if math.isfinite(plan.clip_norm) else 1.0
            coef, intercept = W[:, :-1].copy(), W[:, -1] * c
        else:
            coef, intercept = W.copy(), np.zeros(K)
        return SolverResult(
            coef=coef,
            intercept=intercept,
            n_iter=1,
            dp_event=self.make_event(noise_multiplier, plan),
            noise_multiplier=noise_multiplier,
            attributes={**released, "ridge_": lam},
        )
