"""One job mechanism for every engine.

An engine run is a plain generator yielding the events below and checking a CancelToken between
steps. The GUI drives it on a worker thread; the command line drives it in the foreground with
`run_foreground`. Final results are JSON-able dicts, so they go unchanged into session files and
into `--json` output.
"""

from __future__ import annotations

import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, TextIO, Union


class Cancelled(Exception):
    """Raised inside an engine when its cancel token has been set."""


class CancelToken:
    """Thread-safe flag an engine polls; `check()` raises Cancelled once it is set."""

    def __init__(self) -> None:
        self._event = threading.Event()

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
    """Fraction done in [0, 1] (or None when unknown) and a short message."""

    fraction: float | None
    message: str = ""


@dataclass(frozen=True)
class MetricPoint:
    """One point of a live plot: series `name`, x and y (e.g. best length against nodes)."""

    series: str
    x: float
    y: float
    plot: str = "main"


@dataclass(frozen=True)
class PartialResult:
    """An intermediate result (e.g. a new best program); JSON-able payload."""

    kind: str
    data: dict[str, Any]


@dataclass(frozen=True)
class FinalResult:
    """The run's result: a JSON-able dict, stored in sessions and printed by `--json`."""

    data: dict[str, Any]


@dataclass(frozen=True)
class LogLine:
    message: str
    level: str = "info"


Event = Union[Progress, MetricPoint, PartialResult, FinalResult, LogLine]
Job = Iterator[Event]


@dataclass
class JobOutcome:
    """What a completed drive of a job produced."""

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


class _StderrProgress:
    """A one-line progress display for terminals, plain lines when stderr is not a terminal."""

    def __init__(self, stream: TextIO, quiet: bool) -> None:
        self.stream = stream
        self.quiet = quiet
        self.tty = stream.isatty()
        self.start = time.monotonic()
        self.last = 0.0

    def __call__(self, event: Event) -> None:
        if self.quiet:
            return
        now = time.monotonic()
        if isinstance(event, Progress):
            if now - self.last < (0.1 if self.tty else 2.0):
                return
            self.last = now
            pct = "" if event.fraction is None else f"{100 * event.fraction:5.1f}% "
            line = f"[{now - self.start:6.1f}s] {pct}{event.message}"
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
    display = _StderrProgress(stderr or sys.stderr, quiet)
    try:
        outcome = drive(job, display, cancel)
    except KeyboardInterrupt:
        cancel.cancel()
        outcome = JobOutcome(cancelled=True)
    display.finish()
    return outcome
