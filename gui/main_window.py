"""The main window: workload and target on the left, one tab per engine, Run/Cancel, sessions."""

from __future__ import annotations

import datetime as _dt
import platform
import time
import traceback
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, QSettings, Qt, QTimer
from PySide6.QtGui import (QAction, QCloseEvent, QDragEnterEvent, QDropEvent, QGuiApplication, QKeySequence,
                           QUndoCommand, QUndoStack)
from PySide6.QtWidgets import (QApplication, QComboBox, QDockWidget, QFileDialog, QLabel, QMainWindow, QMessageBox, QPlainTextEdit,
                               QProgressBar, QTabWidget, QToolBar, QVBoxLayout, QWidget)

from core import __version__
from core import session as sessions
from core.engine import EngineSpec, JobRequest, engines
from core.errors import CheckFailed, InputError
from core.jobs import JobOutcome, LogLine, Progress
from core.workload import Target, Workload
from gui.job_runner import JobRunner
from gui.panels import panel_classes
from gui.panels.base import EnginePanel
from gui.panels.generic import GenericPanel
from gui.target_editor import TargetEditor
from gui.workload_editor import WorkloadEditor

APP_NAME = "Dataflow Explorer"
MAX_RECENT = 8


class _StateChange(QUndoCommand):
    """An edit of the workload, target or engine settings, undone by restoring a snapshot."""

    def __init__(self, window: "MainWindow", before: dict, after: dict) -> None:
        super().__init__("Edit")
        self.window, self.before, self.after = window, before, after
        self._first = True

    def redo(self) -> None:
        if self._first:           # the edit has already happened in the widgets
            self._first = False
            return
        self.window.apply_state(self.after)

    def undo(self) -> None:
        self.window.apply_state(self.before)


DEFAULT_SIZE = (1360, 860)


def fit_to_screen(window: QMainWindow) -> None:
    """Shrink the first window to the screen's free area (never below the window's minimum)."""
    screen = window.screen() or QGuiApplication.primaryScreen()
    if screen is None:
        return
    free = screen.availableGeometry()
    window.resize(min(window.width(), free.width()), min(window.height(), free.height()))


class MainWindow(QMainWindow):
    def __init__(self) -> None:
        super().__init__()
        self.setAcceptDrops(True)
        self.resize(*DEFAULT_SIZE)
        self.path: Path | None = None
        self.runner = JobRunner(parent=self)
        self.runner.events.connect(self._on_events)
        self.runner.progress.connect(self._on_progress)
        self.runner.finished.connect(self._on_finished)
        self.results: dict[str, tuple[dict[str, Any], str | None]] = {}
        self.undo_stack = QUndoStack(self)
        self.undo_stack.cleanChanged.connect(self._on_clean_changed)
        self._extra_dirty = False
        self._applying = False
        self._snapshot: dict | None = None
        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(250)
        self._debounce.timeout.connect(self._record_edit)

        # ---- left: workload and target
        left = QWidget()
        lay = QVBoxLayout(left)
        lay.addWidget(QLabel("<b>Workload</b>"))
        self.workload_editor = WorkloadEditor()
        lay.addWidget(self.workload_editor, 1)
        lay.addWidget(QLabel("<b>Target model</b>"))
        self.target_editor = TargetEditor()
        lay.addWidget(self.target_editor)
        self.setup_dock = QDockWidget("Workload and target", self)
        self.setup_dock.setObjectName("setup")
        self.setup_dock.setWidget(left)
        self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, self.setup_dock)
        self.workload_editor.changed.connect(self._edited)
        self.target_editor.changed.connect(self._edited)

        # ---- centre: engine tabs
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.panels: dict[str, EnginePanel] = {}
        custom = panel_classes()
        for name, spec in engines().items():
            panel = custom.get(name, GenericPanel)(spec, self)
            panel.settings_changed.connect(self._edited)
            self.panels[name] = panel
            self.tabs.addTab(panel, spec.title)
        if not self.panels:
            self.tabs.addTab(QLabel("No engines are installed."), "Engines")
        self.tabs.currentChanged.connect(self._tab_changed)
        self.setCentralWidget(self.tabs)
        # Long entries (board and filter names) must not set the window's minimum width.
        for combo in self.findChildren(QComboBox):
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(8)
            QApplication.sendEvent(combo, QEvent(QEvent.Type.StyleChange))   # drops its cached size hints
        for widget in self.findChildren(QWidget):      # and every layout above it recomputes its own
            widget.updateGeometry()

        # ---- bottom: log
        self.log_view = QPlainTextEdit()
        self.log_view.setReadOnly(True)
        self.log_view.setMaximumBlockCount(5000)
        self.log_dock = QDockWidget("Log", self)
        self.log_dock.setObjectName("log")
        self.log_dock.setWidget(self.log_view)
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.log_dock)
        self.resizeDocks([self.log_dock], [130], Qt.Orientation.Vertical)
        self.resizeDocks([self.setup_dock], [330], Qt.Orientation.Horizontal)

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
        self.new_session(ask=False)
        self._tab_changed(self.tabs.currentIndex())
        from core.engine import LOAD_ERRORS

        for pkg, reason in LOAD_ERRORS.items():
            self.log(f"engine core.{pkg} could not be loaded: {reason}", "error")
        self.statusBar().showMessage("Ready", 3000)

    # ================================================================ actions and menus
    def _action(self, text: str, slot, shortcut: QKeySequence | str | None = None, tip: str = "") -> QAction:
        act = QAction(text, self)
        if shortcut is not None:
            act.setShortcut(QKeySequence(shortcut))
        if tip:
            act.setStatusTip(tip)
        act.triggered.connect(slot)
        return act

    def _build_actions(self) -> None:
        S = QKeySequence.StandardKey
        self.act_new = self._action("&New", lambda: self.new_session(), S.New, "Start an empty session")
        self.act_open = self._action("&Open…", self.open_dialog, S.Open, "Open a session file")
        self.act_save = self._action("&Save", self.save, S.Save, "Save the session")
        self.act_save_as = self._action("Save &As…", self.save_as, S.SaveAs)
        self.act_quit = self._action("&Quit", self.close, S.Quit)
        self.act_run = self._action("&Run", self.run_current, "F5", "Run the engine of the current tab")
        self.act_cancel = self._action("&Cancel", self.cancel_current, "Esc", "Cancel the running job")
        self.act_cancel.setEnabled(False)
        self.act_undo = self.undo_stack.createUndoAction(self, "&Undo")
        self.act_undo.setShortcut(QKeySequence(S.Undo))
        self.act_redo = self.undo_stack.createRedoAction(self, "&Redo")
        self.act_redo.setShortcut(QKeySequence(S.Redo))
        self.act_clear_result = self._action("Clear &result of this tab", self.clear_current_result)
        self.act_about = self._action("&About", self.about)

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
        m.addSeparator()
        m.addAction(self.act_clear_result)
        m = mb.addMenu("&View")
        m.addAction(self.setup_dock.toggleViewAction())
        m.addAction(self.log_dock.toggleViewAction())
        m.addSeparator()
        m.addAction(self._action("Next tab", lambda: self.tabs.setCurrentIndex((self.tabs.currentIndex() + 1)
                                                                              % max(1, self.tabs.count())), "Ctrl+PgDown"))
        m.addAction(self._action("Previous tab", lambda: self.tabs.setCurrentIndex((self.tabs.currentIndex() - 1)
                                                                                  % max(1, self.tabs.count())), "Ctrl+PgUp"))
        m = mb.addMenu("&Run")
        m.addActions([self.act_run, self.act_cancel])
        m = mb.addMenu("&Help")
        m.addAction(self.act_about)

        tb = QToolBar("Main", self)
        tb.setObjectName("main-toolbar")
        tb.addActions([self.act_new, self.act_open, self.act_save])
        tb.addSeparator()
        tb.addActions([self.act_run, self.act_cancel])
        self.addToolBar(tb)
        self._refresh_recent()

    # ================================================================ context for panels
    def workload(self) -> Workload | None:
        try:
            return self.workload_editor.workload()
        except InputError:
            return None

    def target(self) -> Target | None:
        return self.target_editor.target()

    def log(self, message: str, level: str = "info") -> None:
        stamp = time.strftime("%H:%M:%S")
        self.log_view.appendPlainText(f"{stamp} {level.upper():5} {message}")

    def status(self, message: str) -> None:
        self.statusBar().showMessage(message, 5000)

    def result_of(self, engine_name: str) -> dict[str, Any] | None:
        entry = self.results.get(engine_name)
        return entry[0] if entry else None

    # ================================================================ engine tabs
    def current_engine(self) -> EngineSpec | None:
        panel = self.tabs.currentWidget()
        return panel.engine if isinstance(panel, EnginePanel) else None

    def set_current_engine(self, name: str) -> None:
        if name not in self.panels:
            raise KeyError(f"no engine tab named {name!r}; known: {', '.join(self.panels)}")
        self.tabs.setCurrentWidget(self.panels[name])

    def _tab_changed(self, _index: int) -> None:
        spec = self.current_engine()
        if spec is None:
            return
        switched = []
        if spec.workload_kinds and self.workload_editor.current_kind() not in spec.workload_kinds:
            self.workload_editor.set_kind(spec.workload_kinds[0])
            switched.append("workload")
        if spec.target_kinds and self.target_editor.current_kind() not in spec.target_kinds:
            self.target_editor.set_kind(spec.target_kinds[0])
            switched.append("target")
        if switched:
            self.status(f"{spec.title} uses a different {' and '.join(switched)}: switched")
        self._update_run_actions()

    def _update_run_actions(self) -> None:
        spec = self.current_engine()
        running = spec is not None and self.runner.is_running(spec.name)
        self.act_run.setEnabled(spec is not None and not running)
        self.act_cancel.setEnabled(running)
        if not running:
            self.progress_bar.reset()
            self.elapsed_label.setText("")

    # ================================================================ jobs
    def run_current(self) -> None:
        spec = self.current_engine()
        if spec is None or self.runner.is_running(spec.name):
            return
        try:
            workload = self.workload_editor.workload() if spec.workload_kinds else self.workload()
        except InputError as exc:
            self._show_error(f"The workload is not valid: {exc}")
            return
        panel = self.panels[spec.name]
        request = JobRequest(workload, self.target(), panel.settings())
        panel.job_started()
        self.log(f"{spec.title}: started")
        self.runner.start(spec.name, lambda token: spec.run(request, token))
        self._clock.start()
        self._update_run_actions()
        self.progress_bar.setRange(0, 0)

    def cancel_current(self) -> None:
        spec = self.current_engine()
        if spec is not None and self.runner.is_running(spec.name):
            self.runner.cancel(spec.name)
            self.status(f"Cancelling {spec.title}…")

    def _on_events(self, name: str, events: list) -> None:
        for ev in events:
            if isinstance(ev, LogLine):
                self.log(f"{engines()[name].title}: {ev.message}", ev.level)
        self.panels[name].handle_events(events)

    def _on_progress(self, name: str, progress: Progress) -> None:
        if self.current_engine() is None or self.current_engine().name != name:
            return
        if progress.fraction is None:
            self.progress_bar.setRange(0, 0)
        else:
            self.progress_bar.setRange(0, 1000)
            self.progress_bar.setValue(int(1000 * max(0.0, min(1.0, progress.fraction))))
        if progress.message:
            self.statusBar().showMessage(progress.message)

    def _tick(self) -> None:
        spec = self.current_engine()
        elapsed = self.runner.elapsed(spec.name) if spec else None
        self.elapsed_label.setText("" if elapsed is None else f"{elapsed:6.1f} s")
        if not self.runner.running():
            self._clock.stop()

    def _on_finished(self, name: str, outcome: JobOutcome) -> None:
        title = engines()[name].title
        if outcome.result is not None and outcome.error is None and not outcome.cancelled:
            stamp = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
            self.results[name] = (outcome.result, stamp)
            self.panels[name].show_result(outcome.result)
            self._extra_dirty = True
            self.setWindowModified(True)
            self.log(f"{title}: finished")
            self.status(f"{title} finished")
        elif outcome.cancelled:
            self.log(f"{title}: cancelled")
            self.status(f"{title} cancelled")
        elif outcome.error is not None:
            err = outcome.error
            if isinstance(err, (InputError, CheckFailed)):   # the message is the whole story
                message = str(err)
            else:
                message = f"{type(err).__name__}: {err}"
                self.log("".join(traceback.format_exception(err)).rstrip(), "error")
            self.log(f"{title}: {message}", "error")
            self._show_error(f"{title} stopped: {message}")
        self._update_run_actions()

    # ================================================================ state, undo, dirty
    def state(self) -> dict:
        """The editable state (workload, target, settings) as JSON; the workload may be invalid."""
        try:
            workload = self.workload_editor.workload().to_json()
        except InputError:
            workload = None
        return {"workload": workload, "target": self.target().to_json(),
                "settings": {n: p.settings() for n, p in self.panels.items()}}

    def apply_state(self, state: dict) -> None:
        from core.workload import target_from_json, workload_from_json

        self._applying = True
        try:
            if state.get("workload") is not None:
                self.workload_editor.set_workload(workload_from_json(state["workload"]))
            self.target_editor.set_target(target_from_json(state["target"]))
            for name, settings in state.get("settings", {}).items():
                if name in self.panels:
                    self.panels[name].set_settings(settings)
        finally:
            self._applying = False
        self._snapshot = self.state()

    def _edited(self) -> None:
        if not self._applying:
            self._debounce.start()

    def _record_edit(self) -> None:
        new = self.state()
        if self._snapshot is not None and new != self._snapshot:
            self.undo_stack.push(_StateChange(self, self._snapshot, new))
        self._snapshot = new

    def is_dirty(self) -> bool:
        if self._debounce.isActive():
            self._record_edit()
        return self._extra_dirty or not self.undo_stack.isClean()

    def _mark_clean(self) -> None:
        self._extra_dirty = False
        self.undo_stack.setClean()
        self.setWindowModified(False)

    def _update_title(self) -> None:
        name = self.path.name if self.path else "untitled"
        self.setWindowTitle(f"{name}[*] — {APP_NAME}")

    # ================================================================ sessions
    def build_session(self) -> sessions.Session:
        workload = self.workload_editor.workload()      # InputError when not valid
        engines_state = {}
        for name, panel in self.panels.items():
            result, finished = self.results.get(name, (None, None))
            engines_state[name] = sessions.EngineState(panel.settings(), result, finished)
        spec = self.current_engine()
        return sessions.Session(workload, self.target(), engines_state, spec.name if spec else None)

    def load_session(self, s: sessions.Session, path: Path | None) -> None:
        self._applying = True
        try:
            self.workload_editor.set_workload(s.workload)
            self.target_editor.set_target(s.target)
            self.results.clear()
            for name, panel in self.panels.items():
                st = s.engines.get(name)
                panel.set_settings(st.settings if st else panel.engine.default_settings())
                panel.show_result(st.result if st else None)
                if st and st.result is not None:
                    self.results[name] = (st.result, st.finished_at)
            if s.current_engine in self.panels:
                self.tabs.setCurrentWidget(self.panels[s.current_engine])
            self.workload_editor.set_workload(s.workload)   # the tab switch may have changed kinds
            self.target_editor.set_target(s.target)
        finally:
            self._applying = False
        self.path = path
        self.undo_stack.clear()
        self._snapshot = self.state()
        self._mark_clean()
        self._update_title()

    def new_session(self, ask: bool = True) -> None:
        if ask and not self._confirm_discard():
            return
        self.load_session(sessions.Session(), None)

    def open_path(self, path: str | Path, ask: bool = True) -> bool:
        """Open a session; a bad file leaves the open session exactly as it was."""
        path = Path(path)
        try:
            s = sessions.load(path)
        except InputError as exc:
            self._show_error(f"Cannot open {path.name}:\n{exc.message}\n\nWhere: {exc.where}")
            self.log(f"open {path}: {exc}", "error")
            return False
        if ask and not self._confirm_discard():
            return False
        self.load_session(s, path)
        self._add_recent(path)
        self.log(f"opened {path}")
        return True

    def open_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open session", str(self.path.parent if self.path else ""),
                                              "Dataflow Explorer sessions (*.dfx);;All files (*)")
        if path:
            self.open_path(path)

    def save_to(self, path: str | Path) -> bool:
        path = Path(path)
        try:
            s = self.build_session()
            sessions.save(s, path)
        except InputError as exc:
            self._show_error(f"Not saved: the workload is not valid: {exc}")
            return False
        except (OSError, ValueError) as exc:
            self._show_error(f"Not saved to {path}: {exc}")
            return False
        self.path = path
        self._mark_clean()
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

    def clear_current_result(self) -> None:
        spec = self.current_engine()
        if spec and spec.name in self.results:
            del self.results[spec.name]
            self.panels[spec.name].show_result(None)
            self._extra_dirty = True
            self.setWindowModified(True)

    def _confirm_discard(self) -> bool:
        if not self.is_dirty():
            return True
        answer = QMessageBox.question(
            self, APP_NAME, "The session has unsaved changes. Save them?",
            QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Save)
        if answer == QMessageBox.StandardButton.Save:
            return self.save()
        return answer == QMessageBox.StandardButton.Discard

    # ---- recent files
    def _settings(self) -> QSettings:
        return QSettings("DataflowExplorer", "DataflowExplorer")

    def _add_recent(self, path: Path) -> None:
        st = self._settings()
        recent = [p for p in (st.value("recent", []) or []) if p != str(path.resolve())]
        st.setValue("recent", [str(path.resolve())] + recent[: MAX_RECENT - 1])
        self._refresh_recent()

    def _refresh_recent(self) -> None:
        self.recent_menu.clear()
        recent = self._settings().value("recent", []) or []
        if isinstance(recent, str):
            recent = [recent]
        for p in recent:
            act = self.recent_menu.addAction(p)
            act.triggered.connect(lambda _c=False, p=p: self.open_path(p))
        self.recent_menu.setEnabled(bool(recent))

    # ================================================================ window events
    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        urls = event.mimeData().urls()
        if urls and urls[0].toLocalFile().endswith(sessions.SUFFIX):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        urls = event.mimeData().urls()
        if urls:
            self.open_path(urls[0].toLocalFile())

    def _on_clean_changed(self, clean: bool) -> None:
        self.setWindowModified(not clean or self._extra_dirty)

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self._confirm_discard():
            event.ignore()
            return
        self.shutdown_jobs()
        event.accept()

    def shutdown_jobs(self) -> bool:
        if self.runner.running():
            self.log("stopping running jobs")
        return self.runner.shutdown()

    def _show_error(self, message: str) -> None:
        QMessageBox.warning(self, APP_NAME, message)

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
