"""The main window: the library on the left, one tab per engine (each with the choice bar saying what
it runs), the runs and the log below, a comparison on demand; Run/Cancel, sessions, undo.

All state is in `self.project` (core.project.Project); widgets read and write it. The window only
keeps view state: which run each tab shows. Runs on their way are the run controller's
(core.run_controller, through gui.run_adapter): the window asks it to start and cancel, and shows
what it reports.
"""

from __future__ import annotations

import gc
import platform
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import QByteArray, QSettings, Qt, QTimer
from PySide6.QtGui import QAction, QCloseEvent, QDragEnterEvent, QDropEvent, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (QComboBox, QDockWidget, QFileDialog, QLabel, QMainWindow, QMessageBox,
                               QPlainTextEdit, QProgressBar, QSplitter, QTabBar, QTabWidget, QToolBar,
                               QToolButton, QVBoxLayout, QWidget)

from core import __version__
from core import session as sessions
from core.engine import EngineSpec, engines
from core.errors import InputError
from core.jobs import LogLine, Progress, eta_text
from core.lifecycle import RunOutcome
from core.project import ComparedRuns, Project, Run, Snapshot
from core.comparison_run import last_recorded
from core.project_events import ChoiceChanged, LibraryChanged, Reset, RunChanged
from core.workload import Target, Workload
from gui.choice_bar import ChoiceBar
from gui.combo_fit import ELIDE, ComboElider, fit_combos
from gui.follow import follow
from gui.compare_view import CompareView
from gui.library_dock import LibraryBrowser
from gui.panels import panel_classes
from gui.panels.base import EnginePanel
from gui.panels.generic import GenericPanel
from gui.run_adapter import RunAdapter
from gui.runs_view import RunsView
from gui.study_panel import StudyPanel
from gui.targets_panel import TargetsPanel

APP_NAME = "Dataflow Explorer"
MAX_RECENT = 8
DEFAULT_SIZE = (1360, 860)
PROGRESS_MESSAGE_MS = 30_000    # an engine's progress note goes if no newer one follows (issue 30)
LIBRARY_WIDTH = 400             # the library dock's first width: names, kinds and summaries readable


def fit_to_screen(window: QMainWindow) -> None:
    """Shrink the first window to the screen's free area (never below the window's minimum)."""
    screen = window.screen() or QGuiApplication.primaryScreen()
    if screen is None:
        return
    free = screen.availableGeometry()
    window.resize(min(window.width(), free.width()), min(window.height(), free.height()))


class EngineTab(QWidget):
    """One engine's tab: the choice bar over the engine's panel, the panel built when first wanted
    (`LazyPanels`)."""

    def __init__(self, bar: ChoiceBar, spec: EngineSpec) -> None:
        super().__init__()
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 0)
        lay.addWidget(bar)
        self.bar, self.spec = bar, spec
        self.panel: EnginePanel | None = None

    def put(self, panel: EnginePanel) -> None:
        layout = self.layout()
        assert isinstance(layout, QVBoxLayout)
        layout.addWidget(panel, 1)
        panel.show()            # now, not on the next event-loop pass: it is on show with its tab
        self.panel = panel


class LazyPanels(Mapping[str, EnginePanel]):
    """The window's engine panels by engine name, each built when first reached (its tab shown, or
    `window.panels[name]`): a panel and its plots cost more than the rest of the window, and most
    starts show one tab."""

    def __init__(self, build: Callable[[str], EnginePanel], names: list[str]) -> None:
        self._build, self._names = build, names
        self._built: dict[str, EnginePanel] = {}

    def __getitem__(self, name: str) -> EnginePanel:
        if name not in self._built:
            if name not in self._names:
                raise KeyError(name)
            self._built[name] = self._build(name)
        return self._built[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, name: object) -> bool:
        return name in self._names

    def built(self, name: str) -> EnginePanel | None:
        """The panel if it was built, without building it."""
        return self._built.get(name)


class MainWindow(QMainWindow):
    # False in non-interactive modes (--screenshot): no modal dialog ever opens; errors go to stderr
    # as one line each, and questions get their safe answer (nothing overwritten or discarded).
    interactive = True
    # The version of the session file as last opened or saved here (core.session.stamp): a save that
    # finds another version on disk asks before replacing it.
    _disk_stamp: str | None = None
    # Run's enabled state and tip and Cancel's enabled state as last set (`_update_run_actions`)
    _run_actions_state: tuple[bool, str, bool] | None = None

    def __init__(self, restore_layout: bool = True) -> None:
        super().__init__()
        self.setAcceptDrops(True)
        self.resize(*DEFAULT_SIZE)
        self.path: Path | None = None
        self.project = Project.starter()
        ev = self.project.events
        follow(self, ev.modified, lambda m: self.setWindowModified(m.modified))
        follow(self, ev.workloads, self._library_changed)
        follow(self, ev.targets, self._library_changed)
        follow(self, ev.reset, self._library_changed)
        follow(self, ev.choice, self._choice_changed)
        follow(self, ev.run, self._run_changed)
        self.project.undo_stack.changed.connect(self._update_undo_actions)
        # every run (a tab's, a study's points) goes through the one run controller, polled here
        self.runner = RunAdapter(self.project, parent=self)
        self.runner.started.connect(self._on_started)
        self.runner.events.connect(self._on_events)
        self.runner.progress.connect(self._on_progress)
        self.runner.finished.connect(self._on_finished)

        # ---- centre: one tab per engine
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        # every tab in view (no scroll arrows that hide the first ones): a title that does not fit is
        # elided with "…" and read whole in its tooltip (issue 49)
        self.tabs.setElideMode(Qt.TextElideMode.ElideRight)
        self.tabs.setUsesScrollButtons(False)
        self.bars: dict[str, ChoiceBar] = {}
        self._engine_tabs: dict[str, EngineTab] = {}
        self.panels = LazyPanels(self._build_panel, list(engines()))
        for name, spec in engines().items():
            bar = ChoiceBar(self.project, spec, lambda run_id: self.open_run(run_id))
            self.bars[name] = bar
            tab = EngineTab(bar, spec)
            self._engine_tabs[name] = tab
            tab.setObjectName(f"tab-{name}")        # names the tab's splitters in the saved layout
            self.tabs.addTab(tab, spec.title)
            self.tabs.setTabToolTip(self.tabs.count() - 1, f"{spec.title}: {spec.summary}")
        if not self.panels:
            self.tabs.addTab(QLabel("No engines are installed."), "Engines")
        # one network costed on every target of the library (core.comparison, issue 51)
        # its parts are runs of the window's one controller; a row or a point opens its part's run
        # built when its tab is first shown or `targets_panel` first read; a placeholder holds its place
        self._targets_panel: TargetsPanel | None = None
        self._targets_holder = QWidget()
        self.tabs.addTab(self._targets_holder, "Targets")
        self.tabs.setTabToolTip(self.tabs.count() - 1, "Targets: one network costed on every target of the "
                                "library, each total against its limit")
        self.tabs.currentChanged.connect(self._tab_changed)
        self.setCentralWidget(self.tabs)
        # A combo box shows its whole text; only names (the choice bars') and overlong entries are
        # elided, with the whole text in the tooltip, so they never set the window's minimum width
        # (gui.combo_fit, issue 49).
        self._elider = ComboElider(self)
        for bar in self.bars.values():
            for combo in bar.findChildren(QComboBox):
                combo.setProperty(ELIDE, True)
        fit_combos(self, self._elider)
        for widget in self.findChildren(QWidget):      # and every layout above it recomputes its own
            widget.updateGeometry()

        # ---- docks: library (left), runs and log (bottom), comparison (right, on demand)
        self.library = LibraryBrowser(self.project, self)
        self.library_dock = self._dock("Library", "library", self.library, Qt.DockWidgetArea.LeftDockWidgetArea)
        self.library.field_errors_changed.connect(self._library_field_errors_changed)
        self.runs_view = RunsView(self.project, self)
        self.runs_dock = self._dock("Runs", "runs", self.runs_view, Qt.DockWidgetArea.BottomDockWidgetArea)
        self.log_view = QPlainTextEdit()
        self.log_view.setReadOnly(True)
        self.log_view.setMaximumBlockCount(5000)
        self.log_dock = self._dock("Log", "log", self.log_view, Qt.DockWidgetArea.BottomDockWidgetArea)
        self.tabifyDockWidget(self.runs_dock, self.log_dock)
        self.runs_dock.raise_()
        # Compare is a full view: a tab beside the engines' (opened by compare(), closed by its ×),
        # the tables beside the overlaid plots at the window's whole size (issue 30: in the bottom
        # dock it needed scrolling).
        self.compare_view = CompareView(self.project)
        self.compare_view.setObjectName("compare")
        # sweeps: every point becomes a run of the project; the panel built when its dock is first
        # raised or `study_panel` first read (the dock starts behind Runs)
        self._study_panel: StudyPanel | None = None
        self.study_dock = self._dock("Studies", "studies", QWidget(), Qt.DockWidgetArea.BottomDockWidgetArea)
        self.study_dock.visibilityChanged.connect(self._study_dock_shown)
        self.tabifyDockWidget(self.log_dock, self.study_dock)
        self.runs_dock.raise_()
        self.resizeDocks([self.runs_dock], [190], Qt.Orientation.Vertical)
        self.resizeDocks([self.library_dock], [LIBRARY_WIDTH], Qt.Orientation.Horizontal)

        # ---- status bar with progress
        self.progress_bar = QProgressBar()
        self.progress_bar.setMaximumWidth(260)
        self.progress_bar.setTextVisible(True)
        self.progress_bar.setFormat("%p%")
        self.elapsed_label = QLabel("")
        self.statusBar().addPermanentWidget(self.elapsed_label)
        self.statusBar().addPermanentWidget(self.progress_bar)
        self._clock = QTimer(self)
        self._clock.setInterval(200)
        self._clock.timeout.connect(self._tick)

        self._build_actions()
        self._remember_layout = restore_layout
        if restore_layout:              # screenshots use the default layout, whatever the user's, and keep it
            self._restore_layout()
        self._show_project()
        self._update_title()
        from core.engine import LOAD_ERRORS

        for pkg, reason in LOAD_ERRORS.items():
            self.log(f"engine core.{pkg} could not be loaded: {reason}", "error")
        self.statusBar().showMessage("Ready", 3000)

    def _build_panel(self, name: str) -> EnginePanel:
        """Build an engine's panel into its tab (on its tab's first show, or on first access)."""
        spec = engines()[name]
        panel = panel_classes().get(name, GenericPanel)(spec, self)
        # a field whose text was not taken holds Run back, and the bar says which (issue 30)
        panel.binding.errors_changed.connect(lambda: self._field_errors_changed(name))
        self._engine_tabs[name].put(panel)
        panel.settings_changed()
        panel._stale = True                     # draws the run on show when first shown
        self._settle_built(panel)
        if self.tabs.currentWidget() is self._engine_tabs[name]:
            panel.catch_up()                    # its tab is the current one: on show now
        return panel

    def _settle_built(self, panel: QWidget) -> None:
        """A panel built late, as the window's were at start: combo boxes fitted to their texts, the
        saved splitter sizes, and its layout asked for again."""
        elider = getattr(self, "_elider", None)
        if elider is not None:
            fit_combos(panel, elider)
        if getattr(self, "_layout_restored", False):
            self._restore_splitters(panel)
        for widget in panel.findChildren(QWidget):
            widget.updateGeometry()

    @property
    def targets_panel(self) -> TargetsPanel:
        """The Targets tab's panel, built into its tab when first wanted."""
        if self._targets_panel is None:
            self._targets_panel = self._build_targets_panel()
        return self._targets_panel

    def _build_targets_panel(self) -> TargetsPanel:
        # one network costed on every target of the library (core.comparison, issue 51)
        # its parts are runs of the window's one controller; a row or a point opens its part's run
        panel = TargetsPanel(self.project, self, runner=self.runner)
        panel.run_requested.connect(self.open_run)
        panel.setObjectName("targets")
        last = last_recorded(self.project)
        if last is not None:                    # a session opened before: its last comparison
            panel.show_comparison(last)
        index, current = self.tabs.indexOf(self._targets_holder), self.tabs.currentIndex()
        tip = self.tabs.tabToolTip(index)
        blocked = self.tabs.blockSignals(True)  # the same tab in its place: not a tab change
        self.tabs.removeTab(index)
        self.tabs.insertTab(index, panel, "Targets")
        self.tabs.setTabToolTip(index, tip)
        self.tabs.setCurrentIndex(current)
        self.tabs.blockSignals(blocked)
        self._targets_holder.deleteLater()
        self._settle_built(panel)
        return panel

    @property
    def study_panel(self) -> StudyPanel:
        """The Studies dock's panel, built into its dock when first wanted."""
        if self._study_panel is None:
            holder = self.study_dock.widget()
            panel = self._study_panel = StudyPanel(self)
            self.study_dock.setWidget(panel)
            if holder is not None:
                holder.deleteLater()
            if self.study_dock.isVisible():
                panel.show()                    # now, not on the next event-loop pass
            if getattr(self, "_layout_restored", False):
                self._restore_splitters(panel)
        return self._study_panel

    def _study_dock_shown(self, visible: bool) -> None:
        if visible and self._study_panel is None:
            self.study_panel._dock_raised(True)     # raised: the room it takes on every raise

    def _dock(self, title: str, name: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(name)
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        return dock

    # ================================================================ actions and menus
    def _action(self, text: str, slot: Any, shortcut: QKeySequence | QKeySequence.StandardKey | str | None = None,
                tip: str = "") -> QAction:
        act = QAction(text, self)
        if shortcut is not None:
            act.setShortcut(QKeySequence(shortcut))
        if tip:
            act.setStatusTip(tip)
            act.setToolTip(tip)
        act.triggered.connect(slot)
        return act

    def _build_actions(self) -> None:
        S = QKeySequence.StandardKey
        self.act_new = self._action("&New", lambda: self.new_session(), S.New, "Start a new project")
        self.act_open = self._action("&Open…", self.open_dialog, S.Open, "Open a session file")
        self.act_save = self._action("&Save", self.save, S.Save, "Save the session")
        self.act_save_as = self._action("Save &As…", self.save_as, S.SaveAs)
        self.act_quit = self._action("&Quit", self.close, S.Quit)
        self.act_run = self._action("&Run", self.run_current, "F5", "Run the engine of the current tab")
        self.act_cancel = self._action("&Cancel", self.cancel_current, "Esc", "Cancel the running job")
        self.act_cancel.setEnabled(False)
        self.act_undo = self._action("&Undo", self.project.undo, S.Undo)
        self.act_redo = self._action("&Redo", self.project.redo, S.Redo)
        self.act_compare = self._action("&Compare selected runs", self._compare_selected, "Ctrl+D",
                                        "Compare the runs selected in the Runs view side by side")
        self.act_about = self._action("&About", self.about)
        self.act_example = self._action("Open &example session", lambda: self.open_example(), tip=(
            "Open the shipped example: finished runs of every engine, to look around without running anything"))
        self.act_tour = self._action("&Tour", self.show_tour, tip="What each part of the window and each tab does")

        mb = self.menuBar()
        m = mb.addMenu("&File")
        m.addActions([self.act_new, self.act_open])
        self.recent_menu = m.addMenu("Open &Recent")
        m.addSeparator()
        m.addActions([self.act_save, self.act_save_as])
        m.addSeparator()
        m.addAction(self.act_quit)
        m = mb.addMenu("&Edit")
        m.addActions([self.act_undo, self.act_redo])
        m = mb.addMenu("&View")
        for dock in (self.library_dock, self.runs_dock, self.log_dock, self.study_dock):
            m.addAction(dock.toggleViewAction())
        m.addSeparator()
        m.addAction(self._action("Next tab", lambda: self.tabs.setCurrentIndex((self.tabs.currentIndex() + 1)
                                                                              % max(1, self.tabs.count())), "Ctrl+PgDown"))
        m.addAction(self._action("Previous tab", lambda: self.tabs.setCurrentIndex((self.tabs.currentIndex() - 1)
                                                                                  % max(1, self.tabs.count())), "Ctrl+PgUp"))
        m = mb.addMenu("&Run")
        m.addActions([self.act_run, self.act_cancel])
        m.addSeparator()
        m.addAction(self.act_compare)
        m = mb.addMenu("&Help")
        m.addActions([self.act_example, self.act_tour])
        m.addSeparator()
        m.addAction(self.act_about)

        tb = QToolBar("Main", self)
        tb.setObjectName("main-toolbar")
        tb.addActions([self.act_new, self.act_open, self.act_save])
        tb.addSeparator()
        tb.addActions([self.act_undo, self.act_redo])
        tb.addSeparator()
        tb.addActions([self.act_run, self.act_cancel])
        self.addToolBar(tb)
        # Undo and Redo keep one width whatever they would undo (the text elided, in full in the
        # tooltip), so Run beside them never moves under the pointer after an edit
        for act in (self.act_undo, self.act_redo):
            button = tb.widgetForAction(act)
            if button is not None:
                button.setFixedWidth(button.fontMetrics().horizontalAdvance("Undo " + "m" * 12) + 12)
        self._refresh_recent()
        self._update_undo_actions()

    def _update_undo_actions(self) -> None:
        st = self.project.undo_stack
        self.act_undo.setEnabled(st.can_undo())
        self.act_redo.setEnabled(st.can_redo())
        self.act_undo.setText(f"&Undo {st.undo_text()}".rstrip())
        self.act_redo.setText(f"&Redo {st.redo_text()}".rstrip())
        for act, word, what in ((self.act_undo, "Undo", st.undo_text()), (self.act_redo, "Redo", st.redo_text())):
            full = f"{word} {what}".rstrip()
            button = self._toolbar_button(act)
            if button is not None:          # the toolbar's button elides; the menu shows it in full
                act.setIconText(button.fontMetrics().elidedText(full, Qt.TextElideMode.ElideRight,
                                                                 button.width() - 12))
            act.setToolTip(full)
        self.setWindowModified(self.project.modified)

    def _toolbar_button(self, act: QAction) -> QWidget | None:
        tb = self.findChild(QToolBar, "main-toolbar")
        return tb.widgetForAction(act) if tb is not None else None

    def _library_changed(self, _ev: LibraryChanged | Reset) -> None:
        self._mark_in_use()
        self._update_run_actions()

    def _choice_changed(self, ev: ChoiceChanged) -> None:
        self._mark_in_use()
        if ev.engine in self.bars:          # another item: its fields' errors, if any
            self.bars[ev.engine].set_field_errors(self.field_errors(ev.engine))
        self._update_run_actions()

    # ================================================================ context for panels
    def workload(self) -> Workload | None:
        """The workload of the current tab."""
        spec = self.current_engine()
        e = self.project.chosen(spec.name, "workloads") if spec else None
        return e.value if e else None

    def target(self) -> Target | None:
        spec = self.current_engine()
        e = self.project.chosen(spec.name, "targets") if spec else None
        return e.value if e else None

    def log(self, message: str, level: str = "info") -> None:
        stamp = time.strftime("%H:%M:%S")
        self.log_view.appendPlainText(f"{stamp} {level.upper():5} {message}")

    def status(self, message: str) -> None:
        self.statusBar().showMessage(message, 5000)

    # ================================================================ engine tabs and runs on show
    def current_engine(self) -> EngineSpec | None:
        tab = self.tabs.currentWidget()
        return tab.spec if isinstance(tab, EngineTab) else None

    def set_current_engine(self, name: str) -> None:
        if name not in self.panels:
            raise KeyError(f"no engine tab named {name!r}; known: {', '.join(self.panels)}")
        self.tabs.setCurrentIndex(list(self.panels).index(name))

    def setVisible(self, visible: bool) -> None:  # noqa: N802 (Qt name)
        """Shown: the current tab's panel is built first (as the window's layout is first made), not
        when the window was made: a session opened before the window is shown picks its own tab,
        and a window that is never shown (a script's, a test's) never builds one it does not ask for."""
        spec = self.current_engine() if visible else None
        if spec is not None:
            self.panels[spec.name]
        super().setVisible(visible)

    def _tab_changed(self, _index: int) -> None:
        spec = self.current_engine()
        if spec is not None:
            self.project.view["current_engine"] = spec.name    # view state: not an edit, not undone
            panel = self.panels.built(spec.name)
            if panel is not None:
                panel.catch_up()                                # on show now: draw what it missed
            elif self.isVisible():
                self.panels[spec.name]                          # built and drawn, on show
        elif self._targets_panel is None and self.tabs.currentWidget() is self._targets_holder:
            self._targets_panel = self._build_targets_panel()   # shown: built in its place
        compared = self.project.compared()
        if compared is not None:                                # saved with the session: on show or behind
            self.project.set_compared(replace(compared, on_show=self.tabs.currentWidget() is self.compare_view))
        self._mark_in_use()
        self._update_run_actions()

    def _mark_in_use(self) -> None:
        """The library shows in bold what the current tab runs."""
        spec = self.current_engine()
        library = getattr(self, "library", None)
        if spec is None or library is None:
            return
        c = self.project.choice(spec.name)
        library.mark_in_use({i for i in (c.workload, c.target) if i})

    def shown_run(self, engine: str) -> Run | None:
        return self.project.shown(engine)

    def open_run(self, run_id: str, **focus: Any) -> None:
        """Show a run in its engine's tab (switching to it); `focus` names what to select there."""
        run = self.project.run(run_id)
        self.set_current_engine(run.engine)
        self.project.show(run.engine, run.id)               # the tab draws it (a model event)
        if focus:
            self.panels[run.engine].show_run(run, **focus)

    def _show_project(self) -> None:
        """Draw a freshly loaded project: each tab shows the run it showed when saved (else its newest
        run), and the saved tab is current."""
        for name in self.panels:
            if self.project.shown(name) is None:
                runs = self.project.runs_of(name)
                self.project.show(name, runs[-1].id if runs else None)
        if self._targets_panel is None and self.project.view.get("comparisons"):
            # a session with comparisons: the Targets tab shows the last and follows the library's edits
            self._targets_panel = self._build_targets_panel()
        current = self.project.current_engine()
        compared = self.project.compared()
        self.close_compare()                            # the last session's comparison is not this one's
        if compared is not None and compared.runs:
            self.compare(compared.runs)                 # a Compare tab open at save time comes back
            if not compared.on_show and current is not None and current in self.panels:
                self.set_current_engine(current)
        elif current is not None and current in self.panels:
            self.set_current_engine(current)
        self._tab_changed(self.tabs.currentIndex())

    def _run_changed(self, ev: RunChanged) -> None:
        """A run was deleted (or restored by undo): a tab showing a deleted run falls back."""
        run_id, engine = ev.id, ev.engine
        if engine in self.panels and self.project.shown_id(engine) == run_id \
                and self.project.shown(engine) is None:
            runs = self.project.runs_of(engine)
            self.project.show(engine, runs[-1].id if runs else None)

    def rerun(self, run_id: str) -> None:
        """Run again with a past run's setup (put back into its tab first, one undo step)."""
        self.restore_setup(run_id)
        self.run_current()

    def restore_setup(self, run_id: str) -> None:
        run = self.project.run(run_id)
        self.project.restore_setup(run_id)
        self.set_current_engine(run.engine)
        self.status(f"The setup of {run_id} is back in the {engines()[run.engine].title} tab")

    def compare(self, run_ids: list[str]) -> None:
        """Open (or refill) the Compare tab on these runs and show it (view state, saved with the session)."""
        self.compare_view.set_runs(list(run_ids))
        self.project.set_compared(ComparedRuns(self.compare_view.run_ids()))
        index = self.tabs.indexOf(self.compare_view)
        if index < 0:
            index = self.tabs.addTab(self.compare_view, "Compare runs")
            self.tabs.setTabToolTip(index, "Compare runs: the compared runs' settings, metrics and overlaid plots")
            close = QToolButton()
            close.setText("×")
            close.setAutoRaise(True)
            close.setToolTip("Close the comparison")
            close.clicked.connect(self.close_compare)
            self.tabs.tabBar().setTabButton(index, QTabBar.ButtonPosition.RightSide, close)
        self.tabs.setCurrentIndex(index)

    def close_compare(self) -> None:
        self.project.set_compared(None)
        index = self.tabs.indexOf(self.compare_view)
        if index >= 0:
            self.tabs.removeTab(index)          # the view is kept (and follows the project) for next time

    def _compare_selected(self) -> None:
        ids = self.runs_view.selected_ids()
        if len(ids) < 2:
            self.status("Select two or more runs in the Runs view to compare them")
            return
        self.compare(ids)

    def open_in_simulator(self, update: dict[str, Any], workload: Snapshot | None = None,
                          origin: str = "") -> None:
        """Linked view: put a program into the simulator's settings, and the workload it was made for
        (a run's snapshot) into its choice bar, and step through it there. The tab shows no earlier
        run meanwhile: what it steps through is not one (issue 30)."""
        if "simulate" not in self.panels:
            return
        self.project.open_program("simulate", update, workload, origin or "stepper", "Open a program in the stepper")
        self.set_current_engine("simulate")
        self.project.show("simulate", None)
        step = getattr(self.panels["simulate"], "step_through_settings", None)
        if step is not None:
            step()

    # ================================================================ jobs
    def run_blocker(self, engine: str) -> str | None:
        """Why the engine's tab cannot run now, in the window's words; None when it can. A field whose
        text was not taken would otherwise run with the value the project still holds (issue 30)."""
        fields = self.field_errors(engine)
        problems = [why for lib in ("workloads", "targets") if (why := self.project.problem(engine, lib))]
        reasons = [*fields, *problems]
        return "; ".join(reasons) if reasons else None

    def field_errors(self, engine: str) -> list[str]:
        """The fields whose text was not taken, of the engine's tab and of the library items it runs
        (in the library's editor), each named by its label."""
        panel = self.panels.built(engine) if isinstance(self.panels, LazyPanels) else None
        fields = panel.binding.error_texts() if panel is not None else []
        library = getattr(self, "library", None)
        if library is not None:
            for lib in ("workloads", "targets"):
                e = self.project.chosen(engine, lib)
                fields += library.field_errors(lib, e.id if e else None)
        return fields

    def _library_field_errors_changed(self) -> None:
        for name in self.panels:                # every bar says them; Run's state is the current tab's
            self.bars[name].set_field_errors(self.field_errors(name))
        self._update_run_actions()

    def _field_errors_changed(self, engine: str) -> None:
        self.bars[engine].set_field_errors(self.field_errors(engine))
        spec = self.current_engine()
        if spec is not None and spec.name == engine:    # Run is the current tab's: another's fields leave it
            self._update_run_actions()

    def _update_run_actions(self) -> None:
        spec = self.current_engine()
        if not hasattr(self, "act_run"):        # a model event while the window is being built
            return
        running = spec is not None and self.runner.is_running(spec.name)
        blocker = self.run_blocker(spec.name) if spec is not None and not running else None
        tip = f"Cannot run: {blocker}" if blocker else "Run the engine of the current tab"
        state = (spec is not None and not running and blocker is None, tip, running)
        if state != self._run_actions_state:    # called on every edit and event: set only what changed
            self._run_actions_state = state
            self.act_run.setEnabled(state[0])
            self.act_run.setToolTip(tip)
            self.act_run.setStatusTip(tip)
            self.act_cancel.setEnabled(running)
        bar = self.progress_bar
        if running:
            bar.setFormat("%p%")
        else:
            if bar.value() != bar.minimum() - 1:       # not reset already (a reset repaints the bar)
                bar.reset()
            if self.elapsed_label.text():
                self.elapsed_label.setText("")

    def run_current(self) -> None:
        spec = self.current_engine()
        if spec is None or self.runner.is_running(spec.name):
            return
        blocker = self.run_blocker(spec.name)
        if blocker:
            self._show_error(f"{spec.title} cannot run: {blocker}")
            self._update_run_actions()
            return
        try:
            job = self.runner.start(spec.name)      # recorded now; the engine runs in a worker process
        except InputError as exc:
            self._show_error(f"{spec.title} cannot run: {exc.message}")
            return
        if job.run_id is not None:
            self._on_started(job.run_id, spec.name)
        else:                                       # a measured run elsewhere must end first
            self.status(f"{spec.title} waits for a measured run to finish")
        self._clock.start()
        self._update_run_actions()
        self.progress_bar.setRange(0, 0)

    def _tab_run(self, engine: str) -> str | None:
        """The id of the engine's tab run on its way (None: none, or not started yet)."""
        job = self.runner.controller.tab_job(engine)
        return None if job is None else job.run_id

    def _on_started(self, run_id: str, engine: str) -> None:
        shown = self.project.shown(engine)
        if run_id != self._tab_run(engine) or (shown is not None and shown.id == run_id):
            return                      # a study's point, or a tab run already on show
        try:
            run = self.project.run(run_id)
        except KeyError:                # deleted as it started
            return
        self.project.show(engine, run_id)                   # the tab clears its live views (a model event)
        self.log(f"{engines()[engine].title}: {run_id} started on {run.workload.name if run.workload else 'no workload'}")

    def cancel_current(self) -> None:
        spec = self.current_engine()
        if spec is not None and self.runner.is_running(spec.name):
            self.runner.cancel(spec.name)
            self.status(f"Cancelling {spec.title}…")

    def _on_events(self, run_id: str, events: list) -> None:
        # the controller recorded them (the views showing the run draw them: a model event)
        job = self.runner.controller.job(run_id)
        title = engines()[job.engine].title if job is not None and job.engine in engines() else run_id
        for ev in events:
            if isinstance(ev, LogLine):
                self.log(f"{title}: {ev.message}", ev.level)

    def _on_progress(self, run_id: str, progress: Progress) -> None:
        spec = self.current_engine()
        if spec is None or self._tab_run(spec.name) != run_id:
            return
        if progress.fraction is None:
            self.progress_bar.setRange(0, 0)
        else:
            self.progress_bar.setRange(0, 1000)
            self.progress_bar.setValue(int(1000 * max(0.0, min(1.0, progress.fraction))))
        if progress.message:
            self.statusBar().showMessage(progress.message, PROGRESS_MESSAGE_MS)

    def _tick(self) -> None:
        spec = self.current_engine()
        elapsed = self.runner.elapsed(spec.name) if spec else None
        eta = self.runner.eta(spec.name) if spec else None
        left = eta_text(eta) if eta is not None else ""
        self.elapsed_label.setText("" if elapsed is None else f"{elapsed:6.1f} s" + (f" · {left}" if left else ""))
        if not self.runner.running():
            self._clock.stop()

    def _on_finished(self, run_id: str, outcome: RunOutcome, parent: str = "") -> None:
        """A run the controller has recorded as ended: a tab's own run says how it ended."""
        if parent:              # a study's point or a comparison's part: their views say it
            return
        self.statusBar().clearMessage()         # the run's last progress note ("loading model") is stale now
        if outcome.error is not None and outcome.error.detail:
            # the run's status shows the error's one line; its traceback or fault report goes to the log
            self.log(outcome.error.detail, "error")
        try:
            run = self.project.run(run_id)
        except KeyError:            # deleted while running: nothing to show
            self._update_run_actions()
            return
        title = engines()[run.engine].title if run.engine in engines() else run.engine
        # Its tab keeps showing it, now with its end (a model event): a failed run on its error, a
        # cancelled one marked, never an older run's views under this run's name (issue 30).
        if run.status == "finished":
            self.log(f"{title}: {run.id} finished")
            self.status(f"{title} finished")
        else:
            what = run.error or "cancelled"
            self.log(f"{title}: {run.id} {run.status}: {what}" + (" (partial result kept)" if run.is_partial else ""),
                     "error" if run.status == "failed" else "info")
        # Cancel and the bar say the run has ended before a dialog about its error waits for the user
        self._update_run_actions()
        spec = self.current_engine()
        if run.status == "failed" and spec is not None and spec.name == run.engine:
            self.progress_bar.setRange(0, 1)
            self.progress_bar.setValue(0)
            self.progress_bar.setFormat("failed")
        if run.status == "failed":
            self._show_error(f"{title} stopped: {run.error}")
        elif run.status == "cancelled":
            self.status(f"{title} cancelled")
        gc.collect(1)   # the young garbage first (cheap), then the run's result, which lives as long as
        gc.freeze()     # the session, leaves the full collections: they stay short (issue 14)

    # ================================================================ sessions
    def new_session(self, ask: bool = True) -> None:
        if ask and not self._confirm_discard():
            return
        self.project.replace_with(Project.starter())
        self.path = None
        self._show_project()
        self._update_title()

    def open_path(self, path: str | Path, ask: bool = True) -> bool:
        """Open a session: the whole file is read and checked first; a bad file changes nothing."""
        path = Path(path)
        try:
            loaded, stamp = sessions.load_stamped(path)
        except InputError as exc:
            self._show_error(f"Cannot open {path.name}:\n{exc.message}\n\nWhere: {exc.where}", exc)
            self.log(f"open {path}: {exc}", "error")
            return False
        if ask and not self._confirm_discard():
            return False
        self.project.replace_with(loaded)
        self.path, self._disk_stamp = path, stamp
        self._show_project()
        self._update_title()
        self._add_recent(path)
        self.log(f"opened {path}")
        return True

    def open_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open session", str(self.path.parent if self.path else ""),
                                              "Dataflow Explorer sessions (*.dfx);;All files (*)")
        if path:
            self.open_path(path)

    def save_to(self, path: str | Path) -> bool:
        """Save; when the file is the one opened here and another window or program has changed it
        since, ask first (overwrite / save as / cancel) rather than lose that version."""
        path = Path(path)
        same = self.path is not None and path.absolute() == self.path.absolute()
        try:
            try:
                stamp = sessions.save(self.project, path, self._disk_stamp if same else sessions.UNCHECKED)
            except sessions.SessionChanged as exc:
                choice = self._ask_changed_on_disk(path, exc)
                if choice == "save_as":
                    return self.save_as()
                if choice != "overwrite":
                    self.status(f"Not saved: {path.name} changed on disk")
                    return False
                stamp = sessions.save(self.project, path)       # the user chose; the .bak keeps theirs
        except (OSError, ValueError) as exc:
            self._show_error(f"Not saved to {path}: {exc}")
            return False
        self.path, self._disk_stamp = path, stamp
        self.project.mark_saved()
        self.setWindowModified(False)
        self._update_title()
        self._add_recent(path)
        self.status(f"Saved {path}")
        self.log(f"saved {path}")
        return True

    def save(self) -> bool:
        return self.save_to(self.path) if self.path else self.save_as()

    def save_as(self) -> bool:
        start = str(self.path) if self.path else "session.dfx"
        path, _ = QFileDialog.getSaveFileName(self, "Save session", start, "Dataflow Explorer sessions (*.dfx)")
        if not path:
            return False
        if not path.endswith(sessions.SUFFIX):
            path += sessions.SUFFIX
        return self.save_to(path)

    def is_dirty(self) -> bool:
        return self.project.modified

    def _ask_changed_on_disk(self, path: Path, exc: InputError) -> str:
        """'overwrite', 'save_as' or 'cancel' for a session file changed on disk since it was read."""
        if not self.interactive:
            self._show_error(str(exc), exc)
            return "cancel"
        answer = QMessageBox.question(
            self, APP_NAME, f"{path.name} has changed on disk since it was opened or saved here (another window "
            f"or program saved it).\n\nYes: overwrite it with this session (its version is kept as "
            f"{path.name}.bak)\nNo: save this session under another name\nCancel: do not save",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Cancel)
        return {QMessageBox.StandardButton.Yes: "overwrite", QMessageBox.StandardButton.No: "save_as"}.get(
            answer, "cancel")

    def _confirm_discard(self) -> bool:
        if not self.is_dirty():
            return True
        if not self.interactive:        # nobody to ask: keep the changes (callers then do nothing)
            return False
        answer = QMessageBox.question(
            self, APP_NAME, "The session has unsaved changes. Save them?",
            QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Save)
        if answer == QMessageBox.StandardButton.Save:
            return self.save()
        return answer == QMessageBox.StandardButton.Discard

    def _update_title(self) -> None:
        name = self.path.name if self.path else "untitled"
        self.setWindowTitle(f"{name}[*] — {APP_NAME}")
        self.setWindowModified(self.project.modified)

    # ---- recent files and layout
    def _settings(self) -> QSettings:
        return QSettings("DataflowExplorer", "DataflowExplorer")

    def _recent(self) -> list[str]:
        """The recent files, newest first (QSettings reads a list of one back as a plain string)."""
        recent = self._settings().value("recent", [])
        if isinstance(recent, str):
            return [recent]
        return [str(p) for p in recent] if isinstance(recent, list) else []

    def _add_recent(self, path: Path) -> None:
        recent = [p for p in self._recent() if p != str(path.resolve())]
        self._settings().setValue("recent", [str(path.resolve())] + recent[: MAX_RECENT - 1])
        self._refresh_recent()

    def _refresh_recent(self) -> None:
        self.recent_menu.clear()
        recent = self._recent()
        for p in recent:
            act = self.recent_menu.addAction(p)
            act.triggered.connect(lambda _c=False, p=p: self.open_path(p))
        self.recent_menu.setEnabled(bool(recent))

    def _splitter_key(self, splitter: QSplitter) -> str:
        """A splitter's place in the window, the same from one start to the next: the object names
        (or class and rank among same-class siblings) of its parents, e.g.
        "library/LibraryBrowser0/QSplitter0" or "QTabWidget0/.../tab-cain/CainPanel0/.../QSplitter0"."""
        parts: list[str] = []
        w: QWidget | None = splitter
        while w is not None and w is not self:
            parent = w.parentWidget()
            name = w.objectName()
            if not name:
                same = [c for c in (parent.children() if parent is not None else []) if type(c) is type(w)]
                name = f"{type(w).__name__}{same.index(w) if w in same else 0}"
            parts.append(name.replace("/", "_"))
            w = parent
        return "/".join(reversed(parts))

    def _restore_layout(self) -> None:
        """Geometry, maximised state, docks and toolbars, and every splitter's sizes, as last closed."""
        st = self._settings()
        geometry, state = st.value("window/geometry"), st.value("window/state")
        if isinstance(geometry, QByteArray):
            self.restoreGeometry(geometry)
        if isinstance(state, QByteArray):
            self.restoreState(state)
        if str(st.value("window/maximized", "false")).lower() == "true":
            self.setWindowState(self.windowState() | Qt.WindowState.WindowMaximized)
        self._layout_restored = True            # a panel built later restores its own splitters
        self._restore_splitters(self)

    def _restore_splitters(self, root: QWidget) -> None:
        st = self._settings()
        for splitter in root.findChildren(QSplitter):
            sizes = st.value(f"splitters/{self._splitter_key(splitter)}")
            if isinstance(sizes, QByteArray):
                splitter.restoreState(sizes)

    def _save_layout(self) -> None:
        if not self._remember_layout:
            return
        st = self._settings()
        st.setValue("window/geometry", self.saveGeometry())
        st.setValue("window/state", self.saveState())
        st.setValue("window/maximized", self.isMaximized())
        for splitter in self.findChildren(QSplitter):
            st.setValue(f"splitters/{self._splitter_key(splitter)}", splitter.saveState())

    # ================================================================ window events
    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        urls = event.mimeData().urls()
        if urls and urls[0].toLocalFile().endswith(sessions.SUFFIX):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        urls = event.mimeData().urls()
        if urls:
            self.open_path(urls[0].toLocalFile())

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self._confirm_discard():
            event.ignore()
            return
        self._save_layout()
        self.shutdown_jobs()
        if self._targets_panel is not None:    # a comparison in flight: cancelled, its running part awaited
            self._targets_panel.shutdown()
        event.accept()

    def shutdown_jobs(self) -> bool:
        if self.runner.running():
            self.log("stopping running jobs")
        return self.runner.shutdown()

    def _show_error(self, message: str, exc: InputError | None = None) -> None:
        """A message box, or in a non-interactive mode one line on stderr (`error: <where>: <what>`)."""
        if self.interactive:
            QMessageBox.warning(self, APP_NAME, message)
            return
        print(f"error: {' '.join(str(exc if exc is not None else message).split())}", file=sys.stderr)

    # ---- a way in (gui.tour): the example session, the tour, the first launch's offer
    def open_example(self, ask: bool = True) -> bool:
        """Open the shipped example session as an untitled copy (Save asks where: the shipped file
        is never overwritten)."""
        from gui.tour import EXAMPLE_SESSION

        if not self.open_path(EXAMPLE_SESSION, ask=ask):
            return False
        self.path, self._disk_stamp = None, None
        self._update_title()
        self.status("Opened the example session: Save As keeps your changes elsewhere")
        return True

    def show_tour(self) -> None:
        from gui.tour import TourDialog

        self.tour = TourDialog(self)
        self.tour.show()

    def offer_example(self, settings: QSettings | None = None) -> bool:
        """On the first launch (per `settings`, the user's by default), ask whether to open the
        example session; True when it was opened."""
        from gui.tour import first_launch

        if not first_launch(settings if settings is not None else self._settings()) or not self.interactive:
            return False
        answer = QMessageBox.question(
            self, APP_NAME, "Welcome to Dataflow Explorer.\n\nOpen the example session? It holds finished runs of "
            "every engine to look around in without running anything. (Later: Help > Open example session; "
            "Help > Tour says what each tab does.)",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, QMessageBox.StandardButton.Yes)
        return answer == QMessageBox.StandardButton.Yes and self.open_example(ask=False)

    def about(self) -> None:
        import numpy
        import pyqtgraph
        import PySide6
        from PySide6.QtCore import qVersion

        names = ", ".join(s.title for s in engines().values())
        QMessageBox.about(self, f"About {APP_NAME}", (
            f"<h3>{APP_NAME} {__version__}</h3>"
            "<p>Explore how convolution workloads map onto unusual accelerators.</p>"
            f"<p>Engines: {names}</p>"
            f"<p>Python {platform.python_version()}, Qt {qVersion()}, PySide6 {PySide6.__version__}, "
            f"pyqtgraph {pyqtgraph.__version__}, numpy {numpy.__version__}</p>"))
