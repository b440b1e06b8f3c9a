"""Widgets following the project's signals (core.project_events) for as long as they live.

The project outlives its widgets (a tab rebuilt, an editor replaced, a dock closed); a callback into
a widget whose Qt object is gone would raise or crash. `follow` ties each subscription to the widget:
it is dropped when the widget is destroyed, so a deleted widget is never called again.
"""

from __future__ import annotations

from typing import Any, Callable

from PySide6.QtCore import QObject

from core.events import Signal


def follow(owner: QObject, slot: Callable[[Any], None], *signals: Signal) -> None:
    """Connect `slot` to each signal until `owner` is destroyed."""
    for signal in signals:
        signal.connect(slot)

    def drop(*_: object) -> None:
        for signal in signals:
            signal.disconnect(slot)
    owner.destroyed.connect(drop)


def unfollow(slot: Callable[[Any], None], *signals: Signal) -> None:
    """Stop following before the owner goes (an editor whose item is gone)."""
    for signal in signals:
        signal.disconnect(slot)
