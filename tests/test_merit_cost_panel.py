"""The MERIT tab's Cost view: the network and target typed and picked as a person does, and a run's
cost record shown layer by layer beside its limits."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from core.engine import JobRequest, get_engine
from core.jobs import CancelToken, run_foreground
from core.workload import MeritTransformWorkload
from panel_context import open_panel


@pytest.fixture
def panel(qtbot):
    return open_panel(qtbot, "merit", size=(1100, 800))


def test_typed_network_and_picked_target_are_the_settings(panel):
    edit, box = panel.cost_widgets["cost_network"], panel.cost_widgets["cost_target"]
    edit.setFocus()
    QTest.keyClicks(edit, "lenet5")
    QTest.keyClick(edit, Qt.Key.Key_Tab)
    assert panel.project.settings("merit")["cost_network"] == "lenet5"
    assert box.currentText() == "this machine (C measured)"
    box.setFocus()
    QTest.keyClick(box, Qt.Key.Key_Down)                    # the next choice, as a person picks it
    assert box.currentText() == "GPU (H100, modelled)"
    assert panel.project.settings("merit")["cost_target"] == "gpu"


def test_a_costed_run_fills_the_table(panel):
    spec = get_engine("merit")
    s = dict(spec.default_settings(), networks=[], table_ix=False, curve_alus=[32], codegen=False,
             cost_network="lenet5", cost_target="gpu")
    out = run_foreground(spec.run(JobRequest(MeritTransformWorkload("conv3x3"), None, s), CancelToken()), quiet=True)
    assert out.error is None, out.error
    panel.show_result(out.result)
    rec = out.result.cost.record
    assert panel.cost_table.rowCount() == len(rec.layers)
    assert panel.cost_table.item(0, 0).text() == rec.layers[0].name
    assert "limit" in panel.cost_status.text() and "GPU" in panel.cost_status.text()
    panel.show_result(None)
    assert panel.cost_table.rowCount() == 0 and "No network costed" in panel.cost_status.text()


def test_an_unknown_network_is_marked_and_not_taken(panel):
    edit = panel.cost_widgets["cost_network"]
    edit.setFocus()
    QTest.keyClicks(edit, "resnet18")
    assert panel.project.settings("merit")["cost_network"] == "resnet18"
    QTest.keyClicks(edit, "x")
    assert panel.project.settings("merit")["cost_network"] == "resnet18"      # the last name taken is kept
    errors = panel.binding.error_texts()
    assert errors and "Cost network" in errors[0] and "unknown network" in errors[0]
    QTest.keyClick(edit, Qt.Key.Key_Backspace)
    assert panel.binding.error_texts() == []
