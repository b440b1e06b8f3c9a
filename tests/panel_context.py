"""A stand-in for the main window, as a panel sees it (gui.panels.base.PanelContext)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class FakeContext:
    workload_value: Any = None
    target_value: Any = None
    results: dict[str, dict[str, Any]] = field(default_factory=dict)
    logs: list[str] = field(default_factory=list)
    statuses: list[str] = field(default_factory=list)

    def workload(self):
        return self.workload_value

    def target(self):
        return self.target_value

    def log(self, message: str, level: str = "info") -> None:
        self.logs.append(message)

    def status(self, message: str) -> None:
        self.statuses.append(message)

    def result_of(self, engine_name: str):
        return self.results.get(engine_name)
