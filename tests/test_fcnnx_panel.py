import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import json

import pytest

from core.engine import get_engine
from core.fcnnx.joint_view import joint_view, joints_using
from core.fcnnx.result import FcnnxResult
from core.jobs import CancelToken, FinalResult
from core.workload import CnnSet, FpgaTarget
from panel_context import FakeContext

PAIR = CnnSet(["lenet5", "cifar10_quick"])


@pytest.fixture
def panel(qtbot):
    from gui.panels.fcnnx import PANEL

    ctx = FakeContext()
    ctx.use("fcnnx", "workloads", "LeNet + CIFAR", PAIR)
    ctx.use("fcnnx", "targets", "ZC706 0.5", FpgaTarget("zc706", 0.5))
    p = PANEL(get_engine("fcnnx"), ctx)
    qtbot.addWidget(p)
    return p


@pytest.fixture(scope="module")
def result():
    """Five joint points scheduled (max_joint), the others not: both kinds of point to select."""
    from core.engine import JobRequest

    settings = {"objective": "throughput", "prune": False, "max_joint": 5, "simulate": False}
    events = list(get_engine("fcnnx").run(JobRequest(PAIR, FpgaTarget("zc706", 0.5), settings), CancelToken()))
    assert isinstance(events[-1], FinalResult) and isinstance(events[-1].data, FcnnxResult)
    stored = json.loads(json.dumps(events[-1].data.to_json()))        # as a session would reopen it
    return FcnnxResult.from_json(stored), events[:-1]



def test_every_setting_survives_project_widgets_project_and_undo(panel):
    project = panel.project
    s = {"targets": [25.5, 4.0], "objective": "throughput", "scheduler": "ilp", "front_size": 30,
         "max_joint": 100_000, "ps_budget": 777, "ilp_time_limit": 0.05, "simulate": False, "verify_top": 20,
         "strict_targets": False, "prune": False, "export_table": "/tmp/hs"}
    assert set(s) == set(get_engine("fcnnx").default_settings())       # every setting is exercised
    project.replace_settings("fcnnx", s)
    assert project.settings("fcnnx") == s              # the widgets took the values without writing back
    shown = panel.binding.shown()
    assert shown == {k: s[k] for k in shown} and len(shown) == 9      # ps_budget, verify_top, export_table: no widget
    assert panel.all_joint.isChecked()                 # "all joint points" is not prune
    # an edit in a widget is one undoable change of the project
    panel.binding.widget("front_size").setValue(7)
    assert project.settings("fcnnx")["front_size"] == 7
    project.undo()
    assert project.settings("fcnnx") == s and panel.binding.widget("front_size").value() == 30
    project.redo()
    assert project.settings("fcnnx")["front_size"] == 7 and panel.binding.widget("front_size").value() == 7
    panel.all_joint.setChecked(False)
    assert project.settings("fcnnx")["prune"] is True
    project.undo()
    assert project.settings("fcnnx")["prune"] is False and panel.all_joint.isChecked()
    # strict_targets is three-valued: null survives too
    project.set_setting("fcnnx", "strict_targets", None)
    assert panel.binding.shown()["strict_targets"] is None and project.settings("fcnnx")["strict_targets"] is None


def test_targets_field_reads_numbers_and_flags_bad_text(panel):
    w = panel.binding.widget("targets")
    w.setText("25, 4")
    w.textEdited.emit(w.text())
    assert panel.project.settings("fcnnx")["targets"] == [25.0, 4.0]
    w.setText("25, fast")
    w.textEdited.emit(w.text())
    assert "targets" in panel.binding.errors and panel.project.settings("fcnnx")["targets"] == [25.0, 4.0]


def test_panel_live_and_redraw_from_json(panel, result):
    r, live = result
    panel.job_started()
    panel.handle_events(live)
    fronts = panel.pareto_plot.series()
    assert set(fronts) == {"lenet5", "cifar10_quick"} and all(len(xs) > 3 for xs, _ in fronts.values())
    assert {"peak", "contention-unaware (est.)", "memory-aware"} <= set(panel.joint_plot.series())
    panel.show_result(r)
    assert len(panel.pareto_plot.series()["lenet5"][0]) == len(r.pareto_fronts["lenet5"])
    # the chosen design is selected: its full schedule (Gantt + bandwidth profile) and its resources
    assert panel.selected.chosen and panel.selected.index == r.chosen_joint
    assert len(panel.gantt_bars) == len(r.schedule.subgraphs)
    assert panel.bw_plot.listDataItems()
    bars = panel.resource_bars()
    assert set(bars) == {"lenet5", "cifar10_quick"}
    dsp = r.design.per_cnn[0].resources.dsps / r.available.dsps * 100
    assert bars["lenet5"][2] == pytest.approx(dsp)
    assert "constraints checked: ok" in panel.sched_info.text()
    panel.show_result(None)
    assert not panel.gantt_bars and panel.selected is None


def test_clicking_a_joint_point_selects_its_design_and_shows_its_schedule(panel, result):
    r, _ = result
    panel.show_result(r)
    chosen = r.chosen_joint
    scheduled = [k for k, row in enumerate(r.joint_points) if row.memory_aware is not None]
    other = next(k for k in scheduled if k != chosen)
    # the memory-aware series holds the scheduled points; a click on its i-th point selects that joint point
    i = panel._joint_index["memory-aware"].index(other)
    panel.joint_point_clicked("memory-aware", i)
    view = panel.selected
    assert view.index == other and not view.chosen
    row = r.joint_points[other]
    assert len(panel.gantt_bars) == len(row.schedule.cnn) > 0
    assert f"Joint design {other}:" in panel.sched_info.text()
    assert f"objective {row.memory_aware:.4f}" in panel.sched_info.text()
    assert panel.joint_plot.marks() == [(row.util, row.memory_aware)]
    designs = [r.pareto_fronts[n][j] for n, j in zip(r.cnns, row.front_index)]
    assert view.designs == designs and view.resources == [d.resources for d in designs]
    bars = panel.resource_bars()
    for n, d in zip(r.cnns, designs):
        assert bars[n][0] == pytest.approx(100 * d.resources.luts / r.available.luts)
    assert panel.pareto_plot.marks() == [(100 * d.avg_util, d.fps) for d in designs]
    # its subgraphs run back to back per CNN and start within the cycle
    assert all(0 <= b.start_s <= row.schedule.makespan_s for b in panel.gantt_bars)
    # a point the search never scheduled: its design and resources, and a note instead of a schedule
    unscheduled = next(k for k, row in enumerate(r.joint_points) if row.memory_aware is None)
    panel.joint_point_clicked("peak", panel._joint_index["peak"].index(unscheduled))
    assert panel.selected.index == unscheduled and panel.selected.schedule is None
    assert not panel.gantt_bars and "not scheduled" in panel.sched_info.text()
    assert set(panel.resource_bars()) == {"lenet5", "cifar10_quick"}
    # back to the chosen one: its full schedule again
    panel.select_joint(chosen)
    assert panel.selected.chosen and len(panel.gantt_bars) == len(r.schedule.subgraphs)
    # a stored run opened on a joint point (the runs view's focus)
    run = panel.context.add_finished_run("fcnnx", r.to_json())
    panel.show_run(run, joint=other)
    assert panel.selected.index == other


def test_clicking_a_pareto_point_rings_the_joint_designs_that_use_it(panel, result):
    r, _ = result
    panel.show_result(r)
    lenet_front = r.pareto_fronts["lenet5"]
    used = r.joint_points[r.chosen_joint].front_index[0]
    panel.pareto_point_clicked("lenet5", used)
    expected = [k for k, row in enumerate(r.joint_points) if row.front_index[0] == used]
    assert panel.highlighted == expected and r.chosen_joint in expected
    assert len(panel.joint_plot.marks()) == len(expected)
    assert panel.pareto_plot.marks() == [(100 * lenet_front[used].avg_util, lenet_front[used].fps)]
    assert f"used by {len(expected)} joint design(s)" in panel.context.statuses[-1]
    # a front point no joint design uses (thinned away) rings none
    unused = next(j for j in range(len(lenet_front)) if not joints_using(r, "lenet5", j))
    assert panel.select_front_point("lenet5", unused) == [] and panel.joint_plot.marks() == []


def test_a_result_from_before_joint_schedules_says_what_it_lacks(panel, result):
    r, _ = result
    old = r.to_json()                                  # the stored form, cut back to what version 1 kept
    for key in ("chosen_joint", "baseline_joint"):
        del old[key]
    for row in old["joint_points"]:
        row.pop("front_index", None)
        row.pop("schedule", None)

    typed = FcnnxResult.from_json(old, version=1)      # a version-1 result still reads
    panel.show_result(typed)
    assert panel.selected.chosen and panel.selected.index is None
    assert len(panel.gantt_bars) == len(typed.schedule.subgraphs)
    panel.select_joint(0)
    assert panel.selected.designs is None and "run the engine again" in panel.sched_info.text()
    assert joint_view(typed, 0).schedule is None


def test_clicks_while_a_run_streams_do_not_reach_the_previous_result(panel, result):
    r, live = result
    panel.show_result(r)
    panel.job_started()
    panel.handle_events(live)
    panel.pareto_point_clicked("lenet5", 0)
    panel.joint_point_clicked("memory-aware", 0)
    assert panel.selected is None and panel.highlighted == [] and panel.pareto_plot.marks() == []


def test_hardware_table_tab_shows_every_run_the_replay_and_exports(panel, result, tmp_path, monkeypatch):
    r, _ = result
    panel.show_result(r)
    view = panel.hw_table
    hw = r.hardware_table
    doc = hw.table                                     # the exported document, as the file holds it
    runs = [(e["cnn"], rep["repetition"], sg) for e in doc["engines"] for rep in e["repetitions"]
            for sg in rep["subgraphs"]]
    assert view.runs.rowCount() == hw.entries == len(runs) == len(r.schedule.subgraphs)
    assert view.regions.rowCount() == len(doc["memory"]["regions"])
    k = len(runs) - 1                                  # the last run: the last repetition of the last CNN
    assert view.runs.item(k, 0).text() == runs[k][0] and view.runs.item(k, 1).text() == str(runs[k][1] + 1)
    assert view.runs.item(k, 6).text() == str(runs[k][2]["slots"])
    assert ("matches the schedule" in view.info.text()) == hw.replay_matches
    from PySide6.QtWidgets import QFileDialog

    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *a, **k: str(tmp_path))
    assert view.export_button.isEnabled()
    panel.export_hardware_table()
    assert json.loads((tmp_path / "mcnn_hs_table.json").read_text()) == doc
    assert (tmp_path / "mcnn_hs_table.h").read_text().startswith("/* MCNN-HS")
    assert "mcnn_hs_table.h" in panel.context.statuses[-1]
    # a result from before version 3 has no table and says so

    old = r.to_json()
    del old["hardware_table"]
    panel.show_result(FcnnxResult.from_json(old, version=2))
    assert view.runs.rowCount() == 0 and not view.export_button.isEnabled() and "run it again" in view.info.text()
