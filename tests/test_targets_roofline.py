"""The Targets panel's plots (gui/targets_panel.py), offscreen: the roofline holds one series per
costed target, its points are the records' MACs / bytes and MACs / time, each under its target's
ceiling; the energy bars hold the targets with an energy model; the plot shown exports."""

from __future__ import annotations

import math

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QFileDialog

from core.comparison import ceiling
from core.hardware.targets import gpu_preset
from core.project import Project
from gui.targets_panel import TargetsPanel


@pytest.fixture
def panel(qtbot) -> TargetsPanel:
    """LeNet-5 compared on the starter library less SCAMP-5 (a Cain search takes half a minute), plus a GPU."""
    p = Project.starter()
    for e in list(p.entries("targets")):
        if e.kind == "scamp5":
            p.remove("targets", e.id)
    p.add("targets", "H100", gpu_preset("hopper"))
    w = TargetsPanel(p)
    qtbot.addWidget(w)
    w.show()
    w.network.setFocus()
    QTest.keyClicks(w.network, "LeNet")
    QTest.mouseClick(w.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: w.comparison is not None, timeout=60_000)
    return w


def test_the_roofline_holds_every_costed_targets_layers_under_its_ceiling(panel: TargetsPanel) -> None:
    c = panel.comparison
    assert c is not None
    costed = [r for r in c.rows if r.reason is None and r.record is not None]
    assert len(costed) >= 4 and list(panel.roofline_series) == [r.target for r in costed]
    for row in costed:
        assert row.record is not None
        pts = panel.roofline_series[row.target]
        runs = [l for l in row.record.layers if l.reason is None and l.macs > 0]
        assert [p.layer for p in pts] == [l.name for l in runs]
        for p, l in zip(pts, runs):
            assert p.intensity == pytest.approx(l.macs / (l.offchip_bytes.value or math.nan))
            assert p.rate == pytest.approx(l.macs / (l.time_s.value or math.nan))
            assert p.rate <= ceiling(row, p.intensity) * (1 + 1e-9), (row.target, p.layer)
        # drawn where they are: the view holds log10 of both
        x, y = panel.roofline_items[row.target].getData()
        assert np.allclose(10 ** np.asarray(x), [p.intensity for p in pts])
        assert np.allclose(10 ** np.asarray(y), [p.rate for p in pts])
        spot = panel.roofline_items[row.target].points()[0]
        tip = panel.roofline_items[row.target].opts["tip"](x[0], y[0], spot.data())
        assert row.target in tip and pts[0].layer in tip and "MAC/s" in tip
    fpga = next(r for r in costed if r.kind == "fpga")       # its fully connected layers do not run: no point
    assert {p.layer for p in panel.roofline_series[fpga.target]} == {"conv1", "conv2"}
    assert "above" not in panel.status.text()


def test_energy_bars_hold_the_targets_with_an_energy_model(panel: TargetsPanel, tmp_path, monkeypatch) -> None:
    c = panel.comparison
    assert c is not None
    with_energy = [r for r in c.rows if r.reason is None and r.record is not None
                   and sum(l.energy_j.value or 0 for l in r.record.layers) > 0]
    assert with_energy and panel.energy_bars == len(with_energy) < panel.bars
    panel.plots.setCurrentWidget(panel.roofline)
    pic = tmp_path / "roofline.png"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(pic), ""))
    QTest.mouseClick(panel.export_plot_button, Qt.MouseButton.LeftButton)
    assert pic.stat().st_size > 0


def test_the_plots_grow_while_parts_finish(panel: TargetsPanel, qtbot) -> None:
    c = panel.comparison
    assert c is not None
    live = TargetsPanel(panel.project)
    qtbot.addWidget(live)
    costed = [r for r in c.rows if r.reason is None]
    no_energy = [r for r in costed if not live_energy(r)]
    assert no_energy
    for i, row in enumerate(no_energy, 1):          # as the worker thread emits them
        live.row_ready.emit(row)
        assert list(live.roofline_series) == [r.target for r in no_energy[:i]] and live.bars == i
    assert live.energy_bars == 0 and not live.plots.isTabEnabled(1)
    assert "no target here has an energy model" in live.plots.tabToolTip(1).lower()
    live.row_ready.emit(next(r for r in costed if live_energy(r)))
    assert live.energy_bars == 1 and live.plots.isTabEnabled(1)


def live_energy(row) -> bool:
    return row.record is not None and sum(l.energy_j.value or 0 for l in row.record.layers) > 0
