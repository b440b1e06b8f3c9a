"""A layout that wraps its widgets onto further rows, so a panel's settings row never makes the
window wider than the screen. A label stays on the row of the widget after it."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRect, QSize, Qt
from PySide6.QtWidgets import QLabel, QLayout, QLayoutItem, QWidget


class FlowLayout(QLayout):
    def __init__(self, parent: QWidget | None = None, spacing: int = 6) -> None:
        super().__init__(parent)
        self._items: list[QLayoutItem] = []
        self._spacing = spacing
        self.setContentsMargins(0, 0, 0, 0)

    # QHBoxLayout's calls, so panels can fill either: stretch has no meaning when rows wrap
    def addWidget(self, widget: QWidget, stretch: int = 0) -> None:  # noqa: N802 (Qt name)
        super().addWidget(widget)

    def addStretch(self, stretch: int = 0) -> None:  # noqa: N802 (Qt name)
        pass

    def addItem(self, item: QLayoutItem) -> None:  # noqa: N802 (Qt name)
        self._items.append(item)

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int) -> QLayoutItem | None:  # noqa: N802 (Qt name)
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int) -> QLayoutItem | None:  # noqa: N802 (Qt name)
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    def expandingDirections(self) -> Qt.Orientation:  # noqa: N802 (Qt name)
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:  # noqa: N802 (Qt name)
        return True

    def heightForWidth(self, width: int) -> int:  # noqa: N802 (Qt name)
        return self._arrange(QRect(0, 0, width, 0), apply=False)

    def setGeometry(self, rect: QRect) -> None:  # noqa: N802 (Qt name)
        super().setGeometry(rect)
        self._arrange(rect, apply=True)

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt name)
        return self.minimumSize()

    def minimumSize(self) -> QSize:  # noqa: N802 (Qt name)
        size = QSize()
        for group in self._groups():
            w = sum(i.minimumSize().width() for i in group) + self._spacing * (len(group) - 1)
            h = max(i.minimumSize().height() for i in group)
            size = size.expandedTo(QSize(w, h))
        m = self.contentsMargins()
        return size + QSize(m.left() + m.right(), m.top() + m.bottom())

    def _visible(self) -> list[QLayoutItem]:
        return [i for i in self._items if (w := i.widget()) is None or not w.isHidden()]

    def _groups(self) -> list[list[QLayoutItem]]:
        """Items that must share a row: a label and the widget it names."""
        groups: list[list[QLayoutItem]] = []
        pending: list[QLayoutItem] = []
        for item in self._visible():
            pending.append(item)
            if not isinstance(item.widget(), QLabel):
                groups.append(pending)
                pending = []
        if pending:
            groups.append(pending)
        return groups

    def _arrange(self, rect: QRect, apply: bool) -> int:
        m = self.contentsMargins()
        area = rect.adjusted(m.left(), m.top(), -m.right(), -m.bottom())
        x, y, row_h = area.x(), area.y(), 0
        for group in self._groups():
            hints = [i.sizeHint() for i in group]
            width = sum(h.width() for h in hints) + self._spacing * (len(group) - 1)
            if x > area.x() and x + width > area.right() + 1:
                x, y, row_h = area.x(), y + row_h + self._spacing, 0
            row = max(h.height() for h in hints)
            for item, hint in zip(group, hints):
                if apply:
                    # vertically centred in the row, like a QHBoxLayout
                    item.setGeometry(QRect(QPoint(x, y + (row - hint.height()) // 2), hint))
                x += hint.width() + self._spacing
            row_h = max(row_h, row)
        return y + row_h - rect.y() + m.bottom()



