"""The session format's declaration: its name and the JSON schema of the current version's document
(docs/project-model.md describes each field), and the messages its checks give (the field's path).
"""

from __future__ import annotations

from typing import Any

from core.checks import schema_errors
from core.errors import SessionError
from core.project import RUN_STATUSES

FORMAT = "dataflow-explorer-session"

_ENTRY = {"type": "object", "required": ["id", "name", "value"], "additionalProperties": False,
          "properties": {"id": {"type": "string", "minLength": 1}, "name": {"type": "string"},
                         "value": {"type": "object", "required": ["kind"]}, "auto_name": {"type": "boolean"}}}
_SNAPSHOT = {"type": ["object", "null"], "required": ["id", "name", "value"],
             "properties": {"id": {"type": "string"}, "name": {"type": "string"}, "value": {"type": "object"}}}
_POINTS = {"type": "array", "items": {"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 2}}

_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["format", "version", "library", "engines", "runs"],
    "additionalProperties": False,
    "properties": {
        "format": {"const": FORMAT},
        "version": {"type": "integer"},
        "app_version": {"type": "string"},
        "saved_at": {"type": "string"},
        "library": {"type": "object", "required": ["workloads", "targets"], "additionalProperties": False,
                    "properties": {"workloads": {"type": "array", "items": _ENTRY},
                                   "targets": {"type": "array", "items": _ENTRY}}},
        "engines": {"type": "object", "additionalProperties": {
            "type": "object", "required": ["settings"], "additionalProperties": False,
            "properties": {"settings": {"type": "object"}, "workload": {"type": ["string", "null"]},
                           "target": {"type": ["string", "null"]}}}},
        "runs": {"type": "array", "items": {
            "type": "object", "additionalProperties": False,
            "required": ["id", "engine", "status", "settings", "started_at"],
            "properties": {
                "id": {"type": "string", "minLength": 1}, "engine": {"type": "string"},
                "status": {"enum": list(RUN_STATUSES)}, "settings": {"type": "object"},
                "workload": _SNAPSHOT, "target": _SNAPSHOT,
                "started_at": {"type": "string"}, "finished_at": {"type": ["string", "null"]},
                "duration_s": {"type": ["number", "null"], "minimum": 0},
                "result": {"type": ["object", "null"]}, "result_version": {"type": ["integer", "null"]},
                "partial": {"type": "object", "additionalProperties": {"type": "object"}},
                "series": {"type": "object", "additionalProperties": {
                    "type": "object", "additionalProperties": _POINTS}},
                "error": {"type": ["string", "null"]},
                "headline": {"type": "object"}, "note": {"type": "string"},
                # the run of runs it is a part of (a comparison's id; optional, none when absent)
                "parent": {"type": "string", "minLength": 1},
            }}},
        # where each run's text lies (encode_text): a hint for check_file, ignored by readers
        "index": {"type": "object"},
        # view state: the current tab, the run each engine's tab shows, and the runs of an open
        # Compare tab (optional: sessions without it open with no Compare tab)
        "view": {"type": "object", "properties": {"current_engine": {"type": ["string", "null"]},
                                                  "shown": {"type": "object",
                                                            "additionalProperties": {"type": ["string", "null"]}},
                                                  "compare": {"type": "object", "required": ["runs"],
                                                              "properties": {"runs": {"type": "array",
                                                                                      "items": {"type": "string"}},
                                                                             "on_show": {"type": "boolean"}}}}},
    },
}


def _json_path(parts: Any, root: str = "session") -> str:
    path = root
    for part in parts:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path


def _schema_check(schema: dict[str, Any], doc: Any, root: str) -> None:
    errors = schema_errors(schema, doc)
    if errors:
        raise SessionError(errors[0].message[:300], _json_path(errors[0].absolute_path, root))
