"""Group (cell) proportions of the minimax estimators: public, uniform or private.

A mixin of :class:`~dpestim.minimax._base.BaseMinimaxModel`: the proportions
the dual set and the step sizes need, released through a Laplace histogram
(vertex samplers, replace-one) or a Gaussian one (noisy-sgda, add/remove),
and the warning on cells too small for the budget (public quantities and the
released proportions only, never a private count).
"""

import math

import numpy as np

from ..exceptions import PrivacyBudgetWarning

__all__ = ["GroupProportionsMixin"]


class GroupProportionsMixin:
    """Cell proportions and the small-cell warning (see the module docstring)."""

    def _proportions(self, cells, n_cells, eps_prop, rng):
        """Cell proportions: public, uniform, or a Laplace histogram."""
        gp = self.group_proportions
        if isinstance(gp, str) and gp == "uniform":
            pi = np.full(n_cells, 1.0 / n_cells)
            return pi, float(pi.min())
        if isinstance(gp, str) and gp == "private":
            counts = np.bincount(cells, minlength=n_cells).astype(float)
            if math.isfinite(eps_prop):
                # replace-one: the count histogram has l1 sensitivity 2
                counts = counts + rng.laplace(0.0, 2.0 / eps_prop, n_cells)
            floor = (
                0.5 / n_cells
                if self.min_group_proportion is None
                else float(self.min_group_proportion)
            )
            pi = np.clip(counts / cells.shape[0], floor, 1.0)
            return pi, floor
        pi = self._proportion_array(gp, n_cells)
        return pi, float(pi.min())

    @staticmethod
    def _proportion_array(gp, n_cells=None):
        try:
            pi = np.asarray(gp, dtype=float).ravel()
        except (TypeError, ValueError):
            pi = np.zeros(0)
        # proportions of the cells, which partition the rows: they sum to 1
        # (a user trial passed five of 0.1, and it was accepted)
        ok = pi.shape[0] > 0 and np.all((pi > 0) & (pi <= 1))
        ok = ok and abs(float(pi.sum()) - 1.0) <= 1e-3
        if not ok or (n_cells is not None and pi.shape[0] != n_cells):
            count = (
                "one per cell" if n_cells is None else f"{n_cells} values, one per cell"
            )
            raise ValueError(
                "group_proportions must be 'uniform', 'private' or public "
                f"proportions in (0, 1] summing to 1 ({count}, see the "
                f"docstring); got {gp!r}."
            )
        return pi

    def _gaussian_proportions(self, cells, n_cells, sigma_h, rng):
        """Cell proportions for noisy-sgda; second value: are they public."""
        gp = self.group_proportions
        if isinstance(gp, str) and gp == "uniform":
            return np.full(n_cells, 1.0 / n_cells), False
        if isinstance(gp, str) and gp == "private":
            counts = np.bincount(cells, minlength=n_cells).astype(float)
            if sigma_h > 0:
                counts = counts + sigma_h * rng.standard_normal(n_cells)
            # the sums form needs no Lipschitz floor (a record's gradient is
            # bounded whatever pi): the default floor is one row, 1 / n
            floor = (
                1.0 / cells.shape[0]
                if self.min_group_proportion is None
                else float(self.min_group_proportion)
            )
            pi = np.maximum(counts / cells.shape[0], floor)
            return self._at_least_one_row(pi), False
        pi = self._proportion_array(gp, n_cells)
        return self._at_least_one_row(pi), True

    @staticmethod
    def _at_least_one_row(pi):
        """Normalised, and no cell below ``1e-9`` (a proportion below one row
        of any realistic dataset; keeps ``1 / pi`` finite in the dual set)."""
        pi = np.maximum(pi / pi.sum(), 1e-9)
        return pi / pi.sum()

    def _check_group_sizes(self, pi, n, params, sigma_h, public):
        """Warn when a cell is too small for the budget (no private count used).

        ``needed`` is computed from public quantities: a cell needs enough
        rows that the noise on its share of the averaged dual gradient is at
        most 1/10 of the signal, ``10 sigma C / (q sqrt(T / 2))`` rows, and
        that its noisy count is ten noise deviations from zero. It is
        compared with ``pi * n``, where ``pi`` is public or already released
        (privately estimated) proportions; never with a private count.
        """
        sigma, clip = params["noise_multiplier"], params["clip_norm"]
        if sigma == 0 and sigma_h == 0:
            return
        q, T = params["sampling_prob"], params["max_iter"]
        needed = 10 * sigma * clip / (q * math.sqrt(max(1.0, T / 2)))
        needed = int(math.ceil(max(needed, 10 * sigma_h)))
        if isinstance(self.group_proportions, str) and self.group_proportions == (
            "uniform"
        ):
            return
        small = np.flatnonzero(pi * n < needed)
        if small.size:
            what = "public" if public else "privately estimated (released)"
            self._warn(
                f"{small.size} cell(s) (indices {small.tolist()}) have fewer rows "
                f"than the {needed} this budget needs (by the {what} proportions "
                f"group_proportions_): their constraint or risk estimate is "
                "dominated by noise. Increase epsilon, merge groups, or collect "
                "more rows for them.",
                PrivacyBudgetWarning,
            )
