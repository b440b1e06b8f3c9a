"""A kind picker over a stack of pages: the shape both the workload and the target editors share."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QStackedWidget, QVBoxLayout, QWidget


class KindPages(QWidget):
    """A combo box of kinds; choosing one shows its page and emits `changed`."""

    changed = Signal()

    def __init__(self, kinds: dict[str, str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.kind = QComboBox()
        for key, title in kinds.items():
            self.kind.addItem(title, key)
        layout.addWidget(self.kind)
        self.stack = QStackedWidget()
        layout.addWidget(self.stack, 1)
        self._pages: dict[str, QWidget] = {}
        self.kind.currentIndexChanged.connect(self._kind_changed)

    def add_page(self, kind: str, page: QWidget) -> QWidget:
        self._pages[kind] = page
        self.stack.addWidget(page)
        if kind == self.current_kind():
            self.stack.setCurrentWidget(page)
        return page

    def current_kind(self) -> str:
        return self.kind.currentData()

    def set_kind(self, kind: str) -> None:
        self.kind.setCurrentIndex(self.kind.findData(kind))

    def _kind_changed(self) -> None:
        self.stack.setCurrentWidget(self._pages[self.current_kind()])
        self.changed.emit()
