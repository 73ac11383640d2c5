"""Private transformers for pipelines, each with its own ``DpEvent``.

- :class:`StandardScaler`: per-feature mean and variance by the Gaussian
  mechanism on features clipped to public bounds.
- :class:`PrivateCentrer`: per-feature means without public bounds (private
  radii and clipped Gaussian means, refined in rounds).
- :class:`RowNormClipper`: data-independent row-norm clipping (no cost).
- :class:`PrivateRowNormClipper` and :func:`estimate_clip_norm`: a private
  quantile of the row norms (exponential mechanism), to clip rows or to set
  an estimator's ``clip_norm``.

Each fit announces its event to the active privacy budgets before it runs,
and :func:`dpestim.model_selection.workflow_guarantee` composes the events of
a fitted pipeline.
"""

from ._centring import PrivateCentrer
from ._norms import PrivateRowNormClipper, RowNormClipper, estimate_clip_norm
from ._quantile import private_quantile
from ._scaler import StandardScaler

__all__ = [
    "PrivateCentrer",
    "PrivateRowNormClipper",
    "RowNormClipper",
    "StandardScaler",
    "estimate_clip_norm",
    "private_quantile",
]
