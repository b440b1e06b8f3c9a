"""Panel of the communication-bound engine: traffic against on-chip memory, per-layer bars, the chosen
tile over the feature maps, and a CSV-exportable table. Everything redraws from the typed result
(core.bound.result.BoundResult)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QPainter, QPen
from PySide6.QtWidgets import (QCheckBox, QComboBox, QFileDialog, QHBoxLayout, QLabel, QPushButton, QSpinBox,
                               QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from core.settings import Setting
from core.atomic import atomic_write_text
from core.bound.analysis import curves_csv
from core.bound.cost import cost_words
from core.bound.fusion import FusionPlan
from core.bound.geometry import interior_block, layer_axes, live_table, tile_block
from core.bound.loopnest import BASELINES
from core.bound.result import BoundResult, LayerAnalysis
from core.engine import EngineSpec
from core.jobs import Event, MetricPoint
from core.project import Run
from core.results import EngineResult
from gui.binding import Adapter
from gui.buttons import push_button
from gui.panels.base import PanelContext
from gui.panels.generic import GenericPanel
from gui.plotting import PALETTE, ask_export_table, new_plot

SERIES_ORDER = ["paper", "segment", "compulsory", "reference"] + list(BASELINES) + ["optimal"]
TABLE_COLUMNS = ["layer", "R", "proven", "paper (asymptotic)", "optimal", "ratio", "b", "z", "y", "x", "k", "memory used",
                 "inputs read", "weights read", "outputs written", "GBuf reads"] + [f"{k} total" for k in BASELINES] + \
    ["best", "loop order", "gap"]
# How the bound series are named on screen: "reference" is the proven bound (the largest of the segment
# bound, the compulsory traffic and the cut bound); the paper's formula is asymptotic, and dataflows can move less.
SERIES_LABELS = {"reference": "proven", "paper": "paper (asymptotic)", "segment": "segment bound",
                 "compulsory": "compulsory"}
BOUND_SERIES = ("paper", "segment", "compulsory", "reference")


def _color(key: str) -> str:
    fixed = {"paper": "#000000", "segment": "#bcbd22", "compulsory": "#7f7f7f", "reference": "#17becf",
             "optimal": "#2ca02c",
             "ws": "#ff7f0e", "is": "#9467bd", "os": "#8c564b", "rs": "#e377c2"}
    return fixed.get(key, PALETTE[0])


class TileView(QWidget):
    """The output feature map with the tile grid and one chosen block, and the input map with that
    block's input rows and columns (its halo in a lighter shade, zero padding hatched; for a tiling
    that streams its input, the lines on chip while the block's first output line is computed, dashed)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setMinimumSize(420, 240)
        self.layer: LayerAnalysis | None = None
        self.block = (0, 0)

    def set_layer(self, layer: LayerAnalysis | None, block: tuple[int, int] = (0, 0)) -> None:
        self.layer, self.block = layer, block
        self.update()

    def geometry_of(self) -> dict[str, Any] | None:
        """Rows/columns of the shown block in output and input coordinates (core.bound.geometry)."""
        if self.layer is None:
            return None
        return tile_block(self.layer.shape, self.layer.optimal.tiling, self.block)

    def paintEvent(self, event: Any) -> None:   # noqa: N802 (Qt name)
        p = QPainter(self)
        p.fillRect(self.rect(), QColor("white"))
        g, layer = self.geometry_of(), self.layer
        if g is None or layer is None:
            p.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, "Run the engine to see the chosen tile")
            return
        sh, t = layer.shape, layer.optimal.tiling
        w, h = self.width(), self.height() - 30
        half = (w - 30) / 2
        P = sh.pad
        # output map
        self._map(p, QRectF(10, 25, half, h - 10), sh.Ho, sh.Wo, 0,
                  f"output {sh.Co}x{sh.Ho}x{sh.Wo}: tile b={t.b} z={t.z} y={t.y} x={t.x}",
                  grid=(t.y, t.x), boxes=[(g["out"], QColor(46, 160, 44, 170))])
        # input map with padding; a streaming tile outlines the lines its first output line reads
        title = f"input {sh.Ci}x{sh.Hi}x{sh.Wi} (pad {P}): block + halo, k={t.k} channel(s)"
        streaming = self.streaming_lines()
        if streaming is not None:
            title += f"; streams by {'rows' if t.stream == 'P' else 'columns'}, {streaming[1]} on chip at once"
        self._map(p, QRectF(20 + half, 25, half, h - 10), sh.Hi, sh.Wi, P, title,
                  boxes=[(g["in"], QColor(214, 39, 40, 70)), (g["core"], QColor(214, 39, 40, 160))],
                  outline=streaming[0] if streaming else None)

    def streaming_lines(self) -> tuple[tuple[int, int, int, int] | None, int] | None:
        """For a tiling that streams its input tile: the input lines (y0, y1, x0, x1, half-open) on chip
        while the shown block's first output line is computed, and the most lines on chip at once
        (core.bound.geometry.live_table); None for a tiling that loads its tiles whole."""
        g, layer = self.geometry_of(), self.layer
        if g is None or layer is None or not layer.optimal.tiling.stream:
            return None
        t = layer.optimal.tiling
        by_rows = t.stream == "P"
        along = layer_axes(layer.shape)[0 if by_rows else 1]
        first = g["out"][0 if by_rows else 2]
        lines = along.rows_read(first, first + 1)
        live = int(live_table(along)[t.y if by_rows else t.x])
        if not lines.size:
            return None, live
        a, b = int(lines[0]), int(lines[-1]) + 1
        y0, y1, x0, x1 = g["in"]
        return ((a, b, x0, x1) if by_rows else (y0, y1, a, b)), live

    def _map(self, p: QPainter, r: QRectF, H: int, W: int, pad: int, title: str,
             grid: tuple[int, int] | None = None,
             boxes: Sequence[tuple[tuple[int, int, int, int], QColor]] = (),
             outline: tuple[int, int, int, int] | None = None) -> None:
        p.setPen(QPen(QColor("black")))
        p.drawText(QRectF(r.left(), 2, r.width(), 20), Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                   title)
        HH, WW = H + 2 * pad, W + 2 * pad
        cell = min(r.width() / WW, r.height() / HH)
        ox, oy = r.left(), r.top()

        def rect(y0: float, y1: float, x0: float, x1: float) -> QRectF:
            return QRectF(ox + (x0 + pad) * cell, oy + (y0 + pad) * cell, (x1 - x0) * cell, (y1 - y0) * cell)

        if pad:
            p.fillRect(rect(-pad, H + pad, -pad, W + pad), QBrush(QColor(200, 200, 200), Qt.BrushStyle.BDiagPattern))
        p.fillRect(rect(0, H, 0, W), QColor(235, 240, 250))
        if grid:
            p.setPen(QPen(QColor(120, 120, 120), 1))
            for y in range(0, H + 1, grid[0]):
                p.drawLine(rect(y, y, 0, W).topLeft(), rect(y, y, 0, W).topRight())
            for x in range(0, W + 1, grid[1]):
                p.drawLine(rect(0, H, x, x).topLeft(), rect(0, H, x, x).bottomLeft())
        for (y0, y1, x0, x1), color in boxes:
            p.fillRect(rect(y0, y1, x0, x1), color)
        if outline is not None:                 # the input lines on chip while the first output line is computed
            p.setPen(QPen(QColor(20, 20, 20), 2, Qt.PenStyle.DashLine))
            p.drawRect(rect(*outline))
        p.setPen(QPen(QColor("black"), 1.5))
        p.drawRect(rect(0, H, 0, W))


class FlagBoxes(QWidget):
    """One check box per allowed value of a list setting (the baseline dataflows to compare)."""

    changed = Signal()

    def __init__(self, values: list[str], tips: dict[str, str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        self.boxes = {v: QCheckBox(v.upper()) for v in values}
        for v, box in self.boxes.items():
            box.setToolTip(tips.get(v, ""))
            box.toggled.connect(lambda _on: self.changed.emit())
            row.addWidget(box)


class FlagsAdapter(Adapter):
    def read(self, w: FlagBoxes, prop: Setting) -> Any:
        return [v for v, box in w.boxes.items() if box.isChecked()]

    def write(self, w: FlagBoxes, value: Any, prop: Setting) -> None:
        for v, box in w.boxes.items():
            box.setChecked(v in value)

    def signal(self, w: FlagBoxes) -> Any:
        return w.changed


class BoundPanel(GenericPanel):
    engine_name = "bound"

    def __init__(self, engine: EngineSpec, context: PanelContext, parent: QWidget | None = None) -> None:
        super().__init__(engine, context, parent)
        c, b = self.controls, self.binding
        # The memory S and the word size are the dataflow target's (edited in the library), not settings.
        self.batch = b.build("batch", QSpinBox)
        c.addWidget(b.label("batch"))
        c.addWidget(self.batch)
        self.batch.setSpecialValueText("from workload")
        self.flows = FlagBoxes(list(BASELINES), {k: f.title for k, f in BASELINES.items()})
        self.flow_boxes = self.flows.boxes
        c.addWidget(b.bind("dataflows", self.flows, FlagsAdapter()))
        self.sweep = b.build("sweep")
        c.addWidget(self.sweep)
        self.fusion = b.build("fusion")
        c.addWidget(self.fusion)
        self.objective = b.build("objective", QComboBox)       # what the costed dataflow minimises
        c.addWidget(b.label("objective"))
        c.addWidget(self.objective)

        # traffic vs memory
        self.sweep_plot = new_plot()
        self.sweep_plot.setLogMode(x=True, y=True)
        self.sweep_plot.setLabel("bottom", "on-chip memory (KiB)")
        self.sweep_plot.setLabel("left", "DRAM traffic (words)")
        self.sweep_plot.addLegend(offset=(-10, 10))
        self.sweep_plot.showGrid(x=True, y=True, alpha=0.3)
        sweep_page = QWidget()
        sl = QVBoxLayout(sweep_page)
        srow = QHBoxLayout()
        self.curve_of = QComboBox()             # the network's totals or one layer's curve
        self.curve_of.setToolTip("Whose traffic against memory to draw: the whole network or one layer "
                                 "(its proven bound and the optimal dataflow)")
        self.curve_of.currentIndexChanged.connect(self._redraw_sweep)
        self.export_curves = push_button("Export curves CSV…", "Every memory size of the sweep: the network's and "
                                         "each layer's proven bound and optimal traffic", self._export_curves)
        srow.addWidget(QLabel("Curve of:"))
        srow.addWidget(self.curve_of, 1)
        srow.addWidget(self.export_curves)
        sl.addLayout(srow)
        sl.addWidget(self.sweep_plot, 1)
        self.tabs.insertTab(0, sweep_page, "Traffic vs memory")
        self._live_sweep: dict[str, tuple[list[float], list[float]]] = {}
        self._bound: BoundResult | None = None          # the result on show
        # per-layer bars: a click on a layer's bars shows its tile
        bar_page = QWidget()
        bl = QVBoxLayout(bar_page)
        self.bar_mode = QComboBox()
        self.bar_mode.addItems(["ratio to the proven bound", "DRAM traffic (words)"])
        self.bar_mode.currentIndexChanged.connect(self._redraw_bars)
        bl.addWidget(self.bar_mode, 0, Qt.AlignmentFlag.AlignLeft)
        self.bar_plot = new_plot(x_label="layer")
        self.bar_plot.addLegend(offset=(-10, 10))
        self.bar_plot.scene().sigMouseClicked.connect(self._bar_plot_clicked)
        self.bar_mark = pg.LinearRegionItem(movable=False, brush=(0, 0, 0, 25))
        bl.addWidget(self.bar_plot, 1)
        self.tabs.insertTab(1, bar_page, "Per layer")
        # tile
        self.tile_page = QWidget()
        tl = QVBoxLayout(self.tile_page)
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
        self.tabs.insertTab(2, self.tile_page, "Tile")
        # table: clicking a layer's row shows its tile
        table_page = QWidget()
        tb = QVBoxLayout(table_page)
        self.table = QTableWidget(0, len(TABLE_COLUMNS))
        self.table.setHorizontalHeaderLabels(TABLE_COLUMNS)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.currentCellChanged.connect(lambda r, *_: self.select_layer(r, show=False))
        self.table.cellClicked.connect(lambda r, _c: self.select_layer(r))
        tb.addWidget(self.table, 1)
        self.fusion_info = QLabel()             # the fusion plan (fused chains) at this memory
        self.fusion_info.setWordWrap(True)
        self.fusion_info.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        tb.addWidget(self.fusion_info)
        self.cost_info = QLabel()               # the costed totals on the accelerator, each against its limit
        self.cost_info.setWordWrap(True)
        self.cost_info.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        tb.addWidget(self.cost_info)
        self.export_csv = QPushButton("Export CSV…")
        self.export_csv.clicked.connect(lambda: ask_export_table(self, self.table, "bound-layers"))
        tb.addWidget(self.export_csv, 0, Qt.AlignmentFlag.AlignLeft)
        self.tabs.insertTab(3, table_page, "Table")
        self.tabs.setCurrentIndex(0)

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
        if grew and not self._result_follows:       # else the result draws the sweep
            self._draw_sweep(self._live_sweep)

    def _draw_sweep(self, series: dict[str, tuple[list[float], list[float]]], mark_kib: float | None = None) -> None:
        self.sweep_plot.clear()
        for key in sorted(series, key=lambda k: SERIES_ORDER.index(k) if k in SERIES_ORDER else 99):
            xs, ys = series[key]
            if not xs:
                continue
            style = Qt.PenStyle.DashLine if key in BOUND_SERIES else Qt.PenStyle.SolidLine
            label = SERIES_LABELS.get(key, key)
            self.sweep_plot.plot(np.asarray(xs, float), np.asarray(ys, float), name=label,
                                 pen=pg.mkPen(_color(key), width=3 if key == "optimal" else 2, style=style), symbol="o", symbolSize=5,
                                 symbolBrush=_color(key))
        if mark_kib:
            self.sweep_plot.addItem(pg.InfiniteLine(np.log10(mark_kib), angle=90,
                                                    pen=pg.mkPen("#999", style=Qt.PenStyle.DotLine)))

    # ------------------------------------------------------------ result
    def show_result(self, result: EngineResult | None) -> None:
        super().show_result(result)
        assert result is None or isinstance(result, BoundResult)
        self._bound = result
        self.sweep_plot.clear()
        self.bar_plot.clear()
        self.table.setRowCount(0)
        self.tile_layer.blockSignals(True)
        self.tile_layer.clear()
        self.tile_layer.blockSignals(False)
        self.tile_view.set_layer(None)
        self.tile_info.clear()
        self.fusion_info.setText(fusion_words(result.fusion if isinstance(result, BoundResult) else None))
        self.cost_info.setText(cost_words(result.costing if isinstance(result, BoundResult) else None))
        self.curve_of.blockSignals(True)
        self.curve_of.clear()
        self.curve_of.blockSignals(False)
        self.export_curves.setEnabled(result is not None and bool(result.sweep))
        if result is None:
            return
        self.curve_of.blockSignals(True)
        self.curve_of.addItems(["network"] + ([l.name for l in result.layers]
                                              if result.sweep and result.sweep[0].layers else []))
        self.curve_of.blockSignals(False)
        self._redraw_sweep()
        self._draw_bars(result)
        self._fill_table(result)
        self.tile_layer.blockSignals(True)
        for l in result.layers:
            self.tile_layer.addItem(l.name)
        self.tile_layer.blockSignals(False)
        self._show_tile()

    def _redraw_sweep(self, *_args: Any) -> None:
        """Traffic against memory for the curve picked: the network's totals (bounds, optimal, each
        baseline) or one layer's proven bound and optimal traffic."""
        result = self._bound
        if result is None:
            return
        i = self.curve_of.currentIndex() - 1            # -1: the network
        series: dict[str, tuple[list[float], list[float]]] = {}
        for row in result.sweep:
            values: dict[str, float | None]
            if 0 <= i < len(row.layers):
                values = {"reference": row.layers[i].reference, "optimal": row.layers[i].optimal}
            else:
                values = {"paper": row.paper, "segment": row.segment, "compulsory": row.compulsory,
                          "reference": row.reference, "optimal": row.optimal}
                values.update((k, row.per_dataflow.get(k)) for k in result.dataflows)
            for key, v in values.items():
                if v is not None:
                    xs, ys = series.setdefault(key, ([], []))
                    xs.append(row.memory_bytes / 1024)
                    ys.append(v)
        self._draw_sweep(series, result.memory_bytes / 1024)

    def _export_curves(self) -> None:
        if self._bound is None or not self._bound.sweep:
            return
        path, _ = QFileDialog.getSaveFileName(self, "Export curves", "bound-curves.csv", "CSV (*.csv)")
        if path:
            atomic_write_text(Path(path), curves_csv(self._bound))

    def _redraw_bars(self, *_args: Any) -> None:
        """The bars again, in the mode just picked."""
        if self._bound is not None:
            self._draw_bars(self._bound)

    def _draw_bars(self, result: BoundResult) -> None:
        self.bar_plot.clear()
        layers = result.layers
        as_ratio = self.bar_mode.currentIndex() == 0
        self.bar_plot.setLabel("left", "traffic / proven bound" if as_ratio else "DRAM traffic (words)")
        keys = (["optimal"] if as_ratio else ["reference", "optimal"]) + result.dataflows
        width = 0.8 / len(keys)
        x = np.arange(len(layers), dtype=float)
        for i, key in enumerate(keys):
            vals = []
            for l in layers:
                ref = l.bound.reference
                v: float
                if key == "reference":
                    v = ref
                elif key == "optimal":
                    v = l.optimal.traffic.total
                else:
                    b = l.baselines.get(key)
                    v = b.traffic.total if b else 0.0
                vals.append(v / ref if as_ratio else v)
            item = pg.BarGraphItem(x=x - 0.4 + (i + 0.5) * width, height=vals, width=width, brush=_color(key),
                                   name=SERIES_LABELS.get(key, key))
            self.bar_plot.addItem(item)
        if as_ratio:
            self.bar_plot.addItem(pg.InfiniteLine(1.0, angle=0, pen=pg.mkPen("k", style=Qt.PenStyle.DashLine)))
        self.bar_plot.addItem(self.bar_mark)          # the layer on show in the Tile tab
        ax = self.bar_plot.getAxis("bottom")
        ax.setTicks([[(i, l.name) for i, l in enumerate(layers)]])

    def _fill_table(self, result: BoundResult) -> None:
        layers = result.layers
        self.table.setRowCount(len(layers) + 1)
        for r, l in enumerate(layers):
            t, tr = l.optimal.tiling, l.optimal.traffic
            vals: list[Any] = [l.name, l.bound.R, round(l.bound.reference), round(l.bound.paper.total),
                               tr.total, _ratio_text(l.optimal.ratio_reference), t.b, t.z, t.y, t.x,
                               t.k, tr.memory, tr.input_reads, tr.weight_reads, tr.output_writes,
                               l.optimal.onchip.gbuf_reads]
            for k in BASELINES:
                b = l.baselines.get(k)
                vals.append("" if b is None else b.traffic.total)
            vals += [l.best.dataflow, t.order + (" sliding" if t.slide else "") + _STREAM_WORDS.get(t.stream, "")
                     + (f" +{t.hold}" if t.hold else ""),
                     l.gap.source if l.gap else ""]
            for c, v in enumerate(vals):
                self.table.setItem(r, c, QTableWidgetItem(str(v)))
            lb = l.bound
            runs = (lb.cut.parts or 2) if lb.cut is not None else 2
            proof = {"cut": f"cut bound (compulsory traffic plus the words used again when the MACs are cut into "
                            f"{runs} equal runs, beyond what the memory holds at each cut)",
                     "compulsory": "compulsory traffic (every needed word moved once)",
                     "phase": f"segment bound from the stride phases (R_phase {lb.segment.phase_reuse or 0:.2f} "
                              f"against R {lb.R})",
                     "segment": f"segment bound (R {lb.R})"}[lb.binding()]
            item = self.table.item(r, 2)
            if item is not None:
                item.setToolTip(f"Proven lower bound: {proof}; see docs/bound.md")
        tot = result.totals
        last = len(layers)
        total_row = {0: "total", 2: round(tot.reference), 3: round(tot.paper), 4: tot.optimal,
                     5: _ratio_text(tot.ratio_reference), 15: tot.gbuf_reads}
        for i, k in enumerate(BASELINES):
            v = tot.per_dataflow.get(k)
            if v is not None:
                total_row[16 + i] = v
        for c, v in total_row.items():
            self.table.setItem(last, c, QTableWidgetItem(str(v)))
        self.table.resizeColumnsToContents()

    # ------------------------------------------------------------ linked views
    def select_layer(self, i: int, show: bool = True) -> None:
        """Layer i becomes the one the Tile tab shows (and the one marked in the bars and the table);
        `show` brings the Tile tab forward. The total row and out-of-range indices are ignored."""
        if self._bound is None or not 0 <= i < len(self._bound.layers):
            return
        self.tile_layer.setCurrentIndex(i)
        if show:
            self.tabs.setCurrentWidget(self.tile_page)

    def layer_at(self, x: float) -> int | None:
        """The layer whose bars stand at x on the per-layer plot (None between groups)."""
        if self._bound is None:
            return None
        i = round(x)
        return i if 0 <= i < len(self._bound.layers) and abs(x - i) <= 0.45 else None

    def bar_clicked_at(self, x: float) -> None:
        """A click at x (data coordinates) on the per-layer plot."""
        i = self.layer_at(x)
        if i is not None:
            self.select_layer(i)

    def _bar_plot_clicked(self, ev: Any) -> None:
        vb = self.bar_plot.getPlotItem().vb
        if vb.sceneBoundingRect().contains(ev.scenePos()):
            self.bar_clicked_at(vb.mapSceneToView(ev.scenePos()).x())

    def show_run(self, run: Run | None, **focus: Any) -> None:
        """`focus`: layer=i shows layer i's tile."""
        super().show_run(run, **focus)
        if "layer" in focus:
            self.select_layer(int(focus["layer"]))

    def _show_tile(self) -> None:
        i = self.tile_layer.currentIndex()
        if self._bound is None or i < 0:
            return
        l = self._bound.layers[i]
        t = l.optimal.tiling
        block = interior_block(l.shape, t) if self.tile_block.currentIndex() == 1 else (0, 0)
        self.tile_view.set_layer(l, block)
        self.bar_mark.setRegion((i - 0.45, i + 0.45))
        if self.table.currentRow() != i:
            self.table.selectRow(i)
        tr = l.optimal.traffic
        held = {"W": "all weights", "I": "all inputs"}.get(t.hold)
        self.tile_info.setText(
            f"{l.name}: b={t.b} z={t.z} y={t.y} x={t.x} k={t.k} (order {t.order}"
            f"{', ' + held + ' held' if held else ''}{', input tiles slide' if t.slide else ''}"
            f"{_STREAM_PHRASE.get(t.stream, '')}), "
            f"{tr.memory} of {self._bound.memory_words} words on chip; DRAM reads {tr.reads}, "
            f"writes {tr.output_writes}; {_ratio_text(l.optimal.ratio_reference)}x the proven bound "
            f"({_ratio_text(l.optimal.ratio_paper)}x the paper's asymptotic formula); "
            f"gap to the bound: {_GAP_WORDS.get(l.gap.source if l.gap else '', 'not recorded')}.")


# A streaming tiling's input tile passes through by output rows or columns (core.bound.loopnest)
_STREAM_WORDS = {"P": " streaming rows", "Q": " streaming columns"}
_STREAM_PHRASE = {"P": ", input tiles stream through by output rows", "Q": ", input tiles stream through by output columns"}


# A layer's gap to the proven bound, in words (core.bound.result.Gap, docs/bound.md "The gap")
_GAP_WORDS = {"attained": "none, the bound is attained", "output writes": "no larger than the output writes "
              "(which the proof cannot add)", "open": "open (bound or schedule, not known which)"}


def fusion_words(plan: FusionPlan | None) -> str:
    """The fusion plan in words under the table: its saving, then each fused chain."""
    if plan is None:
        return ""
    if not plan.layer_by_layer:
        return "Fusion plan: no traffic."
    pct = 100.0 * plan.saved / plan.layer_by_layer
    head = (f"Fusion plan: {plan.total:,} words against {plan.layer_by_layer:,} layer by layer "
            f"({pct:.1f} % saved) with {plan.fused_chains} fused {'chain' if plan.fused_chains == 1 else 'chains'} "
            f"(intermediate maps kept on chip)")
    chains = [f"{' + '.join(s.layers)}: {s.traffic:,} words (layer by layer {s.layer_by_layer:,}, "
              f"proven bound {s.bound:,})" for s in plan.segments if len(s.layers) > 1]
    return head + (":\n" + "\n".join(chains) if chains else ".")


def _ratio_text(v: float | None) -> str:
    """A ratio to a bound, or "-" where the bound is 0."""
    return "-" if v is None else f"{v:.3f}"


PANEL = BoundPanel
