"""The window's one way to the run controller (core.run_controller): a QObject that polls it.

Every run the window makes goes through one `RunController`: an engine tab's Run, a study's points
(gui.study_panel), a comparison's parts (gui.targets_panel through core.comparison_run). The controller is Qt-free and records into the project
itself; this adapter only calls its `poll()` on a QTimer (every 50 ms while anything is on its way,
so a chatty engine cannot flood the event loop and plots redraw once per tick, not once per point)
and re-emits its notices as signals on the UI thread. No engine code runs in the window's process:
the controller's default launcher starts each engine in a worker process (core.worker).
"""

from __future__ import annotations

import time
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal

from core.jobs import Eta
from core.project import Project
from core.run_controller import Job, Launcher, Notice, RunController, Setup, StudyJob, process_launcher

DRAIN_BUDGET_S = 0.015      # a study's burst of finished points is spread over several ticks
# A study's points are taken every other tick (100 ms): each one changes the Runs view and the
# study's table, whose redrawing (sized to their contents) is what a busy study costs the window.
STUDY_EVERY = 2


class RunAdapter(QObject):
    """Signals carry the project's run id (and the engine where it helps)."""

    started = Signal(str, str)              # run id, engine
    events = Signal(str, list)              # run id, its events in order (Progress included)
    progress = Signal(str, object)          # run id, the latest Progress of the batch
    finished = Signal(str, object, str)     # run id, its RunOutcome (already recorded), its parent ("": a tab's)
    reused = Signal(str, object)            # run id of a finished run re-used, the Job
    study_record = Signal(str, object, str)     # study id, the point's record, its run id ("" if none)
    study_progress = Signal(str, object)    # study id, Progress (points ended of all)
    study_log = Signal(str, str)            # study id, a line for the log
    study_done = Signal(str, object)        # study id, its StudySummary

    def __init__(self, project: Project, launcher: Launcher = process_launcher, interval_ms: int = 50,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.controller = RunController(project, launcher)
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self.poll)
        self._ticks = 0

    # ------------------------------------------------------------ control
    def start(self, engine: str) -> Job:
        """Run the engine's tab's choice (InputError when it cannot run); the run is recorded now."""
        job = self.controller.start(engine)
        self._timer.start()
        return job

    def submit(self, setup: Setup, **options: Any) -> Job:
        """Run a given setup (a part, a retry; options as RunController.submit's)."""
        job = self.controller.submit(setup, **options)
        self._timer.start()
        return job

    def watch(self) -> None:
        """Poll now on: for runs asked of the controller directly (a comparison's parts,
        core.comparison_run submits them itself)."""
        self._timer.start()

    def retry(self, run_id: str) -> Job:
        """Run a recorded run's setup again, as a new run."""
        job = self.controller.retry(run_id)
        self._timer.start()
        return job

    def start_study(self, runner: object) -> StudyJob:
        study = self.controller.start_study(runner)
        self._timer.start()
        return study

    def cancel(self, engine: str) -> None:
        """Cancel the engine's tab's run; its worker's process group is ended if it does not stop."""
        job = self.controller.tab_job(engine)
        if job is not None:
            self.controller.cancel(job.id)

    def is_running(self, engine: str) -> bool:
        """Whether the engine's tab has a run on its way (a study's points do not count)."""
        return self.controller.tab_job(engine) is not None

    def running(self) -> list[str]:
        """The engines whose tab runs are on its way."""
        return sorted({j.engine for j in self.controller.jobs.values() if j.parent is None})

    def elapsed(self, engine: str) -> float | None:
        job = self.controller.tab_job(engine)
        return None if job is None or job.started is None else time.monotonic() - job.started

    def eta(self, engine: str) -> Eta | None:
        job = self.controller.tab_job(engine)
        return None if job is None else job.eta

    def pid(self, engine: str) -> int | None:
        """The engine's worker process (it leads the group of every process the engine starts)."""
        job = self.controller.tab_job(engine)
        return None if job is None or job.handle is None else job.handle.pid

    def shutdown(self, timeout: float = 5.0) -> bool:
        """Cancel everything and wait for its processes; their ends are still recorded and emitted."""
        ended = self.controller.shutdown(timeout)
        self.poll()
        self._timer.stop()
        return ended

    # ------------------------------------------------------------ the heartbeat
    def poll(self) -> None:
        # the views' drawing counts in the budget; a study's records are taken every STUDY_EVERY ticks
        self._ticks += 1
        self.controller.poll(DRAIN_BUDGET_S, self._emit, studies=self._ticks % STUDY_EVERY == 0)
        if not self.controller.busy():
            self._timer.stop()

    def _emit(self, n: Notice) -> None:
        rid, parent = n.run_id or "", n.group or ""
        if n.kind == "started":
            self.started.emit(rid, n.engine)
        elif n.kind == "events":
            self.events.emit(rid, n.data)
        elif n.kind == "progress":
            if n.run_id is None and n.group is not None:
                self.study_progress.emit(n.group, n.data)
            else:
                self.progress.emit(rid, n.data)
        elif n.kind == "finished":
            self.finished.emit(rid, n.data, parent)
        elif n.kind == "reused":
            self.reused.emit(rid, n.data)
        elif n.kind == "study_record":
            self.study_record.emit(parent, n.data, rid)
        elif n.kind == "log":
            self.study_log.emit(parent, str(n.data))
        elif n.kind == "study_done":
            self.study_done.emit(parent, n.data)
