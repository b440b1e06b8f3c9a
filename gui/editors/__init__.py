"""Editors of one library item each (a workload or a target), shown under the library lists.

An editor holds no copy of its item: it draws the item's value from the project, turns each user
edit into a new value and hands it to `project.set_value` (so undo records it), and redraws when the
library browser tells it the item changed (`refresh`). An edit that does not make a valid value is
refused with a message next to the field and changes nothing.

One module per kind, found as the engine panels are (gui/panels): the editor of a kind registered in
core.kinds is the EDITOR of `gui/editors/<kind>.py`; a target kind without a module of its own gets
the form generated from its SCHEMA (target_form.TargetEditor).
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import cast

from PySide6.QtWidgets import QComboBox, QWidget

from core.kinds import Lib, kinds
from core.project import Project
from gui.editors.base import ItemEditor
from gui.editors.target_form import TargetEditor

_NOT_KINDS = ("base", "target_form")         # modules of this package that are not a kind's editor


def _editor_modules() -> set[str]:
    return {info.name for info in pkgutil.iter_modules(__path__) if info.name not in _NOT_KINDS}


def editor_classes(lib: str) -> dict[str, type[ItemEditor]]:
    """kind -> its editor, for every kind of `lib` registered in core.kinds that has one."""
    modules = _editor_modules()
    found: dict[str, type[ItemEditor]] = {}
    for kind in kinds(cast(Lib, lib)):
        if kind in modules:
            found[kind] = importlib.import_module(f"gui.editors.{kind}").EDITOR
        elif lib == "targets":
            found[kind] = TargetEditor
    return found


def editor_for(project: Project, lib: str, entry_id: str, parent: QWidget | None = None) -> ItemEditor:
    """The editor of a library item, by its kind."""
    e = project.entry(lib, entry_id)
    if e is None:
        raise KeyError(f"no {lib[:-1]} with id {entry_id!r}")
    cls = editor_classes(lib).get(e.kind)
    if cls is None:
        raise KeyError(f"no editor is registered for the {lib[:-1]} kind {e.kind!r}")
    editor = cls(project, lib, entry_id, parent)
    for combo in editor.findChildren(QComboBox):        # long entries must not widen the dock
        combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        combo.setMinimumContentsLength(10)
    return editor


__all__ = ["ItemEditor", "TargetEditor", "editor_classes", "editor_for"]
