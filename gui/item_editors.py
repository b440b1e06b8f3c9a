"""Editors of one library item each (a workload or a target), shown under the library lists.

An editor holds no copy of its item: it draws the item's value from the project, turns each user
edit into a new value and hands it to `project.set_value` (so undo records it), and redraws when the
library browser tells it the item changed (`refresh`). An edit that does not make a valid value is
refused with a message next to the field and changes nothing.
"""

from __future__ import annotations

import copy
import json
import math
from typing import Any, Callable, TypeVar

from PySide6.QtCore import QSignalBlocker, Qt, Signal
from PySide6.QtWidgets import (QAbstractItemView, QCheckBox, QComboBox, QFileDialog, QFormLayout, QHBoxLayout,
                               QLabel, QLineEdit, QListWidget, QListWidgetItem, QPlainTextEdit, QPushButton,
                               QSpinBox, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from core.errors import InputError
from core.filters import PRESETS
from core.library_items import (check_onnx_file, check_validation_file, layers_from_text, load_transform,
                                parse_kernel_text, workload_variants)
from core.project import Project, ProjectEvent
from core.kinds import kind_of
from core.workload import (BUILTIN_DIGITS, DIGITS_TITLE, MAX_KERNEL_SIZE, CnnNetwork, CnnSet, ConvLayers, FpgaTarget,
                           FpspFilter, Kernel, KernelSet, MeritTransformWorkload)
from gui.binding import FieldBinding

INT_MAX = 2 ** 31 - 1
ERROR_STYLE = "color: #b00020"
ONNX_FILTER = "ONNX models (*.onnx);;All files (*)"


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
        self._unfollow = project.events.connect(self._project_changed, "library", "reset")
        self.destroyed.connect(lambda *_: self._unfollow())
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
        self._unfollow()

    def _project_changed(self, ev: ProjectEvent) -> None:
        if not self._attached or not (ev.kind == "reset" or (ev.kind == "library" and ev.lib == self.lib
                                                             and ev.id == self.entry_id)):
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
        try:
            self.store(value)
        except InputError as exc:
            self.show_error(str(exc))
            return False
        self.show_error(None)
        return True

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


# ================================================================ kernels
# kind -> its editor: each editor registers itself (register_editor) for the kinds it edits; a
# target kind without an editor of its own gets the TargetEditor built from its SCHEMA.
EDITORS: dict[str, type[ItemEditor]] = {}
E = TypeVar("E", bound=type[ItemEditor])


def register_editor(*kinds: str) -> Callable[[E], E]:
    def add(cls: E) -> E:
        for kind in kinds:
            EDITORS[kind] = cls
        return cls
    return add


@register_editor("kernels")
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
        self.add_button = QPushButton("Add")
        self.add_button.setToolTip("Add a 3x3 kernel of zeros")
        self.add_button.clicked.connect(self.add_kernel)
        self.remove_button = QPushButton("Remove")
        self.remove_button.setToolTip("Remove the selected kernel")
        self.remove_button.clicked.connect(self.remove_kernel)
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
        try:
            mats = parse_kernel_text(text)
        except InputError as exc:
            self.show_error(str(exc))
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


# ================================================================ FPSP filter
@register_editor("fpsp_filter")
class FilterEditor(ItemEditor):
    """A built-in FPSP filter preset, with its kernels shown."""

    def __init__(self, project: Project, lib: str, entry_id: str, parent: QWidget | None = None) -> None:
        super().__init__(project, lib, entry_id, parent)
        self.combo = QComboBox()
        for name, title in workload_variants("fpsp_filter").items():
            self.combo.addItem(f"{title}  ({name})", name)
        self.combo.setToolTip("A built-in filter (Cain's Table 1 and common image filters)")
        self.combo.currentIndexChanged.connect(lambda _i: self.commit(FpspFilter(self.combo.currentData())))
        self.layout_.addWidget(self.combo)
        self.preview = QLabel()
        self.preview.setTextFormat(Qt.TextFormat.RichText)
        self.preview.setAlignment(Qt.AlignmentFlag.AlignTop)
        self.layout_.addWidget(self.preview, 1)
        self.layout_.addWidget(self.error)
        self.refresh()

    def refresh(self) -> None:
        f: FpspFilter = self.value()
        b = QSignalBlocker(self.combo)
        self.combo.setCurrentIndex(max(0, self.combo.findData(f.preset)))
        b.unblock()
        ks = PRESETS[f.preset]
        html = []
        for k in ks.kernels:
            rows = "".join("<tr>" + "".join(f"<td align='right'>&nbsp;{_fmt(v)}&nbsp;</td>" for v in r) + "</tr>"
                           for r in k.values)
            html.append(f"<b>{k.name}</b> = 1/{ks.denominator} ×<table>{rows}</table>")
        self.preview.setText("<br>".join(html))


# ================================================================ CNN set
@register_editor("cnn_set")
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
        self.add_onnx_button = QPushButton("Add ONNX…")
        self.add_onnx_button.setToolTip("Add ONNX models to the set (each is read and checked first)")
        self.add_onnx_button.clicked.connect(self._browse_onnx)
        self.remove_onnx_button = QPushButton("Remove")
        self.remove_onnx_button.setToolTip("Remove the selected ONNX file from the set")
        self.remove_onnx_button.clicked.connect(self.remove_onnx)
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
            try:
                check_onnx_file(p)
            except InputError as exc:
                self.show_error(str(exc))
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


# ================================================================ one CNN
@register_editor("cnn")
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
        try:
            check_onnx_file(path)
        except InputError as exc:
            self.show_error(str(exc))
            return False
        return self._commit_with(onnx_path=path)

    def set_validation_path(self, path: str) -> bool:
        """Attach a validation set (.npz); an empty path removes it."""
        if path:
            try:
                check_validation_file(path)
            except InputError as exc:
                self.show_error(str(exc))
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


# ================================================================ MERIT transform
@register_editor("merit_transform")
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
        try:
            w = load_transform(path)
        except InputError as exc:
            self.show_error(str(exc))
            return False
        w.builtin = self.value().builtin
        return self.commit(w)

    def _browse(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "MERIT transform", "", "Transform JSON (*.json);;All files (*)")
        if path:
            self.load_json(path)


# ================================================================ conv layers
@register_editor("conv_layers")
class ConvLayersEditor(ItemEditor):
    """One layer spec per line, each checked as it is typed."""

    def __init__(self, project: Project, lib: str, entry_id: str, parent: QWidget | None = None) -> None:
        super().__init__(project, lib, entry_id, parent)
        hint = QLabel("One layer per line, e.g. <tt>Ci=64,Hi=56,Wi=56,Co=128,kernel=3,pad=1</tt> (keys: Ci Hi Wi "
                      "Co Hk Wk kernel stride pad groups dilation batch name)")
        hint.setWordWrap(True)
        self.layout_.addWidget(hint)
        self.text = QPlainTextEdit()
        self.text.textChanged.connect(self._edited)
        self.layout_.addWidget(self.text, 1)
        self.layout_.addWidget(self.error)
        self.refresh()

    def refresh(self) -> None:
        layers: ConvLayers = self.value()
        try:
            same = layers_from_text(self.text.toPlainText()).layers == layers.layers
        except InputError:
            same = False
        if not same:            # keep the cursor when the text already says it
            b = QSignalBlocker(self.text)
            self.text.setPlainText("\n".join(layers.layers))
            b.unblock()
            self.set_problem("Layers", None)
            self.show_error(None)

    def _edited(self) -> None:
        """Taken as typed, else the text stays, marked, and Run waits until it reads."""
        try:
            layers = layers_from_text(self.text.toPlainText())
            self.store(layers)
        except InputError as exc:
            self.set_problem("Layers", str(exc))
            return
        self.set_problem("Layers", None)


# ================================================================ targets
def _display_schema(cls: Any) -> dict[str, Any]:
    """The target's schema with item labels for its enums (board names, units)."""
    schema = copy.deepcopy(cls.SCHEMA)
    for key, prop in schema["properties"].items():
        if "enum" in prop and "x-labels" not in prop and prop.get("unit"):
            prop["x-labels"] = {str(v): f"{v} {prop['unit']}" for v in prop["enum"]}
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


def editor_for(project: Project, lib: str, entry_id: str, parent: QWidget | None = None) -> ItemEditor:
    """The editor of a library item, by its kind."""
    e = project.entry(lib, entry_id)
    if e is None:
        raise KeyError(f"no {lib[:-1]} with id {entry_id!r}")
    cls = EDITORS.get(e.kind) or (TargetEditor if lib == "targets" else None)
    if cls is None:
        raise KeyError(f"no editor is registered for the {lib[:-1]} kind {e.kind!r}")
    editor = cls(project, lib, entry_id, parent)
    for combo in editor.findChildren(QComboBox):        # long entries must not widen the dock
        combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        combo.setMinimumContentsLength(10)
    return editor
