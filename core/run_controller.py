"""One run controller: starts, records, cancels, retries and finishes every run of a project.

The window's Run button, a study's points and a comparison's parts (core.comparison_run) all go
through one `RunController`. It is Qt-free: a front end calls `poll()` now and then (the window's adapter,
gui.run_adapter, on a QTimer; a test or a script in a loop) and gets back what happened as `Notice`s.
The controller owns the map of running runs and keeps the project up to date itself:

    submit ─► Job (queued) ─► slot free? ─► project.begin_run ─► launcher(engine, request) ─► Handle
    poll ─► handle.take(): events ─► project.record(run, events), progress and time left
         ─► handle.done ─► its RunOutcome (a crash, a handle that raised: a failed outcome in words)
                        ─► project.finish_run ─► Notice("finished")

A `Handle` is one running engine job: by default the engine's own worker process
(core.worker.ProcessJob, `ProcessHandle`); `ThreadHandle` runs core.lifecycle.record_run on a thread
of this process (fake engines in tests, scripts). A study runs its points on this machine's or a Dask
cluster (core.study.runner.StudyRunner on a thread): each point becomes a run of the project when it
is sent out (shown as running) and is finished with its record; see `start_study`.

For runs made of runs (a comparison: several engines on several targets) a job may name a `parent`
(any id: the parts of one comparison share it; the run it starts keeps it as `Run.parent`), the controller runs at most `limit` jobs at once (and
at most `group_limit(parent)` of one parent), an `exclusive` job (a measured, timed part) runs alone:
it starts only once nothing else of the controller runs, and nothing starts beside it. A job asked
for with `reuse=True` whose setup (`setup_key`: engine, workload and target values, settings) equals
a finished run's is not run again: the job is that run.
"""

from __future__ import annotations

import copy
import hashlib
import json
import queue
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Protocol

from core.engine import JobRequest, engines
from core.jobs import CancelToken, Eta, Event, Progress
from core.lifecycle import RunError, RunOutcome, record_run
from core.project import Project, Run, Snapshot

NoticeKind = Literal["started", "events", "progress", "finished", "reused", "log",
                     "study_record", "study_done"]
JobState = Literal["queued", "running", "done"]


# ====================================================================== handles: one running job
class Handle(Protocol):
    """One engine job on its way, seen from the controller (never blocks)."""

    @property
    def pid(self) -> int | None:
        """The process the engine runs in (None: this one)."""
        ...

    def take(self) -> list[Event]:
        """The events that arrived since the last call, in order."""
        ...

    @property
    def done(self) -> bool:
        """True once no more events can arrive and `outcome` is known."""
        ...

    @property
    def outcome(self) -> RunOutcome | None: ...

    def cancel(self) -> None: ...

    def wait(self, timeout: float) -> bool:
        """Block until done (or `timeout` s); True if done."""
        ...

    def kill(self) -> None: ...


Launcher = Callable[[str, JobRequest], Handle]


class ProcessHandle:
    """The engine in a worker process of its own (core.worker): a crash ends the run, not the app."""

    def __init__(self, engine: str, request: JobRequest) -> None:
        from core.worker import ProcessJob

        self.job = ProcessJob(engine, request)
        self.job.start()

    @property
    def pid(self) -> int | None:
        return self.job.pid

    def take(self) -> list[Event]:
        batch: list[Event] = []
        while True:
            try:
                batch.extend(self.job.batches.get_nowait())
            except queue.Empty:
                return batch

    @property
    def done(self) -> bool:
        return self.job.done.is_set()

    @property
    def outcome(self) -> RunOutcome | None:
        return self.job.outcome

    def cancel(self) -> None:
        self.job.cancel()

    def wait(self, timeout: float) -> bool:
        return self.job.wait(timeout)

    def kill(self) -> None:
        self.job.kill()
        self.job.wait(1.0)


class LocalHandle:
    """A job whose events and end are handed over in this process (a queue and a flag): the base of
    ThreadHandle, of a job that could not start, and of the tests' held jobs."""

    def __init__(self) -> None:
        self._events: "queue.SimpleQueue[Event]" = queue.SimpleQueue()
        self._done = threading.Event()
        self._outcome: RunOutcome | None = None

    @property
    def pid(self) -> int | None:
        return None

    def put(self, *events: Event) -> None:
        for ev in events:
            self._events.put(ev)

    def end(self, outcome: RunOutcome) -> None:
        """The job's end: no event comes after it."""
        self._outcome = outcome
        self._done.set()

    def take(self) -> list[Event]:
        batch: list[Event] = []
        while True:
            try:
                batch.append(self._events.get_nowait())
            except queue.Empty:
                return batch

    @property
    def done(self) -> bool:
        return self._done.is_set()

    @property
    def outcome(self) -> RunOutcome | None:
        return self._outcome

    def cancel(self) -> None:
        pass

    def wait(self, timeout: float) -> bool:
        return self._done.wait(timeout)

    def kill(self) -> None:
        self.cancel()


class ThreadHandle(LocalHandle):
    """The engine's generator on a thread of this process, recorded by core.lifecycle.record_run.
    For engines that are safe to run here (tests' fake engines, scripts); Cancel sets the token."""

    def __init__(self, engine: str, request: JobRequest) -> None:
        super().__init__()
        self.token = CancelToken()
        self._thread = threading.Thread(target=self._work, args=(engine, request), name=f"run-{engine}", daemon=True)
        self._thread.start()

    def _work(self, engine: str, request: JobRequest) -> None:
        try:
            outcome = record_run(engines()[engine], request, self.token, self._events.put)
        except BaseException as exc:        # record_run does not raise; a lookup or the machinery might
            outcome = RunOutcome.failed(RunError("crash", f"the engine's thread ended with "
                                                 f"{type(exc).__name__}: {exc}", type=type(exc).__name__))
        self.end(outcome)

    def cancel(self) -> None:
        self.token.cancel()


class _Ended(LocalHandle):
    """A job that ended before it began (it could not start): its outcome says why."""

    def __init__(self, outcome: RunOutcome) -> None:
        super().__init__()
        self.end(outcome)


def process_launcher(engine: str, request: JobRequest) -> Handle:
    return ProcessHandle(engine, request)


def thread_launcher(engine: str, request: JobRequest) -> Handle:
    return ThreadHandle(engine, request)


# ====================================================================== jobs and notices
def setup_key(engine: str, workload: Any, target: Any, settings: dict[str, Any]) -> str:
    """What makes two runs the same computation: the engine, the workload's and target's values (as
    their JSON forms; names and library ids left out) and the settings. A workload that names a file
    (an ONNX model) is keyed by the file's name, not its bytes."""
    def form(v: Any) -> Any:
        if v is None or isinstance(v, dict):
            return v
        return v.to_json()
    text = json.dumps([engine, form(workload), form(target), settings], sort_keys=True, separators=(",", ":"),
                      default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


def _value(snap: Snapshot | None) -> Any:
    return None if snap is None else snap.value


def run_key(run: Run) -> str:
    """The setup key of a recorded run, from its snapshots."""
    return setup_key(run.engine, _value(run.workload), _value(run.target), run.settings)


@dataclass(frozen=True)
class Setup:
    """A run's setup as the project records it: its workload's and target's snapshots (frozen
    copies, shared with the run: never changed) and settings."""

    engine: str
    workload: Snapshot | None
    target: Snapshot | None
    settings: dict[str, Any]

    @property
    def key(self) -> str:
        return setup_key(self.engine, _value(self.workload), _value(self.target), self.settings)

    @classmethod
    def of_run(cls, run: Run) -> "Setup":
        return cls(run.engine, run.workload, run.target, copy.deepcopy(run.settings))


@dataclass
class Job:
    """One run asked of the controller: queued until a slot is free, then a run of the project."""

    id: str
    setup: Setup
    parent: str | None = None
    exclusive: bool = False
    note: str = ""
    state: JobState = "queued"
    run_id: str | None = None            # the project's run, once started (or the finished run re-used)
    reused: bool = False
    handle: Handle | None = None
    started: float | None = None         # time.monotonic() when it started
    eta: Eta = field(default_factory=Eta)
    progress: Progress | None = None
    cancelled: bool = False

    @property
    def engine(self) -> str:
        return self.setup.engine


@dataclass(frozen=True)
class Notice:
    """Something that happened, for a front end to show. `run_id` is the project's run (None for a
    study's own notices); `group` is the job's parent or the study's id (None: a tab's own run)."""

    kind: NoticeKind
    run_id: str | None = None
    engine: str = ""
    data: Any = None
    group: str | None = None


@dataclass
class StudyJob:
    """A study on its way: its StudyRunner on a thread, the points' runs by point index."""

    id: str
    runner: Any                                      # core.study.runner.StudyRunner
    engine: str
    total: int
    thread: threading.Thread | None = None
    inbox: "queue.SimpleQueue[tuple[str, Any]]" = field(default_factory=queue.SimpleQueue)
    run_ids: dict[int, str] = field(default_factory=dict)
    open: set[int] = field(default_factory=set)       # points whose run is still running
    ended: int = 0
    summary: Any = None
    started: float = field(default_factory=time.monotonic)


class RunController:
    """Starts, records, cancels, retries and finishes the runs of one project (see the module's
    docstring). Not thread-safe: call it from one thread (the window's); handles and study runners
    hand their work over through queues."""

    def __init__(self, project: Project, launcher: Launcher = process_launcher, limit: int | None = None) -> None:
        self.project = project
        self.launcher = launcher
        self.limit = limit                           # jobs running at once (None: no limit)
        self.group_limits: dict[str, int] = {}       # parent -> jobs of it running at once
        self.jobs: dict[str, Job] = {}               # job id -> job, queued or running (done ones leave)
        self.studies: dict[str, StudyJob] = {}
        self._serial = 0
        self._queue: list[str] = []                  # job ids waiting, first come first served
        self._groups: dict[str, tuple[int, int]] = {}    # parent -> (ended, asked for) of its jobs
        self._pending_notices: list[Notice] = []     # what happened outside poll(), announced by the next

    # ------------------------------------------------------------ asking for runs
    def start(self, engine: str, *, parent: str | None = None, exclusive: bool = False, reuse: bool = False,
              note: str = "") -> Job:
        """Run the engine on what the project chooses for it (its tab's choice); InputError, naming
        the workload or target, when it cannot run."""
        self.project.check_runnable(engine)
        w, t = self.project.chosen(engine, "workloads"), self.project.chosen(engine, "targets")
        setup = Setup(engine, w.snapshot() if w else None, t.snapshot() if t else None,
                      self.project.settings(engine))
        return self.submit(setup, parent=parent, exclusive=exclusive, reuse=reuse, note=note)

    def submit(self, setup: Setup, *, parent: str | None = None, exclusive: bool = False, reuse: bool = False,
               note: str = "") -> Job:
        """Ask for a run of this setup. With `reuse`, a finished run of the same setup (or a job of it
        already queued or running) is the answer instead of a new run."""
        if reuse:
            key = setup.key
            for job in self.jobs.values():
                if job.setup.key == key and not job.cancelled:
                    return job
            for run in reversed(self.project.runs):
                if run.status == "finished" and run.engine == setup.engine and run_key(run) == key:
                    self._serial += 1
                    done = Job(f"j{self._serial}", setup, parent, exclusive, note, "done", run.id, reused=True)
                    self._count(done, new=True, ended=True)
                    self._pending_notices.append(Notice("reused", run.id, setup.engine, done, parent))
                    return done
        self._serial += 1
        job = Job(f"j{self._serial}", setup, parent, exclusive, note)
        self._count(job, new=True)
        self.jobs[job.id] = job
        self._queue.append(job.id)
        self._start_queued()
        return job

    def retry(self, run_id: str, *, parent: str | None = None) -> Job:
        """Run a recorded run's setup again, as a new run (the old one is kept as it ended)."""
        run = self.project.run(run_id)
        return self.submit(Setup.of_run(run), parent=parent, note=f"again: {run.id}")

    # ------------------------------------------------------------ stopping runs
    def cancel(self, run_or_job: str) -> bool:
        """Cancel one job, by its run's id or its job id: a queued one ends at once (it never ran), a
        running one is asked to stop; its run is recorded as cancelled with what it made."""
        job = self.job(run_or_job)
        if job is None:
            return False
        job.cancelled = True
        if job.state == "queued":
            self._queue.remove(job.id)
            del self.jobs[job.id]
            job.state = "done"
            self._count(job, ended=True)
        elif job.handle is not None:
            job.handle.cancel()
        return True

    def cancel_group(self, parent: str) -> int:
        """Cancel every job of one parent (a comparison's Cancel, a study's); how many were asked."""
        n = sum(self.cancel(j.id) for j in list(self.jobs.values()) if j.parent == parent)
        study = self.studies.get(parent)
        if study is not None:
            study.runner.cancel()
            n += 1
        return n

    def cancel_all(self) -> None:
        for job in list(self.jobs.values()):
            self.cancel(job.id)
        for study in self.studies.values():
            study.runner.cancel()

    def abandon(self, run_or_job: str) -> None:
        """Stop following a job without recording its end (its run was removed from the project)."""
        job = self.job(run_or_job)
        if job is None:
            return
        if job.id in self._queue:
            self._queue.remove(job.id)
        self.jobs.pop(job.id, None)
        self._count(job, ended=True)
        if job.handle is not None:
            job.handle.cancel()
        self._start_queued()

    def shutdown(self, timeout: float = 5.0) -> bool:
        """Cancel everything and wait until every job's process has ended; their ends are recorded
        (as cancelled, with what they made). True when nothing is left behind."""
        self.cancel_all()
        deadline = time.monotonic() + timeout
        for job in list(self.jobs.values()):
            if job.handle is not None and not job.handle.wait(max(0.0, deadline - time.monotonic())):
                job.handle.kill()
                job.handle.wait(1.0)
        for study in self.studies.values():
            if study.thread is not None:
                study.thread.join(max(0.0, deadline - time.monotonic()))
        ended = all(j.handle is None or j.handle.done for j in self.jobs.values()) and \
            all(s.thread is None or not s.thread.is_alive() for s in self.studies.values())
        self._pending_notices.extend(self.poll())       # recorded now, announced by the next poll
        return ended

    # ------------------------------------------------------------ what is on its way
    def job(self, run_or_job: str) -> Job | None:
        if run_or_job in self.jobs:
            return self.jobs[run_or_job]
        return next((j for j in self.jobs.values() if j.run_id == run_or_job), None)

    def running(self, parent: str | None = None) -> list[Job]:
        """Jobs started and not yet finished (of one parent, if given)."""
        return [j for j in self.jobs.values() if j.state == "running" and (parent is None or j.parent == parent)]

    def queued(self) -> list[Job]:
        return [self.jobs[i] for i in self._queue]

    def tab_job(self, engine: str) -> Job | None:
        """The engine's own run on its way (queued or running; not a part, not a study point)."""
        return next((j for j in self.jobs.values() if j.engine == engine and j.parent is None), None)

    def busy(self) -> bool:
        return bool(self.jobs) or any(s.thread is not None for s in self.studies.values())

    def group_progress(self, parent: str) -> tuple[int, int]:
        """(ended, asked for) of the jobs of one parent (re-used ones ended at once; a study: its points)."""
        study = self.studies.get(parent)
        if study is not None:
            return study.ended, study.total
        return self._groups.get(parent, (0, 0))

    # ------------------------------------------------------------ the heartbeat
    def poll(self, budget_s: float | None = None, emit: Callable[[Notice], None] | None = None,
             studies: bool = True) -> list[Notice]:
        """Take what every job and study sent, record it in the project, finish what ended and start
        what may start now; the notices say what happened, in order. With `budget_s`, a study's
        burst of finished points is spread over several calls. With `emit`, each notice is handed
        to it as it happens (the list returned is then empty), so what a front end does with them
        counts against the budget too. `studies=False` leaves studies' records for a later call."""
        notices = _Notices(emit)
        pending, self._pending_notices = self._pending_notices, []
        notices.extend(pending)
        for job in list(self.jobs.values()):
            if job.state != "running" or job.handle is None:
                continue
            handle = job.handle
            try:
                done = handle.done              # read first: after it, no batch can still arrive
                batch = handle.take()
            except Exception as exc:
                done, batch = True, []
                job.handle = _Ended(RunOutcome.failed(RunError(
                    "crash", f"the controller lost the run: {type(exc).__name__}: {exc}", type=type(exc).__name__)))
            if batch and job.run_id is not None:
                self._record(job, batch, notices)
            if done:
                self._finish(job, notices)
        deadline = None if budget_s is None else time.perf_counter() + budget_s
        for study in list(self.studies.values()) if studies else []:
            self._poll_study(study, notices, deadline)
        self._start_queued(notices)
        return list(notices)

    # ------------------------------------------------------------ internals: jobs
    def _count(self, job: Job, ended: bool = False, new: bool = False) -> None:
        if job.parent is None:
            return
        done, total = self._groups.get(job.parent, (0, 0))
        self._groups[job.parent] = (done + ended, total + new)

    def _may_start(self, job: Job) -> bool | None:
        """True: start now; False: not now, later ones may; None: not now, and nothing after it."""
        running = self.running()
        if any(j.exclusive for j in running):
            return None                         # nothing starts beside a measured part
        if job.exclusive:
            return True if not running else None
        if self.limit is not None and len(running) >= self.limit:
            return None
        cap = self.group_limits.get(job.parent) if job.parent is not None else None
        if cap is not None and sum(j.parent == job.parent for j in running) >= cap:
            return False
        return True

    def _start_queued(self, notices: list[Notice] | None = None) -> None:
        sink = self._pending_notices if notices is None else notices
        for job_id in list(self._queue):
            job = self.jobs[job_id]
            may = self._may_start(job)
            if may is None:
                break
            if may:
                self._queue.remove(job_id)
                self._launch(job, sink)

    def _launch(self, job: Job, notices: list[Notice]) -> None:
        s = job.setup
        run = self.project.begin_run(s.engine, s.workload, s.target, s.settings, job.note)
        run.parent = job.parent             # the part's link to its comparison (saved with the session)
        job.run_id, job.state, job.started = run.id, "running", time.monotonic()
        try:
            request = self.project.request_of(run)
            job.handle = self.launcher(s.engine, request)
        except Exception as exc:            # no process, a setup that no longer reads: a failed run
            job.handle = _Ended(RunOutcome.failed(RunError(
                "crash", f"the run could not start: {exc}", type=type(exc).__name__)))
        notices.append(Notice("started", run.id, s.engine, job, job.parent))

    def _record(self, job: Job, batch: list[Event], notices: list[Notice]) -> None:
        assert job.run_id is not None
        try:
            self.project.record(job.run_id, batch)
        except KeyError:                    # the run was deleted while it ran
            pass
        notices.append(Notice("events", job.run_id, job.engine, batch, job.parent))
        last = next((e for e in reversed(batch) if isinstance(e, Progress)), None)
        if last is not None:
            job.progress = last
            job.eta.update(last.fraction, seconds_left=last.seconds_left, stage_seconds_left=last.stage_seconds_left)
            notices.append(Notice("progress", job.run_id, job.engine, last, job.parent))

    def _finish(self, job: Job, notices: list[Notice]) -> None:
        assert job.handle is not None and job.run_id is not None
        outcome = job.handle.outcome
        if outcome is None:             # ended with nothing to say: it was stopped
            outcome = RunOutcome.cancelled() if job.cancelled else RunOutcome.failed(RunError(
                "crash", "the run ended without saying how", type="NoOutcome"))
        self.jobs.pop(job.id, None)
        job.state = "done"
        self._count(job, ended=True)
        try:
            self.project.finish_run(job.run_id, outcome)
        except KeyError:
            pass
        notices.append(Notice("finished", job.run_id, job.engine, outcome, job.parent))

    # ------------------------------------------------------------ studies
    def start_study(self, runner: Any) -> StudyJob:
        """Run a study (a core.study.runner.StudyRunner, built by the caller, which reports a bad
        study before anything starts) on a thread; each point becomes a run of the project when it
        is sent to a worker (running), and is finished with its record (its note: "study NAME #i: params")."""
        self._serial += 1
        study = StudyJob(f"s{self._serial}", runner, runner.study.engine, len(runner.study.points))
        runner.on_record = lambda rec: study.inbox.put(("record", rec))
        runner.on_log = lambda message: study.inbox.put(("log", message))
        runner.on_start = lambda point: study.inbox.put(("start", point))

        def work() -> None:
            try:
                summary = runner.run()
            except BaseException as exc:     # run() catches what a cluster raises; anything else ends here
                summary = exc
            study.inbox.put(("done", summary))
        study.thread = threading.Thread(target=work, name="study-runner", daemon=True)
        self.studies[study.id] = study
        study.thread.start()
        return study

    def _poll_study(self, study: StudyJob, notices: list[Notice], deadline: float | None) -> None:
        from core.study.runner import setup_of_record

        while deadline is None or time.perf_counter() < deadline:
            try:
                kind, payload = study.inbox.get_nowait()
            except queue.Empty:
                return
            if kind == "start":
                w, t, settings = setup_of_record({"request": {**payload.request_json(),
                                                              "workload_name": payload.workload_name,
                                                              "target_name": payload.target_name}})
                run = self.project.begin_run(study.engine, w, t, settings,
                                             _point_note(study, payload.index, payload.params), clock=False)
                study.run_ids[payload.index] = run.id
                study.open.add(payload.index)
                notices.append(Notice("started", run.id, study.engine, payload, study.id))
            elif kind == "record":
                notices.extend(self._study_record(study, payload))
            elif kind == "log":
                notices.append(Notice("log", None, study.engine, payload, study.id))
            elif kind == "done":
                for i in sorted(study.open):        # sent out, never ended: cancelled with the study
                    self._finish_point(study, i, RunOutcome.cancelled(), notices)
                study.summary = payload
                study.thread = None
                del self.studies[study.id]
                notices.append(Notice("study_done", None, study.engine, payload, study.id))
                return

    def _study_record(self, study: StudyJob, rec: dict[str, Any]) -> list[Notice]:
        from core.study.runner import outcome_of_record, setup_of_record

        notices: list[Notice] = []
        i = int(rec["index"])
        run_id = None
        if not rec.get("resumed") and rec.get("status") in ("finished", "failed"):
            outcome = outcome_of_record(rec, engines()[study.engine])
            if i not in study.run_ids:          # from the cache of finished points: never sent out, never running
                w, t, settings = setup_of_record(rec)
                run = self.project.add_finished_run(study.engine, w, t, settings, outcome,
                                                    _point_note(study, i, rec.get("params") or {}))
                study.run_ids[i] = run.id
                notices.append(Notice("finished", run.id, study.engine, outcome, study.id))
            else:
                try:        # what the point streamed comes with its record
                    run = self.project.run(study.run_ids[i])
                    run.partial.update(copy.deepcopy(outcome.partial))
                    run.series.update(copy.deepcopy(outcome.series))
                except KeyError:
                    pass
                self._finish_point(study, i, outcome, notices)
            run_id = study.run_ids[i]
        if rec.get("status") in ("finished", "failed") or rec.get("resumed"):
            study.ended += 1
        notices.append(Notice("study_record", run_id, study.engine, rec, study.id))
        if study.total:
            notices.append(Notice("progress", None, study.engine, Progress(
                study.ended / study.total, f"{study.ended} of {study.total} point(s)"), study.id))
        return notices

    def _finish_point(self, study: StudyJob, i: int, outcome: RunOutcome, notices: list[Notice]) -> None:
        study.open.discard(i)
        run_id = study.run_ids[i]
        try:
            self.project.finish_run(run_id, outcome)
        except KeyError:
            return
        notices.append(Notice("finished", run_id, study.engine, outcome, study.id))


class _Notices(list[Notice]):
    """The notices of one poll: kept, or handed to `emit` as each happens."""

    def __init__(self, emit: Callable[[Notice], None] | None) -> None:
        super().__init__()
        self._emit = emit

    def append(self, n: Notice) -> None:
        if self._emit is None:
            super().append(n)
        else:
            self._emit(n)

    def extend(self, ns: Any) -> None:
        for n in ns:
            self.append(n)


def _point_note(study: StudyJob, index: int, params: dict[str, Any]) -> str:
    """A study point's run says which study and point it is: "study NAME #3: seed=2, mode=auke"."""
    text = ", ".join(f"{k}={study.runner.study.param_words(k, v)}" for k, v in params.items())
    return f"study {study.runner.study.name} #{index}" + (f": {text}" if text else "")
