"""The editor of a set of CNNs (kind `cnn_set`) run together on one FPGA."""

from __future__ import annotations


from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QAbstractItemView, QFileDialog, QFormLayout, QHBoxLayout,
                               QLabel, QListWidget, QListWidgetItem, QSpinBox, QWidget)

from core.library_items import (check_onnx_file)
from core.project import Project
from core.workload import (CnnSet)
from gui.buttons import push_button
from gui.editors.base import INT_MAX, ONNX_FILTER, ItemEditor, _blocked


class CnnSetEditor(ItemEditor):
    """Zoo networks ticked, ONNX files beside them, and the batch."""

    def __init__(self, project: Project, lib: str, entry_id: str, parent: QWidget | None = None) -> None:
        from core.nets import zoo

        super().__init__(project, lib, entry_id, parent)
        self.layout_.addWidget(QLabel("Networks from the model zoo:"))
        self.list = QListWidget()
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        for name, title in zoo.titles().items():
            item = QListWidgetItem(f"{title}  ({name})")
            item.setData(Qt.ItemDataRole.UserRole, name)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Unchecked)
            self.list.addItem(item)
        self.list.itemChanged.connect(lambda _i: self._edited())
        self.layout_.addWidget(self.list, 1)
        self.layout_.addWidget(QLabel("ONNX files mapped beside them:"))
        self.onnx = QListWidget()
        self.onnx.setMaximumHeight(70)
        self.layout_.addWidget(self.onnx)
        row = QHBoxLayout()
        self.add_onnx_button = push_button("Add ONNX…", "Add ONNX models to the set (each is read and checked "
                                           "first)", self._browse_onnx)
        self.remove_onnx_button = push_button("Remove", "Remove the selected ONNX file from the set", self.remove_onnx)
        row.addWidget(self.add_onnx_button)
        row.addWidget(self.remove_onnx_button)
        row.addStretch(1)
        self.layout_.addLayout(row)
        form = QFormLayout()
        self.fields = self.bind_fields(
            {"properties": {"batch": {"type": "integer", "title": "Batch", "minimum": 1, "maximum": INT_MAX,
                                      "description": "Images per inference, for every network of the set"}}},
            lambda: {"batch": self.value().batch}, lambda _k, v: self._edited(v))
        self.batch = self.fields.build("batch", QSpinBox)
        form.addRow("Batch", self.batch)
        self.layout_.addLayout(form)
        self.layout_.addWidget(self.error)
        self.refresh()

    def refresh(self) -> None:
        cs: CnnSet = self.value()
        blockers = _blocked(self.list)
        for i in range(self.list.count()):
            item = self.list.item(i)
            on = item.data(Qt.ItemDataRole.UserRole) in cs.cnns
            item.setCheckState(Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)
        del blockers
        self.fields.refresh()
        if [self.onnx.item(i).text() for i in range(self.onnx.count())] != cs.onnx:
            self.onnx.clear()
            self.onnx.addItems(cs.onnx)

    def _edited(self, batch: int | None = None) -> None:
        """A network ticked or not, or the batch typed (which, when refused, stays on show, marked)."""
        old: CnnSet = self.value()
        ticked = [self.list.item(i).data(Qt.ItemDataRole.UserRole) for i in range(self.list.count())
                  if self.list.item(i).checkState() == Qt.CheckState.Checked]
        cnns = [n for n in old.cnns if n in ticked] + [n for n in ticked if n not in old.cnns]
        if batch is not None:
            self.store(CnnSet(cnns, batch, list(old.onnx)))
        elif not self.commit(CnnSet(cnns, old.batch, list(old.onnx))):
            self.refresh()

    def add_onnx(self, paths: list[str]) -> bool:
        old: CnnSet = self.value()
        onnx = list(old.onnx)
        for p in paths:
            if not self.passes(lambda: check_onnx_file(p)):
                return False
            if p not in onnx:
                onnx.append(p)
        return self.commit(CnnSet(list(old.cnns), old.batch, onnx))

    def remove_onnx(self) -> None:
        old: CnnSet = self.value()
        row = self.onnx.currentRow()
        if 0 <= row < len(old.onnx):
            if not self.commit(CnnSet(list(old.cnns), old.batch, old.onnx[:row] + old.onnx[row + 1:])):
                self.refresh()

    def _browse_onnx(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(self, "Add ONNX models", "", ONNX_FILTER)
        if paths:
            self.add_onnx(paths)


EDITOR = CnnSetEditor
