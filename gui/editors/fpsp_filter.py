"""The editor of an FPSP filter (kind `fpsp_filter`): a preset picker."""

from __future__ import annotations


from PySide6.QtCore import QSignalBlocker, Qt
from PySide6.QtWidgets import (QComboBox, QLabel, QWidget)

from core.filters import PRESETS
from core.library_items import (workload_variants)
from core.project import Project
from core.workload import (FpspFilter)
from gui.editors.base import ItemEditor, _fmt


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


EDITOR = FilterEditor
