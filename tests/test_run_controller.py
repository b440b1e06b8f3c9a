"""The run controller (core.run_controller), Qt-free, with fake engines: runs are recorded as they
start, stream and end; cancel, a crash, retry and progress; a study's points become runs; parts with
a parent run under a limit, exclusive parts alone, and unchanged setups are re-used."""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any, Callable

import pytest

from core.engine import JobRequest
from core.jobs import Progress
from core.lifecycle import RunOutcome
from core.project import Project
from core.run_controller import Notice, RunController, Setup, process_launcher, setup_key, thread_launcher
from tests.run_fakes import HeldHandle, Sent

HANG_S = 60.0       # only stops a test that hangs; every wait ends when what it waits for happens


@pytest.fixture
def project(demo_engine) -> Project:
    return Project.starter()


def settle(c: RunController, until: Callable[[], bool], notices: list[Notice] | None = None) -> list[Notice]:
    """Poll until `until()` holds; the notices seen on the way."""
    seen = [] if notices is None else notices
    end = time.monotonic() + HANG_S
    while True:
        seen += c.poll()
        if until():
            return seen
        assert time.monotonic() < end, "the controller never got there"
        time.sleep(0.002)


def demo(settings: dict[str, Any]) -> Setup:
    return Setup("demo", None, None, settings)


# ---------------------------------------------------------------- one run's path
def test_a_run_is_recorded_as_it_starts_streams_and_ends_with_its_progress(project):
    c = RunController(project, thread_launcher)
    job = c.start("demo")
    run = project.run(job.run_id)
    assert run.status == "running" and c.tab_job("demo") is job          # in the Runs table at once
    seen = settle(c, lambda: run.status != "running")
    assert run.status == "finished" and run.result.to_json() == {"steps": 10, "sum": 45}
    assert run.series["main"]["sum"][-1] == [9.0, 45.0] and not run.partial      # in its result now
    kinds = [n.kind for n in seen]
    assert kinds[0] == "started" and kinds[-1] == "finished" and "events" in kinds
    fractions = [n.data.fraction for n in seen if n.kind == "progress"]
    assert fractions and fractions[-1] == 1.0 and fractions == sorted(fractions)
    assert c.tab_job("demo") is None and not c.busy()


def test_a_bad_input_fails_in_the_windows_words(project):
    c = RunController(project, thread_launcher)
    project.replace_settings("demo", {"steps": -1})
    run = project.run(c.start("demo").run_id)
    settle(c, lambda: run.status != "running")
    assert run.status == "failed" and run.error == "steps: steps must be >= 0"


def test_cancel_records_the_run_cancelled_with_what_it_made(project, tmp_path):
    c = RunController(project, thread_launcher)
    # counts 3 steps, then waits for a file that never comes (looking at its token)
    project.replace_settings("demo", {"steps": 3, "wait_for": str(tmp_path / "never")})
    job = c.start("demo")
    run = project.run(job.run_id)
    settle(c, lambda: "process" in run.partial)
    assert c.cancel(run.id)
    seen = settle(c, lambda: run.status != "running")
    assert run.status == "cancelled" and run.partial["process"]
    assert seen[-1].kind == "finished" and seen[-1].data.status == "cancelled"


def test_a_queued_job_cancelled_never_becomes_a_run(project):
    sent = Sent()
    c = RunController(project, sent, limit=1)
    first = c.submit(demo({"steps": 1}))
    second = c.submit(demo({"steps": 2}))
    assert first.state == "running" and second.state == "queued" and second.run_id is None
    before = len(project.runs)
    c.cancel(second.id)
    sent.handles[0].end(RunOutcome.cancelled())
    settle(c, lambda: not c.busy())
    assert len(project.runs) == before and len(sent) == 1


# ---------------------------------------------------------------- crashes become failures in words
def test_a_launcher_that_cannot_start_is_a_failed_run_with_the_reason(project):
    def broken(engine: str, request: JobRequest) -> HeldHandle:
        raise OSError("no process slots left")
    c = RunController(project, broken)
    run = project.run(c.start("demo").run_id)
    settle(c, lambda: run.status != "running")
    assert run.status == "failed" and run.error == "the run could not start: no process slots left"


def test_a_handle_that_breaks_is_a_failed_run_with_the_reason(project):
    class Breaks(HeldHandle):
        def take(self):
            raise EOFError("socket closed")
    c = RunController(project, lambda e, r: Breaks())
    run = project.run(c.start("demo").run_id)
    settle(c, lambda: run.status != "running")
    assert run.status == "failed" and run.error == "the controller lost the run: EOFError: socket closed"


def test_an_engine_process_that_crashes_is_a_failed_run_in_words(project):
    """The real worker process (core.worker), killed by a segfault in its third step."""
    c = RunController(project, process_launcher)
    project.replace_settings("demo", {"steps": 10, "crash_at": 2, "crash": "segv"})
    run = project.run(c.start("demo").run_id)
    settle(c, lambda: run.status != "running")
    assert run.status == "failed"
    assert run.error.startswith("the engine's process ended with signal SIGSEGV")
    assert c.tab_job("demo") is None and not c.busy()


# ---------------------------------------------------------------- retry
def test_retry_runs_the_same_setup_as_a_new_run_and_keeps_the_old(project):
    c = RunController(project, thread_launcher)
    project.replace_settings("demo", {"steps": 4, "fail_at": 2})
    failed = project.run(c.start("demo").run_id)
    settle(c, lambda: failed.status != "running")
    assert failed.status == "failed" and failed.error == "RuntimeError: demo failure"
    project.replace_settings("demo", {"steps": 7})      # the tab changed since: the retry runs what failed
    again = project.run(c.retry(failed.id).run_id)
    assert again.id != failed.id and again.settings == failed.settings and again.note == f"again: {failed.id}"
    settle(c, lambda: again.status != "running")
    assert again.status == "failed" and failed.status == "failed" and failed in project.runs


# ---------------------------------------------------------------- parts of a run of runs
def test_parts_with_a_parent_run_under_its_limit_and_are_each_kept(project):
    handles: dict[int, HeldHandle] = {}

    def launch(engine: str, request: JobRequest) -> HeldHandle:
        return handles.setdefault(request.settings["steps"], HeldHandle())

    c = RunController(project, launch)
    c.group_limits["cmp1"] = 2
    jobs = [c.submit(demo({"steps": n}), parent="cmp1") for n in range(5)]
    other = c.submit(demo({"steps": 99}))               # not a part: not held back by the parts' limit
    assert [j.state for j in jobs] == ["running", "running", "queued", "queued", "queued"]
    assert other.state == "running" and project.run(jobs[0].run_id).status == "running"
    assert c.group_progress("cmp1") == (0, 5)
    most = 0
    while c.queued() or c.running("cmp1"):
        running = c.running("cmp1")
        most = max(most, len(running))
        handles[running[0].setup.settings["steps"]].end(RunOutcome.failed("stopped"))
        c.poll()
    assert most == 2 and c.group_progress("cmp1") == (5, 5)
    runs = [project.run(j.run_id) for j in jobs]
    assert [r.settings["steps"] for r in runs] == [0, 1, 2, 3, 4] and all(r.status == "failed" for r in runs)
    assert c.cancel_group("cmp1") == 0 and c.job(other.id) is other     # the parts' Cancel leaves others alone
    c.cancel(other.id)
    settle(c, lambda: not c.busy())
    assert project.run(other.run_id).status == "cancelled"


def test_an_exclusive_part_never_runs_beside_another(project):
    """Measured parts run alone: a launcher that notes what ran beside each start, and every job
    ended in turn from the oldest; whatever the order of asking, no start sees an exclusive job
    running, and an exclusive job starts with nothing else running."""
    handles: dict[int, HeldHandle] = {}
    beside: dict[int, set[int]] = {}
    c: RunController

    def launch(engine: str, request: JobRequest) -> HeldHandle:
        n = request.settings["steps"]
        beside[n] = {j.setup.settings["steps"] for j in c.running()} - {n}
        handles[n] = HeldHandle()
        return handles[n]

    c = RunController(project, launch, limit=3)
    exclusive = {2, 3, 6}
    jobs = [c.submit(demo({"steps": n}), parent="cmp", exclusive=n in exclusive) for n in range(8)]
    while c.jobs:
        oldest = min(c.running(), key=lambda j: j.setup.settings["steps"])
        handles[oldest.setup.settings["steps"]].end(RunOutcome.failed("done"))
        c.poll()
    assert sorted(beside) == list(range(8))
    for n, others in beside.items():
        if n in exclusive:
            assert others == set(), (n, others)
        else:
            assert not others & exclusive, (n, others)
    assert all(project.run(j.run_id).status == "failed" for j in jobs)


def test_an_unchanged_setup_is_re_used_and_a_changed_one_runs(project):
    c = RunController(project, thread_launcher)
    project.replace_settings("demo", {"steps": 3})
    first = c.start("demo", reuse=True)
    again = c.start("demo", reuse=True)
    assert again is first                                   # asked while running: the same job
    run = project.run(first.run_id)
    settle(c, lambda: run.status != "running")
    count = len(project.runs)
    reused = c.start("demo", reuse=True)
    assert reused.reused and reused.run_id == run.id and reused.state == "done" and len(project.runs) == count
    assert [n.kind for n in c.poll()] == ["reused"]
    project.replace_settings("demo", {"steps": 4})          # a changed setting: a new run
    fresh = c.start("demo", reuse=True)
    assert not fresh.reused and fresh.run_id != run.id
    fresh_run = project.run(fresh.run_id)
    settle(c, lambda: fresh_run.status != "running")
    # names and library ids are not the setup; values and settings are
    assert setup_key("demo", None, None, {"steps": 3}) == setup_key("demo", None, None, {"steps": 3})
    assert setup_key("demo", None, None, {"steps": 3}) != setup_key("demo", None, None, {"steps": 4})


def test_a_failed_run_is_not_re_used(project):
    c = RunController(project, thread_launcher)
    project.replace_settings("demo", {"steps": 3, "fail_at": 1})
    first = project.run(c.start("demo", reuse=True).run_id)
    settle(c, lambda: first.status != "running")
    second = c.start("demo", reuse=True)
    assert not second.reused and second.run_id != first.id
    settle(c, lambda: not c.busy())


# ---------------------------------------------------------------- a study's points are runs
class FakeStudyRunner:
    """What the controller needs of core.study.runner.StudyRunner: its study, run() calling
    on_start / on_record / on_log from its own thread, and cancel(). Point 0 finishes, point 1 fails
    on a bad input, point 2 is sent out and never ends (the study is cancelled meanwhile)."""

    def __init__(self, gate: Any) -> None:
        self.study = SimpleNamespace(name="sweep", engine="demo", points=[0, 1, 2],
                                     param_words=lambda _label, value: str(value))
        self.cluster, self.path = "a fake cluster", "no results file"
        self.on_start: Any = None
        self.on_record: Any = None
        self.on_log: Any = None
        self.gate = gate
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True
        self.gate.set()

    def run(self) -> Any:
        from core.study.runner import StudySummary

        def point(i: int) -> Any:
            req = {"workload": None, "target": None, "settings": {"steps": i}}
            return SimpleNamespace(index=i, params={"steps": i}, request_json=lambda: req,
                                   workload_name=None, target_name=None)
        self.on_log("starting")
        for i in range(3):
            self.on_start(point(i))
        base = {"type": "point", "params": {}, "metrics": {}, "duration_s": 0.5, "series": {}, "log": []}
        self.on_record({**base, "index": 0, "status": "finished", "result": {"steps": 0, "sum": 0},
                        "result_version": 1, "error": None})
        self.on_record({**base, "index": 1, "status": "failed", "result": None, "error": "settings.steps: bad",
                        "run_error": {"kind": "input", "message": "steps must be >= 0", "where": "settings.steps"}})
        self.gate.wait(HANG_S)
        return StudySummary("sweep", "demo", "fake", None, [], cancelled=self.cancelled)


def test_a_studys_points_are_runs_shown_running_then_kept(project):
    import threading

    c = RunController(project, thread_launcher)
    fake = FakeStudyRunner(threading.Event())
    before = len(project.runs)
    study = c.start_study(fake)
    seen = settle(c, lambda: sum(n.kind == "study_record" for n in seen_all) == 2, seen_all := [])
    runs = project.runs[before:]
    assert [r.note for r in runs] == ["study sweep #0: steps=0", "study sweep #1: steps=1", "study sweep #2: steps=2"]
    assert [r.status for r in runs] == ["finished", "failed", "running"]        # point 2 is still out
    assert runs[0].result.to_json() == {"steps": 0, "sum": 0} and runs[0].duration_s == 0.5
    assert runs[1].error == "steps: steps must be >= 0"       # the bad input keeps its field
    progress = [n.data for n in seen if n.kind == "progress"]
    assert isinstance(progress[-1], Progress) and progress[-1].fraction == pytest.approx(2 / 3)
    assert c.group_progress(study.id) == (2, 3)
    c.cancel_group(study.id)
    seen = settle(c, lambda: not c.busy())
    assert runs[2].status == "cancelled"
    assert seen[-1].kind == "study_done" and seen[-1].data.cancelled
    assert [n.kind for n in seen_all if n.kind == "log"] == ["log"]


def test_a_study_points_bad_input_keeps_its_field_from_the_worker_to_the_run(project):
    """Was: the study panel rebuilt a failed point's outcome by hand from its one line, so a bad
    input lost its field and the run said "settings.time_s: …" instead of the field's label."""
    from core.errors import InputError
    from core.engine import get_engine
    from core.run_words import error_words
    from core.study.runner import _FILE_ONLY, StudyRunner, outcome_of_record, setup_of_record
    from tests.test_study import CAIN, study

    point = study(CAIN).points[0]
    out = RunOutcome.failed(InputError("cannot be -1 s", "settings.time_s")).to_json()   # as run_point sends it
    rec = StudyRunner._record(object.__new__(StudyRunner), point, out, 1)
    assert rec["error"] == "settings.time_s: cannot be -1 s" and "run_error" in _FILE_ONLY   # the file keeps its line
    outcome = outcome_of_record(rec, get_engine("cain"))
    w, t, settings = setup_of_record(rec)
    run = project.add_finished_run("cain", w, t, settings, outcome)
    assert run.status == "failed" and run.error == error_words("cain", outcome.error) == "Time: cannot be -1 s"
