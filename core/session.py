"""Session files (.dfx): the workload, the target, every engine's settings and finished results.

JSON with a format name and a version. Reading checks the structure (JSON schema) and then the
meaning (workload and target readers, each engine's settings schema), so a bad file is refused
with the field path that is wrong, and the caller's open session is never touched. Writing is
atomic and keeps the previous file as `.bak`. Older versions are brought forward by MIGRATIONS.
"""

from __future__ import annotations

import datetime as _dt
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import jsonschema

from core import __version__
from core.atomic import atomic_write_text
from core.errors import InputError, SessionError
from core.workload import (FpspFilter, Scamp5Target, Target, Workload, target_from_json,
                           workload_from_json)

FORMAT = "dataflow-explorer-session"
VERSION = 1
SUFFIX = ".dfx"

# MIGRATIONS[n] turns a version-n document into a version-(n+1) document.
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {}

_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["format", "version", "workload", "target", "engines"],
    "properties": {
        "format": {"const": FORMAT},
        "version": {"type": "integer"},
        "app_version": {"type": "string"},
        "saved_at": {"type": "string"},
        "workload": {"type": "object", "required": ["kind"]},
        "target": {"type": "object", "required": ["kind"]},
        "current_engine": {"type": ["string", "null"]},
        "engines": {
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "required": ["settings"],
                "properties": {
                    "settings": {"type": "object"},
                    "result": {"type": ["object", "null"]},
                    "finished_at": {"type": ["string", "null"]},
                },
                "additionalProperties": False,
            },
        },
    },
    "additionalProperties": False,
}


@dataclass
class EngineState:
    settings: dict[str, Any]
    result: dict[str, Any] | None = None
    finished_at: str | None = None


@dataclass
class Session:
    workload: Workload = field(default_factory=lambda: FpspFilter("analognet2"))
    target: Target = field(default_factory=Scamp5Target)
    engines: dict[str, EngineState] = field(default_factory=dict)
    current_engine: str | None = None


def to_json(session: Session) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "version": VERSION,
        "app_version": __version__,
        "saved_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "workload": session.workload.to_json(),
        "target": session.target.to_json(),
        "current_engine": session.current_engine,
        "engines": {name: {"settings": st.settings, "result": st.result, "finished_at": st.finished_at}
                    for name, st in session.engines.items()},
    }


def _json_path(error: jsonschema.ValidationError) -> str:
    path = "session"
    for part in error.absolute_path:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path


def _migrate(doc: dict[str, Any]) -> dict[str, Any]:
    version = doc.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise SessionError(f"expected an integer version, got {version!r}", "session.version")
    if version > VERSION:
        raise SessionError(f"written by a newer Dataflow Explorer (format version {version}; this one "
                           f"reads up to {VERSION})", "session.version")
    if version < 1:
        raise SessionError(f"unknown format version {version}", "session.version")
    while doc["version"] < VERSION:
        doc = MIGRATIONS[doc["version"]](doc)
    return doc


def from_json(doc: Any) -> Session:
    """Check a decoded document and build the Session; raises SessionError naming the field."""
    from core.engine import engines

    if not isinstance(doc, dict):
        raise SessionError(f"a session is a JSON object, got {type(doc).__name__}", "session")
    if doc.get("format") != FORMAT:
        raise SessionError(f"not a Dataflow Explorer session (format is {doc.get('format')!r}, "
                           f"expected {FORMAT!r})", "session.format")
    doc = _migrate(dict(doc))
    errors = sorted(jsonschema.Draft202012Validator(_SCHEMA).iter_errors(doc), key=lambda e: list(e.absolute_path))
    if errors:
        raise SessionError(errors[0].message[:300], _json_path(errors[0]))
    try:
        workload = workload_from_json(doc["workload"], "session.workload")
        target = target_from_json(doc["target"], "session.target")
    except SessionError:
        raise
    except InputError as exc:
        raise SessionError(exc.message, exc.where) from None
    known = engines()
    states: dict[str, EngineState] = {}
    for name, st in doc["engines"].items():
        where = f"session.engines.{name}"
        if name not in known:
            raise SessionError(f"unknown engine {name!r}; known: {', '.join(known)}", where)
        schema_errors = list(jsonschema.Draft202012Validator(known[name].settings_schema).iter_errors(st["settings"]))
        if schema_errors:
            err = schema_errors[0]
            sub = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err.absolute_path)
            raise SessionError(err.message[:300], f"{where}.settings{sub}")
        states[name] = EngineState(dict(st["settings"]), st.get("result"), st.get("finished_at"))
    current = doc.get("current_engine")
    if current is not None and current not in known:
        raise SessionError(f"unknown engine {current!r}", "session.current_engine")
    return Session(workload=workload, target=target, engines=states, current_engine=current)


def load(path: str | Path) -> Session:
    """Read and validate a session file; raises SessionError (where = file or field path)."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise SessionError(f"cannot read the file: {exc.strerror or exc}", str(path)) from None
    try:
        doc = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise SessionError("not a text (UTF-8) file", str(path)) from None
    except json.JSONDecodeError as exc:
        hint = " (the file looks truncated)" if exc.pos >= len(raw.rstrip()) else ""
        raise SessionError(f"not valid JSON: {exc.msg}{hint}", f"{path}:{exc.lineno}:{exc.colno}") from None
    return from_json(doc)


def save(session: Session, path: str | Path) -> None:
    """Write atomically; the previous file, if any, is kept as `<name>.bak`."""
    text = json.dumps(to_json(session), indent=1, allow_nan=False)
    atomic_write_text(Path(path), text + "\n", keep_backup=True)
