"""A comparison as a run of runs (core.comparison_run): every target a "cost" run of the
project through the one run controller, with its parent; cancel stops every part; a re-run re-uses
the unchanged parts; a refused target keeps its reason; the parent link survives a session round
trip; a layer above its roofline fails the record's check; a click in the Targets tab opens the
part's run. The costings are fakes (no engine, nothing timed) and the parts run on threads of this
process, each ended before its test ends."""

from __future__ import annotations

import dataclasses
import threading
from typing import Any

import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtTest import QTest

from core import comparison, session
from core.comparison import Budgets, Costed, Costing, network_macs, targets_of_kinds
from core.comparison_run import ComparisonRun, compare
from core.cost import Ceilings, CostRecord, layer_cost
from core.errors import InputError
from core.project import Project
from core.run_controller import RunController, thread_launcher
from core.target_cost.result import TargetCostResult

KINDS = ["dataflow", "fpga", "cpu", "gpu", "scamp5"]
HANG_S = 60.0           # only stops a test that hangs


def _record(source: str, time_s: float = 1.0, offchip: float = 1e6, bandwidth: float = 1e12) -> CostRecord:
    c = Ceilings(peak_macs_per_s=1e12, bandwidth_bytes_per_s=bandwidth)
    return CostRecord.of("fake", c, [layer_cost("all", network_macs(source)[1], c, 0.0, time_s=time_s,
                                                offchip_bytes=offchip, energy_j=None)])


class Fakes:
    """Costings per kind that count their calls; `refuse` kinds raise InputError, `hold` kinds wait
    for `go`; `slow` scales a kind's time (a changed costing, to tell runs apart)."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.refuse: set[str] = set()
        self.hold: set[str] = set()
        self.started = threading.Event()
        self.go = threading.Event()
        self.lock = threading.Lock()

    def costing(self, kind: str) -> Costing:
        def cost(source: str, target: Any, budgets: Budgets) -> Costed:
            with self.lock:
                self.calls.append(kind)
            if kind in self.hold:
                self.started.set()
                self.go.wait(HANG_S)
            if kind in self.refuse:
                raise InputError(f"a {kind} refuses {source}", "target.size")
            return Costed(_record(source), f"fake {kind}")
        keys = ("scamp5_max_nodes",) if kind == "scamp5" else ()
        return Costing(kind, f"fake-{kind}", cost, budget_keys=keys)


@pytest.fixture
def fakes(monkeypatch: pytest.MonkeyPatch):
    f = Fakes()
    regs = {k: f.costing(k) for k in [*KINDS, "mobile_soc"]}
    monkeypatch.setattr(comparison, "costings", lambda: regs)
    yield f
    f.go.set()


def test_every_part_is_a_run_with_its_parent(fakes: Fakes) -> None:
    project = Project()
    seen: list[str] = []
    c = compare("lenet5", targets_of_kinds(KINDS), project=project, on_row=lambda r: seen.append(r.target))
    assert not c.cancelled and c.id == "c1" and c.reused == 0 and len(c.rows) == len(KINDS)
    assert sorted(seen) == sorted(r.target for r in c.rows)
    parts = [r for r in project.runs if r.parent == c.id]
    assert [r.id for r in parts] == sorted((r.run_id for r in c.rows), key=lambda i: int(i[1:]))
    for row in c.rows:
        run = project.run(row.run_id)
        assert run.engine == "cost" and run.status == "finished" and run.target.name == row.target
        assert isinstance(run.result, TargetCostResult) and run.result.record is not None
        assert run.result.record.to_json() == row.record.to_json()          # the run keeps the cost record
    book = project.view["comparisons"][c.id]
    assert book["runs"] == [r.run_id for r in c.rows] and book["done"] and book["source"] == "lenet5"
    assert sorted(fakes.calls) == sorted(KINDS)


def test_parts_run_at_most_workers_at_once_and_a_measured_one_alone(fakes: Fakes, monkeypatch) -> None:
    regs = comparison.costings()
    regs["cpu"] = Costing("cpu", "timed", regs["cpu"].cost, lambda _t, b: b.measure)
    controller = RunController(Project(), thread_launcher)
    fakes.hold = set(KINDS)
    run = ComparisonRun(controller, "lenet5", targets_of_kinds(KINDS), Budgets(measure=True), workers=2)
    try:
        assert len(controller.running(run.id)) == 2 and len(controller.queued()) == 3
        measured = next(j for p in run.parts if (j := p.job) is not None and j.exclusive)
        assert measured.setup.target.kind == "cpu" and controller.queued()[-1] is measured
    finally:
        run.cancel()
        fakes.go.set()
        assert controller.shutdown(HANG_S)
    assert not controller.busy()


def test_cancel_stops_every_part(fakes: Fakes) -> None:
    project = Project()
    controller = RunController(project, thread_launcher)
    fakes.hold = set(KINDS)
    run = ComparisonRun(controller, "lenet5", targets_of_kinds(KINDS), workers=2)
    assert fakes.started.wait(HANG_S)
    assert [r.status for r in project.runs] == ["running", "running"]      # shown as running while they run
    run.cancel()
    assert controller.queued() == []                # the waiting parts never start
    fakes.go.set()
    deadline = threading.Event()
    for job in controller.running(run.id):
        assert job.handle is not None and job.handle.wait(HANG_S)
    controller.poll()
    rows = run.update()
    assert run.done and rows == [] and not controller.busy() and not deadline.is_set()
    assert [r.status for r in project.runs] == ["cancelled", "cancelled"] and len(fakes.calls) == 2
    c = run.result()
    assert c.cancelled and c.rows == [] and project.view["comparisons"][run.id]["cancelled"]


def test_a_rerun_reuses_the_unchanged_parts_and_reruns_a_changed_one(fakes: Fakes) -> None:
    project = Project()
    first = compare("lenet5", targets_of_kinds(KINDS), project=project)
    n_runs = len(project.runs)
    again = compare("lenet5", targets_of_kinds(KINDS), project=project)
    assert again.id == "c2" and again.reused == len(KINDS) and len(project.runs) == n_runs
    assert [r.run_id for r in again.rows] == [r.run_id for r in first.rows] and all(r.reused for r in again.rows)
    assert len(fakes.calls) == len(KINDS)
    # a changed budget that only SCAMP-5 reads, and a changed target: those two parts run again
    items = targets_of_kinds(KINDS)
    items[0].value.clock_mhz *= 2
    changed = compare("lenet5", items, Budgets(scamp5_max_nodes=123), project=project)
    assert changed.reused == len(KINDS) - 2
    fresh = {r.kind for r in changed.rows if not r.reused}
    assert fresh == {"dataflow", "scamp5"} and len(project.runs) == n_runs + 2
    settings = project.run(next(r.run_id for r in changed.rows if r.kind == "scamp5")).settings
    assert settings == {**dataclasses.asdict(Budgets()), "scamp5_max_nodes": 123}     # whole, the budget it reads set
    # measuring matters only where a part would time code here: none of these
    assert compare("lenet5", items, Budgets(scamp5_max_nodes=123, measure=True), project=project).reused == len(KINDS)
    assert compare("lenet5", items, project=project, reuse=False).reused == 0


def test_a_refused_target_keeps_its_reason_through_a_session(fakes: Fakes) -> None:
    fakes.refuse = {"fpga"}
    project = Project()
    c = compare("lenet5", targets_of_kinds(["fpga", "gpu"]), project=project)
    fpga = c.rows[0]
    assert fpga.reason == "target.size: a fpga refuses lenet5" and not fpga.failed and fpga.metrics() == {}
    assert not fpga.best and "latency_s" in c.rows[1].best
    run = project.run(fpga.run_id)
    assert run.status == "finished" and run.result.reason == fpga.reason     # a refusal is an answer, kept

    back = session.from_json(session.to_json(project))
    assert [(r.id, r.parent) for r in back.runs] == [(r.id, r.parent) for r in project.runs]
    assert {r.parent for r in back.runs} == {c.id} and back.view["comparisons"][c.id]["runs"] == [
        r.run_id for r in c.rows]
    assert back.run(fpga.run_id).result.reason == fpga.reason
    # and the parts of the loaded session are re-used by the same comparison
    assert compare("lenet5", targets_of_kinds(["fpga", "gpu"]), project=back).reused == 2


def test_a_run_without_a_parent_is_saved_as_before() -> None:
    from core.lifecycle import RunOutcome

    p = Project()
    run = p.begin_run("cost", None, None, {})
    p.finish_run(run.id, RunOutcome.cancelled())
    (saved,) = session.to_json(p)["runs"]
    assert "parent" not in saved and session.from_json(session.to_json(p)).runs[0].parent is None


def test_a_layer_above_its_roofline_fails_the_records_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """Sound against every limit (time >= its off-chip lower bound / bandwidth), yet faster than the
    off-chip bytes it moves allow: the comparison's own check refuses it."""
    def cost(source: str, target: Any, budgets: Budgets) -> Costed:
        return Costed(_record(source, time_s=1e-5, offchip=1e6, bandwidth=1e9), "too fast")
    monkeypatch.setattr(comparison, "costings", lambda: {"gpu": Costing("gpu", "fake", cost)})
    project = Project()
    (row,) = compare("lenet5", targets_of_kinds(["gpu"]), project=project).rows
    assert row.failed and row.record is None and "above the target's roofline" in (row.reason or "")
    assert project.run(row.run_id).status == "failed"


# ---------------------------------------------------------------- the Targets tab
@pytest.fixture
def window(qtbot, fakes: Fakes):
    from gui.main_window import MainWindow

    w = MainWindow(restore_layout=False)
    w.interactive = False
    w.runner.controller.launcher = thread_launcher     # the fakes are this process's
    qtbot.addWidget(w)
    w.show()
    yield w
    w.targets_panel.shutdown()
    w.runner.shutdown()


def test_the_tab_runs_its_parts_through_the_windows_controller_and_opens_them(window, qtbot, fakes) -> None:
    from gui.runs_view import KEYS

    panel = window.targets_panel
    assert panel.runner is window.runner
    window.tabs.setCurrentWidget(panel)
    fakes.hold = {"dataflow"}
    QTest.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(fakes.started.is_set, timeout=int(HANG_S * 1000))     # polled: the parts start in turn
    qtbot.waitUntil(lambda: any(r.status == "running" for r in window.project.runs), timeout=int(HANG_S * 1000))
    held = next(r for r in window.project.runs if r.status == "running")
    model = window.runs_view.model                  # the part shows as running in the Runs table
    assert held.parent == panel.current.id and model.index(model.row_of(held.id), KEYS.index("status")).data() \
        == "running"
    fakes.go.set()
    qtbot.waitUntil(lambda: panel.comparison is not None, timeout=int(HANG_S * 1000))
    c = panel.comparison
    assert c is not None and c.rows and all(r.run_id for r in c.rows)
    assert {r.parent for r in window.project.runs} == {c.id} and window.project.run(held.id).status == "finished"

    # a double-click on a target's row opens its part's run in the Target cost tab
    row = 1
    rect = panel.table.visualItemRect(panel.table.item(row, 0))
    QTest.mouseClick(panel.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())     # as a person does
    QTest.mouseDClick(panel.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    target_cost = window.panels["cost"]
    assert window.tabs.currentWidget().panel is target_cost
    assert window.project.shown("cost").id == c.rows[row].run_id
    assert c.rows[row].target in target_cost.headline.text()
    assert target_cost.layers.rowCount() == len(c.rows[row].record.layers) + 1        # and the total

    # a click on a roofline point opens its target's part
    window.tabs.setCurrentWidget(panel)
    name, item = next(iter(panel.roofline_items.items()))
    spot = item.points()[0]
    item.sigClicked.emit(item, [spot], None)
    assert window.project.shown("cost").id == next(r.run_id for r in c.rows if r.target == name)

    # a click on a target's bar (the time per layer) opens its part
    window.tabs.setCurrentWidget(panel)
    panel.plots.setCurrentWidget(panel.plot)
    qtbot.wait(50)
    view = panel.plot.getViewBox()
    at = panel.plot.mapFromScene(view.mapViewToScene(QPointF(50.0, -2.0)))     # the third bar, halfway
    QTest.mouseClick(panel.plot.viewport(), Qt.MouseButton.LeftButton, pos=at)
    assert window.project.shown("cost").id == c.rows[2].run_id

    # a second Compare re-uses every part, and says so
    window.tabs.setCurrentWidget(panel)
    n = len(window.project.runs)
    QTest.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.comparison is not None and panel.comparison.id != c.id, timeout=int(HANG_S * 1000))
    assert panel.comparison.reused == len(c.rows) and len(window.project.runs) == n
    assert f"{len(c.rows)} parts re-used" in panel.status.text()


def test_a_session_opened_shows_its_last_comparison_again(qtbot, fakes: Fakes) -> None:
    from gui.targets_panel import TargetsPanel

    fakes.refuse = {"scamp5"}
    project = Project()
    compare("lenet5", targets_of_kinds(["gpu"]), project=project)
    c = compare("lenet5", targets_of_kinds(KINDS), Budgets(scamp5_max_nodes=99), project=project)
    opened = Project()
    panel = TargetsPanel(opened)
    qtbot.addWidget(panel)
    opened.replace_with(session.from_json(session.to_json(project)))     # what opening the session does
    shown = panel.comparison
    assert shown is not None and shown.id == c.id and shown.reused == c.reused == 1 and not shown.cancelled
    assert [(r.target, r.run_id, r.reason, r.best) for r in shown.rows] == \
        [(r.target, r.run_id, r.reason, r.best) for r in c.rows]
    assert shown.budgets.scamp5_max_nodes == 99 and panel.table.rowCount() == len(KINDS)
    assert panel.network.currentData() == "lenet5" and panel.export_table_button.isEnabled()


def test_a_parts_setup_comes_back_in_its_tab_and_runs_again(fakes: Fakes) -> None:
    project = Project.starter()
    (row,) = compare("lenet5", targets_of_kinds(["gpu"]), project=project).rows
    project.restore_setup(row.run_id)               # the Runs table's "Edit setup"
    request = project.request("cost")
    assert request.workload.network == "lenet5" and request.target.kind == "gpu"
    assert project.settings("cost") == project.run(row.run_id).settings
    controller = RunController(project, thread_launcher)
    job = controller.start("cost", reuse=True)        # the same setup: its run is the answer
    assert job.reused and job.run_id == row.run_id and not controller.busy()
