"""Fake launchers for the run controller (core.run_controller): a run that is recorded and held
open until the test ends it, so window tests record runs without starting engine processes."""

from __future__ import annotations

import threading

from core.engine import JobRequest
from core.jobs import Event
from core.lifecycle import RunOutcome


class HeldHandle:
    """A job that runs until `end(outcome)`; Cancel ends it as cancelled. Events can be fed with `put`."""

    def __init__(self) -> None:
        self._events: list[Event] = []
        self._done = threading.Event()
        self._outcome: RunOutcome | None = None

    @property
    def pid(self) -> int | None:
        return None

    def put(self, *events: Event) -> None:
        self._events.extend(events)

    def end(self, outcome: RunOutcome) -> None:
        self._outcome = outcome
        self._done.set()

    def take(self) -> list[Event]:
        batch, self._events = self._events, []
        return batch

    @property
    def done(self) -> bool:
        return self._done.is_set()

    @property
    def outcome(self) -> RunOutcome | None:
        return self._outcome

    def cancel(self) -> None:
        if not self.done:
            self.end(RunOutcome.cancelled())

    def wait(self, timeout: float) -> bool:
        return self._done.wait(timeout)

    def kill(self) -> None:
        self.cancel()


class Sent(list):
    """The (engine, request) of every run launched, in order; `handles` the held jobs alike."""

    def __init__(self) -> None:
        super().__init__()
        self.handles: list[HeldHandle] = []

    def __call__(self, engine: str, request: JobRequest) -> HeldHandle:
        handle = HeldHandle()
        self.append((engine, request))
        self.handles.append(handle)
        return handle
