"""The loader's memo of checked sessions (core.session.storage._PASSED): a file read again skips the
number and schema phases only for the very bytes that passed them; any other bytes at the same path
are checked in full."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from core.session import storage
from core.session.document import SessionError, to_json

EXAMPLE = Path(__file__).resolve().parents[1] / "assets" / "example_session.dfx"


def _document(project) -> str:
    """The project as a session document, less the moment to_json writes it (saved_at)."""
    doc = to_json(project)
    doc.pop("saved_at", None)
    return json.dumps(doc, sort_keys=True)


def test_a_session_read_again_is_the_same_project_and_other_bytes_are_checked_again(tmp_path, monkeypatch):
    path = tmp_path / "s.dfx"
    shutil.copy(EXAMPLE, path)
    first, version = storage.load_stamped(path)
    assert version in storage._PASSED
    calls: list[str] = []
    from core.session import document

    real = document.check_schema_phase
    monkeypatch.setattr(document, "check_schema_phase", lambda *a: (calls.append("schema"), real(*a))[1])
    again, same = storage.load_stamped(path)
    assert same == version and calls == []                          # the same bytes: not checked again
    assert _document(again) == _document(first)
    doc = json.loads(json.dumps(to_json(first)))
    doc["runs"][0]["status"] = 7                                     # other bytes, a schema error
    path.write_text(json.dumps(doc))
    with pytest.raises(SessionError) as err:
        storage.load_stamped(path)
    assert calls == ["schema"] and "status" in err.value.where
