"""Private post-processing of fitted classifiers (group-specific thresholds)."""

from ._threshold import PrivateThresholdOptimizer

__all__ = ["PrivateThresholdOptimizer"]
