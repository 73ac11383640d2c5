"""Black-box privacy audit of a dpestim estimator (membership of one canary)."""

import math
import warnings

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed
from sklearn.base import ClassifierMixin, clone, is_classifier
from sklearn.utils.validation import check_X_y

from ..utils.validation import data_errors_without_values
from ._statistics import (
    AuditResult,
    _best_threshold,
    clopper_pearson_upper,
    epsilon_lower_bound,
)

__all__ = [
    "AuditResult",
    "audit_estimator",
    "clopper_pearson_upper",
    "epsilon_lower_bound",
]

_CANARIES = ("gradient", "input")
_RELATIONS = ("add_or_remove_one", "replace_one")


def _craft_canary(estimator, X, y, kind, scale):
    """Return ``(x_c, y_c, direction, j)`` for the requested canary kind.

    The canary's descent direction on the model outputs at the initial model
    (``direction``, length n_outputs) is the direction its clipped gradient
    pushes the coefficients of feature ``j``.
    """
    n, d = X.shape
    col_energy = (
        np.asarray(X.multiply(X).sum(axis=0)).ravel()
        if sp.issparse(X)
        else np.einsum("ij,ij->j", X, X)
    )
    clip = getattr(estimator, "clip_norm", 1.0)
    # an audited fit is private: clip_norm="auto" is the private clip norm
    clip = 1.0 if isinstance(clip, str) else float(clip)
    if not math.isfinite(clip):
        clip = 1.0
    if is_classifier(estimator):
        classes = np.asarray(estimator.classes)
        label = classes[-1]
        k = classes.shape[0]
        direction = np.ones(1) if k == 2 else np.eye(k)[-1] - 1.0 / k
    else:
        y2 = np.asarray(y, dtype=float).reshape(n, -1)
        # A target far outside the data keeps the residual, hence the clipped
        # gradient, large and of fixed sign during the whole run.
        big = 1e3 * (1.0 + float(np.max(np.abs(y2))) if y2.size else 1.0)
        label = np.full(y2.shape[1], big)
        label = label[0] if np.ndim(y) == 1 else label
        direction = np.ones(y2.shape[1])
    direction = direction / np.linalg.norm(direction)
    if kind == "gradient":
        # A "Dirac" canary: all its mass on the least used feature, so its
        # clipped gradient moves one column of coef_ that the other records
        # barely touch.
        j = int(np.argmin(col_energy))
        x_c = np.zeros(d)
        x_c[j] = scale * clip
        return x_c, label, direction, j
    # "input": an out-of-distribution point along the direction of least
    # variance, as far out as the largest record; scored by its margin.
    Xd = X.toarray() if sp.issparse(X) else X
    centred = Xd - Xd.mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    v = vt[-1] if vt.shape[0] == d else np.eye(d)[-1]
    radius = max(float(np.sqrt(np.max(np.einsum("ij,ij->i", Xd, Xd)))), 1.0)
    return scale * radius * v, label, direction, None


class _CanaryScore:
    """Membership score: how far the model moved in the canary's direction.

    ``j`` given: the released coefficients of feature ``j`` projected on
    ``direction`` (gradient canary); otherwise the model's output on ``x_c``
    projected on ``direction``. ``offset`` and ``unit`` rescale the score
    (a public affine map, which changes no error count). ``per_record``:
    the raw score is first multiplied by the number of records of the
    dataset fitted (public), which undoes the ``1 / n`` of a mean-loss
    gradient, so that fits on ``n`` and ``n + 1`` records have the same noise
    scale.
    """

    def __init__(self, x_c, direction, j, offset=0.0, unit=1.0, per_record=False):
        self.x_c, self.direction, self.j = x_c, direction, j
        self.offset, self.unit, self.per_record = offset, unit, per_record

    def __call__(self, model, n_records=1):
        if self.j is not None:
            W = np.atleast_2d(model.coef_)
            raw = float(W[:, self.j] @ self.direction)
        else:
            x = self.x_c[None, :]
            out = (
                model.decision_function(x) if is_classifier(model) else model.predict(x)
            )
            raw = float(np.ravel(out) @ self.direction)
        if self.per_record:
            raw *= n_records
        return (raw - self.offset) / self.unit


def _fit_scores(template, datasets, seeds, score):
    """Fit ``template`` on each dataset with each seed; return scores, epsilon.

    A dataset is ``(X, y)`` or ``(X, y, fit_params)`` (for example
    ``{"sensitive_features": a}`` for the minimax and fairness estimators).
    """
    scores, eps, steps, deltas = [], [], [], []
    with warnings.catch_warnings():
        # Local to this call: the audit's many fits warn the same way (for
        # example delta >= 1/n on a tiny audit dataset) and the warnings are
        # reported once by audit_estimator.
        warnings.simplefilter("ignore")
        model = clone(template)
        for (X, y, *fit_params), seed in zip(datasets, seeds):
            model.set_params(random_state=int(seed)).fit(X, y, **_kw(fit_params))
            scores.append(score(model, X.shape[0]))
            eps.append(model.epsilon_)
            steps.append(model.n_iter_)
            deltas.append(getattr(model, "delta_", np.nan))
    return scores, eps, steps, deltas


def _kw(fit_params):
    return fit_params[0] if fit_params else {}


def audit_estimator(
    estimator,
    X,
    y,
    *,
    sensitive_features=None,
    canary_group=None,
    canary="gradient",
    n_trials=1000,
    alpha=0.05,
    delta=None,
    canary_scale=4.0,
    selection_fraction=0.5,
    neighbouring=None,
    threshold=None,
    random_state=None,
    n_jobs=None,
):
    """Empirical lower bound on the epsilon of an estimator's training.

    The "audit my model class" mode: the estimator (its parameters as given,
    including ``epsilon``, ``delta`` and ``solver``) is fitted ``n_trials``
    times on each of two neighbouring datasets under the solver's own
    relation: ``(X, y)`` and ``(X, y)`` plus one crafted canary record
    (add/remove-one), or ``(X, y)`` plus the canary and ``(X, y)`` plus its
    mirror image, the same features with the label whose gradient points the
    other way (replace-one, the Laplace solvers), with independent seeds. A
    membership score is computed on each released model; a threshold on it
    is chosen on the first ``selection_fraction`` of the trials, and the
    false-positive and false-negative counts of the test
    "score > threshold" on the remaining trials give, through Clopper-Pearson
    intervals, a lower bound on epsilon that holds with probability
    ``1 - alpha`` (Jagielski et al., 2020; Nasr et al., 2021).

    Parameters
    ----------
    estimator : dpestim estimator
        Unfitted :class:`~dpestim.LogisticRegression`, :class:`~dpestim.Ridge`,
        :class:`~dpestim.LinearSVC` (or any estimator with the same API).
        Classifiers must be given ``classes=``. It is cloned, never modified.
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        The dataset the canary is added to. The tightest audits use data whose
        least used feature is (close to) all zero.
    y : array-like of shape (n_samples,) or (n_samples, n_targets)
    sensitive_features : array-like of shape (n_samples,) or None, default=None
        Group labels, passed to ``fit`` (required by the minimax and fairness
        estimators, :class:`~dpestim.MinimaxLogisticRegression`,
        :class:`~dpestim.MinimaxRegressor`,
        :class:`~dpestim.FairLogisticRegression`); the canary (and its mirror)
        get ``canary_group``.
    canary_group : object or None, default=None
        Group label of the canary; ``None``: the smallest group of
        ``sensitive_features`` (where one record weighs most).
    canary : {"gradient", "input"} or tuple (x, y), default="gradient"
        ``"gradient"``: a Dirac canary, ``canary_scale * clip_norm`` on the
        least used feature, labelled with the last class (classifiers) or a
        target far outside ``y`` (regression), scored by the released
        coefficient of that feature. ``"input"``: an out-of-distribution
        point along the direction of least variance of ``X``, scored by the
        released model's output on it. A tuple ``(x, y)`` gives your own
        record, scored as ``"input"``.
    n_trials : int, default=1000
        Fits per dataset; the audit runs ``2 * n_trials`` fits.
    alpha : float, default=0.05
        The bound holds with probability at least ``1 - alpha``.
    delta : float or None, default=None
        Delta of the bound; ``None`` uses the delta of the guarantee the fits
        report (``delta_``: the estimator's ``delta``, or 0 for pure-DP
        solvers).
    canary_scale : float, default=4.0
        Norm of the canary's features in units of ``clip_norm`` (gradient
        canary) or of the largest record norm (input canary).
    selection_fraction : float, default=0.5
        Fraction of the trials used to choose the threshold. The bound uses
        only the others, so choosing the threshold does not bias it.
    neighbouring : {"add_or_remove_one", "replace_one"} or None, default=None
        Relation of the two datasets; ``None`` uses the solver's
        ``neighbouring`` (the relation its epsilon is accounted under).
    threshold : float or None, default=None
        A threshold on the score fixed in advance (from public quantities
        only, for example the reported noise, see :func:`audit_solver`): then
        every trial is used for the bound and ``selection_fraction`` is
        ignored.
    random_state : int, Generator or None, default=None
        Seeds of the fits (``None``: fresh entropy).
    n_jobs : int or None, default=None
        Parallel fits through joblib.

    Returns
    -------
    result : AuditResult

    Notes
    -----
    **Not private.** The audit is a test of the estimator for its developer
    or the data holder, not a release: its ``2 * n_trials`` fits are not
    accounted, the ``"gradient"`` canary's feature is the least used column
    of ``X`` and the ``"input"`` canary is built from the exact largest row
    norm and direction of least variance of ``X``, so the returned scores
    and threshold depend on single records without any bound. Run it on
    public or synthetic data (:func:`audit_solver` does), or keep its result
    to yourself; never publish it for private ``X``.

    The audit gives a *lower* bound: it can prove that a guarantee is false
    (``result.violation``), never that it holds. It sees only the released
    model, so it is loose for mechanisms whose privacy comes from hiding the
    intermediate steps, and the bound it can reach is limited by the number
    of trials (about ``log(n_trials)``). It costs ``2 * n_trials`` fits;
    noise calibration and accounting are cached, so each fit costs only the
    optimisation itself.

    The tightest audits use a worst-case dataset (records whose gradients
    vanish on the canary's feature), full-batch training and few steps, where
    the released coefficient is close to one Gaussian or Laplace mechanism;
    :func:`audit_solver` builds that setting.
    """
    _check_audit_args(n_trials, alpha, selection_fraction)
    if not (isinstance(canary_scale, int | float) and canary_scale > 0):
        raise ValueError(f"canary_scale must be positive, got {canary_scale!r}.")
    cls = type(estimator)
    if (
        cls.__module__.split(".")[0] != "dpestim"
        or not hasattr(estimator, "delta")
        or hasattr(estimator, "param_distributions")  # a private search
    ):
        raise TypeError(
            "audit_estimator audits one dpestim estimator (LogisticRegression, "
            "LinearSVC, Ridge or a minimax estimator, unfitted: it is cloned "
            f"and fitted 2 x n_trials times); got {cls.__module__}.{cls.__name__}."
            " A search or a Pipeline composes several mechanisms: audit its "
            "estimator instead."
        )
    if (
        isinstance(estimator, ClassifierMixin)
        and getattr(estimator, "classes", None) is None
    ):
        raise ValueError(
            "Auditing a classifier needs classes= (the public label set); with "
            "classes=None the label set itself leaks."
        )
    with data_errors_without_values():
        X, y = check_X_y(
            X, y, accept_sparse="csr", dtype=np.float64, multi_output=True,
            y_numeric=False,
        )  # fmt: skip
    if delta is None:
        delta = float(estimator.delta)
    if isinstance(canary, tuple):
        if len(canary) != 2:
            raise ValueError("canary=(x, y) must be a pair.")
        x_c = np.asarray(canary[0], dtype=np.float64).ravel()
        if x_c.shape[0] != X.shape[1]:
            raise ValueError(
                f"canary x has {x_c.shape[0]} features, X has {X.shape[1]}."
            )
        _, y_c, direction, _ = _craft_canary(estimator, X, y, "input", canary_scale)
        y_c, j, kind = canary[1], None, "custom"
        if is_classifier(estimator):
            classes = np.asarray(estimator.classes)
            if y_c not in classes:
                raise ValueError(f"canary label {y_c!r} is not in classes.")
            k = classes.shape[0]
            idx = int(np.flatnonzero(classes == y_c)[0])
            direction = (
                np.array([1.0 if idx == 1 else -1.0])
                if k == 2
                else (np.eye(k)[idx] - 1.0 / k) / np.linalg.norm(np.eye(k)[idx] - 1 / k)
            )
        else:
            # The canary pulls each output towards its target: score the
            # prediction in the direction of the target relative to y's mean.
            y2 = np.asarray(y, dtype=float).reshape(X.shape[0], -1)
            shift = np.ravel(np.asarray(y_c, dtype=float)) - y2.mean(axis=0)
            direction = np.where(shift >= 0, 1.0, -1.0) / math.sqrt(y2.shape[1])
    elif canary in _CANARIES:
        kind = canary
        x_c, y_c, direction, j = _craft_canary(estimator, X, y, canary, canary_scale)
    else:
        raise ValueError(
            f"canary must be one of {_CANARIES} or a pair (x, y), got {canary!r}."
        )

    if neighbouring is None:
        neighbouring = _solver_relation(estimator, X)
    if neighbouring not in _RELATIONS:
        raise ValueError(
            f"neighbouring must be one of {_RELATIONS} or None, got {neighbouring!r}."
        )
    groups = _canary_groups(sensitive_features, canary_group, X.shape[0])
    out_set = (X, y, *groups[:1])
    if neighbouring == "replace_one":
        # Worst case under replacement: the record is swapped for its mirror
        # image, whose clipped gradient points the other way.
        y_anti = _mirror_label(estimator, y, y_c)
        out_set = (*_append(X, y, x_c, y_anti), *groups[1:])
    in_set = (*_append(X, y, x_c, y_c), *groups[1:])
    score = _CanaryScore(x_c, direction, j)
    return _audit(
        estimator,
        out_set,
        in_set,
        score,
        kind=kind,
        n_trials=n_trials,
        alpha=alpha,
        delta=delta,
        threshold=threshold,
        selection_fraction=selection_fraction,
        random_state=random_state,
        n_jobs=n_jobs,
    )


def _solver_relation(estimator, X):
    """The neighbouring relation the estimator's solver is accounted under.

    ``solver="auto"`` is resolved as the fit would resolve it on ``X``
    (public quantities only: :mod:`dpestim.solvers._auto`).
    """
    solver = getattr(estimator, "solver", None)
    if isinstance(solver, str) and solver == "auto":
        from ..solvers._auto import SADDLE_AUTO, choose_solver, public_facts

        if hasattr(estimator, "_loss_name"):  # the linear estimators
            solver = choose_solver(public_facts(estimator, X, False))[0]
        else:  # the minimax / fairness estimators
            solver = SADDLE_AUTO[0]
    if isinstance(solver, str):
        from ..solvers import SOLVERS, resolve_solver

        if solver not in SOLVERS:
            # a saddle solver of the minimax / fairness estimators
            from ..solvers.saddle import SADDLE_SOLVERS

            if solver in SADDLE_SOLVERS:
                return SADDLE_SOLVERS[solver].neighbouring
        return resolve_solver(solver).neighbouring
    return getattr(solver, "neighbouring", "add_or_remove_one")


def _canary_groups(sensitive_features, canary_group, n):
    """``[]``, or ``[fit params without the canary, fit params with it]``."""
    if sensitive_features is None:
        if canary_group is not None:
            raise ValueError("canary_group needs sensitive_features.")
        return []
    a = np.asarray(sensitive_features, dtype=object)
    if a.ndim != 1 or a.shape[0] != n:
        raise ValueError(
            f"sensitive_features must have one label per sample ({n}), got shape "
            f"{np.shape(sensitive_features)}."
        )
    if canary_group is None:
        labels, counts = np.unique(a.astype(str), return_counts=True)
        smallest = labels[int(np.argmin(counts))]
        canary_group = a[int(np.flatnonzero(a.astype(str) == smallest)[0])]
    with_canary = np.append(a, np.array([canary_group], dtype=object))
    return [{"sensitive_features": a}, {"sensitive_features": with_canary}]


def _check_audit_args(n_trials, alpha, selection_fraction):
    if isinstance(n_trials, bool) or not isinstance(n_trials, int | np.integer):
        raise ValueError(f"n_trials must be an integer >= 4, got {n_trials!r}.")
    if n_trials < 4:
        raise ValueError(f"n_trials must be an integer >= 4, got {n_trials!r}.")
    if not (isinstance(alpha, int | float) and 0 < alpha < 1):
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}.")
    if not (isinstance(selection_fraction, int | float) and 0 < selection_fraction < 1):
        raise ValueError(
            f"selection_fraction must be in (0, 1), got {selection_fraction!r}."
        )


def _mirror_label(estimator, y, y_c):
    """The label whose gradient opposes the canary's (replace-one pairs)."""
    if is_classifier(estimator):
        classes = np.asarray(estimator.classes)
        return classes[0] if y_c != classes[0] else classes[-1]
    return -np.asarray(y_c, dtype=float) if np.ndim(y_c) else -float(y_c)


def _append(X, y, x_c, y_c):
    if sp.issparse(X):
        X_new = sp.vstack([X, sp.csr_matrix(x_c[None, :])], format="csr")
    else:
        X_new = np.vstack([X, x_c[None, :]])
    if np.ndim(y) == 2:
        return X_new, np.vstack([y, np.atleast_2d(y_c)])
    y_arr = np.asarray(y)
    return X_new, np.concatenate([y_arr, np.asarray([y_c], dtype=y_arr.dtype)])


def _audit(
    estimator,
    out_set,
    in_set,
    score,
    *,
    kind,
    n_trials,
    alpha,
    delta,
    threshold,
    selection_fraction,
    random_state,
    n_jobs,
):
    """Fit on both datasets, score every release, bound epsilon."""
    ss = np.random.SeedSequence(
        random_state.integers(2**63)
        if isinstance(random_state, np.random.Generator)
        else random_state
    )
    seeds = ss.generate_state(2 * n_trials, dtype=np.uint32)
    datasets = [out_set, in_set] * n_trials  # interleaved out / in
    template = clone(estimator)
    n_chunks = 1 if n_jobs in (None, 1) else 4 * max(1, abs(int(n_jobs)))
    bounds = np.linspace(0, 2 * n_trials, n_chunks + 1).astype(int)
    bounds += bounds % 2  # keep out/in pairs together
    chunks = [(a, b) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]
    parts = Parallel(n_jobs=n_jobs)(
        delayed(_fit_scores)(template, datasets[a:b], seeds[a:b], score)
        for a, b in chunks
    )
    scores = np.array([s for p in parts for s in p[0]])
    eps = [e for p in parts for e in p[1]]
    steps = [t for p in parts for t in p[2]]
    deltas = [t for p in parts for t in p[3]]
    out, inn = scores[0::2], scores[1::2]
    epsilon = float(max(eps[1::2]))
    if delta is None:
        # The delta at which the reported epsilon holds (0 for pure-DP solvers).
        delta = float(np.nanmax(deltas[1::2]))
        if math.isnan(delta):
            delta = float(estimator.delta)
    if set(steps[0::2]) != set(steps[1::2]):
        warnings.warn(
            f"The fits ran {sorted(set(steps[0::2]))} steps without the canary and "
            f"{sorted(set(steps[1::2]))} with it: the number of steps depends on "
            "n_samples, which dpestim treats as public, and the audit also measures "
            "that difference. Choose batch_size and max_iter so that n and n + 1 "
            "give the same number of steps.",
            UserWarning,
            stacklevel=3,
        )
    return _result_from_scores(
        out,
        inn,
        epsilon=epsilon,
        delta=delta,
        alpha=alpha,
        threshold=threshold,
        selection_fraction=selection_fraction,
        kind=kind,
    )


def _result_from_scores(
    out, inn, *, epsilon, delta, alpha, threshold, selection_fraction, kind
):
    """Threshold the scores of the fits without / with the canary; bound epsilon.

    ``threshold``: a number, ``None`` (best empirical threshold on the
    first ``selection_fraction`` of the trials) or a callable choosing it
    from those trials; the bound uses the other trials only.
    """
    out, inn = np.asarray(out, dtype=float), np.asarray(inn, dtype=float)
    n_trials = out.shape[0]
    if threshold is None or callable(threshold):
        n_sel = min(max(1, int(round(selection_fraction * n_trials))), n_trials - 1)
        choose = _best_threshold if threshold is None else threshold
        threshold = choose(out[:n_sel], inn[:n_sel], delta, alpha, n_trials - n_sel)
    else:
        n_sel = 0
    out_eval, in_eval = out[n_sel:], inn[n_sel:]
    n_eval = out_eval.shape[0]
    fp = int(np.sum(out_eval > threshold))
    fn = int(np.sum(in_eval <= threshold))
    lower, fpr_u, fnr_u = epsilon_lower_bound(fp, fn, n_eval, delta, alpha)
    return AuditResult(
        epsilon_lower_bound=lower,
        epsilon=epsilon,
        delta=float(delta),
        alpha=float(alpha),
        canary=kind,
        n_trials=int(n_trials),
        n_eval=int(n_eval),
        threshold=float(threshold),
        false_positives=fp,
        false_negatives=fn,
        fpr_upper=fpr_u,
        fnr_upper=fnr_u,
        scores_out=out,
        scores_in=inn,
    )
