"""The contract between the main window and an engine's panel.

The project model (core.project) holds everything a panel shows or edits: the engine's settings,
its chosen workload and target, and its runs. A panel binds its settings widgets to the project with
`self.binding` (gui.binding), draws a run with `show_run`, and receives a running job's events in
batches through `handle_events`. The window owns Run/Cancel, the job runner and the choice bar that
picks the panel's workload and target.
"""

from __future__ import annotations

from typing import Any, Protocol

from PySide6.QtWidgets import QWidget

from core.engine import EngineSpec
from core.jobs import Event
from core.project import Project, Run
from core.workload import Target, Workload
from gui.binding import SettingsBinding


class PanelContext(Protocol):
    """What a panel may ask of the window."""

    project: Project

    def log(self, message: str, level: str = "info") -> None: ...
    def status(self, message: str) -> None: ...
    def open_run(self, run_id: str, **focus: Any) -> None:
        """Show a run in its engine's tab; `focus` names what to select there (e.g. step=12)."""
        ...
    def open_in_simulator(self, update: dict[str, Any]) -> None:
        """Merge `update` into the simulate settings (one undo step), switch to its tab and step through."""
        ...


class EnginePanel(QWidget):
    engine_name: str = ""

    def __init__(self, engine: EngineSpec, context: PanelContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.engine = engine
        self.context = context
        self.project: Project = context.project
        self.binding = SettingsBinding(context.project, engine.name, engine.settings_schema, self)
        self.binding.on_error = lambda key, msg: context.status(f"{engine.title}: {key}: {msg}")
        self.run: Run | None = None          # the run on show (None: nothing yet)

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

    def result_of(self, engine_name: str) -> dict[str, Any] | None:
        """The newest finished result of an engine in this project (e.g. the code search's program
        for the simulator), or None."""
        run = self.project.latest(engine_name)
        return run.result if run else None

    # ------------------------------------------------------------ drawing
    def job_started(self) -> None:
        """A run of this engine starts: clear live views."""

    def handle_events(self, events: list[Event]) -> None:
        """A batch of events from the running job, in order."""

    def show_result(self, result: dict[str, Any] | None) -> None:
        """Draw a final result (None clears)."""

    def show_run(self, run: Run | None, **focus: Any) -> None:
        """Draw a run: its result, or what a failed or cancelled run made before it stopped."""
        self.run = run
        self.show_result(run.result if run else None)
