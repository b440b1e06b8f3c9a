"""The Targets panel (gui/targets_panel.py), offscreen: one network on the library's targets."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from core.comparison import METRICS
from core.hardware.targets import gpu_preset
from core.project import Project
from gui.targets_panel import COLUMNS, TargetsPanel


def _project() -> Project:
    """The starter library without SCAMP-5 (a Cain search of LeNet-5's first layer takes half a minute),
    plus a GPU."""
    p = Project.starter()
    for e in list(p.entries("targets")):
        if e.kind == "scamp5":
            p.remove("targets", e.id)
    p.add("targets", "H100", gpu_preset("hopper"))
    return p


def test_the_panel_compares_the_chosen_network_on_the_librarys_targets(qtbot) -> None:
    project = _project()
    panel = TargetsPanel(project)
    qtbot.addWidget(panel)
    panel.show()
    panel.network.setFocus()
    QTest.keyClicks(panel.network, "LeNet")            # chosen as a person does: typed in the list
    assert panel.network.currentData() == "lenet5"
    QTest.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.comparison is not None, timeout=30_000)
    c = panel.comparison
    assert c is not None and c.source == "lenet5"
    names = [e.name for e in project.entries("targets")]
    assert [r.target for r in c.rows] == names and panel.table.rowCount() == len(names)
    for i, r in enumerate(c.rows):
        assert r.reason is None and r.record is not None
        assert sum(l.macs for l in r.record.layers) == c.macs
        assert panel.table.item(i, 0).text() == r.target
        lat = panel.table.item(i, COLUMNS.index("Latency")).text()
        assert "%" in lat and "(" in lat             # value (limit, % of the limit)
    # the best on latency is highlighted (bold), and only there
    best = [i for i, r in enumerate(c.rows) if "latency_s" in r.best]
    col = 2 + METRICS.index("latency_s")
    assert best and all(panel.table.item(i, col).font().bold() == (i in best) for i in range(len(c.rows)))
    assert panel.bars == sum(1 for r in c.rows if r.reason is None)
    assert panel.run_button.isEnabled() and "LeNet-5" in panel.status.text()


def test_a_bad_onnx_network_is_said_in_the_panel(qtbot, tmp_path) -> None:
    from core.workload import CnnNetwork

    project = _project()
    project.add("workloads", "Broken", CnnNetwork(onnx_path=str(tmp_path / "gone.onnx")))
    panel = TargetsPanel(project)
    qtbot.addWidget(panel)
    assert panel.network.itemData(0) == str(tmp_path / "gone.onnx")
    panel.network.setCurrentIndex(0)
    QTest.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.run_button.isEnabled(), timeout=10_000)
    assert panel.comparison is None and panel.status.text().startswith("Cannot compare:")
