"""A run's error in the window's words, without Qt.

An engine names the field a bad input concerns by its path (`settings.tile`, `validation`,
`target.cores`), which the command line shows as it is. A run recorded in a project is read in the
window, where those fields are labelled widgets: "Tile", the CNN editor's "Validation set", the
target's "Cores". The window shows the label, never a key or a command-line flag (issue 30).
"""

from __future__ import annotations

from typing import Any

from core.engine import engines
from core.lifecycle import RunError

# Fields of the workload editors (gui/editors/<kind>.py), by the names engines raise them under.
WORKLOAD_FIELDS: dict[str, str] = {
    "validation": "Validation set", "validation_path": "Validation set",
    "onnx": "ONNX file", "onnx_path": "ONNX file",
    "network": "Network", "batch": "Batch",
    "kernels": "Kernels", "denominator": "Denominator",
    "preset": "Filter", "builtin": "Transform", "transform": "Transform",
    "kind": "Workload",
}


def field_words(engine: str, where: str) -> str:
    """The label of the field an error path names ('settings.tile' -> 'Tile', 'validation' ->
    'the workload's Validation set'); the path itself when it names no known field (a file, a line)."""
    parts = [p for p in where.replace("[", ".[").split(".") if p and not p.startswith("[")]
    if not parts:
        return where
    head, last = parts[0], parts[-1]
    spec = engines().get(engine)
    props: dict[str, Any] = (spec.settings_schema.get("properties", {}) if spec else {})
    if head == "settings" and len(parts) > 1 and parts[1] in props:
        return _title(props[parts[1]], parts[1])
    if len(parts) == 1 and head in props:
        return _title(props[head], head)
    if head == "target" or head == "targets":
        return f"the target's {_target_title(last)}" if len(parts) > 1 else "Target"
    if head in ("workload", "workloads") and len(parts) > 1:
        return f"the workload's {WORKLOAD_FIELDS.get(last, last.replace('_', ' '))}"
    if head in ("workload", "workloads"):
        return "Workload"
    if len(parts) == 1 and head in WORKLOAD_FIELDS:
        return f"the workload's {WORKLOAD_FIELDS[head]}"
    return where


def error_words(engine: str, error: RunError) -> str:
    """The one line the window shows for a failed run: a bad input names its field by its label."""
    if error.kind == "input" and error.where:
        return f"{field_words(engine, error.where)}: {error.message}"
    return error.text


def _title(prop: dict[str, Any], key: str) -> str:
    return str(prop.get("title") or key.replace("_", " ")).rstrip(":")


def _target_title(key: str) -> str:
    from core.kinds import kinds

    for kind in kinds("targets").values():
        schema = getattr(kind.cls, "SCHEMA", None)
        prop = (schema or {}).get("properties", {}).get(key)
        if prop and prop.get("title"):
            return str(prop["title"])
    return key.replace("_", " ")
