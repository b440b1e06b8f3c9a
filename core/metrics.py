"""The metrics each engine's result declares: what a run is summed up by, as data.

Every result type (core.results.EngineResult) lists its metrics in `METRICS`, a tuple of `Metric`:
the key, the name people read, the unit, which way is better and how to read the value from a
typed result. The headline (`EngineResult.headline`) is computed from that declaration, and the
runs table, Compare, the choice bar and studies read the same declaration for names, units,
tooltips and the direction of "better": nobody has to guess a metric from a result's code.

    METRICS = (Metric("length", "Program length", "instructions", "lower", read=lambda r: r.length),)

A run kept from an older version may hold a headline key no result declares any more; it still
shows, under its words and without a unit (core.display.metric_of, which looks engines up).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Sequence

from core.numbers import format_number

Better = Literal["higher", "lower"]
# A headline value: a number, yes/no, a word, one number per item (e.g. per CNN), or None (not measured)
MetricValue = float | int | bool | str | list[float] | None


def _nothing(result: Any) -> MetricValue:
    return None


@dataclass(frozen=True)
class Metric:
    """One number that sums up a run. `unit` is one core.display.format_number knows ("fraction" is
    shown as a percentage, "%" is already one, "×" a factor, "s" and SI units get prefixes);
    `better` is "higher", "lower" or None (neither: a count, a bound); `read` takes the typed result."""

    name: str
    title: str
    unit: str = ""
    better: Better | None = None
    description: str = ""
    read: Callable[[Any], MetricValue] = field(default=_nothing, compare=False, repr=False)
    # a per-item metric (a list value): each item's name, read from the typed result (e.g. the CNNs)
    items: Callable[[Any], list[str]] | None = field(default=None, compare=False, repr=False)

    def text(self, value: Any, result: Any = None) -> str:
        """The value as every view shows it: digits, unit, percent once; a per-item list with each
        item's name where the typed result is at hand ("LeNet-5 30 frames/s, VGG-16 1.2 frames/s")."""
        if self.items is not None and result is not None and isinstance(value, list):
            names = self.items(result)
            if len(names) == len(value):
                return ", ".join(f"{n} {format_number(v, self.unit)}" for n, v in zip(names, value))
        return format_number(value, self.unit)

    def tooltip(self) -> str:
        """What the metric is and which way is better, for a header or a cell's tooltip."""
        way = {"higher": "higher is better", "lower": "lower is better"}.get(self.better or "", "")
        parts = [p for p in (self.description, way) if p]
        return f"{self.title}: {'; '.join(parts)}" if parts else self.title

    def best(self, values: Sequence[Any]) -> list[bool]:
        """Per value: it is the best of these (ties all best); all False when the metric has no
        better way, or fewer than two values are numbers."""
        nums = [v if isinstance(v, (int, float)) and not isinstance(v, bool) else None for v in values]
        known = [v for v in nums if v is not None]
        if self.better is None or len(known) < 2 or len(set(known)) < 2:
            return [False] * len(values)
        top = max(known) if self.better == "higher" else min(known)
        return [v is not None and v == top for v in nums]


DURATION = Metric("duration_s", "Duration", "s", "lower", "wall-clock time of the run")


def declared(result_type: type | None) -> tuple[Metric, ...]:
    """The metrics a result type declares (none for a missing type)."""
    return tuple(getattr(result_type, "METRICS", ())) if result_type is not None else ()


def is_metric_value(value: Any) -> bool:
    """A value a headline may hold (what a session reads back): see MetricValue."""
    if isinstance(value, list):
        return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
    return value is None or isinstance(value, (bool, int, float, str))


def ratio(a: float | None, b: float | None) -> float | None:
    """a / b, None where either is missing or b is not positive (a speed-up that cannot be said)."""
    return a / b if a is not None and b is not None and b > 0 else None
