import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import json

import numpy as np
import pytest

from core.cappuccino import layout, synth
from core.cappuccino.result import CappuccinoResult
from core.cappuccino.engine import ENGINE
from core.engine import JobRequest
from core.jobs import CancelToken, FinalResult
from core.workload import BUILTIN_DIGITS, CnnNetwork
from gui.plotting import table_to_csv
from panel_context import FakeContext


@pytest.fixture
def panel(qtbot):
    from gui.panels.cappuccino import PANEL

    p = PANEL(ENGINE, FakeContext())           # a starter project: the digits CNN on a 2-core, 4-lane SoC
    qtbot.addWidget(p)
    return p


# Every setting away from its default, at the edges the engine accepts.
EDGE = {"accuracy_budget": 100.0, "prefer": "imprecise", "emit_dir": "/tmp/cappuccino out", "compile": False,
        "min_seconds": 0.0001, "repeats": 1000, "limit": 0, "search_sample": 7, "int8": True,
        "measure_split": False}



def test_every_setting_survives_project_widgets_project(panel):
    project = panel.project
    assert set(EDGE) == set(project.settings("cappuccino"))
    project.replace_settings("cappuccino", EDGE)
    assert set(panel.binding.widgets) == set(EDGE)
    assert panel.binding.shown() == EDGE
    assert panel.limit_spin.text() == "all"                  # 0 reads as every validation image
    other = FakeContext()
    for key, value in panel.binding.shown().items():
        other.project.set_setting("cappuccino", key, value)
    assert other.project.settings("cappuccino") == EDGE == project.settings("cappuccino")


def test_widget_edits_undo_and_redo(panel):
    project = panel.project
    panel.budget.setValue(1.5)
    panel.prefer.setCurrentIndex(panel.prefer.findData("imprecise"))
    assert project.settings("cappuccino")["accuracy_budget"] == 1.5
    assert project.settings("cappuccino")["prefer"] == "imprecise"
    project.undo()
    assert project.settings("cappuccino")["prefer"] == "relaxed" and panel.prefer.currentData() == "relaxed"
    project.undo()
    assert project.settings("cappuccino")["accuracy_budget"] == 0.5 and panel.budget.value() == 0.5
    project.redo()
    assert panel.budget.value() == 1.5 and project.settings("cappuccino")["accuracy_budget"] == 1.5


def test_the_network_is_the_tabs_workload_not_a_panel_picker(panel):
    """Was: a hidden model list (built-in / ONNX) and file fields in the panel, unseen by the window."""
    for gone in ("model_box", "onnx_edit", "onnx_button", "validation_edit", "validation_button"):
        assert not hasattr(panel, gone)
    assert panel.workload() == CnnNetwork(BUILTIN_DIGITS)
    onnx = CnnNetwork(onnx_path="/x/net.onnx", validation_path="/x/val.npz")
    panel.context.use("cappuccino", "workloads", "net", onnx)
    assert panel.workload() == onnx and "ONNX file not found" in panel.project.problem("cappuccino", "workloads")


@pytest.mark.slow
def test_panel_draws_a_real_run_and_redraws_from_json(panel):
    settings = dict(panel.settings(), limit=40, min_seconds=0.0, repeats=1,
                    compile=synth.find_compiler() is not None)
    events = list(ENGINE.run(JobRequest(panel.workload(), panel.target(), settings), CancelToken()))
    panel.job_started()
    panel.handle_events(events)
    result = [e for e in events if isinstance(e, FinalResult)][0].data
    assert isinstance(result, CappuccinoResult)
    stored = json.loads(json.dumps(result.to_json()))          # as a session would reopen it
    panel.show_result(CappuccinoResult.from_json(stored))

    assert panel.table.rowCount() == 5
    csv = table_to_csv(panel.table)
    assert "conv2" in csv and "OLP" in csv
    modes = [panel.table.item(i, 10).text() for i in range(5)]
    assert modes[1] == "-" and all(m in ("precise", "relaxed", "imprecise") for m in modes[::2])

    # thread picture: worker of every output pixel of the selected layer, both threads used
    panel.thread_layer.setCurrentIndex(2)
    owner = panel.thread_view.owner
    assert owner.shape == (32, 4, 4)
    assert np.array_equal(owner, layout.worker_of_outputs(32, 4, 4, 4, 2))
    assert set(np.unique(owner)) == {0, 1}
    panel.ids_box.setChecked(True)                      # OLP thread ids: thread t sits at address t
    tid = panel.thread_view.tid
    t = np.arange(tid.size)
    m, r, c = layout.olp_thread_to_output(t, 32, 4, 4, 4)
    assert np.array_equal(tid[m, r, c], t)
    assert tid[1, 0, 0] == 1 and tid[0, 0, 1] == 4

    # layout picture: row-major order then map-major order of the same elements
    ex = panel.layout_view.example
    assert sorted(ex["orders"]["row_major"]) == sorted(ex["orders"]["map_major"])
    assert ex["orders"]["map_major"][:2] == [(0, 0, 0), (1, 0, 0)]

    xs, ys = panel.accuracy_points
    assert len(xs) == len(result.inexact.configurations)
    if synth.find_compiler():
        sp = result.synthesis.speedups
        assert panel.speed_values == [sp["baseline"], sp["parallel"], sp["parallel_inexact"]]
        assert panel.speed_values[0] == 1.0

    panel.grab()                                       # paint every view once
    for i in range(panel.tabs.count()):
        panel.tabs.setCurrentIndex(i)
        panel.grab()
    panel.show_result(None)
    assert panel.table.rowCount() == 0 and panel.thread_view.owner is None
