"""Panel of the MERIT engine: M(A)/M(B) as index grids (hover shows the source element), the tile and its
footprint, bank maps per layout with conflicts in red, reuse bars per architecture, utilisation
curves of the MERIT-z model (a layer picked there shows its tile in the tile view), and the C and CUDA
generated from the transform with their check against numpy and timings (Code tab). Everything redraws
from the typed result alone (core.merit.result.MeritResult); the settings widgets are bound to the project
by key (gui.binding)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, QSignalBlocker, Qt, Signal
from PySide6.QtGui import QColor, QFont, QImage, QPainter
from PySide6.QtWidgets import (QCheckBox, QComboBox, QFileDialog, QHBoxLayout, QLabel, QLineEdit, QPlainTextEdit,
                               QPushButton, QSpinBox, QSplitter, QTableWidget, QTableWidgetItem, QVBoxLayout,
                               QWidget)

from core.settings import Setting
from core.display import format_number
from core.engine import EngineSpec
from core.merit.engine import (ALUS_PER_TAU, MERITZ_ASSUMPTION_DEFAULTS, NETWORKS, cost_network, format_tile,
                               parse_alu_list, parse_tile)
from core.merit.result import BankLayout, Butterfly, Codegen, Meritz, MeritResult, MGrid, Reuse
from core.results import EngineResult, plain_parts
from gui.binding import Adapter, LineAdapter
from gui.panels.base import PanelContext
from gui.panels.generic import GenericPanel
from gui.plotting import PALETTE, LivePlot, new_plot

NO_LAYER_TEXT = "Pick a layer in the Utilisation tab to see its MERIT-z tile here."
NO_CODE_TEXT = ("No code generated for this run: tick 'Generate and check code' (C compiled with the system "
                "compiler and checked against numpy; CUDA run where nvcc and a GPU are present).")
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
        self.setMinimumSize(360, 160)       # the window fits a 1366x768 screen (issue 30)
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

    def _colors(self) -> np.ndarray:
        """The cells' RGB array, recomputed first if the data changed since."""
        if self._rgb is None:
            self.refresh()
        assert self._rgb is not None, "refresh() computes the colours whenever the grid has cells"
        return self._rgb

    def color(self, r: int, c: int) -> QColor:
        v = self._colors()[r, c]
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
        img = np.repeat(np.repeat(self._colors(), k, axis=0), k, axis=1).copy()
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
            p.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, self.empty_text)
            return
        x0, y0, s = self.cell_rect()
        k = int(s)
        arr = self.image(k)
        h, w = arr.shape[:2]
        qimg = QImage(arr.data, w, h, 3 * w, QImage.Format.Format_RGB888)
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
                        p.drawText(QRectF(x0 + c * k, y0 + r * k, k, k), Qt.AlignmentFlag.AlignCenter, text)


class MGridView(GridView):
    """A corner of M(operand): rows = flattened p, columns = flattened a; colour = source element."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.grid: MGrid | None = None

    def set_grid(self, grid: MGrid | None) -> None:
        self.grid = grid
        self.rows = grid.rows if grid else 0
        self.cols = grid.cols if grid else 0
        self.refresh()

    def source(self, r: int, c: int) -> tuple[int, ...]:
        if self.grid is None:
            return ()
        return tuple(int(ax[r][c]) for ax in self.grid.coords)

    def describe(self, r: int, c: int) -> str:
        g = self.grid
        if g is None:
            return ""
        return (f"M({g.operand})[p={tuple(g.p_labels[r])}, a={tuple(g.a_labels[c])}] = "
                f"{g.operand}{list(self.source(r, c))}")

    def rgb(self) -> np.ndarray:
        if self.grid is None:
            return super().rgb()
        shape = self.grid.shape
        coords = [np.asarray(ax, dtype=np.int64) for ax in self.grid.coords]
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
        self.layout_data: BankLayout | None = None
        self.banks = 8
        self.accessed: dict[tuple[int, int], bool] = {}

    def set_layout(self, layout: BankLayout | None, banks: int) -> None:
        self.layout_data, self.banks = layout, banks
        grid = layout.bank_grid if layout else []
        self.rows = len(grid)
        self.cols = len(grid[0]) if grid else 0
        self.accessed = {(r, c): bool(k) for r, c, k in (layout.shown_access if layout else [])}
        self.refresh()

    def rgb(self) -> np.ndarray:
        if self.layout_data is None:
            return super().rgb()
        g = np.asarray(self.layout_data.bank_grid, dtype=np.int64)
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
        if self.layout_data is None:
            return ""
        b = self.layout_data.bank_grid[r][c]
        return "" if b < 0 else str(b)

    def describe(self, r: int, c: int) -> str:
        if self.layout_data is None:
            return ""
        b = self.layout_data.bank_grid[r][c]
        pitch = self.layout_data.pitch
        what = "padding" if b < 0 else f"bank {b}"
        acc = (" - read by the shown warp" + (" (CONFLICT)" if self.accessed.get((r, c)) else "")
               if (r, c) in self.accessed else "")
        return f"address {r * pitch + c} (row {r}, column {c}): {what}{acc}"

    def conflict_cells(self) -> list[tuple[int, int]]:
        return [k for k, v in self.accessed.items() if v]


class TileAdapter(LineAdapter):
    """The tile as text (y=16,x=8), read by core's parse_tile: text it cannot read is marked on the
    widget with the reason, and the project keeps the last tile that could be read."""

    def read(self, w: QLineEdit, prop: Setting) -> Any:
        return parse_tile(w.text(), "tile")

    def write(self, w: QLineEdit, value: Any, prop: Setting) -> None:
        w.setText(format_tile(value or {}))


class NetworkAdapter(LineAdapter):
    """The network to cost, as typed: a zoo name or an .onnx file (core's cost_network); a name that is
    neither is marked on the widget with the reason, and the project keeps the last one taken."""

    def read(self, w: QLineEdit, prop: Setting) -> Any:
        return cost_network(w.text(), "cost_network")


class AluListAdapter(LineAdapter):
    """ALU counts as comma-separated text, read by core's parse_alu_list (multiples of a TAU)."""

    def read(self, w: QLineEdit, prop: Setting) -> Any:
        return parse_alu_list(w.text(), "curve_alus")

    def write(self, w: QLineEdit, value: Any, prop: Setting) -> None:
        w.setText(",".join(str(a) for a in value or []))


class CheckList(QWidget):
    """One check box per item of a list setting (the networks timed on MERIT-z), in a row."""

    changed = Signal()

    def __init__(self, items: list[str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.row = QHBoxLayout(self)
        self.row.setContentsMargins(0, 0, 0, 0)
        self.boxes: dict[str, QCheckBox] = {}
        self.order: list[str] = []          # the order of the value last shown, kept on read
        for item in items:
            self.add_item(item)

    def add_item(self, item: str) -> QCheckBox:
        box = QCheckBox(item)
        box.toggled.connect(lambda *_: self.changed.emit())
        self.row.addWidget(box)
        self.boxes[item] = box
        return box


class CheckListAdapter(Adapter):
    """A list of names as check boxes; a stored name without a box gets one (never dropped), and the
    stored order is kept."""

    def read(self, w: CheckList, prop: Setting) -> Any:
        checked = [n for n, b in w.boxes.items() if b.isChecked()]
        kept = [n for n in w.order if n in checked]
        return kept + [n for n in checked if n not in kept]

    def write(self, w: CheckList, value: Any, prop: Setting) -> None:
        for n in value:
            if n not in w.boxes:
                w.add_item(n)
        for n, b in w.boxes.items():
            b.setChecked(n in value)
        w.order = list(value)

    def signal(self, w: CheckList) -> Any:
        return w.changed


def _bf_text(bf: Butterfly | None) -> str:
    if bf is None or not bf.butterfly_ok:
        return "no"
    return "yes (after X, R)" if bf.non_square and bf.non_square.found else "yes"


def _scaled(v: float | None, factor: float) -> str:
    """A figure in the table's unit (4 significant digits); '-' when unknown."""
    return "-" if v is None else f"{v * factor:.4g}"


def _picker_row(title: str, on_pick: Callable[[int], object]) -> tuple[QHBoxLayout, QComboBox, QLabel]:
    """A row of `title`, a combo box that calls `on_pick` with the index picked, and a wrapping label
    beside it that takes the rest of the width (what the pick shows)."""
    row = QHBoxLayout()
    box = QComboBox()
    box.currentIndexChanged.connect(on_pick)
    row.addWidget(QLabel(title))
    row.addWidget(box)
    label = QLabel("")
    label.setWordWrap(True)
    row.addWidget(label, 1)
    return row, box, label


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


def _tree_view(result: MeritResult) -> dict[str, Any]:
    """The result's fields for the Result tree, typed, with what other tabs draw left out (the index
    and bank grids, the generated sources): tens of thousands of rows make the tree slow."""
    out = dict(plain_parts(result))
    out["m_grids"] = [{"operand": g.operand, "shape": g.shape, "rows": g.rows, "cols": g.cols} for g in result.m_grids]
    out["banks"] = {**plain_parts(result.banks),
                    "layouts": [{k: v for k, v in plain_parts(L).items() if k not in ("bank_grid", "shown_access")}
                                for L in result.banks.layouts]}
    if result.codegen is not None:              # the sources are in the Code tab
        cg = dict(plain_parts(result.codegen))
        for part in ("c", "cuda"):
            cg[part] = {**plain_parts(cg[part]),
                        "sources": {name: f"{len(text)} characters" for name, text in cg[part].sources.items()}}
        out["codegen"] = cg
    return out


NO_COST_TEXT = ("No network costed: name one above (a zoo network such as resnet18, or an .onnx file), pick the "
                "target and run. Each convolution becomes a MERIT transform; on this machine its generated C is "
                "measured, on the GPU it is modelled.")


class MeritPanel(GenericPanel):
    engine_name = "merit"

    def __init__(self, engine: EngineSpec, context: PanelContext, parent: QWidget | None = None) -> None:
        super().__init__(engine, context, parent)
        self._r: MeritResult | None = None
        self._suite = -1                      # the utilisation table's suite whose layers are listed
        b = self.binding
        self.tile_edit = b.bind("tile", QLineEdit(), TileAdapter())
        self.tile_edit.setPlaceholderText("default")
        self.banks_box = b.build("banks")
        self.alus_spin = b.build("alus", QSpinBox)
        self.alus_spin.setSingleStep(ALUS_PER_TAU)
        self.bw_spin = b.build("bandwidth_gbps")
        for key, w in (("tile", self.tile_edit), ("banks", self.banks_box), ("alus", self.alus_spin),
                       ("bandwidth_gbps", self.bw_spin)):
            self.controls.addWidget(b.label(key))
            self.controls.addWidget(w)
        self.net_checks = b.bind("networks", CheckList(NETWORKS), CheckListAdapter())
        self.table9_check = b.build("table_ix")
        self.controls.addWidget(self.net_checks)
        self.controls.addWidget(self.table9_check)
        self.curve_edit = b.bind("curve_alus", QLineEdit(), AluListAdapter())
        self.curve_edit.setMinimumWidth(180)
        self.seed_spin = b.build("seed")
        for key, w in (("curve_alus", self.curve_edit), ("seed", self.seed_spin)):
            self.controls.addWidget(b.label(key))
            self.controls.addWidget(w)
        self.codegen_check = b.build("codegen")
        self.controls.addWidget(self.codegen_check)
        # the MERIT-z model's assumptions (widgets from the settings schema)
        self.assumption_widgets = b.build_into(self.controls, list(MERITZ_ASSUMPTION_DEFAULTS))
        self.controls.addStretch(1)

        # M(A), M(B)
        mtab = QWidget()
        ml = QVBoxLayout(mtab)
        row, self.operand_box, self.transform_label = _picker_row("Operand", self._show_operand)
        ml.addLayout(row)
        self.mgrid = MGridView()
        self.hover_label = QLabel("Hover over an element to see which source element it copies.")
        self.hover_label.setWordWrap(True)          # a long legend must not widen the window (issue 30)
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
        split = QSplitter(Qt.Orientation.Vertical)
        self.footprint_view = BankView()
        self.footprint_view.empty_text = "Run the engine to see the tile's footprint"
        self.footprint_view.hovered.connect(self.tile_label.setToolTip)
        split.addWidget(self.footprint_view)
        self.loads_table = _table(["operand", "footprint (eq. 9)", "tiles", "direct", "unrolled", "on the fly",
                                   "saved"])
        tables = QSplitter(Qt.Orientation.Horizontal)         # the workload's loads | the layer picked in Utilisation
        tables.addWidget(self.loads_table)
        layer_box = QWidget()
        lbl = QVBoxLayout(layer_box)
        lbl.setContentsMargins(0, 0, 0, 0)
        self.layer_tile_label = QLabel(NO_LAYER_TEXT)
        self.layer_tile_label.setWordWrap(True)
        lbl.addWidget(self.layer_tile_label)
        self.layer_tile_table = _table(["operand", "footprint (eq. 9)", "words"])
        lbl.addWidget(self.layer_tile_table, 1)
        tables.addWidget(layer_box)
        split.addWidget(tables)
        tl.addWidget(split, 1)
        self.tile_tab = ttab
        self.tabs.addTab(ttab, "Tile and footprint")

        # banks
        btab = QWidget()
        bl = QVBoxLayout(btab)
        brow, self.layout_box, self.layout_label = _picker_row("Layout", self._show_layout)
        bl.addLayout(brow)
        bsplit = QSplitter(Qt.Orientation.Vertical)
        self.bank_view = BankView()
        self.bank_hover = QLabel("")
        self.bank_hover.setWordWrap(True)
        self.bank_view.hovered.connect(self.bank_hover.setText)
        bsplit.addWidget(self.bank_view)
        self.bank_table = _table(["layout", "pitch", "padding", "extra cycles", "conflicting accesses",
                                  "butterfly", "H", "detail"])
        bsplit.addWidget(self.bank_table)
        bl.addWidget(bsplit, 1)
        bl.addWidget(self.bank_hover)
        self.tabs.addTab(btab, "Banks")

        # reuse
        self.reuse_plot = new_plot(x_label="workload")
        self.reuse_plot.setTitle("Data reuse: MACs per input+output word (Table III)", color="k")
        self.reuse_plot.setLabel("left", "reuse rate")
        self.reuse_plot.addLegend(offset=(10, 10))
        self.tabs.addTab(self.reuse_plot, "Reuse")

        # utilisation
        utab = QWidget()
        ul = QVBoxLayout(utab)
        self.util_plot = new_plot()
        self.util_plot.setTitle("MERIT-z utilisation against ALU count (Fig. 15)", color="k")
        self.util_plot.setLabel("bottom", "ALUs (log2)")
        self.util_plot.setLabel("left", "utilisation")
        self.util_plot.showGrid(x=True, y=True, alpha=0.3)
        self.util_plot.addLegend(offset=(-10, 10))
        ul.addWidget(self.util_plot, 2)
        self.assumptions_label = QLabel("")
        self.assumptions_label.setWordWrap(True)
        self.assumptions_label.setToolTip("The MERIT-z model's assumptions this run used (settings above)")
        ul.addWidget(self.assumptions_label)
        self.util_table = _table(["workload", "utilisation", "paper", "layers"])
        self.layer_table = _table(["layer", "utilisation", "cycles", "DRAM bytes", "bound", "tile"])
        self.util_table.currentCellChanged.connect(lambda r, *_: self._show_layers(r))
        self.layer_table.currentCellChanged.connect(lambda r, *_: self._show_layer_tile(r))
        self.layer_table.cellDoubleClicked.connect(lambda *_: self.tabs.setCurrentWidget(self.tile_tab))
        self.layer_table.setToolTip("Pick a layer to see its MERIT-z tile in 'Tile and footprint' "
                                    "(double-click to go there)")
        tables = QSplitter(Qt.Orientation.Horizontal)
        tables.addWidget(self.util_table)
        tables.addWidget(self.layer_table)
        ul.addWidget(tables, 1)
        self.tabs.addTab(utab, "Utilisation")
        self._build_code_tab()
        self._build_cost_tab()
        for generic in (self._live_page, self.tree):    # the engine's own views first, the generic ones last
            self.tabs.tabBar().moveTab(self.tabs.indexOf(generic), self.tabs.count() - 1)
        self.tabs.setCurrentIndex(0)

    def _live_plot(self) -> LivePlot:
        plot = super()._live_plot()
        plot.setLabel("bottom", "ALUs")
        plot.setLabel("left", "utilisation")
        return plot

    def _build_code_tab(self) -> None:
        """The C and CUDA generated from the transform, the check against numpy and the timings."""
        ctab = QWidget()
        cl = QVBoxLayout(ctab)
        self.code_status = QLabel(NO_CODE_TEXT)
        self.code_status.setWordWrap(True)
        self.code_status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        cl.addWidget(self.code_status)
        self.code_table = _table(["code", "kernel", "median time", "vs naive", "max rel error", "note"])
        self.code_table.setMaximumHeight(170)
        cl.addWidget(self.code_table)
        row = QHBoxLayout()
        row.addWidget(QLabel("File"))
        self.code_file_box = QComboBox()
        self.code_file_box.currentIndexChanged.connect(self._show_code_file)
        row.addWidget(self.code_file_box, 1)
        self.code_save_button = QPushButton("Save sources...")
        self.code_save_button.setToolTip("Write the C and CUDA sources of this run to a folder")
        self.code_save_button.clicked.connect(lambda: self.save_sources())
        self.code_save_button.setEnabled(False)
        row.addWidget(self.code_save_button)
        self.emit_edit = self.binding.build("emit_dir")
        row.addWidget(self.binding.label("emit_dir"))
        row.addWidget(self.emit_edit)
        cl.addLayout(row)
        self.code_view = QPlainTextEdit()
        self.code_view.setReadOnly(True)
        self.code_view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        font = QFont("monospace")
        font.setStyleHint(QFont.StyleHint.Monospace)
        self.code_view.setFont(font)
        self.code_view.setPlaceholderText("Tick 'Generate and check code' and run to see the generated C and CUDA.")
        cl.addWidget(self.code_view, 1)
        self.code_tab = ctab
        self.tabs.addTab(ctab, "Code")

    def _build_cost_tab(self) -> None:
        """A network's every convolution as a MERIT transform, costed on a CPU or GPU target: time and
        off-chip bytes per layer beside their limits (core.merit.cost)."""
        tab = QWidget()
        tl = QVBoxLayout(tab)
        row = QHBoxLayout()
        net = self.binding.bind("cost_network", QLineEdit(), NetworkAdapter())
        net.setPlaceholderText("zoo name or .onnx (optional)")
        net.setMinimumWidth(220)
        row.addWidget(self.binding.label("cost_network"))
        row.addWidget(net)
        self.cost_widgets = {"cost_network": net, **self.binding.build_into(row, ["cost_target"])}
        row.addStretch(1)
        tl.addLayout(row)
        self.cost_status = QLabel(NO_COST_TEXT)
        self.cost_status.setWordWrap(True)
        self.cost_status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        tl.addWidget(self.cost_status)
        self.cost_table = _table(["layer", "MACs", "time (ms)", "time limit (ms)", "x limit", "time is",
                                  "off-chip (MB)", "off-chip limit (MB)", "how"])
        tl.addWidget(self.cost_table, 1)
        self.tabs.addTab(tab, "Cost")

    def _show_cost(self, r: MeritResult | None) -> None:
        c = None if r is None else r.cost
        if c is None:
            self.cost_status.setText(NO_COST_TEXT)
            _fill(self.cost_table, [])
            return
        rec, t = c.record, c.record.total
        self.cost_status.setText(
            f"{c.network} on {rec.target}: {t.macs / 1e9:.3g} G MACs, time {_scaled(t.time_s.value, 1e3)} ms "
            f"(limit {_scaled(t.time_s.limit, 1e3)} ms, {t.time_s.how}), off-chip "
            f"{_scaled(t.offchip_bytes.value, 1e-6)} MB (limit {_scaled(t.offchip_bytes.limit, 1e-6)} MB). "
            "No energy model for this target." + (f" {c.gpu_note}." if c.gpu_note else ""))
        _fill(self.cost_table, [
            [L.name, L.macs, _scaled(L.time_s.value, 1e3), _scaled(L.time_s.limit, 1e3), L.time_s.of_limit,
             L.time_s.how, _scaled(L.offchip_bytes.value, 1e-6), _scaled(L.offchip_bytes.limit, 1e-6), n.how]
            for L, n in zip(rec.layers, c.notes)])

    def _code_sources(self) -> dict[str, str]:
        cg = None if self._r is None else self._r.codegen
        return {} if cg is None else {**cg.c.sources, **cg.cuda.sources}

    def _show_codegen(self, cg: Codegen | None) -> None:
        with QSignalBlocker(self.code_file_box):
            self.code_file_box.clear()
            for name in self._code_sources():
                self.code_file_box.addItem(name)
        self.code_save_button.setEnabled(bool(cg))
        if not cg:
            self.code_status.setText(NO_CODE_TEXT)
            _fill(self.code_table, [])
            self.code_view.setPlainText("")
            return
        c, cu = cg.c, cg.cuda
        em = cu.emulated_check
        err = c.max_rel_error
        emerr = em.max_rel_error if em else None
        self.code_status.setText(
            f"C ({' '.join(c.flags)}, {c.threads or '-'} threads): "
            + ("verified" if c.verified else "NOT verified")
            + (f", max relative error {err:.2e}" if err is not None else "")
            + (f" ({c.message})" if c.message else "")
            + f". Measure: {c.error_measure}, tolerance {c.tolerance:g}.\n"
            + "CUDA: " + ("verified on the GPU" if cu.verified else "not verified")
            + (f" ({cu.message})" if cu.message else "")
            + ("" if em is None else "; CPU emulation of its blocks: "
               + ("ok" if em.ok else "not ok") + (f", max relative error {emerr:.2e}" if emerr is not None else "")
               + (f" ({em.message})" if em.message else ""))
            + (f". Written to {len(cg.emitted)} files." if cg.emitted else ""))
        t = c.timings_s
        errors = c.errors or {}
        notes = {k.variant: k.note for k in c.kernels}
        rows: list[list[Any]] = []
        for v, secs in t.items():
            naive = t.get("naive")
            rows.append(["C" if v != "numpy" else "numpy", v + (" (best)" if v == c.best else ""),
                         f"{secs * 1e3:.4g} ms", f"{naive / secs:.3g}x" if naive and secs else "",
                         f"{errors[v]:.2e}" if v in errors else "", notes.get(v, "direct numpy reference")])
        for k in cu.kernels:
            cuda_s = cu.timings_s.get("cuda")
            rows.append(["CUDA", k.function, f"{cuda_s * 1e3:.4g} ms" if cuda_s else "not run", "",
                         f"{cu.max_rel_error:.2e}" if cu.max_rel_error is not None else
                         (f"{emerr:.2e} (emulated)" if emerr is not None else ""),
                         f"{k.blocks} blocks x {k.threads} threads, {k.smem_bytes} B shared; {k.layout}"])
        _fill(self.code_table, rows)
        self._show_code_file(0)

    def _show_code_file(self, i: int) -> None:
        sources = self._code_sources()
        names = list(sources)
        self.code_view.setPlainText(sources[names[i]] if 0 <= i < len(names) else "")

    def save_sources(self, folder: str | None = None) -> list[str]:
        """Write this run's generated sources to `folder` (asked for when None); returns the paths."""
        sources = self._code_sources()
        if not sources:
            return []
        if folder is None:
            folder = QFileDialog.getExistingDirectory(self, "Save the generated sources to")
            if not folder:
                return []
        written = []
        try:
            Path(folder).mkdir(parents=True, exist_ok=True)
            for name, text in sources.items():
                (Path(folder) / name).write_text(text)
                written.append(str(Path(folder) / name))
        except OSError as exc:
            self.context.log(f"cannot write the sources to {folder}: {exc}", "error")
            return written
        self.context.status(f"wrote {len(written)} source files to {folder}")
        return written

    # ---------------------------------------------------------------- results
    def tree_data(self, result: EngineResult) -> dict[str, Any]:
        # The result tree gets a summary: the index and bank grids are drawn in their own tabs, and
        # tens of thousands of tree rows make the tree slow (and crashed PySide in a test run).
        assert isinstance(result, MeritResult)
        return _tree_view(result)

    def show_result(self, result: EngineResult | None) -> None:
        super().show_result(result)           # export writes the full result
        assert result is None or isinstance(result, MeritResult)
        self._r = result
        with QSignalBlocker(self.operand_box), QSignalBlocker(self.layout_box):
            self.operand_box.clear()
            self.layout_box.clear()
            if result is not None:
                for g in result.m_grids:
                    self.operand_box.addItem(f"M({g.operand})")
                for L in result.banks.layouts:
                    self.layout_box.addItem(L.layout)
        self._show_codegen(None if result is None else result.codegen)
        self._show_cost(result)
        if result is None:
            self.mgrid.set_grid(None)
            self.bank_view.set_layout(None, 8)
            self.footprint_view.set_layout(None, 8)
            self.reuse_plot.clear()
            self.util_plot.clear()
            _fill(self.util_table, [])
            self._show_layers(-1)
            return
        v = result.verification
        stages = "; ".join(
            f"{st.name}: p=({', '.join(f'{n}={s}' for n, s in st.parallel)}) "
            f"a=({', '.join(f'{n}={s}' for n, s in st.accumulate)}) {st.strategy}" for st in result.transform)
        self.transform_label.setText(
            f"{result.title} - {stages}. Verification: max |R - direct| = {format_number(v.max_abs_diff)}, "
            f"{'checked' if v.ok else 'FAILED'}")
        self._show_operand(0)
        self._show_tiling(result)
        b = result.banks
        self._show_layout(0)
        _fill(self.bank_table, [[L.layout, L.pitch, L.padding_words, L.extra_cycles, L.conflicting_accesses,
                                 _bf_text(L.butterfly), " ".join(L.butterfly.H) if L.butterfly else "", L.detail]
                                for L in b.layouts])
        self._show_reuse(result.reuse)
        self._show_utilisation(result.meritz)

    def _show_operand(self, i: int) -> None:
        r = self._r
        if r is None or i < 0 or i >= len(r.m_grids):
            return
        g = r.m_grids[i]
        self.mgrid.set_grid(g)
        st = next((st for st in r.transform if any(op.name == g.operand for op in st.operands)), r.transform[-1])
        p_total = int(np.prod([n for _, n in st.parallel] or [1]))
        a_total = int(np.prod([n for _, n in st.accumulate] or [1]))
        self.hover_label.setText(
            f"Rows: p = ({', '.join(n for n, _ in st.parallel)}), first {g.rows} of {p_total}; columns: "
            f"a = ({', '.join(n for n, _ in st.accumulate)}), first {g.cols} of {a_total}. Equal colours "
            f"are copies of one element of {g.operand}{tuple(g.shape)}; grey = zero padding. "
            "Hover over an element to see its source.")

    def _show_tiling(self, r: MeritResult) -> None:
        t = r.tiling
        self.tile_label.setText(
            f"Tile: p {t.tile.parallel}, a {t.tile.accumulate}. Footprint of "
            f"{r.banks.operand}: {tuple(r.banks.footprint)} (eq. 9); red: words the first warp reads "
            f"at one step.")
        naive = r.banks.layouts[0]
        self.footprint_view.set_layout(naive, r.banks.banks)
        _fill(self.loads_table, [[ld.operand, str(tuple(t.footprints[k])), ld.tiles, ld.direct,
                                  ld.unrolled, ld.on_the_fly, f"{100 * ld.saving_vs_direct:.1f}%"]
                                 for ld, k in zip(t.loads, t.footprints)])

    def _show_layout(self, i: int) -> None:
        r = self._r
        if r is None or i < 0 or i >= len(r.banks.layouts):
            return
        L = r.banks.layouts[i]
        self.bank_view.set_layout(L, r.banks.banks)
        bf = L.butterfly
        routing = ("no butterfly test" if bf is None else
                   f"H = {' '.join(bf.H)}, {'routable' if bf.butterfly_ok else 'not routable'}"
                   + (" after XOR hash + rotation" if bf.non_square and bf.non_square.found else ""))
        self.layout_label.setText(
            f"{L.detail}. Extra cycles {L.extra_cycles} over {L.accesses} warp accesses, padding "
            f"{L.padding_words} words. Butterfly: {routing}")

    def _show_reuse(self, reuse: Reuse) -> None:
        self.reuse_plot.clear()
        rows = reuse.rows
        xs = np.arange(len(rows))
        ys = np.array([max(row.rate, 1e-3) for row in rows])
        colors = {"Systolic": PALETTE[0], "Eyeriss": PALETTE[3], "MERIT-z": PALETTE[2]}
        for arch in colors:
            idx = [i for i, row in enumerate(rows) if row.architecture == arch]
            if idx:
                bars = pg.BarGraphItem(x=xs[idx], height=ys[idx], width=0.6, brush=colors[arch], name=arch)
                self.reuse_plot.addItem(bars)
        paper = [(i, row.paper) for i, row in enumerate(rows) if row.paper]
        if paper:
            self.reuse_plot.plot([p[0] for p in paper], [p[1] for p in paper], pen=None, symbol="x",
                                 symbolSize=12, symbolPen="k", name="paper")
        for i, row in enumerate(rows):
            t = pg.TextItem(f"{row.rate:.2f}", color="k", anchor=(0.5, 1))
            t.setPos(i, row.rate + 2)
            self.reuse_plot.addItem(t)
        self.reuse_plot.getAxis("bottom").setTicks(
            [[(i, f"{row.architecture}: {row.level.split(' (')[0].replace(' output tile', '')}")
              for i, row in enumerate(rows)]])

    def _show_utilisation(self, mz: Meritz) -> None:
        self.util_plot.clear()
        alus = mz.curve.alus
        for k, (name, ys) in enumerate(mz.curve.series.items()):
            if alus:
                self.util_plot.plot(np.log2(alus), ys, name=name, symbol="o", symbolSize=5,
                                    pen=pg.mkPen(PALETTE[k % len(PALETTE)], width=2),
                                    symbolBrush=PALETTE[k % len(PALETTE)])
        if alus:
            self.util_plot.getAxis("bottom").setTicks([[(math.log2(a), str(a)) for a in alus]])
        used = mz.assumptions.summary
        self.assumptions_label.setText(f"Assumptions used: {used}" if used else "")
        _fill(self.util_table, [[s.name, s.utilisation, s.paper, len(s.layers)] for s in mz.suites])
        self._show_layers(0)

    def _show_layers(self, row: int) -> None:
        """Per-layer results of the workload picked in the utilisation table."""
        r = self._r
        suites = r.meritz.suites if r else []
        self._suite = row if 0 <= row < len(suites) else -1
        with QSignalBlocker(self.layer_table):
            self.layer_table.setCurrentCell(-1, -1)
            if self._suite < 0:
                _fill(self.layer_table, [])
            else:
                _fill(self.layer_table, [[L.name, L.utilisation, L.cycles, L.dram_bytes, L.bound, format_tile(L.tile)]
                                         for L in suites[row].layers])
        self._show_layer_tile(-1)

    def _show_layer_tile(self, row: int) -> None:
        """The tile of the layer picked in the utilisation tab, in the tile view: its extents split into
        parallel and accumulated indices, and each operand's footprint as the engine computed it."""
        r = self._r
        suite = r.meritz.suites[self._suite] if r and self._suite >= 0 else None
        if suite is None or not 0 <= row < len(suite.layers):
            self.layer_tile_label.setText(NO_LAYER_TEXT)
            _fill(self.layer_tile_table, [])
            return
        L = suite.layers[row]
        parallel = L.parallel
        if parallel is None:
            tile_text = format_tile(L.tile)
        else:
            p = ", ".join(f"{k}={v}" for k, v in L.tile.items() if k in parallel)
            a = ", ".join(f"{k}={v}" for k, v in L.tile.items() if k not in parallel)
            tile_text = f"p ({p}), a ({a or '-'})"
        fps = L.footprints
        self.layer_tile_label.setText(
            f"MERIT-z tile of {suite.name} / {L.name}: {tile_text}."
            + (" Footprints per operand (eq. 9, clipped to the padded tensor) below." if fps is not None else
               " This run's result predates per-layer footprints: run it again to see them."))
        _fill(self.layer_tile_table, [[k.split(":", 1)[-1], " x ".join(map(str, fp)), int(np.prod(fp))]
                                      for k, fp in (fps or {}).items()])


PANEL = MeritPanel
