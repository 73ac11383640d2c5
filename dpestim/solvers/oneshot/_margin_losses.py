"""Margin losses of objective perturbation and the Newton solver they share.

A margin loss is ``f(m)`` of the margin ``m = y x~ . theta`` (``y`` in
``{-1, +1}``), convex, once continuously differentiable, with ``|f'| <= L``
(:attr:`MarginLoss.lipschitz`) and ``0 <= f'' <= beta``
(:attr:`MarginLoss.smoothness`) wherever ``f''`` exists (everywhere but
finitely many margins). With rows ``||x~|| <= zeta`` the per-example gradient
is at most ``L zeta`` and the per-example curvature ``f'' ||x~||^2`` at most
``beta zeta^2``: the two constants of the closed form
(:mod:`dpestim.privacy.objective_perturbation`).

=====================  ======================================  =====  =========
estimator loss         margin loss fitted                      ``L``  ``beta``
=====================  ======================================  =====  =========
logistic               ``log(1 + exp(-m))``                    1      1/4
hinge                  Huber hinge of smoothing ``h``          1      1/(2h)
                       (Chaudhuri, Monteleoni, Sarwate 2011)
squared_hinge          modified Huber: ``(1 - m)_+^2`` for     4      2
                       ``m >= -1``, ``-4 m`` below
=====================  ======================================  =====  =========

The hinge has no second derivative at ``m = 1`` and the squared hinge an
unbounded gradient, so neither is in the theorem: the solver fits the smooth
surrogate of the right column instead (equal to the estimator's loss outside
``|m - 1| < h`` for the hinge, for ``m >= -1`` for the squared hinge).
"""

import math

import numpy as np
import scipy.sparse as sp
from scipy.special import expit, log_expit

__all__ = ["HuberHinge", "Logistic", "MarginLoss", "ModifiedHuber", "newton"]

#: Newton iterations before the certificate is declared unreachable.
MAX_NEWTON = 200
#: Largest Newton step, relative to ``max(1, ||theta||)``.
STEP_CAP = 10.0


class MarginLoss:
    """A smooth convex margin loss ``f(m)`` (see the module docstring)."""

    name = "margin"
    lipschitz = 1.0
    smoothness = 0.25

    def value(self, m):
        raise NotImplementedError

    def d1(self, m):
        """``f'(m)``, in ``[-L, 0]``."""
        raise NotImplementedError

    def d2(self, m):
        """``f''(m)``, in ``[0, beta]`` (a one-sided value at the kinks)."""
        raise NotImplementedError

    def __repr__(self):
        return self.name


class Logistic(MarginLoss):
    """``log(1 + exp(-m))``: ``L = 1``, ``beta = 1/4``."""

    name = "logistic"
    lipschitz = 1.0
    smoothness = 0.25

    def value(self, m):
        return -log_expit(m)

    def d1(self, m):
        return -expit(-m)

    def d2(self, m):
        s = expit(-m)
        return s * (1.0 - s)


class HuberHinge(MarginLoss):
    """Huber hinge of smoothing ``h`` (Chaudhuri et al. 2011, Section 3.4.2).

    ``0`` for ``m > 1 + h``, ``(1 + h - m)^2 / (4 h)`` for ``|1 - m| <= h``,
    ``1 - m`` for ``m < 1 - h``: ``L = 1``, ``beta = 1 / (2 h)``. It tends to
    the hinge as ``h -> 0`` (uniformly, within ``h / 4``).
    """

    lipschitz = 1.0

    def __init__(self, h):
        if not (isinstance(h, (int, float)) and 0 < h < math.inf):
            raise ValueError(f"the Huber hinge needs a smoothing h > 0, got {h!r}.")
        self.h = float(h)
        self.smoothness = 1.0 / (2.0 * self.h)
        self.name = f"huber_hinge(h={self.h:g})"

    def value(self, m):
        h = self.h
        u = 1.0 + h - m
        return np.where(m < 1 - h, 1.0 - m, np.where(u > 0, u * u / (4 * h), 0.0))

    def d1(self, m):
        h = self.h
        return -np.clip((1.0 + h - m) / (2 * h), 0.0, 1.0)

    def d2(self, m):
        h = self.h
        return np.where(np.abs(1.0 - m) <= h, 1.0 / (2 * h), 0.0)


class ModifiedHuber(MarginLoss):
    """``(1 - m)_+^2`` for ``m >= -1``, ``-4 m`` below: ``L = 4``, ``beta = 2``.

    scikit-learn's ``SGDClassifier(loss="modified_huber")``: the squared
    hinge with its gradient capped where the margin is below ``-1``.
    """

    name = "modified_huber"
    lipschitz = 4.0
    smoothness = 2.0

    def value(self, m):
        return np.where(m < -1, -4.0 * m, np.maximum(0.0, 1.0 - m) ** 2)

    def d1(self, m):
        return -2.0 * np.clip(1.0 - m, 0.0, 2.0)

    def d2(self, m):
        return np.where((m >= -1) & (m < 1), 2.0, 0.0)


def objective(Xa, y, pen, c, theta, loss):
    """``mean f(y Xa theta) + pen / 2 theta^2 + c . theta``."""
    m = y * (Xa @ theta)
    return (
        loss.value(m).sum() / m.shape[0] + 0.5 * (pen * theta * theta).sum() + c @ theta
    )


def gradient(Xa, y, pen, c, theta, loss):
    """The gradient of :func:`objective`."""
    m = y * (Xa @ theta)
    return np.asarray(Xa.T @ (y * loss.d1(m))).ravel() / m.shape[0] + pen * theta + c


def newton(Xa, y, pen, c, tol, loss):
    """Minimise :func:`objective` to ``||gradient|| <= tol``.

    Damped (generalised-Hessian) Newton with Armijo backtracking, steps
    capped at :data:`STEP_CAP` ``max(1, ||theta||)``; the
    objective is strongly convex when ``pen > 0``. Returns ``(theta,
    iterations)``. The certificate failing after :data:`MAX_NEWTON`
    iterations raises ``ValueError`` before anything is released (seen only on
    ill-scaled inputs, rows near 1e100, or without a ridge at ``epsilon =
    inf``; in a private fit the error itself depends on the data, one bit,
    like any optimiser's failure).
    """
    n, p = Xa.shape
    theta = np.zeros(p)
    f = objective(Xa, y, pen, c, theta, loss)
    for it in range(1, MAX_NEWTON + 1):
        m = y * (Xa @ theta)
        grad = np.asarray(Xa.T @ (y * loss.d1(m))).ravel() / n + pen * theta + c
        gnorm = float(np.linalg.norm(grad))
        if gnorm <= tol:
            return theta, it - 1
        w = loss.d2(m) / n
        if sp.issparse(Xa):
            H = (Xa.T @ sp.diags(w) @ Xa).toarray()
        else:
            H = (Xa * w[:, None]).T @ Xa
        H[np.diag_indices(p)] += pen + 1e-300
        try:
            step = np.linalg.solve(H, grad)
        except np.linalg.LinAlgError:
            step = grad
        # a flat region (Huber hinge beyond its kinks, a tiny ridge) makes the
        # generalised Hessian nearly singular: cap the step at ten times the
        # current scale of theta (it may grow elevenfold per iteration)
        with np.errstate(over="ignore"):
            size = float(np.linalg.norm(step))
        cap = STEP_CAP * max(1.0, float(np.linalg.norm(theta)))
        if not size <= cap:
            step = step * (cap / size) if math.isfinite(size) else grad
        t, slope = 1.0, float(grad @ step)
        while True:
            cand = theta - t * step
            fc = objective(Xa, y, pen, c, cand, loss)
            if fc <= f - 1e-4 * t * slope:
                break
            # near the optimum the objective's rounding hides the decrease:
            # accept a step that halves the gradient norm instead, if the
            # objective rose by no more than rounding (a larger rise would
            # let a piecewise-quadratic loss cycle between two pieces)
            flat = fc <= f + 1e-10 * (1.0 + abs(f))
            if (
                flat
                and np.linalg.norm(gradient(Xa, y, pen, c, cand, loss)) <= 0.5 * gnorm
            ):
                break
            t *= 0.5
            if t < 1e-12:
                break
        if t < 1e-12:
            break
        theta, f = cand, fc
    if np.linalg.norm(gradient(Xa, y, pen, c, theta, loss)) <= tol:
        return theta, MAX_NEWTON
    raise ValueError(
        "objective perturbation: Newton's method did not certify the gradient "
        f"norm {tol:g} (gradient_tol); nothing was released. Rescale X by a "
        "public constant, or raise alpha or gradient_tol."
    )
