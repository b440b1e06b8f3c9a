"""What the typed-results tests of every engine check alike (tests/test_typed_results_*.py)."""

from __future__ import annotations

import json
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


def assert_reads_back(r: Any, same_value: bool = False) -> dict[str, Any]:
    """A typed result's JSON form is plain JSON (no NaN), unchanged by json.dumps and loads, and its type
    reads it back to the same form (and, with `same_value`, to an equal result: tuples where the type
    says tuple, as from_json builds); returns that form."""
    stored = r.to_json()
    assert_plain_json(stored)
    assert json.loads(json.dumps(stored, allow_nan=False)) == stored
    again = type(r).from_json(stored)
    assert again.to_json() == stored
    if same_value:
        assert again == r
    return dict(stored)
