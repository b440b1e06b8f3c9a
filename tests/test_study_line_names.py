"""The Studies dock's "Metric vs axis" plot, one line per an axis without a unit (a count such as PE
rows): each line is named by its axis and value ("PE rows = 8", not a bare "8") and the lines come
in the values' order (8, 16, 32; they read 16, 32, 8), as looked at on a virtual screen (issue 51)."""

from __future__ import annotations

import json

import pytest

from gui.study_panel import PointRow
from tests import test_study_pickers as pickers
from tests.test_study_pickers import _pick

STUDY = {
    "name": "lenet5 rows x buffer", "engine": "cost",
    "workload": {"kind": "cnn", "network": "lenet5"}, "target": {"kind": "dataflow"},
    "axes": [{"param": "target.memory_bytes", "label": "buffer", "values": ["1 KiB", "8 KiB"]},
             {"param": "target.pe_rows", "label": "PE rows", "values": [8, 16, 32]}],
    "metrics": ["energy_j", "latency_s"],
}
panel = pickers.panel       # the fixture: the window's Studies dock


@pytest.fixture
def rows_study(panel):
    """The Studies dock (test_study_pickers' window) with this file's study in its editor."""
    panel.editor.setPlainText(json.dumps(STUDY))
    panel.check()
    assert panel.study is not None, panel.message.text()
    return panel


def test_a_line_per_count_is_named_by_its_axis_in_the_values_order(rows_study) -> None:
    panel = rows_study
    panel.records = {i: PointRow(i, {"buffer": b, "PE rows": rows}, status="finished",
                                 metrics={"energy_j": 1e-4 * (i + 1), "latency_s": 2e-4})
                     for i, (b, rows) in enumerate((b, r) for b in (1024, 8192) for r in (8, 16, 32))}
    _pick(panel.plot_y, "Energy (J)")
    _pick(panel.plot_x, "buffer")
    _pick(panel.plot_by, "PE rows")
    panel.redraw()
    lines = [item.name() for item in panel.plot.getPlotItem().listDataItems() if item.name()]
    assert lines == ["PE rows = 8", "PE rows = 16", "PE rows = 32"]
    _pick(panel.plot_x, "PE rows")
    _pick(panel.plot_by, "buffer")
    panel.redraw()                  # a value with its field's unit says it already
    lines = [item.name() for item in panel.plot.getPlotItem().listDataItems() if item.name()]
    assert lines == ["1 KiB", "8 KiB"]
