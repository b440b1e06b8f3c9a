"""What every library item's editor shares (ItemEditor): drawing from the project, storing a new value
as one undoable change, and marking a field whose text does not make a valid value.
"""

from __future__ import annotations

from typing import Any, Callable, TypeVar

from PySide6.QtCore import QSignalBlocker, Signal
from PySide6.QtWidgets import (QLabel, QVBoxLayout, QWidget)

from core.errors import InputError
from core.project import Project
from core.project_events import LibraryChanged, Reset
from gui.binding import FieldBinding
from gui.follow import follow, unfollow

INT_MAX = 2 ** 31 - 1
ERROR_STYLE = "color: #b00020"
ONNX_FILTER = "ONNX models (*.onnx);;All files (*)"
T = TypeVar("T")


def _fmt(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else repr(float(v))


def _blocked(*widgets: QWidget) -> list[QSignalBlocker]:
    return [QSignalBlocker(w) for w in widgets]


class ItemEditor(QWidget):
    """One library item's editor: `refresh()` redraws it from the project (on every project event
    for its item: undo, redo, its own commits), `commit()` writes an edit. Its owner calls `detach()`
    before dropping it.

    Every field shows what the item holds, or its text was not taken: then the field stays as typed,
    marked, and `field_errors()` names it with the reason (the window holds Run back while the item
    is what a tab runs; `field_errors_changed` says when the list changes). Fields bound with
    `bind_fields` (gui.binding) follow this rule by themselves; others call `set_problem`."""

    field_errors_changed = Signal()

    def __init__(self, project: Project, lib: str, entry_id: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.project, self.lib, self.entry_id = project, lib, entry_id
        self.kind = self.value().kind
        self._attached = True
        self._bindings: list[FieldBinding] = []
        self._problems: dict[str, str] = {}        # a field's label -> why its text was not taken
        self._message: str | None = None            # the last edit's refusal (a message, not a field)
        follow(self, project.events.library(lib), self._item_changed)
        follow(self, project.events.reset, self._project_reset)
        self.layout_ = QVBoxLayout(self)
        self.layout_.setContentsMargins(0, 0, 0, 0)
        self.error = QLabel("")
        self.error.setObjectName("item-error")
        self.error.setStyleSheet(ERROR_STYLE)
        self.error.setWordWrap(True)
        self.error.hide()

    def detach(self) -> None:
        """Stop following the project (the item is gone or another one is shown)."""
        self._attached = False
        unfollow(self.project.events.library(self.lib), self._item_changed)
        unfollow(self.project.events.reset, self._project_reset)

    def _item_changed(self, ev: LibraryChanged) -> None:
        if ev.id == self.entry_id:
            self._follow_item()

    def _project_reset(self, _ev: Reset) -> None:
        self._follow_item()

    def _follow_item(self) -> None:
        if not self._attached:
            return
        e = self.project.entry(self.lib, self.entry_id)
        if e is not None and e.kind == self.kind:       # otherwise the owner replaces this editor
            self.refresh()

    def value(self) -> Any:
        e = self.project.entry(self.lib, self.entry_id)
        if e is None:
            raise KeyError(f"no {self.lib[:-1]} with id {self.entry_id!r}")
        return e.value

    def store(self, value: Any) -> None:
        """Write a new value (checked first); InputError when it is not valid."""
        if hasattr(value, "validate"):
            value.validate(self.lib[:-1])
        self.project.set_value(self.lib, self.entry_id, value)

    def commit(self, value: Any) -> bool:
        """Write a new value (checked first); False, with the reason shown, when it is not valid."""
        if not self.passes(lambda: self.store(value)):
            return False
        self.show_error(None)
        return True

    def read_or_show(self, read: Callable[[], T]) -> T | None:
        """What `read()` returns (a file read, text parsed); None, with the reason shown under the editor,
        when it raises InputError. The item keeps its value."""
        try:
            return read()
        except InputError as exc:
            self.show_error(str(exc))
            return None

    def passes(self, check: Callable[[], object]) -> bool:
        """Whether `check()` raises no InputError; when it does, False with the reason shown."""
        def checked() -> bool:
            check()
            return True
        return self.read_or_show(checked) is not None

    def show_error(self, message: str | None) -> None:
        self._message = message
        self._draw_error()

    def _draw_error(self) -> None:
        text = "; ".join(self.field_errors()) or self._message or ""
        self.error.setText(text)
        self.error.setVisible(bool(text))

    # ------------------------------------------------------------ fields whose text was not taken
    def bind_fields(self, schema: dict[str, Any], read_all: Callable[[], dict[str, Any]],
                    write_field: Callable[[str, Any], None]) -> FieldBinding:
        """A FieldBinding over some of the item's fields (write_field raises InputError to refuse)."""
        binding = FieldBinding(schema, read_all, write_field, self)
        binding.errors_changed.connect(self._errors_changed)
        self._bindings.append(binding)
        return binding

    def set_problem(self, label: str, why: str | None) -> None:
        """Say that the field `label` shows text that was not taken (None: it shows what is held)."""
        if self._problems.get(label) == why:
            return
        if why is None:
            del self._problems[label]
        else:
            self._problems[label] = why
        self._errors_changed()

    def field_errors(self) -> list[str]:
        """One line per field whose text was not taken: 'Off-chip bandwidth: cannot be -5 GB/s: ...'."""
        return [*(t for b in self._bindings for t in b.error_texts()),
                *(f"{label}: {why}" for label, why in self._problems.items())]

    def _errors_changed(self) -> None:
        self._draw_error()
        self.field_errors_changed.emit()

    def refresh(self) -> None:
        """Redraw from the project (after undo, redo, or this editor's own commit)."""
