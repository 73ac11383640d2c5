"""Full-batch private gradient descent with the Gaussian mechanism."""

from .dp_sgd import DPSGD

__all__ = ["DPGD"]


class DPGD(DPSGD):
    """Noisy full-batch gradient descent (``solver="dp-gd"``).

    Every step uses all ``n`` records: the sum of their gradients, each clipped
    to L2 norm ``clip_norm``, plus ``N(0, (noise_multiplier * clip_norm)^2)``
    per coordinate, divided by ``n``. ``max_iter`` is the number of steps;
    ``batch_size`` is ignored.

    DpEvent: ``SelfComposedDpEvent(GaussianDpEvent(noise_multiplier),
    max_iter)`` under add/remove-one neighbouring.

    The accelerated-methods paper (Kuru et al.) uses the same iteration with
    Laplace noise and pure epsilon-DP; that variant is planned as an option of
    this solver.
    """

    name = "dp-gd"

    def sampling_prob(self, plan):
        return 1.0
