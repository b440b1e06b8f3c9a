"""Runs engine generators off the UI thread and hands their events to the UI in throttled batches.

Each job runs on a plain Python thread that drives the generator (core.jobs.drive) into a queue.
A QTimer on the UI thread drains the queue at a steady rate, so a chatty engine cannot flood the
event loop and plots redraw once per tick, not once per point.
"""

from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Iterator

from PySide6.QtCore import QObject, QTimer, Signal

from core.jobs import CancelToken, Event, JobOutcome, Progress, drive

JobFactory = Callable[[CancelToken], Iterator[Event]]


@dataclass
class _Job:
    name: str
    token: CancelToken
    thread: threading.Thread
    events: "queue.SimpleQueue[Event]" = field(default_factory=queue.SimpleQueue)
    started: float = field(default_factory=time.monotonic)
    outcome: JobOutcome | None = None


class JobRunner(QObject):
    """One job per engine name at a time; signals carry the engine name."""

    events = Signal(str, list)          # name, events in order (Progress included)
    progress = Signal(str, object)      # name, the latest Progress of the batch
    finished = Signal(str, object)      # name, JobOutcome

    def __init__(self, interval_ms: int = 50, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._jobs: dict[str, _Job] = {}
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self._drain)

    # ------------------------------------------------------------ control
    def start(self, name: str, factory: JobFactory) -> None:
        if self.is_running(name):
            raise RuntimeError(f"a {name} job is already running")
        token = CancelToken()
        job = _Job(name, token, threading.Thread(target=lambda: None))
        job.thread = threading.Thread(target=self._work, args=(job, factory), name=f"job-{name}", daemon=True)
        self._jobs[name] = job
        job.thread.start()
        self._timer.start()

    def cancel(self, name: str) -> None:
        job = self._jobs.get(name)
        if job is not None:
            job.token.cancel()

    def is_running(self, name: str) -> bool:
        return name in self._jobs

    def running(self) -> list[str]:
        return list(self._jobs)

    def elapsed(self, name: str) -> float | None:
        job = self._jobs.get(name)
        return None if job is None else time.monotonic() - job.started

    def shutdown(self, timeout: float = 5.0) -> bool:
        """Cancel every job and wait for their threads; True when none is left behind."""
        for job in self._jobs.values():
            job.token.cancel()
        deadline = time.monotonic() + timeout
        for job in list(self._jobs.values()):
            job.thread.join(max(0.0, deadline - time.monotonic()))
        self._drain()
        self._timer.stop()
        return all(not j.thread.is_alive() for j in self._jobs.values())

    # ------------------------------------------------------------ internals
    @staticmethod
    def _work(job: _Job, factory: JobFactory) -> None:
        try:
            generator = factory(job.token)
        except Exception as exc:  # building the job failed: report like an engine error
            job.outcome = JobOutcome(error=exc)
            return
        job.outcome = drive(generator, job.events.put, job.token)

    def _drain(self) -> None:
        for name, job in list(self._jobs.items()):
            batch: list[Event] = []
            while True:
                try:
                    batch.append(job.events.get_nowait())
                except queue.Empty:
                    break
            if batch:
                self.events.emit(name, batch)
                last = next((e for e in reversed(batch) if isinstance(e, Progress)), None)
                if last is not None:
                    self.progress.emit(name, last)
            if not job.thread.is_alive() and job.events.empty():
                del self._jobs[name]
                self.finished.emit(name, job.outcome or JobOutcome(cancelled=True))
        if not self._jobs:
            self._timer.stop()
