"""What a window does not need until it is used is built when first wanted: an engine tab's panel
(when its tab is first on screen, or on `window.panels[name]`), and a plot's right-click menu."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def test_a_plots_menu_is_built_when_first_asked_for(qtbot) -> None:
    from pyqtgraph.graphicsItems.ViewBox.ViewBoxMenu import ViewBoxMenu

    from gui.plotting import ThemedPlot

    plot = ThemedPlot(title="t", x_label="x", y_label="y")
    qtbot.addWidget(plot)
    box = plot.getPlotItem().getViewBox()
    assert box.menu is None and box.menuEnabled()          # on, but not built yet
    menu = box.getMenu(None)
    assert isinstance(menu, ViewBoxMenu) and box.menu is menu
    assert box.getMenu(None) is menu                        # built once
    assert [a.text() for a in box.getContextMenus(None)] == [a.text() for a in menu.actions()]
    assert "View All" in [a.text() for a in menu.actions()]


def test_engine_panels_are_built_when_reached_also_on_screen(qtbot) -> None:
    from core.engine import engines
    from gui.main_window import EngineTab, MainWindow
    from gui.panels.base import EnginePanel

    window = MainWindow(restore_layout=False)
    qtbot.addWidget(window)
    names = list(engines())
    assert list(window.panels) == names and len(window.panels) == len(names)
    current = window.current_engine()
    assert current is not None and all(window.panels.built(n) is None for n in names)   # not shown yet
    others = [n for n in names if n != current.name]
    name = others[0]
    panel = window.panels[name]                             # reached by code: built, in its tab
    assert isinstance(panel, EnginePanel) and window.panels.built(name) is panel
    tab = window.tabs.widget(names.index(name))
    assert isinstance(tab, EngineTab) and tab.panel is panel and panel.parentWidget() is tab
    assert window.panels[name] is panel                     # once
    window.set_current_engine(others[-1])                   # current, off screen: built when shown
    assert window.panels.built(others[-1]) is None
    assert window.field_errors(name) == []
    window.show()                                           # on screen: the current tab's panel, on show
    shown = window.panels.built(others[-1])
    assert shown is not None and shown.isVisible()
    unreached = [n for n in names if window.panels.built(n) is None]
    assert unreached
    window.set_current_engine(unreached[0])                 # a tab shown on screen: built and on show
    panel = window.panels.built(unreached[0])
    assert panel is not None and panel.isVisible()


def test_the_current_tabs_panel_asked_for_off_screen_draws_its_run(qtbot) -> None:
    from window_helpers import EXAMPLE

    from gui.main_window import MainWindow

    window = MainWindow(restore_layout=False)
    window.interactive = False
    qtbot.addWidget(window)
    assert window.open_path(EXAMPLE, ask=False)
    current = window.current_engine()
    assert current is not None and window.panels.built(current.name) is None
    shown = window.project.shown(current.name)
    assert shown is not None
    panel = window.panels[current.name]                     # asked for: built and drawn as on show
    assert panel.run is shown and not panel._stale
    other = next(n for n in window.panels if n != current.name and window.project.shown(n) is not None)
    behind = window.panels[other]                           # another tab's: drawn when it is shown
    assert behind.run is None and behind._stale
    window.set_current_engine(other)
    assert behind.run is window.project.shown(other) and not behind._stale
