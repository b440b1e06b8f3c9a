"""A Cappuccino run's progress as the share of its expected time, calibrated by what it measured (issue 49).

core.work_units.WorkPlan counts a run's work in units fixed on the build machine: numpy MACs at
its numpy speed, gcc builds of 2.3 s, program runs of their min_seconds plus start-up. On another
machine, or this one under load, those kinds of work slow down unevenly (a loaded 2-core machine
built programs 1.7-5x slower and ran them 2-14x slower, while the numpy search kept pace), so the
share of the units done drifted from the share of the time, and the window's time-left said
19 s -> 3 s while 61 s -> 30 s remained.

Here every stage's units are seconds on the build machine and each stage has a kind of work
(numpy, compile, run, other). As the run goes, each kind's factor (seconds measured / seconds
planned) is learnt from its finished stages and from the stage in progress. A kind not measured
yet takes the machine's slowdown for one busy thread (`slowdown`: the 1-minute load average per
core, at least 1; ResNet-18's builds ran 1.7x, 3.1x and 4.8x slower at loads of about 2, 5 and 8),
or the builds' factor once builds were measured; program runs on more than one thread (the timed
runs, the thread split's profile) take the larger of the two, squared: each thread gets less CPU
time and every barrier waits for the thread the others' work descheduled (ResNet-18's runs, less
their min_seconds, were 6x slower at a load of 4 where its builds were 1.2x, and 4-18x at loads of
3-7). Numpy work takes the factor of all work measured so far. The time left is the current stage's rest (its own measured
rate blended with the plan, by how far it is) plus the later stages' units times their kinds'
factors (plus the wall-clock waits no load stretches: the timed runs' min_seconds). Each Progress
carries that time left (`seconds_left`, which core.jobs.Eta shows as it is) and the fraction
elapsed / (elapsed + left), which never goes back (a progress bar).

The clock and the slowdown are injectable, so tests replay a known schedule without the wall clock.
"""

from __future__ import annotations

import time
from typing import Callable

from core.jobs import Progress
from core.work_units import Stage, WorkPlan

Clock = Callable[[], float]
MIN_MEASURED_S = 0.2        # a kind's factor is learnt once this much of its work was timed
BLEND = 0.25                # the stage in progress: its own rate weighs (share done) ** BLEND


class CalibratedPlan(WorkPlan):
    def __init__(self, stages: list[Stage], kinds: dict[str, str], clock: Clock = time.monotonic) -> None:
        super().__init__(stages)
        self.kinds = dict(kinds)
        self.clock = clock
        self._start: float | None = None
        self._index = -1                    # the stage in progress
        self._stage_start = 0.0
        self._done_s: dict[str, float] = {}  # kind -> measured seconds of finished stages
        self._done_u: dict[str, float] = {}  # kind -> their planned seconds (units)
        self.slowdown: Callable[[], float] = lambda: 1.0   # this machine's slowdown for one busy thread
        # kinds of work whose threads meet at barriers (program runs on more than one thread)
        self.barrier_kinds: set[str] = set()
        self.fixed: dict[str, float] = {}   # stage -> the part of its units that is wall-clock waiting no load stretches

    def _kind(self, st: Stage) -> str:
        return self.kinds.get(st.name, "other")

    def _locate(self, nominal: float) -> tuple[int, float]:
        """The stage the nominal fraction falls in and how far into it (0..1)."""
        for i, st in enumerate(self.stages):
            if nominal < st.hi or i == len(self.stages) - 1:
                width = st.hi - st.lo
                return i, 0.0 if width <= 0 else max(0.0, min(1.0, (nominal - st.lo) / width))
        return len(self.stages) - 1, 1.0

    def _advance(self, index: int, now: float) -> None:
        """Stages before `index` are finished: the one in progress gets the time since it began."""
        if index <= self._index:
            return
        if self._index >= 0:
            st = self.stages[self._index]
            k = self._kind(st)
            fixed = self.fixed.get(st.name, 0.0)
            self._done_s[k] = self._done_s.get(k, 0.0) + max(0.0, now - self._stage_start - fixed)
            self._done_u[k] = self._done_u.get(k, 0.0) + max(0.0, st.units - fixed)
        self._index, self._stage_start = index, now

    def factor(self, kind: str, extra_s: float = 0.0, extra_u: float = 0.0) -> float:
        """Measured / planned seconds for a kind of work (with the stage in progress's part, when of
        that kind); where it was not measured yet, the prior the module docstring describes."""
        s, u = self._done_s.get(kind, 0.0) + extra_s, self._done_u.get(kind, 0.0) + extra_u
        if s >= MIN_MEASURED_S and u > 0:
            return s / u
        if kind == "numpy":
            s = sum(v for k, v in self._done_s.items() if k != "load")
            u = sum(v for k, v in self._done_u.items() if k != "load")
            return s / u if s >= MIN_MEASURED_S and u > 0 else 1.0
        f = max(1.0, self.slowdown())
        s, u = self._done_s.get("compile", 0.0), self._done_u.get("compile", 0.0)
        if s >= MIN_MEASURED_S and u > 0:
            f = max(f, s / u) if kind in self.barrier_kinds else s / u
        return f * f if kind in self.barrier_kinds else f

    def remaining(self, nominal: float, now: float) -> float:
        """Seconds left when the code reports `nominal` at `now` (stages before it finished)."""
        index, p = self._locate(nominal)
        self._advance(index, now)
        cur = self.stages[index]
        elapsed = now - self._stage_start
        kind = self._kind(cur)
        fixed = self.fixed.get(cur.name, 0.0)
        scaled = max(0.0, cur.units - fixed)
        f_cur = self.factor(kind, max(0.0, elapsed - p * fixed), scaled * p) if p > 0 else self.factor(kind)
        planned = (1.0 - p) * (scaled * f_cur + fixed)
        measured = elapsed * (1.0 - p) / p if p > 0 else planned
        # the stage's own rate counts more as it goes (its steps are alike: compilations, rounds of runs)
        w = p ** BLEND
        left = w * measured + (1.0 - w) * planned
        for st in self.stages[index + 1:]:
            fixed = self.fixed.get(st.name, 0.0)
            left += max(0.0, st.units - fixed) * self.factor(self._kind(st)) + fixed
        return max(0.0, left)

    def time_share(self, nominal: float, now: float | None = None) -> tuple[float, float]:
        """(the share of the expected time, the seconds left) when the code reports `nominal`."""
        now = self.clock() if now is None else now
        if self._start is None:
            self._start = now
        nominal = max(0.0, min(1.0, nominal))
        if nominal >= 1.0:
            return 1.0, 0.0
        elapsed = now - self._start
        left = self.remaining(nominal, now)
        if elapsed <= 0:
            return 0.0, left
        return (min(1.0, elapsed / (elapsed + left)) if elapsed + left > 0 else 1.0), left

    def progress(self, nominal: float, message: str = "") -> Progress:
        """The fraction never goes back (a progress bar); the time left is the plan's own, which the
        fraction alone could not carry once a stage ran slower than planned after a faster one."""
        share, left = self.time_share(nominal)
        self._last = max(self._last, share)
        return Progress(self._last, message, seconds_left=left)
