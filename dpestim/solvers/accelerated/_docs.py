"""Parameter docs shared by the accelerated family's solver classes."""

_COMMON_DOC = """
    Parameters
    ----------
    noise : {"laplace", "gaussian", "discrete_laplace"}, default="laplace"
        ``"laplace"``: the paper's pure epsilon-DP mechanism (``delta = 0``
        allowed; the estimator's ``delta`` is ignored and reported as 0),
        ``clip_norm`` bounds the L1 norm of each per-example gradient,
        neighbouring by replacing one record. ``"gaussian"``:
        ``clip_norm`` is an L2 bound, add/remove-one neighbouring, accounted
        by ``dp_accounting`` (needs ``delta > 0``). ``"discrete_laplace"``:
        the Laplace mechanism with a guarantee that holds in floating point:
        each coordinate of the clipped-gradient sum is rounded to a
        power-of-two grid and exact discrete Laplace noise (Canonne, Kamath
        and Steinke, 2020), sampled from uniform integers only, is added;
        the scale is about 0.1% larger than ``"laplace"``'s to cover the
        rounding, and the accounting is the same (see
        :mod:`dpestim.privacy.discrete`). In-memory data only.
    batch_size : int or None, default=None
        ``None``: full batch. An int ``m < n``: exactly ``m`` records drawn
        without replacement (Laplace) or a Poisson sample of expected size
        ``m`` (Gaussian) in every iteration. The estimator's ``batch_size`` is
        not used.
    smoothness : float or None, default=None
        Public smoothness constant ``L``; the step is ``step_scale / L``.
        ``None`` means ``1 / learning_rate`` of the estimator, so that the
        step is ``step_scale * learning_rate``. Never estimate it from the
        private data.
    strong_convexity : float or None, default=None
        Public ``mu``; ``None`` means the estimator's ``alpha``.
    step_scale : float, default=1.0
        The paper's ``c``.
    coef_init : float, default=0.0
        Data-independent initial value of every coefficient (and intercept),
        in ``[-1e6, 1e6]``.
    store_path : bool, default=False
        Keep every iterate as ``coef_path_`` / ``intercept_path_`` (released
        iterates: post-processing, no extra privacy cost; the path ends
        before the final intercept query), in the released model's units
        (the estimator maps them through its row scale, column centre and,
        for ``Ridge``, the targets' scale and centre).
    final_intercept : bool, default=True
        With ``noise="laplace"``, the squared loss, an intercept and a
        target bound (``Ridge``), end the fit with one Laplace query that
        moves the intercept to the noisy mean residual, at 2% of epsilon,
        where its error is small enough (see :ref:`the solver guide
        <final-intercept>`, :mod:`~dpestim.solvers.accelerated._intercept`).
        ``False``: the run's own intercept (the fits before 2026-11-28).
"""
