"""One job mechanism for every engine.

An engine run is a plain generator yielding the events below and checking a CancelToken between
steps. `drive` runs one to its end; core.lifecycle.record_run builds the one run lifecycle on it, for
the command line, the GUI's worker process (core.worker) and studies alike. The final result is the
engine's typed result (core.results), written as JSON only into session files, `--json` output and
across processes. `Eta` turns the fractions an engine reports into the time
left, for the GUI's status bar and the command line's progress line alike.
"""

from __future__ import annotations

import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Protocol, TextIO, Union


class Cancelled(Exception):
    """Raised inside an engine when its cancel token has been set."""


class CancelToken:
    """Thread-safe flag an engine polls; `check()` raises Cancelled once it is set.

    `started` is when the run was asked for, on time.monotonic()'s clock (one clock for every process
    of a machine): the window's worker process gets the moment Run was pressed, so an engine with a
    wall-clock budget (Cain's) counts the process's start-up and imports against it and the run
    ends when the user expects; elsewhere it is when the token was made, just before the engine."""

    def __init__(self, started: float | None = None) -> None:
        self._event = threading.Event()
        self.started = time.monotonic() if started is None else float(started)

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def check(self) -> None:
        if self._event.is_set():
            raise Cancelled()


@dataclass(frozen=True)
class Progress:
    """Fraction done in [0, 1] (or None when unknown) and a short message; `seconds_left`, when the
    engine knows better than an extrapolation of the fraction (it measured its own stages' speeds),
    is the time-left estimate Eta then shows; `stage_seconds_left`, the part of it the stage in
    progress takes (Eta: a stage that outlasts it without a new report is late, see Eta.remaining)."""

    fraction: float | None
    message: str = ""
    seconds_left: float | None = None
    stage_seconds_left: float | None = None


@dataclass(frozen=True)
class MetricPoint:
    """One point of a live plot: series `name`, x and y (e.g. best length against nodes)."""

    series: str
    x: float
    y: float
    plot: str = "main"


def add_metric_point(series: dict[str, dict[str, list[list[float]]]], ev: MetricPoint, limit: int) -> None:
    """Append `ev` to its plot's series; past `limit` points every other older one goes (the first
    and the newest stay), so a long run's plots keep their shape in bounded memory, in the project
    and in a study's worker alike."""
    pts = series.setdefault(ev.plot, {}).setdefault(ev.series, [])
    pts.append([float(ev.x), float(ev.y)])
    if len(pts) > limit:
        keep = pts[-1]
        del pts[1::2]
        if pts[-1] is not keep:
            pts.append(keep)


class PartialData(Protocol):
    """A typed partial result: a dataclass of its engine's (Cain's core.cain.plans.ProgramPlan), read
    by the engine's panel as it is. Its JSON form is made only for a session file or a study's record;
    the class's `from_json(data, where)` reads it back, found by kind in EngineSpec.partial_types."""

    def to_json(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class PartialResult:
    """An intermediate result (e.g. a new best program), typed: what a view shows while the run goes
    on, and what a cancelled or failed run keeps (the last one of each kind). An engine streams only
    what a view reads."""

    kind: str
    data: PartialData


@dataclass(frozen=True)
class FinalResult:
    """The run's result: the engine's typed result (a core.results.EngineResult), which
    core.lifecycle.record_run records as it is. (An engine may still yield its JSON dict, which is
    read through the engine's result type there.)"""

    data: Any


@dataclass(frozen=True)
class LogLine:
    message: str
    level: str = "info"


Event = Union[Progress, MetricPoint, PartialResult, FinalResult, LogLine]
Job = Iterator[Event]


@dataclass
class JobOutcome:
    """What driving a job's events to their end gave: the raw material core.lifecycle.record_run
    turns into a recorded run (a RunOutcome)."""

    result: dict[str, Any] | None = None
    cancelled: bool = False
    error: BaseException | None = None
    events: int = 0
    log: list[str] = field(default_factory=list)


def drive(job: Iterable[Event], on_event: Callable[[Event], None], cancel: CancelToken) -> JobOutcome:
    """Run a job to its end, passing each event on; shared by the CLI and the GUI worker."""
    outcome = JobOutcome()
    try:
        for event in job:
            outcome.events += 1
            if isinstance(event, FinalResult):
                outcome.result = event.data
            on_event(event)
            if cancel.cancelled:
                raise Cancelled()
    except Cancelled:
        outcome.cancelled = True
    except Exception as exc:  # reported to the user, never re-raised into Qt or the shell
        outcome.error = exc
    finally:
        close = getattr(job, "close", None)
        if close is not None:
            try:
                close()
            except Exception:
                pass
    return outcome


class Eta:
    """Time left, from how fast the fraction done has grown since the first Progress seen.

    The rate is measured from the first fraction observed, not from the job's start, so time spent
    before the engine reports (process start, imports, set-up) does not inflate the estimate: an
    engine whose fraction is its time budget spent (Cain) gets exactly the budget left. No estimate
    until the fraction has grown for MIN_SPAN_S, and none for unknown fractions."""

    MIN_SPAN_S = 1.0

    def __init__(self) -> None:
        self._first: tuple[float, float] | None = None
        self._last: tuple[float, float] | None = None
        self._told: tuple[float, float, float | None] | None = None     # (when, seconds left, the stage's part)

    def update(self, fraction: float | None, now: float | None = None, seconds_left: float | None = None,
               stage_seconds_left: float | None = None) -> None:
        """`seconds_left`: the engine's own estimate at `now` (Progress.seconds_left), counted down
        until the next update; without one the fraction's growth is extrapolated.
        `stage_seconds_left`: the part of it the stage in progress takes (Progress.stage_seconds_left)."""
        if fraction is None:
            return
        now = time.monotonic() if now is None else now
        left = None if seconds_left is None else max(0.0, float(seconds_left))
        stage = None if left is None or stage_seconds_left is None else min(left, max(0.0, float(stage_seconds_left)))
        self._told = None if left is None else (now, left, stage)
        fraction = max(0.0, min(1.0, float(fraction)))
        if self._first is None or fraction < self._first[1]:     # a fraction that went back starts over
            self._first = (now, fraction)
        self._last = (now, fraction)

    def remaining(self, now: float | None = None) -> float | None:
        """Seconds left (counting down between updates), or None while unknown."""
        if self._first is None or self._last is None:
            return None
        now = time.monotonic() if now is None else now
        (t0, f0), (t1, f1) = self._first, self._last
        if f1 >= 1.0:
            return 0.0
        if self._told is not None:
            # counted down; a stage that outlasts its part without a new report is late, and is taken
            # to overrun by as much again as it has so far (nothing tells how far it is)
            told_at, left, stage = self._told
            waited = now - told_at
            if stage is None:
                return max(0.0, left - waited)
            return left - stage + abs(stage - waited)
        if f1 <= f0 or t1 - t0 < self.MIN_SPAN_S:
            return None
        return max(0.0, (1.0 - f1) * (t1 - t0) / (f1 - f0) - (now - t1))


def format_duration(seconds: float) -> str:
    """A short duration for people: "8 s", "2 min 05 s", "1 h 12 min"."""
    s = int(round(max(0.0, seconds)))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


def eta_text(eta: Eta, now: float | None = None) -> str:
    """"about 42 s left", or "" while there is no estimate."""
    left = eta.remaining(now)
    return "" if left is None else f"about {format_duration(left)} left"


class ProgressDisplay:
    """A one-line progress display for terminals, plain lines when stderr is not a terminal."""

    def __init__(self, stream: TextIO, quiet: bool) -> None:
        self.stream = stream
        self.quiet = quiet
        self.tty = stream.isatty()
        self.start = time.monotonic()
        self.last = 0.0
        self.eta = Eta()

    def __call__(self, event: Event) -> None:
        if self.quiet:
            return
        now = time.monotonic()
        if isinstance(event, Progress):
            self.eta.update(event.fraction, now, event.seconds_left, event.stage_seconds_left)
            if now - self.last < (0.1 if self.tty else 2.0):
                return
            self.last = now
            pct = "" if event.fraction is None else f"{100 * event.fraction:5.1f}% "
            left = eta_text(self.eta, now)
            line = f"[{now - self.start:6.1f}s] {pct}{left + ', ' if left else ''}{event.message}"
            if self.tty:
                self.stream.write("\r" + line[:100].ljust(100))
            else:
                self.stream.write(line + "\n")
            self.stream.flush()
        elif isinstance(event, LogLine):
            if self.tty:
                self.stream.write("\r" + " " * 100 + "\r")
            self.stream.write(f"{event.level}: {event.message}\n")
            self.stream.flush()

    def finish(self) -> None:
        if self.tty and not self.quiet:
            self.stream.write("\r" + " " * 100 + "\r")
            self.stream.flush()


def run_foreground(job: Iterable[Event], cancel: CancelToken | None = None,
                   stderr: TextIO | None = None, quiet: bool = False) -> JobOutcome:
    """Drive a job from the command line, progress on stderr; Ctrl-C cancels it."""
    cancel = cancel or CancelToken()
    display = ProgressDisplay(stderr or sys.stderr, quiet)
    try:
        outcome = drive(job, display, cancel)
    except KeyboardInterrupt:
        cancel.cancel()
        outcome = JobOutcome(cancelled=True)
    display.finish()
    return outcome
