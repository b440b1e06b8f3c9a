"""The Studies dock: the study is checked as it is typed, a run fills the table as points arrive,
every point becomes a run of the project (listed, opened), plots draw, Cancel stops the cluster."""

from __future__ import annotations

import json

import psutil
import pytest
from PySide6.QtWidgets import QMessageBox
from study_helpers import CAIN_STUDY

# a node budget, not a time budget: every point finds its program however loaded the machine
STUDY = {**CAIN_STUDY, "name": "panel test", "metrics": ["length", "nodes_explored"]}


@pytest.fixture
def window(qtbot, monkeypatch, tmp_path):
    from gui.main_window import MainWindow

    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Discard)
    w = MainWindow(restore_layout=False)
    qtbot.addWidget(w)
    w.show()
    w.study_panel.workers.setValue(2)
    yield w
    w.study_panel.shutdown()
    w.shutdown_jobs()


def _set(panel, doc, tmp_path):
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc, indent=1))
    assert panel.load_path(path)


def test_the_dock_checks_the_study_as_typed(window, tmp_path):
    panel = window.study_panel
    assert window.study_dock.windowTitle() == "Studies"
    assert window.study_dock.toggleViewAction() in window.menuBar().actions()[2].menu().actions()
    assert panel.study is not None and panel.run_button.isEnabled()         # the default example is valid
    panel.editor.setPlainText(json.dumps({**STUDY, "axes": [{"param": "settings.time_s", "values": [1, -1]}]}))
    panel.check()
    assert panel.study is None and not panel.run_button.isEnabled()
    assert "study.axes[0].values[1]" in panel.message.text()
    assert panel.examples.count() > 6
    panel.examples.setCurrentIndex(1)
    panel._example_chosen(1)
    assert panel.study is not None and panel.path is not None and panel.path.parent.name == "studies"


@pytest.mark.slow
def test_a_study_fills_the_table_and_becomes_runs(window, qtbot, tmp_path):
    panel = window.study_panel
    _set(panel, STUDY, tmp_path)
    before = len(window.project.runs)
    assert panel.run_study()
    assert not panel.run_button.isEnabled() and panel.cancel_button.isEnabled()
    qtbot.waitUntil(lambda: not panel.is_running(), timeout=90_000)
    assert panel.summary is not None and panel.summary.counts["finished"] == 4
    runs = window.project.runs[before:]
    assert len(runs) == 4 and all(r.engine == "cain" and r.status == "finished" for r in runs)
    assert all(r.note.startswith("study panel test #") and r.headline["length"] > 0 for r in runs)
    assert {r.settings["mode"] for r in runs} == {"cain", "auke"}
    status_col = 1 + 2
    assert [panel.table.item(i, status_col).text() for i in range(4)] == ["finished"] * 4
    run_col = panel.table.columnCount() - 1
    ids = [panel.table.item(i, run_col).text() for i in range(4)]
    assert set(ids) == {r.id for r in runs}
    assert window.runs_view.model.rowCount() == len(window.project.runs)       # the Runs view lists them
    panel.table.cellDoubleClicked.emit(2, 0)
    assert window.current_engine().name == "cain" and window.bars["cain"].shown_run == ids[2]
    # plots: the metric against the first axis, and the Pareto front of the two metrics
    assert panel.plot_y.currentData() == "length" and panel.plot_x.currentText() == "seed"
    assert panel.plot_y.currentText() == "Program length (instructions)"
    assert panel.plot.getPlotItem().listDataItems()
    front = panel.front_indices()
    assert front and set(front) <= set(range(4))
    assert (tmp_path / "s.results.jsonl").exists()


@pytest.mark.slow
def test_cancel_stops_the_cluster(window, qtbot, tmp_path):
    panel = window.study_panel
    # no node budget and a long time: the points search until they are cancelled
    _set(panel, {**STUDY, "settings": {**STUDY["settings"], "time_s": 600.0, "max_nodes": None}}, tmp_path)
    me = psutil.Process()
    before = {c.pid for c in me.children(recursive=True)}
    assert panel.run_study()
    qtbot.waitUntil(lambda: panel.runner is not None and panel.runner.client is not None
                    and any(panel.runner.client.processing().values()), timeout=60_000)
    panel.cancel()
    qtbot.waitUntil(lambda: not panel.is_running(), timeout=30_000)
    assert panel.summary.cancelled and panel.summary.counts["not_run"] == 4
    left = [c for c in me.children(recursive=True) if c.pid not in before and c.is_running()
            and c.status() != psutil.STATUS_ZOMBIE and "resource_tracker" not in " ".join(c.cmdline())]
    assert left == []
    assert "cancelled" in panel.state.text()


def test_a_search_study_opens_its_front_with_its_objectives(window, tmp_path):
    """The Studies dock shows a search's Pareto front over its two objectives, in their directions,
    as points arrive (the plot redraws from each record)."""
    from tests.test_study_search import GRID

    panel = window.study_panel
    doc = {**GRID, "search": {"sampler": "tpe", "budget": 4, "objectives": [
        {"metric": "memory", "direction": "maximize"}, {"metric": "optimal_traffic", "direction": "minimize"}]}}
    _set(panel, doc, tmp_path)
    assert panel.study is not None and panel.study.search is not None
    assert panel.pareto_x.currentData() == "memory" and not panel.min_x.isChecked()
    assert panel.pareto_y.currentData() == "optimal_traffic" and panel.min_y.isChecked()
    assert panel.tabs.currentWidget() is panel.pareto.parentWidget()
