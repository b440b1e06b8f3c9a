"""Panel of the "cain" engine: search settings, Fig. 3-style live plots whose points are the programs
found (click one to show it), the shown program with its register allocation, the Goal-Bag at every
step, program / C++ export, and "Open in stepper" (the simulator tab replays the program)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (QFileDialog, QHBoxLayout, QLabel, QLineEdit, QPlainTextEdit, QPushButton, QSlider,
                               QSplitter, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from core.results import EngineResult
from core.atomic import atomic_write_text
from core.cain import plans
from core.cain.plans import ProgramPlan
from core.cain.engine import CainSettings, bound_text
from core.cain.lower_bound import verdict
from core.cain.result import CainResult
from core.engine import EngineSpec
from core.errors import InputError
from core.simulate.sources import settings_from_cain_result
from core.jobs import Event, MetricPoint, PartialResult
from core.project import Run
from core.settings import held
from core.workload import kernels_of
from gui.buttons import push_button
from gui.panels.base import PanelContext
from gui.panels.generic import GenericPanel
from gui.plotting import LIVE_REDRAW_S, LivePlot

POINT_BRUSH = pg.mkBrush("#ff7f0e")
SHOWN_BRUSH = pg.mkBrush("#d62728")


def _mono() -> QFont:
    f = QFont("monospace")
    f.setStyleHint(QFont.StyleHint.Monospace)
    return f


def _text_view() -> QPlainTextEdit:
    v = QPlainTextEdit()
    v.setReadOnly(True)
    v.setFont(_mono())
    return v


def matrix_text(m: Any) -> str:
    """A Goal matrix (or channels of them) as aligned rows."""
    if m is None:
        return "(no value)"
    if m and isinstance(m[0], list) and m[0] and isinstance(m[0][0], list):
        return "\n".join(f"z={z}:\n{matrix_text(c)}" for z, c in enumerate(m))
    return "\n".join(" ".join(f"{v:3d}" for v in row) for row in m)


class CainPanel(GenericPanel):
    engine_name = "cain"

    def __init__(self, engine: EngineSpec, context: PanelContext, parent: QWidget | None = None) -> None:
        super().__init__(engine, context, parent)
        self._plan: ProgramPlan | None = None             # the program on show
        self._plans: list[ProgramPlan | None] = []        # one per point of the plots, in the order found
        self._shown: int | None = None                    # index of the shown plan in _plans
        self._bound: int | None = None                    # the result's proven lower bound (version 2)
        b = self.binding
        b.build_into(self.controls, ["isa", "mode", "time_s", "traversal", "workers", "max_nodes", "d"])
        self.controls.addWidget(b.label("tolerance"))
        self.tolerance = b.bind("tolerance", QLineEdit())
        self.tolerance.setMaximumWidth(90)
        self.controls.addWidget(self.tolerance)        # was bound but never placed: a label without a box
        b.build_into(self.controls, ["seed_share", "seed"])
        self.controls.addStretch(1)
        self._build_views()
        self._sync_enabled()

    # ------------------------------------------------------------------ views
    def _live_views(self) -> tuple[QWidget, str, LivePlot]:
        plots = QWidget()
        pl = QHBoxLayout(plots)
        self.nodes_plot = LivePlot(title="Best length vs nodes explored", x_label="nodes", y_label="instructions",
                                   redraw_interval_s=LIVE_REDRAW_S)
        self.time_plot = LivePlot(title="Best length vs time", x_label="seconds", y_label="instructions",
                                  redraw_interval_s=LIVE_REDRAW_S)
        # the programs found, one clickable point each (on top of the live best-length lines)
        self.points: dict[str, pg.ScatterPlotItem] = {}
        for key, plot, unit in (("nodes", self.nodes_plot, "nodes"), ("time", self.time_plot, "s")):
            pts = pg.ScatterPlotItem(size=11, pen=pg.mkPen("k"), brush=POINT_BRUSH, hoverable=True,
                                     tip=lambda x, y, data, u=unit: f"{y:g} instructions after {x:g} {u}: "
                                                                    "click to show the program")
            pts.setZValue(10)
            pts.sigClicked.connect(self._point_clicked)
            plot.addItem(pts)
            self.points[key] = pts
            pl.addWidget(plot)
        # the two plots are the panel's live views (no generic plot); "Export plot…" exports the first
        return plots, "Best length", self.nodes_plot

    def _build_views(self) -> None:
        self.tabs.setCurrentIndex(0)
        self.program_tab = prog = QWidget()
        v = QVBoxLayout(prog)
        self.kernels_label = QLabel()
        self.kernels_label.setWordWrap(True)
        v.addWidget(self.kernels_label)
        self.plan_label = QLabel("No program yet.")
        self.plan_label.setWordWrap(True)
        v.addWidget(self.plan_label)
        split = QSplitter(Qt.Orientation.Horizontal)
        self.program_view = _text_view()
        split.addWidget(self.program_view)
        self.alloc_table = QTableWidget(0, 2)
        self.alloc_table.setHorizontalHeaderLabels(["kernel", "register"])
        split.addWidget(self.alloc_table)
        v.addWidget(split, 1)
        row = QHBoxLayout()
        self.best_button = push_button("Show the best", "Show the best program again (after clicking an earlier "
                                       "one in the plots)", lambda: self.select_program(len(self._plans) - 1))
        self.stepper_button = push_button("Open in stepper", "Replay this program in the simulator tab's stepper, "
                                          "checked against its approximated kernels", self.open_in_stepper)
        self.export_text_button = push_button("Export program…", "A program file the simulator reads (input and "
                                              "output registers in its header)", self.export_program)
        self.export_cpp_button = QPushButton("Export C++…")
        self.export_cpp_button.clicked.connect(self.export_cpp)
        for w in (self.best_button, self.stepper_button, self.export_text_button, self.export_cpp_button):
            w.setEnabled(False)
            row.addWidget(w)
        row.addStretch(1)
        v.addLayout(row)
        self.tabs.insertTab(1, prog, "Program")

        steps = QWidget()
        sv = QVBoxLayout(steps)
        srow = QHBoxLayout()
        self.step_slider = QSlider(Qt.Orientation.Horizontal)
        self.step_slider.setRange(0, 0)
        self.step_slider.valueChanged.connect(self._show_step)
        self.step_label = QLabel("step 0")
        srow.addWidget(QLabel("Step:"))
        srow.addWidget(self.step_slider, 1)
        srow.addWidget(self.step_label)
        sv.addLayout(srow)
        split2 = QSplitter(Qt.Orientation.Horizontal)
        self.bag_view = _text_view()
        self.reg_view = _text_view()
        split2.addWidget(self.bag_view)
        split2.addWidget(self.reg_view)
        sv.addWidget(split2, 1)
        self.tabs.insertTab(2, steps, "Goal-Bags")

        self.cpp_view = _text_view()
        self.tabs.insertTab(3, self.cpp_view, "C++")

    # ------------------------------------------------------------------ settings
    def settings_changed(self) -> None:
        self._sync_enabled()

    def _sync_enabled(self) -> None:
        """The tolerance only applies when d is chosen automatically."""
        self.tolerance.setEnabled(held(CainSettings, self.project.choice(self.engine.name).settings).d is None)

    # ------------------------------------------------------------------ live events
    def job_started(self) -> None:
        super().job_started()
        for plot in (self.nodes_plot, self.time_plot):
            plot.clear_series()
            plot.declare_series("best length")
        self._clear_points()
        self._plan = None
        self.plan_label.setText("Searching…")
        self._describe_workload()

    def _describe_workload(self) -> None:
        """The kernels of the run on show (its snapshot: what it ran with), else of the tab's choice."""
        try:
            if self.run is not None and self.run.workload is not None:
                ks = kernels_of(self.run.workload.value)
            else:
                ks = kernels_of(self.workload())
        except InputError:
            self.kernels_label.setText("Pick convolution kernels or an FPSP filter as the workload.")
            return
        self.kernels_label.setText(f"Kernels: {ks.name} — " + ", ".join(k.name for k in ks.kernels)
                                   + f" (over {ks.denominator})")

    def handle_events(self, events: list[Event]) -> None:
        batches: dict[str, tuple[list[float], list[float]]] = {}
        rest: list[Event] = []
        for ev in events:
            if isinstance(ev, MetricPoint):
                xs, ys = batches.setdefault(ev.plot, ([], []))
                xs.append(ev.x)
                ys.append(ev.y)
            else:
                rest.append(ev)
        for plot_name, (xs, ys) in batches.items():
            target = self.nodes_plot if plot_name == "nodes" else self.time_plot
            target.add_points("best length", xs, ys)
        found = len(self._plans)
        super().handle_events(rest)
        if len(self._plans) > found:     # one batch can bring several programs: show the last one only
            self.select_program(len(self._plans) - 1)

    def handle_partial(self, event: PartialResult) -> None:
        if isinstance(event.data, ProgramPlan):
            plan = event.data
            self._plans.append(plan)
            self._add_point(plan.length, plan.nodes, plan.time_s)

    # ------------------------------------------------------------------ the programs found
    def _clear_points(self) -> None:
        self._plans, self._shown = [], None
        for pts in self.points.values():
            pts.clear()

    def _add_point(self, length: int, nodes: int, time_s: float) -> None:
        """The point of the program last added to _plans (a streamed plan or a result's improvement)."""
        i = len(self._plans) - 1
        y = float(length)
        self.points["nodes"].addPoints([{"x": float(nodes), "y": y, "data": i}])
        self.points["time"].addPoints([{"x": float(time_s), "y": y, "data": i}])

    def _point_clicked(self, _item: Any, points: Any, _ev: Any = None) -> None:
        if len(points):
            self.select_program(int(points[0].data()))
            self.tabs.setCurrentWidget(self.program_tab)

    def select_program(self, index: int) -> bool:
        """Show the index-th program found (-1 or the last: the best) in the Program tab."""
        if not self._plans or not -len(self._plans) <= index < len(self._plans):
            return False
        index %= len(self._plans)
        plan = self._plans[index]
        if plan is None:
            self.context.status("This result was stored without that program; only the best one was kept.")
            return False
        self._shown = index
        for pts in self.points.values():
            pts.setBrush([SHOWN_BRUSH if p.data() == index else POINT_BRUSH for p in pts.points()])
        self._show_plan(plan)
        return True

    @property
    def shown_is_best(self) -> bool:
        return self._shown is not None and self._shown == len(self._plans) - 1

    # ------------------------------------------------------------------ drawing
    def _plan_title(self, plan: ProgramPlan) -> str:
        if self._shown is None:
            which = "Program"
        else:
            which = "Best program" if self.shown_is_best else f"Program {self._shown + 1} of {len(self._plans)}"
        n = len(plan.program)
        bound = "" if self._bound is None else f", {verdict(n, self._bound)}"
        by = f" by the {plan.strategy} search" if plan.strategy else ""
        return (f"{which}: {n} instructions{bound} (found{by} after {plan.nodes} "
                f"nodes, {plan.time_s} s, {plan.method}; verified by the exact interpreter)")

    def _show_plan(self, plan: ProgramPlan) -> None:
        self._plan = plan
        prog = plan.program
        self.plan_label.setText(self._plan_title(plan))
        self.program_view.setPlainText("\n".join(f"{i + 1:3d}  {p};" for i, p in enumerate(prog)))
        rows = [(f"input (channel {c})", r) for c, r in plan.input_registers.items()] + list(plan.outputs.items())
        self.alloc_table.setRowCount(len(rows))
        for i, (k, r) in enumerate(rows):
            self.alloc_table.setItem(i, 0, QTableWidgetItem(str(k)))
            self.alloc_table.setItem(i, 1, QTableWidgetItem(str(r)))
        n = max(len(plan.goal_bags or []), len(plan.register_goals or []))
        self.step_slider.setRange(0, max(0, n - 1))
        self.step_slider.setValue(max(0, n - 1))
        self._show_step(self.step_slider.value())
        try:
            self.cpp_view.setPlainText(plans.cpp_text(plan) if prog else "")
        except InputError as exc:
            self.cpp_view.setPlainText(f"// cannot write C++ for this program: {exc}")
        for w in (self.stepper_button, self.export_text_button, self.export_cpp_button):
            w.setEnabled(bool(prog))
        self.best_button.setEnabled(not self.shown_is_best and bool(self._plans))

    def _clear_plan(self, message: str) -> None:
        self._plan = None
        self.plan_label.setText(message)
        self.program_view.setPlainText("")
        self.cpp_view.setPlainText("")
        self.alloc_table.setRowCount(0)
        self.step_slider.setRange(0, 0)
        self._show_step(0)
        for w in (self.best_button, self.stepper_button, self.export_text_button, self.export_cpp_button):
            w.setEnabled(False)

    def _show_step(self, i: int) -> None:
        plan = self._plan
        bags = (plan.goal_bags if plan else None) or []
        regs = (plan.register_goals if plan else None) or []
        prog = plan.program if plan else []
        n = max(len(bags), len(regs))
        if not n or i >= n:
            self.step_label.setText("step 0")
            self.bag_view.setPlainText("" if not plan else "(Goal-Bags are kept for the best program only)")
            self.reg_view.setPlainText("")
            return
        what = "before the first instruction" if i == 0 else f"after {i}: {prog[i - 1]}"
        self.step_label.setText(f"step {i} / {n - 1} ({what})")
        if i < len(bags):
            text = [f"Goal-Bag ({len(bags[i])} Goals, Atom counts):"]
            for k, g in enumerate(bags[i]):
                text.append(f"G{k + 1}: {g.atoms} Atoms\n{matrix_text(g.matrix)}\n")
        else:
            text = ["(a one-by-one program: no simultaneous Goal-Bags; registers on the right)"]
        self.bag_view.setPlainText("\n".join(text))
        lines = ["Registers (the Goal each holds):"]
        if i < len(regs):
            for r, m in regs[i].items():
                lines.append(f"{r}:\n{matrix_text(m)}\n")
        self.reg_view.setPlainText("\n".join(lines))

    def show_result(self, result: EngineResult | None) -> None:
        super().show_result(result)
        self.nodes_plot.clear_series()
        self.time_plot.clear_series()
        self._clear_points()
        self._bound = None
        if result is None:
            self._clear_plan("No program yet.")
            return
        assert isinstance(result, CainResult)
        self._bound = result.bound
        imps = result.improvements
        if imps:
            end_nodes = float(result.nodes_explored or imps[-1].nodes)
            end_t = float(result.elapsed_s or imps[-1].time_s)
            self.nodes_plot.add_points("best length", [float(p.nodes) for p in imps] + [end_nodes],
                                       [float(p.length) for p in imps] + [float(imps[-1].length)])
            self.time_plot.add_points("best length", [float(p.time_s) for p in imps] + [end_t],
                                      [float(p.length) for p in imps] + [float(imps[-1].length)])
        for imp, plan in zip(imps, plans.plans_of(result)):
            self._plans.append(plan)
            self._add_point(imp.length, imp.nodes, imp.time_s)
        self.kernels_label.setText(f"Kernels: {result.filter} — d = {result.d}, "
                                   f"max coefficient error {result.max_abs_error}; {bound_text(result)}")
        if result.found and self._plans:
            self.select_program(len(self._plans) - 1)
        else:
            self._clear_plan("No program found within the budget.")

    def show_run(self, run: Run | None, **focus: Any) -> None:
        """Draw a run; a cancelled or failed one shows the best program it had found. `program=i`
        selects the i-th program found (as a click on its point does)."""
        if run is not None and run.result is not None:
            # its result redraws every view (the plots and the programs found, cleared first): what
            # the run streamed is not drawn before it only to be cleared (6-8 ms a run shown)
            self.run = run
            self.show_result(run.result)
        else:
            super().show_run(run, **focus)
        if run is None:
            self._clear_plan("No run yet: press Run to search.")
        elif run.result is None and run.status != "running":
            if self._plan is not None:
                self.plan_label.setText(f"Run {run.status}. {self._plan_title(self._plan)}")
            else:
                self._clear_plan(f"Run {run.status} before any program was found.")
        if "program" in focus and self.select_program(int(focus["program"])):
            self.tabs.setCurrentWidget(self.program_tab)

    # ------------------------------------------------------------------ hand-over and export
    def open_in_stepper(self) -> bool:
        """Open the shown program in the simulator tab's stepper (the window switches tabs)."""
        if not self._plan:
            return False
        try:
            update = settings_from_cain_result(self._plan)
        except InputError as exc:
            self.context.status(f"Cannot open this program in the stepper: {exc.message}")
            return False
        run = self.project.shown(self.engine.name)       # the program's kernels: the workload it ran on
        self.context.open_in_simulator(update, run.workload if run else None, run.id if run else "")
        return True

    def program_text(self) -> str:
        """The shown program as a program file (core.scamp5.program_file), as the simulator reads it."""
        return "" if self._plan is None else plans.program_text(self._plan)

    def export_program(self) -> None:
        if not self._plan:
            return
        path, _ = QFileDialog.getSaveFileName(self, "Export program", "cain-program.txt", "Text (*.txt)")
        if path:
            atomic_write_text(Path(path), self.program_text())

    def export_cpp(self) -> None:
        text = self.cpp_view.toPlainText()
        if not text:
            return
        path, _ = QFileDialog.getSaveFileName(self, "Export C++", "cain-kernel.cpp", "C++ (*.cpp *.hpp)")
        if path:
            atomic_write_text(Path(path), text)


PANEL = CainPanel
