"""Warnings and errors raised by dpestim."""

__all__ = [
    "BudgetExceededError",
    "FitDivergedError",
    "PrivacyBudgetWarning",
    "PrivacyLeakWarning",
    "UtilityWarning",
]


class PrivacyLeakWarning(UserWarning):
    """A privacy-relevant quantity was derived from the private data.

    Raised, for instance, when the label set is inferred from ``y`` because
    ``classes=`` was not given: the set of labels present in the training data
    is itself private information and is then released through ``classes_``.
    """


class PrivacyBudgetWarning(UserWarning):
    """The requested privacy parameters give a weak guarantee.

    For example ``delta >= 1 / n_samples``, which permits releasing a whole
    record with probability ``delta``; or a private fit, outside any
    :class:`~dpestim.model_selection.PrivacyBudget`, of records that earlier
    private fits of the session already used (``GridSearchCV``,
    ``cross_val_score`` or a loop of fits): their guarantees compose, and the
    message states the composed ``epsilon`` and ``delta`` by basic
    composition. That one is not private (whether it fires depends on the
    records; it is for the data holder, never to be published) and is
    turned off by
    :func:`~dpestim.privacy.set_composition_warning` ``(False)`` (also
    ``dpestim.set_composition_warning``) or the environment variable
    ``DPESTIM_COMPOSITION_WARNING=0``.
    """


class UtilityWarning(UserWarning):
    """The private fit is unlikely to be, or was measured not to be, useful.

    Two sources, neither reading the data outside a DP mechanism:

    * public quantities (the plan: ``n``, ``d``, ``epsilon``, ``delta``, the
      hyperparameters, the calibrated noise, released class proportions),
      for instance when the noise added to a step dwarfs the largest clipped
      signal, or when an explicit ``max_iter`` gives a number of steps far
      from the ``"auto"`` policy's; the message names the parameter to
      change;
    * a private classifier's utility check (``utility_check="auto"``, on by
      default): a Laplace release, inside the fit's ``epsilon``, of the
      model's training accuracy minus the majority-class rate (``lift_``);
      it fires below 1 point plus a quarter of the release's noise scale and
      then carries the public diagnosis, which is otherwise not given.
    """


class BudgetExceededError(RuntimeError):
    """A fit would exceed the privacy budget it is charged to.

    Raised *before* the mechanism runs: the refused fit spends nothing and is
    not recorded.
    """


class FitDivergedError(ValueError):
    """A private fit released non-finite coefficients.

    Raised after the mechanism ran, from its output alone (post-processing:
    no privacy cost). :class:`~dpestim.model_selection.PrivateSearchCV`
    scores a candidate that raises it as the worst score (post-processing of
    that candidate's output) instead of passing it on, which would reveal
    that the candidate was drawn, and raises it only when the selected
    candidate diverged.
    """
