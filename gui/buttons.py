"""A push button made in one call: its text, its tooltip and what a click does."""

from __future__ import annotations

from typing import Callable

from PySide6.QtWidgets import QPushButton


def push_button(text: str, tip: str, slot: Callable[[], object]) -> QPushButton:
    """A button labelled `text` with tooltip `tip` that calls `slot` when clicked."""
    button = QPushButton(text)
    button.setToolTip(tip)
    button.clicked.connect(slot)
    return button
