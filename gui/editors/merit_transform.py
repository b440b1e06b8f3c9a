"""The editor of a MERIT transform (kind `merit_transform`): a built-in one or a transform file."""

from __future__ import annotations

import json

from PySide6.QtCore import QSignalBlocker
from PySide6.QtWidgets import (QComboBox, QFileDialog, QHBoxLayout,
                               QLabel, QPlainTextEdit, QPushButton,
                               QWidget)

from core.library_items import (load_transform,
                                workload_variants)
from core.project import Project
from core.workload import (MeritTransformWorkload)
from gui.editors.base import ItemEditor


class MeritTransformEditor(ItemEditor):
    """A built-in MERIT workload, or a user's transform JSON (loaded from a file, shown read-only)."""

    def __init__(self, project: Project, lib: str, entry_id: str, parent: QWidget | None = None) -> None:
        super().__init__(project, lib, entry_id, parent)
        row = QHBoxLayout()
        self.combo = QComboBox()
        self.combo.setToolTip("MERIT's built-in workloads, or the transform loaded from a file")
        self.combo.activated.connect(lambda _i: self._picked())
        row.addWidget(self.combo, 1)
        self.load_button = QPushButton("Load JSON…")
        self.load_button.setToolTip("Use a transform file (the format of docs/merit.md)")
        self.load_button.clicked.connect(self._browse)
        row.addWidget(self.load_button)
        self.layout_.addLayout(row)
        self.paper = QLabel()
        self.paper.setWordWrap(True)
        self.layout_.addWidget(self.paper)
        self.json_view = QPlainTextEdit()
        self.json_view.setReadOnly(True)
        self.layout_.addWidget(self.json_view, 1)
        self.layout_.addWidget(self.error)
        self.layout_.addStretch(0)
        self.refresh()

    def refresh(self) -> None:
        from core.merit_transform import workloads as merit_workloads

        w: MeritTransformWorkload = self.value()
        b = QSignalBlocker(self.combo)
        self.combo.clear()
        if w.transform is not None:
            self.combo.addItem(f"User transform: {w.transform.get('name', 'transform')}", None)
        for name, title in workload_variants("merit_transform").items():
            self.combo.addItem(f"{title}  ({name})", name)
        self.combo.setCurrentIndex(0 if w.transform is not None else max(0, self.combo.findData(w.builtin)))
        b.unblock()
        self.json_view.setVisible(w.transform is not None)
        self.json_view.setPlainText(json.dumps(w.transform, indent=2) if w.transform is not None else "")
        known = merit_workloads.WORKLOADS.get(w.builtin)
        self.paper.setText("" if w.transform is not None or known is None else f"Paper: {known.paper}")

    def _picked(self) -> None:
        name = self.combo.currentData()
        if name is not None:
            self.commit(MeritTransformWorkload(name))
            self.refresh()

    def load_json(self, path: str) -> bool:
        """Use the transform in a JSON file (checked by MERIT's reader first)."""
        w = self.read_or_show(lambda: load_transform(path))
        if w is None:
            return False
        w.builtin = self.value().builtin
        return self.commit(w)

    def _browse(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "MERIT transform", "", "Transform JSON (*.json);;All files (*)")
        if path:
            self.load_json(path)


EDITOR = MeritTransformEditor
