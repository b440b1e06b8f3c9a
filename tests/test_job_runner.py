"""Engines run in worker processes: no engine code in the GUI process, events in order, Cancel and
close leave no process behind, and a crash (even a segfault) becomes a failed run with a message."""

import os

import psutil
import pytest
from PySide6.QtWidgets import QMessageBox

from core.engine import JobRequest
from core.jobs import FinalResult, MetricPoint, PartialResult, Progress
from core.worker import ProcessJob, exit_description
from tests import demo_engine as demo_module

pytestmark = pytest.mark.slow          # each test starts engine worker processes (3-4 s)


@pytest.fixture
def window(qtbot, demo_engine, monkeypatch):
    from gui.main_window import MainWindow

    # the demo engine refuses to run in this process: a job that ran it here would fail
    monkeypatch.setattr(demo_module, "GUI_PID", os.getpid())
    shown = []
    monkeypatch.setattr(QMessageBox, "warning", lambda *a, **k: shown.append(a[2]))
    w = MainWindow()
    w.warnings = shown
    w.children_before = {p.pid for p in _live_children()}     # helpers other tests left (a resource tracker)
    qtbot.addWidget(w)
    w.show()
    yield w
    w.shutdown_jobs()


def _start(window, **settings):
    window.set_current_engine("demo")
    window.project.replace_settings("demo", settings)
    window.run_current()
    return window.project.runs[-1]


# Waits end when what they wait for happens; this only stops a test that hangs (a worker process
# starts in a second or two, more on a loaded machine).
HANG_MS = 60_000


def _wait_done(window, qtbot, run, timeout=HANG_MS):
    qtbot.waitUntil(lambda: run.status != "running", timeout=timeout)
    return run


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _live_children() -> list[psutil.Process]:
    return [p for p in psutil.Process().children(recursive=True) if _alive(p.pid)]


def _left_behind(window) -> list[psutil.Process]:
    """Live child processes of this test process that were not there when the window opened."""
    return [p for p in _live_children() if p.pid not in window.children_before]


def test_the_demo_engine_refuses_the_gui_process(monkeypatch):
    """The guard the window tests rely on: in this process, with GUI_PID set, the engine fails."""
    monkeypatch.setattr(demo_module, "GUI_PID", os.getpid())
    with pytest.raises(AssertionError, match="GUI process"):
        next(demo_module.demo_run(JobRequest(None, None, {"steps": 1}), None))


def test_no_engine_code_runs_in_the_gui_process(window, qtbot):
    seen = []
    window.runner.events.connect(lambda name, events: seen.extend(events))
    run = _wait_done(window, qtbot, _start(window, steps=20))
    assert run.status == "finished" and run.result.to_json() == {"steps": 20, "sum": 190}
    worker_pid = next(e.data.pid for e in seen if isinstance(e, PartialResult) and e.kind == "process")
    assert worker_pid != os.getpid()
    assert not window.runner.running() and not _alive(worker_pid)


def test_events_arrive_in_order_and_the_result_is_recorded(window, qtbot):
    seen = []
    window.runner.events.connect(lambda name, events: seen.extend(events))
    run = _wait_done(window, qtbot, _start(window, steps=400))
    assert [e.x for e in seen if isinstance(e, MetricPoint)] == list(range(400))
    assert [round(e.fraction * 400) for e in seen if isinstance(e, Progress)] == list(range(1, 401))
    assert isinstance(seen[-1], FinalResult) and seen[-1].data.to_json() == {"steps": 400, "sum": 79800}
    assert run.status == "finished" and run.result.to_json() == {"steps": 400, "sum": 79800}
    assert run.series["main"]["sum"][-1] == [399.0, 79800.0] and not run.partial      # in its result now


def test_hidden_tab_draws_what_it_missed_when_shown(window, qtbot):
    run = _start(window, steps=200, delay=0.002)
    window.set_current_engine("cain")
    _wait_done(window, qtbot, run)
    panel = window.panels["demo"]
    window.set_current_engine("demo")
    assert panel._result.to_json() == {"steps": 200, "sum": 19900}
    assert len(panel.plot.series()["sum"][0]) == 200


def test_cancel_ends_the_job_and_every_process_it_started_within_half_a_second(window, qtbot):
    """The engine sleeps without looking at its token: Cancel terminates its process group once the
    grace has passed (CANCEL_GRACE_S, then KILL_GRACE_S to SIGKILL: under half a second). The step
    sleeps ten minutes, so processes that ended were ended; the wait's limit only stops a hang (a
    stopwatch here would measure the machine's load, not the grace)."""
    from core.worker import CANCEL_GRACE_S, KILL_GRACE_S

    assert CANCEL_GRACE_S + KILL_GRACE_S < 0.5
    run = _start(window, steps=100, delay=0.01, children=2, hang_at=5, hang=600)
    qtbot.waitUntil(lambda: "children" in run.partial and getattr(run.partial.get("best"), "step", None) == 4,
                    timeout=HANG_MS)
    pids = [window.runner.pid("demo"), *run.partial["children"].pids]
    assert all(_alive(p) for p in pids)
    window.cancel_current()
    qtbot.waitUntil(lambda: not any(_alive(p) for p in pids), timeout=HANG_MS)
    _wait_done(window, qtbot, run)
    assert run.status == "cancelled" and run.partial["best"].step == 4
    assert not _left_behind(window)


def test_closing_the_window_leaves_no_process(window, qtbot):
    run = _start(window, steps=100, delay=0.01, children=2, hang_at=3, hang=60)
    qtbot.waitUntil(lambda: "children" in run.partial, timeout=HANG_MS)
    pids = [window.runner.pid("demo"), *run.partial["children"].pids]
    window.close()
    assert not any(_alive(p) for p in pids)
    assert not _left_behind(window) and not window.runner.running()
    assert run.status == "cancelled"


@pytest.mark.parametrize("how,said", [
    ("segv", "the engine's process ended with signal SIGSEGV"),
    ("abort", "the engine's process ended with signal SIGABRT"),
    ("exit", "the engine's process ended with exit code 3"),
])
def test_a_crashing_engine_becomes_a_failed_run_with_its_partial_results(window, qtbot, how, said):
    run = _wait_done(window, qtbot, _start(window, steps=10, delay=0.05, crash_at=4, crash=how))
    assert run.status == "failed" and run.error.startswith(said)
    assert run.is_partial and run.partial["best"].step == 3        # what it streamed is kept
    assert said in window.warnings[-1] and window.act_run.isEnabled()
    if how == "segv":       # the fault handler's traceback of the worker is in the log
        assert "Fatal Python error: Segmentation fault" in window.log_view.toPlainText()
    assert not _left_behind(window)


def test_bad_input_in_the_worker_keeps_its_message(window, qtbot):
    run = _wait_done(window, qtbot, _start(window, steps=-1))
    # recorded in the window's words: the setting's label (the demo's schema has no title: its key)
    assert run.status == "failed" and run.error == "steps: steps must be >= 0"
    assert window.warnings[-1].endswith("steps: steps must be >= 0")
    assert "Traceback" not in window.log_view.toPlainText()


def test_worker_errors_keep_type_message_and_traceback(demo_engine):
    job = ProcessJob("demo", JobRequest(None, None, {"steps": 5, "fail_at": 2}))
    job.start()
    assert job.wait(20)
    err = job.outcome.error
    assert job.outcome.status == "failed" and err.kind == "other" and err.type == "RuntimeError"
    assert err.message == "demo failure" and err.text == "RuntimeError: demo failure"
    assert err.detail.startswith("Traceback") and "demo_engine.py" in err.detail      # the child's traceback


def test_an_engine_the_worker_cannot_find_fails_the_run(demo_engine):
    job = ProcessJob("demo", JobRequest(None, None, {}), ref="tests.demo_engine:NO_SUCH_ENGINE")
    job.start()
    assert job.wait(20)
    message = job.outcome.error.text
    assert message.startswith("AttributeError") and "NO_SUCH_ENGINE" in message


def test_exit_descriptions():
    assert exit_description(-11) == "signal SIGSEGV (Segmentation fault)"
    assert exit_description(3) == "exit code 3"


def test_the_worker_reads_the_result_back_so_the_window_does_not(monkeypatch):
    """A large result (f-CNNx's is 0.8 MB) is read into its typed result off the UI thread (in the
    worker, and from the outcome's JSON form on the job's reader thread); the project records the
    typed result without reading it again."""
    from core.engine import get_engine
    from core.project import Project
    from core.workload import CnnNetwork, DataflowTarget

    spec = get_engine("bound")
    job = ProcessJob("bound", JobRequest(CnnNetwork("lenet5"), DataflowTarget(memory_bytes=64 * 1024),
                                         {**spec.default_settings(), "sweep": False}))
    job.start()
    assert job.wait(60) and job.outcome.status == "finished", job.outcome.error
    typed = job.outcome.result
    assert isinstance(typed, spec.result_type) and job.outcome.headline() == dict(typed.headline())

    project = Project.starter()
    run = project.start_run("bound")
    monkeypatch.setattr(spec.result_type, "from_json", lambda *a, **k: pytest.fail("read again"))
    done = project.finish_run(run.id, job.outcome)
    assert done.status == "finished" and done.headline == dict(typed.headline())


def test_a_large_result_tree_is_made_as_it_is_opened(qtbot):
    from PySide6.QtWidgets import QTreeWidget

    from gui.panels.generic import expand_pending, fill_tree

    tree = QTreeWidget()
    qtbot.addWidget(tree)
    result = {"designs": [{"cnn": f"c{i}", "layers": [{"k": j} for j in range(50)]} for i in range(300)]}
    for key, value in result.items():
        fill_tree(tree, value, key)
    designs = tree.topLevelItem(0)
    assert designs.childCount() == 201                  # 200 rows and "… 100 more", made at once
    first = designs.child(0)
    assert first.childCount() == 0 and first.childIndicatorPolicy() == first.ChildIndicatorPolicy.ShowIndicator
    first.setExpanded(True)                             # what a click does
    expand_pending(first)                               # (itemExpanded, connected in the panel)
    assert [first.child(i).text(0) for i in range(first.childCount())] == ["cnn", "layers"]
    assert first.child(1).text(1) == "[50]"


def _autogroup(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/autogroup", encoding="ascii") as f:
            return f.read()
    except OSError:
        return None


def test_engine_processes_run_below_the_window(window, qtbot):
    """Engines are niced, and in the window's session: a session of their own would be a scheduling
    group of its own (Linux autogroups), where a nice value does not weigh against the window."""
    from core.worker import NICENESS

    run = _start(window, steps=100, delay=0.01, children=2, hang_at=3, hang=60)
    qtbot.waitUntil(lambda: "children" in run.partial, timeout=HANG_MS)
    pids = [window.runner.pid("demo"), *run.partial["children"].pids]
    assert all(os.getpriority(os.PRIO_PROCESS, p) >= NICENESS for p in pids)
    assert all(os.getsid(p) == os.getsid(0) for p in pids)
    assert all(os.getpgid(p) == pids[0] for p in pids)                 # one group, cancelled as one
    assert all(_autogroup(p) == _autogroup(os.getpid()) for p in pids)
    window.cancel_current()
    _wait_done(window, qtbot, run)
