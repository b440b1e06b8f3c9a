import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import json

import pytest

from core.engine import JobRequest, get_engine
from core.jobs import CancelToken, FinalResult
from panel_context import FakeContext


@pytest.fixture(scope="module")
def events():
    spec = get_engine("merit")
    s = dict(spec.default_settings(), workload="conv3x3", networks=[], table_ix=False, curve_alus=[32, 128, 512])
    return list(spec.run(JobRequest(None, None, s), CancelToken()))


@pytest.fixture
def panel(qtbot):
    from gui.panels.merit import PANEL

    p = PANEL(get_engine("merit"), FakeContext())
    qtbot.addWidget(p)
    p.resize(1100, 800)
    return p


def test_settings_round_trip(panel, qtbot):
    s = dict(panel.settings(), workload="motion", banks=16, alus=256, bandwidth_gbps=6.4, networks=["vgg16"],
             table_ix=False, curve_alus=[32, 64], tile={"y": 8, "x": 4})
    with qtbot.waitSignal(panel.settings_changed, timeout=1000, raising=False):
        panel.set_settings(s)
    assert panel.settings() == s


def test_result_views(panel, events):
    panel.job_started()
    panel.handle_events(events[:-1])
    result = events[-1].data
    assert isinstance(events[-1], FinalResult)
    panel.show_result(json.loads(json.dumps(result)))          # as reopened from a session
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
    assert panel.layer_table.rowCount() == 1 and panel.layer_table.item(0, 0).text() == "conv3x3"
    assert len(panel.util_plot.getPlotItem().listDataItems()) == 1
    assert panel.plot.series()["this workload (conv3x3)"][0] == [32, 128, 512]
    panel.grab()                                               # paints every view without error
    panel.tabs.setCurrentIndex(panel.tabs.count() - 1)
    panel.grab()
    panel.show_result(None)
    assert panel.mgrid.rows == 0


def test_large_grids_repaint(panel):
    """AlexNet CONV1's bank maps have thousands of words; repainting them must stay cheap in Qt calls."""
    spec = get_engine("merit")
    s = dict(spec.default_settings(), workload="alexnet-conv1", networks=[], table_ix=False, curve_alus=[32])
    result = list(spec.run(JobRequest(None, None, s), CancelToken()))[-1].data
    panel.show_result(result)
    assert panel.bank_view.rows * panel.bank_view.cols > 4000
    panel.tabs.setCurrentWidget(panel.bank_view.parentWidget().parentWidget())
    for i in range(panel.layout_box.count()):
        panel.layout_box.setCurrentIndex(i)
        panel.grab()
    assert panel.layout_box.count() >= 3
