"""Warnings and errors raised by dpestim."""

__all__ = ["BudgetExceededError", "PrivacyBudgetWarning", "PrivacyLeakWarning"]


class PrivacyLeakWarning(UserWarning):
    """A privacy-relevant quantity was derived from the private data.

    Raised, for instance, when the label set is inferred from ``y`` because
    ``classes=`` was not given: the set of labels present in the training data
    is itself private information and is then released through ``classes_``.
    """


class PrivacyBudgetWarning(UserWarning):
    """The requested privacy parameters give a weak guarantee.

    For example ``delta >= 1 / n_samples``, which permits releasing a whole
    record with probability ``delta``.
    """


class BudgetExceededError(RuntimeError):
    """A fit would exceed the privacy budget it is charged to.

    Raised *before* the mechanism runs: the refused fit spends nothing and is
    not recorded.
    """
