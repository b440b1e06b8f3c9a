import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import json

import pytest

from core.bound.engine import ENGINE
from core.engine import JobRequest
from core.jobs import CancelToken
from core.workload import CnnSet, DataflowTarget
from gui.plotting import table_to_csv
from panel_context import FakeContext


@pytest.fixture
def panel(qtbot):
    from gui.panels.bound import PANEL

    p = PANEL(ENGINE, FakeContext(CnnSet(["alexnet"]), DataflowTarget(memory_bytes=64 * 1024)))
    qtbot.addWidget(p)
    return p


def test_panel_runs_a_real_result_and_redraws_from_json(panel, qtbot):
    settings = panel.settings()
    assert settings["source"] == "workload" and settings["memory_bytes"] == 0
    ctx = panel.context
    events = list(ENGINE.run(JobRequest(ctx.workload(), ctx.target(), settings), CancelToken()))
    panel.job_started()
    panel.handle_events(events[:-1])
    assert panel._live_sweep and "optimal" in panel._live_sweep
    result = json.loads(json.dumps(events[-1].data))     # as a session would store it
    panel.show_result(result)
    n = len(result["layers"])
    assert panel.table.rowCount() == n + 1
    csv = table_to_csv(panel.table)
    assert csv.splitlines()[0].startswith("layer,R,bound") and "conv1" in csv
    assert panel.tile_layer.count() == n
    g = panel.tile_view.geometry_of()
    t = result["layers"][0]["optimal"]["tiling"]
    assert g["out"] == (0, t["y"], 0, t["x"])
    sh = result["layers"][0]["shape"]
    assert g["in"][1] - g["in"][0] == (t["y"] - 1) * sh["stride"] + sh["Hk"]     # block plus halo
    panel.tile_block.setCurrentIndex(1)
    assert panel.tile_view.geometry_of()["out"][0] > 0
    panel.tile_view.grab()            # paints without error
    assert len(panel.sweep_plot.getPlotItem().listDataItems()) >= 3
    panel.show_result(None)
    assert panel.table.rowCount() == 0


def test_panel_settings_round_trip(panel, qtbot):
    s = {"source": "layer", "network": "vgg16", "layers": ["Ci=8,Hi=8,Wi=8,Co=8,Hk=3,pad=1"], "onnx": "",
         "memory_bytes": 128 * 1024, "word_bits": 0, "batch": 2, "dataflows": ["ws", "rs"], "sweep": False}
    emitted = []
    panel.settings_changed.connect(lambda: emitted.append(1))
    panel.set_settings(s)
    assert not emitted                    # loading a session is not an edit
    out = panel.settings()
    for k in ("source", "layers", "memory_bytes", "batch", "dataflows", "sweep"):
        assert out[k] == s[k]
    assert panel.layer_spec.isVisibleTo(panel) and not panel.network.isVisibleTo(panel)
    panel.set_settings({**s, "source": "workload"})
    assert panel.network.isVisibleTo(panel)
    panel.set_settings(s)
    panel.flow_boxes["is"].setChecked(True)
    assert emitted and "is" in panel.settings()["dataflows"]


def test_panel_falls_back_to_its_own_network_when_the_window_has_none(panel):
    panel.context.workload_value = CnnSet([])
    panel.set_settings({"source": "workload", "network": "lenet5"})
    s = panel.settings()
    assert s["source"] == "network" and s["network"] == "lenet5"
    r = list(ENGINE.run(JobRequest(panel.context.workload(), panel.context.target(), {**s, "sweep": False}),
                        CancelToken()))[-1].data
    assert r["source"]["name"] == "lenet5"
