"""Widgets following the project's signals (core.project_events) for as long as they live.

The project outlives its widgets (a tab rebuilt, an editor replaced, a dock closed); a callback into
a widget whose Qt object is gone would raise or crash. `follow` ties each subscription to the widget:
it is dropped when the widget is destroyed, so a deleted widget is never called again.
"""

from __future__ import annotations

from typing import Any, Callable, ParamSpec

from PySide6.QtCore import QObject

from core.events import Signal

P = ParamSpec("P")


def follow(owner: QObject, signal: Signal[P], slot: Callable[P, Any]) -> None:
    """Connect `slot` to `signal` until `owner` is destroyed (mypy checks the slot against what the
    signal emits)."""
    signal.connect(slot)
    owner.destroyed.connect(lambda *_: signal.disconnect(slot))


def unfollow(signal: Signal[P], slot: Callable[P, Any]) -> None:
    """Stop following before the owner goes (an editor whose item is gone)."""
    signal.disconnect(slot)
