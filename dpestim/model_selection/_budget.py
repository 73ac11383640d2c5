"""A privacy budget that composes every fit charged to it."""

import math
import os
import shutil
import tempfile
import weakref
from numbers import Real

import numpy as np

from ..privacy.charging import (
    ENV_VAR,
    FitCharge,
    pop_target,
    push_target,
)
from ..privacy.charging import restart_worker_pool as _restart_worker_pool
from ..privacy.ledger import FileLedger

__all__ = ["PrivacyBudget"]


class PrivacyBudget:
    """A privacy budget composing the ``DpEvent`` of every fit charged to it.

    Every dpestim estimator and private transformer announces its mechanism
    (its ``DpEvent``, computed from public quantities) before it runs. While
    a budget is active (``with budget:``), each such fit is charged to it: the
    budget composes the events of all fits so far with the new one
    (``dp_accounting.ComposedDpEvent``) and asks the accountant for the
    epsilon at the budget's ``delta``. If that exceeds ``epsilon``,
    :class:`~dpestim.exceptions.BudgetExceededError` is raised *before* the
    solver runs, and its event is not recorded (the estimator's private scale
    estimates, charged before it, stay charged). scikit-learn's
    ``cross_val_score`` and ``GridSearchCV`` catch the error (a NaN score):
    pass ``error_score="raise"``.

    Fits inside :class:`~sklearn.pipeline.Pipeline`,
    :class:`~sklearn.model_selection.GridSearchCV` and
    :func:`~sklearn.model_selection.cross_val_score` are charged too,
    including with ``n_jobs > 1``: the events are kept in a small locked file
    whose path child processes inherit through the environment
    (``DPESTIM_BUDGET_LEDGERS``), and entering the budget restarts joblib's
    reusable worker pool so that its workers see it. Distributed workers
    (dask) are not covered.

    Parameters
    ----------
    epsilon : float
        Total epsilon that the composed fits may spend.
    delta : float, default=1e-5
        The delta at which the composed epsilon is computed.
    accountant : {"rdp", "pld"}, default="rdp"
        dp-accounting accountant used for the composition. RDP supports every
        dpestim mechanism including private model selection
        (``RepeatAndSelectDpEvent``); PLD is tighter for Gaussian and Laplace
        mechanisms but does not support model selection.
    path : path-like or None, default=None
        File holding the ledger. ``None`` uses a private temporary file,
        removed when the budget is garbage-collected. Give a path to keep the
        ledger across sessions: an existing ledger file is reopened with its
        records (its limit must match).

    Attributes
    ----------
    ledger_path : str
        The ledger file.

    See Also
    --------
    PrivateSearchCV : charges its whole search (one event) to ``budget=``.
    workflow_guarantee : the composed guarantee of a fitted pipeline.

    Examples
    --------
    >>> import numpy as np
    >>> from dpestim import LogisticRegression
    >>> from dpestim.model_selection import PrivacyBudget
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 4)) / 2
    >>> y = (X[:, 0] > 0).astype(int)
    >>> budget = PrivacyBudget(epsilon=1.0, delta=1e-5)
    >>> with budget:
    ...     clf = LogisticRegression(epsilon=0.5, classes=[0, 1], random_state=0)
    ...     clf = clf.fit(X, y)
    >>> eps, delta = budget.spent()
    >>> 0.5 - 1e-9 <= eps <= 1.0
    True
    """

    def __init__(self, epsilon, delta=1e-5, *, accountant="rdp", path=None):
        for name, value in (("epsilon", epsilon), ("delta", delta)):
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, Real):
                raise TypeError(f"{name} must be a real number, got {value!r}.")
        epsilon, delta = float(epsilon), float(delta)
        if not epsilon > 0:
            raise ValueError(f"epsilon must be > 0, got {epsilon!r}.")
        if not 0 <= delta < 1:
            raise ValueError(f"delta must be in [0, 1), got {delta!r}.")
        if accountant not in ("rdp", "pld"):
            raise ValueError(f"accountant must be 'rdp' or 'pld', got {accountant!r}.")
        self.epsilon, self.delta, self.accountant = epsilon, delta, accountant
        if path is None:
            tmp = tempfile.mkdtemp(prefix="dpestim-budget-")
            path = os.path.join(tmp, "ledger")
            weakref.finalize(self, shutil.rmtree, tmp, True)
        path = os.fspath(path)
        if os.path.exists(path):
            self._ledger = FileLedger(path)
            header = self._ledger.read()[0]
            mine = {"epsilon": epsilon, "delta": delta, "accountant": accountant}
            if header != mine:
                raise ValueError(
                    f"The ledger {path!r} holds a budget {header}, not {mine}."
                )
        else:
            self._ledger = FileLedger.create(path, epsilon, delta, accountant)
        self.ledger_path = path
        self._saved_env = []

    # -- charging --------------------------------------------------------------

    def charge(self, charge):
        """Charge one fit (a ``FitCharge``); used by the estimators' hook.

        Raises
        ------
        BudgetExceededError
            If the composition would exceed the budget (nothing is recorded).
        """
        return self._ledger.charge(charge)

    def charge_event(self, dp_event, *, neighbouring="add_or_remove_one", label=""):
        """Charge a mechanism run outside dpestim, given its ``DpEvent``."""
        return self.charge(
            FitCharge(dp_event, neighbouring, label or type(dp_event).__name__)
        )

    def __enter__(self):
        push_target(self)
        self._saved_env.append(os.environ.get(ENV_VAR))
        paths = [p for p in (self._saved_env[-1] or "").split(os.pathsep) if p]
        os.environ[ENV_VAR] = os.pathsep.join(paths + [self.ledger_path])
        self._ledger.set_open(True)
        _restart_worker_pool()
        return self

    def __exit__(self, *exc):
        pop_target(self)
        self._ledger.set_open(False)
        saved = self._saved_env.pop()
        if saved is None:
            os.environ.pop(ENV_VAR, None)
        else:
            os.environ[ENV_VAR] = saved
        return False

    # -- reading -----------------------------------------------------------------

    @property
    def records(self):
        """``[(dp_event, neighbouring, label), ...]`` of the charged fits."""
        return self._ledger.read()[1]

    @property
    def dp_event(self):
        """The ``ComposedDpEvent`` of every charged fit."""
        return FileLedger.composed_event(self.records)

    def spent(self):
        """``(epsilon, delta)`` spent so far: the composition at ``delta``."""
        return self._ledger.epsilon_of(self.records), self.delta

    def remaining(self):
        """Epsilon left at ``delta`` (the budget minus :meth:`spent`).

        An infinite budget always has ``inf`` left (also after a non-private
        fit, whose epsilon is ``inf``); a finite one never less than 0.
        """
        if self.epsilon == math.inf:
            return math.inf
        return max(self.epsilon - self.spent()[0], 0.0)

    def report(self):
        """A readable statement of the budget and of every charged fit."""
        records = self.records
        eps = self._ledger.epsilon_of(records)
        lines = [
            f"Privacy budget: epsilon={self.epsilon:g}, delta={self.delta:g} "
            f"({self.accountant.upper()} accountant of dp-accounting on the "
            "composition of every charged event)",
            f"Spent: epsilon={eps:.4g} at delta={self.delta:g} over "
            f"{len(records)} fit(s):",
        ]
        lines += [f"  {i + 1}. {label}" for i, (_, _, label) in enumerate(records)]
        return "\n".join(lines)

    def __repr__(self):
        return (
            f"PrivacyBudget(epsilon={self.epsilon!r}, delta={self.delta!r}, "
            f"accountant={self.accountant!r})"
        )

    def __deepcopy__(self, memo):
        # ``clone`` deep-copies non-estimator parameters (``budget=`` of
        # PrivateSearchCV): the copy must charge the same ledger.
        return self

    def __reduce__(self):
        return (_reopen, (self.ledger_path,))


def _reopen(path):
    """Unpickle a budget (in a worker process): same ledger, no cleanup."""
    budget = PrivacyBudget.__new__(PrivacyBudget)
    budget._ledger = FileLedger(path)
    header = budget._ledger.read()[0]
    budget.epsilon, budget.delta = header["epsilon"], header["delta"]
    budget.accountant = header["accountant"]
    budget.ledger_path = path
    budget._saved_env = []
    return budget
