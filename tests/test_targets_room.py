"""The Targets tab on a 1366x768 screen: its minimum height no longer holds the bottom docks small
(its table and plots scroll below the bar and the status, and the library's lists scroll too), so
the Studies dock can take most of the screen, while in the default layout the table shows every
one of the six starter targets' rows with no scrolling. The parts are the fake costings of
tests/test_comparison_runs.py, run on threads of this process."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from core.run_controller import thread_launcher
from gui.targets_panel import PLOTS_MIN_H
from tests import test_comparison_runs as runs
from tests.test_comparison_runs import Fakes
from tests.window_helpers import HANG_MS, SIZES, settle

fakes = runs.fakes          # the fixture: fake costings for every target kind
SMALL = SIZES[1]            # 1366x768
MIN_TAB_H = 160             # the Targets tab's minimum height may not exceed this (it was 258 px)


@pytest.fixture
def window(qtbot, fakes: Fakes):
    from gui.main_window import MainWindow

    w = MainWindow(restore_layout=False)          # a new user's window: the starter library, six targets
    w.interactive = False
    w.runner.controller.launcher = thread_launcher
    qtbot.addWidget(w)
    w.resize(*SMALL)
    w.show()
    settle()
    yield w
    w.targets_panel.shutdown()
    w.shutdown_jobs()


def test_the_targets_tab_lets_the_studies_dock_grow_and_shows_every_row(window, qtbot) -> None:
    panel = window.targets_panel
    window.tabs.setCurrentWidget(panel)
    settle()
    QTest.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.comparison is not None, timeout=HANG_MS)
    settle()
    t = panel.table
    assert t.rowCount() == len(window.project.entries("targets")) == 6

    # the tab no longer sets the tab area's minimum height
    assert panel.minimumSizeHint().height() <= MIN_TAB_H, panel.minimumSizeHint()

    # the default layout: every target's row above the plots, nothing to scroll
    assert t.viewport().height() >= sum(t.rowHeight(i) for i in range(t.rowCount()))
    assert panel.scroller.verticalScrollBar().maximum() == 0
    assert panel.plots.height() >= max(PLOTS_MIN_H, 0.35 * panel.split.height())      # the plots keep their room

    # the Studies dock asked for most of the screen gets it (it stopped at 334 px)
    window.study_dock.raise_()
    settle()
    window.resizeDocks([window.study_dock], [480], Qt.Orientation.Vertical)
    settle()
    assert window.study_dock.height() >= 440, (window.tabs.minimumSizeHint(), window.library_dock.minimumSizeHint())
    # the tab, short now, squeezes nothing: the table and plots scroll whole; the bar stays in view
    split, bar = panel.split, panel.scroller.verticalScrollBar()
    assert split.height() >= split.minimumSizeHint().height() and bar.maximum() > 0
    assert panel.run_button.isVisible() and panel.run_button.geometry().bottom() < panel.height()
    lib = window.library
    assert lib.splitter.height() >= lib.splitter.minimumSizeHint().height()       # the lists scroll too
