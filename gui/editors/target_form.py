"""A target's editor generated from its kind's SCHEMA: what a target kind without an editor of its own gets."""

from __future__ import annotations

import copy
from typing import Any

from PySide6.QtWidgets import (QCheckBox, QFormLayout, QWidget)

from core.project import Project
from core.settings import declared
from core.kinds import kind_of
from core.workload import (FpgaTarget)
from gui.editors.base import ItemEditor


def _display_schema(cls: Any) -> dict[str, Any]:
    """The target's schema with item labels for its enums (board names, units)."""
    schema = copy.deepcopy(cls.SCHEMA)
    for key, decl in declared(schema).items():
        if decl.enum is not None and decl.labels is None and decl.unit:
            schema["properties"][key]["x-labels"] = {str(v): f"{v} {decl.unit}" for v in decl.enum}
    if cls is FpgaTarget:
        from core.boards import BOARDS

        schema["properties"]["board"]["x-labels"] = {k: f"{b.name} ({b.device})" for k, b in BOARDS.items()}
    return schema


class TargetEditor(ItemEditor):
    """A target's fields, generated from its class's SCHEMA (core's ranges, so nothing valid is
    clamped) and bound with gui.binding.FieldBinding."""

    def __init__(self, project: Project, lib: str, entry_id: str, parent: QWidget | None = None) -> None:
        super().__init__(project, lib, entry_id, parent)
        found = kind_of("targets", self.kind)
        assert found is not None, self.kind            # an entry of the library has a registered kind
        self.cls = found.cls
        self.read = found.read
        self.binding = self.bind_fields(_display_schema(self.cls), self._read_all, self._write_field)
        form = QFormLayout()
        for key in self.binding.props:
            w = self.binding.build(key)
            if isinstance(w, QCheckBox):
                form.addRow(w)
            else:
                form.addRow(self.binding.label(key), w)
        self.layout_.addLayout(form)
        self.layout_.addWidget(self.error)
        self.layout_.addStretch(1)

    def _read_all(self) -> dict[str, Any]:
        e = self.project.entry(self.lib, self.entry_id)
        return e.value.to_json() if e is not None else {}

    def _write_field(self, key: str, value: Any) -> None:
        d = self._read_all()
        d[key] = value
        self.store(self.read(d, "target"))         # InputError: the field stays as typed, marked

    def refresh(self) -> None:
        self.binding.refresh()
