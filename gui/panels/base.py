"""The contract between the main window and an engine's panel.

The project model (core.project) holds everything a panel shows or edits: the engine's settings,
its chosen workload and target, its runs, and which run its tab shows (view state). A panel binds its
settings widgets to the project with `self.binding` (gui.binding) and draws from the model: the run
on show with `show_run`, and the batches of events the project records for that run, while it runs,
with `handle_events`. A panel that is not on show draws nothing; it redraws the run from the model
when it is next shown (`catch_up`). The window owns Run/Cancel, the job runner (which records
events into the project) and the choice bar that picks the panel's workload and target.
"""

from __future__ import annotations

from typing import Any, Protocol

from PySide6.QtWidgets import QWidget

from core.engine import EngineSpec
from core.jobs import Event
from core.project import Project, Run, Snapshot
from core.project_events import Reset, RunChanged, RunRecorded, SettingsChanged, ShownChanged
from core.results import EngineResult
from core.workload import Target, Workload
from gui.binding import SettingsBinding
from gui.follow import follow


class PanelContext(Protocol):
    """What a panel may ask of the window."""

    project: Project

    def log(self, message: str, level: str = "info") -> None: ...
    def status(self, message: str) -> None: ...
    def open_run(self, run_id: str, **focus: Any) -> None:
        """Show a run in its engine's tab; `focus` names what to select there (e.g. step=12)."""
        ...
    def open_in_simulator(self, update: dict[str, Any], workload: Snapshot | None = None,
                          origin: str = "") -> None:
        """Merge `update` into the simulate settings and make `workload` (a run's snapshot, from run
        `origin`) its chosen workload (one undo step), switch to its tab and step through."""
        ...


class EnginePanel(QWidget):
    engine_name: str = ""

    def __init__(self, engine: EngineSpec, context: PanelContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.engine = engine
        self.context = context
        self.project: Project = context.project
        self.binding = SettingsBinding(context.project, engine.name, engine.settings_schema, self)
        self.binding.on_error = lambda key, msg: context.status(
            f"{engine.title}: {self.binding.title(key)}: {msg} (Run waits until it reads)")
        self.run: Run | None = None          # the run on show (None: nothing yet)
        self._stale = False                  # the model changed while this panel was not on show
        ev = self.project.events
        follow(self, ev.record, self._recorded)
        follow(self, ev.shown, self._shown_changed)
        follow(self, ev.run, self._run_changed)
        follow(self, ev.settings, self._settings_changed)
        follow(self, ev.reset, self._project_reset)

    # ------------------------------------------------------------ model -> views
    def on_show(self) -> bool:
        """Whether the panel would be seen: its tab is the current one (the window need not be up)."""
        return self.isVisibleTo(self.window())

    def _recorded(self, ev: RunRecorded) -> None:
        if ev.engine != self.engine.name or not ev.events:
            return
        shown = self.project.shown(self.engine.name)
        if shown is None or ev.id != shown.id:
            return
        if self._stale or not self.on_show():
            self._stale = True
        else:
            self.handle_events(ev.events)

    def _shown_changed(self, ev: ShownChanged) -> None:
        if ev.engine == self.engine.name:
            self._redraw_shown()

    def _run_changed(self, ev: RunChanged) -> None:
        if ev.engine != self.engine.name:
            return
        shown = self.project.shown(self.engine.name)
        if shown is not None and ev.id == shown.id and shown.status != "running":
            self._redraw_shown()

    def _settings_changed(self, ev: SettingsChanged) -> None:
        if ev.engine == self.engine.name:
            self.settings_changed()

    def _project_reset(self, _ev: Reset) -> None:
        self.settings_changed()
        self._redraw_shown()

    def _redraw_shown(self) -> None:
        if self.on_show():
            self._stale = False
            self.show_run(self.project.shown(self.engine.name))
        else:
            self._stale = True

    def settings_changed(self) -> None:
        """This engine's settings changed (or a session was opened): a panel that greys out what
        they make moot does it here (the bound fields follow by themselves)."""

    def catch_up(self) -> None:
        """Draw the run on show from the model if it changed while the panel was hidden."""
        if self._stale:
            self._stale = False
            self.show_run(self.project.shown(self.engine.name))

    def showEvent(self, event: Any) -> None:
        super().showEvent(event)
        self.catch_up()

    # ------------------------------------------------------------ what the tab runs
    def settings(self) -> dict[str, Any]:
        """The engine's settings as the project holds them (a copy)."""
        return self.project.settings(self.engine.name)

    def workload(self) -> Workload | None:
        e = self.project.chosen(self.engine.name, "workloads")
        return e.value if e else None

    def target(self) -> Target | None:
        e = self.project.chosen(self.engine.name, "targets")
        return e.value if e else None

    def result_of(self, engine_name: str) -> EngineResult | None:
        """The newest finished result of an engine in this project (e.g. the code search's program
        for the simulator), or None."""
        run = self.project.latest(engine_name)
        return run.result if run else None

    # ------------------------------------------------------------ drawing
    def job_started(self) -> None:
        """A run of this engine starts: clear live views."""

    def handle_events(self, events: list[Event]) -> None:
        """A batch of events from the running job, in order."""

    def show_result(self, result: EngineResult | None) -> None:
        """Draw a final result (None clears)."""

    def show_run(self, run: Run | None, **focus: Any) -> None:
        """Draw a run: its result, or what a failed or cancelled run made before it stopped."""
        self.run = run
        self.show_result(run.result if run else None)
