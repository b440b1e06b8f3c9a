"""The Targets panel: one network on every target of the library (core.comparison), a row per target
with each total against its limit, the best on each metric highlighted, and each target's per-layer
time as a stacked bar. The comparison runs in a background thread that never touches a Qt object:
it puts rows and the end into a plain queue that a timer of the panel drains on the UI thread (a
panel deleted mid-run leaves the thread writing to a queue nobody reads, not to a freed widget);
rows appear as parts finish;
Cancel stops it between parts. The table exports as CSV (values, limits, % of the limit, measured or
modelled), the plots as PNG or SVG. Under the table, sub-tabs hold each target's per-layer time and
energy as stacked bars and a roofline: every target's layers as points (MACs per off-chip byte
against MACs per second attained, core.comparison.roofline_points) under that target's ceilings
(min(peak MAC rate, intensity x bandwidth)); the plots grow as parts finish. The window mounts the panel as its "Targets" tab.

(Issue 51, item 3, in part: opening a part's run and re-using parts are not here yet.)
"""

from __future__ import annotations

import csv
import io
import queue
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF
from PySide6.QtWidgets import (QCheckBox, QComboBox, QFileDialog, QHBoxLayout, QLabel, QPushButton, QSplitter,
                               QTableWidget, QTableWidgetItem, QTabWidget, QVBoxLayout, QWidget)

from core.atomic import atomic_write_text
from core.comparison import (METRICS, Budgets, Comparison, ComparisonRow, RooflinePoint, TargetItem, above_ceiling,
                             ceiling, compare, roofline_points)
from core.comparison_cli import HEADS, UNITS, cell, how_words
from core.project import Project
from core.project_events import Reset
from gui.follow import follow
from gui.plotting import ThemedPlot, ask_export_plot, new_plot, readable_number, series_colour

COLUMNS = ["Target", "Engine", *[HEADS[k].capitalize() for k in METRICS], "How", "MACs run"]
BEST = QColor(46, 160, 67, 70)


def comparison_csv(c: Comparison) -> str:
    """The comparison as CSV, one row per target: each metric's value, limit (both in SI units, the
    unit in the header), % of the limit reached and measured/modelled; empty where there is none."""
    buf = io.StringIO()
    w = csv.writer(buf)
    head = ["target", "kind", "engine"]
    for k in METRICS:
        head += [f"{k} ({UNITS[k]})", f"{k} limit ({UNITS[k]})", f"{k} % of limit", f"{k} how"]
    w.writerow(head + ["best on", "MACs run (%)", "part seconds", "reason"])
    for r in c.rows:
        ms = r.metrics()
        out: list[Any] = [r.target, r.kind, r.engine]
        for k in METRICS:
            m = ms.get(k)
            out += ["", "", "", ""] if m is None else [
                "" if m.value is None else repr(m.value), "" if m.limit is None else repr(m.limit),
                "" if m.pct_of_limit is None else f"{m.pct_of_limit:.4g}", m.how]
        share = f"{100 * r.covered_macs / c.macs:.4g}" if c.macs else ""
        w.writerow(out + [" ".join(r.best), share, f"{r.seconds:.3g}", r.reason or ""])
    return buf.getvalue()


def network_choices(project: Project) -> list[tuple[str, str]]:
    """(label, source) of every network the panel offers: the library's ONNX CNNs, then the zoo."""
    from core.nets import zoo

    out = [(f"{e.name} (ONNX)", e.value.onnx_path) for e in project.entries("workloads")
           if e.kind == "cnn" and bool(getattr(e.value, "onnx_path", ""))]
    return out + [(zoo.get(n).title, n) for n in zoo.names()]


class TargetsPanel(QWidget):
    """Compare one network on the library's targets."""

    row_ready = Signal(object)          # a ComparisonRow, emitted on the UI thread as the inbox drains
    done = Signal(object)               # the Comparison, or the error in words (UI thread)

    def __init__(self, project: Project, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.project = project
        self.budgets = Budgets()
        self.comparison: Comparison | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()  # Cancel: asked by the comparison before each part
        # what the worker thread hands over ("row", ComparisonRow) / ("done", result); drained by _drain
        self._inbox: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
        self._drain_timer = QTimer(self)
        self._drain_timer.setInterval(50)
        self._drain_timer.timeout.connect(self._drain)
        stop_flag = self._stop
        # a panel deleted with a comparison on its way: no further part starts (the thread sees the flag)
        self.destroyed.connect(lambda *_: stop_flag.set())
        self.workers: int | None = None  # parts at once (None: as many as the machine's cores)
        self.bars = 0                   # targets drawn in the time bars
        self.energy_bars = 0            # targets drawn in the energy bars (those with an energy model)
        # the roofline's points per target, as drawn (the targets that run a layer with a finite intensity)
        self.roofline_series: dict[str, list[RooflinePoint]] = {}
        self.roofline_items: dict[str, pg.ScatterPlotItem] = {}
        self._live: list[ComparisonRow] = []     # the rows come so far, drawn while the comparison runs
        self.network = QComboBox()
        # as wide as its room allows, not as its longest network's title (the window fits 1280 px)
        self.network.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.network.setMinimumContentsLength(18)
        self.network.setToolTip("The network costed on every target: a zoo network or one of the library's ONNX "
                                "CNNs")
        self._fill_networks()
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
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop the comparison: no further target starts (one being costed finishes)")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel)
        self.export_table_button = QPushButton("Export table…")
        self.export_table_button.setToolTip("Save the table as CSV: per target each value, its limit, the % of "
                                            "the limit reached, measured or modelled")
        self.export_table_button.setEnabled(False)
        self.export_table_button.clicked.connect(self._ask_export_table)
        self.export_plot_button = QPushButton("Export plot…")
        self.export_plot_button.setToolTip("Save the plot shown (time or energy bars, or the roofline) as PNG or SVG")
        self.export_plot_button.setEnabled(False)
        self.export_plot_button.clicked.connect(self._ask_export_plot)
        self.status = QLabel("")
        self.status.setWordWrap(True)
        bar = QHBoxLayout()
        bar.addWidget(QLabel("Network:"))
        bar.addWidget(self.network, 1)
        bar.addWidget(self.measure)
        bar.addWidget(self.run_button)
        bar.addWidget(self.cancel_button)
        bar.addWidget(self.export_table_button)
        bar.addWidget(self.export_plot_button)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.resizeColumnsToContents()        # every heading whole before the first row comes
        self.plot = new_plot("Time per layer", "share of the target's latency (%)", "", legend=False)
        self.energy_plot = new_plot("Energy per layer", "share of the target's energy (%)", "", legend=False)
        self.roofline = new_plot("Roofline: each target's layers under its ceilings",
                                 "operational intensity (MACs per off-chip byte)", "attained (MAC/s)")
        self.roofline.setLogMode(x=True, y=True)
        self.plots = QTabWidget()
        self.plots.addTab(self.plot, "Time per layer")
        self.plots.addTab(self.energy_plot, "Energy per layer")
        self.plots.addTab(self.roofline, "Roofline")
        self.plots.setTabToolTip(1, "Targets with an energy model only")
        self.plots.setTabToolTip(2, "Each layer at MACs / off-chip bytes against MACs / time; the lines: each "
                                    "target's min(peak MAC rate, intensity x off-chip bandwidth). Hover a point "
                                    "for its target and layer")
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.table)
        split.addWidget(self.plots)
        lay = QVBoxLayout(self)
        lay.addLayout(bar)
        lay.addWidget(self.status)
        lay.addWidget(split, 1)
        self.row_ready.connect(self._add_row)
        self.done.connect(self._finish)
        follow(self, project.events.workloads, lambda _ev: self._fill_networks())
        follow(self, project.events.reset, self._project_reset)

    def _fill_networks(self) -> None:
        """The choices (the library's ONNX CNNs, then the zoo), the current one kept where still there."""
        keep = self.network.currentData()
        self.network.blockSignals(True)
        self.network.clear()
        for label, source in network_choices(self.project):
            self.network.addItem(label, source)
        at = self.network.findData(keep)
        self.network.setCurrentIndex(max(at, 0))
        self.network.blockSignals(False)

    def _project_reset(self, _ev: Reset) -> None:
        self._fill_networks()

    # ---------------------------------------------------------------- running
    def targets(self) -> list[TargetItem]:
        return [TargetItem(e.name, e.value) for e in self.project.entries("targets")]

    def running(self) -> bool:
        return (self._thread is not None and self._thread.is_alive()) or self._drain_timer.isActive()

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
        for plot in (self.plot, self.energy_plot, self.roofline):
            plot.clear()
        self.roofline_series, self.roofline_items = {}, {}
        self._live = []
        self.run_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.export_table_button.setEnabled(False)
        self.export_plot_button.setEnabled(False)
        self.status.setText(f"Costing {self.network.currentText()} on {len(targets)} target(s)...")
        stop = self._stop          # the same flag the panel's deletion sets
        stop.clear()
        inbox = self._inbox = queue.SimpleQueue()
        workers = self.workers

        def work() -> None:     # touches no Qt object: only the queue and the stop flag
            try:
                result: Any = compare(source, targets, budgets, on_row=lambda row: inbox.put(("row", row)),
                                      workers=workers, cancelled=stop.is_set)
            except Exception as exc:    # an input error or a fault: said in words in the panel
                result = str(getattr(exc, "message", exc))
            inbox.put(("done", result))

        self._thread = threading.Thread(target=work, name="targets-comparison", daemon=True)
        self._thread.start()
        self._drain_timer.start()

    def _drain(self) -> None:
        """Hand the worker's rows and end to the panel, on the UI thread."""
        while True:
            try:
                what, data = self._inbox.get_nowait()
            except queue.Empty:
                return
            if what == "row":
                self.row_ready.emit(data)
            else:
                self._drain_timer.stop()
                self.done.emit(data)

    def cancel(self) -> None:
        """Stop the comparison between parts (a part already running finishes: engines are not interrupted)."""
        if self.running():
            self._stop.set()
            self.cancel_button.setEnabled(False)
            self.status.setText("Cancelling: the targets being costed finish, no other starts...")

    def shutdown(self, wait_s: float = 30.0) -> bool:
        """Cancel and wait for the part in flight (the window's close); True when nothing runs any more."""
        thread = self._thread
        if thread is not None and thread.is_alive():
            self._stop.set()
            thread.join(wait_s)
            if thread.is_alive():
                return False
        self._drain()                   # what the thread left: its last rows and its end
        self._drain_timer.stop()
        return True

    def export_csv(self, path: str | Path) -> None:
        """Write the finished comparison as CSV (whole or not at all)."""
        if self.comparison is None:
            raise ValueError("no finished comparison to export")
        atomic_write_text(Path(path), comparison_csv(self.comparison))

    def _ask_export_table(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export table", "targets.csv", "CSV (*.csv)")
        if path:
            self.export_csv(path)

    def _ask_export_plot(self) -> None:
        plot = self.plots.currentWidget()
        if isinstance(plot, ThemedPlot):
            stem = "targets-time" if plot is self.plot else "targets-energy" if plot is self.energy_plot \
                else "targets-roofline"
            ask_export_plot(self, plot, stem)

    def _add_row(self, row: ComparisonRow) -> None:
        self._put_row(self.table.rowCount(), row, None)
        self.table.resizeColumnsToContents()
        self._live.append(row)
        self._draw_plots(self._live)    # live: the plots grow as parts finish

    def _finish(self, result: Any) -> None:
        self.run_button.setEnabled(True)
        self.cancel_button.setEnabled(False)
        if not isinstance(result, Comparison):
            self.status.setText(f"Cannot compare: {result}")
            return
        self.comparison = result
        self.table.setRowCount(0)
        for i, row in enumerate(result.rows):
            self._put_row(i, row, result.macs)
        self.table.resizeColumnsToContents()
        mode = "this machine's CPU measured" if result.budgets.measure else "every CPU modelled"
        stopped = "Cancelled: " if result.cancelled else ""
        self.export_table_button.setEnabled(True)
        self.export_plot_button.setEnabled(True)
        above = self._draw_plots(result.rows)
        warn = f" {above} roofline point(s) lie above their target's ceiling: a cost below its limit." if above else ""
        self.status.setText(f"{stopped}{result.network}: {result.layers} layers, {result.macs / 1e9:.4g} GMACs on "
                            f"{len(result.rows)} target(s); {mode}. Each figure: value (limit, % of the limit "
                            f"reached); highlighted: the best among the targets that run every layer.{warn}")

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

    def _draw_plots(self, rows: list[ComparisonRow]) -> int:
        """The time bars (a bar per target that runs: its layers' times stacked as shares of its
        latency), the energy bars (the same, per target with an energy model) and the roofline; the
        number of roofline points above their ceiling."""
        self.bars = self._stack(self.plot, rows, "time_s")
        self.energy_bars = self._stack(self.energy_plot, rows, "energy_j")
        self.plots.setTabEnabled(1, self.energy_bars > 0 or not rows)
        self.plots.setTabToolTip(1, "Targets with an energy model only" if self.energy_bars or not rows
                                 else "No target here has an energy model")
        return self._draw_roofline(rows)

    def _stack(self, plot: ThemedPlot, rows: list[ComparisonRow], key: str) -> int:
        """One horizontal bar per target with the figure: its layers' shares of its total, stacked; the
        number of bars drawn."""
        plot.clear()
        ticks = []
        y = 0
        for row in rows:
            if row.record is None or row.reason is not None:
                continue
            times = np.array([getattr(l, key).value or 0.0 for l in row.record.layers], dtype=float)
            total = times.sum()
            if total <= 0:
                continue
            share = 100 * times / total
            left = np.concatenate([[0.0], np.cumsum(share)[:-1]])
            colours = [pg.mkBrush(pg.intColor(k, hues=9, alpha=200)) for k in range(len(times))]
            plot.addItem(pg.BarGraphItem(x0=left, y0=np.full(len(times), y - 0.4), width=share,
                                              height=np.full(len(times), 0.8), brushes=colours,
                                              pen=pg.mkPen(None)))
            ticks.append((y, row.target))
            y -= 1                      # the table's order, top to bottom
        axis = plot.getAxis("left")
        axis.setTicks([ticks])
        room = max((QFontMetricsF(axis.style.get("tickFont") or self.font()).horizontalAdvance(t) for _, t in ticks),
                   default=0.0)
        axis.setWidth(int(room) + 16)   # every target's name beside its bar
        return len(ticks)

    def _draw_roofline(self, rows_in: list[ComparisonRow]) -> int:
        """Every target's layers as points (log-log: the view holds log10 of both) under its ceiling
        line, one colour a target; the number of points above their ceiling (0 in a sound comparison)."""
        self.roofline.clear()
        self.roofline_series, self.roofline_items = {}, {}
        rows = [(r, roofline_points(r)) for r in rows_in if r.record is not None and r.reason is None]
        rows = [(r, ps) for r, ps in rows if ps]
        if not rows:
            return 0
        xs = [p.intensity for _, ps in rows for p in ps]
        lo, hi = min(xs) / 4, max(xs) * 4
        above = 0
        for i, (row, pts) in enumerate(rows):
            colour = series_colour(i)
            assert row.record is not None
            ce = row.record.ceilings
            ridge = ce.peak_macs_per_s / ce.bandwidth_bytes_per_s if ce.bandwidth_bytes_per_s else hi
            line_x = sorted({lo, hi, *([ridge] if lo < ridge < hi else [])})
            if ce.bandwidth_bytes_per_s > 0:     # no off-chip path: no ceiling above 0 to draw on a log axis
                self.roofline.plot(line_x, [ceiling(row, x) for x in line_x], pen=pg.mkPen(colour, width=2),
                                   name=row.target)
            item = pg.ScatterPlotItem(
                x=np.log10([p.intensity for p in pts]), y=np.log10([p.rate for p in pts]), data=pts, size=9,
                pen=pg.mkPen(colour), brush=pg.mkBrush(colour), hoverable=True,
                tip=lambda x, y, data, r=row: (
                    f"{r.target}, {data.layer}: {readable_number(data.rate)} MAC/s at {data.intensity:.3g} MACs per "
                    f"off-chip byte ({data.how}); ceiling {readable_number(ceiling(r, data.intensity))} MAC/s"))
            item.setZValue(10)
            self.roofline.addItem(item)
            self.roofline_series[row.target] = pts
            self.roofline_items[row.target] = item
            above += len(above_ceiling(row))
        return above
