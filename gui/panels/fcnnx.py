"""Panel of the multi-CNN FPGA engine (f-CNNx): the design space (per-CNN Pareto fronts filling in live
beside the joint design points of Fig. 4) over the selected joint design's schedule cycle (Gantt chart
over its bandwidth profile) and resources. Clicking a joint point selects that design; clicking a
Pareto point highlights the joint designs built on it. Everything redraws from the typed result alone."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QAbstractItemView, QCheckBox, QFileDialog, QHBoxLayout, QLabel, QPushButton, QScrollArea,
                               QSplitter, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from core.settings import Setting
from core.engine import EngineSpec
from core.fcnnx.hwtable import write_table
from core.fcnnx.joint_view import JointView, ScheduleView, chosen_view, joint_view, joints_using
from core.fcnnx.model import RESOURCE_KEYS
from core.fcnnx.result import DesignSummary, FcnnxResult, JointPoint, ScheduledRun
from core.jobs import Event, MetricPoint
from core.project import Run
from core.results import EngineResult
from gui.binding import CheckAdapter
from gui.panels.base import PanelContext
from gui.panels.generic import GenericPanel
from gui.plotting import PALETTE, LivePlot, new_plot
from gui.splitters import splitter

JOINT_SERIES = {"peak": "#1f77b4", "contention-unaware (est.)": "#d62728", "memory-aware": "#e6b800"}
JOINT_KEYS: dict[str, Callable[[JointPoint], float | None]] = {
    "peak": lambda p: p.peak, "contention-unaware (est.)": lambda p: p.contention_unaware_est,
    "memory-aware": lambda p: p.memory_aware}
SETTING_WIDGETS = ["targets", "objective", "scheduler", "strict_targets", "front_size", "max_joint", "ilp_time_limit",
                   "simulate"]


NO_SCHEDULE_TEXT = "Run the engine, then click a joint design point to see its schedule"


class NotCheckAdapter(CheckAdapter):
    """A check box that shows the negation of a boolean setting ("all joint points" = not prune)."""

    def read(self, w: QCheckBox, prop: Setting) -> Any:
        return not w.isChecked()

    def write(self, w: QCheckBox, value: Any, prop: Setting) -> None:
        w.setChecked(not value)


class ScatterPlot(LivePlot):
    """A LivePlot drawing points without connecting lines (Pareto clouds, Fig. 4 triplets) that says
    which point of which series was clicked."""

    def __init__(self, *args: Any, on_click: Any = None, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self._on_click = on_click
        self._marks: list[tuple[float, float]] = []
        self.mark = pg.PlotDataItem([], [], pen=None, symbol="o", symbolSize=16, symbolBrush=None,
                                    symbolPen=pg.mkPen("k", width=2))
        self.mark.setZValue(10)
        self.mark.setEnabled(False)            # clicks go through the ring to the point under it
        self.addItem(self.mark)

    def add_points(self, series: str, xs: list[float], ys: list[float]) -> None:
        new = series not in self._data
        super().add_points(series, xs, ys)
        if new:
            color = JOINT_SERIES.get(series, PALETTE[(len(self._data) - 1) % len(PALETTE)])
            curve = self._curves[series]
            curve.setPen(None)
            curve.setSymbolBrush(color)
            curve.setSymbolPen(color)
            if self._on_click is not None:
                curve.sigPointsClicked.connect(lambda _item, points, _ev, s=series: points and
                                               self._on_click(s, int(points[0].index())))

    def set_marks(self, xs: list[float], ys: list[float]) -> None:
        """Ring the given points (the selection); an empty list clears."""
        self._marks = list(zip(map(float, xs), map(float, ys)))
        self.mark.setData(np.asarray(xs, float), np.asarray(ys, float))

    def marks(self) -> list[tuple[float, float]]:
        return list(self._marks)


RUN_COLUMNS = ["CNN", "repetition", "subgraph", "start (beat)", "start (ms)", "end (ms)", "slots", "slow-down", "rounds",
               "bytes", "transfers (R/W address: bytes)"]
REGION_COLUMNS = ["region", "kind", "address", "bytes", "weights"]


# a cell's flags, read-only: worked out once (a table holds thousands of cells; the flag arithmetic per
# cell, in Python, cost as much as the cell)
READ_ONLY = (Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsDragEnabled | Qt.ItemFlag.ItemIsDropEnabled
             | Qt.ItemFlag.ItemIsUserCheckable | Qt.ItemFlag.ItemIsEnabled)


def _item(value: Any) -> QTableWidgetItem:
    it = QTableWidgetItem(str(value))
    it.setFlags(READ_ONLY)
    return it


class HardwareTableView(QWidget):
    """The chosen design's MCNN-HS table (result "hardware_table"): one row per run of a subgraph in
    the cycle (per repetition, per subgraph), the memory map, the replay check, and an export."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.info = QLabel("Run the engine: the chosen design's hardware scheduler table appears here")
        self.info.setWordWrap(True)
        self.export_button = QPushButton("Export table…")
        self.export_button.setToolTip("Write mcnn_hs_table.json and the C header mcnn_hs_table.h into a folder")
        self.export_button.setEnabled(False)
        self.runs = QTableWidget(0, len(RUN_COLUMNS))
        self.runs.setHorizontalHeaderLabels(RUN_COLUMNS)
        self.regions = QTableWidget(0, len(REGION_COLUMNS))
        self.regions.setHorizontalHeaderLabels(REGION_COLUMNS)
        for t in (self.runs, self.regions):
            t.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
            t.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
            t.verticalHeader().setVisible(False)
            t.verticalHeader().setDefaultSectionSize(t.fontMetrics().height() + 6)     # compact rows
            t.horizontalHeader().setDefaultSectionSize(90)
            t.horizontalHeader().setStretchLastSection(True)
        self.regions.setColumnWidth(0, 300)
        head = QHBoxLayout()
        head.addWidget(self.info, 1)
        head.addWidget(self.export_button)
        split = splitter(Qt.Orientation.Vertical, (self.runs, 3), (self.regions, 1))
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(head)
        lay.addWidget(split, 1)
        self.doc: dict[str, Any] | None = None

    def show_table(self, result: FcnnxResult | None) -> None:
        hw = None if result is None else result.hardware_table
        self.doc = None if hw is None else hw.table
        self.export_button.setEnabled(self.doc is not None)
        self.runs.setRowCount(0)
        self.regions.setRowCount(0)
        if result is None:
            self.info.setText("Run the engine: the chosen design's hardware scheduler table appears here")
            return
        if hw is None:
            self.info.setText("This result was stored before the whole-cycle hardware table existed "
                              "(result version < 3): run it again to get the table and its replay check")
            return
        doc = hw.table              # the exported document (mcnn_hs_table.json), read as the file is
        beat_ms = 1e3 * doc["beat_s"]
        regions = doc["memory"]["regions"]
        rows = [(e["cnn"], rep["repetition"], sg) for e in doc["engines"] for rep in e["repetitions"]
                for sg in rep["subgraphs"]]
        self.runs.setRowCount(len(rows))
        for k, (cnn, rep, sg) in enumerate(rows):
            transfers = ", ".join(f"{'W' if t['write'] else 'R'} 0x{t['address']:x}: {t['bytes']}" for t in sg["transfers"])
            values = [cnn, rep + 1, sg["name"], sg["start_beat"], f"{sg['start_beat'] * beat_ms:.3f}",
                      f"{sg['end_beat'] * beat_ms:.3f}", sg["slots"], f"{sg['slowdown']:.4g}", sg["rounds"], sg["bytes"],
                      transfers]
            for c, v in enumerate(values):
                self.runs.setItem(k, c, _item(v))
        self.regions.setRowCount(len(regions))
        for k, g in enumerate(regions):
            values = [g["name"], g["kind"], f"0x{g['address']:x}", g["bytes"],
                      ("streamed" if g["streamed"] else "on chip") if g["kind"] == "weights" else ""]
            for c, v in enumerate(values):
                self.regions.setItem(k, c, _item(v))
        fps = ", ".join(f"{n} {a:.3f}/{b:.3f}" for n, a, b in zip(result.cnns, hw.replay_fps, hw.schedule_fps))
        self.info.setText(
            f"{hw.entries} runs per cycle of {hw.period_beats} beats ({1e3 * hw.table_period_s:.3f} ms), "
            f"{hw.regions} memory regions ({hw.memory_bytes / 2**20:.2f} MiB). Replay of the table in the "
            f"simulator: " + ("matches the schedule" if hw.replay_matches else "DIFFERS from the schedule")
            + f" — fps replay/schedule: {fps}" + (f" ({hw.replay_error})" if hw.replay_error else ""))

    def export_to(self, folder: Path) -> list[Path]:
        """Writes the shown table into `folder` (what the Export button does after asking)."""
        if self.doc is None:
            raise RuntimeError("no hardware table on show")
        return write_table(self.doc, folder)


class FcnnxPanel(GenericPanel):
    engine_name = "fcnnx"

    def __init__(self, engine: EngineSpec, context: PanelContext, parent: QWidget | None = None) -> None:
        super().__init__(engine, context, parent)
        self.binding.build_into(self.controls, SETTING_WIDGETS)
        self.all_joint = self.binding.bind("prune", QCheckBox("all joint points"), NotCheckAdapter())
        self.all_joint.setToolTip("Schedule every joint design point (slower) instead of stopping when no other "
                                  "point can beat the best: fills the memory-aware points of Fig. 4")
        self.controls.addWidget(self.all_joint)

        # short axis labels (the rest in the titles): a long vertical label was cut on a small screen
        self.pareto_plot = ScatterPlot(title="Per-CNN Pareto fronts (fps with the whole bandwidth)",
                                       x_label="average resource use (%)", y_label="fps",
                                       on_click=self.pareto_point_clicked)
        self.pareto_plot.setLogMode(y=True)
        self.joint_plot = ScatterPlot(title="Joint design points (Fig. 4; lower is better)",
                                      x_label="average resource use (%)", y_label="objective",
                                      on_click=self.joint_point_clicked)
        self.sched_info = QLabel(NO_SCHEDULE_TEXT)
        self.sched_info.setWordWrap(True)
        self.gantt = new_plot(title="One schedule cycle", y_label="CNN")
        self.gantt.setLabel("bottom", "time (ms)")
        self.bw_plot = new_plot()
        self.bw_plot.setLabel("bottom", "time (ms)")
        self.bw_plot.setLabel("left", "GB/s")
        self.bw_plot.setMinimumHeight(120)          # its axis label whole on a 1366x768 screen
        self.bw_plot.setXLink(self.gantt)
        for plot, side in ((self.gantt, "bottom"), (self.bw_plot, "bottom"), (self.bw_plot, "left")):
            plot.getAxis(side).enableAutoSIPrefix(False)       # ms and GB/s as labelled, no "(x0.001)"
        self.res_plot = new_plot(title="Device resources per CNN (%)", x_label="resource", y_label="%")
        self.res_plot.addLegend(offset=(-10, 10))
        top = QSplitter(Qt.Orientation.Horizontal)
        top.addWidget(self.pareto_plot)
        top.addWidget(self.joint_plot)
        sched = QWidget()
        sl = QVBoxLayout(sched)
        sl.setContentsMargins(0, 0, 0, 0)
        sl.addWidget(self.gantt, 3)
        sl.addWidget(self.bw_plot, 2)
        bottom_row = splitter(Qt.Orientation.Horizontal, (sched, 3), (self.res_plot, 1))
        bottom = QWidget()
        bl = QVBoxLayout(bottom)
        bl.setContentsMargins(0, 0, 0, 0)
        bl.addWidget(self.sched_info)
        bl.addWidget(bottom_row, 1)
        space = QSplitter(Qt.Orientation.Vertical)
        space.addWidget(top)
        space.addWidget(bottom)
        # Each plot keeps the height its axis labels need; on a short screen the page scrolls rather
        # than cut them (issue 30: "ps (whole bandwidth)" and "GB/s" were clipped at 1366x768).
        for plot, height in ((self.pareto_plot, 170), (self.joint_plot, 170), (self.gantt, 110),
                             (self.res_plot, 170)):
            plot.setMinimumHeight(height)
        scroller = QScrollArea()
        scroller.setWidgetResizable(True)
        scroller.setFrameShape(QScrollArea.Shape.NoFrame)
        scroller.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroller.setWidget(space)
        self.tabs.insertTab(0, scroller, "Design space")
        self.hw_table = HardwareTableView()
        self.hw_table.export_button.clicked.connect(self.export_hardware_table)
        self.tabs.insertTab(1, self.hw_table, "Hardware table")
        self.tabs.setCurrentIndex(0)
        self.gantt_bars: list[ScheduledRun] = []
        self.selected: JointView | None = None
        self.highlighted: list[int] = []             # joint points using the clicked Pareto point
        self._joint_index: dict[str, list[int]] = {}  # joint-plot series -> joint point of each of its points
        self._shown: FcnnxResult | None = None        # the result the views draw (None while a run streams)

    # ------------------------------------------------------------ live events
    def job_started(self) -> None:
        super().job_started()
        self._clear_views()

    def handle_events(self, events: list[Event]) -> None:
        rest: list[Event] = []
        batches: dict[tuple[str, str], tuple[list[float], list[float]]] = {}
        for ev in events:
            if isinstance(ev, MetricPoint) and ev.plot in ("pareto", "joint"):
                xs, ys = batches.setdefault((ev.plot, ev.series), ([], []))
                xs.append(ev.x)
                ys.append(ev.y)
            else:
                rest.append(ev)
        if not self._result_follows:                # else the result draws both plots from its own points
            for (plot, series), (xs, ys) in batches.items():
                (self.pareto_plot if plot == "pareto" else self.joint_plot).add_points(series, xs, ys)
        super().handle_events(rest)

    # ------------------------------------------------------------ result
    def _clear_views(self) -> None:
        for plot in (self.pareto_plot, self.joint_plot):
            plot.clear_series()
            plot.set_marks([], [])
        self.gantt.clear()
        self.bw_plot.clear()
        self.res_plot.clear()
        self.gantt_bars, self.selected, self.highlighted, self._joint_index = [], None, [], {}
        self._shown = None
        self.hw_table.show_table(None)
        # the caption of the design on show goes with it: no older run's objective under a new run
        self.sched_info.setText(NO_SCHEDULE_TEXT)

    def show_result(self, result: EngineResult | None) -> None:
        super().show_result(result)
        assert result is None or isinstance(result, FcnnxResult)
        self._clear_views()
        if result is None:
            return
        self._shown = result
        for name, front in result.pareto_fronts.items():
            self.pareto_plot.add_points(name, [100 * p.avg_util for p in front], [p.fps for p in front])
        rows = result.joint_points
        for series, value in JOINT_KEYS.items():
            ks, ys = [], []
            for k, row in enumerate(rows):
                y = value(row)
                if y is not None:
                    ks.append(k)
                    ys.append(y)
            if ks:
                self._joint_index[series] = ks
                self.joint_plot.add_points(series, [rows[k].util for k in ks], ys)
        self.hw_table.show_table(result)
        self._show_joint(chosen_view(result))

    def show_run(self, run: Run | None, **focus: Any) -> None:
        """`focus`: joint=k selects joint design point k of the run's result."""
        super().show_run(run, **focus)
        if self._shown is not None and "joint" in focus:
            self.select_joint(int(focus["joint"]))

    def export_hardware_table(self) -> None:
        """Ask for a folder and write the chosen design's MCNN-HS table there (JSON and C header)."""
        if self.hw_table.doc is None:
            return
        folder = QFileDialog.getExistingDirectory(self, "Export the MCNN-HS table to a folder")
        if not folder:
            return
        try:
            files = self.hw_table.export_to(Path(folder))
        except OSError as exc:
            self.context.status(f"cannot write the MCNN-HS table to {folder}: {exc.strerror or exc}")
            return
        self.context.status("MCNN-HS table written: " + ", ".join(str(f) for f in files))

    # ------------------------------------------------------------ linked views
    def joint_point_clicked(self, series: str, i: int) -> None:
        """A click on point i of a joint-plot series."""
        ks = self._joint_index.get(series, [])
        if 0 <= i < len(ks):
            self.select_joint(ks[i])

    def pareto_point_clicked(self, cnn: str, i: int) -> None:
        """A click on point i of a CNN's Pareto front."""
        self.select_front_point(cnn, i)

    def select_joint(self, k: int) -> JointView:
        """Select joint design point k: its schedule and resources are drawn, its CNNs' designs ringed."""
        if self._shown is None:
            raise RuntimeError("no result on show")
        view = joint_view(self._shown, k)
        self._show_joint(view)
        return view

    def select_front_point(self, cnn: str, i: int) -> list[int]:
        """Ring point i of a CNN's Pareto front and the joint design points that use it."""
        if self._shown is None:
            return []
        p = self._shown.pareto_fronts[cnn][i]
        self.pareto_plot.set_marks([100 * p.avg_util], [p.fps])
        self.highlighted = joints_using(self._shown, cnn, i)
        rows = self._shown.joint_points
        pts = [(rows[k].util, _plotted(rows[k])) for k in self.highlighted]
        self.joint_plot.set_marks([x for x, _ in pts], [y for _, y in pts])
        what = f"{cnn} design {i + 1} ({100 * p.avg_util:.1f}% of the device, {p.fps:.2f} fps alone)"
        if any(r.front_index is None for r in rows):
            self.context.status(f"{what}: this result does not record which joint designs use it; run again")
        else:
            self.context.status(f"{what}: used by {len(self.highlighted)} joint design(s), ringed")
        return self.highlighted

    def _show_joint(self, view: JointView) -> None:
        r = self._shown
        assert r is not None
        self.selected = view
        self.gantt.clear()
        self.bw_plot.clear()
        self.res_plot.clear()
        self.gantt_bars = []
        if view.index is not None:
            row = r.joint_points[view.index]
            self.joint_plot.set_marks([row.util], [_plotted(row)])
        if view.designs is not None:
            self.pareto_plot.set_marks([100 * d.avg_util for d in view.designs], [d.fps for d in view.designs])
            self._draw_resources(r, view.designs)
        title = "The chosen design" if view.index is None else \
            f"Joint design {view.index}" + (" (chosen)" if view.chosen else "")
        if view.schedule is None:
            self.sched_info.setText(f"{title}: {view.note}")
            return
        self._draw_schedule(r, view.schedule)
        sch = view.schedule
        fps = ", ".join(f"{n} {f:.2f}" for n, f in zip(r.cnns, sch.fps))
        sim = r.simulated if view.chosen else None
        base = r.baseline.simulated
        self.sched_info.setText(
            f"{title}: {len(sch.subgraphs)} subgraphs, repetitions {sch.repetitions}, "
            f"makespan {1e3 * sch.makespan_s:.2f} ms, period {1e3 * sch.period_s:.2f} ms "
            f"({'optimal' if sch.optimal else sch.method}); predicted fps: {fps}; objective {sch.objective:.4f}"
            + (f", simulated {sim.objective:.4f}" if sim else "")
            + (f", baseline {base.objective:.4f}" if sim and base else "")
            + ("; constraints checked: ok" if not sch.constraint_violations else "; CONSTRAINT VIOLATIONS"))

    def _draw_schedule(self, r: FcnnxResult, sch: ScheduleView) -> None:
        names = r.cnns
        for i, name in enumerate(names):
            rows = [s for s in sch.subgraphs if s.cnn == name]
            if not rows:
                continue
            x0 = np.array([1e3 * s.start_s for s in rows])
            w = np.array([1e3 * s.duration_s for s in rows])
            color = PALETTE[i % len(PALETTE)]
            shade = [pg.mkBrush(pg.mkColor(color).lighter(100 + int(60 * (1 - s.slowdown)))) for s in rows]
            bars = pg.BarGraphItem(x0=x0, y0=np.full(len(rows), i - 0.4), width=w, height=np.full(len(rows), 0.8),
                                   brushes=shade, pen=pg.mkPen("k", width=0.5))
            self.gantt.addItem(bars)
            self.gantt_bars.extend(rows)
        self.gantt.getAxis("left").setTicks([[(i, n) for i, n in enumerate(names)]])
        prof = sch.bandwidth_profile
        if prof:
            xs = [1e3 * t for t, _ in prof] + [1e3 * sch.makespan_s]
            ys = [u for _, u in prof]
            self.bw_plot.plot(xs, ys, stepMode="center", fillLevel=0, brush=(31, 119, 180, 90), pen=pg.mkPen("#1f77b4"))
            self.bw_plot.addLine(y=r.effective_bandwidth_gbps, pen=pg.mkPen("#d62728", style=Qt.PenStyle.DashLine))

    def _draw_resources(self, r: FcnnxResult, designs: list[DesignSummary]) -> None:
        names = r.cnns
        avail = asdict(r.available)
        width = 0.8 / max(len(names), 1)
        for i, (name, d) in enumerate(zip(names, designs)):
            used = asdict(d.resources)
            ys = [100 * used[k] / avail[k] for k in RESOURCE_KEYS]
            xs = np.arange(len(RESOURCE_KEYS)) - 0.4 + width * (i + 0.5)
            self.res_plot.addItem(pg.BarGraphItem(x=xs, height=ys, width=width, brush=PALETTE[i % len(PALETTE)],
                                                  name=name))
        self.res_plot.getAxis("bottom").setTicks([[(k, key) for k, key in enumerate(RESOURCE_KEYS)]])

    def resource_bars(self) -> dict[str, list[float]]:
        """Heights of the resource bars per CNN (used by tests)."""
        out = {}
        for item in self.res_plot.getPlotItem().items:
            if isinstance(item, pg.BarGraphItem):
                out[item.opts.get("name")] = list(item.opts["height"])
        return out


def _plotted(row: JointPoint) -> float:
    """Where a joint point sits on the joint plot: its memory-aware objective, else its peak one."""
    return row.memory_aware if row.memory_aware is not None else row.peak


PANEL = FcnnxPanel
