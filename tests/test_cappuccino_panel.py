import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import json

import numpy as np
import pytest

from core.cappuccino import layout, synth
from core.cappuccino.engine import ENGINE
from core.engine import JobRequest
from core.jobs import CancelToken, FinalResult
from core.workload import MobileSocTarget
from gui.plotting import table_to_csv
from panel_context import FakeContext


@pytest.fixture
def panel(qtbot):
    from gui.panels.cappuccino import PANEL

    p = PANEL(ENGINE, FakeContext(None, MobileSocTarget(cores=2, vector_width=4)))
    qtbot.addWidget(p)
    return p


def test_settings_roundtrip_and_signal(panel, qtbot):
    s = panel.settings()
    assert s["model"] == "builtin-digits" and s["accuracy_budget"] == 0.5
    with qtbot.waitSignal(panel.settings_changed):
        panel.budget.setValue(1.5)
    panel.set_settings(dict(s, model="onnx", onnx_path="/x/y.onnx", prefer="imprecise"))
    got = panel.settings()
    assert got["model"] == "onnx" and got["onnx_path"] == "/x/y.onnx" and got["prefer"] == "imprecise"
    assert panel.onnx_edit.isEnabled()


def test_validation_file_is_picked_with_a_file_dialog(panel, qtbot, monkeypatch):
    from gui.panels import cappuccino as mod

    monkeypatch.setattr(mod.QFileDialog, "getOpenFileName", lambda *a, **k: ("/data/val.npz", ""))
    with qtbot.waitSignal(panel.settings_changed):
        panel.validation_button.click()
    assert panel.settings()["validation_path"] == "/data/val.npz"
    assert panel.validation_button.isEnabled()          # a validation file serves the built-in model too


def test_panel_draws_a_real_run_and_redraws_from_json(panel):
    settings = dict(panel.settings(), limit=40, min_seconds=0.0, repeats=1,
                    compile=synth.find_compiler() is not None)
    events = list(ENGINE.run(JobRequest(None, panel.context.target(), settings), CancelToken()))
    panel.job_started()
    panel.handle_events(events)
    result = [e for e in events if isinstance(e, FinalResult)][0].data
    stored = json.loads(json.dumps(result))          # as a session would reopen it
    panel.show_result(stored)

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
    assert len(xs) == len(result["inexact"]["configurations"])
    if synth.find_compiler():
        sp = result["synthesis"]["speedups"]
        assert panel.speed_values == [sp["baseline"], sp["parallel"], sp["parallel_inexact"]]
        assert panel.speed_values[0] == 1.0

    panel.grab()                                       # paint every view once
    for i in range(panel.tabs.count()):
        panel.tabs.setCurrentIndex(i)
        panel.grab()
    panel.show_result(None)
    assert panel.table.rowCount() == 0 and panel.thread_view.owner is None
