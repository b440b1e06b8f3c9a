"""The code-search panel: settings round trip, live events from a real small run, stored results."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import json

import pytest

from core.engine import JobRequest, get_engine
from core.jobs import CancelToken, FinalResult, PartialResult
from core.scamp5.program import parse_program
from core.workload import FpspFilter, Scamp5Target
from panel_context import FakeContext


@pytest.fixture(scope="module")
def events():
    spec = get_engine("cain")
    req = JobRequest(FpspFilter("gauss3"), Scamp5Target(), {"workers": 1, "time_s": 60, "max_nodes": 600})
    return list(spec.run(req, CancelToken()))


@pytest.fixture
def panel(qtbot):
    from gui.panels.cain import PANEL

    p = PANEL(get_engine("cain"), FakeContext(FpspFilter("gauss3"), Scamp5Target()))
    qtbot.addWidget(p)
    return p


def test_settings_round_trip_and_change_signal(panel, qtbot):
    s = panel.settings()
    assert s["isa"] == "all" and s["traversal"] == "cgds" and s["registers"] is None and s["d"] is None
    new = dict(s, isa="basic", registers=18, time_s=42.0, traversal="dfs", workers=1, d=3, max_nodes=99)
    panel.set_settings(new)
    assert panel.settings() == new
    with qtbot.waitSignal(panel.settings_changed, timeout=1000):
        panel.isa.setCurrentIndex(panel.isa.findData("all"))


def test_tolerance_field_round_trips_and_applies_only_to_auto_d(panel, qtbot):
    panel.set_settings(dict(panel.settings(), d=None, tolerance=0.01))
    assert panel.settings()["tolerance"] == 0.01 and panel.tolerance.isEnabled()
    panel.tolerance.setText("0.05")
    with qtbot.waitSignal(panel.settings_changed, timeout=1000):
        panel.tolerance.editingFinished.emit()
    assert panel.settings()["tolerance"] == 0.05
    panel.tolerance.setText("")             # half-typed: the stored value stays
    assert panel.settings()["tolerance"] == 0.01
    panel.d.setValue(4)
    assert not panel.tolerance.isEnabled()


def test_live_events_then_stored_result(panel, events):
    panel.job_started()
    panel.handle_events([e for e in events if not isinstance(e, FinalResult)])
    final = next(e.data for e in events if isinstance(e, FinalResult))
    plans = [e.data for e in events if isinstance(e, PartialResult)]
    assert plans
    xs, ys = panel.nodes_plot.series()["best length"]
    assert ys[-1] == final["length"] and min(ys) == final["length"]
    assert panel.time_plot.series()["best length"][1][-1] == final["length"]
    assert panel.program_view.toPlainText().count(";") == final["length"]
    # a session reopens the result without rerunning: everything drawn from the dict alone
    panel.show_result(None)
    assert panel.program_view.toPlainText() == ""
    panel.show_result(json.loads(json.dumps(final)))
    assert panel.program_view.toPlainText().count(";") == final["length"]
    assert "scamp5_kernel_begin" in panel.cpp_view.toPlainText()
    assert panel.step_slider.maximum() == final["length"]
    panel.step_slider.setValue(0)
    assert "16" in panel.bag_view.toPlainText() and "A:" in panel.reg_view.toPlainText()
    panel.step_slider.setValue(final["length"])
    assert final["program"][-1] in panel.step_label.text()
    assert panel.alloc_table.rowCount() == 2
    # exported program text parses back to the same program
    text = panel.program_text()
    assert [str(i) for i in parse_program(text)] == final["program"]
    assert panel.export_text_button.isEnabled() and panel.export_cpp_button.isEnabled()
