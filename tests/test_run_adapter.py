"""The window's one adapter to the run controller (gui.run_adapter): a tab's run and a study's
points are runs in the Runs view while they run, and end there; no engine process, no Dask (the
controller's launcher and the study's runner are fakes)."""

from __future__ import annotations

import threading

import pytest

from core.lifecycle import RunOutcome
from core.jobs import Progress
from gui.runs_view import STATUS_COLUMN
from tests.run_fakes import Sent
from tests.test_run_controller import FakeStudyRunner

HANG_MS = 60_000


@pytest.fixture
def window(qtbot, demo_engine, monkeypatch):
    from gui.main_window import MainWindow

    w = MainWindow(restore_layout=False)
    w.interactive = False
    w.sent = Sent()
    monkeypatch.setattr(w.runner.controller, "launcher", w.sent)
    qtbot.addWidget(w)
    w.show()
    yield w
    w.shutdown_jobs()


def _status(window, run_id: str) -> str:
    model = window.runs_view.model
    row = next(i for i, r in enumerate(model.rows) if r["id"] == run_id)
    return model.index(row, STATUS_COLUMN).data()


def test_a_tabs_run_is_shown_running_then_its_end(window, qtbot):
    window.set_current_engine("demo")
    window.run_current()
    run = window.project.runs[-1]
    assert _status(window, run.id) == "running" and window.project.shown("demo") is run
    assert window.runner.is_running("demo") and window.act_cancel.isEnabled() and not window.act_run.isEnabled()
    handle = window.sent.handles[-1]
    handle.put(Progress(0.5, "half way"))
    qtbot.waitUntil(lambda: window.progress_bar.value() == 500, timeout=HANG_MS)
    window.cancel_current()                 # the held job ends as cancelled, as a worker would
    qtbot.waitUntil(lambda: run.status == "cancelled", timeout=HANG_MS)
    assert _status(window, run.id) == "cancelled" and window.act_run.isEnabled()
    assert not window.runner.running()


def test_a_failed_tab_run_says_so_once(window, qtbot, capsys):
    window.set_current_engine("demo")
    window.run_current()
    run = window.project.runs[-1]
    window.sent.handles[-1].end(RunOutcome.failed("demo failure"))
    qtbot.waitUntil(lambda: run.status == "failed", timeout=HANG_MS)
    assert capsys.readouterr().err.count("Demo stopped: demo failure") == 1


def test_a_studys_points_are_runs_of_the_window(window, qtbot, monkeypatch):
    import gui.study_panel as study_panel

    fake = FakeStudyRunner(threading.Event())
    monkeypatch.setattr(study_panel, "StudyRunner", lambda *a, **k: fake)
    panel = window.study_panel
    panel.set_text('{"name": "sweep", "engine": "demo", "settings": {"steps": 1},'
                   ' "axes": [{"param": "settings.steps", "values": [0, 1, 2]}]}')
    assert panel.study is not None, panel.message.text()
    before = len(window.project.runs)
    assert panel.run_study() and panel.is_running()
    qtbot.waitUntil(lambda: len(panel.records) == 2, timeout=HANG_MS)
    runs = window.project.runs[before:]
    assert [r.status for r in runs] == ["finished", "failed", "running"]
    assert _status(window, runs[2].id) == "running"             # a point out on a worker
    assert runs[1].error == "steps: steps must be >= 0"         # the bad input keeps its field
    run_col = panel.table.columnCount() - 1
    assert [panel.table.item(i, run_col).text() for i in range(2)] == [runs[0].id, runs[1].id]
    qtbot.waitUntil(lambda: "2 of 3 point(s) done (1 failed)" in panel.state.text(), timeout=HANG_MS)
    panel.cancel()
    qtbot.waitUntil(lambda: not panel.is_running(), timeout=HANG_MS)
    assert runs[2].status == "cancelled" and _status(window, runs[2].id) == "cancelled"
    assert panel.summary.cancelled and panel.run_button.isEnabled()
