"""Docstring fragments shared by the estimators (one source, no copies)."""

PRIVACY_PARAMS = """epsilon : float or None, default=1.0
        Privacy budget. ``numpy.inf`` gives the non-private limit (no noise,
        and ``clip_norm=inf`` allowed), which matches scikit-learn's optimum.
        Set ``epsilon=None`` to fix ``noise_multiplier`` instead.
    delta : float, default=1e-5
        Probability with which the epsilon guarantee may fail. Must be > 0
        for Gaussian-mechanism solvers; keep it well below ``1 / n_samples``
        (a :class:`~dpestim.PrivacyBudgetWarning` says when it is not).
    noise_multiplier : float or None, default=None
        Alternative to ``epsilon``: the noise standard deviation in units of
        the L2 sensitivity. The resulting epsilon at ``delta`` is reported in
        ``epsilon_``. Giving both ``epsilon`` and ``noise_multiplier`` is an
        error.
    clip_norm : float, default=1.0
        L2 bound on each per-example gradient (coefficients and intercept
        together). It sets the sensitivity; it must not be chosen by looking at
        the private data (see the privacy model page).
    alpha : float, default=1e-4
        L2 penalty on the mean loss: the objective is
        ``mean_i loss_i + alpha / 2 * ||coef||^2`` (the intercept is not
        penalised). ``LogisticRegression(C=...)`` of scikit-learn corresponds to
        ``alpha = 1 / (C * n_samples)`` and ``Ridge(alpha=a)`` to
        ``alpha = a / n_samples``.
    fit_intercept : bool, default=True
        Whether to fit an intercept (its gradient is clipped together with the
        coefficients' gradient).
    max_iter : int, default=10
        Number of epochs, fixed before fitting (there is no data-dependent
        stopping and no ``tol``). For ``solver="dp-sgd"`` the number of steps
        is ``ceil(max_iter / q)`` with ``q = min(1, batch_size / n_samples)``;
        for ``"dp-gd"`` it is ``max_iter``.
    batch_size : int, default=256
        Expected batch size of Poisson sampling: every record enters each step
        independently with probability ``min(1, batch_size / n_samples)``.
    learning_rate : float, default=0.5
        Constant step size.
    solver : str or solver object, default="dp-sgd"
        The private algorithm: a registry name (``"dp-sgd"``, ``"dp-gd"``; see
        :data:`dpestim.solvers.SOLVERS`) or a solver instance whose parameters
        can be searched as ``solver__<name>``.
    accountant : {"rdp", "pld"}, default="rdp"
        Privacy accountant of ``dp_accounting`` used for calibration and for
        the reported epsilon."""

COMMON_TAIL = """random_state : int, numpy.random.Generator or None, default=None
        Source of the sampling and noise randomness. ``None`` draws fresh OS
        entropy (use it for real releases); an int gives bit-reproducible fits.
    verbose : int, default=0
        Print the plan (steps, noise, epsilon) before fitting. Nothing computed
        from the private data is printed."""

CLASSES_PARAM = """classes : array-like of shape (n_classes,) or None, default=None
        The label set, given as public knowledge. If None it is inferred from
        ``y``, which releases the set of labels present in the private data
        through ``classes_``: a :class:`~dpestim.PrivacyLeakWarning` is raised.
        Labels in ``y`` outside ``classes`` are an error."""

ATTRIBUTES = """coef_ : ndarray
        Coefficients.
    intercept_ : ndarray or float
        Intercept (zero when ``fit_intercept=False``).
    n_iter_ : int
        Number of noisy steps taken.
    n_features_in_ : int
        Number of features seen during fit.
    noise_multiplier_ : float
        Noise standard deviation in units of ``clip_norm`` (0 if non-private).
    epsilon_ : float
        Epsilon of the mechanism that ran, at ``delta_``, by ``accountant``.
    delta_ : float
    dp_event_ : dp_accounting.DpEvent
        The mechanism that ran, as an immutable dp_accounting event.
    solver_ : BaseSolver
        The solver object used (a fresh instance; ``solver`` is unchanged)."""
