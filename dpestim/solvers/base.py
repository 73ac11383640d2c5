"""The solver contract: the swap point behind ``solver=``.

A solver owns an algorithm: its loop, its schedules and its noise. It receives
validated arrays and a ``numpy.random.Generator``; it never validates user
input and never touches estimator objects. Its ``make_event`` is pure: it
describes, as a ``dp_accounting.DpEvent``, exactly the mechanism ``solve``
runs, from public quantities only.
"""

import math
from dataclasses import replace

import joblib
import numpy as np
from sklearn.base import BaseEstimator

from ..losses import LOSS_NAMES
from ..privacy import calibrate_noise, compute_epsilon
from . import _policy
from ._plan import ERMPlan, SolverResult, row_class_codes, row_weights

__all__ = [
    "MAX_STEPS",
    "BaseSolver",
    "ERMPlan",
    "SolverResult",
    "row_class_codes",
    "row_weights",
]

#: Largest number of steps a fit may plan. Every solver allocates per-step
#: schedules (8 bytes a step and array) and runs every step, so a user value
#: such as ``max_iter=10**12`` must be refused up front, not met by a
#: ``MemoryError`` or a run that never ends.
MAX_STEPS = 10**7


#: ``row_norm_target`` of solvers that clip the rows themselves at
#: ``clip_norm`` (1 by default; one-shot solvers): the private feature scale
#: brings their median norm to about 0.96, a grid bin's midpoint, so that
#: about half the rows are clipped (at the gradient solvers' 2.95 every row
#: was clipped, which biases the statistics: AdaSSP's R^2 fell from 0.98 to
#: -0.84; at 0.52, the former value, the bound is loose and its noise costs
#: more than the clipping's bias below a few thousand rows). Derived (issue
#: 26) on California subsamples and synthetic data for AdaSSP (mean R^2 0.31
#: against 0.18 at epsilon 1, see ``oneshot/adassp.py``) and on breast cancer,
#: COMPAS (1,000 rows) and synthetic logistic data (750 rows) for objective
#: perturbation (accuracy at epsilon 0.5 / 1 / 2: breast cancer 0.90 / 0.95 /
#: 0.94 against 0.83 / 0.90 / 0.93, COMPAS 0.61 / 0.62 / 0.64 against 0.60 /
#: 0.61 / 0.62, synthetic 0.66 / 0.67 / 0.68 against 0.65 / 0.65 / 0.65).
ROW_CLIPPING_TARGET = 2.0 ** (-0.5 / 8)


class BaseSolver(BaseEstimator):
    """Base class of dpestim solvers.

    Subclasses set the class metadata below and implement :meth:`make_event`,
    :meth:`solve`, :meth:`mechanism` and :meth:`sampling`. They inherit
    scikit-learn's ``get_params`` / ``set_params`` so that a solver instance
    can be cloned and its hyperparameters searched
    (``GridSearchCV(..., {"solver__momentum": [...]})``).

    Attributes
    ----------
    name : str
        Registry name (``solver="..."``).
    problem : {"erm", "saddle"}
    supported_losses : frozenset of str
    supported_penalties : frozenset of str
    data_order : {"C", "F"}
        Memory layout the kernels want (rows for gradients, columns for
        coordinate methods).
    accepts_float32 : bool
        Whether ``solve`` takes float32 ``X`` (dense or CSR) as is, without
        a float64 copy; otherwise the estimator converts it to float64.
    privacy_notion : {"approx", "pure"}
        Gaussian (``delta > 0``) or Laplace/exponential (``delta = 0`` allowed).
    neighbouring : {"add_or_remove_one", "replace_one"}
    supports_blocked_data : bool
        Whether ``solve`` accepts blocked X (Dask, memory-mapped or zarr
        data, :mod:`dpestim._distributed`): true for solvers whose step is a
        sum of clipped per-example gradients over rows.
    supports_initial_point : bool
        Whether ``solve`` starts its iterate at ``plan.intercept_init``
        (:meth:`initial_point`).
    row_norm_target : float or None
        Public median row norm the estimator's private feature scale
        (``feature_scale="auto"``) brings the rows to; ``None``: the
        project's default (:data:`~dpestim.preprocessing._fit_scales.ROW_NORM_TARGET`,
        for solvers that clip per-example gradients).
    multiclass_hinge_row_target : bool
        Whether a one-vs-rest (squared) hinge fit with more than two classes
        (:class:`~dpestim.LinearSVC`) rescales the rows to the multi-output
        median norm
        (:data:`~dpestim.preprocessing._fit_scales.MULTIOUTPUT_HINGE_ROW_NORM_TARGET`)
        rather than the binary one; public (the solver, the number of
        classes). True for the dp-sgd family (measured there).
    scale_share_cap : float or None
        Largest share of epsilon the estimator may give its private scale
        estimates when its ``scale_share`` is too small for them to be
        reliable at this ``n`` and ``epsilon`` (public); ``None``: never
        raised (the estimates are then skipped). Read through
        :meth:`share_cap`, which a solver may make depend on the loss
        (``squared_share_cap``: the squared loss's own cap, when set).
    raises_balance_draws : bool
        Whether the estimator's column balance (``feature_balance``) may
        raise its draws above their shares where ``epsilon n`` is too small
        for them (:func:`~dpestim.preprocessing._balance.plan_balance`):
        public, the solver's. True for the dp-sgd family only, whose
        accuracy at small ``epsilon n`` moves least with its budget
        (measured, the balance on against off where no column dominates,
        digits at epsilon 2, ``epsilon n`` 2,694, 12 seeds: dp-sgd -0.5 /
        -0.9 points, ``LinearSVC`` / ``LogisticRegression``; dp-scd -2.1 /
        -1.7; objective-perturbation -5.6 / -8.0; the pure-DP dp-gd and
        dp-nag on COMPAS at 0.5, 30 seeds, -1.8 to -2.5).
    """

    name = None
    problem = "erm"
    #: scikit-learn parameter constraints of the solver's own parameters,
    #: checked by :meth:`validate_params` when an estimator resolves the
    #: solver, before any data is read. Subclasses list every parameter.
    _parameter_constraints: dict = {}
    supported_losses = frozenset()
    supported_penalties = frozenset({"l2"})
    data_order = "C"
    accepts_sparse = True
    accepts_float32 = False
    privacy_notion = "approx"
    neighbouring = "add_or_remove_one"
    supports_blocked_data = False
    row_norm_target = None
    multiclass_hinge_row_target = False
    scale_share_cap = None
    raises_balance_draws = False
    #: ``scale_share_cap`` of a squared-loss fit (``Ridge``) when it differs
    #: (:meth:`share_cap`); ``None``: the same
    squared_share_cap = None
    #: Whether ``solve`` starts from ``plan.intercept_init`` when it is set
    #: (see :meth:`initial_point`); solvers without a primal iterate to start
    #: from (dual coordinate descent, one-shot closed forms, saddle games)
    #: keep ``False`` and the estimator does not set it.
    supports_initial_point = False
    #: Whether ``solve`` weights each example by ``plan.class_weights``
    #: without changing its sensitivity (gradient solvers: the clipped
    #: gradient times a weight <= 1; dual coordinate descent: the weighted
    #: dual update, clipped afterwards); the estimator refuses
    #: ``class_weight`` for solvers without it.
    supports_class_weight = False
    #: ``"auto"`` learning rate of an unclipped non-private plan, in units of
    #: ``1 / L`` (:func:`~dpestim.solvers._policy.unclipped_smoothness`).
    unclipped_step = 1.0
    #: Whether a private ``"auto"`` learning rate is capped so that a run
    #: lengthened to :data:`~dpestim.solvers._policy.TRAVEL_STEPS` steps
    #: travels no farther (:func:`~dpestim.solvers._policy.poisson_step`).
    travel_capped_step = True

    @staticmethod
    def initial_point(plan):
        """``(W, b)``: the iterate a run starts from (fresh arrays).

        ``W`` is zero; ``b`` is ``plan.intercept_init`` when it is set (and
        ``plan.fit_intercept``), else zero. The initial intercept is
        post-processing of a DP release (the estimator's class prior), so the
        run's ``DpEvent`` does not depend on it.
        """
        W = np.zeros((plan.n_outputs, plan.n_features))
        b = np.zeros(plan.n_outputs)
        if plan.intercept_init is not None and plan.fit_intercept:
            b[:] = np.asarray(plan.intercept_init, dtype=np.float64)
        return W, b

    def validate_params(self):
        """Check the solver's parameters against ``_parameter_constraints``.

        Raises ``InvalidParameterError`` (a ``ValueError`` and ``TypeError``)
        naming the parameter and the solver class, e.g. "The 'step_size'
        parameter of DPSMDSCO must be ...". Called by
        :func:`~dpestim.solvers.resolve_solver`, before any data is read.
        """
        self._validate_params()

    def check_plan(self, plan):
        """Refuse a plan this solver cannot run, before noise or data.

        The default bounds the number of steps by :data:`MAX_STEPS`: memory
        and time grow with it. Subclasses add rules of their own (and call
        this one).
        """
        steps = self.n_steps(plan)
        if steps > MAX_STEPS:
            raise ValueError(
                f"max_iter={plan.max_iter} gives {steps} steps for solver="
                f"{self.name!r} (batch_size={plan.batch_size}, n_samples="
                f"{plan.n_samples}); at most {MAX_STEPS} steps are allowed. "
                "Lower max_iter or raise batch_size."
            )

    def share_cap(self, loss):
        """The ``scale_share_cap`` of a fit of ``loss`` (public; see the class).

        ``squared_share_cap`` for the squared loss when it is set.
        """
        if loss == "squared" and self.squared_share_cap is not None:
            return self.squared_share_cap
        return self.scale_share_cap

    def check_loss(self, loss):
        """Raise ``ValueError`` if this solver cannot minimise ``loss``."""
        name = LOSS_NAMES.get(loss, loss)
        if name not in self.supported_losses:
            raise ValueError(
                f"solver={self.name!r} does not support the {name!r} loss; it "
                f"supports {sorted(self.supported_losses)}."
            )

    def resolve_hyperparameters(self, plan, epsilon, delta):
        """Replace the ``"auto"`` values of ``plan`` (and of this solver).

        The one place where a solver's default hyperparameters are chosen,
        from public quantities only: the fields of ``plan`` (``n``, ``d``,
        outputs, loss, ``alpha``, ``clip_norm``), the target ``epsilon``
        (``inf`` for a non-private fit) and ``delta``. Never from the data.

        The default is the rule of the Poisson-sampled gradient solvers
        (:mod:`dpestim.solvers._policy`): ``T`` steps where a step's noise
        reaches 0.3 x the largest clipped signal (``T = (0.3 epsilon n)^2 /
        (D log(1 / delta))`` in ``[50, 2000]``, 2,000 without noise; at
        least 200 for a classifier, see below),
        ``batch_size = max(32, 1.5 sqrt(n), 10 n / T)`` (at most ``n``),
        ``max_iter`` the epochs giving ``T`` steps (at least 10; at least
        :meth:`unclipped_epochs` for an unclipped non-private plan),
        ``learning_rate`` 0.5 (the clipped mean gradient has norm at most
        ``clip_norm``), or ``unclipped_step / L`` for an unclipped
        non-private plan (``L`` the expected smoothness of a batch's mean loss,
        :func:`~dpestim.solvers._policy.unclipped_smoothness`), shrunk
        like ``1 / r^2`` once the noise-to-signal ratio ``r = sigma sqrt(D) /
        B`` of a step exceeds 1 (``sigma`` the noise multiplier of this
        plan's Poisson-subsampled Gaussian event, ``D`` the noised
        coordinates; :func:`~dpestim.solvers._policy.noise_damped_rate`).
        When the noise rule gives a classifier fewer than 200 steps (small
        ``epsilon n``), the run takes 200 steps in batches of
        :func:`~dpestim.solvers._policy.travel_batch_size` and its
        learning rate is at most ``travel / (steps * mean_step_factor)``
        (:func:`~dpestim.solvers._policy.poisson_step`; not for solvers
        with ``travel_capped_step = False``).
        On blocked data (``plan.blocked``: Dask, memory-mapped, zarr) with
        ``batch_size="auto"``, ``T`` is at most
        :data:`~dpestim.solvers._policy.BLOCKED_MAX_STEPS` (200): the same
        passes in fewer, larger and less noisy steps, each of which is a
        round trip to the workers
        (:func:`~dpestim.solvers._policy.blocked_steps`).
        Solvers with other knobs override it; explicit values are kept.

        Returns
        -------
        plan : ERMPlan
            With every ``"auto"`` replaced.
        resolved : dict
            The values of the hyperparameters that the run uses, by name
            (estimator parameters and this solver's own), for the fitted
            ``hyperparameters_`` and the privacy report.
        """
        D = plan.n_outputs * (plan.n_features + int(plan.fit_intercept))
        T = _policy.poisson_steps(plan.n_samples, D, epsilon, delta, plan.loss)
        B = plan.batch_size
        if plan.blocked and _policy.is_auto(B):  # Dask / out-of-core X
            T = _policy.blocked_steps(T)
        if _policy.is_auto(B):
            B = _policy.poisson_batch_size(plan.n_samples, T)
            if _policy.travel_bound(plan.loss, plan.n_samples, D, epsilon, delta):
                B = max(B, _policy.travel_batch_size(plan.n_samples, D, T))
        smooth = _policy.unclipped_smoothness(plan, min(B, plan.n_samples))
        E = plan.max_iter
        if _policy.is_auto(E):
            E = _policy.poisson_epochs(plan.n_samples, B, T)
            if smooth is not None:
                E = self.unclipped_epochs(E)
        lr = plan.learning_rate
        if _policy.is_auto(lr) and smooth is not None:
            lr = self.unclipped_step / smooth  # non-private, unclipped
            if plan.alpha > 0:  # the penalty's own step stays stable
                lr = min(lr, 1.0 / plan.alpha)
        elif _policy.is_auto(lr):
            # delta = 0 is refused by the estimator for these Gaussian
            # solvers after this hook; plan for no noise meanwhile
            sigma = (
                _policy.poisson_noise_multiplier(plan.n_samples, B, E, epsilon, delta)
                if 0 < delta < 1
                else 0.0
            )
            ratio = (
                sigma
                * math.sqrt(_policy.damping_dimension(D, plan.n_samples))
                / min(B, plan.n_samples)
            )
            lr = _policy.noise_damped_rate(_policy.POISSON_STEP, ratio)
            if self.travel_capped_step:
                unit = replace(
                    plan, max_iter=int(E), batch_size=int(B), learning_rate=1.0
                )
                steps = self.n_steps(unit) * self.mean_step_factor(unit)
                cap = _policy.poisson_step(
                    plan.loss, plan.n_samples, D, epsilon, delta, steps
                )
                lr = min(lr, cap)
            if plan.alpha > 0:  # as above: a strong penalty's step stays stable
                lr = min(lr, 1.0 / plan.alpha)
        plan = replace(plan, max_iter=int(E), batch_size=int(B), learning_rate=lr)
        return plan, {"max_iter": plan.max_iter, "batch_size": B, "learning_rate": lr}

    def mean_step_factor(self, plan):
        """Mean step of the run on ``plan`` in units of ``learning_rate`` (1).

        Solvers with a step-size schedule return its mean, so that the
        travel cap of :func:`~dpestim.solvers._policy.poisson_step` bounds
        the distance the whole schedule travels.
        """
        return 1.0

    def unclipped_epochs(self, epochs):
        """``"auto"`` epochs of an unclipped non-private plan.

        ``epochs`` is the Poisson rule's number (2,000 steps); the result is
        at least :data:`~dpestim.solvers._policy.NONPRIVATE_EPOCHS` (100).
        Solvers whose step is slower along some directions ask for more.
        """
        return max(int(epochs), _policy.NONPRIVATE_EPOCHS)

    def utility_warnings(self, plan, noise_multiplier):
        """Messages (from public quantities only) when the plan cannot learn.

        The default, for Poisson-sampled clipped gradients: the noise added to
        one step's mean gradient has expected L2 norm about ``noise_multiplier
        sqrt(D) / B`` times ``clip_norm`` (``D`` noised coordinates, ``B``
        the expected batch); above 3 the noise dwarfs any clipped signal.
        """
        if noise_multiplier <= 0 or _policy.is_auto(plan.batch_size):
            return []
        D = plan.n_outputs * (plan.n_features + int(plan.fit_intercept))
        B = min(plan.batch_size, plan.n_samples)
        ratio = noise_multiplier * math.sqrt(D) / B
        if ratio <= 3.0:
            return []
        return [
            f"the noise of each step has about {ratio:.3g} times the norm of the "
            f"largest clipped mean gradient (noise multiplier "
            f"{noise_multiplier:.3g}, {D} coordinates, expected batch {B}): "
            "increase batch_size (or epsilon), or reduce max_iter."
        ]

    def n_steps(self, plan):
        """Number of noisy steps ``solve`` will take for ``plan``."""
        raise NotImplementedError

    def make_event(self, noise_multiplier, plan):
        """The ``DpEvent`` of the mechanism run with this noise on ``plan``."""
        raise NotImplementedError

    def event_inputs(self, plan):
        """The part of ``plan`` that :meth:`make_event` depends on.

        Used (with the solver's parameters) as the key under which a noise
        calibration is cached, so that fits differing only in, say, the
        learning rate calibrate once. The default, the whole plan, is always
        safe; subclasses narrow it.
        """
        return plan

    def calibration_key(self, plan):
        """Hashable key that determines ``make_event(., plan)`` completely.

        The solver's class, an exact hash of all its parameters (``joblib.hash``,
        never a truncated ``repr``) and :meth:`event_inputs`.
        """
        cls = type(self)
        params = joblib.hash(self.get_params(deep=True))
        return (cls.__module__, cls.__qualname__, params, self.event_inputs(plan))

    def calibrate(self, epsilon, delta, plan, *, accountant):
        """The noise parameter for which the run on ``plan`` is (epsilon, delta)-DP.

        The default searches the scalar ``noise_multiplier`` of
        :meth:`make_event` with :func:`dpestim.privacy.calibrate_noise`
        (conservative: the result never overshoots ``epsilon``). Solvers whose
        budget is not set by one scalar of a ``DpEvent`` override this.
        """
        return calibrate_noise(
            lambda s: self.make_event(s, plan),
            epsilon,
            delta,
            accountant=accountant,
            neighbouring=self.neighbouring,
            cache_key=self.calibration_key(plan),
        )

    def spent_epsilon(self, event, delta, *, accountant):
        """The epsilon at ``delta`` of ``event`` (as returned by make_event)."""
        return compute_epsilon(event, delta, accountant, self.neighbouring)

    def guarantee_delta(self, delta):
        """The delta at which the reported epsilon holds.

        ``delta`` (the estimator's) by default; solvers whose guarantee is
        pure epsilon-DP whatever ``delta`` (Laplace mechanisms) return 0.
        """
        return delta

    def mechanism(self, plan):
        """One line describing the mechanism, for the privacy report."""
        raise NotImplementedError

    def added_noise(self, noise_multiplier, plan):
        """One line stating the noise actually added, for the privacy report.

        The default is the Gaussian noise of the clipped-gradient solvers:
        standard deviation ``noise_multiplier * clip_norm`` per coordinate.
        Solvers whose noise is scaled otherwise (another sensitivity,
        Laplace, per-step schedules, no added noise) override this. Called
        only with a positive noise multiplier (the estimator states a
        noiseless fit itself).
        """
        std = noise_multiplier * plan.clip_norm
        return (
            f"Gaussian, standard deviation noise multiplier {noise_multiplier:.6g} "
            f"x clip norm {plan.clip_norm:.6g} = {std:.6g} per coordinate"
        )

    def accounting(self, accountant):
        """One line naming what computed epsilon, for the privacy report.

        ``accountant`` is the estimator's setting (``"rdp"`` or ``"pld"``);
        solvers whose epsilon comes from a closed form, not from
        ``dp_accounting``, override this.
        """
        return f"{accountant} (dp_accounting)"

    def composition(self, plan):
        """One line describing how the steps compose, for the privacy report."""
        return (
            f"{self.n_steps(plan)} steps composed by the accountant "
            "(dp_accounting) on the DpEvent below"
        )

    def sampling(self, plan):
        """One line describing how examples are sampled, for the report."""
        raise NotImplementedError

    def solve(self, X, Y, plan, noise_multiplier, rng):
        """Run the algorithm.

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features) or scipy CSR matrix
            float64 (or float32 if ``accepts_float32``), in ``data_order``.
            A CSR matrix must be in canonical format (no duplicate entries in
            a row): the clipping reads row norms, and duplicates would make
            them disagree with the gradients summed. The estimators ensure
            it; the dp-sgd family's driver also canonicalises a copy itself.
        Y : ndarray of shape (n_samples, n_outputs)
            Encoded targets (see :mod:`dpestim.losses`).
        plan : ERMPlan
        noise_multiplier : float
            Noise standard deviation in units of the L2 sensitivity.
        rng : numpy.random.Generator

        Returns
        -------
        result : SolverResult
        """
        raise NotImplementedError
