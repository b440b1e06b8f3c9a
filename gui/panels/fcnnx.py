"""Panel of the multi-CNN FPGA engine (f-CNNx): Pareto fronts filling in live, joint design points as
in Fig. 4, a Gantt chart of one schedule cycle over its bandwidth profile, and resource bars per CNN.
Everything redraws from the result dict alone."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDoubleSpinBox, QLabel, QLineEdit, QVBoxLayout, QWidget)

from core.boards import BOARDS
from core.engine import EngineSpec
from core.fcnnx.engine import default_settings
from core.fcnnx.model import RESOURCE_KEYS
from core.jobs import Event, MetricPoint
from gui.panels.base import PanelContext
from gui.panels.generic import GenericPanel
from gui.plotting import PALETTE, LivePlot

JOINT_SERIES = {"peak": "#1f77b4", "contention-unaware (est.)": "#d62728", "memory-aware": "#e6b800"}


class ScatterPlot(LivePlot):
    """A LivePlot drawing points without connecting lines (Pareto clouds, Fig. 4 triplets)."""

    def add_points(self, series: str, xs: list[float], ys: list[float]) -> None:
        new = series not in self._data
        super().add_points(series, xs, ys)
        if new:
            color = JOINT_SERIES.get(series, PALETTE[(len(self._data) - 1) % len(PALETTE)])
            self._curves[series].setPen(None)
            self._curves[series].setSymbolBrush(color)
            self._curves[series].setSymbolPen(color)


class FcnnxPanel(GenericPanel):
    engine_name = "fcnnx"

    def __init__(self, engine: EngineSpec, context: PanelContext, parent: QWidget | None = None) -> None:
        super().__init__(engine, context, parent)
        self._loading = True
        c = self.controls
        self.cnns = QLineEdit()
        self.cnns.setPlaceholderText("CNNs: window's CNN set (or e.g. zfnet,scenelabel,vgg16)")
        self.targets = QLineEdit()
        self.targets.setPlaceholderText("target fps: 25 each")
        self.board = QComboBox()
        self.board.addItem("board: window", "")
        for key, b in BOARDS.items():
            self.board.addItem(f"{b.name} ({b.device})", key)
        self.bandwidth = QDoubleSpinBox()
        self.bandwidth.setRange(0.0, 100.0)
        self.bandwidth.setDecimals(2)
        self.bandwidth.setSingleStep(0.1)
        self.bandwidth.setSuffix(" GB/s")
        self.bandwidth.setSpecialValueText("bandwidth: window")
        self.objective = QComboBox()
        self.objective.addItem("FPSobj (eq. 5)", "fps")
        self.objective.addItem("MaxThrpt (eq. 6)", "throughput")
        self.scheduler = QComboBox()
        self.scheduler.addItem("RCLS + pattern search", "rcls")
        self.scheduler.addItem("exact (CP-SAT)", "ilp")
        self.simulate = QCheckBox("simulate")
        self.all_joint = QCheckBox("all joint points")
        self.all_joint.setToolTip("Schedule every joint design point (slower) instead of stopping when no other "
                                  "point can beat the best: fills the memory-aware points of Fig. 4")
        for w in (self.cnns, self.targets, self.board, self.bandwidth, self.objective, self.scheduler, self.simulate,
                  self.all_joint):
            c.addWidget(w)
        c.addStretch(1)
        for sig in (self.cnns.editingFinished, self.targets.editingFinished, self.board.currentIndexChanged,
                    self.bandwidth.valueChanged, self.objective.currentIndexChanged,
                    self.scheduler.currentIndexChanged, self.simulate.toggled, self.all_joint.toggled):
            sig.connect(self._edited)

        self.pareto_plot = ScatterPlot(title="Per-CNN design points (latency-resource Pareto fronts)",
                                       x_label="average resource use (%)", y_label="fps (whole bandwidth)")
        self.pareto_plot.setLogMode(y=True)
        self.tabs.insertTab(0, self.pareto_plot, "Pareto fronts")
        self.joint_plot = ScatterPlot(title="Joint design points (Fig. 4)", x_label="average resource use (%)",
                                      y_label="objective (lower is better)")
        self.tabs.insertTab(1, self.joint_plot, "Joint designs")
        sched = QWidget()
        sl = QVBoxLayout(sched)
        self.sched_info = QLabel("Run the engine to see one cycle of the schedule")
        self.sched_info.setWordWrap(True)
        sl.addWidget(self.sched_info)
        self.gantt = pg.PlotWidget(background="w", title="One schedule cycle")
        self.gantt.setLabel("bottom", "time (ms)")
        self.bw_plot = pg.PlotWidget(background="w")
        self.bw_plot.setLabel("bottom", "time (ms)")
        self.bw_plot.setLabel("left", "GB/s")
        self.bw_plot.setXLink(self.gantt)
        sl.addWidget(self.gantt, 3)
        sl.addWidget(self.bw_plot, 2)
        self.tabs.insertTab(2, sched, "Schedule")
        self.res_plot = pg.PlotWidget(background="w", title="Device resources per CNN (%)")
        self.res_plot.addLegend(offset=(-10, 10))
        self.tabs.insertTab(3, self.res_plot, "Resources")
        self.tabs.setCurrentIndex(0)
        self.gantt_bars: list[dict[str, Any]] = []
        self.set_settings(default_settings())
        self._loading = False

    # ------------------------------------------------------------ settings
    def _edited(self) -> None:
        if not self._loading:
            self.settings_changed.emit()

    def settings(self) -> dict[str, Any]:
        s = default_settings()
        targets = []
        for t in self.targets.text().replace(" ", "").split(","):
            if t:
                try:
                    targets.append(float(t))
                except ValueError:
                    targets.append(-1.0)       # the engine names the bad entry
        s.update(cnns=[n.strip() for n in self.cnns.text().split(",") if n.strip()], targets=targets,
                 board=self.board.currentData() or "", bandwidth_gbps=round(self.bandwidth.value(), 3),
                 objective=self.objective.currentData(), scheduler=self.scheduler.currentData(),
                 simulate=self.simulate.isChecked(), prune=not self.all_joint.isChecked())
        return s

    def set_settings(self, settings: dict[str, Any]) -> None:
        s = default_settings()
        s.update(settings or {})
        was, self._loading = self._loading, True
        self.cnns.setText(",".join(s["cnns"]))
        self.targets.setText(",".join(f"{t:g}" for t in s["targets"]))
        self.board.setCurrentIndex(max(0, self.board.findData(s["board"])))
        self.bandwidth.setValue(float(s["bandwidth_gbps"]))
        self.objective.setCurrentIndex(max(0, self.objective.findData(s["objective"])))
        self.scheduler.setCurrentIndex(max(0, self.scheduler.findData(s["scheduler"])))
        self.simulate.setChecked(bool(s["simulate"]))
        self.all_joint.setChecked(not s.get("prune", True))
        self._loading = was

    # ------------------------------------------------------------ live events
    def job_started(self) -> None:
        super().job_started()
        self.pareto_plot.clear_series()
        self.joint_plot.clear_series()

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
        for (plot, series), (xs, ys) in batches.items():
            (self.pareto_plot if plot == "pareto" else self.joint_plot).add_points(series, xs, ys)
        super().handle_events(rest)

    # ------------------------------------------------------------ result
    def show_result(self, result: dict[str, Any] | None) -> None:
        super().show_result(result)
        self.pareto_plot.clear_series()
        self.joint_plot.clear_series()
        self.gantt.clear()
        self.bw_plot.clear()
        self.res_plot.clear()
        self.gantt_bars = []
        if not result:
            return
        for name, front in result["pareto_fronts"].items():
            self.pareto_plot.add_points(name, [100 * p["avg_util"] for p in front], [p["fps"] for p in front])
        for series, key in (("peak", "peak"), ("contention-unaware (est.)", "contention_unaware_est"),
                            ("memory-aware", "memory_aware")):
            rows = [r for r in result["joint_points"] if r.get(key) is not None]
            if rows:
                self.joint_plot.add_points(series, [r["util"] for r in rows], [r[key] for r in rows])
        self._draw_schedule(result)
        self._draw_resources(result)

    def _draw_schedule(self, r: dict[str, Any]) -> None:
        sch = r["schedule"]
        names = r["cnns"]
        for i, name in enumerate(names):
            rows = [s for s in sch["subgraphs"] if s["cnn"] == name]
            if not rows:
                continue
            x0 = np.array([1e3 * s["start_s"] for s in rows])
            w = np.array([1e3 * s["duration_s"] for s in rows])
            color = PALETTE[i % len(PALETTE)]
            shade = [pg.mkBrush(pg.mkColor(color).lighter(100 + int(60 * (1 - s["slowdown"])))) for s in rows]
            bars = pg.BarGraphItem(x0=x0, y0=np.full(len(rows), i - 0.4), width=w, height=np.full(len(rows), 0.8),
                                   brushes=shade, pen=pg.mkPen("k", width=0.5))
            self.gantt.addItem(bars)
            self.gantt_bars.extend(rows)
        axis = self.gantt.getAxis("left")
        axis.setTicks([[(i, n) for i, n in enumerate(names)]])
        prof = sch["bandwidth_profile"]
        if prof:
            xs = [1e3 * t for t, _ in prof] + [1e3 * sch["makespan_s"]]
            ys = [u for _, u in prof]
            self.bw_plot.plot(xs, ys, stepMode="center", fillLevel=0, brush=(31, 119, 180, 90), pen=pg.mkPen("#1f77b4"))
            self.bw_plot.addLine(y=r["effective_bandwidth_gbps"], pen=pg.mkPen("#d62728", style=pg.QtCore.Qt.DashLine))
        fps = ", ".join(f"{n} {f:.2f}" for n, f in zip(names, r["predicted"]["fps"]))
        sim = r.get("simulated")
        self.sched_info.setText(
            f"{len(sch['subgraphs'])} subgraphs, repetitions {sch['repetitions']}, makespan {1e3 * sch['makespan_s']:.2f} ms, "
            f"period {1e3 * sch['period_s']:.2f} ms ({'optimal' if sch['optimal'] else sch['method']}); "
            f"predicted fps: {fps}; objective {r['predicted']['objective']:.4f}"
            + (f", simulated {sim['objective']:.4f}, baseline {r['baseline']['simulated']['objective']:.4f}" if sim else "")
            + ("; constraints checked: ok" if not sch["constraint_violations"] else "; CONSTRAINT VIOLATIONS"))

    def _draw_resources(self, r: dict[str, Any]) -> None:
        names = r["cnns"]
        avail = r["available"]
        n = len(names)
        width = 0.8 / max(n, 1)
        for i, (name, d) in enumerate(zip(names, r["design"]["per_cnn"])):
            ys = [100 * d["resources"][k] / avail[k] for k in RESOURCE_KEYS]
            xs = np.arange(len(RESOURCE_KEYS)) - 0.4 + width * (i + 0.5)
            self.res_plot.addItem(pg.BarGraphItem(x=xs, height=ys, width=width, brush=PALETTE[i % len(PALETTE)],
                                                  name=name))
        self.res_plot.getAxis("bottom").setTicks([[(k, key) for k, key in enumerate(RESOURCE_KEYS)]])

    def resource_bars(self) -> dict[str, list[float]]:
        """Heights of the resource bars per CNN (used by tests)."""
        out = {}
        for item in self.res_plot.listDataItems() + self.res_plot.getPlotItem().items:
            if isinstance(item, pg.BarGraphItem):
                out[item.opts.get("name")] = list(item.opts["height"])
        return out


PANEL = FcnnxPanel
