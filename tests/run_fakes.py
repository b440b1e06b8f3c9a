"""Fake launchers for the run controller (core.run_controller): a run that is recorded and held
open until the test ends it, so window tests record runs without starting engine processes."""

from __future__ import annotations

from core.engine import JobRequest
from core.lifecycle import RunOutcome
from core.run_controller import LocalHandle


class HeldHandle(LocalHandle):
    """A job that runs until `end(outcome)`; Cancel ends it as cancelled. Events are fed with `put`."""

    def cancel(self) -> None:
        if not self.done:
            self.end(RunOutcome.cancelled())


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
