"""A Cappuccino run's time left, from its own structure and the rates it measured (issue 49).

core.work_units.WorkPlan counts a run's work per stage (core.cappuccino.engine.plan_work): forward
passes in MACs, C builds, timed program runs of their min_seconds and passes, each turned into
seconds on the build machine by that machine's rate for the kind (numpy MACs/s, a build's
seconds, the C programs' MACs/s). Each stage has a kind of work (load, numpy, compile, split, run,
other) and runs on some threads (the programs on the target's, the rest on one).

Another machine, or this one under other work, slows each kind by its own factor, and the load may
change during a run. So the estimate separates the two:

* the machine's share: a thread among the `load` runnable ones on `cores` cores gets cores / load
  of a core (fair share, at least a whole one), and a program adds its threads - 1 to the load its
  own sampling thread is counted in; fair = max(1, (load + threads - 1) / cores), read from the
  1-minute load average as the run goes;
* threads that wait for each other: a program's threads meet at a barrier after every op, so an op
  ends when its last thread does. A thread off its core (a share 1 - 1/fair of the time) waits for
  it; the longest of T such waits, taken as alike and exponential, is H_T = 1 + 1/2 + ... + 1/T
  times the mean of one (the harmonic number). So a program on T threads runs `barrier_slowdown` =
  1 + (H_T - 1)(1 - 1/fair) slower again: 1 alone or on one thread, up to 1.5 for two threads on a
  crowded machine (two-thread programs ran 1.3-2.4x slower than fair share on a load of 4-10 per
  core). Only the passes wait at barriers, not a run's start-up (the process, its weight file,
  onnxruntime's import): the part of a kind's counted work that is passes (`bound`, from the
  plan's shape: VGG-16's runs 0.8, the digits CNN's 0.01, which waits out min_seconds) bears it.
  `share_slowdown` = fair x (1 + bound x (barrier_slowdown - 1));
* each kind's speed on this machine against the build machine, with that share taken out: its
  measured seconds over its planned seconds times the share slowdown over the time it ran; a kind
  not measured yet has the build machine's (1): the plan's rates are that machine's, from MACs.

A later stage is then expected to take units x its kind's speed x the share slowdown now, plus the
wall-clock waits no load stretches (`fixed`: the timed runs' min_seconds). The stage in progress
blends its own rate (its steps are alike: builds, rounds of runs, the search's MACs) with that
expectation by how far it is; a stage that reports no step inside (the thread split's profile, a
network's load) and has outrun its expectation is taken as half done: with no signal of how far it
is, the time left is at least the time it has taken. No constant here is fitted to a network.

Each Progress carries the time left (`seconds_left`, which core.jobs.Eta shows as it is) and the
fraction elapsed / (elapsed + left), which never goes back (a progress bar). Every input is kept in
`journal`, so a recorded run replays through another estimator (benchmarks/eta_error.py --replay).
The clock and the load are injectable: tests replay a made-up schedule without the wall clock.
"""

from __future__ import annotations

import time
from typing import Any, Callable

from core.jobs import Progress
from core.work_units import Stage, WorkPlan

Clock = Callable[[], float]
MIN_MEASURED_S = 0.2        # a kind's speed is learnt once this much of its work was timed
BLEND = 0.25                # the stage in progress: its own rate weighs (share done) ** BLEND


def barrier_slowdown(threads: int, fair: float) -> float:
    """How much longer than its fair share a program on `threads` threads that meet at a barrier
    after every op takes, when each thread gets 1/`fair` of a core: an op waits for the last of its
    threads, each off its core a share 1 - 1/fair of the time; the longest of T alike exponential
    waits is H_T (1 + 1/2 + ... + 1/T) times the mean of one."""
    harmonic = sum(1.0 / t for t in range(1, max(1, threads) + 1))
    return 1.0 + (harmonic - 1.0) * (1.0 - 1.0 / max(1.0, fair))


def passes_share(shape: dict[str, float]) -> dict[str, float]:
    """The part of the programs' counted work (less the waits no load stretches) that is their
    passes, per kind ("run": the timed runs, "split": the thread split's comparison), as
    core.cappuccino.engine.plan_work counts them from the shape: a run starts (the process, its
    weight file), computes a pass for the logits, then passes for min_seconds (a wait when a pass is
    shorter); onnxruntime's runs add its start-up."""
    from core.cappuccino import engine as capp     # its rates; it imports this module

    if not shape.get("macs") or not shape.get("compiling", 1.0):
        return {}
    one = shape["macs"] * shape.get("images", 1.0) / capp.C_MACS_PER_S
    min_s = shape.get("min_seconds", 0.0)
    split_s = min(min_s, 0.3)
    start = capp.RUN_START_S + shape.get("weight_bytes", 0.0) / capp.WEIGHT_READ_BYTES_PER_S + one
    runs = shape.get("runs", 0.0)
    ort = shape.get("repeats", 0.0) * capp.ORT_START_S if shape.get("onnx") else 0.0
    counted = {"run": runs * (start + max(min_s, one)) + ort - shape.get("timing_wait_s", 0.0),
               "split": start + 6 * (max(split_s, one) + one) - shape.get("split_wait_s", 0.0)}
    passes = {"run": runs * (one + (one if one >= min_s else 0.0)),
              "split": one + 6 * (one + (one if one >= split_s else 0.0))}
    return {k: min(1.0, passes[k] / counted[k]) for k in counted if counted[k] > 0}


class CalibratedPlan(WorkPlan):
    def __init__(self, stages: list[Stage], kinds: dict[str, str], clock: Clock = time.monotonic) -> None:
        super().__init__(stages)
        self.kinds = dict(kinds)
        self.clock = clock
        self._start: float | None = None
        self._index = -1                    # the stage in progress
        self._stage_start = 0.0
        self._shared_s = 0.0                # ∫ share slowdown dt over the stage in progress
        self._seen = 0.0                    # when the share was last sampled
        self._done_s: dict[str, float] = {}  # kind -> measured seconds of finished stages (less their waits)
        self._done_u: dict[str, float] = {}  # kind -> their planned seconds x the share slowdown they ran at
        # the load average per core (os.getloadavg()[0] / cores), sampled at every report
        self.slowdown: Callable[[], float] = lambda: 0.0
        self.cores = 1
        self.threads: dict[str, int] = {}   # kind -> the threads its work runs on (default 1)
        self.fixed: dict[str, float] = {}   # stage -> the part of its units that is wall-clock waiting no load stretches
        self._load = 0.0
        # the estimator's inputs as they came, [time, what, ...], so a recorded run can be replayed
        # through another estimator (benchmarks/eta_error.py --trace / --replay)
        self.journal: list[list[Any]] = []
        self.shape: dict[str, float] = {}
        self.bound: dict[str, float] = {}   # kind -> the part of its work (less its waits) that is passes

    def set_units(self, name: str, units: float) -> None:
        super().set_units(name, units)
        self.journal.append([self.clock(), "units", name, float(units)])

    def set_shape(self, shape: dict[str, float]) -> None:
        """The run's work counted in units of each kind (the engine's plan_work), and the waits and
        threads that follow from it."""
        self.shape = dict(shape)
        self.journal.append([self.clock(), "shape", dict(shape)])
        self.cores = max(1, int(shape.get("cores", self.cores)))
        threads = max(1, int(shape.get("threads", 1)))
        self.threads = {"run": threads, "split": threads}
        self.fixed["timing"] = float(shape.get("timing_wait_s", 0.0))
        self.fixed["split"] = self.fixed["split_check"] = float(shape.get("split_wait_s", 0.0))
        self.bound = passes_share(shape)

    def _kind(self, st: Stage) -> str:
        return self.kinds.get(st.name, "other")

    def share_slowdown(self, kind: str) -> float:
        """How much slower than alone this kind of work runs at the load now: a thread's fair share,
        and for a program on several threads the waits at its barriers (`barrier_slowdown`)."""
        threads = self.threads.get(kind, 1)
        fair = max(1.0, self._load + (threads - 1) / self.cores)
        return fair * (1.0 + self.bound.get(kind, 0.0) * (barrier_slowdown(threads, fair) - 1.0))

    def _locate(self, nominal: float) -> tuple[int, float]:
        """The stage the nominal fraction falls in and how far into it (0..1)."""
        for i, st in enumerate(self.stages):
            if nominal < st.hi or i == len(self.stages) - 1:
                width = st.hi - st.lo
                return i, 0.0 if width <= 0 else max(0.0, min(1.0, (nominal - st.lo) / width))
        return len(self.stages) - 1, 1.0

    def _sample(self, now: float) -> None:
        """The share slowdown of the stage in progress, integrated over the time since the last sample."""
        if self._index >= 0:
            self._shared_s += max(0.0, now - self._seen) * self.share_slowdown(self._kind(self.stages[self._index]))
        self._seen = now

    def _mean_share(self, now: float) -> float:
        """The stage in progress's share slowdown, averaged over its time so far."""
        elapsed = now - self._stage_start
        if self._index < 0:
            return 1.0
        return self._shared_s / elapsed if elapsed > 0 else self.share_slowdown(self._kind(self.stages[self._index]))

    def _advance(self, index: int, now: float) -> None:
        """Stages before `index` are finished: the one in progress gets the time since it began."""
        if index <= self._index:
            return
        if self._index >= 0:
            st = self.stages[self._index]
            k = self._kind(st)
            fixed = self.fixed.get(st.name, 0.0)
            self._done_s[k] = self._done_s.get(k, 0.0) + max(0.0, now - self._stage_start - fixed)
            self._done_u[k] = self._done_u.get(k, 0.0) + max(0.0, st.units - fixed) * self._mean_share(now)
        self._index, self._stage_start, self._shared_s, self._seen = index, now, 0.0, now

    def speed(self, kind: str, extra_s: float = 0.0, extra_u: float = 0.0) -> float:
        """Seconds here per planned second of this kind with the machine's share taken out (with the
        stage in progress's part, when of that kind); 1, the build machine's, until measured (kinds
        differ too much to stand in for each other: numpy kept pace on a loaded machine where the
        two-thread programs slowed tenfold)."""
        s, u = self._done_s.get(kind, 0.0) + extra_s, self._done_u.get(kind, 0.0) + extra_u
        if s >= MIN_MEASURED_S and u > 0:
            return s / u
        return 1.0

    def factor(self, kind: str) -> float:
        """Seconds here per planned second of this kind at the load now."""
        return self.speed(kind) * self.share_slowdown(kind)

    def remaining(self, nominal: float, now: float) -> float:
        """Seconds left when the code reports `nominal` at `now` (stages before it finished)."""
        return sum(self._left(nominal, now))

    def _left(self, nominal: float, now: float) -> tuple[float, float]:
        """(the stage in progress's seconds left, the later stages')."""
        index, p = self._locate(nominal)
        self._sample(now)
        self._advance(index, now)
        cur = self.stages[index]
        elapsed = now - self._stage_start
        kind = self._kind(cur)
        fixed = self.fixed.get(cur.name, 0.0)
        scaled = max(0.0, cur.units - fixed)
        if p > 0:
            own = self.speed(kind, max(0.0, elapsed - p * fixed), scaled * p * self._mean_share(now))
            planned = (1.0 - p) * (scaled * own * self.share_slowdown(kind) + fixed)
            # the stage's own rate counts more as it goes (its steps are alike)
            w = p ** BLEND
            left = w * elapsed * (1.0 - p) / p + (1.0 - w) * planned
        else:
            # no step reported inside yet: the expectation; once outrun, late by as much again
            left = abs(scaled * self.factor(kind) + fixed - elapsed)
        later = 0.0
        for st in self.stages[index + 1:]:
            fixed = self.fixed.get(st.name, 0.0)
            later += max(0.0, st.units - fixed) * self.factor(self._kind(st)) + fixed
        return max(0.0, left), later

    def time_share(self, nominal: float, now: float | None = None) -> tuple[float, float, float]:
        """(the share of the expected time, the seconds left, the stage in progress's part of them)
        when the code reports `nominal`."""
        now = self.clock() if now is None else now
        if self._start is None:
            self._start = now
        nominal = max(0.0, min(1.0, nominal))
        if nominal >= 1.0:
            return 1.0, 0.0, 0.0
        elapsed = now - self._start
        stage, later = self._left(nominal, now)
        left = stage + later
        if elapsed <= 0:
            return 0.0, left, stage
        return (min(1.0, elapsed / (elapsed + left)) if elapsed + left > 0 else 1.0), left, stage

    def progress(self, nominal: float, message: str = "") -> Progress:
        """The fraction never goes back (a progress bar); the time left is the plan's own, which the
        fraction alone could not carry once a stage ran slower than planned after a faster one."""
        self._load = max(0.0, float(self.slowdown()))
        self.journal.append([self.clock(), "progress", float(nominal), message, self._load])
        share, left, stage = self.time_share(nominal)
        self._last = max(self._last, share)
        return Progress(self._last, message, seconds_left=left, stage_seconds_left=stage)
