"""The solver contract's data: the plan a solver runs and the result it returns.

:class:`ERMPlan` holds the public quantities of one fit (shapes, loss,
resolved hyperparameters); :class:`SolverResult` what ``solve`` returns;
:func:`row_weights` / :func:`row_class_codes` map ``plan.class_weights`` to
the rows. Re-exported by :mod:`dpestim.solvers.base`.
"""

from dataclasses import dataclass, field

import numpy as np

__all__ = ["ERMPlan", "SolverResult", "row_class_codes", "row_weights"]


@dataclass(frozen=True)
class ERMPlan:
    """The public quantities of one private ERM fit.

    Everything here is known before the data is looked at (``n_samples`` is
    public by convention, see the privacy model) and is all a solver's
    ``make_event`` may depend on.

    Attributes
    ----------
    n_samples : int
    n_features : int
    n_outputs : int
        Rows of the coefficient matrix (1 for binary and single-target models).
    loss : int
        Loss code from :mod:`dpestim.losses`.
    alpha : float
        L2 penalty on the mean loss, ``mean_i loss_i + alpha / 2 ||W||^2``.
    fit_intercept : bool
    clip_norm : float
        L2 bound on each per-example gradient.
    max_iter : int or "auto"
        Number of epochs (passes of expected size ``n_samples``).
    batch_size : int or "auto"
        Expected batch size.
    learning_rate : float or "auto"
    row_norm, row_norm_rms : float or None
        Largest and root-mean-square L2 norm of a row ``(x, 1)`` (``x``
        without the 1 when ``fit_intercept=False``). They are read from the
        data, so they are set only in the plan of a non-private fit with
        ``clip_norm = inf`` (whose step rules need the loss's smoothness,
        :func:`~dpestim.solvers._policy.unclipped_smoothness`) and are
        ``None`` in every private plan.
    blocked : bool
        Whether X is blocked data (Dask, memory-mapped or zarr,
        :mod:`dpestim._distributed`): public (the type of the container,
        not its values). The ``"auto"`` rules then bound the number of steps
        (:func:`~dpestim.solvers._policy.blocked_steps`).

    target_bound : float or None
        Public L2 bound on a (clipped, centred) target row, set by
        :class:`~dpestim.Ridge` from its ``y_bound`` (``None`` without a
        bound); read only by solvers that need it (``"adassp"``).
    intercept_init : tuple of float or None
        Initial intercept of the run (one value per output), or ``None`` for
        the solver's own start (zero). Set by the classifiers' class prior
        (``class_prior``) from DP class proportions, i.e. post-processing of a
        private release that the estimator accounts for separately: it never
        enters :meth:`BaseSolver.make_event` (excluded from the plan's
        equality, hash and repr, so calibration caches ignore it). Read only
        by solvers with ``supports_initial_point = True``; the estimator sets
        it only for them.
    class_weights : tuple of float or None
        Weight of each class's examples (``class_weight``), normalised so
        that the largest is 1, indexed by class code (:func:`row_class_codes`),
        or ``None``. Each example's clipped gradient is multiplied by its
        weight after clipping, so it still has norm at most ``clip_norm``:
        the sensitivity, hence :meth:`BaseSolver.make_event`, does not
        depend on them (excluded from equality, hash and repr like
        ``intercept_init``). Read only by solvers with
        ``supports_class_weight = True``; the estimator refuses
        ``class_weight`` for the others.
    user_alpha : float or None
        The estimator's L2 penalty in the units of the user's ``X``
        (``alpha="auto"`` resolved; ``alpha`` above is in the units of the
        privately rescaled rows), or ``None``. Read by model selection's
        ``Relative(alpha)`` only; excluded from equality, hash and repr.

    ``"auto"`` values are replaced by
    :meth:`BaseSolver.resolve_hyperparameters` before any other hook sees
    the plan.
    """

    n_samples: int
    n_features: int
    n_outputs: int
    loss: int
    alpha: float
    fit_intercept: bool
    clip_norm: float
    max_iter: int
    batch_size: int
    learning_rate: float
    row_norm: float | None = None
    row_norm_rms: float | None = None
    target_bound: float | None = None
    blocked: bool = False
    intercept_init: tuple | None = field(default=None, compare=False, repr=False)
    class_weights: tuple | None = field(default=None, compare=False, repr=False)
    user_alpha: float | None = field(default=None, compare=False, repr=False)


def row_class_codes(Y):
    """Class code of every row of encoded classification targets ``Y``.

    One column (binary): 1 where ``Y > 0`` (``classes_[1]``), else 0; several
    (multinomial one-hot, one-vs-rest ``-+1``): the column of the largest
    entry.
    """
    if Y.shape[1] == 1:
        return (Y[:, 0] > 0).astype(np.int64)
    return np.argmax(Y, axis=1).astype(np.int64)


def row_weights(plan, Y):
    """Per-row weights of ``plan.class_weights`` (float64), or ``None``.

    ``ValueError`` unless every class weight is finite and in ``[0, 1]``
    (the bound the sensitivity relies on).
    """
    if plan.class_weights is None:
        return None
    cw = np.asarray(plan.class_weights, dtype=np.float64)
    if not (np.isfinite(cw).all() and (cw >= 0).all() and (cw <= 1).all()):
        raise ValueError(
            "plan.class_weights must be finite and in [0, 1] (normalised by "
            f"their largest value); got {cw.tolist()}."
        )
    codes = row_class_codes(Y)
    if codes.size and codes.max() >= cw.shape[0]:
        raise ValueError("plan.class_weights has fewer entries than classes.")
    return np.ascontiguousarray(cw[codes])


@dataclass(frozen=True)
class SolverResult:
    """What a solver releases: the model and the event that actually ran.

    Attributes
    ----------
    coef : ndarray of shape (n_outputs, n_features)
    intercept : ndarray of shape (n_outputs,)
    n_iter : int
        Number of noisy steps taken (fixed before fitting).
    dp_event : dp_accounting.DpEvent
    noise_multiplier : float
    diagnostics : dict or None
        Non-private diagnostics, only when explicitly requested.
    attributes : dict
        Solver-specific fitted attributes (names ending in ``_``) that the
        estimator sets on itself, e.g. per-step noise scales. Only public
        quantities or post-processing of what the mechanism released belong
        here: never un-noised data-dependent state such as dual variables.
    """

    coef: np.ndarray
    intercept: np.ndarray
    n_iter: int
    dp_event: object
    noise_multiplier: float
    diagnostics: dict | None = None
    attributes: dict = field(default_factory=dict)

    def __post_init__(self):
        bad = [name for name in self.attributes if not name.endswith("_")]
        if bad:
            raise ValueError(f"fitted attribute names must end in '_': {bad}")
