"""The stepper's PE inspector: one processing element's registers and their Goals, narrow enough for
the side pane (it never scrolls sideways).

One row per register: its value at the PE and at the four neighbours (N, E, S, W; "—" off the
array), the registers the current instruction wrote highlighted. Below, the Goal (the kernel over
the input image) each register holds, as an integer matrix times one common fraction ("A = 1/4 ×"),
as many side by side as the pane's width allows.

The view paints its text itself instead of laying out rich text: a step then costs a repaint of
this pane only (a QLabel's new text re-lays out the whole window, which took tens of ms a step),
and only of the rows and Goals the step changed; each Goal keeps its place and the pane its height
over the run (`PeInspector.reserve`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Mapping, Sequence

from PySide6.QtCore import QEvent, QRect, QRectF, QSize, Qt, Signal
from PySide6.QtGui import (QColor, QFont, QFontMetricsF, QGuiApplication, QHelpEvent, QKeySequence, QPainter, QPalette,
                           QRegion)
from PySide6.QtWidgets import (QFrame, QHBoxLayout, QLabel, QMenu, QScrollArea, QSpinBox, QToolTip, QVBoxLayout,
                               QWidget)

from core.display import format_number
from core.numbers import compact_number, editable_text
from sims.scamp5.bus import NEWS

NEIGHBOURS = (("C", (0, 0)), ("N", (-1, 0)), ("E", (0, 1)), ("S", (1, 0)), ("W", (0, -1)))
WRITE_BG = QColor(255, 179, 71)
PAD = 4
WIDE_VALUES = ("-0.0000",)      # what a value column holds (cell_text keeps to it)
GAP_TEXT = "00"                 # the room between two value columns: two digits


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
    return "—" if x is None else format_number(float(x), digits=3)      # never "-0" (issue 30)


def cell_text(x: float | None, room: Callable[[str], bool]) -> str:
    """A value for the inspector's narrow columns: three significant digits where `room` says they
    fit ("-0.0703"), else two ("0.002" for 0.00195), else a one-letter multiplier ("12.3M" for
    12.3 million, which as words widened the table past its pane); the tooltip (PeView.cell_tip)
    and the copied text give the whole value."""
    text = fmt(x)
    if x is None or room(text):
        return text
    short = format_number(float(x), digits=2)
    for candidate in [short] + [compact_number(float(x), d) for d in (3, 2, 1)]:
        if room(candidate):
            return candidate
    return compact_number(float(x), 1)


def full_text(x: float | None) -> str:
    """A value whole, for the tooltip: every digit a float prints (12,345,678.9), "—" off the array."""
    if x is None:
        return "—"
    v = float(x)
    if math.isfinite(v) and abs(v) < 1e15:
        if v == int(v):
            return f"{int(v):,}"
        if abs(v) >= 1e4:
            return f"{v:,}"
    return editable_text(v)


@dataclass
class _Shown:
    step: int
    pe: tuple[int, int]
    values: Mapping[str, Mapping[str, float | None]]
    goals: list[list[str]]           # text lines per register with a Goal
    written: tuple[str, ...]


@dataclass
class _Layout:
    """Where each part of the view goes at one width (see PeView._layout)."""

    rows: dict[str, QRectF]                     # a register's row of values
    goals_top: float
    blocks: list[tuple[QRectF, tuple[str, ...]]]
    note: QRectF
    height: int


class PeView(QWidget):
    """Paints the values table and the Goals (see the module docstring).

    A step repaints only what it changed: the heading, the rows whose values or highlight changed,
    and the Goal blocks that changed (the whole Goals area only where the blocks moved). The height
    is the largest any step of the run needs (`reserve`), so stepping never lays out the pane again."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.shown: _Shown | None = None
        self.bold = QFont(self.font())
        self.bold.setBold(True)
        self.mono = QFont("monospace")
        self.mono.setStyleHint(QFont.StyleHint.TypeWriter)
        fm = QFontMetricsF(self.font())
        self.line = math.ceil(fm.height()) + 1            # whole pixels: a row's repaint never touches the next
        self.mono_h = math.ceil(QFontMetricsF(self.mono).height())
        self.name_w = QFontMetricsF(self.bold).horizontalAdvance("NEWS") + 2 * PAD
        # a value column holds the widest number cell_text() writes in the analogue range and a gap
        # of two digits' width: with 4 px the right-aligned numbers ran together (issue 49)
        self.gap = math.ceil(fm.horizontalAdvance(GAP_TEXT))
        self.col_w = max(fm.horizontalAdvance(t) for t in WIDE_VALUES) + self.gap
        self.table_w = self.name_w + len(NEIGHBOURS) * self.col_w + PAD
        self._height = int(self.line * 3)
        self._block_sizes: dict[tuple[str, ...], tuple[float, float]] = {}
        self._reserved: list[tuple[int, list[tuple[str, ...]]]] = []     # (rows, blocks) of every step
        self._slots: list[tuple[float, float]] = []                      # the room of each Goal block
        self._reserved_heights: dict[float, int] = {}                    # by width
        self._layouts: dict[tuple[Any, ...], _Layout] = {}
        self.setMinimumWidth(math.ceil(self.table_w))
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.customContextMenuRequested.connect(self._menu)

    # ---- size: the width is the pane's, the height follows the content
    def sizeHint(self) -> QSize:  # noqa: N802 (Qt name)
        return QSize(int(self.table_w), self._height)

    def hasHeightForWidth(self) -> bool:  # noqa: N802 (Qt name)
        return True

    def heightForWidth(self, w: int) -> int:  # noqa: N802 (Qt name)
        return self._content_height(w)

    def _goal_block(self, lines: Sequence[str]) -> tuple[float, float]:
        key = tuple(lines)
        size = self._block_sizes.get(key)
        if size is None:
            fm = QFontMetricsF(self.mono)
            size = self._block_sizes[key] = (math.ceil(max(fm.horizontalAdvance(x) for x in lines)) + 3 * PAD,
                                             len(lines) * self.mono_h)
        return size

    def _slot(self, k: int, lines: Sequence[str]) -> tuple[float, float]:
        """The room of the k-th Goal block: the largest that register's Goal takes in the run
        (reserve), so a Goal that changes leaves the others where they were."""
        w, h = self._goal_block(lines)
        if k < len(self._slots):
            return max(w, self._slots[k][0]), max(h, self._slots[k][1])
        return w, h

    def _goal_rows(self, width: float, goals: Sequence[Sequence[str]] | None = None
                   ) -> list[list[tuple[tuple[float, float], tuple[str, ...]]]]:
        """Goal blocks (with their room) in rows that fit `width`."""
        rows: list[list[tuple[tuple[float, float], tuple[str, ...]]]] = [[]]
        x = 0.0
        for k, lines in enumerate(goals if goals is not None else self.shown.goals if self.shown else []):
            w, h = self._slot(k, lines)
            if rows[-1] and x + w > width:
                rows.append([])
                x = 0.0
            rows[-1].append(((w, h), tuple(lines)))
            x += w
        return rows

    def _layout(self, width: float, n_rows: int, goals: Sequence[Sequence[str]], names: Sequence[str] = ()) -> _Layout:
        key = (width, n_rows, tuple(names), tuple(tuple(g) for g in goals))
        lay = self._layouts.get(key)
        if lay is not None:
            return lay
        y: float = self.line * 2
        rows = {}
        for name in names:
            rows[name] = QRectF(0, y, self.table_w, self.line)
            y += self.line
        y = self.line * (2 + n_rows) + self.line // 2
        goals_top = y
        y += self.line
        blocks = []
        for row in self._goal_rows(width, goals):
            x = 0.0
            for (w, h), lines in row:
                blocks.append((QRectF(x, y, w, h), lines))
                x += w
            y += max((h for (_, h), _ in row), default=0) + PAD
        lay = _Layout(rows, goals_top, blocks, QRectF(0, y, width, self.line), int(y + self.line + PAD))
        if len(self._layouts) > 512:
            self._layouts.clear()
            self._reserved_heights.clear()
        self._layouts[key] = lay
        return lay

    def _content_height(self, width: float) -> int:
        h = int(self.line * 3)
        if self.shown is not None:
            h = self._layout(width, len(self.shown.values), self.shown.goals).height
        reserved = self._reserved_heights.get(width)
        if reserved is None:
            reserved = self._reserved_heights[width] = max(
                (self._layout(width, n_rows, goals).height for n_rows, goals in self._reserved), default=0)
        return max(h, reserved)

    def reserve(self, steps: Sequence[tuple[int, list[tuple[str, ...]]]]) -> None:
        """The (register rows, Goal blocks) of every step to come: the height is the largest of them."""
        self._reserved = list({(n, tuple(g)): (n, list(g)) for n, g in steps}.values())
        slots: list[tuple[float, float]] = []
        for _, blocks in self._reserved:
            for k, lines in enumerate(blocks):
                w, h = self._goal_block(lines)
                if k == len(slots):
                    slots.append((w, h))
                else:
                    slots[k] = (max(w, slots[k][0]), max(h, slots[k][1]))
        self._slots = slots
        self._layouts.clear()
        self._reserved_heights.clear()
        self._fit_height(self.width() or self.table_w)

    def _fit_height(self, width: float) -> None:
        h = self._content_height(width)
        if h != self._height:
            self._height = h
            self.setMinimumHeight(h)
            self.updateGeometry()

    def _fits(self, text: str) -> bool:
        return QFontMetricsF(self.font()).horizontalAdvance(text) + self.gap <= self.col_w

    def _cell_texts(self, shown: _Shown) -> list[tuple[str, QFont]]:
        return [(cell_text(cell[key], self._fits), self.font()) for cell in shown.values.values()
                for key, _ in NEIGHBOURS]

    def _widen(self, shown: _Shown) -> None:
        """A number wider than the columns (ten million and more) widens them for the rest of the run."""
        need = max((QFontMetricsF(f).horizontalAdvance(t) + self.gap for t, f in self._cell_texts(shown)),
                   default=0.0)
        if need > self.col_w:
            self.col_w = need
            self.table_w = self.name_w + len(NEIGHBOURS) * self.col_w + PAD
            self._layouts.clear()
            self._reserved_heights.clear()
            self.setMinimumWidth(math.ceil(self.table_w))
            self.update()

    def set_shown(self, shown: _Shown | None) -> None:
        if shown is not None:
            self._widen(shown)
        old, self.shown = self.shown, shown
        self._fit_height(self.width() or self.table_w)
        if old is None or shown is None or list(old.values) != list(shown.values):
            self.update()
            return
        width = self.width()
        new_lay = self._layout(width, len(shown.values), shown.goals, list(shown.values))
        old_lay = self._layout(width, len(old.values), old.goals, list(old.values))
        dirty = QRegion()
        if (old.step, old.pe) != (shown.step, shown.pe):
            dirty += QRect(0, 0, width, self.line)
        for name, rect in new_lay.rows.items():
            if old.values[name] != shown.values[name] or (name in old.written) != (name in shown.written):
                dirty += rect.toAlignedRect()
        if [r for r, _ in old_lay.blocks] != [r for r, _ in new_lay.blocks]:
            dirty += QRect(0, int(new_lay.goals_top), width, self.height() - int(new_lay.goals_top))
        else:
            for (rect, a), (_, b) in zip(old_lay.blocks, new_lay.blocks):
                if a != b:
                    dirty += rect.toAlignedRect()
        if not dirty.isEmpty():
            self.update(dirty)

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
        region = event.region()
        lay = self._layout(self.width(), len(s.values), s.goals, list(s.values))
        p = QPainter(self)
        pal = self.palette()
        text = pal.color(QPalette.ColorRole.WindowText)
        left = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        right = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        p.setFont(self.bold)
        p.setPen(text)
        if region.intersects(QRect(0, 0, self.width(), int(self.line) + 1)):
            p.drawText(QRectF(0, 0, self.width(), self.line), left,
                       f"PE (row {s.pe[0]}, column {s.pe[1]}) after step {s.step}")
        if region.intersects(QRectF(0, self.line, self.width(), self.line).toAlignedRect()):
            for k, (key, _) in enumerate(NEIGHBOURS):
                p.drawText(QRectF(self.name_w + k * self.col_w, self.line, self.col_w, self.line), right,
                           "value" if key == "C" else key)
        for name, cell in s.values.items():
            row = lay.rows[name]
            if not region.intersects(row.toAlignedRect()):
                continue
            y = row.top()
            if name in s.written:
                p.fillRect(row, WRITE_BG)
                p.setPen(QColor("black"))
            else:
                p.setPen(text)
            p.setFont(self.bold)
            p.drawText(QRectF(PAD, y, self.name_w, self.line), left, name)
            p.setFont(self.font())
            for k, (key, _) in enumerate(NEIGHBOURS):
                p.drawText(QRectF(self.name_w + k * self.col_w, y, self.col_w, self.line), right,
                           cell_text(cell[key], self._fits))
        p.setPen(text)
        title = QRectF(0, lay.goals_top, self.width(), self.line)
        if region.intersects(title.toAlignedRect()):
            p.setFont(self.bold)
            p.drawText(title, left, "Goals (kernels over the input, north up)")
        p.setFont(self.mono)
        for rect, lines in lay.blocks:
            if region.intersects(rect.toAlignedRect()):
                for i, line in enumerate(lines):
                    p.drawText(QRectF(rect.x(), rect.y() + i * self.mono_h, rect.width(), self.mono_h),
                               int(Qt.AlignmentFlag.AlignLeft), line)
        if NEWS in s.values and region.intersects(lay.note.toAlignedRect()):
            p.setFont(self.font())
            p.drawText(lay.note, int(Qt.AlignmentFlag.AlignLeft), f"{NEWS} is the macros' scratch register (no Goal).")
        p.end()

    # ---- tooltips: a cell's whole value (its column may show it shortened: cell_text)
    def cell_at(self, x: float, y: float) -> tuple[str, str] | None:
        """The (register, column key) of the value cell at (x, y), None elsewhere."""
        if self.shown is None or x < self.name_w:
            return None
        k = int((x - self.name_w) // self.col_w)
        if k >= len(NEIGHBOURS):
            return None
        lay = self._layout(self.width(), len(self.shown.values), self.shown.goals, list(self.shown.values))
        for name, row in lay.rows.items():
            if row.top() <= y < row.bottom():
                return name, NEIGHBOURS[k][0]
        return None

    def cell_tip(self, x: float, y: float) -> str:
        cell = self.cell_at(x, y)
        if cell is None or self.shown is None:
            return ""
        name, key = cell
        where = "at the PE" if key == "C" else f"at the {dict(N='north', E='east', S='south', W='west')[key]} neighbour"
        return f"{name} {where}: {full_text(self.shown.values[name][key])}"

    def event(self, ev: QEvent) -> bool:
        if ev.type() == QEvent.Type.ToolTip and isinstance(ev, QHelpEvent):
            tip = self.cell_tip(ev.pos().x(), ev.pos().y())
            if tip:
                QToolTip.showText(ev.globalPos(), tip, self)
                return True
        return super().event(ev)

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
        self.scroll_area = QScrollArea()
        self.scroll_area.setWidgetResizable(True)
        self.scroll_area.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.scroll_area.setWidget(self.view)
        bar_w = self.scroll_area.verticalScrollBar().sizeHint().width()
        self.scroll_area.setMinimumWidth(math.ceil(self.view.table_w) + bar_w + 2)
        lay.addWidget(self.scroll_area, 1)
        self._goal_cache: dict[tuple[str, Any], list[str]] = {}
        self._step_blocks: dict[tuple[int, tuple[str, ...]], tuple[Mapping[str, Any], list[list[str]]]] = {}

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
        self._step_blocks.clear()
        self.view.reserve([])
        self.view.set_shown(None)

    def _blocks(self, names: Sequence[str], goals: Mapping[str, Any]) -> list[list[str]]:
        """The Goal blocks of a step, found by the identity of its Goals (a replay's steps keep theirs):
        a Goal's hash walks its fractions, which took a tenth of a millisecond a step."""
        key = (id(goals), tuple(names))
        hit = self._step_blocks.get(key)
        if hit is not None and hit[0] is goals:
            return hit[1]
        blocks = self._make_blocks(names, goals)
        if len(self._step_blocks) > 4096:
            self._step_blocks.clear()
        self._step_blocks[key] = (goals, blocks)
        return blocks

    def _make_blocks(self, names: Sequence[str], goals: Mapping[str, Any]) -> list[list[str]]:
        blocks = []
        for name in names:
            if name == NEWS:
                continue
            key = (name, goals.get(name))
            if key not in self._goal_cache:
                self._goal_cache[key] = goal_lines(goals.get(name), name)
            blocks.append(self._goal_cache[key])
        return blocks

    def reserve(self, names: Sequence[str], goals_per_step: Sequence[Mapping[str, Any]]) -> None:
        """Make room for the largest step of a run (its registers, and each step's Goals), so that
        stepping never changes the pane's height (which lays the window out again)."""
        self.view.reserve([(len(names), [tuple(b) for b in self._blocks(names, g)]) for g in goals_per_step])

    def show_pe(self, step: int, pe: tuple[int, int], values: Mapping[str, Mapping[str, float | None]],
                goals: Mapping[str, Any], written: Sequence[str]) -> None:
        self.view.set_shown(_Shown(step, pe, values, self._blocks(list(values), goals), tuple(written)))
        bar_w = self.scroll_area.verticalScrollBar().sizeHint().width()
        if self.scroll_area.minimumWidth() < math.ceil(self.view.table_w) + bar_w + 2:     # the view widened
            self.scroll_area.setMinimumWidth(math.ceil(self.view.table_w) + bar_w + 2)
