"""Panel of the Cappuccino engine: layer table, OLP thread picture, map-major layout picture,
accuracy of every configuration tried and the speedup bars. Everything redraws from the result.
The network (a CNN workload) and the SoC are the tab's library choices; the search and timing
settings are bound to the project by key (gui.binding)."""

from __future__ import annotations

from typing import Any

import numpy as np
from PySide6.QtCore import QRectF, QSignalBlocker, Qt
from PySide6.QtGui import QColor, QFont, QPainter, QPen
from PySide6.QtWidgets import (QCheckBox, QComboBox, QHBoxLayout, QLabel, QPushButton, QSpinBox, QTableWidget,
                               QTableWidgetItem, QVBoxLayout, QWidget)

from core.cappuccino import layout
from core.cappuccino.result import CappuccinoResult, LayerRow
from core.engine import EngineSpec
from core.project import Run
from core.results import EngineResult
from gui.panels.base import PanelContext
from gui.panels.generic import GenericPanel
from gui.plotting import PALETTE, ask_export_table

TABLE_COLUMNS = ["layer", "kind", "output", "parallelism", "OLP threads", "KLP threads", "FLP threads",
                 "KLP reduction adds", "FLP reduction adds", "OLP weight reuse", "mode", "accuracy %"]
MODE_COLORS = {"precise": "#1f77b4", "relaxed": "#2ca02c", "imprecise": "#ff7f0e"}
SPEED_KEYS = [("baseline", "baseline"), ("parallel", "parallel"), ("parallel_inexact", "parallel+inexact")]
RATIO_KEYS = [("parallel", "precise"), ("relaxed", "relaxed"), ("imprecise", "imprecise"),
              ("parallel_inexact", "chosen")]
PROGRAM_COLUMNS = ["program", "µs / image", "median µs", "÷ onnxruntime", "max abs error", "max rel error",
                   "rel error vs onnxruntime", "classes as numpy", "C lines", "C size", "weight file", "build s"]


def _qcolor(i: int, alpha: int = 255) -> QColor:
    c = QColor(PALETTE[i % len(PALETTE)])
    c.setAlpha(alpha)
    return c


class ThreadView(QWidget):
    """Output maps of one layer; each pixel coloured by the hardware thread that computes it."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setMinimumSize(420, 260)
        self.owner: np.ndarray | None = None       # (M, H, W) worker ids
        self.tid: np.ndarray | None = None         # (M, H, W) OLP thread id (equations 3-5 inverted)
        self.title = ""
        self.show_ids = False

    def set_layer(self, row: LayerRow | None, V: int, threads: int) -> None:
        if row is None:
            self.owner = None
        else:
            m, h, w = row.out_shape
            self.owner = layout.worker_of_outputs(m, h, w, V, threads)
            mm, rr, cc = np.meshgrid(np.arange(m), np.arange(h), np.arange(w), indexing="ij")
            self.tid = layout.address_map_major(mm, rr, cc, h, w, V)
            self.title = (f"{row.name}: {m} maps of {h}x{w}, {row.olp_threads} OLP threads "
                          f"(map-major ids, V={V}) split over {threads} hardware threads")
        self.update()

    def paintEvent(self, event: Any) -> None:   # noqa: N802 (Qt name)
        p = QPainter(self)
        p.fillRect(self.rect(), QColor("white"))
        if self.owner is None:
            p.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter,
                       "Run the engine to see which thread computes which pixels")
            return
        assert self.tid is not None, "set_layer sets the thread ids with the owners"
        p.setPen(QColor("black"))
        p.drawText(QRectF(6, 2, self.width() - 12, 18), Qt.AlignmentFlag.AlignLeft, self.title)
        m, h, w = self.owner.shape
        shown = min(m, 64) if not self.show_ids else min(m, 8)
        cols = max(1, int(np.ceil(np.sqrt(shown * (self.width() / max(1, self.height() - 50))))))
        rows = -(-shown // cols)
        cell = max(1.0, min((self.width() - 12) / (cols * (w + 1)), (self.height() - 66) / (rows * (h + 1))))
        for k in range(shown):
            ox = 6 + (k % cols) * (w + 1) * cell
            oy = (40 if self.show_ids else 24) + (k // cols) * (h + 1) * cell
            for r in range(h):
                for c in range(w):
                    rect = QRectF(ox + c * cell, oy + r * cell, cell, cell)
                    p.fillRect(rect, _qcolor(int(self.owner[k, r, c]), 200))
                    if self.show_ids and cell >= 16:
                        p.setPen(QColor("black"))
                        p.drawText(rect, Qt.AlignmentFlag.AlignCenter, str(int(self.tid[k, r, c])))
            p.setPen(QPen(QColor("black"), 0.5))
            p.drawRect(QRectF(ox, oy, w * cell, h * cell))
            if cell * w > 14 and not self.show_ids:
                p.drawText(QRectF(ox, oy, w * cell, h * cell), Qt.AlignmentFlag.AlignCenter, str(k))
            elif self.show_ids:
                p.drawText(QRectF(ox, oy - 14, w * cell, 14), Qt.AlignmentFlag.AlignLeft, f"map {k}")
        threads = int(self.owner.max()) + 1
        for t in range(threads):
            x = 6 + t * 110
            p.fillRect(QRectF(x, self.height() - 20, 14, 14), _qcolor(t, 200))
            p.setPen(QColor("black"))
            p.drawText(QRectF(x + 18, self.height() - 22, 90, 18), Qt.AlignmentFlag.AlignLeft, f"thread {t}")
        if shown < m:
            p.drawText(QRectF(0, self.height() - 22, self.width() - 6, 18), Qt.AlignmentFlag.AlignRight,
                       f"first {shown} of {m} maps")


class LayoutView(QWidget):
    """Memory order before (row-major) and after (map-major) reordering, cells coloured by map."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setMinimumSize(420, 260)
        self.example: dict[str, Any] | None = None

    def set_example(self, maps: int, h: int, w: int, V: int, what: str) -> None:
        maps, h, w = min(maps, 2 * V), min(h, 3), min(w, 3)
        ex = layout.layout_example(maps, h, w, V)
        self.example = {"maps": maps, "h": h, "w": w, "V": V, "what": what,
                        "orders": {k: self._order(np.asarray(v)) for k, v in ex.items()}}
        self.update()

    @staticmethod
    def _order(addr: np.ndarray) -> list[tuple[int, int, int]]:
        """(map, row, col) of each memory address in turn."""
        idx = np.argsort(addr.ravel(), kind="stable")
        return [(int(m), int(r), int(c)) for m, r, c in (np.unravel_index(i, addr.shape) for i in idx)]

    def paintEvent(self, event: Any) -> None:   # noqa: N802
        p = QPainter(self)
        p.fillRect(self.rect(), QColor("white"))
        if not self.example:
            p.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, "Run the engine to see the map-major layout")
            return
        ex = self.example
        n = ex["maps"] * ex["h"] * ex["w"]
        per_line = min(n, ex["V"] * ex["w"] * 2)
        lines = -(-n // per_line)
        cell = max(8.0, min((self.width() - 20) / per_line, (self.height() - 60) / (2 * lines + 2)))
        font = QFont()
        font.setPointSizeF(max(5.0, cell / 4.2))
        y = 4.0
        for key, label in (("row_major", "before: row-major (map, row, col) in memory order"),
                           ("map_major", f"after: map-major, V={ex['V']} ({ex['what']})")):
            p.setFont(QFont())
            p.setPen(QColor("black"))
            p.drawText(QRectF(8, y, self.width(), 18), Qt.AlignmentFlag.AlignLeft, label)
            y += 20
            p.setFont(font)
            for i, (m, r, c) in enumerate(ex["orders"][key]):
                rect = QRectF(8 + (i % per_line) * cell, y + (i // per_line) * cell, cell - 1, cell - 1)
                p.fillRect(rect, _qcolor(m, 170))
                if cell >= 18:
                    p.drawText(rect, Qt.AlignmentFlag.AlignCenter, f"{m}{r}{c}")
            y += lines * cell + 10


class AccuracyChart(QWidget):
    """Validation accuracy of every configuration tried (green: within the budget, red: not), the
    budget floor dashed and the chosen configuration ringed. Plain QPainter: no pyqtgraph scene."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setMinimumSize(420, 240)
        self.points: list[tuple[int, float, bool]] = []
        self.floor: float | None = None
        self.chosen: int | None = None

    def set_data(self, points: list[tuple[int, float, bool]], floor: float | None, chosen: int | None) -> None:
        self.points, self.floor, self.chosen = points, floor, chosen
        self.update()

    def paintEvent(self, event: Any) -> None:   # noqa: N802
        p = QPainter(self)
        p.fillRect(self.rect(), QColor("white"))
        if not self.points:
            p.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter,
                       "Run the engine to see the accuracy of every configuration")
            return
        left, top, right, bottom = 60, 28, self.width() - 16, self.height() - 36
        ys = [y for _, y, _ in self.points] + ([self.floor] if self.floor is not None else [])
        lo, hi = min(ys), max(ys)
        pad = max(0.5, 0.1 * (hi - lo))
        lo, hi = lo - pad, hi + pad
        n = max(1, len(self.points) - 1)
        fx = lambda x: left + (right - left) * x / n
        fy = lambda y: bottom - (bottom - top) * (y - lo) / (hi - lo)
        p.setPen(QColor("black"))
        p.drawText(QRectF(0, 4, self.width(), 20), Qt.AlignmentFlag.AlignCenter,
                   "Validation accuracy of every configuration tried")
        p.drawLine(left, bottom, right, bottom)
        p.drawLine(left, top, left, bottom)
        for k in range(5):
            y = lo + (hi - lo) * k / 4
            p.drawText(QRectF(0, fy(y) - 8, left - 6, 16), Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                       f"{y:.2f}")
        p.drawText(QRectF(left, bottom + 14, right - left, 18), Qt.AlignmentFlag.AlignCenter,
                   "configuration (accuracy %)")
        if self.floor is not None:
            p.setPen(QPen(QColor("#7f7f7f"), 1, Qt.PenStyle.DashLine))
            p.drawLine(int(left), int(fy(self.floor)), int(right), int(fy(self.floor)))
            p.drawText(QRectF(left + 4, fy(self.floor) - 18, 240, 16), Qt.AlignmentFlag.AlignLeft,
                       f"budget floor {self.floor:.2f} %")
        for x, y, ok in self.points:
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(QColor("#2ca02c" if ok else "#d62728"))
            p.drawEllipse(QRectF(fx(x) - 4, fy(y) - 4, 8, 8))
            if x == self.chosen:
                p.setBrush(Qt.BrushStyle.NoBrush)
                p.setPen(QPen(QColor("#ffbf00"), 3))
                p.drawEllipse(QRectF(fx(x) - 9, fy(y) - 9, 18, 18))
        for k in range(0, len(self.points), max(1, len(self.points) // 10)):
            p.setPen(QColor("black"))
            p.drawText(QRectF(fx(k) - 15, bottom + 2, 30, 14), Qt.AlignmentFlag.AlignCenter, str(k))


class SpeedChart(QWidget):
    """Bars: the speedups over the naive baseline (small chains), or each program's median time
    divided by onnxruntime's (networks without a baseline, when onnxruntime ran)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setMinimumSize(420, 240)
        self.values: list[float] = []
        self.labels: list[str] = [label for _, label in SPEED_KEYS]
        self.title = "Speedup over the naive single-thread baseline"
        self.message = ""

    def set_data(self, values: list[float], message: str = "", labels: list[str] | None = None,
                 title: str | None = None) -> None:
        self.values, self.message = values, message
        self.labels = labels or [label for _, label in SPEED_KEYS]
        self.title = title or "Speedup over the naive single-thread baseline"
        self.update()

    def paintEvent(self, event: Any) -> None:   # noqa: N802
        p = QPainter(self)
        p.fillRect(self.rect(), QColor("white"))
        if not self.values:
            p.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap,
                       self.message or "Run the engine to see the speedups")
            return
        left, top, right, bottom = 50, 30, self.width() - 16, self.height() - 30
        top_v = max(self.values) * 1.15
        p.setPen(QColor("black"))
        p.drawText(QRectF(0, 4, self.width(), 20), Qt.AlignmentFlag.AlignCenter, self.title)
        p.drawLine(left, bottom, right, bottom)
        slot = (right - left) / len(self.values)
        colors = ["#7f7f7f", "#1f77b4", "#2ca02c"]
        for i, v in enumerate(self.values):
            h = (bottom - top) * v / top_v
            rect = QRectF(left + slot * (i + 0.2), bottom - h, slot * 0.6, h)
            p.fillRect(rect, QColor(colors[i % len(colors)]))
            p.setPen(QColor("black"))
            p.drawText(QRectF(rect.left(), rect.top() - 18, rect.width(), 16), Qt.AlignmentFlag.AlignCenter,
                       f"{v:.1f}x")
            p.drawText(QRectF(left + slot * i, bottom + 4, slot, 18), Qt.AlignmentFlag.AlignCenter,
                       self.labels[i] if i < len(self.labels) else "")


class CappuccinoPanel(GenericPanel):
    engine_name = "cappuccino"

    def __init__(self, engine: EngineSpec, context: PanelContext, parent: QWidget | None = None) -> None:
        super().__init__(engine, context, parent)
        self.typed: CappuccinoResult | None = None           # the result shown
        b = self.binding
        self.budget = b.build("accuracy_budget")
        self.prefer = b.build("prefer")
        self.compile_box = b.build("compile")
        self.split_box = b.build("measure_split")           # issue 35: thread split from measured cost
        self.int8_box = b.build("int8")                     # issue 35: opt-in 8-bit integer layers
        self.emit_edit = b.build("emit_dir")
        self.emit_edit.setMinimumWidth(180)
        self.repeats_spin = b.build("repeats")
        self.min_seconds_spin = b.build("min_seconds")
        self.limit_spin = b.build("limit", QSpinBox)
        self.limit_spin.setSpecialValueText("all")           # 0: every validation image
        self.sample_spin = b.build("search_sample", QSpinBox)
        self.sample_spin.setSpecialValueText("auto")         # 0: every image unless the network is big
        for key, w in (("accuracy_budget", self.budget), ("prefer", self.prefer), ("int8", self.int8_box),
                       ("compile", self.compile_box), ("measure_split", self.split_box),
                       ("emit_dir", self.emit_edit), ("repeats", self.repeats_spin),
                       ("min_seconds", self.min_seconds_spin), ("limit", self.limit_spin),
                       ("search_sample", self.sample_spin)):
            if key not in ("prefer", "int8", "compile", "measure_split", "emit_dir"):
                self.controls.addWidget(b.label(key))
            self.controls.addWidget(w)

        # layer table
        tab = QWidget()
        v = QVBoxLayout(tab)
        self.table = QTableWidget(0, len(TABLE_COLUMNS))
        self.table.setHorizontalHeaderLabels(TABLE_COLUMNS)
        self.table.resizeColumnsToContents()            # the headers readable before the first run
        v.addWidget(self.table)
        row = QHBoxLayout()
        self.export_table_button = QPushButton("Export table…")
        self.export_table_button.clicked.connect(lambda: ask_export_table(self, self.table, "cappuccino-layers"))
        self.message = QLabel("")
        self.message.setWordWrap(True)
        row.addWidget(self.message, 1)
        row.addWidget(self.export_table_button)
        v.addLayout(row)
        self.tabs.insertTab(0, tab, "Layers")

        # threads picture
        tab = QWidget()
        v = QVBoxLayout(tab)
        self.thread_layer = QComboBox()
        self.thread_layer.currentIndexChanged.connect(self._show_threads)
        self.ids_box = QCheckBox("show OLP thread ids t (first maps)")
        self.ids_box.toggled.connect(self._toggle_ids)
        top = QHBoxLayout()
        top.addWidget(self.thread_layer, 1)
        top.addWidget(self.ids_box)
        v.addLayout(top)
        self.thread_view = ThreadView()
        v.addWidget(self.thread_view, 1)
        self.tabs.insertTab(1, tab, "Threads")

        self.layout_view = LayoutView()
        self.tabs.insertTab(2, self.layout_view, "Map-major layout")

        self.accuracy_chart = AccuracyChart()
        self.tabs.insertTab(3, self.accuracy_chart, "Accuracy")
        self.speed_chart = SpeedChart()
        self.tabs.insertTab(4, self.speed_chart, "Speedup")
        self.speed_values: list[float] = []

        # the synthesised programs: time, ratio to onnxruntime, errors, source and weight file sizes
        tab = QWidget()
        v = QVBoxLayout(tab)
        # said above the figures when other work ran while they were timed (issue 49)
        self.timing_warning = QLabel("")
        self.timing_warning.setWordWrap(True)
        self.timing_warning.setStyleSheet("color: #c0392b; font-weight: bold")
        self.timing_warning.setVisible(False)
        v.addWidget(self.timing_warning)
        self.programs = QTableWidget(0, len(PROGRAM_COLUMNS))
        self.programs.setHorizontalHeaderLabels(PROGRAM_COLUMNS)
        self.programs.resizeColumnsToContents()
        v.addWidget(self.programs, 1)
        self.programs_note = QLabel("")
        self.programs_note.setWordWrap(True)
        v.addWidget(self.programs_note)
        self.tabs.insertTab(5, tab, "Programs")
        self.tabs.setCurrentIndex(0)

    # ------------------------------------------------------------------ results
    def job_started(self) -> None:
        super().job_started()
        self.message.setText("running…")

    def show_run(self, run: Run | None, **focus: Any) -> None:
        """A run that ended without a result says how it ended, never "running…" (issue 30)."""
        super().show_run(run, **focus)
        if run is None:
            self.message.setText("No run yet: press Run to synthesise.")
        elif run.result is None and run.status != "running":
            self.message.setText(f"{run.id} failed: {run.error or 'no reason given'}" if run.status == "failed"
                                 else f"{run.id} was cancelled before its result.")

    def show_result(self, result: EngineResult | None) -> None:
        super().show_result(result)
        assert result is None or isinstance(result, CappuccinoResult)
        self.typed = result
        self.table.setRowCount(0)
        self.accuracy_chart.set_data([], None, None)
        self.speed_chart.set_data([])
        self.speed_values = []
        self.programs.setRowCount(0)
        self.programs_note.setText("")
        load = result.synthesis.load if result is not None and result.synthesis.programs else None
        warning = load.warning() if load is not None else None
        self.timing_warning.setText(f"Timings unreliable: {warning}." if warning else "")
        self.timing_warning.setVisible(bool(warning))
        with QSignalBlocker(self.thread_layer):
            self.thread_layer.clear()
            for row in result.layers if result is not None else []:
                self.thread_layer.addItem(f"{row.name} ({row.kind})")
        if result is None:
            self.thread_view.set_layer(None, 4, 1)
            self.layout_view.example = None
            self.layout_view.update()
            self.message.setText("")
            return
        self._fill_table(result)
        self.message.setText(result.summary)
        self._show_threads()
        V = result.target.vector_width
        first = result.layers[0]
        in_maps = max(first.out_shape[0], V + 1)
        self.layout_view.set_example(in_maps, first.out_shape[1], first.out_shape[2], V,
                                     f"{first.name} output, as the next layer reads it")
        self._draw_accuracy(result)
        self._draw_speed(result)
        self._fill_programs(result)

    def _fill_table(self, r: CappuccinoResult) -> None:
        rows = r.layers
        self.table.setRowCount(len(rows))
        for i, row in enumerate(rows):
            st = {s.name: s for s in row.strategies}
            klp, flp = st.get("KLP"), st.get("FLP")
            acc = "" if row.accuracy is None else f"{row.accuracy:.2f}"
            vals = [row.name, row.kind, "x".join(map(str, row.out_shape)), row.parallelism,
                    row.olp_threads, "" if klp is None else klp.threads, "" if flp is None else flp.threads,
                    "" if klp is None else klp.reduction_adds, "" if flp is None else flp.reduction_adds,
                    st["OLP"].weight_reuse if row.kind in ("conv", "fc") else "",
                    row.mode if row.kind in ("conv", "fc") else "-", acc]
            for j, v in enumerate(vals):
                item = QTableWidgetItem(str(v))
                if TABLE_COLUMNS[j] == "mode" and v in MODE_COLORS:
                    item.setForeground(QColor(MODE_COLORS[str(v)]))
                self.table.setItem(i, j, item)
        self.table.resizeColumnsToContents()

    def _toggle_ids(self, on: bool) -> None:
        self.thread_view.show_ids = on
        self.thread_view.update()

    def _show_threads(self) -> None:
        r = self.typed
        i = self.thread_layer.currentIndex()
        if r is None or i < 0:
            self.thread_view.set_layer(None, 4, 1)
            return
        self.thread_view.set_layer(r.layers[i], r.target.vector_width, r.target.threads)

    def _draw_accuracy(self, r: CappuccinoResult) -> None:
        inx = r.inexact
        configs = inx.configurations
        chosen = [c.index for c in configs if c.modes == inx.modes]
        self.accuracy_chart.set_data([(c.index, c.accuracy, c.within_budget) for c in configs],
                                     inx.precise_accuracy - inx.budget_pp, chosen[0] if chosen else None)
        self.accuracy_points = (np.array([c.index for c in configs], float),
                                np.array([c.accuracy for c in configs], float))

    def _draw_speed(self, r: CappuccinoResult) -> None:
        syn = r.synthesis
        sp = syn.speedups
        ort = syn.onnxruntime
        if sp:
            self.speed_values = [float(sp[k]) for k, _ in SPEED_KEYS]
            self.speed_chart.set_data(self.speed_values, syn.message)
        elif ort:
            keys = [(k, label) for k, label in RATIO_KEYS if k in ort.ratios]
            self.speed_values = [float(ort.ratios[k]) for k, _ in keys]
            self.speed_chart.set_data(self.speed_values, syn.message, [label for _, label in keys],
                                      f"Median time ÷ onnxruntime {ort.version}'s ({ort.threads} threads; "
                                      "below 1: faster)")
        else:
            self.speed_values = []
            self.speed_chart.set_data([], syn.message or "not compiled")

    def _fill_programs(self, r: CappuccinoResult) -> None:
        """One row per program (and onnxruntime); sizes even when nothing was compiled."""
        syn = r.synthesis
        progs = syn.programs or {}
        sizes = syn.program_sizes or {}
        ort = syn.onnxruntime
        rows: list[list[str]] = []

        def num(v: Any, fmt: str) -> str:
            return "" if v is None else format(v, fmt)

        def either(a: int | None, b: int | None) -> int | None:
            return b if a is None else a

        for key in progs or sizes:
            ratio = ort.ratios.get(key) if ort else None
            z = sizes.get(key)          # the sizes of every program written, compiled or not
            lines, source, weights = (None, None, None) if z is None else (z.source_lines, z.source_bytes,
                                                                           z.weight_file_bytes)
            p = progs.get(key)
            if p is None:
                timing = ["", "", num(ratio, ".2f"), "", "", "", ""]
                build = ""
            else:
                same = "same" if p.same_classifications else f"{100 * p.agreement:.1f} %"
                timing = [num(p.microseconds_per_image, ".1f"), num(p.median_microseconds_per_image, ".1f"),
                          num(ratio, ".2f"), num(p.max_abs_error, ".2e"), num(p.max_rel_error, ".2e"),
                          num(p.onnxruntime_max_rel_error, ".2e"), same]
                build = num(p.build_seconds, ".1f")
                lines, source = either(p.source_lines, lines), either(p.source_bytes, source)
                weights = either(p.weight_file_bytes, weights)
            rows.append([key, *timing, num(lines, "d"), _size(source), _size(weights), build])
        if ort:
            rows.append([f"onnxruntime {ort.version}", f"{ort.microseconds_per_image:.1f}",
                         f"{ort.median_microseconds_per_image:.1f}", "1.00", "", "", "", "", "", "", "", ""])
        self.programs.setRowCount(len(rows))
        for i, vals in enumerate(rows):
            for j, v in enumerate(vals):
                self.programs.setItem(i, j, QTableWidgetItem(v))
        self.programs.resizeColumnsToContents()
        split = syn.thread_split.summary() if syn.thread_split is not None else (
            f"thread split {syn.thread_split_note}" if syn.thread_split_note else None)
        notes = [syn.message] + [n for n in (syn.onnxruntime_note, syn.baseline_note, split) if n]
        weights_note = r.model.extra.get("weights")
        if weights_note:
            notes.insert(0, f"weights: {weights_note}")
        self.programs_note.setText("\n".join(n for n in notes if n))


def _size(n: int | None) -> str:
    if n is None:
        return ""
    return f"{n / 1e6:.1f} MB" if n >= 100_000 else f"{n / 1e3:.1f} kB"


PANEL = CappuccinoPanel
