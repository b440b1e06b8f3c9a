"""Panel of the MERIT engine: M(A)/M(B) as index grids (hover shows the source element), the tile and its
footprint, bank maps per layout with conflicts in red, reuse bars per architecture and utilisation
curves of the MERIT-z model. Everything redraws from the result dict alone."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import QColor, QFont, QImage, QPainter
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDoubleSpinBox, QHBoxLayout, QLabel, QLineEdit, QSpinBox,
                               QSplitter, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from core.engine import EngineSpec
from core.errors import InputError
from core.merit.engine import CURVE_ALUS, NETWORKS, WINDOW_KERNELS, default_settings, parse_tile
from core.merit.workloads import WORKLOADS
from gui.panels.base import PanelContext
from gui.panels.generic import GenericPanel
from gui.plotting import PALETTE

BANK_COLORS = ["#aec7e8", "#ffbb78", "#98df8a", "#c5b0d5", "#c49c94", "#f7b6d2", "#dbdb8d", "#9edae5"]


class GridView(QWidget):
    """Cells coloured from an RGB array, drawn as one image; hovering a cell emits its description.

    Drawing goes through a single QImage rather than one QPainter call per cell: with the installed
    PySide6 6.12 on Python 3.11 every call of a void Qt method drops a reference to None, and a few
    thousand cells per repaint would exhaust it."""

    hovered = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setMouseTracking(True)
        self.setMinimumSize(360, 240)
        self.rows = self.cols = 0
        self.empty_text = "Run the engine to see this view"
        self._rgb: np.ndarray | None = None
        self._outline: np.ndarray | None = None

    def refresh(self) -> None:
        """Recompute the colours (after the data changed) and repaint."""
        self._rgb = self.rgb() if self.rows else None
        self._outline = self.outlines() if self.rows else None
        self.update()

    def rgb(self) -> np.ndarray:
        return np.full((self.rows, self.cols, 3), 255, dtype=np.uint8)

    def outlines(self) -> np.ndarray:
        return np.zeros((self.rows, self.cols), dtype=bool)

    def color(self, r: int, c: int) -> QColor:
        if self._rgb is None:
            self.refresh()
        v = self._rgb[r, c]
        return QColor(int(v[0]), int(v[1]), int(v[2]))

    def cell_rect(self) -> tuple[float, float, float]:
        if not self.rows or not self.cols:
            return 0, 0, 0
        size = max(3, int(min((self.width() - 40) / self.cols, (self.height() - 40) / self.rows)))
        return 30.0, 30.0, float(size)

    def cell_at(self, x: float, y: float) -> tuple[int, int] | None:
        x0, y0, s = self.cell_rect()
        if not s:
            return None
        c, r = int((x - x0) // s), int((y - y0) // s)
        return (r, c) if 0 <= r < self.rows and 0 <= c < self.cols else None

    def mouseMoveEvent(self, event: Any) -> None:     # noqa: N802 (Qt name)
        cell = self.cell_at(event.position().x(), event.position().y())
        if cell is not None:
            text = self.describe(*cell)
            self.setToolTip(text)
            self.hovered.emit(text)

    def describe(self, r: int, c: int) -> str:
        return ""

    def label(self, r: int, c: int) -> str:
        return ""

    def image(self, k: int) -> np.ndarray:
        """The grid at k pixels per cell: fill, a grey grid line, black 2-pixel outlines."""
        if self._rgb is None:
            self.refresh()
        img = np.repeat(np.repeat(self._rgb, k, axis=0), k, axis=1).copy()
        img[k - 1::k, :, :] = 190
        img[:, k - 1::k, :] = 190
        if self._outline is not None and self._outline.any() and k >= 4:
            m = np.zeros((k, k), dtype=bool)
            m[:2, :] = m[-2:, :] = True
            m[:, :2] = m[:, -2:] = True
            mask = np.kron(self._outline, m).astype(bool)
            img[mask] = 0
        return np.ascontiguousarray(img)

    def paintEvent(self, event: Any) -> None:         # noqa: N802 (Qt name)
        p = QPainter(self)
        p.fillRect(self.rect(), QColor("white"))
        if not self.rows:
            p.drawText(self.rect(), Qt.AlignCenter, self.empty_text)
            return
        x0, y0, s = self.cell_rect()
        k = int(s)
        arr = self.image(k)
        h, w = arr.shape[:2]
        qimg = QImage(arr.data, w, h, 3 * w, QImage.Format_RGB888)
        p.drawImage(int(x0), int(y0), qimg)
        if k >= 22 and self.rows * self.cols <= 2500:
            font = QFont()
            font.setPointSizeF(max(5.0, min(9.0, k / 3.2)))
            p.setFont(font)
            p.setPen(QColor("black"))
            for r in range(self.rows):
                for c in range(self.cols):
                    text = self.label(r, c)
                    if text:
                        p.drawText(QRectF(x0 + c * k, y0 + r * k, k, k), Qt.AlignCenter, text)


class MGridView(GridView):
    """A corner of M(operand): rows = flattened p, columns = flattened a; colour = source element."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.grid: dict[str, Any] | None = None

    def set_grid(self, grid: dict[str, Any] | None) -> None:
        self.grid = grid
        self.rows = grid["rows"] if grid else 0
        self.cols = grid["cols"] if grid else 0
        self.refresh()

    def source(self, r: int, c: int) -> tuple[int, ...]:
        return tuple(int(ax[r][c]) for ax in self.grid["coords"])

    def describe(self, r: int, c: int) -> str:
        g = self.grid
        return (f"M({g['operand']})[p={tuple(g['p_labels'][r])}, a={tuple(g['a_labels'][c])}] = "
                f"{g['operand']}{list(self.source(r, c))}")

    def rgb(self) -> np.ndarray:
        shape = self.grid["shape"]
        coords = [np.asarray(ax, dtype=np.int64) for ax in self.grid["coords"]]
        inside = np.ones((self.rows, self.cols), dtype=bool)
        for x, n in zip(coords, shape):
            inside &= (x >= 0) & (x < n)
        flat = np.ravel_multi_index([np.clip(x, 0, n - 1) for x, n in zip(coords, shape)], shape)
        total = max(1, int(np.prod(shape)))
        hue = (flat * 0.61803) % 1.0
        sat = 0.35 + 0.4 * flat / total
        rgb = _hsv_to_rgb(hue, sat, np.full_like(hue, 0.95))
        rgb[~inside] = 221                               # zero padding in grey
        return rgb

    def label(self, r: int, c: int) -> str:
        src = self.source(r, c)
        return ",".join(str(x) for x in src[-2:])


def _hsv_to_rgb(h: np.ndarray, s: np.ndarray, v: np.ndarray) -> np.ndarray:
    i = np.floor(h * 6).astype(int) % 6
    f = h * 6 - np.floor(h * 6)
    p, q, t = v * (1 - s), v * (1 - f * s), v * (1 - (1 - f) * s)
    r = np.choose(i, [v, q, p, p, t, v])
    g = np.choose(i, [t, v, v, q, p, p])
    b = np.choose(i, [p, p, t, v, v, q])
    return (np.stack([r, g, b], axis=-1) * 255).astype(np.uint8)


def _hex(c: str) -> tuple[int, int, int]:
    return int(c[1:3], 16), int(c[3:5], 16), int(c[5:7], 16)


class BankView(GridView):
    """Stored words of one layout: colour = bank, grey = padding; the shown access outlined, conflicts red."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.layout_data: dict[str, Any] | None = None
        self.banks = 8
        self.accessed: dict[tuple[int, int], bool] = {}

    def set_layout(self, layout: dict[str, Any] | None, banks: int) -> None:
        self.layout_data, self.banks = layout, banks
        grid = layout["bank_grid"] if layout else []
        self.rows = len(grid)
        self.cols = len(grid[0]) if grid else 0
        self.accessed = {(r, c): bool(k) for r, c, k in (layout["shown_access"] if layout else [])}
        self.refresh()

    def rgb(self) -> np.ndarray:
        g = np.asarray(self.layout_data["bank_grid"], dtype=np.int64)
        palette = np.array([_hex(c) for c in BANK_COLORS], dtype=np.uint8)
        rgb = palette[np.mod(g, len(BANK_COLORS))]
        rgb[g < 0] = 238
        for (r, c), clash in self.accessed.items():
            if clash:
                rgb[r, c] = _hex("#e31a1c")
        return rgb

    def outlines(self) -> np.ndarray:
        m = np.zeros((self.rows, self.cols), dtype=bool)
        for (r, c) in self.accessed:
            m[r, c] = True
        return m

    def label(self, r: int, c: int) -> str:
        b = self.layout_data["bank_grid"][r][c]
        return "" if b < 0 else str(b)

    def describe(self, r: int, c: int) -> str:
        b = self.layout_data["bank_grid"][r][c]
        pitch = self.layout_data["pitch"]
        what = "padding" if b < 0 else f"bank {b}"
        acc = (" - read by the shown warp" + (" (CONFLICT)" if self.accessed.get((r, c)) else "")
               if (r, c) in self.accessed else "")
        return f"address {r * pitch + c} (row {r}, column {c}): {what}{acc}"

    def conflict_cells(self) -> list[tuple[int, int]]:
        return [k for k, v in self.accessed.items() if v]


def _bf_text(bf: dict[str, Any]) -> str:
    if not bf["butterfly_ok"]:
        return "no"
    return "yes (after X, R)" if bf["non_square"] and bf["non_square"]["found"] else "yes"


def _table(headers: list[str]) -> QTableWidget:
    t = QTableWidget(0, len(headers))
    t.setHorizontalHeaderLabels(headers)
    t.verticalHeader().setVisible(False)
    return t


def _fill(table: QTableWidget, rows: list[list[Any]]) -> None:
    table.setRowCount(len(rows))
    for r, row in enumerate(rows):
        for c, v in enumerate(row):
            item = QTableWidgetItem("" if v is None else (f"{v:.4g}" if isinstance(v, float) else str(v)))
            table.setItem(r, c, item)
    table.resizeColumnsToContents()


def _tree_view(result: dict[str, Any]) -> dict[str, Any]:
    out = dict(result)
    out["m_grids"] = [{k: v for k, v in g.items() if k in ("operand", "shape", "rows", "cols")}
                      for g in result.get("m_grids", [])]
    banks = dict(result.get("banks", {}))
    banks["layouts"] = [{k: v for k, v in L.items() if k not in ("bank_grid", "shown_access")}
                        for L in banks.get("layouts", [])]
    out["banks"] = banks
    return out


class MeritPanel(GenericPanel):
    engine_name = "merit"

    def __init__(self, engine: EngineSpec, context: PanelContext, parent: QWidget | None = None) -> None:
        super().__init__(engine, context, parent)
        d = default_settings()
        self.workload_box = QComboBox()
        for name, wl in WORKLOADS.items():
            self.workload_box.addItem(f"{wl.title}", name)
        self.workload_box.addItem("Window's kernel set (as convolution)", WINDOW_KERNELS)
        self.banks_box = QComboBox()
        for n in (2, 4, 8, 16, 32):
            self.banks_box.addItem(str(n), n)
        self.alus_spin = QSpinBox()
        self.alus_spin.setRange(32, 4096)
        self.alus_spin.setSingleStep(32)
        self.bw_spin = QDoubleSpinBox()
        self.bw_spin.setRange(0.1, 1000.0)
        self.bw_spin.setSuffix(" GB/s")
        self.net_checks = {n: QCheckBox(n) for n in NETWORKS}
        self.table9_check = QCheckBox("Table IX")
        self.tile_edit = QLineEdit()
        self.tile_edit.setPlaceholderText("default")
        self.tile_edit.setToolTip("Tile extents overriding the workload's, e.g. y=16,x=8")
        self.curve_edit = QLineEdit()
        self.curve_edit.setToolTip("ALU counts for the utilisation curve, comma-separated")
        for label, w in (("Workload", self.workload_box), ("Tile", self.tile_edit), ("Banks", self.banks_box),
                         ("ALUs", self.alus_spin), ("DRAM", self.bw_spin)):
            self.controls.addWidget(QLabel(label))
            self.controls.addWidget(w)
        for w in list(self.net_checks.values()) + [self.table9_check]:
            self.controls.addWidget(w)
        self.controls.addWidget(QLabel("Curve ALUs"))
        self.controls.addWidget(self.curve_edit)
        self.controls.addStretch(1)
        self.set_settings(d)
        for sig in (self.workload_box.currentIndexChanged, self.banks_box.currentIndexChanged,
                    self.alus_spin.valueChanged, self.bw_spin.valueChanged, self.curve_edit.editingFinished,
                    self.tile_edit.editingFinished,
                    self.table9_check.toggled, *[c.toggled for c in self.net_checks.values()]):
            sig.connect(lambda *_: self.settings_changed.emit())
        self._transform_json: dict[str, Any] | None = None

        # M(A), M(B)
        mtab = QWidget()
        ml = QVBoxLayout(mtab)
        row = QHBoxLayout()
        self.operand_box = QComboBox()
        self.operand_box.currentIndexChanged.connect(self._show_operand)
        row.addWidget(QLabel("Operand"))
        row.addWidget(self.operand_box)
        self.transform_label = QLabel("")
        self.transform_label.setWordWrap(True)
        row.addWidget(self.transform_label, 1)
        ml.addLayout(row)
        self.mgrid = MGridView()
        self.hover_label = QLabel("Hover over an element to see which source element it copies.")
        self.mgrid.hovered.connect(self.hover_label.setText)
        ml.addWidget(self.mgrid, 1)
        ml.addWidget(self.hover_label)
        self.tabs.addTab(mtab, "M(A), M(B)")

        # tile and footprint
        ttab = QWidget()
        tl = QVBoxLayout(ttab)
        self.tile_label = QLabel("")
        self.tile_label.setWordWrap(True)
        tl.addWidget(self.tile_label)
        split = QSplitter(Qt.Vertical)
        self.footprint_view = BankView()
        self.footprint_view.empty_text = "Run the engine to see the tile's footprint"
        self.footprint_view.hovered.connect(self.tile_label.setToolTip)
        split.addWidget(self.footprint_view)
        self.loads_table = _table(["operand", "footprint (eq. 9)", "tiles", "direct", "unrolled", "on the fly",
                                   "saved"])
        split.addWidget(self.loads_table)
        tl.addWidget(split, 1)
        self.tabs.addTab(ttab, "Tile and footprint")

        # banks
        btab = QWidget()
        bl = QVBoxLayout(btab)
        brow = QHBoxLayout()
        self.layout_box = QComboBox()
        self.layout_box.currentIndexChanged.connect(self._show_layout)
        brow.addWidget(QLabel("Layout"))
        brow.addWidget(self.layout_box)
        self.layout_label = QLabel("")
        self.layout_label.setWordWrap(True)
        brow.addWidget(self.layout_label, 1)
        bl.addLayout(brow)
        bsplit = QSplitter(Qt.Vertical)
        self.bank_view = BankView()
        self.bank_hover = QLabel("")
        self.bank_view.hovered.connect(self.bank_hover.setText)
        bsplit.addWidget(self.bank_view)
        self.bank_table = _table(["layout", "pitch", "padding", "extra cycles", "conflicting accesses",
                                  "butterfly", "H", "detail"])
        bsplit.addWidget(self.bank_table)
        bl.addWidget(bsplit, 1)
        bl.addWidget(self.bank_hover)
        self.tabs.addTab(btab, "Banks")

        # reuse
        self.reuse_plot = pg.PlotWidget(background="w")
        self.reuse_plot.setTitle("Data reuse: MACs per input+output word (Table III)", color="k")
        self.reuse_plot.setLabel("left", "reuse rate")
        self.reuse_plot.addLegend(offset=(10, 10))
        self.tabs.addTab(self.reuse_plot, "Reuse")

        # utilisation
        utab = QWidget()
        ul = QVBoxLayout(utab)
        self.util_plot = pg.PlotWidget(background="w")
        self.util_plot.setTitle("MERIT-z utilisation against ALU count (Fig. 15)", color="k")
        self.util_plot.setLabel("bottom", "ALUs (log2)")
        self.util_plot.setLabel("left", "utilisation")
        self.util_plot.showGrid(x=True, y=True, alpha=0.3)
        self.util_plot.addLegend(offset=(-10, 10))
        ul.addWidget(self.util_plot, 2)
        self.util_table = _table(["workload", "utilisation", "paper", "layers"])
        self.layer_table = _table(["layer", "utilisation", "cycles", "DRAM bytes", "bound", "tile"])
        self.util_table.currentCellChanged.connect(lambda r, *_: self._show_layers(r))
        tables = QSplitter(Qt.Horizontal)
        tables.addWidget(self.util_table)
        tables.addWidget(self.layer_table)
        ul.addWidget(tables, 1)
        self.tabs.addTab(utab, "Utilisation")
        self.plot.setLabel("bottom", "ALUs")
        self.plot.setLabel("left", "utilisation")

    # ---------------------------------------------------------------- settings
    def settings(self) -> dict[str, Any]:
        s = default_settings()
        s["workload"] = self.workload_box.currentData()
        s["transform"] = self._transform_json
        s["banks"] = int(self.banks_box.currentData())
        s["alus"] = int(self.alus_spin.value())
        s["bandwidth_gbps"] = float(self.bw_spin.value())
        s["networks"] = [n for n, c in self.net_checks.items() if c.isChecked()]
        s["table_ix"] = self.table9_check.isChecked()
        try:
            s["curve_alus"] = [int(x) for x in self.curve_edit.text().split(",") if x.strip()]
        except ValueError:
            s["curve_alus"] = list(CURVE_ALUS)
        try:
            s["tile"] = parse_tile(self.tile_edit.text())
        except InputError:
            s["tile"] = {}
            self.context.log(f"ignoring tile {self.tile_edit.text()!r}: write index=size,...", "warning")
        return s

    def set_settings(self, s: dict[str, Any]) -> None:
        d = default_settings()
        d.update(s or {})
        i = self.workload_box.findData(d["workload"])
        self.workload_box.setCurrentIndex(max(0, i))
        j = self.banks_box.findData(d["banks"])
        if j < 0:
            self.banks_box.addItem(str(d["banks"]), d["banks"])
            j = self.banks_box.count() - 1
        self.banks_box.setCurrentIndex(j)
        self.alus_spin.setValue(int(d["alus"]))
        self.bw_spin.setValue(float(d["bandwidth_gbps"]))
        for n, c in self.net_checks.items():
            c.setChecked(n in d["networks"])
        self.table9_check.setChecked(bool(d["table_ix"]))
        self.curve_edit.setText(",".join(str(a) for a in d["curve_alus"]))
        self.tile_edit.setText(",".join(f"{k}={v}" for k, v in (d.get("tile") or {}).items()))
        self._transform_json = d.get("transform")

    # ---------------------------------------------------------------- results
    def job_started(self) -> None:
        super().job_started()

    def show_result(self, result: dict[str, Any] | None) -> None:
        # The result tree gets a summary: the index and bank grids are drawn in their own tabs, and
        # tens of thousands of tree rows make the tree slow (and crashed PySide in a test run).
        super().show_result(None if result is None else _tree_view(result))
        self._result = result                 # export writes the full result
        self._r = result
        self.operand_box.blockSignals(True)
        self.operand_box.clear()
        self.layout_box.blockSignals(True)
        self.layout_box.clear()
        if result is None:
            self.operand_box.blockSignals(False)
            self.layout_box.blockSignals(False)
            self.mgrid.set_grid(None)
            self.bank_view.set_layout(None, 8)
            self.footprint_view.set_layout(None, 8)
            self.reuse_plot.clear()
            self.util_plot.clear()
            return
        for g in result["m_grids"]:
            self.operand_box.addItem(f"M({g['operand']})")
        self.operand_box.blockSignals(False)
        v = result["verification"]
        stages = "; ".join(
            f"{st['name']}: p=({', '.join(f'{n}={s}' for n, s in st['parallel'])}) "
            f"a=({', '.join(f'{n}={s}' for n, s in st['accumulate'])}) {st['strategy']}" for st in result["transform"])
        self.transform_label.setText(
            f"{result['title']} - {stages}. Verification: max |R - direct| = {v['max_abs_diff']}, "
            f"ok = {v['ok']}")
        self._show_operand(0)
        self._show_tiling(result)
        b = result["banks"]
        for L in b["layouts"]:
            self.layout_box.addItem(L["layout"])
        self.layout_box.blockSignals(False)
        self._show_layout(0)
        _fill(self.bank_table, [[L["layout"], L["pitch"], L["padding_words"], L["extra_cycles"],
                                 L["conflicting_accesses"], _bf_text(L["butterfly"]),
                                 " ".join(L["butterfly"]["H"]), L["detail"]] for L in b["layouts"]])
        self._show_reuse(result["reuse"])
        self._show_utilisation(result["meritz"])

    def _show_operand(self, i: int) -> None:
        r = getattr(self, "_r", None)
        if not r or i < 0 or i >= len(r["m_grids"]):
            return
        g = r["m_grids"][i]
        self.mgrid.set_grid(g)
        st = next((st for st in r["transform"] if any(op["name"] == g["operand"] for op in st["operands"])),
                  r["transform"][-1])
        p_total = int(np.prod([n for _, n in st["parallel"]] or [1]))
        a_total = int(np.prod([n for _, n in st["accumulate"]] or [1]))
        self.hover_label.setText(
            f"Rows: p = ({', '.join(n for n, _ in st['parallel'])}), first {g['rows']} of {p_total}; columns: "
            f"a = ({', '.join(n for n, _ in st['accumulate'])}), first {g['cols']} of {a_total}. Equal colours "
            f"are copies of one element of {g['operand']}{tuple(g['shape'])}; grey = zero padding. "
            "Hover over an element to see its source.")

    def _show_tiling(self, r: dict[str, Any]) -> None:
        t = r["tiling"]
        self.tile_label.setText(
            f"Tile: p {t['tile']['parallel']}, a {t['tile']['accumulate']}. Footprint of "
            f"{r['banks']['operand']}: {tuple(r['banks']['footprint'])} (eq. 9); red: words the first warp reads "
            f"at one step.")
        naive = r["banks"]["layouts"][0]
        self.footprint_view.set_layout(naive, r["banks"]["banks"])
        _fill(self.loads_table, [[ld["operand"], str(tuple(t["footprints"][k])), ld["tiles"], ld["direct"],
                                  ld["unrolled"], ld["on_the_fly"], f"{100 * ld['saving_vs_direct']:.1f}%"]
                                 for ld, k in zip(t["loads"], t["footprints"])])

    def _show_layout(self, i: int) -> None:
        r = getattr(self, "_r", None)
        if not r or i < 0 or i >= len(r["banks"]["layouts"]):
            return
        L = r["banks"]["layouts"][i]
        self.bank_view.set_layout(L, r["banks"]["banks"])
        bf = L["butterfly"]
        self.layout_label.setText(
            f"{L['detail']}. Extra cycles {L['extra_cycles']} over {L['accesses']} warp accesses, padding "
            f"{L['padding_words']} words. Butterfly: H = {' '.join(bf['H'])}, "
            f"{'routable' if bf['butterfly_ok'] else 'not routable'}"
            + (" after XOR hash + rotation" if bf["non_square"] and bf["non_square"]["found"] else ""))

    def _show_reuse(self, reuse: dict[str, Any]) -> None:
        self.reuse_plot.clear()
        rows = reuse["rows"]
        xs = np.arange(len(rows))
        ys = np.array([max(row["rate"], 1e-3) for row in rows])
        colors = {"Systolic": PALETTE[0], "Eyeriss": PALETTE[3], "MERIT-z": PALETTE[2]}
        for arch in colors:
            idx = [i for i, row in enumerate(rows) if row["architecture"] == arch]
            if idx:
                bars = pg.BarGraphItem(x=xs[idx], height=ys[idx], width=0.6, brush=colors[arch], name=arch)
                self.reuse_plot.addItem(bars)
        paper = [(i, row["paper"]) for i, row in enumerate(rows) if row["paper"]]
        if paper:
            self.reuse_plot.plot([p[0] for p in paper], [p[1] for p in paper], pen=None, symbol="x",
                                 symbolSize=12, symbolPen="k", name="paper")
        for i, row in enumerate(rows):
            t = pg.TextItem(f"{row['rate']:.2f}", color="k", anchor=(0.5, 1))
            t.setPos(i, row["rate"] + 2)
            self.reuse_plot.addItem(t)
        self.reuse_plot.getAxis("bottom").setTicks(
            [[(i, f"{row['architecture']}: {row['level'].split(' (')[0].replace(' output tile', '')}")
              for i, row in enumerate(rows)]])

    def _show_utilisation(self, mz: dict[str, Any]) -> None:
        self.util_plot.clear()
        alus = mz["curve"]["alus"]
        for k, (name, ys) in enumerate(mz["curve"]["series"].items()):
            if alus:
                self.util_plot.plot(np.log2(alus), ys, name=name, symbol="o", symbolSize=5,
                                    pen=pg.mkPen(PALETTE[k % len(PALETTE)], width=2),
                                    symbolBrush=PALETTE[k % len(PALETTE)])
        if alus:
            self.util_plot.getAxis("bottom").setTicks([[(math.log2(a), str(a)) for a in alus]])
        _fill(self.util_table, [[s["name"], s["utilisation"], s["paper"], len(s["layers"])] for s in mz["suites"]])
        self._show_layers(0)

    def _show_layers(self, row: int) -> None:
        """Per-layer results of the workload picked in the utilisation table."""
        r = getattr(self, "_r", None)
        suites = r["meritz"]["suites"] if r else []
        if not 0 <= row < len(suites):
            _fill(self.layer_table, [])
            return
        _fill(self.layer_table, [[L["name"], L["utilisation"], L["cycles"], L["dram_bytes"], L["bound"],
                                  " ".join(f"{k}={v}" for k, v in L["tile"].items())] for L in suites[row]["layers"]])


PANEL = MeritPanel
