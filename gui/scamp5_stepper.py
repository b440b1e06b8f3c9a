"""The instruction-stepping view of the SCAMP-5 simulator.

It shows a replayed run (core.fpsp_sim.replay): the program listing with the current macro
highlighted, every register plane (A.., NEWS) as an image on one shared colour scale (or its
change from the previous step), the bus operations of the current macro, and a zoom on one PE and
its four neighbours with each register's value and the Goal (kernel) it holds.

All states are computed before the first step is shown (the run keeps one snapshot per macro), so
stepping forward or back only redraws images and never waits for the simulator.
"""

from __future__ import annotations

import html
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QKeySequence, QShortcut
from PySide6.QtWidgets import (QCheckBox, QDoubleSpinBox, QFileDialog, QFrame, QGridLayout, QGroupBox, QHBoxLayout,
                               QLabel, QListWidget, QListWidgetItem, QPushButton, QScrollArea, QSpinBox, QSplitter,
                               QVBoxLayout, QWidget)

from core.fpsp_sim.replay import Replay
from sims.scamp5.bus import NEWS

CMAP = pg.ColorMap([0.0, 0.5, 1.0], [(38, 76, 217), (255, 255, 255), (217, 38, 38)])
HIGHLIGHT = QColor(255, 230, 140)


class _Listing(QListWidget):
    """The program listing; stepping keys go to the stepper before list navigation."""

    key_handler = None

    def keyPressEvent(self, event: Any) -> None:  # noqa: N802 (Qt name)
        if self.key_handler is not None and self.key_handler(event):
            event.accept()
            return
        super().keyPressEvent(event)


class RegisterGrid(pg.GraphicsLayoutWidget):
    """One image per register plane, shared colour levels, a marker on the chosen PE."""

    pe_clicked = Signal(int, int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent=parent)
        self.setBackground("w")
        self.images: dict[str, pg.ImageItem] = {}
        self.markers: dict[str, pg.ScatterPlotItem] = {}
        self.titles: dict[str, pg.LabelItem] = {}
        self._lut = CMAP.getLookupTable(0.0, 1.0, 256)

    def setup(self, planes: list[str], columns: int = 4) -> None:
        self.clear()
        self.images.clear()
        self.markers.clear()
        self.titles.clear()
        for i, name in enumerate(planes):
            r, c = divmod(i, columns)
            title = self.addLabel(name, row=2 * r, col=c, color="k")
            vb = self.addViewBox(row=2 * r + 1, col=c, lockAspect=True, enableMenu=False)
            vb.invertY(True)
            img = pg.ImageItem()
            img.setLookupTable(self._lut)
            vb.addItem(img)
            marker = pg.ScatterPlotItem(size=9, pen=pg.mkPen("k", width=1.5), brush=None, symbol="s")
            vb.addItem(marker)
            img.mouseClickEvent = self._click_handler(img)   # type: ignore[method-assign]
            self.images[name], self.markers[name], self.titles[name] = img, marker, title

    def _click_handler(self, img: pg.ImageItem):
        def handler(ev: Any) -> None:
            pos = ev.pos()
            self.pe_clicked.emit(int(pos.y()), int(pos.x()))
            ev.accept()
        return handler

    def show_planes(self, planes: dict[str, np.ndarray], limit: float, pe: tuple[int, int]) -> None:
        for name, img in self.images.items():
            # Column-major for pyqtgraph: x = column, y = row (row 0 at the top via invertY).
            img.setImage(planes[name].T, autoLevels=False, levels=(-limit, limit))
            self.markers[name].setData([pe[1] + 0.5], [pe[0] + 0.5])


def robust_limit(planes, quantile: float = 0.995) -> float:
    """One symmetric colour limit for many planes: the largest per-plane 99.5 % quantile of |value|
    (a few extreme PEs, e.g. at the edges, do not wash out the rest)."""
    best = 0.0
    for p in planes:
        sample = np.abs(p[::2, ::2])
        if sample.size:
            best = max(best, float(np.quantile(sample, quantile)))
    return best or 1.0


def _frac(v: Any) -> str:
    f = Fraction(v)
    return "0" if f == 0 else str(f)


def goal_html(goal: Any) -> str:
    """A Goal (SymKernel) as a small HTML matrix, rows north to south."""
    if goal is None:
        return "<i>undefined</i>"
    if not goal.terms:
        return "0"
    rows = goal.to_matrix(max(goal.radius(), 1))
    cells = "".join("<tr>" + "".join(f"<td align='right'>{_frac(v)}</td>" for v in row) + "</tr>" for row in rows)
    return f"<table cellspacing='0' cellpadding='1' border='1'>{cells}</table>"


class Scamp5Stepper(QWidget):
    """Step through a replayed run; see the module docstring."""

    step_changed = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.replay: Replay | None = None
        self.step = 0
        self._drawn = False
        self.pe = (0, 0)
        self.limit = 1.0
        self.diff_limit = 1.0
        self.planes: list[str] = []
        self.timer = QTimer(self)
        self.timer.timeout.connect(self._tick)

        outer = QVBoxLayout(self)
        self.message = QLabel("Run the simulator (or press 'Step through') to step through a program.")
        self.message.setWordWrap(True)
        outer.addWidget(self.message)
        split = QSplitter(Qt.Orientation.Horizontal)
        outer.addWidget(split, 1)

        # ---- left: listing and navigation
        left = QWidget()
        lv = QVBoxLayout(left)
        lv.setContentsMargins(0, 0, 0, 0)
        self.listing = _Listing()
        self.listing.setFont(self._mono())
        # Selecting a line (click, Up/Down, Home/End in the listing) jumps to it.
        self.listing.currentRowChanged.connect(lambda row: self.set_step(row) if row >= 0 else None)
        lv.addWidget(self.listing, 1)
        nav = QGridLayout()        # two by two, so the listing column stays narrow
        self.first_button = self._button("|◀ First", "Back to the input (Home)", lambda: self.set_step(0))
        self.back_button = self._button("◀ Back", "Step back (Left)", self.step_back)
        self.forward_button = self._button("Next ▶", "Step forward (Right)", self.step_forward)
        self.end_button = self._button("End ▶|", "Run to the end (End)", self.run_to_end)
        for i, b in enumerate((self.first_button, self.back_button, self.forward_button, self.end_button)):
            nav.addWidget(b, i // 2, i % 2)
        lv.addLayout(nav)
        play = QHBoxLayout()
        self.play_button = self._button("Play", "Play / pause (Space)", self.toggle_play)
        self.speed = QDoubleSpinBox()
        self.speed.setRange(0.25, 50.0)
        self.speed.setValue(4.0)
        self.speed.setSuffix(" instr/s")
        self.speed.valueChanged.connect(self._speed_changed)
        play.addWidget(self.play_button)
        play.addWidget(self.speed)
        lv.addLayout(play)
        jump = QHBoxLayout()
        jump.addWidget(QLabel("Line:"))
        self.jump_spin = QSpinBox()
        self.jump_spin.setRange(0, 0)
        self.jump_spin.setToolTip("Instruction number to jump to (Ctrl+G); 0 is the input")
        jump.addWidget(self.jump_spin)
        self.jump_button = self._button("Go", "Jump to this line", lambda: self.set_step(self.jump_spin.value()))
        jump.addWidget(self.jump_button)
        lv.addLayout(jump)
        self.position = QLabel("")
        lv.addWidget(self.position)
        split.addWidget(left)

        # ---- centre: register planes
        centre = QWidget()
        cv = QVBoxLayout(centre)
        cv.setContentsMargins(0, 0, 0, 0)
        self.grid = RegisterGrid()
        self.grid.pe_clicked.connect(self.set_pe)
        cv.addWidget(self.grid, 1)
        opts = QVBoxLayout()
        self.diff_box = QCheckBox("Show change from the previous step")
        self.diff_box.toggled.connect(lambda _on: self._redraw())
        opts.addWidget(self.diff_box)
        self.readout_box = QCheckBox("As read out (with noise)")
        self.readout_box.setToolTip("Emulator noise model: add the accumulated noise, drawn as on read-out "
                                    "(the same draw every time for a given step)")
        self.readout_box.toggled.connect(lambda _on: self._redraw())
        opts.addWidget(self.readout_box)
        self.scale_label = QLabel("")
        self.scale_label.setWordWrap(True)
        opts.addWidget(self.scale_label)
        cv.addLayout(opts)
        split.addWidget(centre)

        # ---- right: bus operations, PE zoom, export
        right = QWidget()
        rv = QVBoxLayout(right)
        rv.setContentsMargins(0, 0, 0, 0)
        bus_box = QGroupBox("Bus operations of this instruction")
        bl = QVBoxLayout(bus_box)
        self.bus_list = QListWidget()
        self.bus_list.setFont(self._mono())
        bl.addWidget(self.bus_list)
        rv.addWidget(bus_box, 1)
        pe_box = QGroupBox("Processing element and its neighbours")
        pl = QGridLayout(pe_box)
        pl.addWidget(QLabel("row"), 0, 0)
        self.pe_row = QSpinBox()
        pl.addWidget(self.pe_row, 0, 1)
        pl.addWidget(QLabel("column"), 0, 2)
        self.pe_col = QSpinBox()
        pl.addWidget(self.pe_col, 0, 3)
        self.pe_row.valueChanged.connect(lambda v: self.set_pe(v, self.pe_col.value()))
        self.pe_col.valueChanged.connect(lambda v: self.set_pe(self.pe_row.value(), v))
        self.pe_view = QLabel("")
        self.pe_view.setTextFormat(Qt.TextFormat.RichText)
        self.pe_view.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.pe_view.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        pe_scroll = QScrollArea()      # the neighbourhood tables may be wider than the pane
        pe_scroll.setWidgetResizable(True)
        pe_scroll.setFrameShape(QFrame.Shape.NoFrame)
        pe_scroll.setWidget(self.pe_view)
        pl.addWidget(pe_scroll, 1, 0, 1, 4)
        rv.addWidget(pe_box, 2)
        ex = QHBoxLayout()
        self.export_png_button = self._button("Export view PNG…", "Save this view as a PNG image", self.ask_export_view)
        self.export_run_button = self._button("Export run…", "Save every step as a GIF or numbered PNGs",
                                              self.ask_export_run)
        ex.addWidget(self.export_png_button)
        ex.addWidget(self.export_run_button)
        rv.addLayout(ex)
        split.addWidget(right)
        split.setSizes([240, 520, 480])
        for i, stretch in enumerate((0, 1, 1)):
            split.setStretchFactor(i, stretch)

        for keys, slot in ((("Right", "N"), self.step_forward), (("Left", "P"), self.step_back),
                           (("Home",), lambda: self.set_step(0)), (("End",), self.run_to_end),
                           (("Space",), self.toggle_play), (("Ctrl+G",), self._focus_jump)):
            for key in keys:
                sc = QShortcut(QKeySequence(key), self)
                sc.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
                sc.activated.connect(slot)
        # The same keys when the shortcut map is not consulted (e.g. the window is not active):
        # the listing and the stepper itself handle them in keyPressEvent.
        self._keys = {Qt.Key.Key_Right: self.step_forward, Qt.Key.Key_N: self.step_forward,
                      Qt.Key.Key_Left: self.step_back, Qt.Key.Key_P: self.step_back,
                      Qt.Key.Key_Space: self.toggle_play}
        self.listing.key_handler = self.handle_key
        self._set_enabled(False)

    def handle_key(self, event: Any) -> bool:
        """Stepping keys; True when the key was one of them."""
        mods = event.modifiers()
        if event.key() == Qt.Key.Key_G and mods & Qt.KeyboardModifier.ControlModifier:
            self._focus_jump()
            return True
        slot = self._keys.get(event.key())
        if slot is not None and not (mods & (Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier)):
            slot()
            return True
        return False

    def keyPressEvent(self, event: Any) -> None:  # noqa: N802 (Qt name)
        if self.handle_key(event):
            event.accept()
        else:
            super().keyPressEvent(event)

    # ------------------------------------------------------------------ helpers
    @staticmethod
    def _mono():
        from PySide6.QtGui import QFontDatabase

        return QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)

    def _button(self, text: str, tip: str, slot) -> QPushButton:
        b = QPushButton(text)
        b.setToolTip(tip)
        b.clicked.connect(slot)
        return b

    def _set_enabled(self, on: bool) -> None:
        for w in (self.first_button, self.back_button, self.forward_button, self.end_button, self.play_button,
                  self.jump_button, self.jump_spin, self.export_png_button, self.export_run_button,
                  self.diff_box, self.pe_row, self.pe_col):
            w.setEnabled(on)
        self.readout_box.setEnabled(bool(on and self.replay is not None and self.replay.run.noise.accumulate))

    def _focus_jump(self) -> None:
        self.jump_spin.setFocus()
        self.jump_spin.selectAll()

    @property
    def steps(self) -> int:
        """Number of macros (states are 0..steps)."""
        return 0 if self.replay is None else len(self.replay.run.records) - 1

    # ------------------------------------------------------------------ loading
    def clear(self, message: str = "") -> None:
        self.stop()
        self.replay = None
        self.listing.clear()
        self.bus_list.clear()
        self.pe_view.setText("")
        self.grid.setup([])
        self._set_enabled(False)
        self.message.setText(message or "Run the simulator to step through a program.")

    def load(self, replay: Replay) -> None:
        """Show a replayed run; computes the shared colour scales once."""
        self.stop()
        self.replay = replay
        run = replay.run
        self.planes = list(run.registers) + [NEWS]
        self.limit = robust_limit(rec.state.values[p] for rec in run.records for p in self.planes)
        self.diff_limit = robust_limit(run.records[i].state.values[p] - run.records[i - 1].state.values[p]
                                       for i in range(1, len(run.records)) for p in self.planes)
        self.listing.clear()
        self.listing.addItem(QListWidgetItem(f"{0:>3}  (input in {run.input_register}: {replay.image_description})"))
        for i, ins in enumerate(run.program, start=1):
            self.listing.addItem(QListWidgetItem(f"{i:>3}  {ins}"))
        rows, cols = run.final.values[run.registers[0]].shape
        self.pe_row.setRange(0, rows - 1)
        self.pe_col.setRange(0, cols - 1)
        self.jump_spin.setRange(0, self.steps)
        self.grid.setup(self.planes)
        noise = ("noise on (emulator model: the planes show register contents; the accumulated noise "
                 "is drawn when a register is read out, see Outputs)" if run.noise.accumulate
                 else "noise on" if run.noise.enabled else "exact (noise off)")
        self.message.setText(f"{replay.program.label}: {self.steps} instructions, {run.bus_steps()} bus operations, "
                             f"{rows}x{cols} PEs, {noise}. Outputs: {', '.join(replay.program.output_registers) or '-'}."
                             f" Keys: Left/Right step, Home/End, Space play, Ctrl+G jump; click a pixel to zoom on it.")
        self._set_enabled(True)
        self.pe = (min(self.pe[0], rows - 1), min(self.pe[1], cols - 1))
        if self.pe == (0, 0):
            self.pe = (rows // 2, cols // 2)
        self.pe_row.blockSignals(True)
        self.pe_col.blockSignals(True)
        self.pe_row.setValue(self.pe[0])
        self.pe_col.setValue(self.pe[1])
        self.pe_row.blockSignals(False)
        self.pe_col.blockSignals(False)
        self.step = -1
        self._drawn = False
        self.set_step(0)

    # ------------------------------------------------------------------ stepping
    def set_step(self, step: int) -> None:
        if self.replay is None:
            return
        step = max(0, min(int(step), self.steps))
        if step == self.step and self._drawn:
            return
        changed = step != self.step
        previous = self.step
        self.step = step
        if 0 <= previous < self.listing.count() and previous != step:
            self.listing.item(previous).setBackground(QBrush())
        self.listing.item(step).setBackground(QBrush(HIGHLIGHT))
        if self.listing.currentRow() != step:
            self.listing.setCurrentRow(step)       # re-enters set_step with the same step: no-op
        self.listing.scrollToItem(self.listing.item(step))
        self.jump_spin.setValue(step)
        rec = self.replay.run.records[step]
        self.bus_list.clear()
        if rec.instr is None:
            self.bus_list.addItem(f"sensor image -> {self.replay.run.input_register}")
        for k, op in enumerate(rec.bus_ops, start=1):
            self.bus_list.addItem(f"{k}. {op}    {op.describe()}")
        self.position.setText(f"step {step} of {self.steps}")
        self._redraw()
        self._drawn = True
        if changed:
            self.step_changed.emit(step)

    def step_forward(self) -> None:
        self.set_step(self.step + 1)

    def step_back(self) -> None:
        self.set_step(self.step - 1)

    def run_to_end(self) -> None:
        self.stop()
        self.set_step(self.steps)

    def toggle_play(self) -> None:
        if self.timer.isActive():
            self.stop()
        elif self.replay is not None:
            if self.step >= self.steps:
                self.set_step(0)
            self.timer.start(int(1000 / self.speed.value()))
            self.play_button.setText("Pause")

    def stop(self) -> None:
        self.timer.stop()
        self.play_button.setText("Play")

    def _speed_changed(self, v: float) -> None:
        if self.timer.isActive():
            self.timer.setInterval(int(1000 / v))

    def _tick(self) -> None:
        if self.step < self.steps:
            self.step_forward()
        if self.step >= self.steps:
            self.stop()

    # ------------------------------------------------------------------ drawing
    def values_at(self, step: int) -> dict[str, np.ndarray]:
        """The planes after macro `step`: register contents, or as read out when that is chosen."""
        assert self.replay is not None
        run = self.replay.run
        if self.readout_box.isChecked() and run.noise.accumulate:
            return {p: run.read_out(p, step) for p in self.planes}
        return run.records[step].state.values

    def current_planes(self) -> dict[str, np.ndarray]:
        assert self.replay is not None
        now = self.values_at(self.step)
        if not self.diff_box.isChecked():
            return now
        prev = self.values_at(max(self.step - 1, 0))
        return {p: now[p] - prev[p] for p in self.planes}

    def _redraw(self) -> None:
        if self.replay is None:
            return
        diff = self.diff_box.isChecked()
        limit = self.diff_limit if diff else self.limit
        self.grid.show_planes(self.current_planes(), limit, self.pe)
        what = "change from the previous step" if diff else "value"
        self.scale_label.setText(f"colour scale ({what}, all registers): blue -{limit:.3g} … white 0 … red +{limit:.3g}")
        self._update_pe()

    def set_pe(self, row: int, col: int) -> None:
        if self.replay is None:
            return
        rows, cols = self.replay.run.final.values[self.planes[0]].shape
        if not (0 <= row < rows and 0 <= col < cols):
            return
        self.pe = (row, col)
        for spin, v in ((self.pe_row, row), (self.pe_col, col)):
            spin.blockSignals(True)
            spin.setValue(v)
            spin.blockSignals(False)
        self._redraw()

    def pe_values(self) -> dict[str, dict[str, float | None]]:
        """Values of every plane at the chosen PE (C) and its neighbours N, E, S, W (None off the array)."""
        assert self.replay is not None
        values = self.values_at(self.step)
        r, c = self.pe
        out: dict[str, dict[str, float | None]] = {}
        for p in self.planes:
            v = values[p]
            cell: dict[str, float | None] = {}
            for key, (dr, dc) in (("C", (0, 0)), ("N", (-1, 0)), ("E", (0, 1)), ("S", (1, 0)), ("W", (0, -1))):
                rr, cc = r + dr, c + dc
                cell[key] = float(v[rr, cc]) if 0 <= rr < v.shape[0] and 0 <= cc < v.shape[1] else None
            out[p] = cell
        return out

    def _update_pe(self) -> None:
        assert self.replay is not None
        goals = self.replay.goals[self.step]
        vals = self.pe_values()

        def f(x: float | None) -> str:
            return "—" if x is None else f"{x:.4g}"

        parts = [f"<b>PE (row {self.pe[0]}, column {self.pe[1]}) after step {self.step}</b>",
                 "<table cellspacing='6'><tr>"]
        for i, p in enumerate(self.planes):
            v = vals[p]
            cross = (f"<table cellspacing='0' cellpadding='2' border='1'>"
                     f"<tr><td></td><td>{f(v['N'])}</td><td></td></tr>"
                     f"<tr><td>{f(v['W'])}</td><td><b>{f(v['C'])}</b></td><td>{f(v['E'])}</td></tr>"
                     f"<tr><td></td><td>{f(v['S'])}</td><td></td></tr></table>")
            goal = goal_html(goals.get(p)) if p != NEWS else "<i>(macro scratch)</i>"
            parts.append(f"<td valign='top'><b>{html.escape(p)}</b><br>{cross}<br>Goal:<br>{goal}</td>")
            if i % 4 == 3:
                parts.append("</tr><tr>")
        parts.append("</tr></table>")
        self.pe_view.setText("".join(parts))

    # ------------------------------------------------------------------ export
    def export_view(self, path: str) -> None:
        """The current view (listing, planes, bus operations, PE zoom) as a PNG."""
        pix = self.grab()
        if not pix.save(path, "PNG"):
            raise OSError(f"cannot write {path}")

    def export_run(self, path: str, ms_per_frame: int | None = None) -> list[Path]:
        from sims.scamp5.render import export_frames

        assert self.replay is not None
        ms = ms_per_frame or int(1000 / self.speed.value())
        return export_frames(self.replay.run, path, self.planes, difference=self.diff_box.isChecked(),
                             ms_per_frame=ms)

    def ask_export_view(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export view", f"scamp5-step{self.step}.png", "PNG image (*.png)")
        if path:
            self.export_view(path)

    def ask_export_run(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export run", "scamp5-run.gif",
                                              "Animated GIF (*.gif);;PNG sequence (*.png)")
        if path:
            self.export_run(path)
