"""Runs engines in worker processes (core.worker) and hands their events to the UI in throttled batches.

No engine code runs in the GUI process: `start` sends the engine's name and the JobRequest to a
child process, whose events arrive on a reader thread (core.worker.ProcessJob). A QTimer on the UI
thread drains them every 50 ms, so a chatty engine cannot flood the event loop and plots redraw once
per tick, not once per point.
"""

from __future__ import annotations

import queue
import time
from dataclasses import dataclass, field

from PySide6.QtCore import QObject, QTimer, Signal

from core.engine import JobRequest
from core.jobs import Eta, Event, Progress
from core.lifecycle import RunOutcome
from core.worker import ProcessJob


@dataclass
class _Job:
    name: str
    process: ProcessJob
    eta: Eta = field(default_factory=Eta)
    started: float = field(default_factory=time.monotonic)


class JobRunner(QObject):
    """One job per engine name at a time; signals carry the engine name."""

    events = Signal(str, list)          # name, events in order (Progress included)
    progress = Signal(str, object)      # name, the latest Progress of the batch
    finished = Signal(str, object)      # name, RunOutcome

    def __init__(self, interval_ms: int = 50, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._jobs: dict[str, _Job] = {}
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self._drain)

    # ------------------------------------------------------------ control
    def start(self, name: str, request: JobRequest) -> None:
        """Run engine `name` on `request` in a new worker process. A process that cannot start
        ends the job with that error (reported through `finished` like any engine error)."""
        if self.is_running(name):
            raise RuntimeError(f"a {name} job is already running")
        process = ProcessJob(name, request)
        process.start()
        self._jobs[name] = _Job(name, process)
        self._timer.start()

    def cancel(self, name: str) -> None:
        """Ask the job to stop; its processes are terminated if they have not ended 0.3 s later."""
        job = self._jobs.get(name)
        if job is not None:
            job.process.cancel()

    def is_running(self, name: str) -> bool:
        return name in self._jobs

    def running(self) -> list[str]:
        return list(self._jobs)

    def elapsed(self, name: str) -> float | None:
        job = self._jobs.get(name)
        return None if job is None else time.monotonic() - job.started

    def eta(self, name: str) -> Eta | None:
        """The job's time-left estimate (core.jobs.Eta), fed with every Progress it reports."""
        job = self._jobs.get(name)
        return None if job is None else job.eta

    def pid(self, name: str) -> int | None:
        """The id of the job's worker process (it leads the group of every process the engine starts)."""
        job = self._jobs.get(name)
        return None if job is None else job.process.pid

    def shutdown(self, timeout: float = 5.0) -> bool:
        """Cancel every job and wait until their processes have ended; True when none is left behind.
        Their final events and outcomes are still emitted, so cancelled runs are recorded."""
        for job in self._jobs.values():
            job.process.cancel()
        deadline = time.monotonic() + timeout
        for job in list(self._jobs.values()):
            if not job.process.wait(max(0.0, deadline - time.monotonic())):
                job.process.kill()
                job.process.wait(1.0)
        ended = all(job.process.done.is_set() for job in self._jobs.values())
        self._drain()
        self._timer.stop()
        return ended

    # ------------------------------------------------------------ internals
    def _drain(self) -> None:
        for name, job in list(self._jobs.items()):
            done = job.process.done.is_set()        # read first: after it, no batch can still arrive
            batch: list[Event] = []
            while True:
                try:
                    batch.extend(job.process.batches.get_nowait())
                except queue.Empty:
                    break
            if batch:
                self.events.emit(name, batch)
                last = next((e for e in reversed(batch) if isinstance(e, Progress)), None)
                if last is not None:
                    job.eta.update(last.fraction, seconds_left=last.seconds_left)
                    self.progress.emit(name, last)
            if done:
                del self._jobs[name]
                self.finished.emit(name, job.process.outcome or RunOutcome.cancelled())
        if not self._jobs:
            self._timer.stop()
