"""The instruction stepper of the SCAMP-5 simulator: the centrepiece of the simulate tab.

It shows a replayed run (core.simulate.replay): the program listing with the current macro
highlighted; every register plane (A.., NEWS) on one canvas with linked pan and zoom
(gui.panels.simulate.canvas: planes shown or hidden, a shared or per-plane colour scale with a colour bar,
the registers the instruction writes framed, its NEWS shifts drawn as arrows); the bus operations
of the macro; and one PE's registers, neighbours and Goals (gui.panels.simulate.inspector).

All states are computed before the first step is shown (the run keeps one snapshot per macro and
unchanged planes are shared), so stepping only redraws the planes the macro changed. A step shown
again costs no numpy: the canvas keeps the rendered image of each (plane, limit), the colour limit
of each of the run's planes is computed once, and the planes a view computes (changes, read-out
noise) are kept per step (FRAME_BYTES). The rest of a step repaints only what changed: the frame
strips and badges of the tiles whose role changed, the inspector's changed rows and Goals (its
height fixed for the run), the planes list's changed rows, and the listing scrolls only near its
edge. benchmarks/stepper_speed.py measures it, with a breakdown per part.

A small stable API, for the panel, the tests and the benchmarks (benchmarks/stepper_speed.py, the
responsiveness benchmark):
- `load(replay)` shows a run; `clear(message)` empties the view;
- `set_step(i)`, `step_forward()`, `step_back()`, `run_to_end()`; `steps` is the macro count;
- `set_play_rate(instr_per_s)`, `play(loop=None)`, `stop()`, `is_playing()`; Play keeps the asked
  rate on average (each tick is scheduled from a deadline, not from the previous tick's end);
  with `loop` it starts again from the input after the last macro;
- `step_changed(int)` is emitted once per shown step;
- `export_view(png)`, `export_run(gif_or_png)`: an animated GIF, or a PNG strip of every step.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from pathlib import Path
from typing import Any, Callable

import numpy as np
from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QFontDatabase, QKeySequence, QShortcut
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDoubleSpinBox, QFileDialog, QFrame, QGridLayout, QGroupBox,
                               QHBoxLayout, QLabel, QListWidget, QListWidgetItem, QPushButton, QScrollArea, QSpinBox,
                               QSplitter, QVBoxLayout, QWidget)

from core.display import format_number
from core.simulate.engine import saturation_limit
from core.simulate.replay import Replay
from gui.panels.simulate.canvas import PlaneCanvas
from gui.panels.simulate.inspector import NEIGHBOURS, PeInspector, PeView
from sims.scamp5 import step_effects
from sims.scamp5.bus import NEWS
from sims.scamp5.render import robust_limit

HIGHLIGHT = QColor(255, 230, 140)
WRITTEN_ROW = QColor(255, 179, 71)
EFFECT_TEXT = QColor(200, 110, 0)
KEY_TEXT = "Orange frame: written by this instruction. Arrow: a NEWS shift, values move that way."
SCALES = (("step", "scale per step"), ("plane", "scale per run"), ("shared", "one scale"))   # fit the column
LEFT_WIDTH = 150             # px, the control column: the planes' grid gets the rest
# what the column's controls may take: it shows a vertical scroll bar on most screens, and content
# wider than what the bar leaves is cut at the right (the last transport button and Go were)
CONTENT_WIDTH = LEFT_WIDTH - 18
FRAME_BYTES = 64 << 20       # computed planes (changes, read-out noise) kept for stepping back and Play's loop


class _Listing(QListWidget):
    """The program listing; stepping keys go to the stepper before list navigation."""

    key_handler: Callable[[Any], bool] | None = None

    def keyPressEvent(self, event: Any) -> None:  # noqa: N802 (Qt name)
        if self.key_handler is not None and self.key_handler(event):
            event.accept()
            return
        super().keyPressEvent(event)


class Scamp5Stepper(QWidget):
    """Step through a replayed run; see the module docstring."""

    step_changed = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.replay: Replay | None = None
        self.step = 0
        self._drawn = False
        self.pe = (0, 0)
        self.planes: list[str] = []
        self.value_limits: dict[str, float] = {}
        self._diff_limits: dict[str, float] | None = None
        self._step_limits: dict[tuple[int, bool, bool], dict[str, float]] = {}
        self._array_limits: dict[int, tuple[np.ndarray, float]] = {}
        self._saturation: dict[int, tuple[np.ndarray, int]] = {}     # plane id -> (plane, PEs at the limit)
        self._frames: OrderedDict[tuple[int, bool, bool], dict[str, np.ndarray]] = OrderedDict()
        self._frame_bytes = 0
        self._written_rows: tuple[str, ...] | None = None
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.timer.timeout.connect(self._tick)
        self._due = 0.0
        self._hover: tuple[str, int, int] = ("", -1, -1)

        outer = QVBoxLayout(self)
        outer.setContentsMargins(2, 2, 2, 2)
        self.message = QLabel("Run the simulator (or press 'Step through') to step through a program.")
        self.message.setWordWrap(True)
        outer.addWidget(self.message)
        split = QSplitter(Qt.Orientation.Horizontal)
        self.splitter = split
        outer.addWidget(split, 1)
        split.addWidget(self._build_left())
        split.addWidget(self._build_centre())
        split.addWidget(self._build_right())
        split.setSizes([LEFT_WIDTH, 1000, 330])
        for i, stretch in enumerate((0, 1, 0)):
            split.setStretchFactor(i, stretch)
        split.setCollapsible(1, False)

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

    # ------------------------------------------------------------------ building
    def _build_left(self) -> QScrollArea:
        """The slim control column: transport, the planes (napari's layer list), scales, colour bar."""
        left = QWidget()
        lv = QVBoxLayout(left)
        lv.setContentsMargins(0, 0, 0, 0)
        lv.setSpacing(3)
        nav = QGridLayout()
        nav.setSpacing(2)
        self.first_button = _button("|◀", "Back to the input (Home)", lambda: self.set_step(0))
        self.back_button = _button("◀", "Step back (Left)", self.step_back)
        self.forward_button = _button("▶", "Step forward (Right)", self.step_forward)
        self.end_button = _button("▶|", "Run to the end (End)", self.run_to_end)
        for i, b in enumerate((self.first_button, self.back_button, self.forward_button, self.end_button)):
            b.setMinimumWidth(10)
            nav.addWidget(b, 0, i)
        self.play_button = _button("Play", "Play / pause (Space)", self.toggle_play)
        nav.addWidget(self.play_button, 1, 0, 1, 2)
        self.loop_box = QCheckBox("Loop")
        self.loop_box.setToolTip("Play again from the input after the last instruction")
        nav.addWidget(self.loop_box, 1, 2, 1, 2)
        self.speed = QDoubleSpinBox()
        self.speed.setRange(0.25, 60.0)
        self.speed.setDecimals(2)
        self.speed.setValue(4.0)
        self.speed.setSuffix(" instr/s")
        self.speed.setToolTip("Play speed in instructions per second")
        self.speed.valueChanged.connect(self._speed_changed)
        nav.addWidget(self.speed, 2, 0, 1, 4)
        self.jump_spin = QSpinBox()
        self.jump_spin.setRange(0, 0)
        self.jump_spin.setPrefix("# ")           # "# 8 of 21": the line to jump to, short enough for the column
        self.jump_spin.setToolTip("Instruction number to jump to (Ctrl+G; arrow keys or the wheel to change it); "
                                  "0 is the input")
        # three columns and no arrows: "# 21 of 21" was cut to "# 21 of 2" (issue 49)
        self.jump_spin.setButtonSymbols(QSpinBox.ButtonSymbols.NoButtons)
        nav.addWidget(self.jump_spin, 3, 0, 1, 3)
        self.jump_button = _button("Go", "Jump to this line", lambda: self.set_step(self.jump_spin.value()))
        self.jump_button.setMinimumWidth(10)
        nav.addWidget(self.jump_button, 3, 3, 1, 1)
        for c in range(4):          # four equal columns: no transport button is squeezed below its text
            nav.setColumnStretch(c, 1)
        lv.addLayout(nav)

        lv.addSpacing(4)
        lv.addWidget(QLabel("<b>Planes</b>"))
        self.plane_list = QListWidget()
        self.plane_list.setToolTip("Tick the planes to show; the instruction's written registers are marked")
        self.plane_list.itemChanged.connect(self._plane_item_changed)
        lv.addWidget(self.plane_list)
        self.scale_combo = QComboBox()
        for key, text in SCALES:
            self.scale_combo.addItem(text, key)
        self.scale_combo.setToolTip("Colour limits: each plane's own at this step (its limit in its badge), each "
                                    "plane's own over the whole run, or one for all planes and steps")
        self.scale_combo.currentIndexChanged.connect(lambda _i: self._redraw())
        lv.addWidget(self.scale_combo)
        self.diff_box = QCheckBox("change per step")
        self.diff_box.setToolTip("Show each plane's change from the previous step")
        self.diff_box.toggled.connect(lambda _on: self._redraw())
        lv.addWidget(self.diff_box)
        self.readout_box = QCheckBox("read-out noise")
        self.readout_box.setToolTip("Emulator noise model: add the accumulated noise, drawn as on read-out "
                                    "(the same draw every time for a given step)")
        self.readout_box.toggled.connect(lambda _on: self._redraw())
        lv.addWidget(self.readout_box)
        self.reset_zoom_button = _button("Fit all planes", "Show the whole array in every plane (zoom with the "
                                         "wheel, drag to pan; all planes follow)", self._reset_zoom)
        lv.addWidget(self.reset_zoom_button)
        self.scale_label = _fixed_label(3)
        lv.addWidget(self.scale_label)
        self.colorbar_slot = lv                        # the canvas's colour bar goes here (see __init__)
        for w in (self.speed, self.jump_spin, self.scale_combo):
            w.setMinimumWidth(40)
        self.scale_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        # in a small window the column scrolls instead of making the whole window taller
        scroll = QScrollArea()
        scroll.setWidget(left)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setMinimumWidth(LEFT_WIDTH)
        scroll.setMaximumWidth(LEFT_WIDTH + 20)
        return scroll

    def _build_centre(self) -> QWidget:
        centre = QWidget()
        cv = QVBoxLayout(centre)
        cv.setContentsMargins(0, 0, 0, 0)
        cv.setSpacing(0)
        self.canvas = PlaneCanvas()
        self.canvas.setToolTip("Wheel: zoom all planes; drag: pan; click: inspect a PE; double click: this plane alone")
        self.canvas.pe_clicked.connect(self.set_pe)
        self.canvas.hovered.connect(self._hovered)
        cv.addWidget(self.canvas, 1)
        self.colorbar_slot.addWidget(self.canvas.colorbar_view)
        self.hover_label = _fixed_label(4)
        self.hover_label.setText(KEY_TEXT)
        self.colorbar_slot.addWidget(self.hover_label)
        self.colorbar_slot.addStretch(1)
        return centre

    def _build_right(self) -> QWidget:
        """The program column: listing, bus operations, PE inspector, exports."""
        right = QWidget()
        rv = QVBoxLayout(right)
        rv.setContentsMargins(0, 0, 0, 0)
        parts = QSplitter(Qt.Orientation.Vertical)
        self.listing = _Listing()
        self.listing.setFont(_mono())
        self.listing.setUniformItemSizes(True)      # one line each: no item is measured to lay it out
        # Selecting a line (click, Up/Down, Home/End in the listing) jumps to it.
        self.listing.currentRowChanged.connect(lambda row: self.set_step(row) if row >= 0 else None)
        parts.addWidget(self.listing)
        bus_box = QGroupBox("Bus operations of this instruction")
        bl = QVBoxLayout(bus_box)
        bl.setContentsMargins(4, 4, 4, 4)
        self.bus_list = QListWidget()
        self.bus_list.setFont(_mono())
        self.bus_list.setWordWrap(True)
        rows = self.bus_list.fontMetrics().height() + 2
        self.bus_list.setMinimumHeight(3 * rows + 6)
        self.bus_list.setMaximumHeight(8 * rows + 8)         # div's five bus steps and what it writes and reads
        bl.addWidget(self.bus_list)
        parts.addWidget(bus_box)
        pe_box = QGroupBox("Processing element")
        pl = QVBoxLayout(pe_box)
        pl.setContentsMargins(4, 4, 4, 4)
        self.inspector = PeInspector()
        self.inspector.pe_changed.connect(self.set_pe)
        self.pe_row, self.pe_col = self.inspector.row, self.inspector.col
        pl.addWidget(self.inspector)
        parts.addWidget(pe_box)
        parts.setStretchFactor(0, 1)
        parts.setStretchFactor(1, 0)
        parts.setStretchFactor(2, 3)
        parts.setSizes([150, 120, 400])
        rv.addWidget(parts, 1)
        ex = QHBoxLayout()
        self.export_png_button = _button("View PNG…", "Save this view as a PNG image", self.ask_export_view)
        self.export_run_button = _button("Export run…", "Save every step as an animated GIF or as one PNG strip "
                                         "(the planes on show, with this colour scale)", self.ask_export_run)
        ex.addWidget(self.export_png_button)
        ex.addWidget(self.export_run_button)
        rv.addLayout(ex)
        return right

    @property
    def pe_view(self) -> PeView:
        """The inspector's text (kept for callers of the former PE zoom)."""
        return self.inspector.view

    def changeEvent(self, event: Any) -> None:  # noqa: N802 (Qt name)
        if event.type() == QEvent.Type.PaletteChange:        # the canvas took the new colours: draw with them
            QTimer.singleShot(0, self._redraw)
        super().changeEvent(event)

    def showEvent(self, event: Any) -> None:  # noqa: N802 (Qt name)
        super().showEvent(event)
        QTimer.singleShot(0, self._scroll_listing)  # a step chosen while hidden: its line into view, once laid out

    def _scroll_listing(self, only_near_edge: bool = False) -> None:
        """The current line to the middle of the listing; with only_near_edge, only when it is within
        a line of the edge or out of view (a scroll repaints the whole listing and its scroll bar:
        Play then scrolls once every half a listing instead of at every step)."""
        if self.replay is None or not 0 <= self.step < self.listing.count():
            return
        item = self.listing.item(self.step)
        if only_near_edge:
            rect, view = self.listing.visualItemRect(item), self.listing.viewport().rect()
            if rect.top() >= rect.height() and rect.bottom() <= view.bottom() - rect.height():
                return
        self.listing.scrollToItem(item, QListWidget.ScrollHint.PositionAtCenter)

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
    def _set_enabled(self, on: bool) -> None:
        for w in (self.first_button, self.back_button, self.forward_button, self.end_button, self.play_button,
                  self.jump_button, self.jump_spin, self.export_png_button, self.export_run_button, self.scale_combo,
                  self.diff_box, self.pe_row, self.pe_col, self.reset_zoom_button, self.loop_box):
            w.setEnabled(on)
        self.readout_box.setEnabled(bool(on and self.replay is not None and self.replay.run.noise.accumulate))

    def _focus_jump(self) -> None:
        self.jump_spin.setFocus()
        self.jump_spin.selectAll()

    def _reset_zoom(self) -> None:
        self.canvas.reset_view()

    @property
    def steps(self) -> int:
        """Number of macros (states are 0..steps)."""
        return 0 if self.replay is None else len(self.replay.run.records) - 1

    @property
    def scale_mode(self) -> str:
        """'step' (each plane, each step), 'plane' (each plane over the run) or 'shared'."""
        return str(self.scale_combo.currentData())

    def set_scale_mode(self, mode: str) -> None:
        self.scale_combo.setCurrentIndex(self.scale_combo.findData(mode))

    @property
    def per_plane(self) -> bool:
        return self.scale_mode != "shared"

    # ------------------------------------------------------------------ planes on show
    def _make_plane_list(self) -> None:
        self.plane_list.blockSignals(True)
        self.plane_list.clear()
        for name in self.planes:
            item = QListWidgetItem(name)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Unchecked if name in self.canvas.hidden else Qt.CheckState.Checked)
            item.setToolTip(f"Show or hide plane {name}")
            self.plane_list.addItem(item)
        self.plane_list.blockSignals(False)
        self._written_rows = None
        rows = self.plane_list.sizeHintForRow(0) if self.planes else 16
        self.plane_list.setMaximumHeight(rows * max(len(self.planes), 1) + 2 * self.plane_list.frameWidth() + 2)

    def _plane_item_changed(self, item: QListWidgetItem) -> None:
        on = item.checkState() == Qt.CheckState.Checked
        if on == (item.text() in self.canvas.hidden):       # a tick changed (not the written-row colour)
            self.set_plane_visible(item.text(), on)

    def set_plane_visible(self, name: str, on: bool) -> None:
        """Show or hide one register plane (the others take its room)."""
        items = self.plane_list.findItems(name, Qt.MatchFlag.MatchExactly)
        state = Qt.CheckState.Checked if on else Qt.CheckState.Unchecked
        if items and items[0].checkState() != state:
            items[0].setCheckState(state)          # re-enters through itemChanged
            return
        self.canvas.set_plane_visible(name, on)
        self._redraw()

    def visible_planes(self) -> list[str]:
        return self.canvas.visible_planes()

    # ------------------------------------------------------------------ loading
    def clear(self, message: str = "") -> None:
        self.stop()
        self.replay = None
        self._frames.clear()
        self._frame_bytes = 0
        self.listing.clear()
        self.bus_list.clear()
        self.inspector.clear()
        self.canvas.set_planes([])
        self._set_enabled(False)
        self.message.setText(message or "Run the simulator to step through a program.")

    def load(self, replay: Replay) -> None:
        """Show a replayed run; computes the colour scales once (change scales when first asked for)."""
        self.stop()
        self.replay = replay
        run = replay.run
        self.planes = list(run.registers) + [NEWS]
        self.value_limits = {p: robust_limit(rec.state.values[p] for rec in run.records) for p in self.planes}
        self._diff_limits = None
        self._step_limits = {}
        self._array_limits = {}
        self._saturation = {}
        self._frames.clear()
        self._frame_bytes = 0
        self._written_rows = None
        self.listing.clear()
        self.listing.addItem(QListWidgetItem(f"{0:>3}  (input in {run.input_register}: {replay.image_description})"))
        for i, ins in enumerate(run.program, start=1):
            self.listing.addItem(QListWidgetItem(f"{i:>3}  {ins}"))
        rows, cols = run.final.values[run.registers[0]].shape
        self.inspector.set_shape(rows, cols)
        self.inspector.reserve(self.planes, replay.goals)
        self.jump_spin.setRange(0, self.steps)
        self.jump_spin.setSuffix(f" of {self.steps}")
        self.canvas.set_planes(self.planes)
        self._make_plane_list()
        noise = ("noise on (the emulator's upper-bound model: the planes are register contents; 'as read out' "
                 "adds the accumulated noise)" if run.noise.accumulate
                 else "noise on" if run.noise.enabled else "exact (noise off)")
        self.message.setText(f"{replay.program.label}: {self.steps} instructions, {run.bus_steps()} bus operations, "
                             f"{rows}x{cols} PEs, {noise}. Outputs: {', '.join(replay.program.output_registers) or '-'}.")
        self.message.setToolTip("Keys: Left/Right (P/N) step, Home/End, Space play, Ctrl+G jump. "
                                "Click a pixel to inspect its PE; wheel zooms all planes.")
        self._set_enabled(True)
        self.pe = (min(self.pe[0], rows - 1), min(self.pe[1], cols - 1))
        if self.pe == (0, 0):
            self.pe = (rows // 2, cols // 2)
        self.inspector.set_pe(*self.pe)
        self.step = -1
        self._drawn = False
        self.set_step(0)
        self.canvas.reset_view()

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
            self.listing.blockSignals(True)        # it would re-enter set_step with this step: a no-op
            self.listing.setCurrentRow(step)
            self.listing.blockSignals(False)
        self._scroll_listing(only_near_edge=True)
        self.jump_spin.setValue(step)
        rec = self.replay.run.records[step]
        self.bus_list.clear()
        if rec.instr is None:
            self.bus_list.addItem(f"sensor image -> {self.replay.run.input_register}")
        self.bus_list.addItems([f"{k}. {op}  {op.describe()}" for k, op in enumerate(rec.bus_ops, start=1)])
        written, read, shifts = self.effects()
        saturated = self.saturation()
        notes = ([f"writes {', '.join(written)}" + (f"; reads {', '.join(read)}" if read else "")]
                 + [f"shift: {s.describe()}" for s in shifts]
                 + [f"saturated: {reg} has {n} PEs at the ±{saturation_limit(self.replay.run.noise)[0]:g} "
                    f"analogue limit" for reg, n in saturated.items()])
        for text in notes:
            item = QListWidgetItem(text)
            item.setForeground(QBrush(EFFECT_TEXT))
            self.bus_list.addItem(item)
        self.bus_list.doItemsLayout()          # now, not on a timer after a first paint with the old layout
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

    # ------------------------------------------------------------------ play
    def set_play_rate(self, instr_per_s: float) -> None:
        self.speed.setValue(float(instr_per_s))

    def play_rate(self) -> float:
        return float(self.speed.value())

    def is_playing(self) -> bool:
        return self.timer.isActive()

    def play(self, loop: bool | None = None) -> None:
        """Advance one instruction per 1/rate seconds until the end (or forever with loop)."""
        if self.replay is None or self.steps == 0:
            return
        if loop is not None:
            self.loop_box.setChecked(loop)
        if self.step >= self.steps:
            self.set_step(0)
        period = 1.0 / self.play_rate()
        self._due = time.perf_counter() + period
        self.timer.start(int(round(period * 1000)))
        self.play_button.setText("Pause")

    def toggle_play(self) -> None:
        if self.timer.isActive():
            self.stop()
        else:
            self.play()

    def stop(self) -> None:
        self.timer.stop()
        self.play_button.setText("Play")

    def _speed_changed(self, v: float) -> None:
        if self.timer.isActive():
            self._due = time.perf_counter() + 1.0 / v
            self.timer.start(int(round(1000 / v)))

    def _tick(self) -> None:
        if self.step < self.steps:
            self.step_forward()
        elif self.loop_box.isChecked():
            self.set_step(0)
        if self.step >= self.steps and not self.loop_box.isChecked():
            self.stop()
            return
        period = 1.0 / self.play_rate()
        now = time.perf_counter()
        self._due = max(self._due + period, now - period)        # late: catch up by one tick at most
        self.timer.start(max(0, int(round((self._due - now) * 1000))))

    # ------------------------------------------------------------------ drawing
    def _reading_out(self) -> bool:
        return bool(self.readout_box.isChecked() and self.replay is not None and self.replay.run.noise.accumulate)

    def _frame(self, key: tuple[int, bool, bool], make: Any) -> dict[str, np.ndarray]:
        """Planes computed for a step (changes, read-out noise), kept for the steps last asked for
        (FRAME_BYTES in all): stepping back and forth or Play's loop shows the same arrays again, so
        the canvas's images and the colour limits are found instead of computed."""
        hit = self._frames.get(key)
        if hit is not None:
            self._frames.move_to_end(key)
            return hit
        hit = self._frames[key] = make()
        self._frame_bytes += self._nbytes(hit)
        while self._frame_bytes > FRAME_BYTES and len(self._frames) > 1:
            _, old = self._frames.popitem(last=False)
            self._frame_bytes -= self._nbytes(old)
        return hit

    def _nbytes(self, planes: dict[str, np.ndarray]) -> int:
        zero = getattr(self, "_zero_plane", None)
        return sum(a.nbytes for a in planes.values() if a is not zero)

    def values_at(self, step: int) -> dict[str, np.ndarray]:
        """The planes after macro `step`: register contents, or as read out when that is chosen."""
        assert self.replay is not None
        run = self.replay.run
        if self._reading_out():
            return self._frame((step, False, True), lambda: {p: run.read_out(p, step) for p in self.planes})
        return run.records[step].state.values

    def current_planes(self) -> dict[str, np.ndarray]:
        assert self.replay is not None
        now = self.values_at(self.step)
        if not self.diff_box.isChecked():
            return now
        prev = self.values_at(max(self.step - 1, 0))

        def change() -> dict[str, np.ndarray]:
            # a plane the macro left alone is the run's one zero plane: the canvas keeps its image
            return {p: self._zeros(now[p]) if now[p] is prev[p] else now[p] - prev[p] for p in self.planes}
        return self._frame((self.step, True, self._reading_out()), change)

    def _zeros(self, like: np.ndarray) -> np.ndarray:
        z = getattr(self, "_zero_plane", None)
        if z is None or z.shape != like.shape or z.dtype != like.dtype:
            z = self._zero_plane = np.zeros_like(like)
            z.flags.writeable = False
        return z

    def diff_limits(self) -> dict[str, float]:
        """Per-plane colour limits of the change from one step to the next (computed when first needed)."""
        if self._diff_limits is None:
            assert self.replay is not None
            recs = self.replay.run.records
            self._diff_limits = {
                p: robust_limit(recs[i].state.values[p] - recs[i - 1].state.values[p] for i in range(1, len(recs))
                                if recs[i].state.values[p] is not recs[i - 1].state.values[p])
                for p in self.planes}
        return self._diff_limits

    def limits(self, planes: dict[str, np.ndarray] | None = None) -> dict[str, float]:
        """The colour limit of each plane: its own at this step or over the run, or the largest of the
        planes on show over the run."""
        if self.scale_mode == "step":
            key = (self.step, self.diff_box.isChecked(), self._reading_out())
            lims = self._step_limits.get(key)
            if lims is None:
                now = self.current_planes() if planes is None else planes
                plain = not key[1] and not key[2]      # the run's own arrays: shared by the steps that keep them
                lims = {p: self._array_limit(now[p]) if plain else robust_limit([now[p]]) for p in self.planes}
                self._step_limits[key] = lims
            return dict(lims)
        per = self.diff_limits() if self.diff_box.isChecked() else self.value_limits
        if self.per_plane:
            return dict(per)
        shown = self.visible_planes() or self.planes
        lim = max((per[p] for p in shown), default=1.0)
        return {p: lim for p in self.planes}

    def _array_limit(self, plane: np.ndarray) -> float:
        """robust_limit of one of the run's planes, once per array (records share unchanged planes)."""
        hit = self._array_limits.get(id(plane))
        if hit is None or hit[0] is not plane:
            hit = self._array_limits[id(plane)] = (plane, robust_limit([plane]))
        return hit[1]

    def saturation(self, step: int | None = None) -> dict[str, int]:
        """Plane -> PEs at or beyond the analogue range after `step` (default: the one on show); the
        same count as the result's warnings (core.simulate.engine.saturated_pixels), cached per plane."""
        assert self.replay is not None
        run = self.replay.run
        rec = run.records[self.step if step is None else step]
        limit, clips = saturation_limit(run.noise)
        out: dict[str, int] = {}
        for name in self.planes:
            plane = rec.state.values[name]
            hit = self._saturation.get(id(plane))
            if hit is None or hit[0] is not plane:
                over = np.abs(plane) >= limit if clips else np.abs(plane) > limit
                hit = self._saturation[id(plane)] = (plane, int(np.count_nonzero(over & rec.state.valid[name])))
            if hit[1]:
                out[name] = hit[1]
        return out

    def effects(self) -> tuple[tuple[str, ...], tuple[str, ...], list[step_effects.Shift]]:
        """(written, read, shifts) of the instruction on show; the input step writes the input register."""
        assert self.replay is not None
        rec = self.replay.run.records[self.step]
        if rec.instr is None:
            return (self.replay.run.input_register,), (), []
        return step_effects.written(rec.bus_ops), step_effects.read(rec.bus_ops), step_effects.shifts(rec.bus_ops)

    def _redraw(self) -> None:
        if self.replay is None:
            return
        planes = self.current_planes()
        limits = self.limits(planes)
        self.canvas.show_planes(planes, limits, self.pe)
        written, read, shifts = self.effects()
        self.canvas.mark(written, read, shifts, limits if self.per_plane else None, self.saturation())
        what = "change from the previous step" if self.diff_box.isChecked() else "value"
        if self.per_plane:
            self.canvas.set_colorbar(-1.0, 1.0)
            self.scale_label.setText(f"{what} ÷ each plane's limit (±, in its badge)")
        else:
            lim = next(iter(limits.values()), 1.0)
            self.canvas.set_colorbar(-lim, lim)
            self.scale_label.setText(f"{what}, all planes")
        if written != self._written_rows:           # a row's new colours repaint it: only the rows that change
            before = self._written_rows
            for i in range(self.plane_list.count()):
                item = self.plane_list.item(i)
                on = item.text() in written
                if before is None or on != (item.text() in before):
                    item.setBackground(QBrush(WRITTEN_ROW) if on else QBrush())
                    item.setForeground(QBrush(QColor("black")) if on else QBrush())  # readable on orange, dark too
            self._written_rows = written
        self._update_pe()
        if self._hover[0]:
            self._hovered(*self._hover)

    def set_pe(self, row: int, col: int) -> None:
        if self.replay is None:
            return
        rows, cols = self.replay.run.final.values[self.planes[0]].shape
        if not (0 <= row < rows and 0 <= col < cols):
            return
        self.pe = (row, col)
        self.inspector.set_pe(row, col)
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
            for key, (dr, dc) in NEIGHBOURS:
                rr, cc = r + dr, c + dc
                cell[key] = float(v[rr, cc]) if 0 <= rr < v.shape[0] and 0 <= cc < v.shape[1] else None
            out[p] = cell
        return out

    def _update_pe(self) -> None:
        assert self.replay is not None
        self.inspector.show_pe(self.step, self.pe, self.pe_values(), self.replay.goals[self.step], self.effects()[0])

    def _hovered(self, plane: str, row: int, col: int) -> None:
        self._hover = (plane, row, col)
        if not plane or self.replay is None:
            self.hover_label.setText(KEY_TEXT)
            return
        v = self.current_planes()[plane][row, col]
        what = "change" if self.diff_box.isChecked() else "value"
        self.hover_label.setText(f"{plane} at row {row}, column {col}: {what} {format_number(float(v))}")

    # ------------------------------------------------------------------ export
    def export_view(self, path: str) -> None:
        """The current view (listing, planes, bus operations, PE inspector) as a PNG."""
        pix = self.grab()
        if not pix.save(path, "PNG"):
            raise OSError(f"cannot write {path}")

    def export_run(self, path: str, ms_per_frame: int | None = None) -> list[Path]:
        """Every step of the run: an animated GIF (.gif) or one PNG strip (.png), with the planes on
        show and the colour scale of the view; any other path is a folder of numbered PNGs."""
        from sims.scamp5.render import export_frames, export_strip

        assert self.replay is not None
        planes = self.visible_planes() or self.planes
        limits: Any = self.scale_mode if self.scale_mode == "step" else self.limits()
        diff = self.diff_box.isChecked()
        if Path(path).suffix.lower() == ".png":
            return [export_strip(self.replay.run, path, planes, difference=diff, limit=limits)]
        ms = ms_per_frame or int(1000 / self.play_rate())
        return export_frames(self.replay.run, path, planes, difference=diff, ms_per_frame=ms, limit=limits)

    def ask_export_view(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export view", f"scamp5-step{self.step}.png", "PNG image (*.png)")
        if path:
            self.export_view(path)

    def ask_export_run(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export run", "scamp5-run.gif",
                                              "Animated GIF (*.gif);;PNG strip, every step in one image (*.png)")
        if path:
            self.export_run(path)


def _fixed_label(lines: int) -> QLabel:
    """A word-wrapped label of fixed size: its text changes every step, and a label whose size may
    change makes Qt lay out the whole window again (tens of ms)."""
    label = QLabel(" ")
    label.setWordWrap(True)
    label.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
    label.setFixedSize(CONTENT_WIDTH, lines * label.fontMetrics().height() + 2)
    return label


def _mono():
    return QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)


def _button(text: str, tip: str, slot) -> QPushButton:
    b = QPushButton(text)
    b.setToolTip(tip)
    b.clicked.connect(slot)
    return b
