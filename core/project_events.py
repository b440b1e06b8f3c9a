"""What the project announces, one signal per kind of change, each with its own typed payload.

A widget subscribes only to the kinds it shows (as napari's layers announce each attribute on its
own emitter): a settings row listens to `settings`, the Runs view to `runs`, a panel drawing a
running job to `record`. No subscriber filters a catch-all event by a string kind. Undo and redo
run the same code as the change itself, so they announce the same kinds. Qt-free (core.events).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.events import Signal
from core.jobs import Event


@dataclass(frozen=True)
class Reset:
    """The whole project was replaced (a session opened): everything may differ."""


@dataclass(frozen=True)
class LibraryChanged:
    """A library item was added, removed, renamed or edited (on `workloads` or `targets`)."""

    lib: str
    id: str


@dataclass(frozen=True)
class EngineEvent:
    """A change to one engine's tab: what it runs, its settings, its runs, the run it shows (a
    choice bar follows them all with one slot, and a tab keeps those of its own engine)."""

    engine: str


@dataclass(frozen=True)
class ChoiceChanged(EngineEvent):
    """An engine's tab now runs another workload or target (or none)."""


@dataclass(frozen=True)
class SettingsChanged(EngineEvent):
    """One setting of an engine changed (`key`), or all of them at once (`key` None)."""

    key: str | None = None


@dataclass(frozen=True)
class RunChanged(EngineEvent):
    """A run started, finished, was deleted (or restored by undo), or its note changed."""

    id: str


@dataclass(frozen=True)
class RunRecorded(RunChanged):
    """A running run recorded a batch of what its job streams (`events`, in order)."""

    events: list[Event] = field(default_factory=list, compare=False, repr=False)


@dataclass(frozen=True)
class ShownChanged(EngineEvent):
    """The run an engine's tab shows changed (view state, saved with the session, not an edit)."""

    id: str | None


@dataclass(frozen=True)
class ModifiedChanged:
    """The project now differs (or no longer differs) from its last saved or opened state."""

    modified: bool


class ProjectEvents:
    """The project's signals, one per kind of change; each emits its payload type above."""

    def __init__(self) -> None:
        self.reset: Signal[[Reset]] = Signal()
        self.workloads: Signal[[LibraryChanged]] = Signal()        # lib "workloads"
        self.targets: Signal[[LibraryChanged]] = Signal()          # lib "targets"
        self.choice: Signal[[ChoiceChanged]] = Signal()
        self.settings: Signal[[SettingsChanged]] = Signal()
        self.run: Signal[[RunChanged]] = Signal()
        self.record: Signal[[RunRecorded]] = Signal()              # a running job's stream: frequent
        self.shown: Signal[[ShownChanged]] = Signal()
        self.modified: Signal[[ModifiedChanged]] = Signal()        # only when the flag flips

    def library(self, lib: str) -> Signal[[LibraryChanged]]:
        """The signal of one library ("workloads" or "targets")."""
        if lib not in ("workloads", "targets"):
            raise KeyError(f"no library {lib!r}")
        return self.workloads if lib == "workloads" else self.targets

    def all(self) -> dict[str, Signal[Any]]:
        """Every signal by name (a test or a debugging hook that wants to see everything)."""
        return {name: s for name, s in vars(self).items() if isinstance(s, Signal)}
