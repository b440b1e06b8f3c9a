"""A tiny Qt-free signal: the project model announces its changes through these, and the GUI's
widgets (or a test) listen. Kept here so core/ needs no Qt to tell anyone that something changed."""

from __future__ import annotations

from typing import Any, Callable, Generic, ParamSpec

P = ParamSpec("P")


class Signal(Generic[P]):
    """Callbacks called in connection order with the emitted arguments; `Signal[[RunChanged]]` says
    what it emits, so mypy checks each slot connected to it against that."""

    def __init__(self) -> None:
        self._slots: list[Callable[P, Any]] = []
        self._blocked = 0

    def connect(self, slot: Callable[P, Any]) -> None:
        if slot not in self._slots:
            self._slots.append(slot)

    def disconnect(self, slot: Callable[P, Any]) -> None:
        if slot in self._slots:
            self._slots.remove(slot)

    def __len__(self) -> int:
        """How many callbacks are connected (a test checks that a deleted widget left none)."""
        return len(self._slots)

    def emit(self, *args: P.args, **kwargs: P.kwargs) -> None:
        if self._blocked:
            return
        for slot in list(self._slots):
            slot(*args, **kwargs)

    def block(self) -> "_Blocker":
        """`with signal.block():` emits nothing inside (used while a whole project is replaced)."""
        return _Blocker(self)


class _Blocker:
    def __init__(self, signal: Signal[Any]) -> None:
        self.signal = signal

    def __enter__(self) -> None:
        self.signal._blocked += 1

    def __exit__(self, *exc: object) -> None:
        self.signal._blocked -= 1
