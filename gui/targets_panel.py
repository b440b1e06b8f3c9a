"""The Targets panel: one network on every target of the library (core.comparison), a row per target
with each total against its limit, the best on each metric highlighted, and each target's per-layer
time as a stacked bar.

A comparison is a run of runs (core.comparison_run): each target is a part, a "cost" run
submitted through the window's one run controller (the RunAdapter the window hands over; a panel on
its own polls one of its own), so each part shows as running in the Runs table and is kept with its
cost record. The panel owns no thread: the adapter's QTimer polls the controller on the UI thread,
and each part that ends becomes a row (rows and plots grow live). A part whose setup has not changed
since a finished run is that run (re-used, and the status says how many). Cancel cancels every part;
a panel deleted mid-comparison cancels its parts and is never written to. Double-clicking a row, or
clicking a roofline point or a bar, opens that part's run in its engine's tab (`run_requested`). A
session opened shows its last comparison again (rebuilt from its record and its parts' runs).

The table exports as CSV (values, limits, % of the limit, measured or modelled), the plots as PNG or
SVG. Under the table, sub-tabs hold each target's per-layer time and energy as stacked bars and a
roofline: every target's layers as points (MACs per off-chip byte against MACs per second attained,
core.comparison.roofline_points) under that target's ceilings (min(peak MAC rate, intensity x
bandwidth)). The window mounts the panel as its "Targets" tab.
"""

from __future__ import annotations

import csv
import io
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF
from PySide6.QtWidgets import (QCheckBox, QComboBox, QFileDialog, QFrame, QHBoxLayout, QLabel, QPushButton,
                               QScrollArea, QSplitter, QTableWidget, QTableWidgetItem, QTabWidget, QVBoxLayout,
                               QWidget)

from core.atomic import atomic_write_text
from core.comparison import (METRICS, Budgets, Comparison, ComparisonRow, RooflinePoint, TargetItem, above_ceiling,
                             ceiling, counted, roofline_points, workload_words)
from core.comparison_cli import HEADS, UNITS, cell, how_words
from core.comparison_record import book_of
from core.comparison_run import ComparisonRun, last_recorded, recorded
from core.errors import InputError
from core.numbers import format_number
from core.project import Project
from core.project_events import LibraryChanged, Reset, RunChanged
from core.run_controller import thread_launcher
from gui.follow import follow
from gui.run_adapter import RunAdapter
from gui.plotting import ThemedPlot, ask_export_plot, new_plot, readable_number, series_colour

COLUMNS = ["Target", "Engine", *[HEADS[k].capitalize() for k in METRICS], "How", "MACs run"]
BEST = QColor(46, 160, 67, 70)
PLOTS_SHARE = 0.4           # the least share of the table's and plots' room the plots keep
PLOTS_MIN_H = 120           # the plots' least height (pyqtgraph asks some 240 px once six bars are drawn)
PLOTS_FRAME_H = 90          # the plots' tabs, title and axis: what a bar plot holds besides its bars
BAR_H = 16                  # a bar's least height, its target's name beside it readable
LEGEND_H = 22               # a line of the roofline's legend
ROOFLINE_FRAME_H = 140      # the roofline's tabs, title, axis and the legend's margins (its x axis' words showing)
STALE_TEXT = "The library's targets have changed since: press Compare to cost them again."
EMPTY_TEXT = ("Pick a network and press Compare: it is costed on every target of the library, each target a "
              "run of the Target cost engine.")


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
    """(label, source) of every workload the panel offers: the library's ONNX CNNs, its conv-layers
    workloads (each spec costed on its own, core.layer_source), then the zoo."""
    from core.layer_source import layers_source
    from core.nets import zoo

    out = [(f"{e.name} (ONNX)", e.value.onnx_path) for e in project.entries("workloads")
           if e.kind == "cnn" and bool(getattr(e.value, "onnx_path", ""))]
    for e in project.entries("workloads"):
        if e.kind == "conv_layers":
            try:
                out.append((f"{e.name} (conv layers)", layers_source(list(e.value.layers))))
            except InputError:      # no spec, or one that cannot be written as a source: not offered
                continue
    return out + [(zoo.get(n).title, n) for n in zoo.names()]


def _partial_words(row: ComparisonRow) -> str:
    """" ZC706 at 1 GB/s: 1 layer not run (fc: past the feature extractor ...), left out of its
    figures." for a target that runs part of the network; "" for one that runs it all."""
    assert row.record is not None
    skipped = [l for l in row.record.layers if l.reason is not None]
    if not skipped:
        return ""
    first = skipped[0]
    return (f" {row.target}: {counted(len(skipped), 'layer')} not run ({first.name}: {first.reason}), left out of "
            f"its figures.")


class TargetsPanel(QWidget):
    """Compare one network on the library's targets."""

    row_ready = Signal(object)          # a ComparisonRow, as its part ends
    done = Signal(object)               # the Comparison
    run_requested = Signal(str)         # a part's run to open in its engine's tab (the window opens it)

    def __init__(self, project: Project, parent: QWidget | None = None, runner: RunAdapter | None = None) -> None:
        super().__init__(parent)
        self.project = project
        self.budgets = Budgets()
        self.comparison: Comparison | None = None
        # the window's run adapter (its one controller); a panel on its own (a test, a script) polls one of
        # its own that runs the parts on threads of this process
        self.runner = runner if runner is not None else RunAdapter(project, thread_launcher, parent=self)
        self.current: ComparisonRun | None = None      # the comparison on its way (or the last one)
        # the comparison shown, or the one meant while the tab shows an older one (every part of it
        # deleted: an undo brings it back)
        self._wanted: str | None = None
        self.runner.finished.connect(self._part_ended)
        controller = self.runner.controller
        group: list[str] = [""]         # the comparison on its way's id
        self._group = group
        # a panel deleted with a comparison on its way: its parts are cancelled (the closure holds no panel)
        self.destroyed.connect(lambda *_: controller.cancel_group(group[0]) if group[0] else None)
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
        self.network.setToolTip("The network costed on every target: a zoo network, one of the library's ONNX "
                                "CNNs, or one of its conv-layers workloads (each layer costed on its own)")
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
        self.status = QLabel(EMPTY_TEXT)       # a new user's first look: what to do
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
        self.table.setToolTip("Double-click a target to open its part's run in the Target cost tab")
        self.table.cellDoubleClicked.connect(lambda i, _j: self._open(self._rows[i] if i < len(self._rows) else None))
        self._rows: list[ComparisonRow] = []      # the table's rows, top to bottom
        self._bar_rows: dict[int, list[ComparisonRow]] = {}     # id(plot) -> its bars' rows, top to bottom
        # id(plot) -> per bar, each layer's (name, left edge %, share %, value as written)
        self._bar_layers: dict[int, list[list[tuple[str, float, float, str]]]] = {}
        self.plot = new_plot("Time per layer", "share of the target's latency (%)", "", legend=False)
        self.energy_plot = new_plot("Energy per layer", "share of the target's energy (%)", "", legend=False)
        self.roofline = new_plot("Roofline: each target's layers under its ceilings",
                                 "operational intensity (MACs per off-chip byte)", "attained (MAC/s)")
        self.roofline.setLogMode(x=True, y=True)
        for bars in (self.plot, self.energy_plot):
            bars.scene().sigMouseClicked.connect(lambda ev, b=bars: self._bar_clicked(b, ev))
            bars.scene().sigMouseMoved.connect(lambda pos, b=bars: self._bar_hovered(b, pos))
        self.plots = QTabWidget()
        self.plots.addTab(self.plot, "Time per layer")
        self.plots.addTab(self.energy_plot, "Energy per layer")
        self.plots.addTab(self.roofline, "Roofline")
        self.plots.setTabToolTip(1, "Targets with an energy model only")
        self.plots.setTabToolTip(2, "Each layer at MACs / off-chip bytes against MACs / time; the lines: each "
                                    "target's min(peak MAC rate, intensity x off-chip bandwidth). Hover a point "
                                    "for its target and layer")
        self.plots.setMinimumHeight(PLOTS_MIN_H)
        self.plots.currentChanged.connect(lambda _i: self._fit_table())     # the plot on show's room
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.table)
        split.addWidget(self.plots)
        self.split = split
        # the table and plots scroll below the bar and the status: a short tab (a bottom dock taking
        # half a 768-pixel screen) keeps them whole, reached by scrolling, rather than holding the
        # docks small (their minimum, some 190 px, would set the tab area's)
        self.scroller = QScrollArea()
        self.scroller.setWidgetResizable(True)
        self.scroller.setFrameShape(QFrame.Shape.NoFrame)
        self.scroller.setWidget(split)
        lay = QVBoxLayout(self)
        lay.addLayout(bar)
        lay.addWidget(self.status)
        lay.addWidget(self.scroller, 1)
        self.row_ready.connect(self._add_row)
        self.done.connect(self._finish)
        follow(self, project.events.workloads, lambda _ev: self._fill_networks())
        follow(self, project.events.reset, self._project_reset)
        follow(self, project.events.targets, self._targets_changed)
        follow(self, project.events.run, self._run_changed)

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

    def _targets_changed(self, _ev: LibraryChanged) -> None:
        """The rows shown no longer cost the library's targets: say so (once)."""
        if self.comparison is not None and not self.running() and STALE_TEXT not in self.status.text():
            self.status.setText(f"{self.status.text()} {STALE_TEXT}")

    def _run_changed(self, ev: RunChanged) -> None:
        """A part of the comparison shown was deleted (or brought back by undo): show its record as
        it now is (the part's row "run deleted"); every part deleted, the last comparison left."""
        wanted = self._wanted
        if self.running() or wanted is None:
            return
        entry = book_of(self.project.view).get(wanted)
        named = isinstance(entry, dict) and ev.id in (entry.get("runs") or [])
        if not named and ev.id not in {r.run_id for r in self._rows}:
            return
        self.show_comparison(recorded(self.project, wanted) or last_recorded(self.project))
        self._wanted = wanted

    def _project_reset(self, _ev: Reset) -> None:
        self._fill_networks()
        if not self.running():      # a session opened: its last comparison, as it ended
            self.show_comparison(last_recorded(self.project))

    def show_comparison(self, c: Comparison | None) -> None:
        """Show a comparison that has ended (None: an empty table)."""
        self.current = None
        self._live, self._rows = [], []
        self.table.setRowCount(0)
        for plot in (self.plot, self.energy_plot, self.roofline):
            plot.clear()
        self.roofline_series, self.roofline_items = {}, {}
        if c is None:
            self.comparison = None
            self._wanted = None
            self.status.setText(EMPTY_TEXT)
            self.export_table_button.setEnabled(False)
            self.export_plot_button.setEnabled(False)
            return
        at = self.network.findData(c.source)
        if at >= 0:
            self.network.setCurrentIndex(at)
        self._finish(c)

    # ---------------------------------------------------------------- running
    def targets(self) -> list[TargetItem]:
        return [TargetItem(e.name, e.value) for e in self.project.entries("targets")]

    def running(self) -> bool:
        return self.current is not None and not self.current.done

    def start(self) -> None:
        if self.running():
            return
        source = str(self.network.currentData())
        entries = self.project.entries("targets")
        if not entries:
            self.status.setText("The library holds no target: add one to compare.")
            return
        budgets = Budgets(measure=self.measure.isChecked(), scamp5_max_nodes=self.budgets.scamp5_max_nodes,
                          scamp5_time_s=self.budgets.scamp5_time_s, fcnnx_max_joint=self.budgets.fcnnx_max_joint)
        self.comparison = None
        self.table.setRowCount(0)
        for plot in (self.plot, self.energy_plot, self.roofline):
            plot.clear()
        self.roofline_series, self.roofline_items = {}, {}
        self._live, self._rows = [], []
        try:        # each target a part: a run of the project, through the window's run controller
            self.current = ComparisonRun(self.runner.controller, source, self.targets(), budgets,
                                         workers=self.workers, target_ids=[e.id for e in entries])
        except InputError as exc:   # the network: said in words in the panel
            self.current = None
            self.status.setText(f"Cannot compare: {exc.message}")
            return
        self._group[0] = self.current.id
        self.runner.watch()
        self.run_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.export_table_button.setEnabled(False)
        self.export_plot_button.setEnabled(False)
        reused = self.current.reused
        again = f" ({reused} re-used: {'its' if reused == 1 else 'their'} setup has not changed)" if reused else ""
        self.status.setText(f"Costing {self.network.currentText()} on {counted(len(entries), 'target')}{again}...")
        self._collect()

    def _part_ended(self, *_: Any) -> None:
        """A run ended (the adapter's signal, on the UI thread): the comparison's parts that ended become rows."""
        if self.running():
            self._collect()

    def _collect(self) -> None:
        current = self.current
        if current is None:
            return
        for row in current.update():
            self.row_ready.emit(row)
        if current.done:
            self.done.emit(current.result())

    def cancel(self) -> None:
        """Cancel every part: the queued ones never start, the running ones are stopped (recorded as cancelled)."""
        if self.running():
            assert self.current is not None
            self.current.cancel()
            self.cancel_button.setEnabled(False)
            self.status.setText("Cancelling: every part of the comparison is stopped...")
            self._collect()

    def shutdown(self, wait_s: float = 30.0) -> bool:
        """Cancel and wait for the parts in flight (the window's close); True when nothing runs any more."""
        current = self.current
        if current is None or current.done:
            return True
        current.cancel()
        deadline = time.monotonic() + wait_s
        for job in self.runner.controller.running(current.id):
            if job.handle is not None:
                job.handle.wait(max(0.0, deadline - time.monotonic()))
        self.runner.poll()              # their ends recorded, the rows taken (_part_ended)
        self._collect()
        return current.done

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

    def _open(self, row: ComparisonRow | None) -> None:
        """Open a part's run in its engine's tab (a target with no run, one not costed, opens nothing)."""
        if row is not None and row.run_id is not None:
            self.run_requested.emit(row.run_id)

    def _bar_clicked(self, plot: ThemedPlot, ev: Any) -> None:
        """A click on a bar (a target's layers, stacked) opens that target's part."""
        rows = self._bar_rows.get(id(plot), [])
        y = plot.getViewBox().mapSceneToView(ev.scenePos()).y()
        i = int(round(-y))
        if 0 <= i < len(rows) and abs(-y - i) <= 0.4 and plot.getViewBox().sceneBoundingRect().contains(ev.scenePos()):
            self._open(rows[i])

    def _bar_hovered(self, plot: ThemedPlot, pos: Any) -> None:
        """The layer under the pointer, said in the plot's tooltip (the colours name no layer)."""
        view = plot.getViewBox()
        at = view.mapSceneToView(pos)
        i = int(round(-at.y()))
        bars = self._bar_layers.get(id(plot), [])
        text = ""
        if 0 <= i < len(bars) and abs(-at.y() - i) <= 0.4 and view.sceneBoundingRect().contains(pos):
            rows = self._bar_rows.get(id(plot), [])
            for name, left, share, value in bars[i]:
                if left <= at.x() < left + share:
                    text = f"{rows[i].target}, {name}: {value}, {share:.3g}% of its total. Click to open its part's run"
                    break
        plot.setToolTip(text)

    def _add_row(self, row: ComparisonRow) -> None:
        self._rows.append(row)
        self._put_row(self.table.rowCount(), row, None)
        self.table.resizeColumnsToContents()
        self._live.append(row)
        self._draw_plots(self._live)    # live: the plots grow as parts finish
        self._fit_table()

    def _finish(self, result: Comparison) -> None:
        self.run_button.setEnabled(True)
        self.cancel_button.setEnabled(False)
        self.comparison = result
        self._wanted = result.id or None
        self.table.setRowCount(0)
        self._rows = list(result.rows)
        for i, row in enumerate(result.rows):
            self._put_row(i, row, result.macs)
        self.table.resizeColumnsToContents()
        mode = "this machine's CPU measured" if result.budgets.measure else "every CPU modelled"
        stopped = "Cancelled: " if result.cancelled else ""
        self.export_table_button.setEnabled(True)
        self.export_plot_button.setEnabled(True)
        above = self._draw_plots(result.rows)
        warn = (f" {counted(above, 'roofline point')} above {'its' if above == 1 else 'their'} target's ceiling: "
                f"a cost below its limit." if above else "")
        again = (f" {counted(result.reused, 'part')} re-used: {'its' if result.reused == 1 else 'their'} setup had "
                 f"not changed." if result.reused else "")
        # a target that cannot run the network says why here, not only in a tooltip
        refused = "".join(f" {r.target}: {r.reason}." if r.deleted else
                          f" {r.target}: {'failed' if r.failed else 'not applicable'}, {r.reason}."
                          for r in result.rows if r.reason is not None)
        # a target that runs part of the network: its figures are of that part (its MACs run say how much)
        refused += "".join(_partial_words(r) for r in result.rows if r.reason is None and r.record is not None)
        self.status.setText(f"{stopped}{workload_words(result)}, on {counted(len(result.rows), 'target')}; "
                            f"{mode}. Each figure: value (limit, % of the limit "
                            f"reached); highlighted: the best among the targets that run every layer. "
                            f"Double-click a row or click a point or bar to open its part's run.{refused}{again}{warn}")
        self._fit_table()

    def resizeEvent(self, event: Any) -> None:
        """The window resized: the splitter shares the change out, the table's rows fitted again."""
        super().resizeEvent(event)
        self._fit_table()

    def showEvent(self, event: Any) -> None:
        """A comparison shown while the tab was hidden (a session opened on another tab) had no room
        to fit: fit it now that the tab has its size."""
        super().showEvent(event)
        self._fit_table()

    def _fit_table(self) -> None:
        """Give the table the height of its rows (all of them, the plots keeping at least 40 % of the
        room and their minimum), so that no target's row hides under the plots on a small screen
        (1366x768: the six starter targets)."""
        lay = self.layout()
        if lay is not None:
            lay.activate()              # the status line just grew: the splitter's room as it now is
        t = self.table
        if t.rowCount() == 0:
            self.split.setMinimumHeight(0)
            return
        wide = t.horizontalHeader().length() > t.viewport().width()       # the scroll bar takes a row's room
        need = (t.horizontalHeader().height() + sum(t.rowHeight(i) for i in range(t.rowCount()))
                + 2 * t.frameWidth() + (t.horizontalScrollBar().sizeHint().height() if wide else 0))
        # a short tab (1366x768 with the Runs dock: some 340 px) scrolls, rather than squeezing the
        # table to two rows: every row and readable plots below, the rest reached by scrolling
        # the plots' least: their minimum, and room for each bar's name beside it (six bars in 60 px
        # overlap) or, on show, for the roofline's legend, a line a target (five in 160 px hid its axis'
        # words); the plot on show's, so a short tab scrolls only where it must
        on_show = self.plots.currentWidget()
        items = (ROOFLINE_FRAME_H - PLOTS_FRAME_H + LEGEND_H * len(self.roofline_items) if on_show is self.roofline
                 else BAR_H * (self.energy_bars if on_show is self.energy_plot else self.bars))
        plots_least = max(PLOTS_MIN_H, PLOTS_FRAME_H + items)
        least = max(need + plots_least, int(need / (1 - PLOTS_SHARE)) + 1) + self.split.handleWidth()
        self.split.setMinimumHeight(least)
        if 0 < self.split.height() < least:
            self.split.resize(self.split.width(), least)
        sizes = self.split.sizes()
        if sum(sizes) <= 0:
            return
        plots = max(plots_least, int(PLOTS_SHARE * sum(sizes)))
        want = min(need, sum(sizes) - plots)
        if sizes[0] < want or sizes[1] < plots:     # the table short of its rows, or the plots of their room
            self.split.setSizes([want, sum(sizes) - want])

    def _put_row(self, i: int, row: ComparisonRow, macs: int | None) -> None:
        if self.table.rowCount() <= i:
            self.table.setRowCount(i + 1)
        ms = row.metrics()
        cells = [row.target, row.engine or "-"]
        if row.reason is not None:
            cells += ["-"] * len(METRICS)
        else:
            cells += [cell(ms.get(k), k, False) for k in METRICS]
        how = how_words(row) if row.reason is None or row.failed else "run deleted" if row.deleted \
            else "not applicable"
        # a deleted or failed part's share is not known (not 0%: nothing says the target cannot run them)
        share = "" if not macs else "-" if row.deleted or row.failed else f"{100 * row.covered_macs / macs:.4g}%"
        cells += [how, share]
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
        drawn: list[ComparisonRow] = []
        self._bar_rows[id(plot)] = drawn
        layers: list[list[tuple[str, float, float, str]]] = []
        self._bar_layers[id(plot)] = layers
        unit = "s" if key == "time_s" else "J"
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
            drawn.append(row)
            layers.append([(l.name, float(a), float(b), format_number(t, unit))
                           for l, a, b, t in zip(row.record.layers, left, share, times) if b > 0])
            y -= 1                      # the table's order, top to bottom
        axis = plot.getAxis("left")
        axis.setTicks([ticks] if ticks else None)   # no bar yet: the empty plot's own ticks, not a grid of stripes
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
            item.sigClicked.connect(lambda _item, _points, _ev=None, r=row: self._open(r))
            self.roofline.addItem(item)
            self.roofline_series[row.target] = pts
            self.roofline_items[row.target] = item
            above += len(above_ceiling(row))
        return above
