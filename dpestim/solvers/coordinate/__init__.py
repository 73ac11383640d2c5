"""Coordinate-descent family (paper 002): dp-scd (dual stochastic coordinate
descent with a subsampled Gaussian on clipped updates) and seq-dp-scd."""

from .dp_scd import DPSCD
from .seq_dp_scd import SeqDPSCD

__all__ = ["DPSCD", "SeqDPSCD"]
