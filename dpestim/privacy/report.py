"""A readable, immutable statement of the guarantee a fitted model carries."""

from dataclasses import asdict, dataclass, field

__all__ = ["PrivacyReport"]


@dataclass(frozen=True)
class PrivacyReport:
    """What was run, and what it guarantees.

    Returned by ``privacy_report()`` of every fitted dpestim estimator.
    ``str(report)`` gives a paragraph fit for a log or a data-release form.
    """

    estimator: str
    solver: str
    mechanism: str
    sampling: str
    n_steps: int
    noise_multiplier: float
    clip_norm: float
    neighbouring: str
    accountant: str
    epsilon: float
    delta: float
    dp_event: object
    composition: str = ""
    noise: str = ""
    n_samples_public: bool = True
    hyperparameters: dict = field(default_factory=dict)
    warnings: tuple = field(default_factory=tuple)

    def as_dict(self):
        """The report as a plain dict (the event as its ``repr``)."""
        out = asdict(self)
        out["dp_event"] = repr(self.dp_event)
        return out

    def __str__(self):
        neighbours = {
            "add_or_remove_one": "adding or removing one record",
            "replace_one": "replacing one record",
        }.get(self.neighbouring, self.neighbouring)
        lines = [
            f"{self.estimator} fitted with solver {self.solver!r}",
            f"  guarantee   : ({self.epsilon:.6g}, {self.delta:.3g})-differential "
            f"privacy, datasets neighbouring by {neighbours}",
            f"  mechanism   : {self.mechanism}",
            f"  sampling    : {self.sampling}",
            f"  steps       : {self.n_steps}",
            f"  composition : {self.composition}",
            "  noise       : "
            + (
                self.noise
                or f"noise multiplier {self.noise_multiplier:.6g} "
                f"x clip norm {self.clip_norm:.6g}"
            ),
            f"  accountant  : {self.accountant}",
            "  public      : the number of training records n"
            + (" (sets sampling rate and step count)" if self.n_samples_public else ""),
            f"  DpEvent     : {self.dp_event!r}",
        ]
        if self.hyperparameters:
            lines.append(
                "  hyperparams : "
                + ", ".join(f"{k}={v!r}" for k, v in self.hyperparameters.items())
                + " (resolved from public quantities)"
            )
        if self.warnings:
            lines.append("  warnings during fit:")
            lines.extend(f"    - {w}" for w in self.warnings)
        else:
            lines.append("  warnings during fit: none")
        return "\n".join(lines)
