"""White-box audit of a solver: worst-case datasets, fitted threshold.

The project's own tests audit a solver, not a user's model: the auditor
chooses everything that makes the released model close to one known
mechanism, and runs the solver through the public estimator (its own
calibration, accounting, clipping and noise), so a bug anywhere on that path
shows up as a lower bound above the reported epsilon.
"""

import math
import warnings

import numpy as np
from sklearn.base import clone

from ._audit import _audit, _CanaryScore, _check_audit_args, _kw
from ._gdp import gdp_lower_bound
from ._statistics import _threshold_bounds

__all__ = ["audit_solver"]

_TARGET = 1e6  # keeps the canary's residual, hence its clipped gradient, maximal
_N_PLAN = 200_000  # draws of the reference mechanism used to plan the threshold


def audit_solver(
    solver,
    *,
    epsilon=1.0,
    delta=1e-3,
    max_iter=1,
    n_samples=50,
    n_trials=10_000,
    alpha=0.05,
    accountant="pld",
    penalty=0.0,
    clip_norm=1.0,
    batch_size=None,
    threshold="fitted",
    selection_fraction=0.1,
    random_state=None,
    n_jobs=None,
    bound="dp",
    loss=None,
):
    """Tight lower bound on the epsilon of a solver (white-box audit).

    A :class:`~dpestim.Ridge` (or, for solvers without the squared loss, a
    :class:`~dpestim.LogisticRegression` with canary label 1 and mirror label
    0) with ``solver``, full batch, no intercept and ``max_iter`` iterations
    is fitted ``n_trials`` times on each of two worst-case neighbouring
    datasets of one feature:

    * every ordinary record is ``x = 0`` (its gradient is zero, so only the
      canary moves the coefficient: no other record hides it);
    * the canary is ``x = 4 clip_norm`` with target ``1e6``: its residual
      never changes sign, so its clipped gradient has norm exactly
      ``clip_norm`` in every step (the largest any record can have);
    * add/remove-one solvers: ``n_samples`` zero records, with and without
      the canary; replace-one solvers: ``n_samples`` zero records plus the
      canary, or plus its mirror image (target ``-1e6``), the pair whose
      clipped gradients differ by ``2 clip_norm``, the L1/L2 sensitivity.

    Saddle solvers: the same records in a
    :class:`~dpestim.MinimaxLogisticRegression` with two public groups of
    uniform (public) proportions, the zero records alternating between them
    and the canary in group 0, ``feature_bound = 100 clip_norm`` and the
    canary at ``x = feature_bound``; the solver's ``clip_norm``,
    ``max_iter``, ``batch_size`` and ``alpha`` are set from the arguments,
    ``burn_in = 0`` and unit learning rates (noisy-sgda: one full-batch step
    releases ``theta = -G / n``, the Gaussian mechanism of the jointly
    clipped gradient, all but ``1e-4`` of it primal).

    With ``penalty = 0`` (or one step) the released coefficient is an affine
    function of the sum of the noisy gradients: it is the Gaussian (or
    Laplace) mechanism of the per-step noise composed ``max_iter`` times, the
    worst case of the accountant's bound when ``max_iter = 1``. The score is
    the coefficient times the number of records (public; it undoes the
    ``1 / n`` of the mean loss, so that both datasets get the same noise
    scale), rescaled by two noise-free fits (``epsilon = inf``) to 0 without
    the canary and 1 with it, plus noise.

    The threshold is chosen on a reference mechanism fitted to the first
    ``selection_fraction`` of the trials (two parameters per dataset need
    far fewer trials than the best empirical threshold), and the bound is
    computed on the remaining trials only, so the choice does not bias it.
    A solver whose release is not of the fitted form gets a suboptimal but
    still valid threshold.

    Parameters
    ----------
    solver : str or solver instance
        Anything ``Ridge(solver=...)`` or ``LogisticRegression(solver=...)``
        accepts, or a saddle solver of the minimax estimators
        (``"noisy-sgda"``, ``"dp-smd"``, ``"dp-smd-br"`` or an instance),
        audited through :class:`~dpestim.MinimaxLogisticRegression` (see
        below).
    epsilon, delta : float
        The guarantee requested (``delta`` is ignored by pure-DP solvers,
        whose bound is computed at ``delta = 0``).
    max_iter : int, default=1
        Epochs (full-batch iterations).
    n_samples : int, default=50
        Number of zero records.
    n_trials : int, default=10000
        Fits per dataset (``2 * n_trials`` fits in all, about 0.3 ms each).
    alpha : float, default=0.05
        The bound holds with probability at least ``1 - alpha`` (95%).
    accountant : {"pld", "rdp"}, default="pld"
        The estimator's accountant; "pld" is nearly exact for the Gaussian
        mechanism, "rdp" over-reports epsilon (the audit then cannot be
        tight). The minimax estimators have no such parameter: noisy-sgda
        is accounted with RDP (one Gaussian step at epsilon = 1, delta =
        1e-2 is exactly 0.81-DP, the ceiling of its audit).
    penalty : float, default=0.0
        The estimator's ``alpha`` (solvers needing strong convexity refuse 0).
    clip_norm : float, default=1.0
    batch_size : int or None, default=None
        The estimator's ``batch_size`` (``None``: full batch, ``q = 1``).
    threshold : {"fitted", "split"} or float, default="fitted"
        ``"fitted"``: the first ``selection_fraction`` of the trials fit a
        reference mechanism (Laplace for pure-DP solvers, Gaussian otherwise;
        one noise scale for both datasets) and the threshold maximising its
        expected bound on the other trials is used; ``"split"``: the best
        empirical threshold on half of the trials; a number: that threshold,
        every trial counting for the bound.
    selection_fraction : float, default=0.1
    random_state : int or None
    n_jobs : int or None
    loss : {None, "hinge", "squared_hinge"}, default=None
        ``None``: the estimator above; a hinge loss: a
        :class:`~dpestim.LinearSVC` with that ``loss`` instead of the
        logistic regression (same canary, labels 1 / 0), for solvers that
        fit it (objective perturbation's smooth-hinge surrogates).
    bound : {"dp", "gdp"}, default="dp"
        ``"dp"``: the ``(epsilon, delta)`` bound, valid for any mechanism.
        ``"gdp"``: the Gaussian-DP bound of the same fits
        (:func:`gdp_lower_bound`), far tighter at small delta, valid when the
        release's trade-off curve is Gaussian (exact here for a Gaussian
        solver at full batch with ``penalty = 0``); the ``"dp"`` bound is
        reported beside it. Needs ``delta > 0`` (not for pure-DP solvers).

    Returns
    -------
    result : AuditResult or GaussianAuditResult
        ``GaussianAuditResult`` when ``bound="gdp"``.
    """
    _check_audit_args(n_trials, alpha, selection_fraction)
    if isinstance(n_samples, bool) or not isinstance(n_samples, int | np.integer):
        raise ValueError(f"n_samples must be an integer >= 1, got {n_samples!r}.")
    if n_samples < 1:
        raise ValueError(f"n_samples must be an integer >= 1, got {n_samples!r}.")
    if bound not in ("dp", "gdp"):
        raise ValueError(f"bound must be 'dp' or 'gdp', got {bound!r}.")

    batch = 10 * (n_samples + 1) if batch_size is None else batch_size
    if _saddle_solver(solver) is not None:
        est, x_c, target, mirror, y0 = _saddle_setting(
            _saddle_solver(solver), epsilon, delta, max_iter, batch, penalty, clip_norm
        )
    else:
        est, x_c, target, mirror, y0 = _linear_setting(
            solver,
            epsilon,
            delta,
            max_iter,
            batch,
            penalty,
            clip_norm,
            accountant,
            loss,
        )
    probe = clone(est).set_params(random_state=0)
    zeros = np.zeros((n_samples, 1))
    y0 = np.zeros(n_samples, dtype=y0)
    # Minimax estimators: the zero records alternate between two public
    # groups, the canary (and its mirror) is in group 0.
    groups = np.arange(n_samples) % 2
    fit_out, fit_in = [], []
    if _is_minimax(est):
        fit_out = [{"sensitive_features": groups}]
        fit_in = [{"sensitive_features": np.append(groups, 0)}]
    in_set = (np.vstack([zeros, x_c]), np.append(y0, target), *fit_in)
    with warnings.catch_warnings():
        # Local: these set-up fits warn like the audit's own (tiny dataset,
        # epsilon = inf), which the audit reports through its result.
        warnings.simplefilter("ignore")
        probe.fit(*in_set[:2], **_kw(in_set[2:]))
        if probe.solver_.neighbouring == "replace_one":
            out_set = (in_set[0], np.append(y0, mirror), *fit_in)
        else:
            out_set = (zeros, y0, *fit_out)
        steps_out = clone(probe).fit(*out_set[:2], **_kw(out_set[2:])).n_iter_
        if steps_out != probe.n_iter_:
            raise ValueError(
                f"batch_size={batch_size} gives {steps_out} steps on {len(out_set[1])} "
                f"records and {probe.n_iter_} on {len(in_set[1])}: the audit would "
                "measure the step count (n is public), not the mechanism; choose "
                "batch_size so that both datasets take the same number of steps."
            )
        # Scores are coefficients times the number of records (public): the
        # noise of a mean-loss step is then the same on n and n + 1 records.
        # With a mini-batch the canary's shift depends on the sampling: the
        # mean of 32 noise-free fits (any public affine map is a valid score).
        n_ref = 1 if batch_size is None else 32
        noiseless = clone(est).set_params(epsilon=math.inf)
        w_out, w_in = (
            np.mean(
                [
                    noiseless.set_params(random_state=r)
                    .fit(*data[:2], **_kw(data[2:]))
                    .coef_.ravel()[0]
                    for r in range(n_ref)
                ]
            )
            * len(data[1])
            for data in (out_set, in_set)
        )
        if not _is_gaussian_or_laplace(probe):
            # vertex sampling draws even without noise: the raw score
            # (coefficient x records, the vertex frequencies) is used
            w_out, w_in = 0.0, 1.0
    if not w_in > w_out:
        raise ValueError(
            f"solver {solver!r}: the canary does not move the noise-free model "
            "(the audit needs a solver whose steps follow the gradient)."
        )
    score = _CanaryScore(
        x_c, np.ones(1), 0, offset=w_out, unit=w_in - w_out, per_record=True
    )
    selection = 0.5
    if isinstance(threshold, str):
        if threshold not in ("fitted", "split"):
            raise ValueError(
                f"threshold must be 'fitted', 'split' or a number, got {threshold!r}."
            )
        if threshold == "fitted":
            threshold = _FittedThreshold(laplace=probe.delta_ == 0)
            selection = selection_fraction
        else:
            threshold = None
    if bound == "gdp" and probe.delta_ == 0:
        raise ValueError(
            f"bound='gdp' needs a solver with delta > 0; {solver!r} is pure DP "
            "(its release is not Gaussian): use bound='dp'."
        )
    result = _audit(
        est,
        out_set,
        in_set,
        score,
        kind="gradient (worst case)",
        n_trials=n_trials,
        alpha=alpha,
        delta=None,
        threshold=threshold,
        selection_fraction=selection,
        random_state=random_state,
        n_jobs=n_jobs,
    )
    return gdp_lower_bound(result) if bound == "gdp" else result


def _saddle_solver(solver):
    """The saddle solver class ``solver`` names or is, else ``None``."""
    from ..solvers.saddle import SADDLE_SOLVERS, BaseSaddleSolver

    if isinstance(solver, BaseSaddleSolver):
        return solver
    if isinstance(solver, str) and solver in SADDLE_SOLVERS:
        return SADDLE_SOLVERS[solver]()
    return None


def _is_minimax(est):
    from ..minimax._base import BaseMinimaxModel

    return isinstance(est, BaseMinimaxModel)


def _is_gaussian_or_laplace(model):
    """Is the fitted model deterministic without noise (not vertex sampling)?"""
    from ..solvers import DPSMDSCO
    from ..solvers.saddle import DPSMD, DPSMDBR

    return not isinstance(model.solver_, DPSMDSCO | DPSMD | DPSMDBR)


def _linear_setting(
    solver, epsilon, delta, max_iter, batch, penalty, clip, accountant, loss=None
):
    """Estimator, canary, labels of the linear solvers' worst case."""
    from ..linear_model import LinearSVC, LogisticRegression, Ridge
    from ..solvers import resolve_solver

    # Squared loss when the solver supports it (its gradient is maximal for
    # any model); logistic otherwise (maximal while the canary's margin is
    # small), with labels 1 / 0 for the canary / its mirror.
    resolved = resolve_solver(solver)
    squared = "squared" in resolved.supported_losses and loss is None
    if loss not in (None, "hinge", "squared_hinge"):
        raise ValueError(
            f"loss must be None, 'hinge' or 'squared_hinge', got {loss!r}."
        )
    # y_bound=None: no range taken from the private targets (the default
    # "data" bound is a separate, documented leak and would clip the canary);
    # solvers that need a public bound (adassp) get one the canary reaches
    bound = (-_TARGET, _TARGET) if resolved.name == "adassp" else None
    cls, extra = (
        (Ridge, {"y_bound": bound})
        if squared
        else (LogisticRegression, {"classes": [0, 1]})
        if loss is None
        else (LinearSVC, {"classes": [0, 1], "loss": loss})
    )
    est = cls(
        **extra,
        solver=solver,
        epsilon=epsilon,
        delta=delta,
        max_iter=max_iter,
        # q = 1 for n and n + 1 records unless a batch is asked for
        batch_size=batch,
        learning_rate=1.0,
        alpha=penalty,
        fit_intercept=False,
        clip_norm=clip,
        accountant=accountant,
    )
    x_c = np.array([4.0 * clip])
    if squared:
        return est, x_c, _TARGET, -_TARGET, np.float64
    return est, x_c, 1, 0, np.int64


def _saddle_setting(solver, epsilon, delta, max_iter, batch, penalty, clip):
    """Estimator, canary, labels of the saddle solvers' worst case.

    A :class:`~dpestim.MinimaxLogisticRegression` with two public groups of
    public (uniform) proportions, no intercept and ``feature_bound = 100
    clip_norm``: the canary ``x = feature_bound`` (label 1; mirror label 0)
    has, at ``theta = 0``, a primal gradient of norm ``50 clip_norm`` against
    a dual gradient ``ln 2``, so its jointly clipped gradient (noisy-sgda)
    is all but ``1e-4`` of ``clip_norm`` in the released primal block. The
    solver's own step parameters are set to one full-batch step of rate 1
    (noisy-sgda: ``max_iter`` epochs, ``burn_in = 0``; vertex-sampling
    solvers: ``max_iter`` steps when they take one).
    """
    from ..minimax import MinimaxLogisticRegression

    solver = clone(solver)
    settings = dict(
        max_iter=max_iter,
        batch_size=batch,
        clip_norm=clip,
        learning_rate=1.0,
        alpha=penalty,
        burn_in=0.0,
    )
    own = solver.get_params()
    solver.set_params(**{k: v for k, v in settings.items() if k in own})
    bound = 100.0 * clip
    est = MinimaxLogisticRegression(
        epsilon=epsilon,
        delta=delta,
        classes=[0, 1],
        groups=[0, 1],
        group_proportions="uniform",
        fit_intercept=False,
        feature_bound=bound,
        l1_radius=1.0 / bound,
        solver=solver,
    )
    return est, np.array([bound]), 1, 0, np.int64


class _FittedThreshold:
    """Threshold planned on a reference mechanism fitted to selection trials.

    The scores of the selection trials are fitted by a location-scale model
    (Laplace: median and mean absolute deviation, for pure-DP solvers;
    Gaussian: mean and standard deviation otherwise), and the threshold
    maximising the expected bound of the fitted model for ``n_eval``
    evaluation trials is returned. Fitting two parameters per dataset needs
    far fewer trials than choosing the best empirical threshold, and, unlike
    a threshold planned from the *reported* noise, it follows the noise
    actually added (a solver adding half its noise is caught).
    """

    def __init__(self, laplace):
        self.laplace = laplace

    def __call__(self, out, inn, delta, alpha, n_eval):
        rng = np.random.default_rng(20_130)  # fixed: the plan uses no audit draw
        z = rng.laplace(size=_N_PLAN) if self.laplace else rng.normal(size=_N_PLAN)
        # One scale for both datasets: the mechanism adds the same noise to
        # each (separate scales would let estimation error fake a tail).
        if self.laplace:
            locs = [float(np.median(s)) for s in (out, inn)]
            dev = [np.abs(s - c) for s, c in zip((out, inn), locs)]
            scale = float(np.mean(np.concatenate(dev)))
        else:
            locs = [float(np.mean(s)) for s in (out, inn)]
            dev = [s - c for s, c in zip((out, inn), locs)]
            scale = float(np.sqrt(np.mean(np.concatenate(dev) ** 2)))
        sim_out, sim_in = (c + scale * z for c in locs)
        tail = np.geomspace(0.5, 20.0 / _N_PLAN, 400)
        cands = np.concatenate(
            [np.quantile(sim_out, 1.0 - tail), np.quantile(sim_in, tail)]
        )
        bounds = _threshold_bounds(sim_out, sim_in, cands, delta, alpha, n_eval)
        return float(cands[int(np.argmax(bounds))])
