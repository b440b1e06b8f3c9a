"""Panel of the communication-bound engine: traffic against on-chip memory, per-layer bars, the chosen
tile over the feature maps, and a CSV-exportable table. Everything redraws from the result dict."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QPainter, QPen
from PySide6.QtWidgets import (QCheckBox, QComboBox, QFileDialog, QHBoxLayout, QLabel, QLineEdit, QPushButton,
                               QSpinBox, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from core.bound.engine import SOURCES, default_settings
from core.bound.loopnest import BASELINES
from core.engine import EngineSpec
from core.jobs import Event, MetricPoint
from core.workload import CnnSet
from gui.panels.base import PanelContext
from gui.panels.generic import GenericPanel
from gui.plotting import PALETTE, ask_export_table

MEMORY_CHOICES = [0] + [k * 1024 for k in (8, 16, 32, 64, 128, 256, 512, 1024, 2048)]
SOURCE_LABELS = {"workload": "Window's network", "network": "Zoo network", "layer": "Layer spec", "onnx": "ONNX file"}
SERIES_ORDER = ["bound", "compulsory", "reference"] + list(BASELINES) + ["optimal"]
TABLE_COLUMNS = ["layer", "R", "bound", "compulsory", "optimal", "ratio", "b", "z", "y", "x", "k", "memory used",
                 "inputs read", "weights read", "outputs written", "GBuf reads"] + [f"{k} total" for k in BASELINES] + ["best"]


def _color(key: str) -> str:
    fixed = {"bound": "#000000", "compulsory": "#7f7f7f", "reference": "#17becf", "optimal": "#2ca02c",
             "ws": "#ff7f0e", "is": "#9467bd", "os": "#8c564b", "rs": "#e377c2"}
    return fixed.get(key, PALETTE[0])


class TileView(QWidget):
    """The output feature map with the tile grid and one chosen block, and the input map with that
    block's input rows and columns (its halo in a lighter shade, zero padding hatched)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setMinimumSize(420, 240)
        self.layer: dict[str, Any] | None = None
        self.block = (0, 0)

    def set_layer(self, layer: dict[str, Any] | None, block: tuple[int, int] = (0, 0)) -> None:
        self.layer, self.block = layer, block
        self.update()

    def geometry_of(self) -> dict[str, Any] | None:
        """Rows/columns of the shown block in output and input coordinates (also used by tests)."""
        if not self.layer:
            return None
        sh, t = self.layer["shape"], self.layer["optimal"]["tiling"]
        by, bx = self.block
        y0, x0 = by * t["y"], bx * t["x"]
        y1, x1 = min(y0 + t["y"], sh["Ho"]), min(x0 + t["x"], sh["Wo"])
        D, P, d = sh["stride"], sh["pad"], sh["dilation"]
        iy0, iy1 = y0 * D - P, (y1 - 1) * D - P + d * (sh["Hk"] - 1) + 1
        ix0, ix1 = x0 * D - P, (x1 - 1) * D - P + d * (sh["Wk"] - 1) + 1
        return {"out": (y0, y1, x0, x1), "in": (iy0, iy1, ix0, ix1),
                "in_clipped": (max(iy0, 0), min(iy1, sh["Hi"]), max(ix0, 0), min(ix1, sh["Wi"])),
                "core": (y0 * D - P, (y1 - 1) * D - P + 1, x0 * D - P, (x1 - 1) * D - P + 1)}

    def paintEvent(self, event: Any) -> None:   # noqa: N802 (Qt name)
        p = QPainter(self)
        p.fillRect(self.rect(), QColor("white"))
        g = self.geometry_of()
        if g is None:
            p.drawText(self.rect(), Qt.AlignCenter, "Run the engine to see the chosen tile")
            return
        sh, t = self.layer["shape"], self.layer["optimal"]["tiling"]
        w, h = self.width(), self.height() - 30
        half = (w - 30) / 2
        P = sh["pad"]
        # output map
        self._map(p, QRectF(10, 25, half, h - 10), sh["Ho"], sh["Wo"], 0,
                  f"output {sh['Co']}x{sh['Ho']}x{sh['Wo']}: tile b={t['b']} z={t['z']} y={t['y']} x={t['x']}",
                  grid=(t["y"], t["x"]), boxes=[(g["out"], QColor(46, 160, 44, 170))])
        # input map with padding
        self._map(p, QRectF(20 + half, 25, half, h - 10), sh["Hi"], sh["Wi"], P,
                  f"input {sh['Ci']}x{sh['Hi']}x{sh['Wi']} (pad {P}): block + halo, k={t['k']} channel(s)",
                  boxes=[(g["in"], QColor(214, 39, 40, 70)), (g["core"], QColor(214, 39, 40, 160))])

    def _map(self, p: QPainter, r: QRectF, H: int, W: int, pad: int, title: str,
             grid: tuple[int, int] | None = None, boxes: list = ()) -> None:
        p.setPen(QPen(QColor("black")))
        p.drawText(QRectF(r.left(), 2, r.width(), 20), Qt.AlignLeft | Qt.AlignVCenter, title)
        HH, WW = H + 2 * pad, W + 2 * pad
        cell = min(r.width() / WW, r.height() / HH)
        ox, oy = r.left(), r.top()

        def rect(y0: float, y1: float, x0: float, x1: float) -> QRectF:
            return QRectF(ox + (x0 + pad) * cell, oy + (y0 + pad) * cell, (x1 - x0) * cell, (y1 - y0) * cell)

        if pad:
            p.fillRect(rect(-pad, H + pad, -pad, W + pad), QBrush(QColor(200, 200, 200), Qt.BDiagPattern))
        p.fillRect(rect(0, H, 0, W), QColor(235, 240, 250))
        if grid:
            p.setPen(QPen(QColor(120, 120, 120), 1))
            for y in range(0, H + 1, grid[0]):
                p.drawLine(rect(y, y, 0, W).topLeft(), rect(y, y, 0, W).topRight())
            for x in range(0, W + 1, grid[1]):
                p.drawLine(rect(0, H, x, x).topLeft(), rect(0, H, x, x).bottomLeft())
        for (y0, y1, x0, x1), color in boxes:
            p.fillRect(rect(y0, y1, x0, x1), color)
        p.setPen(QPen(QColor("black"), 1.5))
        p.drawRect(rect(0, H, 0, W))


class BoundPanel(GenericPanel):
    engine_name = "bound"

    def __init__(self, engine: EngineSpec, context: PanelContext, parent: QWidget | None = None) -> None:
        super().__init__(engine, context, parent)
        c = self.controls
        self.source = QComboBox()
        for key in SOURCES:
            self.source.addItem(SOURCE_LABELS[key], key)
        self.network = QComboBox()
        from core.nets import zoo

        for name, title in zoo.titles().items():
            self.network.addItem(title, name)
        self.layer_spec = QLineEdit()
        self.layer_spec.setPlaceholderText("Ci=64,Hi=56,Wi=56,Co=128,Hk=3,Wk=3,stride=1,pad=1  (';' between layers)")
        self.onnx_path = QLineEdit()
        self.onnx_path.setPlaceholderText("model.onnx")
        self.onnx_browse = QPushButton("…")
        self.onnx_browse.clicked.connect(self._browse)
        self.memory = QComboBox()
        for b in MEMORY_CHOICES:
            self.memory.addItem("from target" if b == 0 else f"{b // 1024} KiB", b)
        self.batch = QSpinBox()
        self.batch.setRange(0, 1024)
        self.batch.setSpecialValueText("batch: window")
        self.flow_boxes = {k: QCheckBox(k.upper()) for k in BASELINES}
        self.sweep = QCheckBox("memory sweep")
        for wdg in (QLabel("Layers:"), self.source, self.network, self.layer_spec, self.onnx_path, self.onnx_browse,
                    QLabel("S:"), self.memory, self.batch, *self.flow_boxes.values(), self.sweep):
            c.addWidget(wdg)
        c.addStretch(1)
        for sig in (self.source.currentIndexChanged, self.network.currentIndexChanged, self.memory.currentIndexChanged,
                    self.batch.valueChanged, self.layer_spec.editingFinished, self.onnx_path.editingFinished,
                    *(b.toggled for b in self.flow_boxes.values()), self.sweep.toggled):
            sig.connect(self._edited)
        self.source.currentIndexChanged.connect(self._source_visibility)

        # traffic vs memory
        self.sweep_plot = pg.PlotWidget(background="w")
        self.sweep_plot.setLogMode(x=True, y=True)
        self.sweep_plot.setLabel("bottom", "on-chip memory (KiB)")
        self.sweep_plot.setLabel("left", "DRAM traffic (words)")
        self.sweep_plot.addLegend(offset=(-10, 10))
        self.sweep_plot.showGrid(x=True, y=True, alpha=0.3)
        self.tabs.insertTab(0, self.sweep_plot, "Traffic vs memory")
        self._live_sweep: dict[str, tuple[list[float], list[float]]] = {}
        # per-layer bars
        bar_page = QWidget()
        bl = QVBoxLayout(bar_page)
        self.bar_mode = QComboBox()
        self.bar_mode.addItems(["ratio to max(bound, compulsory)", "DRAM traffic (words)"])
        self.bar_mode.currentIndexChanged.connect(lambda: self._result and self._draw_bars(self._result,
                                                                                            self._result["dataflows"]))
        bl.addWidget(self.bar_mode, 0, Qt.AlignLeft)
        self.bar_plot = pg.PlotWidget(background="w")
        self.bar_plot.addLegend(offset=(-10, 10))
        bl.addWidget(self.bar_plot, 1)
        self.tabs.insertTab(1, bar_page, "Per layer")
        # tile
        tile_page = QWidget()
        tl = QVBoxLayout(tile_page)
        row = QHBoxLayout()
        self.tile_layer = QComboBox()
        self.tile_layer.currentIndexChanged.connect(self._show_tile)
        self.tile_block = QComboBox()
        self.tile_block.addItems(["first block (corner)", "interior block"])
        self.tile_block.currentIndexChanged.connect(self._show_tile)
        row.addWidget(QLabel("Layer:"))
        row.addWidget(self.tile_layer, 1)
        row.addWidget(self.tile_block)
        tl.addLayout(row)
        self.tile_view = TileView()
        tl.addWidget(self.tile_view, 1)
        self.tile_info = QLabel()
        self.tile_info.setWordWrap(True)
        tl.addWidget(self.tile_info)
        self.tabs.insertTab(2, tile_page, "Tile")
        # table
        table_page = QWidget()
        tb = QVBoxLayout(table_page)
        self.table = QTableWidget(0, len(TABLE_COLUMNS))
        self.table.setHorizontalHeaderLabels(TABLE_COLUMNS)
        tb.addWidget(self.table, 1)
        self.export_csv = QPushButton("Export CSV…")
        self.export_csv.clicked.connect(lambda: ask_export_table(self, self.table, "bound-layers"))
        tb.addWidget(self.export_csv, 0, Qt.AlignLeft)
        self.tabs.insertTab(3, table_page, "Table")
        self.tabs.setCurrentIndex(0)
        self._loading = False
        self.set_settings(default_settings())

    # ------------------------------------------------------------ settings
    def _browse(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "ONNX model", "", "ONNX (*.onnx)")
        if path:
            self.onnx_path.setText(path)
            self._edited()

    def _source_visibility(self) -> None:
        src = self.source.currentData()
        self.network.setVisible(src in ("network", "workload"))     # the fallback when the window has none
        self.network.setToolTip("Used when the window's workload has no network picked" if src == "workload" else "")
        self.layer_spec.setVisible(src == "layer")
        self.onnx_path.setVisible(src == "onnx")
        self.onnx_browse.setVisible(src == "onnx")

    def _edited(self, *args: Any) -> None:
        if not self._loading:
            self.settings_changed.emit()

    def settings(self) -> dict[str, Any]:
        s = default_settings()
        s.update(source=self.source.currentData(), network=self.network.currentData() or "vgg16",
                 layers=[t.strip() for t in self.layer_spec.text().split(";") if t.strip()],
                 onnx=self.onnx_path.text().strip(), memory_bytes=int(self.memory.currentData()),
                 batch=self.batch.value(), dataflows=[k for k, b in self.flow_boxes.items() if b.isChecked()],
                 sweep=self.sweep.isChecked())
        wl = self.context.workload()
        if s["source"] == "workload" and not (isinstance(wl, CnnSet) and wl.cnns):
            s["source"] = "network"      # no CNN set in the window: use the network picked here
        return s

    def set_settings(self, settings: dict[str, Any]) -> None:
        s = default_settings()
        s.update(settings or {})
        self._loading = True
        try:
            self.source.setCurrentIndex(max(0, self.source.findData(s["source"])))
            self.network.setCurrentIndex(max(0, self.network.findData(s["network"])))
            self.layer_spec.setText("; ".join(s["layers"]))
            self.onnx_path.setText(s["onnx"])
            idx = self.memory.findData(s["memory_bytes"])
            if idx < 0:
                self.memory.addItem(f"{s['memory_bytes']} B", s["memory_bytes"])
                idx = self.memory.count() - 1
            self.memory.setCurrentIndex(idx)
            self.batch.setValue(s["batch"])
            for k, b in self.flow_boxes.items():
                b.setChecked(k in s["dataflows"])
            self.sweep.setChecked(bool(s["sweep"]))
        finally:
            self._loading = False
        self._source_visibility()

    # ------------------------------------------------------------ live events
    def job_started(self) -> None:
        super().job_started()
        self._live_sweep.clear()
        self.sweep_plot.clear()

    def handle_events(self, events: list[Event]) -> None:
        rest = []
        grew = False
        for ev in events:
            if isinstance(ev, MetricPoint) and ev.plot == "sweep":
                xs, ys = self._live_sweep.setdefault(ev.series, ([], []))
                xs.append(ev.x)
                ys.append(ev.y)
                grew = True
            else:
                rest.append(ev)
        super().handle_events(rest)
        if grew:
            self._draw_sweep(self._live_sweep)

    def _draw_sweep(self, series: dict[str, tuple[list[float], list[float]]], mark_kib: float | None = None) -> None:
        self.sweep_plot.clear()
        for key in sorted(series, key=lambda k: SERIES_ORDER.index(k) if k in SERIES_ORDER else 99):
            xs, ys = series[key]
            if not xs:
                continue
            style = Qt.DashLine if key in ("bound", "compulsory", "reference") else Qt.SolidLine
            label = "max(bound, compulsory) per layer" if key == "reference" else key
            self.sweep_plot.plot(np.asarray(xs, float), np.asarray(ys, float), name=label,
                                 pen=pg.mkPen(_color(key), width=3 if key == "optimal" else 2, style=style), symbol="o", symbolSize=5,
                                 symbolBrush=_color(key))
        if mark_kib:
            self.sweep_plot.addItem(pg.InfiniteLine(np.log10(mark_kib), angle=90, pen=pg.mkPen("#999", style=Qt.DotLine)))

    # ------------------------------------------------------------ result
    def show_result(self, result: dict[str, Any] | None) -> None:
        super().show_result(result)
        self.sweep_plot.clear()
        self.bar_plot.clear()
        self.table.setRowCount(0)
        self.tile_layer.blockSignals(True)
        self.tile_layer.clear()
        self.tile_layer.blockSignals(False)
        self.tile_view.set_layer(None)
        self.tile_info.clear()
        if not result:
            return
        flows = result.get("dataflows", [])
        series: dict[str, tuple[list[float], list[float]]] = {}
        for row in result.get("sweep", []):
            for key in ["bound", "compulsory", "reference", "optimal"] + flows:
                if row.get(key) is not None:
                    xs, ys = series.setdefault(key, ([], []))
                    xs.append(row["memory_bytes"] / 1024)
                    ys.append(row[key])
        self._draw_sweep(series, result["memory_bytes"] / 1024)
        self._draw_bars(result, flows)
        self._fill_table(result, flows)
        self.tile_layer.blockSignals(True)
        for l in result["layers"]:
            self.tile_layer.addItem(l["name"])
        self.tile_layer.blockSignals(False)
        self._show_tile()

    def _draw_bars(self, result: dict[str, Any], flows: list[str]) -> None:
        self.bar_plot.clear()
        layers = result["layers"]
        as_ratio = self.bar_mode.currentIndex() == 0
        self.bar_plot.setLabel("left", "traffic / max(bound, compulsory)" if as_ratio else "DRAM traffic (words)")
        keys = (["optimal"] if as_ratio else ["reference", "optimal"]) + flows
        width = 0.8 / len(keys)
        x = np.arange(len(layers), dtype=float)
        for i, key in enumerate(keys):
            vals = []
            for l in layers:
                ref = l["bound"]["reference"]
                if key == "reference":
                    v = ref
                elif key == "optimal":
                    v = l["optimal"]["traffic"]["total"]
                else:
                    b = l["baselines"].get(key)
                    v = b["traffic"]["total"] if b else 0.0
                vals.append(v / ref if as_ratio else v)
            item = pg.BarGraphItem(x=x - 0.4 + (i + 0.5) * width, height=vals, width=width, brush=_color(key),
                                   name="max(bound, compulsory)" if key == "reference" else key)
            self.bar_plot.addItem(item)
        if as_ratio:
            self.bar_plot.addItem(pg.InfiniteLine(1.0, angle=0, pen=pg.mkPen("k", style=Qt.DashLine)))
        ax = self.bar_plot.getAxis("bottom")
        ax.setTicks([[(i, l["name"]) for i, l in enumerate(layers)]])

    def _fill_table(self, result: dict[str, Any], flows: list[str]) -> None:
        layers = result["layers"]
        self.table.setRowCount(len(layers) + 1)
        for r, l in enumerate(layers):
            t, tr = l["optimal"]["tiling"], l["optimal"]["traffic"]
            vals: list[Any] = [l["name"], l["bound"]["R"], round(l["bound"]["total"]), l["bound"]["compulsory"]["total"],
                               tr["total"], f"{l['optimal']['ratio_reference']:.3f}", t["b"], t["z"], t["y"], t["x"],
                               t["k"], tr["memory"], tr["input_reads"], tr["weight_reads"], tr["output_writes"],
                               l["optimal"]["onchip"]["gbuf_reads"]]
            for k in BASELINES:
                b = l["baselines"].get(k)
                vals.append("" if b is None else b["traffic"]["total"])
            vals.append(l.get("best", {}).get("dataflow", ""))
            for c, v in enumerate(vals):
                self.table.setItem(r, c, QTableWidgetItem(str(v)))
        tot = result["totals"]
        last = len(layers)
        total_row = {0: "total", 2: round(tot["bound"]), 3: tot["compulsory"], 4: tot["optimal"],
                     5: f"{tot['ratio_reference']:.3f}", 15: tot["gbuf_reads"]}
        for i, k in enumerate(BASELINES):
            if k in tot and tot[k] is not None:
                total_row[16 + i] = tot[k]
        for c, v in total_row.items():
            self.table.setItem(last, c, QTableWidgetItem(str(v)))
        self.table.resizeColumnsToContents()

    def _show_tile(self) -> None:
        if not self._result or self.tile_layer.currentIndex() < 0:
            return
        l = self._result["layers"][self.tile_layer.currentIndex()]
        t, sh = l["optimal"]["tiling"], l["shape"]
        block = (0, 0)
        if self.tile_block.currentIndex() == 1:
            block = ((-(-sh["Ho"] // t["y"])) // 2, (-(-sh["Wo"] // t["x"])) // 2)
        self.tile_view.set_layer(l, block)
        tr = l["optimal"]["traffic"]
        self.tile_info.setText(
            f"{l['name']}: b={t['b']} z={t['z']} y={t['y']} x={t['x']} k={t['k']} (order {t['order']}), "
            f"{tr['memory']} of {self._result['memory_words']} words on chip; DRAM reads {tr['reads']}, "
            f"writes {tr['output_writes']}; {l['optimal']['ratio_reference']:.3f}x max(bound, compulsory); "
            f"best dataflow here: {l.get('best', {}).get('dataflow', 'optimal')}.")


PANEL = BoundPanel
