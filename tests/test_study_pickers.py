"""The Studies dock's metric pickers read as people do (issue 52: each result declares its metrics
as data): every picker shows a metric's declared title with its unit ("Energy (J)"), keeps the key
as the item's data (what is plotted is unchanged) and says in its tooltip which way is better; the
"Metric vs axis" plot labels its axis the same way and draws a fraction in %."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from gui.study_panel import PointRow
from tests.test_study_targets import SWEEP
from tests.window_helpers import settle

STUDY = {**SWEEP, "metrics": ["energy_j", "latency_s", "macs_run"]}
ITEMS = [("Energy (J)", "energy_j"), ("Latency (s)", "latency_s"), ("MACs run (%)", "macs_run")]


@pytest.fixture
def panel(qtbot, tmp_path, monkeypatch):
    from gui.main_window import MainWindow

    w = MainWindow(restore_layout=False)
    w.interactive = False
    qtbot.addWidget(w)
    w.show()
    settle()
    p = w.study_panel
    monkeypatch.setattr(p, "results_path", lambda _study: tmp_path / "p.results.jsonl")
    p.editor.setPlainText(json.dumps(STUDY))
    p.check()
    assert p.study is not None, p.message.text()
    yield p
    w.shutdown_jobs()


def _items(combo) -> list[tuple[str, str]]:
    return [(combo.itemText(i), combo.itemData(i)) for i in range(combo.count())]


def _pick(combo, text: str) -> None:
    """Choose an item as a person does: focus the picker, arrow keys until it shows."""
    combo.setFocus()
    QTest.keyClick(combo, Qt.Key.Key_Home)
    for _ in range(combo.count()):
        if combo.currentText() == text:
            return
        QTest.keyClick(combo, Qt.Key.Key_Down)
    assert combo.currentText() == text


def test_every_metric_picker_shows_titles_keeps_keys_and_says_which_way_is_better(panel) -> None:
    for combo in (panel.plot_y, panel.pareto_x, panel.pareto_y):
        assert _items(combo) == ITEMS
        tips = [combo.itemData(i, Qt.ItemDataRole.ToolTipRole) for i in range(combo.count())]
        assert "lower is better" in tips[0] and "lower is better" in tips[1] and "higher is better" in tips[2]
        assert tips[0].startswith("Energy")
    assert [panel.plot_x.itemText(i) for i in range(panel.plot_x.count())] == ["buffer", "bandwidth"]
    # the line under the editor names the engine and the metrics in words
    text = panel.message.text()
    assert text.startswith("Target cost:") and "Energy (J), Latency (s), MACs run (%)" in text
    assert "energy_j" not in text and "macs_run" not in text


def test_the_metric_plot_reads_the_picked_key_and_labels_it_in_words(panel) -> None:
    panel.records = {i: PointRow(i, {"buffer": b, "bandwidth": 3.2}, status="finished",
                                 metrics={"energy_j": 1e-4 * (i + 1), "latency_s": 2e-4, "macs_run": 0.25 * (i + 1)})
                     for i, b in enumerate([1024, 8192])}
    _pick(panel.plot_y, "MACs run (%)")
    assert panel.plot_y.currentData() == "macs_run"
    panel.redraw()
    axis = panel.plot.getPlotItem().getAxis("left")
    assert axis.labelText == "MACs run (%)"
    points, line = panel.plot.getPlotItem().listDataItems()[:2]
    assert list(points.getData()[1]) == [25.0, 50.0]          # fractions drawn in %
    assert line.name() == "3.2 GB/s"             # one line per bandwidth, named with its unit
    _pick(panel.plot_by, "(none)")
    assert panel.plot_by.currentData() is None
    panel.redraw()
    assert panel.plot.getPlotItem().listDataItems()[1].name() == "MACs run (%)"
    assert panel.plot.getPlotItem().getAxis("bottom").labelText == "buffer (B)"
    _pick(panel.plot_y, "Energy (J)")
    panel.redraw()
    assert axis.labelText == "Energy" and axis.labelUnits == "J"
    assert list(panel.plot.getPlotItem().listDataItems()[0].getData()[1]) == pytest.approx([1e-4, 2e-4])
