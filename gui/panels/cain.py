"""Panel of the "cain" engine: search settings, Fig. 3-style live plots, the best program with its
register allocation, the Goal-Bag at every step, and program / C++ export."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QDoubleValidator, QFont
from PySide6.QtWidgets import (QComboBox, QDoubleSpinBox, QFileDialog, QHBoxLayout, QLabel, QLineEdit, QPlainTextEdit,
                               QPushButton, QSlider, QSpinBox, QSplitter, QTableWidget, QTableWidgetItem,
                               QVBoxLayout, QWidget)

from core.atomic import atomic_write_text
from core.cain.engine import MODES, default_settings
from core.cain.search import TRAVERSALS
from core.engine import EngineSpec
from core.jobs import Event, MetricPoint, PartialResult
from core.scamp5.isa import INSTRUCTION_SETS
from core.workload import FpspFilter, KernelSet
from gui.panels.base import PanelContext
from gui.panels.generic import GenericPanel
from gui.plotting import LivePlot


def _mono() -> QFont:
    f = QFont("monospace")
    f.setStyleHint(QFont.StyleHint.Monospace)
    return f


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
        self._extra: dict[str, Any] = {}
        self._plan: dict[str, Any] | None = None
        c = self.controls
        c.addWidget(QLabel("Set:"))
        self.isa = QComboBox()
        for name in INSTRUCTION_SETS:
            self.isa.addItem(name, name)
        self.isa.setToolTip("Instruction set: all / basic (Cain's Table 1) or auke (AUKE's set, one kernel at a time)")
        c.addWidget(self.isa)
        c.addWidget(QLabel("Mode:"))
        self.mode = QComboBox()
        for m in MODES:
            self.mode.addItem({"cain": "simultaneous", "auke": "one by one"}[m], m)
        self.mode.setToolTip("simultaneous (Cain) or one kernel at a time, programs concatenated (baseline)")
        c.addWidget(self.mode)
        c.addWidget(QLabel("Registers:"))
        self.registers = QSpinBox()
        self.registers.setRange(0, 26)
        self.registers.setSpecialValueText("target")
        self.registers.setToolTip("Analogue registers; 'target' uses the SCAMP-5 target's count (6)")
        c.addWidget(self.registers)
        c.addWidget(QLabel("Time (s):"))
        self.time_s = QDoubleSpinBox()
        self.time_s.setRange(0.5, 3600.0)
        self.time_s.setDecimals(1)
        c.addWidget(self.time_s)
        c.addWidget(QLabel("Traversal:"))
        self.traversal = QComboBox()
        for t in TRAVERSALS:
            self.traversal.addItem(t, t)
        c.addWidget(self.traversal)
        c.addWidget(QLabel("Workers:"))
        self.workers = QSpinBox()
        self.workers.setRange(1, 16)
        c.addWidget(self.workers)
        c.addWidget(QLabel("d:"))
        self.d = QSpinBox()
        self.d.setRange(-1, 10)
        self.d.setSpecialValueText("auto")
        self.d.setToolTip("Coefficients become multiples of 1/2^d; 'auto' picks the smallest exact d")
        c.addWidget(self.d)
        c.addWidget(QLabel("Tolerance:"))
        self.tolerance = QLineEdit()
        self.tolerance.setValidator(QDoubleValidator(0.0, 1e6, 12))
        self.tolerance.setMaximumWidth(90)
        self.tolerance.setToolTip("With d = auto: the largest error allowed per coefficient "
                                  "(e.g. 0.01); 1e-9 asks for an exact approximation")
        c.addWidget(self.tolerance)
        c.addStretch(1)
        for w in (self.isa, self.mode, self.traversal):
            w.currentIndexChanged.connect(self._changed)
        for w in (self.registers, self.workers, self.d):
            w.valueChanged.connect(self._changed)
        self.time_s.valueChanged.connect(self._changed)
        self.tolerance.editingFinished.connect(self._changed)
        self.d.valueChanged.connect(lambda v: self.tolerance.setEnabled(v < 0))
        self._build_views()
        self.set_settings(default_settings())

    # ------------------------------------------------------------------ views
    def _build_views(self) -> None:
        plots = QWidget()
        pl = QHBoxLayout(plots)
        self.nodes_plot = LivePlot(title="Best length vs nodes explored", x_label="nodes", y_label="instructions")
        self.time_plot = LivePlot(title="Best length vs time", x_label="seconds", y_label="instructions")
        pl.addWidget(self.nodes_plot)
        pl.addWidget(self.time_plot)
        self.tabs.insertTab(0, plots, "Best length")
        # the two plots above replace the generic single plot; "Export plot…" exports the first
        self.tabs.removeTab(self.tabs.indexOf(self.plot))
        self.plot = self.nodes_plot
        self.tabs.setCurrentIndex(0)

        prog = QWidget()
        v = QVBoxLayout(prog)
        self.kernels_label = QLabel()
        self.kernels_label.setWordWrap(True)
        v.addWidget(self.kernels_label)
        self.plan_label = QLabel("No program yet.")
        v.addWidget(self.plan_label)
        split = QSplitter(Qt.Orientation.Horizontal)
        self.program_view = QPlainTextEdit()
        self.program_view.setReadOnly(True)
        self.program_view.setFont(_mono())
        split.addWidget(self.program_view)
        self.alloc_table = QTableWidget(0, 2)
        self.alloc_table.setHorizontalHeaderLabels(["kernel", "register"])
        split.addWidget(self.alloc_table)
        v.addWidget(split, 1)
        row = QHBoxLayout()
        self.export_text_button = QPushButton("Export program…")
        self.export_text_button.clicked.connect(self.export_program)
        self.export_cpp_button = QPushButton("Export C++…")
        self.export_cpp_button.clicked.connect(self.export_cpp)
        for b in (self.export_text_button, self.export_cpp_button):
            b.setEnabled(False)
            row.addWidget(b)
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
        self.bag_view = QPlainTextEdit()
        self.bag_view.setReadOnly(True)
        self.bag_view.setFont(_mono())
        self.reg_view = QPlainTextEdit()
        self.reg_view.setReadOnly(True)
        self.reg_view.setFont(_mono())
        split2.addWidget(self.bag_view)
        split2.addWidget(self.reg_view)
        sv.addWidget(split2, 1)
        self.tabs.insertTab(2, steps, "Goal-Bags")

        self.cpp_view = QPlainTextEdit()
        self.cpp_view.setReadOnly(True)
        self.cpp_view.setFont(_mono())
        self.tabs.insertTab(3, self.cpp_view, "C++")

    # ------------------------------------------------------------------ settings
    def _changed(self, *_: Any) -> None:
        self.settings_changed.emit()

    def settings(self) -> dict[str, Any]:
        s = dict(self._extra)
        s.update({
            "isa": self.isa.currentData(), "mode": self.mode.currentData(),
            "registers": self.registers.value() or None, "time_s": float(self.time_s.value()),
            "traversal": self.traversal.currentData(), "workers": self.workers.value(),
            "d": None if self.d.value() < 0 else self.d.value(),
        })
        try:
            s["tolerance"] = max(0.0, float(self.tolerance.text()))
        except ValueError:      # left empty or half-typed: keep what was set before
            pass
        return s

    def set_settings(self, settings: dict[str, Any]) -> None:
        s = default_settings()
        s.update(settings)
        self._extra = {k: v for k, v in s.items() if k in ("max_nodes", "tolerance")}
        self.tolerance.setText(f"{float(s['tolerance']):g}")
        self.tolerance.setEnabled(s["d"] is None)
        widgets = (self.isa, self.mode, self.registers, self.time_s, self.traversal, self.workers, self.d)
        for w in widgets:
            w.blockSignals(True)
        try:
            self.isa.setCurrentIndex(max(0, self.isa.findData(s["isa"])))
            self.mode.setCurrentIndex(max(0, self.mode.findData(s["mode"])))
            self.registers.setValue(int(s["registers"] or 0))
            self.time_s.setValue(float(s["time_s"]))
            self.traversal.setCurrentIndex(max(0, self.traversal.findData(s["traversal"])))
            self.workers.setValue(int(s["workers"]))
            self.d.setValue(-1 if s["d"] is None else int(s["d"]))
        finally:
            for w in widgets:
                w.blockSignals(False)

    # ------------------------------------------------------------------ live events
    def job_started(self) -> None:
        super().job_started()
        self.nodes_plot.clear_series()
        self.time_plot.clear_series()
        self._plan = None
        self.plan_label.setText("Searching…")
        self._describe_workload()

    def _describe_workload(self) -> None:
        w = self.context.workload()
        ks = w.kernel_set() if isinstance(w, FpspFilter) else w if isinstance(w, KernelSet) else None
        if ks is None:
            self.kernels_label.setText("Pick convolution kernels or an FPSP filter as the workload.")
        else:
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
        super().handle_events(rest)

    def handle_partial(self, event: PartialResult) -> None:
        if event.kind == "plan":
            self._show_plan(event.data)

    # ------------------------------------------------------------------ drawing
    def _show_plan(self, plan: dict[str, Any], result: dict[str, Any] | None = None) -> None:
        self._plan = plan
        prog = plan.get("program", [])
        self.plan_label.setText(f"Best program: {len(prog)} instructions "
                                f"(found after {plan.get('nodes', '?')} nodes, {plan.get('time_s', '?')} s; "
                                f"verified by the exact interpreter)")
        self.program_view.setPlainText("\n".join(f"{i + 1:3d}  {p};" for i, p in enumerate(prog)))
        outs = plan.get("output_registers") or {}
        inputs = plan.get("input_registers") or {}
        rows = [(f"input (channel {c})", r) for c, r in inputs.items()] + list(outs.items())
        self.alloc_table.setRowCount(len(rows))
        for i, (k, r) in enumerate(rows):
            self.alloc_table.setItem(i, 0, QTableWidgetItem(str(k)))
            self.alloc_table.setItem(i, 1, QTableWidgetItem(str(r)))
        n = max(len(plan.get("goal_bags", [])), len(plan.get("register_goals", [])))
        self.step_slider.setRange(0, max(0, n - 1))
        self.step_slider.setValue(max(0, n - 1))
        self._show_step(self.step_slider.value())
        for b in (self.export_text_button, self.export_cpp_button):
            b.setEnabled(bool(prog))
        if result is not None:
            self.cpp_view.setPlainText(result.get("cpp", ""))

    def _show_step(self, i: int) -> None:
        plan = self._plan or {}
        bags = plan.get("goal_bags", [])
        regs = plan.get("register_goals", [])
        prog = plan.get("program", [])
        n = max(len(bags), len(regs))
        if not n or i >= n:
            self.step_label.setText("step 0")
            self.bag_view.setPlainText("")
            self.reg_view.setPlainText("")
            return
        what = "before the first instruction" if i == 0 else f"after {i}: {prog[i - 1]}"
        self.step_label.setText(f"step {i} / {n - 1} ({what})")
        if i < len(bags):
            text = [f"Goal-Bag ({len(bags[i])} Goals, Atom counts):"]
            for k, g in enumerate(bags[i]):
                text.append(f"G{k + 1}: {g['atoms']} Atoms\n{matrix_text(g['matrix'])}\n")
        else:
            text = ["(a one-by-one program: no simultaneous Goal-Bags; registers on the right)"]
        self.bag_view.setPlainText("\n".join(text))
        lines = ["Registers (the Goal each holds):"]
        if i < len(regs):
            for r, m in regs[i].items():
                lines.append(f"{r}:\n{matrix_text(m)}\n")
        self.reg_view.setPlainText("\n".join(lines))

    def show_result(self, result: dict[str, Any] | None) -> None:
        super().show_result(result)
        self.nodes_plot.clear_series()
        self.time_plot.clear_series()
        if result is None:
            self._plan = None
            self.plan_label.setText("No program yet.")
            self.program_view.setPlainText("")
            self.cpp_view.setPlainText("")
            self.alloc_table.setRowCount(0)
            self._show_step(0)
            for b in (self.export_text_button, self.export_cpp_button):
                b.setEnabled(False)
            return
        imps = result.get("improvements", [])
        if imps:
            end_nodes = float(result.get("nodes_explored") or imps[-1]["nodes"])
            end_t = float(result.get("elapsed_s") or imps[-1]["time_s"])
            self.nodes_plot.add_points("best length", [float(p["nodes"]) for p in imps] + [end_nodes],
                                       [float(p["length"]) for p in imps] + [float(imps[-1]["length"])])
            self.time_plot.add_points("best length", [float(p["time_s"]) for p in imps] + [end_t],
                                      [float(p["length"]) for p in imps] + [float(imps[-1]["length"])])
        self.kernels_label.setText(f"Kernels: {result.get('filter', '')} — d = {result.get('d')}, "
                                   f"max coefficient error {result.get('max_abs_error')}")
        if result.get("found"):
            plan = {"program": result.get("program", []), "output_registers": result.get("outputs", {}),
                    "input_registers": result.get("input_registers", {}),
                    "nodes": imps[-1]["nodes"] if imps else result.get("nodes_explored"),
                    "time_s": result.get("time_to_best_s"), "goal_bags": result.get("goal_bags", []),
                    "register_goals": result.get("register_goals", [])}
            self._show_plan(plan, result)
        else:
            self._plan = None
            self.plan_label.setText("No program found within the budget.")
            self.program_view.setPlainText("")
            self.cpp_view.setPlainText("")

    # ------------------------------------------------------------------ export
    def program_text(self) -> str:
        plan = self._plan or {}
        outs = plan.get("output_registers") or {}
        head = [f"# input: {', '.join(str(r) for r in (plan.get('input_registers') or {'0': 'A'}).values())}",
                f"# outputs: {', '.join(f'{k}={r}' for k, r in outs.items())}"]
        return "\n".join(head + [f"{p};" for p in plan.get("program", [])]) + "\n"

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
