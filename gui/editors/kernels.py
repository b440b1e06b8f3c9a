"""The editor of a kernel set (kind `kernels`)."""

from __future__ import annotations

import copy
import math
from typing import Any

from PySide6.QtCore import QSignalBlocker, Qt
from PySide6.QtWidgets import (QAbstractItemView, QFormLayout, QHBoxLayout,
                               QLabel, QLineEdit, QListWidget, QListWidgetItem, QPlainTextEdit, QPushButton,
                               QSpinBox, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from core.library_items import (parse_kernel_text)
from core.project import Project
from core.workload import (MAX_KERNEL_SIZE, Kernel, KernelSet)
from gui.buttons import push_button
from gui.editors.base import INT_MAX, ItemEditor, _blocked, _fmt


class KernelSetEditor(ItemEditor):
    """Kernels over one denominator: add/remove, rename, size up to 7x7, cells, paste as text.
    Multi-channel (z x h x w) kernels keep their channels: a channel picker shows one at a time."""

    def __init__(self, project: Project, lib: str, entry_id: str, parent: QWidget | None = None) -> None:
        super().__init__(project, lib, entry_id, parent)
        self._row = 0
        form = QFormLayout()
        self.name_edit = QLineEdit()
        self.name_edit.setToolTip("The kernel set's own name (shown in results and generated code)")
        self.name_edit.textEdited.connect(lambda _t: self._name_edited())
        self.name_edit.editingFinished.connect(self._name_finished)
        form.addRow("Set name", self.name_edit)
        self.fields = self.bind_fields(
            {"properties": {"denominator": {"type": "integer", "title": "Denominator", "minimum": 1, "maximum": INT_MAX,
                                            "description": "Every kernel is its matrix divided by this number"}}},
            lambda: {"denominator": self.value().denominator}, self._denominator_edited)
        self.denominator = self.fields.build("denominator", QSpinBox)
        form.addRow("Denominator", self.denominator)
        self.layout_.addLayout(form)
        self.list = QListWidget()
        self.list.setMaximumHeight(90)
        self.list.setToolTip("The kernels; double-click a name to rename it")
        self.list.setEditTriggers(QAbstractItemView.EditTrigger.DoubleClicked
                                  | QAbstractItemView.EditTrigger.EditKeyPressed)
        self.list.currentRowChanged.connect(self._row_changed)
        self.list.itemChanged.connect(self._kernel_renamed)
        self.layout_.addWidget(self.list)
        row = QHBoxLayout()
        self.add_button = push_button("Add", "Add a 3x3 kernel of zeros", self.add_kernel)
        self.remove_button = push_button("Remove", "Remove the selected kernel", self.remove_kernel)
        self.paste_button = QPushButton("Paste text…")
        self.paste_button.setCheckable(True)
        self.paste_button.setToolTip("Replace all kernels by matrices typed or pasted as text")
        for b in (self.add_button, self.remove_button, self.paste_button):
            row.addWidget(b)
        self.layout_.addLayout(row)
        self.paste_box = QWidget()
        pl = QVBoxLayout(self.paste_box)
        pl.setContentsMargins(0, 0, 0, 0)
        self.paste_text = QPlainTextEdit()
        self.paste_text.setPlaceholderText("One row per line, numbers separated by spaces or commas;\n"
                                           "a blank line between kernels, e.g.\n1 2 1\n2 4 2\n1 2 1")
        self.paste_text.setMaximumHeight(110)
        pl.addWidget(self.paste_text)
        self.paste_apply = QPushButton("Use these kernels")
        self.paste_apply.clicked.connect(lambda: self.set_kernels_from_text(self.paste_text.toPlainText()))
        pl.addWidget(self.paste_apply)
        self.paste_box.hide()
        self.paste_button.toggled.connect(self.paste_box.setVisible)
        self.layout_.addWidget(self.paste_box)
        size = QHBoxLayout()
        size.addWidget(QLabel("Size"))
        side = {"type": "integer", "minimum": 1, "maximum": MAX_KERNEL_SIZE}
        self.size_fields = self.bind_fields(
            {"properties": {"rows": {**side, "title": "Rows", "description": "Rows of the kernel shown"},
                            "cols": {**side, "title": "Columns", "description": "Columns of the kernel shown"}}},
            self._size, self._resize)
        self.rows = self.size_fields.build("rows", QSpinBox)
        self.cols = self.size_fields.build("cols", QSpinBox)
        size.addWidget(self.rows)
        size.addWidget(QLabel("x"))
        size.addWidget(self.cols)
        self.channel_label = QLabel("Channel")
        self.channel = QSpinBox()
        self.channel.setToolTip("Multi-channel kernel: the channel shown in the table")
        self.channel.valueChanged.connect(lambda _v: self._show_kernel())
        size.addWidget(self.channel_label)
        size.addWidget(self.channel)
        size.addStretch(1)
        self.layout_.addLayout(size)
        self.table = QTableWidget()
        self.table.horizontalHeader().setDefaultSectionSize(44)
        self.table.verticalHeader().setDefaultSectionSize(24)
        self.table.setMinimumHeight(24 * 4)
        self.table.itemChanged.connect(self._cell_edited)
        self.layout_.addWidget(self.table, 1)
        self.layout_.addWidget(self.error)
        self.refresh()

    # ------------------------------------------------------------ model -> widgets
    def refresh(self) -> None:
        ks: KernelSet = self.value()
        with_blocked = _blocked(self.name_edit, self.list)
        if self.name_edit.text().strip() != ks.name:
            self.name_edit.setText(ks.name)
            self.set_problem("Set name", None)
        self.fields.refresh()
        names = [k.name for k in ks.kernels]
        if [self.list.item(i).text() for i in range(self.list.count())] != names:
            self.list.clear()
            for n in names:
                item = QListWidgetItem(n)
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
                self.list.addItem(item)
        self._row = min(max(self._row, 0), len(names) - 1)
        self.list.setCurrentRow(self._row)
        del with_blocked
        self._show_kernel()

    def _kernel(self) -> Kernel:
        return self.value().kernels[self._row]

    def _show_kernel(self) -> None:
        chans = self._kernel().channels
        blockers = _blocked(self.channel, self.table)
        self.channel.setRange(1, len(chans))
        self.channel_label.setVisible(len(chans) > 1)
        self.channel.setVisible(len(chans) > 1)
        m = chans[self.channel.value() - 1]
        self.size_fields.refresh()
        if self.table.rowCount() != len(m) or self.table.columnCount() != len(m[0]):
            self.table.clearContents()
            self.table.setRowCount(len(m))
            self.table.setColumnCount(len(m[0]))
        for r, row in enumerate(m):
            for c, v in enumerate(row):
                item = self.table.item(r, c)
                if item is None:
                    item = QTableWidgetItem()
                    item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
                    self.table.setItem(r, c, item)
                if item.text() != _fmt(v):
                    item.setText(_fmt(v))
        del blockers

    # ------------------------------------------------------------ edits
    def _edited_copy(self) -> KernelSet:
        return copy.deepcopy(self.value())

    def _row_changed(self, row: int) -> None:
        if row >= 0:
            self._row = row
            self.channel.setValue(1)
            self._show_kernel()

    def _name_edited(self) -> None:
        """Taken as typed (a run started before the field is left uses it); an empty name is not."""
        ks = self._edited_copy()
        name = self.name_edit.text().strip()
        self.set_problem("Set name", None if name else "is empty: a kernel set needs a name")
        if name and name != ks.name:
            ks.name = name
            self.commit(ks)

    def _name_finished(self) -> None:
        self._name_edited()
        self.refresh()              # an empty name goes back to the one held

    def _denominator_edited(self, _key: str, value: int) -> None:
        ks = self._edited_copy()
        ks.denominator = value
        self.store(ks)

    def _size(self) -> dict[str, Any]:
        m = self._kernel().channels[0]
        return {"rows": len(m), "cols": len(m[0])}

    def add_kernel(self) -> None:
        ks = self._edited_copy()
        taken = {k.name for k in ks.kernels}
        n = len(ks.kernels) + 1
        while f"k{n}" in taken:
            n += 1
        ks.kernels.append(Kernel(f"k{n}", [[0.0] * 3 for _ in range(3)]))
        if self.commit(ks):
            self._row = len(ks.kernels) - 1
            self.refresh()

    def remove_kernel(self) -> None:
        ks = self._edited_copy()
        if len(ks.kernels) <= 1:
            self.show_error("A kernel set keeps at least one kernel.")
            return
        del ks.kernels[self._row]
        self.commit(ks)

    def set_kernels_from_text(self, text: str) -> bool:
        """Replace every kernel by the matrices in `text` (see parse_kernel_text)."""
        mats = self.read_or_show(lambda: parse_kernel_text(text))
        if mats is None:
            return False
        ks = self._edited_copy()
        ks.kernels = [Kernel(f"k{i + 1}", m) for i, m in enumerate(mats)]
        if self.commit(ks):
            self.paste_button.setChecked(False)
            return True
        return False

    def _kernel_renamed(self, item: QListWidgetItem) -> None:
        ks = self._edited_copy()
        row = self.list.row(item)
        name = item.text().strip()
        if not name:
            self.show_error("A kernel needs a name.")
        elif any(k.name == name for i, k in enumerate(ks.kernels) if i != row):
            self.show_error(f"Another kernel is already named {name!r}.")
        else:
            ks.kernels[row].name = name
            if self.commit(ks):
                return
        b = QSignalBlocker(self.list)          # the item is mid-edit: put its old name back in place
        item.setText(self.value().kernels[row].name)
        b.unblock()

    def _resize(self, key: str, value: int) -> None:
        size = {**self._size(), key: value}
        rows, cols = size["rows"], size["cols"]
        ks = self._edited_copy()
        k = ks.kernels[self._row]

        def resized(old: list) -> list:
            return [[old[r][c] if r < len(old) and c < len(old[0]) else 0.0 for c in range(cols)] for r in range(rows)]

        chans = [resized(ch) for ch in k.channels]
        three_d = bool(k.values) and isinstance(k.values[0][0], list)
        k.values = chans if three_d else chans[0]
        self.store(ks)

    def _cell_edited(self, item: QTableWidgetItem) -> None:
        r, c = item.row(), item.column()
        ks = self._edited_copy()
        chan = ks.kernels[self._row].channels[self.channel.value() - 1]
        try:
            value = float(item.text())
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            self.show_error(f"Row {r + 1}, column {c + 1}: {item.text()!r} is not a number")
        else:
            chan[r][c] = value
            if self.commit(ks):
                return
        with_blocked = _blocked(self.table)         # refused: the cell shows what the set holds
        item.setText(_fmt(self._kernel().channels[self.channel.value() - 1][r][c]))
        del with_blocked


EDITOR = KernelSetEditor
