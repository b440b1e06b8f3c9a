import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import json

import pytest

from PySide6.QtWidgets import QCheckBox

from core.engine import JobRequest, get_engine
from core.merit.result import MeritResult
from core.jobs import CancelToken, FinalResult
from core.merit.engine import MAX_ALUS, MAX_SEED
from core.workload import MeritTransformWorkload
from panel_context import FakeContext, open_panel


@pytest.fixture(scope="module")
def events():
    spec = get_engine("merit")
    # no generated code: compiling and running it is C compilation, which the fast suite leaves out;
    # the Code tab with a run's sources is test_merit_codegen's (marked slow)
    s = dict(spec.default_settings(), networks=[], table_ix=False, curve_alus=[32, 128, 512], codegen=False)
    return list(spec.run(JobRequest(MeritTransformWorkload("conv3x3"), None, s), CancelToken()))


@pytest.fixture
def panel(qtbot):
    return open_panel(qtbot, "merit", size=(1100, 800))


# Every setting away from its default, at the edges of what the engine accepts, with a network that
# has no check box of its own and an order the boxes do not have.
EDGE = {"banks": 64, "alus": MAX_ALUS, "bandwidth_gbps": 0.005, "networks": ["vgg16", "resnet18", "alexnet"],
        "table_ix": False, "curve_alus": [1024, 32], "seed": MAX_SEED, "tile": {"y": 8, "x": 4},
        "codegen": False, "emit_dir": "generated/merit",
        "psum_kib": 1024, "broadcast": True, "dram_model": "ddr3-1600", "lane_padding": "fold",
        "cost_network": "mobilenet_v1", "cost_target": "gpu"}



def test_every_setting_survives_project_widgets_project(panel):
    project = panel.project
    assert set(EDGE) == set(project.settings("merit"))
    project.replace_settings("merit", EDGE)
    assert set(panel.binding.widgets) == set(EDGE)          # every setting has its widget
    shown = panel.binding.shown()
    assert shown == EDGE
    assert panel.net_checks.boxes["resnet18"].isChecked()     # a box was added, not the network dropped
    other = FakeContext()                                     # widgets -> a second project
    for key, value in shown.items():
        other.project.set_setting("merit", key, value)
    assert other.project.settings("merit") == EDGE
    assert project.settings("merit") == EDGE                 # showing them changed nothing


def test_widget_edits_undo_and_redo(panel):
    project = panel.project
    panel.alus_spin.setValue(256)
    assert project.settings("merit")["alus"] == 256
    panel.net_checks.boxes["vgg16"].setChecked(True)         # the networks are off by default (issue 30)
    assert project.settings("merit")["networks"] == ["vgg16"]
    project.undo()
    assert project.settings("merit")["networks"] == [] and not panel.net_checks.boxes["vgg16"].isChecked()
    project.undo()
    assert project.settings("merit")["alus"] == 128 and panel.alus_spin.value() == 128
    project.redo()
    assert project.settings("merit")["alus"] == 256 and panel.alus_spin.value() == 256


def _type(edit, text):
    edit.setText(text)
    edit.textEdited.emit(text)


def test_tile_text_error_shows_on_the_widget_instead_of_dropping_the_tile(panel, monkeypatch):
    """Was: an unreadable tile became {} (the workload's default tile) with only a log line."""
    import core.undo

    monkeypatch.setattr(core.undo, "MERGE_WINDOW_S", 0.0)     # each edit its own undo step
    project = panel.project
    _type(panel.tile_edit, "y=16,x=8")
    assert project.settings("merit")["tile"] == {"y": 16, "x": 8}
    _type(panel.tile_edit, "y=16,x")
    assert project.settings("merit")["tile"] == {"y": 16, "x": 8}      # kept, not dropped to {}
    assert "cannot read 'x'" in panel.binding.errors["tile"] and "cannot read 'x'" in panel.tile_edit.toolTip()
    assert panel.tile_edit.styleSheet() and any("tile" in s.lower() for s in panel.context.statuses)
    _type(panel.tile_edit, "")
    assert project.settings("merit")["tile"] == {} and "tile" not in panel.binding.errors
    project.undo()
    assert panel.tile_edit.text() == "y=16,x=8"
    _type(panel.curve_edit, "32,48")                                     # not a multiple of a TAU
    assert "curve_alus" in panel.binding.errors and project.settings("merit")["curve_alus"] == [32, 64, 128, 256,
                                                                                               512, 1024]


def test_the_panel_has_no_workload_picker_of_its_own(panel):
    """The tab runs the library item chosen for it; the panel kept a hidden workload list before."""
    assert not hasattr(panel, "workload_box")
    wid = panel.context.use("merit", "workloads", "motion", MeritTransformWorkload("motion"))
    assert panel.workload() == MeritTransformWorkload("motion")
    assert panel.project.request("merit").workload == panel.project.entry("workloads", wid).value
    assert all(not isinstance(w, QCheckBox) or w.text() != "Window's kernel set" for w in panel.findChildren(QCheckBox))


def test_result_views(panel, events):
    panel.job_started()
    panel.handle_events(events[:-1])
    assert isinstance(events[-1], FinalResult) and isinstance(events[-1].data, MeritResult)
    stored = json.loads(json.dumps(events[-1].data.to_json()))
    panel.show_result(MeritResult.from_json(stored))          # as reopened from a session
    # M(A) grid: hovering shows the source element
    assert panel.operand_box.count() == 2
    g = panel.mgrid
    assert (g.rows, g.cols) == (32, 9)             # first 32 of 16x16 outputs, all 3x3 taps
    # row 5 = (oc 0, y 0, x 5), column 4 = (ic 0, ky 1, kx 1) -> I[0, 1, 6]
    assert g.describe(5, 4).endswith("I[0, 1, 6]")
    x0, y0, s = g.cell_rect()
    assert g.cell_at(x0 + 4.5 * s, y0 + 5.5 * s) == (5, 4)
    # bank maps: the naive layout shows conflicts in red, the XOR layout none
    names = [panel.layout_box.itemText(i) for i in range(panel.layout_box.count())]
    assert names[:3] == ["naive", "padding", "xor"]
    panel.layout_box.setCurrentIndex(0)
    assert panel.bank_view.conflict_cells()
    assert panel.bank_view.color(*panel.bank_view.conflict_cells()[0]).name() == "#e31a1c"
    panel.layout_box.setCurrentIndex(2)
    assert panel.bank_view.conflict_cells() == [] and panel.bank_view.cols == 8
    # tile & footprint, reuse, utilisation
    assert panel.footprint_view.rows == 6 and panel.loads_table.rowCount() == 2
    assert panel.util_table.rowCount() == 1
    assert panel.assumptions_label.text().startswith("Assumptions used: partial sums 5 KB, broadcast off")
    assert panel.layer_table.rowCount() == 1 and panel.layer_table.item(0, 0).text() == "conv3x3"
    assert len(panel.util_plot.getPlotItem().listDataItems()) == 1
    assert panel.plot.series()["this workload (conv3x3)"][0] == [32, 128, 512]
    panel.grab()                                               # paints every view without error
    panel.tabs.setCurrentIndex(panel.tabs.count() - 1)
    panel.grab()
    panel.show_result(None)
    assert panel.mgrid.rows == 0


@pytest.mark.slow
def test_large_grids_repaint(panel):
    """AlexNet CONV1's bank maps have thousands of words; repainting them must stay cheap in Qt calls."""
    spec = get_engine("merit")
    s = dict(spec.default_settings(), networks=[], table_ix=False, curve_alus=[32])
    result = list(spec.run(JobRequest(MeritTransformWorkload("alexnet-conv1"), None, s), CancelToken()))[-1].data
    panel.show_result(result)
    assert panel.bank_view.rows * panel.bank_view.cols > 4000
    panel.tabs.setCurrentWidget(panel.bank_view.parentWidget().parentWidget())
    for i in range(panel.layout_box.count()):
        panel.layout_box.setCurrentIndex(i)
        panel.grab()
    assert panel.layout_box.count() >= 3


def test_a_layer_row_shows_its_tile_in_the_tile_view(panel, events):
    typed = events[-1].data
    panel.show_result(typed)
    assert "Pick a layer" in panel.layer_tile_label.text()
    layer = typed.meritz.suites[0].layers[0]
    panel.util_table.setCurrentCell(0, 0)
    panel.layer_table.setCurrentCell(0, 0)
    text = panel.layer_tile_label.text()
    assert "conv3x3" in text and "p (oc=" in text and f"kx={layer.tile['kx']}" in text
    rows = [[panel.layer_tile_table.item(r, c).text() for c in range(3)]
            for r in range(panel.layer_tile_table.rowCount())]
    fp = layer.footprints["0:I"]
    assert rows[0] == ["I", " x ".join(map(str, fp)), str(fp[0] * fp[1] * fp[2])] and rows[1][0] == "W"
    panel.layer_table.cellDoubleClicked.emit(0, 0)
    assert panel.tabs.currentWidget() is panel.tile_tab
    # a result stored before layers carried footprints: the tile still shows, and the view says why no more
    result = json.loads(json.dumps(typed.to_json()))
    for L in result["meritz"]["suites"][0]["layers"]:
        del L["footprints"], L["parallel"]
    panel.show_result(MeritResult.from_json(result))
    panel.util_table.setCurrentCell(0, 0)
    panel.layer_table.setCurrentCell(0, 0)
    assert "predates" in panel.layer_tile_label.text() and panel.layer_tile_table.rowCount() == 0
    panel.show_result(None)
    assert "Pick a layer" in panel.layer_tile_label.text()
