"""Issue 49's window leftovers: a Compare tab open at save time comes back with the session; a
failed run's error dialog opens on a window whose Cancel is off and whose bar says "failed"; a
bad setting's message names the field as the tab does, never a command-line flag."""

from __future__ import annotations

import re

from PySide6.QtWidgets import QApplication, QMessageBox
from window_helpers import HANG_MS, example_window

FLAG = re.compile(r"(?<![\w-])--[a-z][\w-]*")          # "--clamp-targets", not "—" nor "a--b"


def settle() -> None:
    for _ in range(4):
        QApplication.processEvents()


# ---------------------------------------------------------------- Compare and the session
def test_a_compare_tab_open_at_save_time_comes_back(qtbot, tmp_path):
    w = example_window(qtbot)
    w.compare(["r3", "r4"])
    path = tmp_path / "with-compare.dfx"
    assert w.save_to(path)
    w.close_compare()
    w.new_session(ask=False)
    assert w.tabs.indexOf(w.compare_view) < 0

    assert w.open_path(path, ask=False)
    settle()
    assert w.tabs.indexOf(w.compare_view) >= 0, "the Compare tab was not restored"
    assert w.tabs.currentWidget() is w.compare_view, "it was on show when saved"
    assert w.compare_view.run_ids() == ["r3", "r4"]

    # behind an engine tab when saved: restored behind it
    w.set_current_engine("bound")
    assert w.save_to(path)
    assert w.open_path(path, ask=False)
    assert w.tabs.indexOf(w.compare_view) >= 0 and w.current_engine().name == "bound"

    # closed when saved: not restored; a session without the key (the example) opens as before
    w.close_compare()
    assert w.save_to(path)
    w.compare(["r3", "r4"])
    assert w.open_path(path, ask=False)
    assert w.tabs.indexOf(w.compare_view) < 0
    w.compare(["r3", "r4"])
    w.open_example(ask=False)
    assert w.tabs.indexOf(w.compare_view) < 0
    w.shutdown_jobs()


def test_a_compared_run_missing_from_the_file_drops_out(tmp_path):
    from core import session as sessions
    from core.project import Project

    p = Project.starter()
    p.view["compare"] = {"runs": ["r1", "r9"], "on_show": True}
    path = tmp_path / "s.dfx"
    sessions.save(p, path)
    assert sessions.load(path).view["compare"]["runs"] == []


# ---------------------------------------------------------------- a failed run's dialog
def test_the_error_dialog_of_a_failed_run_opens_with_cancel_off_and_the_bar_saying_failed(
        qtbot, demo_engine, monkeypatch):
    from gui.main_window import MainWindow

    w = MainWindow(restore_layout=False)
    qtbot.addWidget(w)
    w.show()
    seen: list[tuple[str, bool, str]] = []
    monkeypatch.setattr(QMessageBox, "warning", lambda parent, title, text, *a, **k: seen.append(
        (text, w.act_cancel.isEnabled(), w.progress_bar.text())) or QMessageBox.StandardButton.Ok)
    w.set_current_engine("demo")
    w.project.replace_settings("demo", {"steps": 100, "fail_at": 2})
    w.run_current()
    assert w.act_cancel.isEnabled()
    qtbot.waitUntil(lambda: bool(seen), timeout=HANG_MS)
    text, cancel_enabled, bar = seen[0]
    assert "demo failure" in text
    assert not cancel_enabled, "Cancel stayed enabled behind the error dialog"
    assert bar == "failed", f"the bar read {bar!r} behind the error dialog"
    assert w.act_run.isEnabled()
    w.project.replace_settings("demo", {"steps": 3})            # the next run shows its percentage again
    w.run_current()
    qtbot.waitUntil(lambda: not w.runner.running(), timeout=HANG_MS)
    assert w.progress_bar.format() == "%p%"
    w.shutdown_jobs()


# ---------------------------------------------------------------- the window's words
def test_an_unreachable_target_is_refused_in_the_window_without_a_flag(qtbot, monkeypatch):
    from core.workload import CnnSet, FpgaTarget
    from gui.main_window import MainWindow

    w = MainWindow(restore_layout=False)
    qtbot.addWidget(w)
    w.show()
    seen: list[str] = []
    monkeypatch.setattr(QMessageBox, "warning",
                        lambda parent, title, text, *a, **k: seen.append(text) or QMessageBox.StandardButton.Ok)
    p = w.project
    p.choose("fcnnx", "workloads", p.add("workloads", "LeNet-5", CnnSet(["lenet5"])))
    p.choose("fcnnx", "targets", p.add("targets", "ZC706", FpgaTarget("zc706", 1.0)))
    p.replace_settings("fcnnx", {**p.settings("fcnnx"), "targets": [1e9], "simulate": False})
    w.set_current_engine("fcnnx")
    w.run_current()
    qtbot.waitUntil(lambda: bool(seen), timeout=HANG_MS)
    message = seen[0]
    assert "no design can reach" in message
    assert not FLAG.search(message), f"a command-line flag in the window: {message}"
    assert "settings." not in message, message
    assert ": Target fps: targets no design can reach" in message, "the field by its label"
    assert "“Unreachable targets” to “lower to the attainable fps (eq. 5)”" in message
    w.shutdown_jobs()


# ---------------------------------------------------------------- Cain: the status bar and the listing
def test_the_status_bar_names_the_best_length_the_listing_shows(qtbot, monkeypatch):
    """A Cain search's events reach the window in batches (core.worker: what comes within 20 ms goes
    together), so what the engine makes of one search step arrives at once: here each step's events
    are one batch, each batch's last Progress goes to the status bar, as the run controller does. After
    every batch the best length in the status bar is the one the Program tab lists. It said "best 19"
    over a listing of 17 until the search's next node count, seconds later on a busy search."""
    import core.cain.engine as cain_engine
    from core.engine import JobRequest
    from core.filters import preset
    from core.jobs import CancelToken, PartialResult, Progress
    from gui.main_window import MainWindow

    step = [0]
    real_solve = cain_engine.solve

    def counted_solve(*a, **k):
        for ev in real_solve(*a, **k):
            step[0] += 1
            yield ev

    monkeypatch.setattr(cain_engine, "solve", counted_solve)
    w = MainWindow(restore_layout=False)
    w.interactive = False
    qtbot.addWidget(w)
    w.show()
    w.set_current_engine("cain")
    from run_fakes import Sent

    w.runner.controller.launcher = Sent()           # the run is recorded and held, no worker process starts
    job = w.runner.start("cain")
    w.runner.controller.poll()
    run = w.project.run(job.run_id)
    w.project.show("cain", run.id)
    panel = w.panels["cain"]
    # a node budget, one worker: the same search whatever the machine's load
    events = cain_engine.ENGINE.run(JobRequest(preset("gauss5"), None,
                                               {"workers": 1, "time_s": 600, "max_nodes": 8000}), CancelToken())
    batches: list[list] = []
    at = None
    for ev in events:
        if step[0] != at:
            batches.append([])
            at = step[0]
        batches[-1].append(ev)
    plans = checked = 0
    for batch in batches:
        w.project.record(run.id, batch)              # as the controller records a batch
        w._on_events(run.id, batch)
        last = next((e for e in reversed(batch) if isinstance(e, Progress)), None)
        if last is not None:
            w._on_progress(run.id, last)
        plans += sum(isinstance(e, PartialResult) and e.kind == "plan" for e in batch)
        said = re.search(r"best (\d+)", w.statusBar().currentMessage())
        if said and panel._plan is not None:
            listed = len(panel._plan.program)
            assert int(said.group(1)) == listed, (w.statusBar().currentMessage(), panel.plan_label.text())
            checked += 1
    assert plans >= 2 and checked > 0
    w.shutdown_jobs()


def test_a_bad_scheduler_address_is_named_as_the_studies_dock_names_it(qtbot):
    """core.study names the command line's --cluster; the Studies dock says which of its fields."""
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    w = example_window(qtbot, (1366, 768))
    w.interactive = False
    panel = w.study_panel
    w.study_dock.raise_()
    panel.where.setCurrentIndex(panel.where.findData("address"))
    QTest.mouseClick(panel.address, Qt.MouseButton.LeftButton)
    QTest.keyClicks(panel.address, "10.0.0.1:8786")            # no tcp://
    said: list[str] = []
    w.status = said.append
    assert not panel.run_study()
    assert said and "Dask scheduler address:" in said[-1], said
    assert not FLAG.search(said[-1]), said[-1]
    w.shutdown_jobs()
