"""The Targets panel: one network on every target of the library (core.comparison), a row per target
with each total against its limit, the best on each metric highlighted, and each target's per-layer
time as a stacked bar. The comparison runs in a background thread; rows appear as parts finish.

(Issue 51, item 3, first part: the roofline plot, opening a part's run, cancel and exports are not
here yet; the window mounts the panel once the run controller carries the comparison.)
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF
from PySide6.QtWidgets import (QCheckBox, QComboBox, QHBoxLayout, QLabel, QPushButton, QSplitter, QTableWidget,
                               QTableWidgetItem, QVBoxLayout, QWidget)

from core.comparison import METRICS, Budgets, Comparison, ComparisonRow, TargetItem, compare
from core.comparison_cli import HEADS, cell, how_words
from core.project import Project
from gui.plotting import new_plot

COLUMNS = ["Target", "Engine", *[HEADS[k].capitalize() for k in METRICS], "How", "MACs run"]
BEST = QColor(46, 160, 67, 70)


def network_choices(project: Project) -> list[tuple[str, str]]:
    """(label, source) of every network the panel offers: the library's ONNX CNNs, then the zoo."""
    from core.nets import zoo

    out = [(f"{e.name} (ONNX)", e.value.onnx_path) for e in project.entries("workloads")
           if e.kind == "cnn" and bool(getattr(e.value, "onnx_path", ""))]
    return out + [(zoo.get(n).title, n) for n in zoo.names()]


class TargetsPanel(QWidget):
    """Compare one network on the library's targets."""

    row_ready = Signal(object)          # a ComparisonRow, from the worker thread
    done = Signal(object)               # the Comparison, or the error in words

    def __init__(self, project: Project, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.project = project
        self.budgets = Budgets()
        self.comparison: Comparison | None = None
        self._thread: threading.Thread | None = None
        self.bars = 0                   # targets drawn in the bar plot
        self.network = QComboBox()
        self.network.setToolTip("The network costed on every target: a zoo network or one of the library's ONNX "
                                "CNNs")
        for label, source in network_choices(project):
            self.network.addItem(label, source)
        start = next((i for i in range(self.network.count())
                      if self.network.itemData(i) in [getattr(e.value, "network", "")
                                                      for e in project.entries("workloads") if e.kind == "cnn"]), 0)
        self.network.setCurrentIndex(start)
        self.measure = QCheckBox("Time this machine's CPU")
        self.measure.setToolTip("Time MERIT's generated C on this machine for a CPU target that is this machine "
                                "(about 3 s a layer, run alone); otherwise every CPU is modelled by its roofline")
        self.run_button = QPushButton("Compare")
        self.run_button.setToolTip("Cost the network on every target of the library")
        self.run_button.clicked.connect(self.start)
        self.status = QLabel("")
        bar = QHBoxLayout()
        bar.addWidget(QLabel("Network:"))
        bar.addWidget(self.network, 1)
        bar.addWidget(self.measure)
        bar.addWidget(self.run_button)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.plot = new_plot("Time per layer", "share of the target's latency (%)", "", legend=False)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.table)
        split.addWidget(self.plot)
        lay = QVBoxLayout(self)
        lay.addLayout(bar)
        lay.addWidget(self.status)
        lay.addWidget(split, 1)
        self.row_ready.connect(self._add_row)
        self.done.connect(self._finish)

    # ---------------------------------------------------------------- running
    def targets(self) -> list[TargetItem]:
        return [TargetItem(e.name, e.value) for e in self.project.entries("targets")]

    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        if self.running():
            return
        source = str(self.network.currentData())
        targets = self.targets()
        if not targets:
            self.status.setText("The library holds no target: add one to compare.")
            return
        budgets = Budgets(measure=self.measure.isChecked(), scamp5_max_nodes=self.budgets.scamp5_max_nodes,
                          scamp5_time_s=self.budgets.scamp5_time_s, fcnnx_max_joint=self.budgets.fcnnx_max_joint)
        self.comparison = None
        self.table.setRowCount(0)
        self.plot.clear()
        self.run_button.setEnabled(False)
        self.status.setText(f"Costing {self.network.currentText()} on {len(targets)} target(s)...")

        def work() -> None:
            try:
                result: Any = compare(source, targets, budgets, on_row=self.row_ready.emit)
            except Exception as exc:    # an input error or a fault: said in words in the panel
                result = str(getattr(exc, "message", exc))
            self.done.emit(result)

        self._thread = threading.Thread(target=work, name="targets-comparison", daemon=True)
        self._thread.start()

    def _add_row(self, row: ComparisonRow) -> None:
        self._put_row(self.table.rowCount(), row, None)

    def _finish(self, result: Any) -> None:
        self.run_button.setEnabled(True)
        if not isinstance(result, Comparison):
            self.status.setText(f"Cannot compare: {result}")
            return
        self.comparison = result
        self.table.setRowCount(0)
        for i, row in enumerate(result.rows):
            self._put_row(i, row, result.macs)
        self.table.resizeColumnsToContents()
        mode = "this machine's CPU measured" if result.budgets.measure else "every CPU modelled"
        self.status.setText(f"{result.network}: {result.layers} layers, {result.macs / 1e9:.4g} GMACs on "
                            f"{len(result.rows)} target(s); {mode}. Each figure: value (limit, % of the limit "
                            f"reached); highlighted: the best among the targets that run every layer.")
        self._draw_bars(result)

    def _put_row(self, i: int, row: ComparisonRow, macs: int | None) -> None:
        if self.table.rowCount() <= i:
            self.table.setRowCount(i + 1)
        ms = row.metrics()
        cells = [row.target, row.engine or "-"]
        if row.reason is not None:
            cells += ["-"] * len(METRICS)
        else:
            cells += [cell(ms.get(k), k, False) for k in METRICS]
        cells += [how_words(row), f"{100 * row.covered_macs / macs:.4g}%" if macs else ""]
        for j, text in enumerate(cells):
            item = QTableWidgetItem(text)
            if j >= 2 and j - 2 < len(METRICS) and METRICS[j - 2] in row.best:
                item.setBackground(QBrush(BEST))
                f = QFont(item.font())
                f.setBold(True)
                item.setFont(f)
                item.setToolTip("the best of the targets that run every layer")
            if row.reason is not None:
                item.setToolTip(row.reason)
            elif j == 0:
                item.setToolTip(row.note)
            self.table.setItem(i, j, item)

    def _draw_bars(self, c: Comparison) -> None:
        """One horizontal bar per target that runs: its layers' times stacked, as shares of its latency."""
        self.plot.clear()
        ticks = []
        y = 0
        for row in c.rows:
            if row.record is None or row.reason is not None:
                continue
            times = np.array([l.time_s.value or 0.0 for l in row.record.layers], dtype=float)
            total = times.sum()
            if total <= 0:
                continue
            share = 100 * times / total
            left = np.concatenate([[0.0], np.cumsum(share)[:-1]])
            colours = [pg.mkBrush(pg.intColor(k, hues=9, alpha=200)) for k in range(len(times))]
            self.plot.addItem(pg.BarGraphItem(x0=left, y0=np.full(len(times), y - 0.4), width=share,
                                              height=np.full(len(times), 0.8), brushes=colours,
                                              pen=pg.mkPen(None)))
            ticks.append((y, row.target))
            y -= 1                      # the table's order, top to bottom
        axis = self.plot.getAxis("left")
        axis.setTicks([ticks])
        room = max((QFontMetricsF(axis.style.get("tickFont") or self.font()).horizontalAdvance(t) for _, t in ticks),
                   default=0.0)
        axis.setWidth(int(room) + 16)   # every target's name beside its bar
        self.bars = len(ticks)
