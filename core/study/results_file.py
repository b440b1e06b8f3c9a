"""A study's results file: one JSON object per line, appended and flushed as each point ends.

Appending line by line means a study that is stopped, or whose process dies, loses at most the
points that were running; `--resume` reads the file back and skips the points already finished
there (a torn last line is ignored). Lines are either a header, written each time the study starts
or resumes, or a point record:

    {"type": "header", "study": "...", "engine": "bound", "started_at": "...", "cluster": "local:2", "points": 84}
    {"type": "point", "key": "3f0c...", "index": 5, "params": {"network": "vgg16", "memory_bytes": 65536},
     "repeat": 0, "status": "finished", "metrics": {...}, "error": null, "duration_s": 0.41, "attempts": 1,
     "worker": "host:1234", "finished_at": "...", "request": {...}, "headline": {...}, "result": {...}}
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import IO, Any

FORMAT = "dataflow-explorer-study-results"


def read(path: Path) -> list[dict[str, Any]]:
    """Every complete record of a results file (none when it does not exist)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    out = []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:        # the line a dying process was writing
            continue
        if isinstance(rec, dict):
            out.append(rec)
    return out


def finished(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Point key -> its last finished record (failed points are run again on resume)."""
    return {r["key"]: r for r in records if r.get("type") == "point" and r.get("status") == "finished"
            and isinstance(r.get("key"), str)}


class ResultsWriter:
    """Appends records, each flushed to the OS as it is written (a killed process keeps them)."""

    def __init__(self, path: Path, resume: bool) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        if not resume and path.exists() and path.stat().st_size:
            os.replace(path, path.with_name(path.name + ".bak"))     # a fresh start keeps the last results
        self._file: IO[str] | None = open(path, "a", encoding="utf-8")
        if resume and path.stat().st_size and not _ends_with_newline(path):
            self._file.write("\n")              # after a torn line, start a clean one

    def write(self, record: dict[str, Any]) -> None:
        if self._file is None:
            return
        self._file.write(json.dumps(record, separators=(",", ":")) + "\n")
        self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            try:
                os.fsync(self._file.fileno())
            except OSError:
                pass
            self._file.close()
            self._file = None


def _ends_with_newline(path: Path) -> bool:
    with open(path, "rb") as f:
        f.seek(-1, os.SEEK_END)
        return f.read(1) == b"\n"
