"""Integer codes of the losses (numba kernels branch on these)."""

LOGISTIC = 0
SQUARED = 1
HINGE = 2
SQUARED_HINGE = 3
MULTINOMIAL = 4

#: Code -> name, as used in solver capability declarations and error messages.
LOSS_NAMES = {
    LOGISTIC: "logistic",
    SQUARED: "squared",
    HINGE: "hinge",
    SQUARED_HINGE: "squared_hinge",
    MULTINOMIAL: "multinomial",
}

#: Losses with a Lipschitz gradient (required by the accelerated solvers).
SMOOTH_LOSSES = frozenset({LOGISTIC, SQUARED, SQUARED_HINGE, MULTINOMIAL})
