"""The contract between the main window and an engine's panel.

The window owns the workload, the target, the Run/Cancel actions and the job runner. A panel
owns its engine's settings widgets and its result views. Events reach `handle_events` in batches
on the UI thread (the runner throttles them), and `show_result` draws a finished result, whether
it just arrived or was read from a session file.
"""

from __future__ import annotations

from typing import Any, Protocol

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QWidget

from core.engine import EngineSpec
from core.jobs import Event
from core.workload import Target, Workload


class PanelContext(Protocol):
    """What a panel may ask of the window."""

    def workload(self) -> Workload | None: ...
    def target(self) -> Target | None: ...
    def log(self, message: str, level: str = "info") -> None: ...
    def status(self, message: str) -> None: ...
    def result_of(self, engine_name: str) -> dict[str, Any] | None:
        """The last finished result of another engine in this session (e.g. the code search's
        program for the simulator), or None."""
        ...


class EnginePanel(QWidget):
    engine_name: str = ""

    # Emitted when the user edits a setting (marks the session modified).
    settings_changed = Signal()

    def __init__(self, engine: EngineSpec, context: PanelContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.engine = engine
        self.context = context

    def settings(self) -> dict[str, Any]:
        """Current settings (JSON-able); stored in sessions and passed to the engine."""
        return self.engine.default_settings()

    def set_settings(self, settings: dict[str, Any]) -> None:
        """Show settings read from a session."""

    def job_started(self) -> None:
        """A run of this engine starts: clear live views."""

    def handle_events(self, events: list[Event]) -> None:
        """A batch of events from the running job, in order."""

    def show_result(self, result: dict[str, Any] | None) -> None:
        """Draw a final result (None clears)."""
