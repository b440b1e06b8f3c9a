"""Editors for the three workload kinds: kernel matrices, a CNN set from the zoo, an FPSP filter."""

from __future__ import annotations

import copy
import re

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QFormLayout, QHBoxLayout, QInputDialog,
                               QLabel, QLineEdit, QListWidget, QListWidgetItem, QPushButton, QSpinBox,
                               QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from core.errors import InputError
from core.filters import PRESETS
from core.workload import (MAX_KERNEL_SIZE, WORKLOAD_KINDS, CnnSet, FpspFilter, Kernel, KernelSet, Workload)
from gui.kind_pages import KindPages


def parse_kernel_text(text: str) -> list[list[list[float]]]:
    """Matrices typed or pasted as text: numbers split by spaces/commas, rows by lines or ';',
    kernels by blank lines. Raises InputError naming the line."""
    kernels: list[list[list[float]]] = []
    current: list[list[float]] = []
    lines = text.replace(";", "\n").splitlines()
    for n, line in enumerate(lines, 1):
        cleaned = line.strip().strip("[](){}").strip()
        if not cleaned:
            if current:
                kernels.append(current)
                current = []
            continue
        row = []
        for tok in re.split(r"[\s,]+", cleaned.replace("[", " ").replace("]", " ").strip()):
            if not tok:
                continue
            try:
                row.append(float(tok))
            except ValueError:
                raise InputError(f"{tok!r} is not a number", f"pasted text line {n}") from None
        if current and len(row) != len(current[0]):
            raise InputError(f"ragged rows: {len(row)} values, the kernel's first row has {len(current[0])}",
                             f"pasted text line {n}")
        current.append(row)
    if current:
        kernels.append(current)
    if not kernels:
        raise InputError("no numbers found", "pasted text")
    for i, k in enumerate(kernels):
        if len(k) > MAX_KERNEL_SIZE or len(k[0]) > MAX_KERNEL_SIZE:
            raise InputError(f"kernel {i + 1} is {len(k)}x{len(k[0])}; the limit is "
                             f"{MAX_KERNEL_SIZE}x{MAX_KERNEL_SIZE}", "pasted text")
    return kernels


def _fmt(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else repr(float(v))


class KernelEditor(QWidget):
    """Add/remove kernels, size up to 7x7, a common denominator, paste from text."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._set = KernelSet("kernels", 1, [Kernel("k1", [[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]])])
        self._loading = False
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        form = QFormLayout()
        self.name_edit = QLineEdit(self._set.name)
        self.name_edit.editingFinished.connect(self._name_edited)
        form.addRow("Name", self.name_edit)
        self.denominator = QSpinBox()
        self.denominator.setRange(1, 1 << 20)
        self.denominator.valueChanged.connect(self._denominator_edited)
        self.denominator.setToolTip("Every kernel is its matrix divided by this number")
        form.addRow("Denominator", self.denominator)
        layout.addLayout(form)
        self.list = QListWidget()
        self.list.setMaximumHeight(90)
        self.list.currentRowChanged.connect(self._show_kernel)
        layout.addWidget(self.list)
        row = QHBoxLayout()
        self.add_button = QPushButton("Add")
        self.add_button.clicked.connect(self.add_kernel)
        self.remove_button = QPushButton("Remove")
        self.remove_button.clicked.connect(self.remove_kernel)
        self.paste_button = QPushButton("Paste text…")
        self.paste_button.clicked.connect(self._paste_dialog)
        for b in (self.add_button, self.remove_button, self.paste_button):
            row.addWidget(b)
        layout.addLayout(row)
        size = QHBoxLayout()
        size.addWidget(QLabel("Size"))
        self.rows = QSpinBox()
        self.cols = QSpinBox()
        for s in (self.rows, self.cols):
            s.setRange(1, MAX_KERNEL_SIZE)
            s.valueChanged.connect(self._resize)
        size.addWidget(self.rows)
        size.addWidget(QLabel("x"))
        size.addWidget(self.cols)
        size.addStretch(1)
        layout.addLayout(size)
        self.table = QTableWidget()
        self.table.horizontalHeader().setDefaultSectionSize(44)
        self.table.verticalHeader().setDefaultSectionSize(24)
        self.table.itemChanged.connect(self._cell_edited)
        layout.addWidget(self.table, 1)
        self.error = QLabel("")
        self.error.setStyleSheet("color: #b00020")
        self.error.setWordWrap(True)
        layout.addWidget(self.error)
        self.set_kernel_set(self._set)

    # ------------------------------------------------------------ model
    def kernel_set(self) -> KernelSet:
        self._set.validate()
        return self._set

    def set_kernel_set(self, ks: KernelSet) -> None:
        self._loading = True
        self._set = KernelSet(ks.name, ks.denominator, [Kernel(k.name, copy.deepcopy(k.values))
                                                         for k in ks.kernels])
        self.name_edit.setText(ks.name)
        self.denominator.setValue(ks.denominator)
        self.list.clear()
        for k in self._set.kernels:
            self.list.addItem(QListWidgetItem(k.name))
        self._loading = False
        self.list.setCurrentRow(0)
        self._show_kernel(0)

    def set_kernels_from_text(self, text: str) -> None:
        mats = parse_kernel_text(text)
        self.set_kernel_set(KernelSet(self._set.name, self._set.denominator,
                                      [Kernel(f"k{i + 1}", m) for i, m in enumerate(mats)]))
        self.changed.emit()

    def add_kernel(self) -> None:
        n = len(self._set.kernels) + 1
        self._set.kernels.append(Kernel(f"k{n}", [[0.0] * 3 for _ in range(3)]))
        self.list.addItem(f"k{n}")
        self.list.setCurrentRow(n - 1)
        self.changed.emit()

    def remove_kernel(self) -> None:
        i = self.list.currentRow()
        if i < 0 or len(self._set.kernels) <= 1:
            self.error.setText("A kernel set keeps at least one kernel.")
            return
        del self._set.kernels[i]
        self.list.takeItem(i)
        self.changed.emit()

    # ------------------------------------------------------------ UI plumbing
    def _current(self) -> Kernel | None:
        i = self.list.currentRow()
        return self._set.kernels[i] if 0 <= i < len(self._set.kernels) else None

    def _show_kernel(self, _row: int) -> None:
        k = self._current()
        if k is None or self._loading:
            return
        self._loading = True
        m = k.channels[0]  # multi-channel kernels: the first channel is edited here
        self.rows.setValue(len(m))
        self.cols.setValue(len(m[0]))
        self.table.setRowCount(len(m))
        self.table.setColumnCount(len(m[0]))
        for r, row in enumerate(m):
            for c, v in enumerate(row):
                item = QTableWidgetItem(_fmt(v))
                item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
                self.table.setItem(r, c, item)
        self._loading = False
        self.error.setText("")

    def _resize(self) -> None:
        k = self._current()
        if k is None or self._loading:
            return
        rows, cols = self.rows.value(), self.cols.value()
        def resized(old: list) -> list:
            return [[old[r][c] if r < len(old) and c < len(old[0]) else 0.0 for c in range(cols)]
                    for r in range(rows)]

        chans = [resized(ch) for ch in k.channels]
        k.values = chans if len(chans) > 1 or k.channels is k.values else chans[0]
        self._show_kernel(self.list.currentRow())
        self.changed.emit()

    def _cell_edited(self, item: QTableWidgetItem) -> None:
        k = self._current()
        if k is None or self._loading:
            return
        try:
            value = float(item.text())
        except ValueError:
            self.error.setText(f"Row {item.row() + 1}, column {item.column() + 1}: {item.text()!r} is not a number")
            self._loading = True
            item.setText(_fmt(k.values[item.row()][item.column()]))
            self._loading = False
            return
        self.error.setText("")
        k.channels[0][item.row()][item.column()] = value
        self.changed.emit()

    def _name_edited(self) -> None:
        if self.name_edit.text() != self._set.name:
            self._set.name = self.name_edit.text() or "kernels"
            self.changed.emit()

    def _denominator_edited(self, value: int) -> None:
        if not self._loading and value != self._set.denominator:
            self._set.denominator = value
            self.changed.emit()

    def _paste_dialog(self) -> None:
        text, ok = QInputDialog.getMultiLineText(
            self, "Paste kernels", "One row per line, numbers separated by spaces or commas;\n"
            "a blank line between kernels:", "1 2 1\n2 4 2\n1 2 1")
        if ok:
            try:
                self.set_kernels_from_text(text)
            except InputError as exc:
                self.error.setText(str(exc))


class CnnSetPicker(QWidget):
    """Tick CNNs of the built-in model zoo."""

    # f-CNNx's three-CNN example, so a CNN engine runs on something sensible before any edit.
    DEFAULT = ("zfnet", "scenelabel", "vgg16")

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        from core.nets import zoo

        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(QLabel("Networks from the model zoo:"))
        self.list = QListWidget()
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        for name, title in zoo.titles().items():
            item = QListWidgetItem(f"{title}  ({name})")
            item.setData(Qt.ItemDataRole.UserRole, name)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if name in self.DEFAULT else Qt.CheckState.Unchecked)
            self.list.addItem(item)
        self.list.itemChanged.connect(lambda _i: self.changed.emit())
        layout.addWidget(self.list, 1)
        form = QFormLayout()
        self.batch = QSpinBox()
        self.batch.setRange(1, 4096)
        self.batch.valueChanged.connect(lambda _v: self.changed.emit())
        form.addRow("Batch", self.batch)
        layout.addLayout(form)

    def cnn_set(self) -> CnnSet:
        names = [self.list.item(i).data(Qt.ItemDataRole.UserRole) for i in range(self.list.count())
                 if self.list.item(i).checkState() == Qt.CheckState.Checked]
        cs = CnnSet(names, self.batch.value())
        cs.validate()
        return cs

    def set_cnn_set(self, cs: CnnSet) -> None:
        self.list.blockSignals(True)
        for i in range(self.list.count()):
            item = self.list.item(i)
            name = item.data(Qt.ItemDataRole.UserRole)
            item.setCheckState(Qt.CheckState.Checked if name in cs.cnns else Qt.CheckState.Unchecked)
        self.list.blockSignals(False)
        self.batch.blockSignals(True)
        self.batch.setValue(cs.batch)
        self.batch.blockSignals(False)


class FilterPresetPicker(QWidget):
    """Pick a built-in FPSP filter; shows its kernels."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.combo = QComboBox()
        for name, ks in PRESETS.items():
            self.combo.addItem(f"{ks.name}  ({name})", name)
        self.combo.currentIndexChanged.connect(self._update)
        layout.addWidget(self.combo)
        self.preview = QLabel()
        self.preview.setTextFormat(Qt.TextFormat.RichText)
        self.preview.setAlignment(Qt.AlignmentFlag.AlignTop)
        layout.addWidget(self.preview, 1)
        self._update()

    def _update(self) -> None:
        ks = PRESETS[self.combo.currentData()]
        html = []
        for k in ks.kernels:
            rows = "".join("<tr>" + "".join(f"<td align='right'>&nbsp;{_fmt(v)}&nbsp;</td>" for v in r) + "</tr>"
                           for r in k.values)
            html.append(f"<b>{k.name}</b> = 1/{ks.denominator} ×<table>{rows}</table>")
        self.preview.setText("<br>".join(html))
        self.changed.emit()

    def fpsp_filter(self) -> FpspFilter:
        return FpspFilter(self.combo.currentData())

    def set_fpsp_filter(self, f: FpspFilter) -> None:
        i = self.combo.findData(f.preset)
        self.combo.blockSignals(True)
        self.combo.setCurrentIndex(max(i, 0))
        self.combo.blockSignals(False)
        self._update()


class WorkloadEditor(KindPages):
    """The workload kind and its editor."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(WORKLOAD_KINDS, parent)
        self.kernels = KernelEditor()
        self.cnns = CnnSetPicker()
        self.filters = FilterPresetPicker()
        for kind, page in (("kernels", self.kernels), ("cnn_set", self.cnns), ("fpsp_filter", self.filters)):
            self.add_page(kind, page)
            page.changed.connect(self.changed)

    def workload(self) -> Workload:
        """The edited workload; raises InputError when it is not valid."""
        kind = self.current_kind()
        if kind == "kernels":
            return self.kernels.kernel_set()
        if kind == "cnn_set":
            return self.cnns.cnn_set()
        return self.filters.fpsp_filter()

    def set_workload(self, w: Workload) -> None:
        self.blockSignals(True)
        if isinstance(w, KernelSet):
            self.kernels.set_kernel_set(w)
        elif isinstance(w, CnnSet):
            self.cnns.set_cnn_set(w)
        elif isinstance(w, FpspFilter):
            self.filters.set_fpsp_filter(w)
        self.set_kind(w.kind)
        self.blockSignals(False)
