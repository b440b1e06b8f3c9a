"""The Runs view and the Compare view over a project's runs (headless, demo engine)."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

from core.engine import get_engine
from core.jobs import MetricPoint
from core.lifecycle import RunOutcome
from core.project import Project
from gui.compare_view import DIFF_BACKGROUND, CompareView
from gui.runs_view import KEYS, NOTE_COLUMN, STATUS_COLOURS, RunsView


@dataclass
class RunsCtx:
    """What the window offers the Runs view; records every call."""

    calls: list[tuple[str, Any]] = field(default_factory=list)
    statuses: list[str] = field(default_factory=list)

    def open_run(self, run_id: str, **focus: Any) -> None:
        self.calls.append(("open", run_id))

    def rerun(self, run_id: str) -> None:
        self.calls.append(("rerun", run_id))

    def restore_setup(self, run_id: str) -> None:
        self.calls.append(("restore", run_id))

    def compare(self, run_ids: list[str]) -> None:
        self.calls.append(("compare", run_ids))

    def log(self, message: str, level: str = "info") -> None:
        pass

    def status(self, message: str) -> None:
        self.statuses.append(message)


@pytest.fixture
def project(demo_engine) -> Project:
    return Project.starter()


@pytest.fixture
def make_view(qtbot, project):
    def make() -> tuple[RunsView, RunsCtx]:
        ctx = RunsCtx()
        view = RunsView(project, ctx)
        qtbot.addWidget(view)
        return view, ctx
    return make


def demo_run(project: Project, steps: int = 3, outcome: RunOutcome | None = None, **settings: Any):
    """A demo run with `steps` points on plot "main", finished with `outcome` (a result by default)."""
    project.set_setting("demo", "steps", steps)
    for k, v in settings.items():
        project.set_setting("demo", k, v)
    run = project.start_run("demo")
    total = 0
    points = []
    for i in range(steps):
        total += i
        points.append(MetricPoint("sum", i, total))
    project.record(run.id, points)
    return project.finish_run(run.id, outcome or RunOutcome.from_json({"status": "finished", "result": {"steps": steps, "sum": total}}, get_engine("demo")))


def column(view: RunsView, key: str) -> list[str]:
    c = KEYS.index(key)
    return [view.proxy.index(r, c).data() for r in range(view.proxy.rowCount())]


def cell(view: RunsView, run_id: str, key: str, role=Qt.ItemDataRole.DisplayRole) -> Any:
    ids = column(view, "id")
    return view.proxy.index(ids.index(run_id), KEYS.index(key)).data(role)


# ---------------------------------------------------------------- live rows
def test_rows_appear_when_runs_start_and_finish_and_keep_the_selection(make_view, project):
    view, _ = make_view()
    first = demo_run(project)
    assert column(view, "id") == [first.id]
    view.select([first.id])
    running = project.start_run("demo")
    assert column(view, "id") == [first.id, running.id]
    assert cell(view, running.id, "status") == "running"
    assert cell(view, running.id, "status", Qt.ItemDataRole.ForegroundRole) == QColor(STATUS_COLOURS["running"])
    assert view.selected_ids() == [first.id]
    project.finish_run(running.id, RunOutcome.from_json({"status": "finished", "result": {"steps": 1, "sum": 0}}, get_engine("demo")))
    assert cell(view, running.id, "status") == "finished"
    assert cell(view, running.id, "status", Qt.ItemDataRole.ForegroundRole) == QColor(STATUS_COLOURS["finished"])
    assert view.selected_ids() == [first.id]           # the selection survived both events


def test_a_failed_run_shows_its_error_and_partial_mark(make_view, project):
    view, _ = make_view()
    run = demo_run(project, outcome=RunOutcome.failed(RuntimeError("demo failure")))
    assert cell(view, run.id, "status") == "failed, partial"        # its points were kept
    assert "demo failure" in cell(view, run.id, "status", Qt.ItemDataRole.ToolTipRole)
    assert cell(view, run.id, "status", Qt.ItemDataRole.ForegroundRole) == QColor(STATUS_COLOURS["failed"])


def test_a_running_run_cannot_be_deleted(make_view, project):
    view, _ = make_view()
    run = project.start_run("demo")
    view.select([run.id])
    assert not view.delete_action.isEnabled()
    view.delete_selected()
    assert project.runs == [run]


# ---------------------------------------------------------------- sorting and filters
def test_sorting_by_a_numeric_column_sorts_numbers_as_numbers(project, make_view):
    runs = [demo_run(project, steps=s) for s in (1, 2, 3)]
    for run, d in zip(runs, (10.0, 2.5, 9.0)):
        run.duration_s = d
    view, _ = make_view()
    view.table.sortByColumn(KEYS.index("duration_s"), Qt.SortOrder.AscendingOrder)
    assert column(view, "duration_s") == ["2.5 s", "9 s", "10 s"]       # as text "10 s" would sort first
    assert column(view, "id") == [runs[1].id, runs[2].id, runs[0].id]
    view.table.sortByColumn(KEYS.index("duration_s"), Qt.SortOrder.DescendingOrder)
    assert column(view, "duration_s") == ["10 s", "9 s", "2.5 s"]


def test_run_ids_sort_naturally(project, make_view):
    view, _ = make_view()
    for _ in range(11):
        project.start_run("demo")
    view.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
    assert column(view, "id")[-3:] == ["r9", "r10", "r11"]


def test_text_engine_and_status_filters(project, make_view):
    a = demo_run(project, steps=3)
    b = demo_run(project, steps=7, outcome=RunOutcome.cancelled())
    other = project.start_run("bound")
    view, _ = make_view()
    assert len(column(view, "id")) == 3
    view.filter_edit.setText("steps: 7")               # key settings text (as shown: title and value)
    assert column(view, "id") == [b.id]
    view.filter_edit.setText("COMMUNICATION")          # engine title, any case
    assert column(view, "id") == [other.id]
    view.filter_edit.clear()
    view.engine_combo.setCurrentIndex(view.engine_combo.findData("demo"))
    assert column(view, "id") == [a.id, b.id]
    view.status_combo.setCurrentIndex(view.status_combo.findData("cancelled"))
    assert column(view, "id") == [b.id]
    view.engine_combo.setCurrentIndex(0)
    view.status_combo.setCurrentIndex(view.status_combo.findData("running"))
    assert column(view, "id") == [other.id]
    later = demo_run(project)                          # a new row obeys the filters too
    assert later.id not in column(view, "id")


# ---------------------------------------------------------------- actions
def test_delete_then_undo_brings_the_row_back(project, make_view):
    runs = [demo_run(project) for _ in range(3)]
    view, ctx = make_view()
    view.select([runs[0].id, runs[2].id])
    assert view.delete_action.isEnabled()
    view.delete_action.trigger()
    assert column(view, "id") == [runs[1].id]
    assert [r.id for r in project.runs] == [runs[1].id]
    assert ctx.statuses and "Undo" in ctx.statuses[-1]
    assert project.undo()                              # one step for both
    assert column(view, "id") == [r.id for r in runs]
    assert project.runs == runs


def test_open_rerun_edit_and_double_click_go_to_the_context(project, make_view):
    run = demo_run(project)
    view, ctx = make_view()
    assert not view.open_action.isEnabled()
    view.select([run.id])
    for action in (view.open_action, view.rerun_action, view.edit_action):
        assert action.isEnabled()
        action.trigger()
    view.table.doubleClicked.emit(view.proxy.index(0, KEYS.index("workload")))
    view.table.doubleClicked.emit(view.proxy.index(0, NOTE_COLUMN))         # edits the note instead
    assert ctx.calls == [("open", run.id), ("rerun", run.id), ("restore", run.id), ("open", run.id)]


def test_the_note_column_edits_the_project_undoably(project, make_view):
    run = demo_run(project)
    view, _ = make_view()
    index = view.proxy.index(0, NOTE_COLUMN)
    assert index.flags() & Qt.ItemFlag.ItemIsEditable
    assert not view.proxy.index(0, 0).flags() & Qt.ItemFlag.ItemIsEditable
    assert view.proxy.setData(index, "baseline")
    assert run.note == "baseline" and cell(view, run.id, "note") == "baseline"
    project.undo()
    assert run.note == "" and cell(view, run.id, "note") == ""


def test_export_csv_writes_the_rows_shown(project, make_view, tmp_path):
    a = demo_run(project, steps=3)
    demo_run(project, steps=5)
    view, _ = make_view()
    view.filter_edit.setText("steps: 3")
    path = view.export_csv(str(tmp_path / "runs.csv"))
    rows = list(csv.reader(io.StringIO((tmp_path / "runs.csv").read_text())))
    assert path and rows[0][0] == "Run"
    assert [r[0] for r in rows[1:]] == [a.id]
    assert rows[1][-2] == "Steps: 3"                   # the full settings column


def test_a_loaded_session_replaces_the_rows_and_keeps_what_is_still_there(project, make_view, demo_engine):
    runs = [demo_run(project) for _ in range(2)]
    view, _ = make_view()
    view.select([runs[1].id])
    other = Project.starter()
    other.runs = list(project.runs[1:])
    project.replace_with(other)
    assert column(view, "id") == [runs[1].id]
    assert view.selected_ids() == [runs[1].id]


# ---------------------------------------------------------------- compare
def compare_two(project, qtbot, make_view):
    a = demo_run(project, steps=3)
    b = demo_run(project, steps=5, delay=0.5)
    view, ctx = make_view()
    view.select([a.id])
    assert not view.compare_action.isEnabled()
    view.select([a.id, b.id])
    assert view.compare_action.isEnabled()
    view.compare_action.trigger()
    assert ctx.calls == [("compare", [a.id, b.id])]
    compare = CompareView(project)
    qtbot.addWidget(compare)
    compare.set_runs(ctx.calls[0][1])
    return a, b, compare


def table_rows(table) -> dict[str, list[str]]:
    return {table.item(r, 0).text(): [table.item(r, c).text() for c in range(1, table.columnCount())]
            for r in range(table.rowCount())}


def test_compare_two_runs_fills_the_diff_and_overlays_two_series(project, qtbot, make_view):
    a, b, compare = compare_two(project, qtbot, make_view)
    assert a.id in compare.header.text() and b.id in compare.header.text()
    settings = table_rows(compare.settings_table)
    assert settings["Steps"] == ["3", "5"]             # titles, not keys (issue 30)
    assert settings["Delay"] == ["—", "0.5"]
    row = list(settings).index("Steps")
    assert compare.settings_table.item(row, 1).background().color() == QColor(DIFF_BACKGROUND)
    metrics = table_rows(compare.metrics_table)
    assert list(metrics) == ["Sum", "Steps", "Duration"] and metrics["Sum"] == ["3", "10"]
    assert list(compare.plots) == ["main"]
    curves = compare.plots["main"].series()
    assert list(curves) == [f"{a.id} · sum", f"{b.id} · sum"]
    assert curves[f"{b.id} · sum"] == ([0.0, 1.0, 2.0, 3.0, 4.0], [0.0, 1.0, 3.0, 6.0, 10.0])
    pens = [c.opts["pen"].color().name() for c in compare.plots["main"].listDataItems()]
    assert len(set(pens)) == 2                         # one colour per run
    assert not compare.reason.isVisibleTo(compare)


def test_only_differences_hides_equal_settings(project, qtbot, make_view):
    _, _, compare = compare_two(project, qtbot, make_view)
    assert "Workload" in table_rows(compare.settings_table)     # both ran without one: the same
    compare.only_diff.setChecked(True)
    assert set(table_rows(compare.settings_table)) == {"Steps", "Delay"}


def test_compare_follows_deletion_and_undo(project, qtbot, make_view):
    a, b, compare = compare_two(project, qtbot, make_view)
    project.delete_run(b.id)
    assert compare.run_ids() == [a.id]
    assert compare.settings_table.columnCount() == 2
    project.undo()
    assert compare.run_ids() == [a.id, b.id]
    assert list(compare.plots) == ["main"]


def test_compare_runs_of_different_engines_says_why_no_plots(project, qtbot):
    a = demo_run(project)
    other = project.finish_run(project.start_run("bound").id, RunOutcome.cancelled())
    compare = CompareView(project)
    qtbot.addWidget(compare)
    compare.set_runs([a.id, other.id])
    assert compare.plots == {}
    assert compare.reason.isVisibleTo(compare) and "different engines" in compare.reason.text()
    assert table_rows(compare.settings_table)["Engine"] == ["Demo", "Communication bounds"]
