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

from core.checks import check_numbers
from core.errors import InputError
from core.files import can_hold_files

FORMAT = "dataflow-explorer-study-results"


POINT_STATUSES = ("finished", "failed", "cancelled", "not run")
MAX_RESULTS_BYTES = 4 * 2 ** 30


def check_out_path(path: Path, flag: str = "--out") -> None:
    """Refuse, before anything runs, a results path that could not be written or would replace
    something that is not a results file: a folder (it would have been renamed to .bak), a device,
    or a place without write permission."""
    if path.exists() or path.is_symlink():
        if not path.is_file():
            raise InputError(f"{path} is not a regular file (a folder?); give a file name such as "
                             f"{path.name or 'study'}.results.jsonl", flag)
        if not os.access(path, os.W_OK):
            raise InputError(f"cannot write {path}: permission denied", flag)
    parent = path.parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise InputError(f"cannot create {path}: {parent} is not a folder", flag)
    if not os.access(parent, os.W_OK | os.X_OK):
        raise InputError(f"cannot write in {parent}: permission denied", flag)
    can_hold_files(parent, flag)        # /proc, /sys and read-only mounts pass the permission check


def read(path: Path, strict: bool = False) -> list[dict[str, Any]]:
    """Every complete record of a results file (none when it does not exist). A torn line (the one a
    dying process was writing) is skipped. With `strict` (what --resume reads) every other
    line must be a record this program wrote: a bad one is an InputError naming its line."""
    if path.exists() and not path.is_file():
        raise InputError(f"{path} is not a results file (not a regular file)", "--resume")
    try:
        if path.stat().st_size > MAX_RESULTS_BYTES:
            raise InputError(f"{path} is larger than {MAX_RESULTS_BYTES // 2 ** 30} GiB: not a results file", "--resume")
        raw = path.read_bytes()
    except FileNotFoundError:
        return []
    lines = raw.split(b"\n")
    out = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            # the line a dying process was writing: a prefix of one of our records (a resume then
            # goes on after it, so it may be anywhere), or anything at all at the very end
            if n == len(lines) or not strict or line.startswith(b'{"type":'):
                continue
            raise InputError(f"line {n} of {path} is not a JSON record: not a results file of a study "
                             f"(run without --resume to start afresh)", "--resume") from None
        if strict:
            problem = record_problem(rec)
            if problem:
                raise InputError(f"line {n} of {path}: {problem}", "--resume")
        if isinstance(rec, dict):
            out.append(rec)
    return out


def record_problem(rec: Any) -> str | None:
    """Why a decoded line is not a record of a results file; None when it is one."""
    if not isinstance(rec, dict):
        return f"expected a record (an object), got {type(rec).__name__}"
    kind = rec.get("type")
    if kind == "header":
        if rec.get("format", FORMAT) != FORMAT:
            return f"a header of another format ({str(rec.get('format'))[:40]!r})"
        return None
    if kind != "point":
        return f"unknown record type {str(kind)[:40]!r} (expected header or point)"
    for key, types, what in (("key", (str,), "text"), ("index", (int,), "an integer"),
                             ("params", (dict,), "an object"), ("status", (str,), "text")):
        value = rec.get(key)
        if not isinstance(value, types) or isinstance(value, bool):
            return f"field {key!r} must be {what}, got {str(value)[:40]!r}"
    if rec["status"] not in POINT_STATUSES:
        return f"field 'status' must be one of {', '.join(POINT_STATUSES)}, got {rec['status'][:40]!r}"
    for key in ("metrics", "request", "headline"):
        if rec.get(key) is not None and not isinstance(rec[key], dict):
            return f"field {key!r} must be an object, got {type(rec[key]).__name__}"
    try:
        check_numbers(rec, "record")
    except InputError as exc:
        return f"{exc.where}: {exc.message}"
    return None


def finished(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Point key -> its last finished record (failed points are run again on resume)."""
    return {r["key"]: r for r in records if r.get("type") == "point" and r.get("status") == "finished"
            and isinstance(r.get("key"), str)}


class ResultsWriter:
    """Appends records, each flushed to the OS as it is written (a killed process keeps them).

    Nothing touches the file until the first point record: a study that fails before any point
    ends (a cluster that cannot be reached, a worker without the project) leaves the previous
    results where they were, never moved to .bak behind a header-only file."""

    def __init__(self, path: Path, resume: bool) -> None:
        self.path, self.resume = path, resume
        self._held: list[dict[str, Any]] = []       # the header, written with the first point
        self._file: IO[str] | None = None

    def _open(self) -> IO[str]:
        path = self.path
        path.parent.mkdir(parents=True, exist_ok=True)
        if not self.resume and path.is_file() and path.stat().st_size:
            os.replace(path, path.with_name(path.name + ".bak"))     # a fresh start keeps the last results
        f = open(path, "a", encoding="utf-8")
        if self.resume and path.stat().st_size and not _ends_with_newline(path):
            f.write("\n")              # after a torn line, start a clean one
        return f

    def write(self, record: dict[str, Any]) -> None:
        if self._file is None:
            if record.get("type") != "point":
                self._held.append(record)
                return
            self._file = self._open()
        for rec in self._held + [record]:
            self._file.write(json.dumps(rec, separators=(",", ":")) + "\n")
        self._held = []
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
