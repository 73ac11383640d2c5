"""Public-information rules behind the ``"auto"`` hyperparameters.

Every rule here is a function of quantities the privacy model makes public
(``n``, ``d``, the number of outputs, the loss, ``alpha``, ``clip_norm``,
``epsilon``, ``delta``, the solver) and never of the data values, so choosing
a hyperparameter by one of them costs no privacy. Each solver resolves its
``"auto"`` values in its own :meth:`~dpestim.solvers.BaseSolver.resolve_hyperparameters`
from these helpers; the constants were calibrated on the benchmark datasets
(``benchmarks/defaults.py``, see ``BENCHMARKS.md``).

Two ideas recur.

* **Enough steps to converge without noise.** A run has at least
  :data:`MIN_STEPS_PRIVATE` (private) or :data:`MIN_STEPS_NONPRIVATE`
  (``epsilon = inf``) steps and at least :data:`MIN_EPOCHS` passes, so that
  small datasets (a few hundred rows) get as many steps as large ones.
* **No more steps than the noise allows** (full-batch solvers, whose
  budget is split over the steps without amplification by sampling): the
  expected L2 norm of the noise added to one step's mean gradient, divided by
  the largest clipped signal ``clip_norm``, is the step's noise-to-signal
  ratio; the number of steps is the largest for which it stays below
  :data:`NOISE_TO_SIGNAL`.
"""

import math

__all__ = [
    "AUTO",
    "MIN_EPOCHS",
    "MIN_STEPS_NONPRIVATE",
    "MIN_STEPS_PRIVATE",
    "NOISE_TO_SIGNAL",
    "is_auto",
    "full_batch_steps",
    "poisson_batch_size",
    "poisson_epochs",
]

AUTO = "auto"

#: Fewest passes over the data of a mini-batch run.
MIN_EPOCHS = 10
#: Fewest noisy steps of a private mini-batch run.
MIN_STEPS_PRIVATE = 500
#: Fewest steps of a non-private (``epsilon = inf``) run.
MIN_STEPS_NONPRIVATE = 2000
#: Largest passes a rule asks for (bounds the cost on tiny datasets).
MAX_EPOCHS = 300
#: Target noise-to-signal ratio of one full-batch step.
NOISE_TO_SIGNAL = 0.1


def is_auto(value):
    """Whether ``value`` is the string ``"auto"``."""
    return isinstance(value, str) and value == AUTO


def poisson_batch_size(n_samples):
    """Expected batch ``min(n, max(32, round(1.5 sqrt(n))))``.

    About 256 on 30,000 rows (the batch DP-SGD is usually run with), 40 on
    700 rows: the sampling rate ``q = B / n ~ 1.5 / sqrt(n)`` shrinks with
    ``n``, which is where amplification by sampling pays.
    """
    n = int(n_samples)
    return min(n, max(32, int(round(1.5 * math.sqrt(n)))))


def poisson_epochs(n_samples, batch_size, epsilon):
    """Passes of a Poisson mini-batch run: enough steps, at least 10 epochs.

    ``max(10, ceil(S B / n))`` with ``S`` = :data:`MIN_STEPS_PRIVATE` steps
    (private) or :data:`MIN_STEPS_NONPRIVATE` (``epsilon = inf``), capped at
    :data:`MAX_EPOCHS`. The noise of a Poisson-subsampled step is averaged
    over the steps, so more passes cost little utility (the noise multiplier
    grows only like the square root of the number of steps).
    """
    steps = MIN_STEPS_NONPRIVATE if math.isinf(epsilon) else MIN_STEPS_PRIVATE
    epochs = math.ceil(steps * min(batch_size, n_samples) / n_samples)
    return int(min(MAX_EPOCHS, max(MIN_EPOCHS, epochs)))


def full_batch_steps(
    n_samples, n_noisy, epsilon, delta, *, laplace, lo, hi, ratio=NOISE_TO_SIGNAL
):
    """Steps of a full-batch run whose step noise stays ``ratio`` x the signal.

    With ``T`` steps of equal budget and ``D = n_noisy`` noised coordinates:

    * Laplace (pure DP, replace-one, L1 sensitivity ``2 C``): each step has
      ``epsilon / T``, the noise on the mean gradient has scale ``2 C T /
      (epsilon n)`` per coordinate and expected L2 norm about ``sqrt(2 D)``
      times that, so the ratio to ``C`` is ``2 sqrt(2 D) T / (epsilon n)``;
    * Gaussian (add/remove, zCDP ``T / (2 sigma^2)``, ``epsilon ~ sqrt(2 rho
      log(1 / delta))`` for small ``epsilon``): ``sigma ~ sqrt(T log(1 /
      delta)) / epsilon`` and the ratio is ``sigma sqrt(D) / n``.

    The result is the ``T`` at which the ratio equals ``ratio``, clipped to
    ``[lo, hi]`` (``hi`` for ``epsilon = inf``).
    """
    if math.isinf(epsilon):
        return int(hi)
    n, D = float(n_samples), float(max(1, n_noisy))
    if laplace:
        T = ratio * epsilon * n / (2.0 * math.sqrt(2.0 * D))
    else:
        T = (ratio * epsilon * n) ** 2 / (D * math.log(1.0 / max(delta, 1e-300)))
    return int(min(hi, max(lo, math.floor(T))))
