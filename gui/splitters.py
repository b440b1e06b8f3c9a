"""A splitter made in one call from its panes and the share of extra room each takes."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QSplitter, QWidget


def splitter(orientation: Qt.Orientation, *panes: tuple[QWidget, int]) -> QSplitter:
    """A splitter holding `panes` in order, each (widget, stretch factor): how extra room is shared out."""
    split = QSplitter(orientation)
    for index, (widget, stretch) in enumerate(panes):
        split.addWidget(widget)
        split.setStretchFactor(index, stretch)
    return split
