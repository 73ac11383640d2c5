"""Validation helpers shared by the estimators."""

from .validation import check_generator, check_label_values

__all__ = ["check_generator", "check_label_values"]
