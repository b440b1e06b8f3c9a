"""What the typed-results tests of every engine check alike (tests/test_typed_results_*.py)."""

from __future__ import annotations

from typing import Any


def assert_plain_json(value: Any, where: str = "result") -> None:
    """Only the exact JSON types a session writes and reads back as the same value: no tuples, no
    numpy scalars, string keys."""
    kind = type(value)
    if kind is dict:
        for k, v in value.items():
            assert type(k) is str, where
            assert_plain_json(v, f"{where}.{k}")
    elif kind is list:
        for i, v in enumerate(value):
            assert_plain_json(v, f"{where}[{i}]")
    else:
        assert kind in (str, int, float, bool, type(None)), f"{where}: {kind.__name__}"
