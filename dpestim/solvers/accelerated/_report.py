"""The accelerated family's privacy-report texts (a mixin of the solver).

Public quantities only: the solver's parameters, the plan and the noise
multiplier; the final intercept query's line comes from
:mod:`~dpestim.solvers.accelerated._intercept`.
"""

from ._intercept import laplace_noise_line, query_applies

__all__ = ["AcceleratedReportMixin"]


class AcceleratedReportMixin:
    """``mechanism``, ``added_noise``, ``accounting``, ``sampling`` and
    ``composition`` of :class:`~dpestim.solvers.accelerated.base.AcceleratedSolver`."""

    def mechanism(self, plan):
        if self._laplace():
            return (
                "Laplace noise (pure epsilon-DP, delta = 0) of scale noise "
                "multiplier x 2 x clip_norm on the sum of per-example gradients "
                f"clipped to L1 norm {plan.clip_norm:g} (coefficients and intercept "
                "together); 2 x clip_norm is the L1 sensitivity under replacement"
            )
        return (
            "Gaussian noise on the sum of per-example gradients clipped to L2 "
            f"norm {plan.clip_norm:g} (coefficients and intercept together)"
        )

    def added_noise(self, noise_multiplier, plan):
        laplace = self._laplace()
        kind, what = ("Laplace", "scale") if laplace else ("Gaussian", "std")
        if self.noise == "discrete_laplace":
            kind = (
                "exact discrete Laplace on a power-of-two grid (scale about 0.1% "
                "above the continuous one, see dpestim.privacy.discrete)"
            )
        unit = (2.0 if laplace else 1.0) * plan.clip_norm
        unit_text = f"{'2 x ' if laplace else ''}clip norm {plan.clip_norm:.6g}"
        line = laplace_noise_line(self, plan, self._query(noise_multiplier, plan))
        if not self.optimise_budget:
            return (
                f"{kind}, {what} noise multiplier {noise_multiplier:.6g} x "
                f"{unit_text} = {noise_multiplier * unit:.6g} per coordinate{line}"
            )
        _, nms, _ = self.noise_schedule(noise_multiplier, plan)
        return (
            f"{kind}, per-iteration {what} iteration_noise_multipliers_[t] x "
            f"{unit_text}: {nms[0] * unit:.6g} per coordinate at the first "
            f"iteration, {nms[-1] * unit:.6g} at the last{line}"
        )

    def accounting(self, accountant):
        if self._laplace():
            return (
                "closed form (pure epsilon-DP: amplification by sampling "
                "without replacement, basic composition; not dp_accounting)"
            )
        return super().accounting(accountant)

    def sampling(self, plan):
        n, m = plan.n_samples, self._batch(plan)
        if m >= n:
            return "full batch (every record in every iteration)"
        if self._laplace():
            return (
                f"exactly {m} of {n} records drawn uniformly without replacement, "
                "independently in every iteration"
            )
        return (
            f"Poisson, each record independently with probability q={m / n:.6g} "
            f"(expected batch {m}) in every iteration"
        )

    def composition(self, plan):
        what = (
            "per-iteration budgets chosen by the paper's allocation, number of "
            "iterations T* (n_iter_) chosen from public quantities only, at most "
            f"{plan.max_iter}"
            if self.optimise_budget
            else f"{plan.max_iter} iterations with equal budgets"
        )
        if self._laplace():
            query = (
                ", plus the final intercept query's epsilon where it runs (noise)"
                if query_applies(self, plan)
                else ""
            )
            return (
                f"{what}; amplification by sampling without replacement "
                "log(1 + (m/n)(e^eps0 - 1)) and basic composition (sum of "
                f"per-iteration epsilons, iteration_epsilons_{query})"
            )
        return f"{what}; composed by the accountant (dp_accounting) on the DpEvent"
