"""A comparison's part run deleted from the Runs table (core.comparison_record through
Project.delete_run): the comparison's record no longer names it, its row reads "run deleted", a saved
session shows the same and validates, undo brings the run and the record back, Compare costs only
that part again, and deleting every part drops the comparison. The costings are the fakes of
tests/test_comparison_runs.py (no engine, threads of this process)."""

from __future__ import annotations

import copy

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from core import session
from core.comparison import targets_of_kinds
from core.comparison_run import DELETED_REASON, compare, last_recorded, recorded
from core.project import Project
from tests import test_comparison_runs as runs
from tests.test_comparison_runs import Fakes

fakes, window = runs.fakes, runs.window         # the fixtures: fake costings, a window running them on threads

PARTS = ["dataflow", "fpga", "gpu"]


def _rows(project: Project, cid: str) -> list[tuple[str, str | None, bool]]:
    c = recorded(project, cid)
    assert c is not None
    return [(r.target, r.run_id, r.deleted) for r in c.rows]


def test_a_deleted_part_is_marked_in_its_record_saved_and_undone(fakes: Fakes, tmp_path) -> None:
    project = Project()
    c = compare("lenet5", targets_of_kinds(PARTS), project=project)
    ids = [r.run_id for r in c.rows]
    names = [r.target for r in c.rows]
    before = _rows(project, c.id)
    assert all(isinstance(i, str) for i in ids) and not any(d for _, _, d in before)

    project.delete_run(ids[1])
    entry = project.view["comparisons"][c.id]
    assert ids[1] not in entry["runs"] and entry["runs"] == [ids[0], None, ids[2]] and entry["deleted"] == [1]
    shown = recorded(project, c.id)
    assert shown is not None and [(r.target, r.run_id, r.deleted) for r in shown.rows] == [
        (names[0], ids[0], False), (names[1], None, True), (names[2], ids[2], False)]
    gone = shown.rows[1]
    assert gone.reason == DELETED_REASON and gone.metrics() == {} and not gone.best and gone.engine
    # the other parts are still compared for the best
    assert any(r.best for r in shown.rows if not r.deleted)

    # saved and opened again: the same rows; `session validate` finds nothing wrong
    path = tmp_path / "s.dfx"
    session.save(project, path)
    session.check_file(path)
    opened = session.load(path)
    assert _rows(opened, c.id) == _rows(project, c.id)
    assert last_recorded(opened) is not None and last_recorded(opened).id == c.id

    # undo: the run and its place in the comparison are back; redo deletes it again
    assert project.undo()
    assert project.view["comparisons"][c.id]["runs"] == ids and _rows(project, c.id) == before
    assert project.redo()
    assert _rows(project, c.id)[1] == (names[1], None, True)

    # Compare again: only the deleted part is costed again, the others re-used
    calls = len(fakes.calls)
    again = compare("lenet5", targets_of_kinds(PARTS), project=project)
    assert again.reused == len(PARTS) - 1 and len(fakes.calls) == calls + 1
    assert all(r.run_id and not r.deleted for r in again.rows)


def test_deleting_every_part_drops_the_comparison_and_undo_brings_it_back(fakes: Fakes) -> None:
    project = Project()
    first = compare("lenet5", targets_of_kinds(["gpu"]), project=project)
    c = compare("lenet5", targets_of_kinds(["dataflow", "scamp5"]), project=project)
    own = [r.run_id for r in c.rows if r.run_id != first.rows[0].run_id]
    assert c.id != first.id and own
    book = copy.deepcopy(project.view["comparisons"])
    with project.macro("Delete runs"):
        for rid in own:
            project.delete_run(rid)
    assert c.id not in project.view["comparisons"] and last_recorded(project).id == first.id
    assert project.undo()
    assert project.view["comparisons"] == book and last_recorded(project).id == c.id


def test_a_reused_part_deleted_is_marked_in_every_comparison_naming_it(fakes: Fakes) -> None:
    project = Project()
    a = compare("lenet5", targets_of_kinds(["gpu", "fpga"]), project=project)
    b = compare("lenet5", targets_of_kinds(["gpu", "fpga"]), project=project)
    assert b.reused == 2
    project.delete_run(a.rows[0].run_id)
    for cid in (a.id, b.id):
        assert project.view["comparisons"][cid]["runs"][0] is None and _rows(project, cid)[0][2]


def test_a_session_naming_a_run_it_does_not_hold_reads_it_as_deleted(fakes: Fakes) -> None:
    """A session saved before deletes were marked: the record names a run the file lacks."""
    project = Project()
    c = compare("lenet5", targets_of_kinds(PARTS), project=project)
    doc = session.to_json(project)
    doc["runs"] = [r for r in doc["runs"] if r["id"] != c.rows[0].run_id]
    opened = session.from_json(doc)
    entry = opened.view["comparisons"][c.id]
    assert c.rows[0].run_id not in entry["runs"] and entry["deleted"] == [0]
    assert _rows(opened, c.id)[0] == (c.rows[0].target, None, True)
    assert project.view["comparisons"][c.id]["runs"][0] == c.rows[0].run_id     # the writer's own untouched


def test_the_targets_tab_shows_a_deleted_part_and_undo_brings_it_back(window, qtbot, fakes: Fakes) -> None:
    """Deleting a part from the Runs table (its row selected, the Delete action): the
    Targets tab's row reads "run deleted" with no figure; Edit > Undo brings its figures back."""
    panel = window.targets_panel
    window.tabs.setCurrentWidget(panel)
    QTest.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.comparison is not None, timeout=60_000)
    c = panel.comparison
    row = 1
    rid = c.rows[row].run_id
    figures = [panel.table.item(row, j).text() for j in range(panel.table.columnCount())]
    how = panel.table.columnCount() - 2

    view = window.runs_view
    view.table.selectRow(view.proxy.mapFromSource(view.model.index(view.model.row_of(rid), 0)).row())
    assert view.selected_ids() == [rid]
    view.delete_action.trigger()
    assert rid not in {r.id for r in window.project.runs}
    assert panel.table.rowCount() == len(c.rows) and panel.comparison.id == c.id
    assert panel.table.item(row, how).text() == "run deleted"
    assert panel.table.item(row, 2).text() == "-" and DELETED_REASON in panel.table.item(row, 2).toolTip()
    assert f"{c.rows[row].target}: {DELETED_REASON}" in panel.status.text()
    window.project.undo()
    assert [panel.table.item(row, j).text() for j in range(panel.table.columnCount())] == figures
    assert DELETED_REASON not in panel.status.text()


def test_a_part_deleted_while_the_comparison_runs_stays_deleted(fakes: Fakes) -> None:
    """A finished part deleted while another part still runs: the comparison's record, rewritten as
    the others end, does not name it again, and its result reads the row as deleted."""
    import time

    from core.comparison_run import ComparisonRun
    from core.run_controller import RunController, thread_launcher

    project = Project()
    controller = RunController(project, thread_launcher)
    fakes.hold = {"gpu"}
    run = ComparisonRun(controller, "lenet5", targets_of_kinds(["dataflow", "gpu"]), workers=2)
    try:
        assert fakes.started.wait(runs.HANG_S)
        first = run.parts[0].job
        deadline = time.monotonic() + runs.HANG_S
        while first.state != "done" and time.monotonic() < deadline:
            controller.poll()
            time.sleep(0.01)
        run.update()
        assert first.state == "done" and first.run_id is not None
        project.delete_run(first.run_id)
        assert project.view["comparisons"][run.id]["runs"][0] is None
        fakes.go.set()
        while not run.done and time.monotonic() < deadline:
            controller.poll()
            run.update()
            time.sleep(0.01)
    finally:
        fakes.go.set()
        assert controller.shutdown(runs.HANG_S)
    assert run.done
    entry = project.view["comparisons"][run.id]
    assert entry["runs"][0] is None and entry["deleted"] == [0] and isinstance(entry["runs"][1], str)
    rows = run.result().rows
    assert rows[0].deleted and rows[0].run_id is None and not rows[1].deleted
    assert _rows(project, run.id) == [(r.target, r.run_id, r.deleted) for r in rows]
