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
    clip_norm : float or "auto", default="auto"
        L2 bound on each per-example gradient (coefficients and intercept
        together). It sets the sensitivity; it must not be chosen by looking at
        the private data (see the privacy model page). ``"auto"``: 1.0 for a
        private fit; ``inf`` (no clipping: scikit-learn's objective) for a
        non-private one (``epsilon=inf`` or ``noise_multiplier=0``), whose
        ``"auto"`` step rule then reads the data's row norms (only then; the
        report says the fit is not private). A float is in the units of ``X``
        as given and turns the private row scale off (``feature_scale``);
        :class:`~dpestim.model_selection.AutoUnits` ``(c)`` clips at ``c`` in
        the units of the ``"auto"`` fit (the row scale is kept;
        ``AutoUnits(1.0)`` is the ``"auto"`` fit: what a search's
        ``Relative`` factor of the clip resolves to). Resolved value: ``clip_norm_``.
    alpha : float or "auto", default="auto"
        L2 penalty on the mean loss: the objective is
        ``mean_i loss_i + alpha / 2 * ||coef||^2`` (the intercept is not
        penalised). ``LogisticRegression(C=...)`` of scikit-learn corresponds to
        ``alpha = 1 / (C * n_samples)`` and ``Ridge(alpha=a)`` to
        ``alpha = a / n_samples``. A float is the penalty of that objective in
        the units of ``X`` as given. ``"auto"``: ``1e-4`` in the units the
        ``"auto"`` rules run in, i.e. on the rows ``x / s`` of
        ``feature_scale``, which is ``1e-4 s^2`` in the units of ``X`` (the
        same penalty relative to the loss whatever the scale of ``X``, also
        at ``epsilon=inf``; exactly ``1e-4`` when no scale is estimated,
        ``s = 1``). Resolved
        value: ``alpha_`` (and ``hyperparameters_["alpha"]``, in the
        rescaled units).
    fit_intercept : bool, default=True
        Whether to fit an intercept (its gradient is clipped together with the
        coefficients' gradient).
    max_iter : int or "auto", default="auto"
        Number of epochs (passes of expected size ``n_samples``), fixed before
        fitting (there is no data-dependent stopping and no ``tol``). For the
        Poisson mini-batch solvers (``"dp-sgd"`` and most others) the number
        of steps is ``ceil(max_iter / q)`` with ``q = min(1, batch_size /
        n_samples)``; for the full-batch solvers (``"dp-gd"``, ``"dp-hb"``,
        ``"dp-nag"``, ``"dp-masg"`` and the "-opt" variants) one epoch is one
        iteration, so ``max_iter`` is the number of iterations (with their
        own ``batch_size=m`` an iteration is a pass over ``m`` records).
        ``"auto"``: chosen by the solver from public quantities only (``n``,
        ``d``, outputs, ``epsilon``, ``delta``, ``clip_norm``; never the data)
        and reported in ``max_iter_``, ``hyperparameters_`` and
        :meth:`privacy_report`; see the solver guide's "Defaults" section.
    batch_size : int or "auto", default="auto"
        Expected batch size of Poisson sampling: every record enters each step
        independently with probability ``min(1, batch_size / n_samples)``.
        ``"auto"``: about ``1.5 sqrt(n_samples)`` (at least 32; larger when
        the budget allows few steps or, for a classifier, when ``epsilon
        n`` is small: see the solver guide's "Defaults"). Full-batch
        solvers do not use it.
    learning_rate : float or "auto", default="auto"
        Constant step size (the base of the schedule for scheduled solvers).
        ``"auto"``: 0.5 for the Poisson mini-batch solvers (smaller for a
        classifier on small data, whose run is lengthened to 200 steps), ``10 /
        clip_norm`` for dp-gd (classifiers take larger steps when the
        budget allows few iterations, decaying linearly around that mean
        over a run of 10-99 iterations); for the momentum methods, a private
        fit takes dp-gd's step times ``1 - beta = min(0.9, 4 / max_iter)``
        and sets the momentum ``beta`` to match (``0.3`` without noise);
        dp-scd does
        not use it; for seq-dp-scd (``clip_mode="auto"``) it is the bound on
        each dual update per unit ``clip_norm`` (see
        :class:`~dpestim.solvers.SeqDPSCD`). Without clipping
        (``epsilon=inf``) about ``1 / L``, ``L`` the loss's smoothness from
        the row norms (see the solver guide's "Defaults").
    solver : str or solver object, default="auto"
        The private algorithm: a registry name (``"dp-sgd"``, ``"dp-gd"``; see
        :data:`dpestim.solvers.SOLVERS`) or a solver instance whose parameters
        can be searched as ``solver__<name>``. ``"auto"`` (the default):
        chosen by a public rule table (:mod:`dpestim.solvers._auto`):
        ``"dp-nag"`` for :class:`~dpestim.Ridge` and
        :class:`~dpestim.LinearSVC` with ``delta=0`` (pure DP), ``"dp-gd"``
        for :class:`~dpestim.LogisticRegression` with ``delta=0``,
        ``"adassp"`` for a
        :class:`~dpestim.Ridge` that is non-private (``epsilon=inf``; the
        exact ridge solution), ``"adp-sgd"`` for a private ``Ridge`` with
        ``n <= 3000`` and ``epsilon >= 1``, ``"dp-sgd"`` otherwise (blocked
        input included); the
        choice and its reason are in ``hyperparameters_["solver"]`` and the
        privacy report. It never picks the research solvers (the solver
        guide's "Which solver to use"). An explicit name is used as given.
    accountant : {"rdp", "pld"}, default="rdp"
        Privacy accountant of ``dp_accounting`` used for calibration and for
        the reported epsilon."""

COMMON_TAIL = """random_state : int, numpy.random.Generator or None, default=None
        Source of the sampling and noise randomness. ``None`` draws fresh OS
        entropy (use it for real releases); an int gives bit-reproducible fits.
    verbose : int, default=0
        Print the plan (steps, noise, epsilon) before fitting. Nothing computed
        from the private data is printed.
    feature_scale : "auto", float or None, default="auto"
        Unit of the rows the ``"auto"`` rules run in. ``"auto"``: a private
        median ``m`` of the norms of the nonzero rows (empty rows, common in
        sparse data, say nothing of the scale; exponential mechanism on a public
        geometric grid, 8 bins per factor 2 over ``2^-40 .. 2^40``, about
        ``1e-12 .. 1e12``: a draw beyond it is the grid's edge and the fit
        warns (a ``UtilityWarning``: rescale ``X`` by a public constant); part of
        ``scale_share``), and the fit runs on ``x / s`` with ``s = m /
        2.95`` (the median row norm the rules were calibrated at; with more
        than two classes 8.36 for the softmax and 4.18 for LinearSVC with the
        dp-sgd family): the same
        ``clip_norm``, steps and noise see the same problem at any scale of
        ``X``. For a private fit with ``epsilon`` given,
        ``clip_norm="auto"`` and in-memory ``X``; a non-private one
        (``epsilon=inf``, same conditions) reads the median exactly (the
        grid bin the private draw tends to as ``epsilon`` grows, or the exact
        median beyond the grid's range; the report
        says it is not private), so it is the limit of the private fits at
        any scale of ``X``; otherwise, and when ``n``
        is too small for a reliable estimate (``hyperparameters_`` says so),
        ``s = 1``. A float: a public ``s`` (no cost). ``None``: ``s = 1``
        (the behaviour before this option). One scale serves the whole row:
        columns on very different scales (a count in thousands beside
        features of order one) need per-column standardisation first, e.g.
        :class:`dpestim.preprocessing.StandardScaler` with public bounds in a
        pipeline. The objective is kept: the fit
        minimises over ``w' = s w`` with ``alpha' = alpha / s^2`` and
        ``coef_ = w' / s`` (so ``epsilon=inf`` still gives scikit-learn's
        optimum; ``alpha="auto"`` is instead ``1e-4`` in the units of
        ``x / s``). Resolved value: ``feature_scale_``.
    scale_share : float in (0, 1), default=0.05
        Share of ``epsilon`` spent on the private scale estimates of one fit
        (``feature_scale="auto"``; Ridge's ``y_bound="auto"``), split equally
        between their draws. Each draw is pure DP (under both neighbouring
        relations), composed into ``dp_event_``, listed in
        :meth:`privacy_report` with its share, and counted in ``epsilon``:
        the solver is calibrated for the rest, and ``epsilon_`` never
        exceeds ``epsilon``. A draw that ``n`` makes unreliable (a chance
        above 1% of landing outside the data's range) is not run and costs
        nothing. The one-shot solvers (``adassp``,
        ``objective-perturbation``), whose noise is set by these bounds,
        raise the share to the smallest reliable one when that is at most
        their ``scale_share_cap`` (AdaSSP half of ``epsilon``, objective
        perturbation a fifth; public: ``n``, ``epsilon``, which estimates
        run); the dp-sgd and accelerated families do so, up to 35% of
        ``epsilon`` (25% for ``Ridge``), for the row scale alone (a class
        histogram that does not fit in the default share is then not run):
        at ``epsilon n >= 146`` (203), e.g. 426 rows at ``epsilon = 0.35``.
        The in-fit centring (``feature_centring``) spends 3% of ``epsilon``
        on top of this share where it runs.
    feature_centring : "auto", bool, None or array-like of shape (n_features,), \
default="auto"
        Centre the columns by private means before the row scale (a column
        with a large offset, a year or a constant, otherwise dominates every
        row's norm). ``"auto"`` and ``True``: on (measured on held-out tasks;
        see the solver guide, "Private scales measured in fit"); ``None`` or
        ``False``: off. An array is a public centre ``c`` (documented column
        means, or :class:`~dpestim.model_selection.PrivateSearchCV`'s
        estimate, which it gives its candidates): the fit runs on ``x - c``
        and spends nothing on it (needs ``fit_intercept`` and dense
        in-memory ``X``; the column balance, unless public too, then runs on
        those rows as given). Two pure-DP draws, counted in ``epsilon`` and
        ``dp_event_``: a private median ``R`` of the rows' L1 norms (1% of
        ``epsilon``) and a Laplace mean of the rows clipped to L1 norm ``R``
        (2%); a column moves only where its noisy mean exceeds ``ln(d /
        0.05)`` noise scales. The fit runs on ``x - c`` and releases
        ``intercept_ = b' - coef_ . c``. Runs only with ``fit_intercept``,
        dense in-memory ``X``, the private row scale estimated
        (``feature_scale="auto"``, ``clip_norm="auto"``) and ``epsilon`` given
        (not with a fixed ``noise_multiplier``: inside
        :class:`~dpestim.model_selection.PrivateSearchCV` the search measures
        it once and gives its candidates the centre as an array), where
        ``epsilon n`` is large enough (about 5,070, more with many columns)
        and the scale estimates, it included, take at most half of
        ``epsilon``; ``hyperparameters_`` says why when it is not run, and
        then nothing is spent (an explicit ``True`` also warns why). ``epsilon
        = inf``: the exact column means. Set it to ``None`` after a centring
        step (:class:`~dpestim.preprocessing.PrivateCentrer`,
        ``StandardScaler``): centring twice spends budget and can hurt. A
        column whose spread dominates the centred rows (an age column of mean
        40 and sd 13 beside features of order one) made the constant steps of
        dp-sgd oscillate; its ``"auto"`` steps for ``Ridge`` now settle (R^2
        0.66 -> 0.93 in that user trial;
        ``doc/benchmarks/private_centring.md``).
    feature_balance : "auto", bool, None or array-like of shape (n_features,), \
default="auto"
        Rescale the columns that dominate the rows' norms, privately, after
        the in-fit centring (one column left in its own units among scaled
        ones, a sampling weight of 1e5 or a count in thousands, otherwise
        sets the row scale alone and the other columns barely move the
        model, at any epsilon). ``"auto"`` and ``True``: on wherever the
        centring runs (it reuses its L1 radius ``R``), and on sparse rows,
        or dense ones too few for the centring, as given (not centred: a
        private median L2 norm ``R`` first, 1% more); ``None`` or ``False``:
        off. One pure-DP draw of 1% of ``epsilon``,
        counted in ``epsilon`` and ``dp_event_``: the rows clipped to norm
        ``R``, their squared entries summed per column plus Laplace noise
        (L1 sensitivity ``R^2`` add/remove, ``2 R^2`` replace-one), over
        ``n``; a column whose noisy mean square exceeds half of the sum over
        the columns not yet rescaled or twenty times their mean (or the two
        largest, above 3/4 of that sum, or a group of three to eight
        above it, the smallest twenty times the others' mean), and
        ``ln(d / 0.05)`` noise scales,
        is divided by its root mean square, the largest first. Two later
        rounds release the balanced rows' mean squares clipped to a private
        L2 radius, for the columns the first release's noise hid (several
        raw columns), 1% more of ``epsilon`` each, always run. Where
        ``epsilon n`` is below about 10,100 (5,070 for the first round on
        rows as given), the dp-sgd family's draws are raised to the epsilon
        that makes them reliable (about ``51 / n``, at most 2.5% of
        ``epsilon`` each), with up to five later rounds, as many as keep the
        whole balance within 15% of ``epsilon``: none below ``epsilon n`` of
        about 2,030
        (the other solvers' keep their shares: none below 5,070 for rows as
        given; ``hyperparameters_`` says so). Columns
        on comparable scales are used as given. ``epsilon = inf``: the exact
        mean squares. An array is public column scales ``sigma`` (positive;
        documented spreads, or the search's estimate): the columns are
        divided by them, nothing is estimated or spent. Resolved scales:
        ``feature_balance_``; see ``doc/benchmarks/column_balance.md``."""

CLASS_PRIOR_PARAM = """class_prior : "auto", array-like of shape (n_classes,) or None, \
default="auto"
        Where the run's intercept starts. ``"auto"``: at the intercept-only
        optimum for class proportions measured privately (a Laplace histogram
        of the class counts, noise scale ``1 / epsilon_h`` per count, L1
        sensitivity 1 add/remove, 2 replace-one; ``epsilon_h`` one equal part
        of ``scale_share``, counted in ``epsilon``, in ``dp_event_`` and in
        :meth:`privacy_report`): the log-odds ``log(p_1 / p_0)`` (binary
        logistic), ``log p_k`` centred (multinomial), ``2 p_k - 1`` (the
        squared hinge's optimum, also used for the hinge loss). Only for
        solvers with an initial point (the dp-sgd family and the accelerated
        full-batch family); others (dp-scd, seq-dp-scd: dual coordinate
        descent; one-shot and saddle solvers) start as before and nothing is
        estimated, nor when ``n`` is too small for the histogram to be
        useful (noise standard deviation above 10% of ``n / K``; see
        ``hyperparameters_``). With ``epsilon=inf`` the exact proportions
        are used (a non-private fit); with a fixed ``noise_multiplier``
        nothing is estimated. An array: public proportions (no cost). ``None``: start
        at 0 (the behaviour before this option). The initial point is
        post-processing of the release: the solver's mechanism is unchanged.
        The proportions used are ``class_prior_``.
    class_weight : dict, "balanced" or None, default=None
        Weights of each class's examples, as in scikit-learn: the objective
        becomes ``mean_i w_i loss_i + alpha / 2 ||coef||^2``. A dict maps
        labels of ``classes_`` to weights ``>= 0`` (public; absent classes
        weigh 1). ``"balanced"``: ``n / (n_classes c_k)`` with ``c_k`` the
        class counts of the same private Laplace histogram as
        ``class_prior="auto"`` (one release, run whatever ``n``; its share of
        ``scale_share`` is counted in ``epsilon``), each count floored at 3
        standard deviations of that histogram's noise (a smaller count cannot
        be told from an empty class; the floor is in ``hyperparameters_``).
        The weights divide the other classes' signal by the rarest class's
        weight: with a class of a few dozen rows, small ``n`` or small
        ``epsilon``, the unweighted fit can have the better balanced accuracy
        (a 2% class of 1,000 MNIST rows, epsilon 1: 0.71 unweighted).
        Unweighted, a class of a few percent may never be predicted, and the
        utility check, which compares the accuracy with the majority rate's,
        does not say so (a user trial: ``LinearSVC`` on three MNIST digits at
        80 / 15 / 5% of 7,000 rows, epsilon 1: the smallest class's recall
        0.00-0.02, balanced accuracy 0.49-0.52; ``"balanced"`` 0.65-0.79, and
        0.88-0.90 at epsilon 2). Sensitivity is kept by
        the code: the weights are divided by their largest value, each
        example's gradient is clipped to ``clip_norm`` and then multiplied by
        its weight (at most 1; dp-scd and seq-dp-scd weight the example's
        loss in its dual update, which is clipped afterwards), and ``alpha``
        is divided by the same largest value (the objective divided by a
        constant: the same optimum), so the solver's mechanism and
        ``DpEvent`` are those of the unweighted fit. Supported on in-memory
        ``X`` by the dp-sgd family (dp-sgd, dp-lssgd, adp-sgd, adp-adagrad),
        the accelerated family (dp-gd, LogisticRegression's ``delta=0``
        default, with Laplace or Gaussian noise; dp-nag, LinearSVC's; dp-hb,
        dp-masg and the "-opt" variants)
        and dual coordinate descent (dp-scd, seq-dp-scd); the other solvers
        (objective-perturbation, dp-smd-sco) raise ``ValueError``. The
        weights used (scikit-learn's scale) are ``class_weight_``.
    utility_check : "auto", float in (0, 1) or None, default="auto"
        A private check, after the fit, that the model predicts better than
        the majority class: one Laplace release of the released model's
        correct predictions on the training rows minus the largest class
        count (sensitivity 1 add/remove, 2 replace-one), divided by ``n``
        into ``lift_``. A :class:`~dpestim.UtilityWarning` fires when
        ``lift_`` is below 1 point plus a quarter of its Laplace scale (it
        does not show the model clearly above the majority rate), with the
        plan's public diagnosis, if any, as the likely reason (those public
        warnings are otherwise not given: no public quantity tells a useless
        fit from a good one, and alone they were wrong about half the time).
        ``"auto"``: the check spends the share of ``epsilon`` that gives
        ``lift_`` a Laplace scale of half a point, ``200 / (n epsilon)`` of
        it (add/remove; twice that replace-one: 0.5% at ``n epsilon =
        40,000``), at most 5%. A float: that largest share. The check's
        epsilon is reserved before the fit (the solver is calibrated for the
        rest: ``epsilon_`` never exceeds ``epsilon``) and is part of
        ``dp_event_`` and of :meth:`privacy_report`. It runs for a private
        fit with ``epsilon`` given and in-memory ``X``; otherwise the public
        warnings are given as before. With ``class_weight`` the check
        measures the weighted accuracy (each row counts its class's weight,
        over the largest) against the best constant's, divided by the
        released total weight: for ``"balanced"``, the balanced accuracy
        minus ``1 / n_classes``; a dict weight is checked when the fit
        releases the class counts (``class_prior="auto"`` with a solver that
        starts from the prior). A non-private fit (``epsilon=inf``) is
        checked exactly (it may read its data; no budget, no ``lift_``): it
        warns when the model is no better than one class on its training
        rows. ``None``: no check (the fit of earlier versions, bit for
        bit)."""

COEF_BOUND_PARAM = """coef_bound : float, "auto" or None, default="auto"
        Public radius of the coefficients: after fitting, ``coef_`` (all
        classes together, Frobenius norm; not the intercept) is projected on
        the ball of this radius, which bounds every score ``|x . coef|`` by
        ``coef_bound ||x||``. The projection is post-processing of the
        released model and costs no privacy. ``"auto"``: ``sqrt(2 loss(0) /
        alpha)`` (``loss(0)`` the mean loss of the zero model: ``log 2``
        binary logistic, ``log K`` multinomial, ``K`` for the one-vs-rest
        (squared) hinge), the radius of a ball that contains the optimum of
        the penalised objective (``alpha / 2 ||coef*||^2 <= loss(0)``), so
        the projection never moves the model away from it (divided by the
        smallest column scale of ``feature_balance_`` when it is below 1:
        the penalty is on the balanced columns' coefficients); no bound when
        ``alpha = 0``. With a centre (``feature_centre_``) the projection
        shrinks the coefficients of the centred columns and keeps the
        centred model's intercept. ``None``: no projection."""

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
        The solver object used (a fresh instance; ``solver`` is unchanged).
    clip_norm_ : float
        The clip norm the run used (``clip_norm`` resolved), in the units
        of ``X / feature_scale_``.
    feature_scale_ : float
        The row unit ``s`` the fit ran in (1: ``X`` as given); private
        (covered by the guarantee) when estimated.
    feature_centre_ : ndarray of shape (n_features,) or None
        The column centre ``c`` the fit ran at (``X - c``; see
        ``feature_centring``), private (covered by the guarantee), or
        ``None`` (not centred). A clipped estimate, not the column means:
        rows are clipped to their median L1 norm (a skewed column's centre
        is pulled toward 0) and only columns whose estimate clears the
        noise threshold move (the others stay at 0).
    feature_balance_ : ndarray of shape (n_features,) or None
        The column scales ``sigma`` the fit ran at (``(X - c) / sigma``; see
        ``feature_balance``): the private root mean square of each column
        found dominant, 1 elsewhere; ``None`` when no column was rescaled.
        Private (a post-processing of the Laplace release).
    alpha_ : float
        The L2 penalty of the fitted objective in the units of ``X``
        (``alpha``, or ``1e-4 feature_scale_^2`` for ``alpha="auto"``; the
        larger ridge objective perturbation's privacy proof needs, when it
        raises it: ``hyperparameters_["alpha"]`` in these units). Columns
        rescaled by ``feature_balance_`` are penalised in their rescaled
        units: ``alpha_ sum_j (sigma_j coef_j)^2``.
    max_iter_, batch_size_, learning_rate_ : int, int, float
        The values the run used (``"auto"`` resolved from public quantities).
    hyperparameters_ : dict
        The resolved hyperparameters the solver uses, by name (also in
        :meth:`privacy_report`)."""

CLASS_PRIOR_ATTRIBUTE = """class_prior_ : ndarray of shape (n_classes,) or None
        The class proportions the initial intercept was computed from: the
        normalised Laplace histogram (a DP release, covered by the guarantee,
        hence public), the given ``class_prior``, or the exact proportions of
        a non-private fit; ``None`` when the run started at 0.
    class_weight_ : ndarray of shape (n_classes,) or None
        One weight per class of ``classes_`` (scikit-learn's scale): the
        given dict, or ``"balanced"`` computed from the released (DP) class
        counts; ``None`` without ``class_weight``.
    lift_ : float or None
        The utility check's release (see ``utility_check``): training
        accuracy minus the majority-class rate (with ``class_weight``, the
        weighted accuracy minus the best constant's: balanced accuracy minus
        ``1 / n_classes`` for ``"balanced"``), plus Laplace noise (a DP
        release, covered by the guarantee), clipped to the lift's range
        ``[-1, 1]`` (post-processing); ``None`` when no check ran."""
