"""Errors that carry a user-readable message and the place they refer to."""

from __future__ import annotations


class InputError(ValueError):
    """Bad user input: the message says what is wrong, `where` says where (field path, file:line)."""

    def __init__(self, message: str, where: str = "") -> None:
        self.message = message
        self.where = where
        super().__init__(f"{where}: {message}" if where else message)


class CheckFailed(RuntimeError):
    """The program checked its own result and found it wrong (a layout that does not compute the
    same, compiled code that classifies differently): the message is the whole story, so front
    ends show it without a traceback."""


class SessionError(InputError):
    """A session file that cannot be opened; `where` is the JSON field path."""
