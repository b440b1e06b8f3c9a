"""Issue 30, "Cramped and clipped": the library dock has room and a steady width, Compare is a full
view with its plots overlaid, no label, axis title or table header is cut at 1920x1080 or 1366x768,
and status notes go once they are stale."""

from __future__ import annotations


import pyqtgraph as pg
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QAbstractButton, QAbstractItemView, QCheckBox, QHeaderView, QLabel,
                               QScrollArea, QWidget)
from window_helpers import HANG_MS, SIZES, settle, show_every_view, shown_example_window


@pytest.fixture
def window(qtbot):
    yield from shown_example_window(qtbot)


# ---------------------------------------------------------------- what "clipped" means
def _scrolls_sideways(widget: QWidget) -> bool:
    """Inside a scroll area that scrolls sideways: the text is reachable, not cut."""
    p = widget.parentWidget()
    while p is not None:
        if isinstance(p, QScrollArea) and p.horizontalScrollBar().maximum() > 0 and \
                p.horizontalScrollBarPolicy() != Qt.ScrollBarPolicy.ScrollBarAlwaysOff:
            return True
        p = p.parentWidget()
    return False


def shown_width(widget: QWidget) -> int | None:
    """How much of the widget's width is on show: a parent (a scroll area's viewport) may cut it
    although the widget itself is wide enough; None when none of it is (scrolled away)."""
    region = widget.visibleRegion().boundingRect()
    return None if region.isEmpty() else min(widget.width(), region.right() + 1)


def clipped(root: QWidget) -> list[str]:
    """Every visible text under `root` that is cut: a QLabel or a button narrower than its text, a
    plot's vertical axis title longer than the axis, a table header narrower than its title."""
    cut: list[str] = []
    for label in root.findChildren(QLabel):
        if label.isVisible() and label.text() and not label.wordWrap() and not _scrolls_sideways(label):
            width = shown_width(label)
            if width is not None and width + 1 < label.sizeHint().width():
                cut.append(f"label {label.text()[:50]!r}: {width} < {label.sizeHint().width()} px")
    for button in root.findChildren(QAbstractButton):
        text = button.text().replace("&", "")
        if not button.isVisible() or not text or _scrolls_sideways(button):
            continue
        # a check box's size hint is its box and text; a push button's has a style minimum width
        need = button.sizeHint().width() if isinstance(button, QCheckBox) else \
            button.fontMetrics().horizontalAdvance(text) + 6
        width = shown_width(button)
        if width is not None and width + 1 < need:
            cut.append(f"button {text[:50]!r}: {width} < {need} px")
    for plot in root.findChildren(pg.PlotWidget):
        if not plot.isVisible():
            continue
        for side in ("left", "right"):
            axis = plot.getPlotItem().getAxis(side)
            if axis.isVisible() and axis.labelText and axis.label.isVisible():
                need, room = axis.label.boundingRect().width(), axis.geometry().height()
                if need > room + 1:
                    cut.append(f"axis title {axis.labelText!r}: {room:.0f} < {need:.0f} px")
    for header in root.findChildren(QHeaderView):
        view = header.parentWidget()
        if not header.isVisible() or header.orientation() != Qt.Orientation.Horizontal or header.model() is None:
            continue
        if isinstance(view, QAbstractItemView) and view.horizontalScrollBar().maximum() > 0:
            continue                       # the table scrolls sideways: its headers are reachable
        fm = header.fontMetrics()
        for s in range(header.count()):
            title = header.model().headerData(s, Qt.Orientation.Horizontal)
            if not header.isSectionHidden(s) and title and header.sectionSize(s) < fm.horizontalAdvance(str(title)) + 6:
                cut.append(f"header {title!r}: {header.sectionSize(s)} px")
    return cut


@pytest.mark.slow
@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_no_text_is_clipped_on_any_tab(window, qtbot, size):
    show_every_view(window, qtbot, size)             # the stepper with its program loaded, Compare too
    problems = {}
    for i in range(window.tabs.count()):
        window.tabs.setCurrentIndex(i)
        settle()
        image = window.grab()                       # painted, so every plot has laid its axes out
        assert not image.isNull()
        settle()
        cut = clipped(window)
        if window.width() > size[0] or window.height() > size[1]:      # else the screen cuts it
            cut.append(f"the tab makes the window {window.width()}x{window.height()}")
        if cut:
            problems[window.tabs.tabText(i)] = cut
    assert not problems, problems


# ---------------------------------------------------------------- the library dock
def test_library_dock_has_room_a_splitter_and_a_steady_width(window):
    lib = window.library
    assert [lib.splitter.widget(i).isAncestorOf(w) for i, w in
            enumerate((lib.trees["workloads"], lib.trees["targets"], lib.editor_area))] == [True] * 3
    for tree in lib.trees.values():
        assert tree.horizontalScrollBarPolicy() == Qt.ScrollBarPolicy.ScrollBarAlwaysOff
        rows = tree.topLevelItemCount()
        assert tree.viewport().height() >= rows * tree.sizeHintForRow(0), "every item of the example in view"
    assert window.library_dock.width() >= 380
    widths = set()
    for lib_name in ("workloads", "targets"):
        for entry in window.project.entries(lib_name):
            lib.select(lib_name, entry.id)
            settle()
            widths.add(window.library_dock.width())
    assert len(widths) == 1, f"the dock's width jumped: {sorted(widths)}"


# ---------------------------------------------------------------- Compare
def test_compare_opens_as_a_full_view_with_plots_overlaid(window):
    window.compare(["r3", "r4"])
    settle()
    assert window.tabs.currentWidget() is window.compare_view
    assert window.tabs.tabText(window.tabs.currentIndex()) == "Compare runs"
    assert window.compare_view.height() > 0.5 * window.height()
    plot = next(iter(window.compare_view.plots.values()))
    assert len(plot.series()) >= 2                    # both runs' curves in one plot
    assert window.current_engine() is None and not window.act_run.isEnabled()
    window.close_compare()
    assert window.tabs.indexOf(window.compare_view) < 0
    window.compare(["r3", "r4"])                      # and it comes back
    assert window.tabs.currentWidget() is window.compare_view


# ---------------------------------------------------------------- stale status notes
def test_a_library_note_goes_at_the_next_change_or_after_a_while(window):
    lib = window.library
    entry = window.project.entries("workloads")[-1]
    lib.select("workloads", entry.id)
    lib.delete_current()
    assert lib.message.isVisible() and "Deleted" in lib.message.text()
    window.project.undo()
    assert not lib.message.isVisible(), "the deletion note stayed after its undo"
    from gui.library_dock import MESSAGE_MS

    lib.delete_current()
    assert lib._message_timer.isActive() and lib._message_timer.interval() == MESSAGE_MS
    lib._message_timer.timeout.emit()                  # its time is up (no waiting on the clock)
    assert not lib.message.isVisible()


@pytest.mark.slow
def test_a_progress_note_goes_when_its_run_ends(qtbot, demo_engine):
    from gui.main_window import MainWindow

    w = MainWindow(restore_layout=False)
    w.interactive = False
    qtbot.addWidget(w)
    w.show()
    w.set_current_engine("demo")
    w.project.set_setting("demo", "steps", 5)
    w.project.set_setting("demo", "fail_at", 3)
    seen = []
    w.runner.progress.connect(lambda name, p: seen.append(p.message))
    w.run_current()
    qtbot.waitUntil(lambda: w.project.runs and w.project.runs[-1].status == "failed", timeout=HANG_MS)
    qtbot.waitUntil(lambda: not w.runner.running(), timeout=HANG_MS)
    settle()
    assert "step" not in w.statusBar().currentMessage(), w.statusBar().currentMessage()
    w.shutdown_jobs()


def test_the_stepper_controls_fit_beside_their_scroll_bar(window, qtbot):
    """The stepper's control column scrolls up and down on most screens; its bar took 14 px of a
    column whose content was made as wide as the column, so the last transport button and Go were
    cut (seen on a 1366x768-class window). The content now fits what the bar leaves."""
    window.resize(1366, 700)
    window.open_run("r2")
    stepper = window.panels["simulate"].stepper
    qtbot.waitUntil(lambda: stepper.replay is not None, timeout=HANG_MS)
    settle()
    scroll = next(a for a in stepper.findChildren(QScrollArea)
                  if a.widget() is not None and a.widget().isAncestorOf(stepper.end_button))
    assert scroll.widget().width() <= scroll.viewport().width()
    for b in (stepper.first_button, stepper.back_button, stepper.forward_button, stepper.end_button,
              stepper.jump_button):
        assert shown_width(b) == b.width(), b.text()
