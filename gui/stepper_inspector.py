"""The stepper's PE inspector: one processing element's registers and their Goals, narrow enough for
the side pane (it never scrolls sideways).

One row per register: its value at the PE and at the four neighbours (N, E, S, W; "—" off the
array), the registers the current instruction wrote highlighted. Below, the Goal (the kernel over
the input image) each register holds, as an integer matrix times one common fraction ("A = 1/4 ×"),
as many side by side as the pane's width allows.

The view paints its text itself instead of laying out rich text: a step then costs a repaint of
this pane only (a QLabel's new text re-lays out the whole window, which took tens of ms a step).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Mapping, Sequence

from PySide6.QtCore import QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QGuiApplication, QKeySequence, QPainter, QPalette
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QMenu, QScrollArea, QSpinBox, QVBoxLayout, QWidget

from sims.scamp5.bus import NEWS

NEIGHBOURS = (("C", (0, 0)), ("N", (-1, 0)), ("E", (0, 1)), ("S", (1, 0)), ("W", (0, -1)))
WRITE_BG = QColor(255, 179, 71)
PAD = 4


def goal_matrix(goal: Any) -> tuple[Fraction, list[list[int]]]:
    """A Goal (SymKernel) as (scale, integer matrix rows north to south): goal = scale × matrix."""
    rows = goal.to_matrix(max(goal.radius(), 1))
    den = 1
    for row in rows:
        for v in row:
            d = Fraction(v).denominator
            den = den * d // math.gcd(den, d)
    return Fraction(1, den), [[int(Fraction(v) * den) for v in row] for row in rows]


def goal_lines(goal: Any, name: str) -> list[str]:
    """A Goal as text lines: a heading ("A = 1/4 ×", "B undefined") over the matrix rows."""
    if goal is None:
        return [f"{name} undefined"]
    if not goal.terms:
        return [f"{name} = 0"]
    scale, rows = goal_matrix(goal)
    width = max(len(str(v)) for row in rows for v in row)
    head = f"{name} = {scale} ×" if scale != 1 else f"{name} ="
    return [head] + [" ".join(str(v).rjust(width) for v in row) for row in rows]


def goal_html(goal: Any, name: str = "") -> str:
    """The same as goal_lines, as HTML (for exports and tooltips)."""
    import html

    lines = goal_lines(goal, name or "Goal")
    return "<br>".join(html.escape(line) for line in lines)


def fmt(x: float | None) -> str:
    return "—" if x is None else f"{x + 0.0:.3g}"          # + 0.0: no "-0"


@dataclass
class _Shown:
    step: int
    pe: tuple[int, int]
    values: Mapping[str, Mapping[str, float | None]]
    goals: list[list[str]]           # text lines per register with a Goal
    written: tuple[str, ...]


class PeView(QWidget):
    """Paints the values table and the Goals (see the module docstring)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.shown: _Shown | None = None
        self.bold = QFont(self.font())
        self.bold.setBold(True)
        self.mono = QFont("monospace")
        self.mono.setStyleHint(QFont.StyleHint.TypeWriter)
        fm = QFontMetricsF(self.font())
        self.line = fm.height() + 1
        self.name_w = QFontMetricsF(self.bold).horizontalAdvance("NEWS") + 2 * PAD
        self.col_w = fm.horizontalAdvance("-0.0000") + PAD
        self.table_w = self.name_w + len(NEIGHBOURS) * self.col_w + PAD
        self._height = int(self.line * 3)
        self.setMinimumWidth(int(self.table_w))
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.customContextMenuRequested.connect(self._menu)

    # ---- size: the width is the pane's, the height follows the content
    def sizeHint(self) -> QSize:  # noqa: N802 (Qt name)
        return QSize(int(self.table_w), self._height)

    def hasHeightForWidth(self) -> bool:  # noqa: N802 (Qt name)
        return True

    def heightForWidth(self, w: int) -> int:  # noqa: N802 (Qt name)
        return self._content_height(w)

    def _goal_block(self, lines: list[str]) -> tuple[float, float]:
        fm = QFontMetricsF(self.mono)
        return max(fm.horizontalAdvance(x) for x in lines) + 3 * PAD, len(lines) * QFontMetricsF(self.mono).height()

    def _goal_rows(self, width: float) -> list[list[list[str]]]:
        """Goal blocks in rows that fit `width`."""
        rows: list[list[list[str]]] = [[]]
        x = 0.0
        for lines in (self.shown.goals if self.shown else []):
            w, _ = self._goal_block(lines)
            if rows[-1] and x + w > width:
                rows.append([])
                x = 0.0
            rows[-1].append(lines)
            x += w
        return rows

    def _content_height(self, width: float) -> int:
        if self.shown is None:
            return int(self.line * 3)
        h = self.line * (2 + len(self.shown.values)) + self.line * 1.5
        for row in self._goal_rows(width):
            h += max((self._goal_block(b)[1] for b in row), default=0) + PAD
        return int(h + self.line + PAD)

    def set_shown(self, shown: _Shown | None) -> None:
        self.shown = shown
        h = self._content_height(self.width() or self.table_w)
        if h != self._height:
            self._height = h
            self.setMinimumHeight(h)
            self.updateGeometry()
        self.update()

    def resizeEvent(self, event: Any) -> None:  # noqa: N802 (Qt name)
        super().resizeEvent(event)
        h = self._content_height(self.width())
        if h != self._height:
            self._height = h
            self.setMinimumHeight(h)

    # ---- painting
    def paintEvent(self, event: Any) -> None:  # noqa: N802 (Qt name)
        if self.shown is None:
            return
        s = self.shown
        p = QPainter(self)
        pal = self.palette()
        text = pal.color(QPalette.ColorRole.WindowText)
        y = 0.0
        p.setFont(self.bold)
        p.setPen(text)
        p.drawText(QRectF(0, y, self.width(), self.line), int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter),
                   f"PE (row {s.pe[0]}, column {s.pe[1]}) after step {s.step}")
        y += self.line
        right = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        for k, (key, _) in enumerate(NEIGHBOURS):
            p.drawText(QRectF(self.name_w + k * self.col_w, y, self.col_w, self.line), right,
                       "value" if key == "C" else key)
        y += self.line
        for name, cell in s.values.items():
            if name in s.written:
                p.fillRect(QRectF(0, y, self.table_w, self.line), WRITE_BG)
                p.setPen(QColor("black"))
            else:
                p.setPen(text)
            p.setFont(self.bold)
            p.drawText(QRectF(PAD, y, self.name_w, self.line), int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter),
                       name)
            for k, (key, _) in enumerate(NEIGHBOURS):
                p.setFont(self.bold if key == "C" else self.font())
                p.drawText(QRectF(self.name_w + k * self.col_w, y, self.col_w, self.line), right, fmt(cell[key]))
            y += self.line
        p.setPen(text)
        y += self.line * 0.5
        p.setFont(self.bold)
        p.drawText(QRectF(0, y, self.width(), self.line), int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter),
                   "Goals (kernels over the input, north up)")
        y += self.line
        p.setFont(self.mono)
        mono_h = QFontMetricsF(self.mono).height()
        for row in self._goal_rows(self.width()):
            x = 0.0
            for lines in row:
                w, h = self._goal_block(lines)
                for i, line in enumerate(lines):
                    p.drawText(QRectF(x, y + i * mono_h, w, mono_h), int(Qt.AlignmentFlag.AlignLeft), line)
                x += w
            y += max((self._goal_block(b)[1] for b in row), default=0) + PAD
        if NEWS in s.values:
            p.setFont(self.font())
            p.drawText(QRectF(0, y, self.width(), self.line), int(Qt.AlignmentFlag.AlignLeft),
                       f"{NEWS} is the macros' scratch register (no Goal).")
        p.end()

    # ---- text, for copying and tests
    def text(self) -> str:
        if self.shown is None:
            return ""
        s = self.shown
        out = [f"PE (row {s.pe[0]}, column {s.pe[1]}) after step {s.step}",
               "\t".join(["register"] + ["value" if k == "C" else k for k, _ in NEIGHBOURS])]
        out += ["\t".join([name + (" (written)" if name in s.written else "")] + [fmt(cell[k]) for k, _ in NEIGHBOURS])
                for name, cell in s.values.items()]
        out.append("Goals")
        for lines in s.goals:
            out += lines
        return "\n".join(out)

    def _menu(self, pos: Any) -> None:
        menu = QMenu(self)
        menu.addAction("Copy as text", lambda: QGuiApplication.clipboard().setText(self.text()), QKeySequence.StandardKey.Copy)
        menu.exec(self.mapToGlobal(pos))

    def keyPressEvent(self, event: Any) -> None:  # noqa: N802 (Qt name)
        if event.matches(QKeySequence.StandardKey.Copy):
            QGuiApplication.clipboard().setText(self.text())
            event.accept()
        else:
            super().keyPressEvent(event)


class PeInspector(QWidget):
    """Row and column boxes over the painted view; see the module docstring."""

    pe_changed = Signal(int, int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        pick = QHBoxLayout()
        pick.addWidget(QLabel("PE row"))
        self.row = QSpinBox()
        pick.addWidget(self.row)
        pick.addWidget(QLabel("column"))
        self.col = QSpinBox()
        pick.addWidget(self.col)
        pick.addStretch(1)
        lay.addLayout(pick)
        self.row.valueChanged.connect(lambda v: self.pe_changed.emit(v, self.col.value()))
        self.col.valueChanged.connect(lambda v: self.pe_changed.emit(self.row.value(), v))
        self.view = PeView()
        self.view.setToolTip("Right-click or Ctrl+C to copy as text")
        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.scroll.setWidget(self.view)
        self.scroll.setMinimumWidth(int(self.view.table_w) + self.scroll.verticalScrollBar().sizeHint().width() + 2)
        lay.addWidget(self.scroll, 1)
        self._goal_cache: dict[tuple[str, Any], list[str]] = {}

    def set_shape(self, rows: int, cols: int) -> None:
        self.row.setRange(0, rows - 1)
        self.col.setRange(0, cols - 1)

    def set_pe(self, row: int, col: int) -> None:
        """Move the boxes without announcing it."""
        for spin, v in ((self.row, row), (self.col, col)):
            spin.blockSignals(True)
            spin.setValue(v)
            spin.blockSignals(False)

    def text(self) -> str:
        return self.view.text()

    def clear(self) -> None:
        self._goal_cache.clear()
        self.view.set_shown(None)

    def show_pe(self, step: int, pe: tuple[int, int], values: Mapping[str, Mapping[str, float | None]],
                goals: Mapping[str, Any], written: Sequence[str]) -> None:
        blocks = []
        for name in values:
            if name == NEWS:
                continue
            key = (name, goals.get(name))
            if key not in self._goal_cache:
                self._goal_cache[key] = goal_lines(goals.get(name), name)
            blocks.append(self._goal_cache[key])
        self.view.set_shown(_Shown(step, pe, values, blocks, tuple(written)))
