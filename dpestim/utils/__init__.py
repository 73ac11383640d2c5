"""Validation helpers shared by the estimators."""

from .validation import check_generator

__all__ = ["check_generator"]
