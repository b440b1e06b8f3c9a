"""Errors that carry a user-readable message and the place they refer to."""

from __future__ import annotations


class InputError(ValueError):
    """Bad user input: the message says what is wrong, `where` says where (field path, file:line)."""

    def __init__(self, message: str, where: str = "") -> None:
        self.message = message
        self.where = where
        super().__init__(f"{where}: {message}" if where else message)


class SessionError(InputError):
    """A session file that cannot be opened; `where` is the JSON field path."""
