"""A run's progress as the share of its work done, counted in work units (issue 30).

The time-left estimate (core.jobs.Eta) extrapolates how fast the reported fraction grows, so it is
only as good as the fraction: an engine whose stages report fixed fractions ("synthesising: 0.55")
while the stages' costs differ tenfold (compiling five C programs is most of a Cappuccino run on a
small network) says "about 1 s left" with 80 % of the run to go. Here an engine describes its run
as stages, each with the fraction band it reports in (the code stays as it is) and an estimate of
its work in units that cost about the same time each (layers x images x MACs, C compilations,
timed program runs, joint design points scheduled, simulations). `WorkPlan.remap` turns every
reported fraction into the share of the estimated work done; the Eta's extrapolation then only has
to learn the machine's speed, not the engine's stage structure.

The units' relative costs are constants measured on the build machine (their docstrings say where);
an estimate that becomes known during a run (how many joint points the pruning leaves) updates its
stage with `set_units`, and the reported fraction never goes back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from core.jobs import Event, Progress


@dataclass
class Stage:
    """Part of a run: the nominal fractions [lo, hi) its code reports in, and its estimated work."""

    name: str
    lo: float
    hi: float
    units: float


class WorkPlan:
    def __init__(self, stages: list[Stage]) -> None:
        if not stages:
            raise ValueError("a work plan needs at least one stage")
        self.stages = sorted(stages, key=lambda s: s.lo)
        self._last = 0.0

    def set_units(self, name: str, units: float) -> None:
        """A stage's work, re-estimated (e.g. once its count is known)."""
        for st in self.stages:
            if st.name == name:
                st.units = max(0.0, float(units))
                return
        raise KeyError(f"no stage {name!r}; stages: {', '.join(s.name for s in self.stages)}")

    def share(self, nominal: float) -> float:
        """The share of the estimated work done when the code reports `nominal`."""
        total = sum(s.units for s in self.stages)
        if total <= 0:
            return nominal
        nominal = max(0.0, min(1.0, nominal))
        if nominal >= 1.0:
            return 1.0
        done = 0.0
        for st in self.stages:
            if nominal >= st.hi:
                done += st.units
            elif nominal >= st.lo:
                width = st.hi - st.lo
                done += st.units * ((nominal - st.lo) / width if width > 0 else 0.0)
        return min(1.0, done / total)

    def within(self, name: str, done: float, of: float) -> float:
        """The nominal fraction `done` of `of` units into stage `name` (for code that reports per unit)."""
        st = next(s for s in self.stages if s.name == name)
        part = 0.0 if of <= 0 else max(0.0, min(1.0, done / of))
        return st.lo + (st.hi - st.lo) * part

    def progress(self, nominal: float, message: str = "") -> Progress:
        """A Progress event whose fraction is the work share, never below one reported before."""
        self._last = max(self._last, self.share(nominal))
        return Progress(self._last, message)

    def remap(self, events: Iterator[Event]) -> Iterator[Event]:
        """The engine's events, each Progress's fraction turned into the share of the work done."""
        try:
            for ev in events:
                if isinstance(ev, Progress) and ev.fraction is not None:
                    yield self.progress(ev.fraction, ev.message)
                else:
                    yield ev
        finally:
            close = getattr(events, "close", None)
            if close is not None:
                close()
