"""Issue 49, "Clipped text": at 1920x1080 and 1366x768, on every tab, dock and the Compare view, no
combo box cuts its current text or its popup's items, no plot's tick labels run into each other, and
the stepper's PE inspector gives every number its room. Labels, buttons, table headers and vertical
axis titles are measured by tests/test_gui_space.py's `clipped`; this file adds what it did not see.

Combo boxes: the window's rule (gui.main_window.fit_combo) is that a combo box shows its whole current
text; only an entry wider than LONG_ENTRY_PX (a long file or board name) may be elided, with "…" and
the whole text in its tooltip. Its popup is always as wide as its widest item."""

from __future__ import annotations

import pyqtgraph as pg
import pytest
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QFont, QFontMetricsF, QPainter
from PySide6.QtWidgets import QAbstractSpinBox, QApplication, QComboBox, QLineEdit, QStyle, QTabBar, QWidget
from test_gui_space import _scrolls_sideways, clipped, shown_width
from window_helpers import SIZES, settle, show_every_view, shown_example_window


def combo_problems(root: QWidget, popups: bool = True) -> list[str]:
    from gui.combo_fit import ELIDE, LONG_ENTRY_PX, elided_text, text_room, tooltip_text

    cut: list[str] = []
    for combo in root.findChildren(QComboBox):
        if not combo.isVisible() or combo.count() == 0 or _scrolls_sideways(combo):
            continue
        room = text_room(combo)
        width = shown_width(combo)
        if width is not None and width < combo.width():        # a parent cuts the box itself
            room -= combo.width() - width
        fm = combo.fontMetrics()
        text = combo.currentText()
        shown = combo.lineEdit().text() if combo.isEditable() and combo.lineEdit() else elided_text(combo)
        if shown != text:                       # elided: only where meant, the whole text in its tooltip
            if not combo.property(ELIDE) and fm.horizontalAdvance(text) <= LONG_ENTRY_PX:
                cut.append(f"combo {text[:40]!r} elided to {shown!r}, though a setting's choice")
            if text not in tooltip_text(combo):
                cut.append(f"combo {text[:40]!r} elided to {shown!r} without the text in its tooltip")
            if not shown.endswith("…"):
                cut.append(f"combo {text[:40]!r} shown as {shown!r}")
        if fm.horizontalAdvance(shown) > room + 1:
            cut.append(f"combo {text[:50]!r}: {room} < {fm.horizontalAdvance(shown)} px")
        if popups:
            cut += popup_problems(combo)
    for spin in root.findChildren(QAbstractSpinBox):
        edit = spin.findChild(QLineEdit)
        if not spin.isVisible() or edit is None or _scrolls_sideways(spin):
            continue
        room = edit.contentsRect().width() - 4              # QLineEdit's own side margins
        need = edit.fontMetrics().horizontalAdvance(edit.text())
        if need > room + 1:
            cut.append(f"spin box {edit.text()!r}: {room} < {need} px")
    return cut


def popup_problems(combo: QComboBox) -> list[str]:
    """Open the popup and measure each item against the list's room. Qt lays a popup out from the
    box's items, font, width and place on the screen alone: where none of these changed since this
    box's popup was last measured (the same bar seen from another page), that measure stands."""
    seen = (tuple(combo.itemText(k) for k in range(combo.count())), combo.font().key(), combo.width(),
            combo.mapToGlobal(combo.rect().topLeft()).toTuple(), combo.screen().geometry().getRect())
    last = getattr(combo, "_popup_measured", None)
    if last is not None and last[0] == seen:
        return last[1]
    found = _measure_popup(combo)
    combo._popup_measured = (seen, found)  # type: ignore[attr-defined]
    return found


def _measure_popup(combo: QComboBox) -> list[str]:
    combo.showPopup()
    QApplication.processEvents()
    view = combo.view()
    room = view.viewport().width()
    fm = view.fontMetrics()
    worst = max(range(combo.count()), key=lambda k: fm.horizontalAdvance(combo.itemText(k)))
    margin = 2 * (view.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, view) + 1)
    need = fm.horizontalAdvance(combo.itemText(worst)) + margin
    combo.hidePopup()
    QApplication.processEvents()
    return [f"combo {combo.currentText()[:40]!r}'s popup: {room} < {need} px for {combo.itemText(worst)!r}"] \
        if need > room + 1 else []


def tab_problems(root: QWidget) -> list[str]:
    """Tab bars: every tab in view, and a title too long for its tab elided with its tooltip naming it."""
    cut: list[str] = []
    for bar in root.findChildren(QTabBar):
        if not bar.isVisible():
            continue
        for i in range(bar.count()):
            rect, title = bar.tabRect(i), bar.tabText(i).replace("&", "")
            if rect.right() > bar.width() + 1 or rect.left() < -1:
                cut.append(f"tab {title!r} out of view ({rect.left()}..{rect.right()} of {bar.width()} px)")
            need = bar.fontMetrics().horizontalAdvance(title)
            room = rect.width() - 2 * bar.style().pixelMetric(QStyle.PixelMetric.PM_TabBarTabHSpace, None, bar) // 2
            if bar.tabButton(i, QTabBar.ButtonPosition.RightSide) is not None:
                room -= bar.tabButton(i, QTabBar.ButtonPosition.RightSide).width()
            if need > room + 1 and (bar.elideMode() == Qt.TextElideMode.ElideNone or title not in bar.tabToolTip(i)):
                cut.append(f"tab {title!r}: {room} < {need} px, not elided with its title in the tooltip")
    return cut


def tick_problems(root: QWidget) -> list[str]:
    """Horizontal axes whose tick labels overlap (the bound's per-layer names) or run past the plot."""
    cut: list[str] = []
    for plot in root.findChildren(pg.PlotWidget):
        if not plot.isVisible():
            continue
        axis = plot.getPlotItem().getAxis("bottom")
        if not axis.isVisible():
            continue
        boxes = []
        edge = plot.viewport().rect()
        for rect, _flags, text in _drawn_texts(axis):
            boxes.append((rect.left(), rect.right(), text))
            on_widget = plot.mapFromScene(axis.mapRectToScene(rect)).boundingRect()
            if on_widget.right() > edge.right() + 1 or on_widget.left() < edge.left() - 1:
                cut.append(f"tick label {text!r} runs past the plot's edge "
                           f"({on_widget.left()}..{on_widget.right()} of {edge.width()} px)")
        boxes.sort()
        for (l0, r0, t0), (l1, r1, t1) in zip(boxes, boxes[1:]):
            if l1 < r0 - 1:
                cut.append(f"tick labels {t0!r} and {t1!r} overlap on {plot.getPlotItem().titleLabel.text!r}")
    return cut


def _drawn_texts(axis: pg.AxisItem) -> list:
    """The tick texts the axis draws now, with their rectangles (pyqtgraph's own layout)."""
    p = axis.generateDrawSpecs(_NullPainter())
    return [] if p is None else p[2]


class _NullPainter:
    """What AxisItem.generateDrawSpecs asks of a painter: the tick font's metrics."""

    def __init__(self) -> None:
        self._font = QApplication.font()

    def setFont(self, font):  # noqa: N802 (Qt name)
        self._font = font

    def font(self):
        return self._font

    def boundingRect(self, rect, flags, text):  # noqa: N802 (Qt name)
        from PySide6.QtGui import QFontMetricsF

        return QFontMetricsF(self._font).boundingRect(rect, flags, text)


VALUE_GAP = 3       # px a value keeps from its left neighbour in the PE inspector


def painted_texts(widget: QWidget) -> list[tuple[QRectF, int, str, QFont]]:
    """Every text the widget's paintEvent draws into a rectangle: (room, flags, text, font)."""
    drawn: list = []
    real = QPainter.drawText

    def record(painter, *args):
        if len(args) == 3 and isinstance(args[0], QRectF):
            drawn.append((QRectF(args[0]), int(args[1]), str(args[2]), QFont(painter.font())))
        return real(painter, *args)

    QPainter.drawText = record
    try:
        widget.grab()
    finally:
        QPainter.drawText = real
    return drawn


def inspector_problems(window) -> list[str]:
    """Every step of the loaded program: each number the PE inspector paints fits its column with a
    gap to the next ("-0.0703" in bold ran into its neighbour), each text fits the view."""
    stepper = window.panels["simulate"].stepper
    view = stepper.inspector.view
    at = stepper.step
    out = []
    for step in range(stepper.steps + 1):
        stepper.set_step(step)
        QApplication.processEvents()
        texts = painted_texts(view)
        assert any(t[2] == "value" for t in texts), "the inspector painted no table"
        for room, flags, text, font in texts:
            need = QFontMetricsF(font).horizontalAdvance(text.split("\n")[0])
            gap = VALUE_GAP if flags & int(Qt.AlignmentFlag.AlignRight) else 0
            if need + gap > room.width() + 0.5 or room.left() + (room.width() if gap else need) > view.width() + 0.5:
                out.append(f"PE inspector at step {step}: {text!r} needs {need + gap:.0f} of {room.width():.0f} px")
    out += combo_problems(stepper, popups=False)         # the jump box at the last step: "# 21 of 21"
    stepper.set_step(at)
    return sorted(set(out))


@pytest.fixture
def window(qtbot):
    yield from shown_example_window(qtbot)


def each_page(window):
    """Show every tab in turn, and in each every page of the tab widgets inside it (the engines'
    plot, table and tile tabs), painted; yields a name for each."""
    from PySide6.QtWidgets import QTabWidget

    def show(name: str, page: QWidget | None = None):
        settle()
        # painted: every plot has laid its axes out. An inner page is all that changed since its tab's
        # first page was painted whole (the docks, the choice bar and the settings with it): it alone is
        # painted then (Qt paints any neighbour it resizes while settling).
        (page or window).grab()
        settle()
        return name

    for i in range(window.tabs.count()):
        window.tabs.setCurrentIndex(i)
        top = window.tabs.tabText(i)
        yield show(top)
        page = window.tabs.widget(i)
        for inner in [t for t in page.findChildren(QTabWidget) if t.isVisible()]:
            first = inner.currentIndex()
            for j in range(inner.count()):
                if j != first and inner.isTabEnabled(j):
                    inner.setCurrentIndex(j)
                    yield show(f"{top} / {inner.tabText(j)}", inner.currentWidget())
            inner.setCurrentIndex(first)


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_no_combo_tick_or_number_is_cut_on_any_tab(window, qtbot, size):
    stepper = show_every_view(window, qtbot, size)   # the stepper with its program loaded, Compare too
    problems = {}
    for name in each_page(window):
        cut = combo_problems(window) + tick_problems(window) + tab_problems(window) + clipped(window)
        if stepper.isVisible():
            cut += inspector_problems(window)
        if window.width() > size[0] or window.height() > size[1]:      # else the screen cuts it
            cut.append(f"the page makes the window {window.width()}x{window.height()}")
        if cut:
            problems[name] = cut
    assert not problems, problems


def test_every_library_item_and_run_fits_its_combo_boxes(window, qtbot):
    """Each workload, target and shown run in turn: the choice bars' combo boxes show it whole."""
    window.resize(*SIZES[1])
    problems = set()
    for name in window.panels:
        window.set_current_engine(name)
        bar = window.bars[name]
        for combo in bar.findChildren(QComboBox):
            for k in range(combo.count()):
                combo.setCurrentIndex(k)
                QApplication.processEvents()
                problems.update(combo_problems(bar))
    assert not problems, sorted(problems)


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_no_text_is_cut_in_the_docks_or_the_library_editors(window, size):
    """Each bottom dock raised in turn, the library's editor for each item of the example, the tour."""
    window.resize(*size)
    problems = {}
    for dock in (window.study_dock, window.log_dock, window.runs_dock):
        dock.raise_()
        settle()
        window.grab()
        settle()
        if cut := combo_problems(window) + clipped(window):
            problems[dock.windowTitle()] = cut
    for lib in ("workloads", "targets"):
        for entry in window.project.entries(lib):
            window.library.select(lib, entry.id)
            settle()
            if cut := combo_problems(window.library) + clipped(window.library):
                problems[entry.name] = cut
    window.show_tour()                                  # Help > Tour, the window's own dialog
    settle()
    tour = window.tour
    cut = combo_problems(tour) + clipped(tour)
    if tour.width() > size[0] or tour.height() > size[1]:
        cut.append(f"the tour is {tour.width()}x{tour.height()}")
    if cut:
        problems["Tour"] = cut
    tour.close()
    assert not problems, problems
