"""The editor of one CNN (kind `cnn`): a zoo network or an ONNX file, with its validation data."""

from __future__ import annotations

import copy
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QComboBox, QFileDialog, QFormLayout, QHBoxLayout,
                               QLabel, QLineEdit, QPushButton,
                               QSpinBox, QWidget)

from core.errors import InputError
from core.library_items import (check_onnx_file, check_validation_file)
from core.project import Project
from core.workload import (BUILTIN_DIGITS, DIGITS_TITLE, CnnNetwork)
from gui.editors.base import INT_MAX, ONNX_FILTER, ItemEditor, _blocked


class CnnEditor(ItemEditor):
    """One CNN: a zoo network, the built-in trained digits CNN or an ONNX file, an optional
    validation set (.npz) and the batch."""

    SOURCES = {"zoo": "Model zoo", "builtin": DIGITS_TITLE, "onnx": "ONNX file"}

    def __init__(self, project: Project, lib: str, entry_id: str, parent: QWidget | None = None) -> None:
        from core.nets import zoo

        super().__init__(project, lib, entry_id, parent)
        form = QFormLayout()
        self.source = QComboBox()
        for key, title in self.SOURCES.items():
            self.source.addItem(title, key)
        self.source.setToolTip("Where the network comes from")
        self.source.currentIndexChanged.connect(lambda _i: self._source_picked())
        form.addRow("Source", self.source)
        self.network = QComboBox()
        for name, title in zoo.titles().items():
            self.network.addItem(title, name)
        self.network.setToolTip("A network of the built-in model zoo (layer tables, no weights)")
        self.network.currentIndexChanged.connect(lambda _i: self._network_picked())
        form.addRow("Network", self.network)
        self.fields = self.bind_fields({"properties": {
            "onnx_path": {"type": "string", "title": "ONNX file", "x-placeholder": "choose an ONNX file…",
                          "description": "An ONNX model (read and checked as it is typed)"},
            "validation_path": {"type": "string", "title": "Validation set", "x-placeholder": "none",
                                "description": "Validation images for accuracy checks: a .npz with arrays x "
                                               "(B,C,H,W) and y"},
            "batch": {"type": "integer", "title": "Batch", "minimum": 1, "maximum": INT_MAX,
                      "description": "Images per inference"}}}, self._fields, self._field_typed)
        self.onnx_path = self.fields.build("onnx_path", QLineEdit)
        self.onnx_browse = QPushButton("Browse…")
        self.onnx_browse.clicked.connect(self._browse_onnx)
        self.onnx_row = self._row(self.onnx_path, self.onnx_browse)
        form.addRow("ONNX file", self.onnx_row)
        self.validation = self.fields.build("validation_path", QLineEdit)
        self.validation_browse = QPushButton("Browse…")
        self.validation_browse.clicked.connect(self._browse_validation)
        form.addRow("Validation set", self._row(self.validation, self.validation_browse))
        self.batch = self.fields.build("batch", QSpinBox)
        form.addRow("Batch", self.batch)
        self.form = form
        self.layout_.addLayout(form)
        # What the network is (the file's layer table for an ONNX model): issue 30 found only a greyed
        # "Network: VGG-16" line under an imported model.
        self.summary = QLabel("")
        self.summary.setObjectName("cnn-summary")
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.layout_.addWidget(self.summary)
        self.layout_.addWidget(self.error)
        self.layout_.addStretch(1)
        self.refresh()

    @staticmethod
    def _row(*widgets: QWidget) -> QWidget:
        w = QWidget()
        lay = QHBoxLayout(w)
        lay.setContentsMargins(0, 0, 0, 0)
        for x in widgets:
            lay.addWidget(x)
        return w

    def refresh(self) -> None:
        c: CnnNetwork = self.value()
        blockers = _blocked(self.source, self.network)
        self.source.setCurrentIndex(self.source.findData(c.source))
        if c.network != BUILTIN_DIGITS:
            i = self.network.findData(c.network)
            if i < 0:
                self.network.addItem(c.network, c.network)
                i = self.network.count() - 1
            self.network.setCurrentIndex(i)
        del blockers
        self.fields.refresh()
        self.set_problem("Source", None)
        self._enable(c.source)
        self._summarise(c)

    def _enable(self, source: str) -> None:
        """Only the rows of the chosen source show (not greyed ones that read as if they applied)."""
        self.form.setRowVisible(self.network, source == "zoo")
        self.form.setRowVisible(self.onnx_row, source == "onnx")

    def _summarise(self, c: CnnNetwork) -> None:
        from core.library_items import network_summary

        if c.source == "onnx" and not c.onnx_path:
            self.summary.setText("Choose an ONNX file: its layers are listed here.")
            return
        try:
            self.summary.setText(network_summary(c))
        except (InputError, OSError) as exc:
            self.summary.setText(f"Cannot read the network: {exc}")

    def _commit_with(self, **changes: Any) -> bool:
        c: CnnNetwork = copy.deepcopy(self.value())
        for k, v in changes.items():
            setattr(c, k, v)
        return self.commit(c)

    def _source_picked(self) -> None:
        source = self.source.currentData()
        self._enable(source)
        self.set_problem("Source", None)
        if source != "onnx":
            self.fields.refresh("onnx_path")         # a hidden row holds nothing back: it shows what is held
        if source == "zoo":
            self._commit_with(network=self.network.currentData(), onnx_path="")
        elif source == "builtin":
            self._commit_with(network=BUILTIN_DIGITS, onnx_path="")
        elif self.onnx_path.text().strip() and self.set_onnx_path(self.onnx_path.text().strip()):
            pass
        else:       # until a model reads, the network held (and run) is not the one the source names
            self.set_problem("Source", "no ONNX file read yet: choose one")
            self.onnx_path.setFocus()

    def _network_picked(self) -> None:
        if self.source.currentData() == "zoo":
            self._commit_with(network=self.network.currentData(), onnx_path="")

    def set_onnx_path(self, path: str) -> bool:
        """Use an ONNX model (read and checked first)."""
        if not self.passes(lambda: check_onnx_file(path)):
            return False
        return self._commit_with(onnx_path=path)

    def set_validation_path(self, path: str) -> bool:
        """Attach a validation set (.npz); an empty path removes it."""
        if path and not self.passes(lambda: check_validation_file(path)):
            return False
        return self._commit_with(validation_path=path)

    def _fields(self) -> dict[str, Any]:
        c: CnnNetwork = self.value()
        return {"onnx_path": c.onnx_path, "validation_path": c.validation_path, "batch": c.batch}

    def _field_typed(self, key: str, value: Any) -> None:
        """A field typed: taken as it reads now (a path once the file reads), else refused."""
        c: CnnNetwork = copy.deepcopy(self.value())
        if key == "batch":
            c.batch = value
        elif key == "onnx_path":
            if not value.strip():
                raise InputError("is empty: choose an ONNX file")
            check_onnx_file(value.strip())
            c.onnx_path = value.strip()
        else:
            if value.strip():
                check_validation_file(value.strip())
            c.validation_path = value.strip()
        self.store(c)

    def _browse_onnx(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "ONNX model", "", ONNX_FILTER)
        if path:
            self.set_onnx_path(path)

    def _browse_validation(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Validation set", "", "numpy archives (*.npz);;All files (*)")
        if path:
            self.set_validation_path(path)


EDITOR = CnnEditor
