"""Undo and redo of project-model changes, without Qt.

Every change a user makes to the project (a setting, a library item, a choice, a deleted run) is a
Command with a `do` and an `undo`. Consecutive changes of the same thing within a short time merge
into one step, so spinning a spin box from 2 to 9 is undone at once. Tab switches and selections are
not project changes and never reach this stack.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

from core.events import Signal

MERGE_WINDOW_S = 1.0


@dataclass
class Command:
    text: str
    do: Callable[[], None]
    undo: Callable[[], None]
    merge_key: Any = None           # equal keys within MERGE_WINDOW_S merge into one step
    stamp: float = field(default_factory=time.monotonic)


class UndoStack:
    def __init__(self) -> None:
        self._commands: list[Command] = []
        self._index = 0             # commands[:index] are done
        self._clean: int | None = 0
        self._sealed = False        # the next push never merges (after undo/redo/clean)
        self.changed: Signal[[]] = Signal()     # emitted after any push, undo, redo or clean change

    # ------------------------------------------------------------ changing
    def push(self, command: Command, done: bool = False) -> None:
        """Run the command (unless `done`) and record it; a redo tail is dropped."""
        if not done:
            command.do()
        del self._commands[self._index:]
        top = self._commands[-1] if self._commands else None
        if (top is not None and not self._sealed and command.merge_key is not None
                and command.merge_key == top.merge_key and command.stamp - top.stamp < MERGE_WINDOW_S
                and self._clean != self._index):
            top.do, top.stamp = command.do, command.stamp       # keep the first undo, the last do
        else:
            if self._clean is not None and self._clean > len(self._commands):
                self._clean = None
            self._commands.append(command)
            self._index += 1
        self._sealed = False
        self.changed.emit()

    def undo(self) -> bool:
        if not self.can_undo():
            return False
        self._index -= 1
        self._commands[self._index].undo()
        self._sealed = True
        self.changed.emit()
        return True

    def redo(self) -> bool:
        if not self.can_redo():
            return False
        self._commands[self._index].do()
        self._index += 1
        self._sealed = True
        self.changed.emit()
        return True

    def clear(self) -> None:
        self._commands.clear()
        self._index = 0
        self._clean = 0
        self.changed.emit()

    def set_clean(self) -> None:
        self._clean = self._index
        self._sealed = True
        self.changed.emit()

    def seal(self) -> None:
        """The next change starts a new step even if it touches the same thing."""
        self._sealed = True

    # ------------------------------------------------------------ asking
    def can_undo(self) -> bool:
        return self._index > 0

    def can_redo(self) -> bool:
        return self._index < len(self._commands)

    def undo_text(self) -> str:
        return self._commands[self._index - 1].text if self.can_undo() else ""

    def redo_text(self) -> str:
        return self._commands[self._index].text if self.can_redo() else ""

    def is_clean(self) -> bool:
        return self._clean == self._index

    def __len__(self) -> int:
        return len(self._commands)
