"""A readable, immutable statement of the guarantee a fitted model carries."""

import math
import numbers
from dataclasses import asdict, dataclass, field

import numpy as np

__all__ = ["PrivacyReport", "describe_event"]


@dataclass(frozen=True)
class PrivacyReport:
    """What was run, and what it guarantees.

    Returned by ``privacy_report()`` of every fitted dpestim estimator.
    ``str(report)`` gives a paragraph fit for a log or a data-release form:
    a pure guarantee (``delta == 0``) is stated as such, with the
    ``requested_delta`` the estimator was given and did not use; long
    compositions are summarised (:func:`describe_event`).
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
    requested_delta: float | None = None
    estimates: str = ""

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
        if self.delta == 0 and math.isfinite(self.epsilon):
            guarantee = f"pure {self.epsilon:.6g}-differential privacy (delta = 0"
            if self.requested_delta:
                guarantee += (
                    f"; the delta={self.requested_delta:.3g} given to the estimator "
                    "is not used by this solver and is ignored"
                )
            guarantee += ")"
        elif math.isinf(self.epsilon):
            guarantee = "none (epsilon = inf: this fit is not private)"
        else:
            guarantee = f"({self.epsilon:.6g}, {self.delta:.3g})-differential privacy"
        leaves = [] if self.dp_event is None else _flatten(self.dp_event)
        draws = sum(count for _, count in leaves)
        steps = f"{self.n_steps}"
        private = bool(leaves) and all(
            type(leaf).__name__ not in ("NonPrivateDpEvent", "NoOpDpEvent")
            for leaf, _ in leaves
        )
        if private and draws != self.n_steps:
            steps += f" (the DpEvent composes {draws} mechanism applications)"
        lines = [
            f"{self.estimator} fitted with solver {self.solver!r}",
            f"  guarantee   : {guarantee}, datasets neighbouring by {neighbours}",
            f"  mechanism   : {self.mechanism}",
            f"  sampling    : {self.sampling}",
            f"  steps       : {steps}",
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
            f"  DpEvent     : {describe_event(self.dp_event)}",
        ]
        if self.estimates:
            lines.insert(-1, f"  estimates   : {self.estimates}")
        if self.hyperparameters:
            lines.append(
                "  hyperparams : "
                + ", ".join(f"{k}={v!r}" for k, v in self.hyperparameters.items())
                + (
                    " (resolved from public quantities)"
                    if math.isfinite(self.epsilon)
                    else " (not private: the step rule may read the data)"
                )
            )
        if self.warnings:
            lines.append("  warnings during fit:")
            lines.extend(f"    - {w}" for w in self.warnings)
        else:
            lines.append("  warnings during fit: none")
        return "\n".join(lines)


#: An event whose ``repr`` is longer than this is summarised in the report.
_MAX_EVENT_REPR = 400


def _fields(event):
    """Attribute names of an (attrs-based) ``dp_accounting`` event."""
    return [a.name for a in getattr(type(event), "__attrs_attrs__", ())]


def _flatten(event, count=1):
    """``(event, count)`` leaves of nested composed events, in order."""
    name = type(event).__name__
    if name == "ComposedDpEvent":
        out = []
        for child in event.events:
            out.extend(_flatten(child, count))
        return out
    if name == "SelfComposedDpEvent":
        return _flatten(event.event, count * event.count)
    return [(event, count)]


def _leaf_key(event):
    """The event with its numeric parameters replaced by their names."""
    parts = []
    for name in _fields(event):
        value = getattr(event, name)
        if isinstance(value, int | float) and not isinstance(value, bool):
            parts.append(f"{name}=...")
        else:
            parts.append(f"{name}={_leaf_key(value) if _fields(value) else value!r}")
    return f"{type(event).__name__}({', '.join(parts)})"


def _numbers(event, prefix=""):
    """``{dotted name: value}`` of the numeric parameters of a leaf event."""
    out = {}
    for name in _fields(event):
        value = getattr(event, name)
        if isinstance(value, int | float) and not isinstance(value, bool):
            out[prefix + name] = float(value)
        elif _fields(value):
            out.update(_numbers(value, f"{prefix}{name}."))
    return out


def describe_event(event):
    """A readable one-line description of a ``DpEvent``.

    Short events are shown by their ``repr``. A long composition (for
    example one Laplace event per iteration with a per-iteration scale) is
    summarised as the count of each distinct event or, when the parameters
    vary along a schedule, the count of each kind of event with the first
    and last value of each varying parameter. The exact event stays
    available as the estimator's ``dp_event_``.
    """
    text = repr(event)
    if len(text) <= _MAX_EVENT_REPR:
        return text
    leaves = _flatten(event)
    total = sum(count for _, count in leaves)
    distinct = {}
    for leaf, count in leaves:
        key = repr(leaf)
        distinct[key] = distinct.get(key, 0) + count
    if len(distinct) <= 3:
        parts = [f"{count} x {key}" for key, count in distinct.items()]
    else:
        kinds = {}
        for leaf, count in leaves:
            kinds.setdefault(_leaf_key(leaf), []).append((leaf, count))
        parts = []
        for key, group in kinds.items():
            n = sum(count for _, count in group)
            first, last = _numbers(group[0][0]), _numbers(group[-1][0])
            varying = [
                f"{name} first {first[name]:.6g}, last {last[name]:.6g}"
                if first[name] != last[name]
                else f"{name} {first[name]:.6g}"
                for name in first
            ]
            parts.append(f"{n} x {key.split('(')[0]} ({'; '.join(varying)})")
    return (
        f"{type(event).__name__} of {total} events: {', '.join(parts)} "
        "(full event: dp_event_)"
    )


def seed_warnings(random_state):
    """Report warnings for a ``random_state`` that makes the noise predictable."""
    if isinstance(random_state, numbers.Integral) and not isinstance(
        random_state, bool
    ):
        return (
            f"random_state={int(random_state)} is an integer seed: anyone who knows "
            "it can reproduce the noise, which voids the privacy guarantee. Use "
            "random_state=None for a model you release.",
        )
    if isinstance(random_state, np.random.RandomState):
        return (
            "random_state is a legacy RandomState: the noise is reproducible if it "
            "was seeded, which voids the privacy guarantee. Use random_state=None "
            "for a model you release.",
        )
    return ()
