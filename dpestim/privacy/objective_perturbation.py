"""Closed-form accounting of Gaussian objective perturbation.

``dp_accounting`` has no event for objective perturbation (Chaudhuri,
Monteleoni and Sarwate 2011; Kifer, Smith and Thakurta, COLT 2012, Algorithm 1
and its Theorem 2): release

    ``theta = argmin_theta sum_i l(theta; z_i) + Lambda / 2 ||theta||^2 + b . theta``,
    ``b ~ N(0, (s zeta)^2 I)``,

for a convex, twice-differentiable generalised linear loss ``l(theta; z) =
f(theta . x, y)`` with ``||grad l|| <= zeta`` and ``grad^2 l = f'' x x^T``,
``f'' ||x||^2 <= c``. Required: ``Lambda > 0`` (strong convexity: the
minimiser is unique and ``theta -> b`` is a bijection of ``R^p``), the
minimiser exact, unconstrained. ``s`` is the *noise multiplier*.

Losses whose ``f''`` jumps at finitely many margins (``f'`` continuous and
Lipschitz, ``0 <= f'' <= beta`` elsewhere: the Huber hinge of Chaudhuri et
al., Section 3.4.2, ``beta = 1 / (2 h)``, and the modified Huber loss of
:mod:`dpestim.solvers.oneshot._margin_losses`) are covered too: ``theta ->
b_D(theta)`` is then Lipschitz and strongly monotone (``Lambda > 0``), so
bi-Lipschitz, and the change of variables of point 1 holds with its
Jacobian defined almost everywhere (the area formula); the bounds of points 2
and 3 hold wherever it is defined, which is all the privacy loss needs (it
is defined up to null sets). With ``|f'| <= L`` and rows ``||x|| <= R``:
``zeta = L R`` and ``c = beta R^2``.

What is used here, and why it holds (add/remove-one neighbours ``D' = D +
{z}``, ``Lambda`` a public constant):

1. *Change of variables.* ``b = -grad L_D(theta) - Lambda theta``, so
   ``p_D(theta) = nu(b_D(theta)) det(H_D(theta) + Lambda I)`` (``nu`` the
   Gaussian density, ``H_D`` the Hessian of the summed loss).
2. *Jacobian.* ``det(H_D + Lambda I + f'' x x^T) / det(H_D + Lambda I) = 1 +
   f'' x^T (H_D + Lambda I)^{-1} x``, in ``[1, 1 + c / Lambda]``: its log is
   at most ``eps_J = log(1 + c / Lambda)`` (and at least 0).
3. *Gaussian part.* With ``b = b_{D'}(theta) ~ N(0, (s zeta)^2 I)`` under
   ``D'`` and ``g = grad l(theta; z) = f' x``, ``log nu(b) / nu(b + g) = b . g
   / (s zeta)^2 + ||g||^2 / (2 (s zeta)^2) <= |W| / s + 1 / (2 s^2)``, with
   ``W = b . x / (s zeta ||x||) ~ N(0, 1)`` (``|f'| ||x|| <= zeta``).
   So the privacy loss of either order is at most ``eps_J + |W| / s + 1 /
   (2 s^2)``.
4. *Profile.* ``delta(eps) = E[(1 - exp(eps - L))_+]`` is increasing in the
   loss ``L``; with the bound of 3 and the symmetry of ``|W|``, ``delta(eps)
   <= 2 delta_G(eps - eps_J)``, ``delta_G`` the exact profile of the Gaussian
   mechanism of noise multiplier ``s`` (Balle and Wang 2018):
   :func:`objective_perturbation_delta`. Hence the mechanism is ``(eps_J +
   eps_G(delta / 2), delta)``-DP, ``eps_G`` the Gaussian mechanism's epsilon,
   computed by ``dp_accounting`` (:func:`objective_perturbation_epsilon`).
   This is the analysis of Redberg, Koskela and Wang (NeurIPS 2023) in the
   form of a Gaussian-mechanism bound; Kifer et al.'s Theorem 2 (variance
   ``zeta^2 (8 log(2 / delta) + 4 eps) / eps^2``, ``Lambda >= 2 c / eps``)
   satisfies it (tested).
5. *Renyi / zCDP.* ``E[exp(t |W|)] = 2 exp(t^2 / 2) Phi(t) <= exp(t^2 / 2 + t
   sqrt(2 / pi))`` (``2 Phi`` is concave on ``t >= 0`` with slope ``sqrt(2 /
   pi)`` at 0), so the Renyi divergence of order ``alpha`` is at most ``xi +
   rho alpha`` with ``rho = 1 / (2 s^2)``, ``xi = eps_J + sqrt(2 / pi) / s``:
   the mechanism is ``(xi, rho)``-zCDP, :func:`zcdp_event`, which is how a
   :class:`~dpestim.model_selection.PrivacyBudget` composes it.

The approximate-minima variant (Iyengar et al., IEEE S&P 2019, Algorithm 1)
releases ``theta_hat + N(0, (s_out 2 r)^2 I)`` where ``theta_hat`` is any
deterministic function of ``(D, b)`` within ``r`` of the exact minimiser
(certified by a gradient norm). Given the exact output ``theta*`` (which
fixes ``b``), ``theta_hat`` is a function of ``(D, theta*)`` that moves by at
most ``2 r`` between neighbours, so the release is the adaptive composition
of the exact mechanism and a Gaussian of multiplier ``s_out`` (sensitivity
``2 r``; Iyengar et al. use ``r``), then post-processing. Its epsilon is the
smaller of two valid bounds (:func:`amp_epsilon`): basic composition of
``(eps_J + eps_G(s, delta_1 / 2), delta_1)`` and ``(eps_G(s_out, delta_2),
delta_2)`` (``delta_2 = 1%`` of ``delta``), and the zCDP route of 5.
"""

import math

import attr
from dp_accounting import (
    ComposedDpEvent,
    DpEvent,
    GaussianDpEvent,
    NonPrivateDpEvent,
    SelfComposedDpEvent,
    ZCDpEvent,
)
from scipy.stats import norm

from .accounting import compute_epsilon

__all__ = [
    "OUTPUT_DELTA_SHARE",
    "ObjectivePerturbationDpEvent",
    "amp_epsilon",
    "gaussian_delta",
    "jacobian_epsilon",
    "objective_perturbation_delta",
    "objective_perturbation_epsilon",
    "zcdp_event",
]

#: Noise multipliers at or below this give no usable guarantee (epsilon inf).
_MIN_NOISE = 1e-100

#: Share of ``delta`` given to the output noise of the approximate-minima
#: variant in the basic-composition bound of :func:`amp_epsilon`.
OUTPUT_DELTA_SHARE = 0.01


@attr.s(frozen=True, slots=True, auto_attribs=True)
class ObjectivePerturbationDpEvent(DpEvent):
    """Gaussian objective perturbation of one convex GLM fit.

    Not supported by the ``dp_accounting`` accountants: its epsilon is
    :func:`objective_perturbation_epsilon` and budgets compose it through
    :func:`zcdp_event`.

    Attributes
    ----------
    noise_multiplier : float
        ``s``: the linear term's noise has standard deviation ``s zeta``.
    jacobian_epsilon : float
        ``eps_J = log(1 + c / Lambda)``, :func:`jacobian_epsilon`.
    """

    noise_multiplier: float
    jacobian_epsilon: float


def jacobian_epsilon(curvature, ridge):
    """``log(1 + c / Lambda)``: the bound on the log Jacobian ratio.

    Parameters
    ----------
    curvature : float
        ``c >= f'' ||x||^2`` for every record (e.g. ``R^2 / 4`` for the
        logistic loss on rows of norm at most ``R``).
    ridge : float
        ``Lambda > 0``, the L2 penalty of the summed objective on every
        coordinate.
    """
    if not ridge > 0:
        raise ValueError(f"objective perturbation needs a ridge > 0, got {ridge!r}.")
    return math.log1p(curvature / ridge)


def gaussian_delta(epsilon, noise_multiplier):
    """Exact ``delta(epsilon)`` of the Gaussian mechanism (Balle and Wang 2018)."""
    s = float(noise_multiplier)
    if s <= 0:
        return 1.0
    a = 1.0 / s
    # Phi(-eps/a + a/2) - e^eps Phi(-eps/a - a/2), the second term in logs
    first = norm.cdf(-epsilon * s + a / 2)
    second = math.exp(min(700.0, epsilon + norm.logcdf(-epsilon * s - a / 2)))
    return min(1.0, max(0.0, first - second))


def objective_perturbation_delta(epsilon, noise_multiplier, jac_epsilon):
    """Upper bound ``2 delta_G(epsilon - eps_J)`` on the privacy profile (point 4)."""
    return min(1.0, 2.0 * gaussian_delta(epsilon - jac_epsilon, noise_multiplier))


def objective_perturbation_epsilon(event, delta, accountant="rdp"):
    """``eps_J + eps_G(delta / 2)``, ``eps_G`` by ``dp_accounting`` (point 4)."""
    if not 0 < delta < 1 or not event.noise_multiplier > _MIN_NOISE:
        return math.inf
    eps_g = compute_epsilon(
        GaussianDpEvent(event.noise_multiplier), delta / 2, accountant
    )
    return event.jacobian_epsilon + eps_g


def zcdp_event(event):
    """The ``ZCDpEvent(rho, xi)`` that holds for ``event`` (point 5)."""
    s = float(event.noise_multiplier)
    if not s > _MIN_NOISE:  # no usable guarantee (rho would overflow)
        return NonPrivateDpEvent()
    return ZCDpEvent(
        rho=1.0 / (2.0 * s * s), xi=event.jacobian_epsilon + math.sqrt(2 / math.pi) / s
    )


def _split(event):
    """``(objective event, output Gaussian or None)`` of an AMP event."""
    if isinstance(event, ObjectivePerturbationDpEvent):
        return event, None
    if isinstance(event, ComposedDpEvent) and len(event.events) == 2:
        op, out = event.events
        if isinstance(op, ObjectivePerturbationDpEvent) and isinstance(
            out, GaussianDpEvent
        ):
            return op, out
    raise ValueError(f"not an objective-perturbation event: {event!r}")


def amp_epsilon(event, delta, accountant="rdp"):
    """Epsilon at ``delta`` of (approximate-minima) objective perturbation.

    ``event`` is an :class:`ObjectivePerturbationDpEvent`, or its
    ``ComposedDpEvent`` with the output ``GaussianDpEvent``, or a
    ``SelfComposedDpEvent`` of ``K`` of those (one-vs-rest over ``K``
    classes). The smaller of the basic-composition bound (each of the ``K``
    objective releases at ``delta_1 / K``) and the zCDP bound (module
    docstring).
    """
    if isinstance(event, NonPrivateDpEvent):
        return math.inf
    count = 1
    if isinstance(event, SelfComposedDpEvent):
        event, count = event.event, int(event.count)
    op, out = _split(event)
    if not 0 < delta < 1 or not op.noise_multiplier > _MIN_NOISE:
        return math.inf
    if out is None and count == 1:
        return objective_perturbation_epsilon(op, delta, accountant)
    d_out = OUTPUT_DELTA_SHARE * delta if out is not None else 0.0
    basic = count * objective_perturbation_epsilon(
        op, (delta - d_out) / count, accountant
    )
    if out is not None:
        outs = out if count == 1 else SelfComposedDpEvent(out, count)
        basic += compute_epsilon(outs, d_out, accountant)
    one = zcdp_event(op) if out is None else ComposedDpEvent([zcdp_event(op), out])
    both = one if count == 1 else SelfComposedDpEvent(one, count)
    return min(basic, compute_epsilon(both, delta, "rdp"))
