"""A stand-in for the main window, as a panel sees it (gui.panels.base.PanelContext)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.project import Project, Snapshot


@dataclass
class FakeContext:
    project: Project = field(default_factory=Project.starter)
    logs: list[str] = field(default_factory=list)
    statuses: list[str] = field(default_factory=list)
    opened: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    simulator_updates: list[dict[str, Any]] = field(default_factory=list)     # open_in_simulator calls

    def log(self, message: str, level: str = "info") -> None:
        self.logs.append(message)

    def status(self, message: str) -> None:
        self.statuses.append(message)

    def open_run(self, run_id: str, **focus: Any) -> None:
        self.opened.append((run_id, focus))

    def open_in_simulator(self, update: dict[str, Any], workload: Snapshot | None = None,
                          origin: str = "") -> None:
        self.simulator_updates.append(update)

    # ---- helpers for tests
    def use(self, engine: str, lib: str, name: str, value: Any) -> str:
        """Add a library item and make it the engine's choice; returns its id."""
        entry_id = self.project.add(lib, name, value)
        self.project.choose(engine, lib, entry_id)
        return entry_id

    def add_finished_run(self, engine: str, result: dict[str, Any]):
        """A finished run of `engine` with this result, as if it had just run."""
        from core.engine import get_engine
        from core.lifecycle import RunOutcome

        run = self.project.start_run(engine)
        return self.project.finish_run(run.id, RunOutcome.from_json({"status": "finished", "result": result}, get_engine(engine)))


def open_panel(qtbot, engine: str, context: FakeContext | None = None, size: tuple[int, int] | None = None):
    """The engine's tab (its PANEL) on a fake window, kept alive by qtbot, resized when `size` is given."""
    import importlib

    from core.engine import get_engine

    panel = importlib.import_module(f"gui.panels.{engine}").PANEL(get_engine(engine), context or FakeContext())
    qtbot.addWidget(panel)
    if size:
        panel.resize(*size)
    return panel
