"""Session files (.dfx): a whole project (library, engine choices and settings, every run) as JSON, gzip-compressed.

Reading checks the structure (JSON schema), then the meaning (workload and target readers, each
engine's settings schema, each stored result against its engine's result type), and builds a complete
Project before anything else sees it: a bad file is refused with the path of the wrong field and the
caller's open project is never touched. Writing is atomic and keeps the previous file as `.bak`.
Older format versions are brought forward by MIGRATIONS; docs/project-model.md describes the current version.

No version is lost when two windows or processes save the same file: a save may name the version
it read (`expected`, the digest `load_stamped` gave), and is refused with SessionChanged when the
file on disk is no longer that version; the check, the backup and the replacement happen under one
lock (core.atomic), so the `.bak` is always the version that was on disk just before.
"""

from __future__ import annotations

import copy
import datetime as _dt
import hashlib
import gzip
import json
import multiprocessing
import os
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from core import __version__
from core.atomic import atomic_write_bytes
from core.checks import INT_LIMIT, check_name, check_numbers, check_settings, decode_text, loads, plain_numbers, schema_errors
from core.errors import InputError, SessionError
from core.files import SESSION_LIMIT, read_bytes
from core.metrics import is_metric_value
from core.project import (RUN_STATUSES, EngineChoice, Entry, Project, Run, is_generated_name, starter_targets,
                          starter_workloads)
from core.workload import target_from_json, workload_from_json

try:            # optional: a faster JSON decoder for `session validate`'s workers (requirements-runtime.txt)
    import orjson
except ImportError:                     # pragma: no cover - the stdlib decoder does the same work
    orjson = None  # type: ignore[assignment]

FORMAT = "dataflow-explorer-session"
GZIP_MAGIC = b"\x1f\x8b"
GZIP_LEVEL = 6
MAX_UNCOMPRESSED = 1 << 30        # a compressed file that would unpack to more is refused, not read
VERSION = 5
SUFFIX = ".dfx"

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


# ================================================================ writing
def to_json(project: Project) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "version": VERSION,
        "app_version": __version__,
        "saved_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "library": {lib: [{**e.snapshot(), "auto_name": e.auto_name} for e in project.entries(lib)]
                    for lib in ("workloads", "targets")},
        "engines": {name: {"settings": c.settings, "workload": c.workload, "target": c.target}
                    for name, c in project.engines.items()},
        "runs": [_run_json(r) for r in project.runs if r.status != "running"],
        "view": dict(project.view),
    }


def _run_json(r: Run) -> dict[str, Any]:
    return {"id": r.id, "engine": r.engine, "status": r.status, "settings": r.settings, "workload": r.workload,
            "target": r.target, "started_at": r.started_at, "finished_at": r.finished_at,
            "duration_s": r.duration_s, "result": None if r.result is None else r.result.to_json(),
            "result_version": None if r.result is None else type(r.result).VERSION,
            "partial": r.partial, "series": r.series, "error": r.error, "headline": r.headline, "note": r.note,
            **({"parent": r.parent} if r.parent else {})}


class SessionChanged(SessionError):
    """The file on disk is not the version the caller read: saving would lose the other version."""


# `expected` of save(): compare nothing (a first save, or the user chose to overwrite)
UNCHECKED: Any = object()


def stamp(data: bytes | None) -> str | None:
    """A version of a file, as the digest of its bytes (None: no file)."""
    return None if data is None else hashlib.sha256(data).hexdigest()


def file_stamp(path: str | Path) -> str | None:
    """The version of the file at `path` now (None: there is none)."""
    try:
        return stamp(Path(path).read_bytes())
    except FileNotFoundError:
        return None


def encode(doc: dict[str, Any]) -> bytes:
    """A session document as the bytes of a .dfx file: compact JSON (the C encoder; an indented
    dump takes the pure-Python one, 6x slower), gzip-compressed. Results are mostly float digits and
    repeated keys: an f-CNNx run of 2.1 MB as indented JSON is under 0.2 MB so, without a number
    changed. mtime 0: the same session gives the same bytes (file stamps compare them)."""
    return gzip.compress(encode_text(doc).encode("ascii"), compresslevel=GZIP_LEVEL, mtime=0)


def encode_text(doc: dict[str, Any]) -> str:
    """The compact JSON text of a session document, with its run index as the last key:
    `"index":{"runs":[[start,end],...]}`, where each run's object starts and ends in this text
    (character offsets; the text is ASCII, so byte offsets too). `session validate` uses it to check
    runs in parallel (check_file); readers ignore it. Each part is dumped on its own, exactly as one
    json.dumps of the whole would write it, so the offsets are known without searching."""
    def dump(value: Any) -> str:
        return json.dumps(value, separators=(",", ":"), allow_nan=False)

    parts: list[str] = []
    pos = 1                                     # after "{"
    spans: list[list[int]] = []
    for key, value in doc.items():
        if key == "index":
            continue
        head = ("," if parts else "") + dump(key) + ":"
        if key == "runs" and isinstance(value, list):
            texts = [dump(r) for r in value]
            at = pos + len(head) + 1            # after "["
            for t in texts:
                spans.append([at, at + len(t)])
                at += len(t) + 1
            body = "[" + ",".join(texts) + "]"
        else:
            body = dump(value)
        parts.append(head + body)
        pos += len(head) + len(body)
    parts.append(("," if parts else "") + '"index":' + dump({"runs": spans}))
    return "{" + "".join(parts) + "}"


def decode(raw: bytes, where: str) -> Any:
    """The document in a .dfx file's bytes: gzip-compressed JSON, or plain JSON text (sessions saved
    before compression, hand-written ones); checked as core.checks reads any JSON."""
    return loads(decode_raw(raw, where), where)   # UTF-8, nesting checked before decoding


def decode_raw(raw: bytes, where: str) -> str:
    """The JSON text in a .dfx file's bytes (uncompressed, UTF-8 checked), not yet decoded."""
    if raw[:2] == GZIP_MAGIC:
        try:
            d = zlib.decompressobj(wbits=31)            # gzip framing
            raw = d.decompress(raw, MAX_UNCOMPRESSED)
        except zlib.error as exc:
            raise SessionError(f"the compressed session cannot be read ({exc})", where) from None
        if d.unconsumed_tail:
            raise SessionError(f"the session is larger than {MAX_UNCOMPRESSED >> 20} MB uncompressed", where)
        if not d.eof:
            raise SessionError("the compressed session is truncated", where)
    return decode_text(raw, where)


def read_document(path: str | Path) -> Any:
    """A session file's JSON document, uncompressed and decoded but not checked (tools and tests)."""
    return decode(Path(path).read_bytes(), str(path))


def save(project: Project, path: str | Path, expected: str | None = UNCHECKED) -> str | None:
    """Write atomically; the version on disk just before, if any, is kept as `<name>.bak`. With
    `expected` (a stamp, None for "no file yet"), refuse with SessionChanged when the file on disk is
    another version, so a save never silently replaces one this caller has not seen. Raises
    ValueError for values JSON cannot hold (NaN), before anything is written. Returns the stamp of
    what was written (the `expected` of the next save)."""
    data = encode(to_json(project))

    def unchanged(current: bytes | None) -> None:
        if expected is not UNCHECKED and stamp(current) != expected:
            what = "was deleted" if current is None else "was created" if expected is None else "was changed"
            raise SessionChanged(f"the file {what} on disk since this session read it (by another window or "
                                 f"program); not saved, so that version is not lost", str(path))

    atomic_write_bytes(Path(path), data, keep_backup=True, check=unchanged)
    return stamp(data)


# ================================================================ reading
def _json_path(parts: Any, root: str = "session") -> str:
    path = root
    for part in parts:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path


def _schema_check(schema: dict[str, Any], doc: Any, root: str) -> None:
    errors = schema_errors(schema, doc)
    if errors:
        raise SessionError(errors[0].message[:300], _json_path(errors[0].absolute_path, root))


def _check_version(doc: dict[str, Any]) -> None:
    """The format version first of all: a newer version's file may hold anything (fields, kinds,
    values) this one cannot read, and saying so is the only useful message."""
    version = doc.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        shown = repr(version) if len(repr(version)) <= 40 else type(version).__name__
        raise SessionError(f"expected an integer version, got {shown}", "session.version")
    if not -INT_LIMIT <= version < INT_LIMIT or version > VERSION:
        shown = str(version) if len(str(version)) <= 24 else "a larger number"
        raise SessionError(f"written by a newer version of Dataflow Explorer (format version {shown}; this one "
                           f"reads up to {VERSION}): open it there, or update", "session.version")
    if version < 1:
        raise SessionError(f"unknown format version {version}", "session.version")


def _migrate(doc: dict[str, Any]) -> dict[str, Any]:
    _check_version(doc)
    while doc["version"] < VERSION:
        doc = MIGRATIONS[doc["version"]](doc)
    return doc


def from_json(doc: Any, owned: bool = False) -> Project:
    """Check a decoded document and build the whole Project; raises SessionError naming the field.
    `owned`: the caller hands the document over (it was just decoded), so it is migrated in place
    instead of copied first (a copy of a large session is a third of its reading time).
    The checks run in phases (format, numbers, schema, meaning); check_file's parallel path keeps
    the same phases and order, so both say the same first error."""
    from core.engine import engines

    _check_start(doc)
    try:     # every number finite and a machine integer, nesting bounded (also makes deepcopy safe)
        check_numbers(doc, "session")
    except InputError as exc:
        raise SessionError(exc.message, exc.where) from None
    doc = _migrate(doc if owned else copy.deepcopy(doc))
    _schema_check(_SCHEMA, doc, "session")
    known = engines()
    p = Project()
    try:
        _read_library_engines(doc, p, known)
        seen_runs: set[str] = set()
        for i, r in enumerate(doc["runs"]):
            where = f"session.runs[{i}]"
            if r["id"] in seen_runs:
                raise SessionError(f"a second run has id {r['id']!r}", f"{where}.id")
            seen_runs.add(r["id"])
            p.runs.append(_run_from_json(r, where, known))
    except SessionError:
        raise
    except InputError as exc:
        raise SessionError(exc.message, exc.where) from None
    _read_view(doc, p, known)
    return p


def _check_start(doc: Any) -> None:
    if not isinstance(doc, dict):
        raise SessionError(f"a session is a JSON object, got {type(doc).__name__}", "session")
    if doc.get("format") != FORMAT:
        raise SessionError(f"not a Dataflow Explorer session (format is {doc.get('format')!r}, "
                           f"expected {FORMAT!r})", "session.format")
    _check_version(doc)


def _read_library_engines(doc: dict[str, Any], p: Project, known: dict[str, Any]) -> None:
    for lib, reader in (("workloads", workload_from_json), ("targets", target_from_json)):
        seen: set[str] = set()
        for i, item in enumerate(doc["library"][lib]):
            where = f"session.library.{lib}[{i}]"
            if item["id"] in seen:
                raise SessionError(f"a second item has id {item['id']!r}", f"{where}.id")
            seen.add(item["id"])
            check_name(item["id"], f"{where}.id")
            check_name(item["name"], f"{where}.name")
            value = reader(item["value"], f"{where}.value")
            auto = item.get("auto_name", is_generated_name(lib, item["name"], value))   # older files: by the name
            p.entries(lib).append(Entry(item["id"], item["name"], value, auto))
    for name, st in doc["engines"].items():
        where = f"session.engines.{name}"
        if name not in known:
            raise SessionError(f"unknown engine {name!r}; known: {', '.join(known)}", where)
        _settings_check(known[name].settings_schema, st["settings"], f"{where}.settings")
        for lib, key in (("workloads", "workload"), ("targets", "target")):
            ref = st.get(key)
            if ref is not None and p.entry(lib, ref) is None:
                raise SessionError(f"no {key} with id {ref!r} in the library", f"{where}.{key}")
        p.engines[name] = EngineChoice(dict(st["settings"]), st.get("workload"), st.get("target"))


def _read_view(doc: dict[str, Any], p: Project, known: dict[str, Any]) -> None:
    current = (doc.get("view") or {}).get("current_engine")
    if current is not None and current not in known:
        raise SessionError(f"unknown engine {current!r}", "session.view.current_engine")
    p.view = {**doc.get("view", {}), "current_engine": current}
    if "compare" in p.view:         # the compared runs the file still holds (a deleted one drops out)
        held = {r.id for r in p.runs}
        p.view["compare"] = {**p.view["compare"], "runs": [i for i in p.view["compare"]["runs"] if i in held]}
    for name in known:
        p.choice(name)              # engines the file does not mention start on their defaults


def _settings_check(schema: dict[str, Any], settings: Any, where: str) -> None:
    try:        # the engine's own settings check (core.checks): what the GUI and command line run
        check_settings(schema, settings, where)
    except InputError as exc:
        raise SessionError(exc.message, exc.where) from None


def _run_from_json(r: dict[str, Any], where: str, known: dict[str, Any]) -> Run:
    """One run of a migrated document (always the reader's own: decoded, or copied by from_json)."""
    if r["engine"] not in known:
        raise SessionError(f"unknown engine {r['engine']!r}; known: {', '.join(known)}", f"{where}.engine")
    spec = known[r["engine"]]
    check_name(r["id"], f"{where}.id")
    for key in ("workload", "target"):
        if isinstance(r.get(key), dict):
            check_name(r[key]["name"], f"{where}.{key}.name")
    _settings_check(spec.settings_schema, r["settings"], f"{where}.settings")
    for key, reader, kinds in (("workload", workload_from_json, spec.workload_kinds),
                               ("target", target_from_json, spec.target_kinds)):
        if r.get(key) is not None:
            value = reader(r[key]["value"], f"{where}.{key}.value")
            if value.kind not in kinds:         # a snapshot the engine could never have run on
                raise SessionError(f"a {spec.name} run's {key} is of kind {value.kind!r}; the engine reads "
                                   f"{' or '.join(repr(k) for k in kinds) or f'no {key}'}",
                                   f"{where}.{key}.value.kind")
    data, headline = r.get("result"), r.get("headline") or {}
    if r["status"] == "finished" and data is None:
        raise SessionError("a finished run has no result", f"{where}.result")
    result = None if data is None else spec.result_type.from_json(data, r.get("result_version"), f"{where}.result",
                                                                   owned=True)
    if result is not None:
        headline = dict(result.headline())
    for key, value in headline.items():      # kept from the file when there is no result to recompute it
        if not is_metric_value(value):
            raise SessionError(f"expected a number, yes/no, a text, a list of numbers or null, got {type(value).__name__}",
                               f"{where}.headline.{key}")
    return Run(id=r["id"], engine=r["engine"], settings=dict(r["settings"]), workload=r.get("workload"),
               target=r.get("target"), status=r["status"], started_at=r["started_at"],
               finished_at=r.get("finished_at"), duration_s=r.get("duration_s"), result=result,
               partial=dict(r.get("partial") or {}), series=dict(r.get("series") or {}),
               error=r.get("error"), headline=headline, note=r.get("note", ""), parent=r.get("parent"))


def load(path: str | Path) -> Project:
    """Read and validate a session file; raises SessionError (where = file or field path)."""
    return load_stamped(path)[0]


def load_stamped(path: str | Path) -> tuple[Project, str | None]:
    """load, and the version read (file_stamp), for a later save(..., expected=) to compare with."""
    path = Path(path)
    try:        # a regular file only (a FIFO or /dev/zero is refused at once), of bounded size
        raw = read_bytes(path, "session file", SESSION_LIMIT)
    except InputError as exc:
        raise SessionError(exc.message, exc.where) from None
    try:
        return from_json(decode(raw, str(path)), owned=True), stamp(raw)
    except SessionError:
        raise
    except InputError as exc:
        raise SessionError(exc.message, exc.where) from None
    except RecursionError:          # not reached past the checks above; a bad file must never escape as one
        raise SessionError("nested too deeply to read", str(path)) from None


# ================================================================ checking a file (session validate)
@dataclass(frozen=True)
class Summary:
    """What `session validate` reports of a valid file."""

    workloads: int
    targets: int
    runs: dict[str, int]            # runs by status, in the file's order of first appearance
    engines: list[str]


def check_file(path: str | Path, workers: int | None = None) -> Summary:
    """Check a session file as load does, without building its runs for a window: the same
    SessionError, word for word. A file with a sound run index (encode_text) has its runs checked
    in `workers` forked processes (default: one per CPU, at most one per run, for a text of at least
    PARALLEL_MIN_CHARS), each decoding its share of the text it inherits; any doubt about the index,
    or no fork, checks sequentially."""
    path = Path(path)
    where = str(path)
    try:
        raw = read_bytes(path, "session file", SESSION_LIMIT)
        text = decode_raw(raw, where)
    except SessionError:
        raise
    except InputError as exc:
        raise SessionError(exc.message, exc.where) from None
    n = workers if workers is not None else (os.cpu_count() or 1) if len(text) >= PARALLEL_MIN_CHARS else 1
    split = _split_runs(text) if n > 1 and "fork" in multiprocessing.get_all_start_methods() else None
    if split is not None:
        summary = _check_parallel(text, *split, n)
        if summary is not None:
            return summary
    try:
        p = from_json(loads(text, where), owned=True)
    except SessionError:
        raise
    except InputError as exc:
        raise SessionError(exc.message, exc.where) from None
    except RecursionError:
        raise SessionError("nested too deeply to read", where) from None
    runs: dict[str, int] = {}
    for r in p.runs:
        runs[r.status] = runs.get(r.status, 0) + 1
    return Summary(len(p.workloads), len(p.targets), runs, sorted(p.engines))


def _split_runs(text: str) -> tuple[dict[str, Any], list[tuple[int, int]]] | None:
    """The document without its runs (their place an empty list) and where each run's text lies,
    when the index the writer put last is sound: its spans tile the top-level `"runs":[...]` exactly
    (the parts before and after decode as objects on their own, which a nested array could not), and
    the file is of the current version. None for any doubt: the caller checks sequentially."""
    tail = text.rstrip()
    at = tail.rfind(',"index":')
    if at < 0 or not tail.endswith("}"):
        return None
    try:
        index = json.loads(tail[at + 9:-1])
    except (ValueError, RecursionError):
        return None
    raw_spans = index.get("runs") if type(index) is dict else None
    if type(raw_spans) is not list or not raw_spans:
        return None
    spans: list[tuple[int, int]] = []
    end = -1
    for sp in raw_spans:
        if type(sp) is not list or len(sp) != 2 or type(sp[0]) is not int or type(sp[1]) is not int:
            return None
        a, b = sp
        if not (10 <= a < b <= at) or text[a] != "{" or text[b - 1] != "}":
            return None
        if end < 0:
            if text[a - 8:a] != '"runs":[' or text[a - 9] not in "{,":
                return None
        elif a != end + 1 or text[end] != ",":
            return None
        spans.append((a, b))
        end = b
    if text[end] != "]":
        return None
    first = spans[0][0]
    before = "{}" if text[first - 9] == "{" else text[:first - 9] + "}"
    rest = text[end + 1:at]
    if rest and not rest.startswith(","):
        return None
    after = "{" + rest[1:] + "}"
    try:
        pre, post = json.loads(before), json.loads(after)
    except (ValueError, RecursionError):
        return None
    if type(pre) is not dict or type(post) is not dict or {"runs", "index"} & (pre.keys() | post.keys()) \
            or pre.keys() & post.keys() or pre.get("version") != VERSION or type(pre.get("version")) is not int:
        return None
    return {**pre, "runs": [], **post, "index": index}, spans


# Below this much JSON text, starting worker processes costs more than it saves.
PARALLEL_MIN_CHARS = 4_000_000

# The text and spans a forked worker reads (inherited, not pickled), and its first error by phase.
_SHARED: tuple[str, list[tuple[int, int]]] = ("", [])


def _check_share(lo: int, hi: int) -> dict[str, Any]:
    """Runs lo..hi-1 checked by from_json's phases in its order: numbers, schema, meaning. Returns
    the first error of the first phase that has one (index, message, field), or the runs' ids and
    status counts; "doubt" when a slice is not one JSON object or anything unforeseen happens."""
    from core.engine import engines

    text, spans = _SHARED
    try:
        runs = []
        for i in range(lo, hi):
            part = text[spans[i][0]:spans[i][1]]
            r = _fast_loads(part)
            if r is None or not plain_numbers(r, 2):    # the number check, orjson's floats included
                r = json.loads(part)
                if type(r) is not dict:
                    return {"doubt": True}
                try:
                    check_numbers(r, "session", ("runs", i))
                except InputError as exc:
                    return {"numbers": (i, exc.message, exc.where)}
            elif type(r) is not dict:
                return {"doubt": True}
            runs.append(r)
        item_schema = _SCHEMA["properties"]["runs"]["items"]
        worst: tuple[list[str], str, str] | None = None
        for i, r in enumerate(runs, lo):
            errors = schema_errors(item_schema, r)
            if errors:
                parts = ["runs", i, *errors[0].absolute_path]
                found = ([str(x) for x in parts], errors[0].message[:300], _json_path(parts, "session"))
                if worst is None or found[0] < worst[0]:
                    worst = found
        if worst is not None:
            return {"schema": worst}
        known = engines()
        statuses: dict[str, int] = {}
        for i, r in enumerate(runs, lo):
            try:
                run = _run_from_json(r, f"session.runs[{i}]", known)
            except InputError as exc:
                return {"ids": [x["id"] for x in runs], "meaning": (i, exc.message, exc.where)}
            statuses[run.status] = statuses.get(run.status, 0) + 1
        return {"ids": [x["id"] for x in runs], "statuses": statuses}
    except Exception:               # the sequential path will meet it again and behave as load does
        return {"doubt": True}


def _fast_loads(part: str) -> Any:
    """orjson's reading of one run's text (about twice as fast as json on these float-heavy runs),
    None where it refuses what json reads (NaN, Infinity, 1e400, integers of over 20 digits: json
    reads them for check_numbers to name) or is not installed. orjson reads an integer too large for
    64 bits as a float: the caller's plain_numbers sends any float that large back to json."""
    if orjson is None:
        return None
    try:
        return orjson.loads(part)
    except orjson.JSONDecodeError:
        return None


def _shares(spans: list[tuple[int, int]], n: int) -> list[tuple[int, int]]:
    """Runs cut into n contiguous shares of about equal text."""
    total = spans[-1][1] - spans[0][0]
    out, lo = [], 0
    for k in range(1, n + 1):
        hi = lo
        goal = spans[0][0] + total * k / n
        while hi < len(spans) and (spans[hi][1] <= goal or hi == lo or k == n):
            hi += 1
        if hi > lo:
            out.append((lo, hi))
        lo = hi
    return out


def _check_parallel(text: str, head: dict[str, Any], spans: list[tuple[int, int]], n: int) -> Summary | None:
    """from_json's checks with the runs' share done by forked workers, their errors merged in the
    order the sequential path meets them; None when a worker doubts (the caller checks sequentially)."""
    from core.engine import engines

    global _SHARED
    _check_start(head)              # format and version come before anything the workers could say
    known = engines()               # imported and registered before the fork: workers inherit them
    _SHARED = (text, spans)
    try:
        with multiprocessing.get_context("fork").Pool(min(n, len(spans))) as pool:
            results = pool.starmap(_check_share, _shares(spans, min(n, len(spans))))
    except Exception:           # no worker could start or finish (memory, limits): check sequentially
        return None
    finally:
        _SHARED = ("", [])
    if any(r.get("doubt") for r in results):
        return None
    for key, value in head.items():         # numbers: in the document's order, the runs in place
        if key == "runs":
            first = min((r["numbers"] for r in results if "numbers" in r), default=None)
            if first is not None:
                raise SessionError(first[1], first[2])
            continue
        try:
            check_numbers({key: value}, "session")
        except InputError as exc:
            raise SessionError(exc.message, exc.where) from None
    _check_version(head)            # as _migrate does: the current version (_split_runs made sure)
    found = [([str(x) for x in e.absolute_path], e.message[:300], _json_path(e.absolute_path, "session"))
             for e in schema_errors(_SCHEMA, head)[:1]]
    found += [r["schema"] for r in results if "schema" in r]
    if found:
        first_schema = min(found, key=lambda f: f[0])
        raise SessionError(first_schema[1], first_schema[2])
    p = Project()
    try:
        _read_library_engines(head, p, known)
    except SessionError:
        raise
    except InputError as exc:
        raise SessionError(exc.message, exc.where) from None
    ids = [i for r in results for i in r["ids"]]
    seen: set[str] = set()
    dup = None
    for i, x in enumerate(ids):
        if x in seen:
            dup = i
            break
        seen.add(x)
    meaning = min((r["meaning"] for r in results if "meaning" in r), default=None)
    if dup is not None and (meaning is None or dup <= meaning[0]):
        raise SessionError(f"a second run has id {ids[dup]!r}", f"session.runs[{dup}].id")
    if meaning is not None:
        raise SessionError(meaning[1], meaning[2])
    _read_view(head, p, known)
    runs: dict[str, int] = {}
    for r in results:
        for status, count in r["statuses"].items():
            runs[status] = runs.get(status, 0) + count
    return Summary(len(p.workloads), len(p.targets), runs, sorted(p.engines))


# ================================================================ migrations
_V1_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["format", "version", "workload", "target", "engines"],
    "additionalProperties": False,
    "properties": {
        "format": {"const": FORMAT}, "version": {"const": 1}, "app_version": {"type": "string"},
        "saved_at": {"type": "string"},
        "workload": {"type": "object", "required": ["kind"]},
        "target": {"type": "object", "required": ["kind"]},
        "current_engine": {"type": ["string", "null"]},
        "engines": {"type": "object", "additionalProperties": {
            "type": "object", "required": ["settings"], "additionalProperties": False,
            "properties": {"settings": {"type": "object"}, "result": {"type": ["object", "null"]},
                           "finished_at": {"type": ["string", "null"]}}}},
    },
}


def _v1_item_name(value: dict[str, Any]) -> str:
    for name, item in [*starter_workloads(), *starter_targets()]:   # a starter's own name when it is one
        if item.to_json() in (value, _with_target_defaults(value)):
            return name
    kind = value.get("kind")
    if kind == "fpsp_filter":
        return str(value.get("preset", "filter"))
    if kind == "kernels":
        return str(value.get("name", "kernels"))
    if kind == "cnn_set":
        return " + ".join(map(str, value.get("cnns", []))) or "CNN set"
    if kind == "cnn":
        return str(value.get("onnx_path") or value.get("network", "CNN"))
    if kind == "merit_transform":
        return f"MERIT {(value.get('transform') or {}).get('name') or value.get('builtin', '')}".strip()
    try:
        from core.project import summary

        return summary(target_from_json(value))
    except InputError:                              # checked (and refused) after the migration
        return str(kind)


def migrate_v1(doc: dict[str, Any]) -> dict[str, Any]:
    """Format 1 held one workload, one target and the last result of each engine. Version 2 gets a
    library holding those (plus what engine settings implied, plus starter items for engines that
    would otherwise have nothing to run), a choice per engine, and each stored result as a run."""
    from core.engine import engines

    _schema_check(_V1_SCHEMA, doc, "session")
    known = engines()
    library: dict[str, list[dict[str, Any]]] = {"workloads": [], "targets": []}

    def add(lib: str, value: dict[str, Any], name: str | None = None) -> str:
        for item in library[lib]:
            if item["value"] == value:
                return str(item["id"])
        entry_id = f"{lib[0]}{len(library[lib]) + 1}"
        base = name or _v1_item_name(value)
        names = {i["name"] for i in library[lib]}
        label, n = base, 2
        while label in names:
            label, n = f"{base} ({n})", n + 1
        library[lib].append({"id": entry_id, "name": label, "value": value})
        return entry_id

    def kind_of(lib: str, entry_id: str | None) -> str | None:
        return next((i["value"]["kind"] for i in library[lib] if i["id"] == entry_id), None)

    w1 = add("workloads", doc["workload"])
    t1 = add("targets", doc["target"])
    out_engines: dict[str, Any] = {}
    runs: list[dict[str, Any]] = []
    for name, st in doc["engines"].items():
        spec = known.get(name)
        settings = dict(st["settings"])
        choice: dict[str, str | None] = {"workload": None, "target": None}
        implied: tuple[Any, Any] = (None, None)
        if spec is not None and spec.migrate_v1_settings is not None:
            try:
                settings, *implied_list = spec.migrate_v1_settings(settings)
                implied = (implied_list[0], implied_list[1])
            except InputError as exc:
                field = exc.where.removeprefix("settings.") if exc.where != "settings" else ""
                raise SessionError(exc.message, f"session.engines.{name}.settings"
                                                 + (f".{field}" if field else "")) from None
        for lib, key, first, extra, kinds in (
                ("workloads", "workload", w1, implied[0], spec.workload_kinds if spec else ()),
                ("targets", "target", t1, implied[1], spec.target_kinds if spec else ())):
            if extra is not None:
                choice[key] = add(lib, extra.to_json())
            elif kind_of(lib, first) in kinds:
                choice[key] = first
        out_engines[name] = {"settings": settings, **choice}
        if st.get("result") is not None:
            snap = {key: next(({"id": i["id"], "name": i["name"], "value": i["value"]} for i in library[lib]
                               if i["id"] == choice[key]), None)
                    for lib, key in (("workloads", "workload"), ("targets", "target"))}
            stamp = st.get("finished_at") or doc.get("saved_at") or ""
            runs.append({"id": f"r{len(runs) + 1}", "engine": name, "status": "finished", "settings": settings,
                         "workload": snap["workload"], "target": snap["target"], "started_at": stamp,
                         "finished_at": stamp, "duration_s": None, "result": st["result"], "result_version": 1,
                         "partial": {}, "series": {}, "error": None, "headline": {}, "note": "from a version-1 session"})
    for name, spec in known.items():           # engines the file did not know start on their defaults
        out_engines.setdefault(name, {"settings": spec.default_settings(), "workload": None, "target": None})
    # Engines left with no fitting workload or target get the starter item of their kind.
    for lib, key, starters in (("workloads", "workload", starter_workloads()), ("targets", "target", starter_targets())):
        for name, choice_doc in out_engines.items():
            spec = known.get(name)
            kinds = (spec.workload_kinds if key == "workload" else spec.target_kinds) if spec else ()
            if choice_doc[key] is None and kinds:
                found = next(((n, v) for n, v in starters if v.kind in kinds), None)
                if found is not None:
                    choice_doc[key] = add(lib, found[1].to_json(), found[0])
    return {"format": FORMAT, "version": 2, "app_version": doc.get("app_version", ""),
            "saved_at": doc.get("saved_at", ""), "library": library, "engines": out_engines, "runs": runs,
            "view": {"current_engine": doc.get("current_engine")}}


def migrate_v2(doc: dict[str, Any]) -> dict[str, Any]:
    """Format 2 let engine settings override target quantities (the bound's memory S and word size);
    version 3 keeps them only in the target. An engine choice whose override changes its target gets
    a new library target holding the values it ran with (the shared item is left as it was), and
    each run's target snapshot takes its own override. Shapes the schema check refuses later are
    left alone here."""
    from core.engine import engines

    known = engines()
    doc = dict(doc)
    library = doc.get("library") if isinstance(doc.get("library"), dict) else None
    targets = library.get("targets") if library is not None else None

    def add_target(value: dict[str, Any], name: str) -> str | None:
        if not isinstance(targets, list):
            return None
        for item in targets:
            if isinstance(item, dict) and item.get("value") == value:
                return str(item.get("id"))
        ids = {str(i.get("id")) for i in targets if isinstance(i, dict)}
        n = len(targets) + 1
        while f"t{n}" in ids:
            n += 1
        targets.append({"id": f"t{n}", "name": name, "value": value})
        return f"t{n}"

    for name, st in (doc.get("engines") or {}).items() if isinstance(doc.get("engines"), dict) else ():
        spec = known.get(name)
        if spec is None or spec.migrate_v2_setup is None or not isinstance(st, dict) \
                or not isinstance(st.get("settings"), dict):
            continue
        entry = next((i for i in targets or () if isinstance(i, dict) and i.get("id") == st.get("target")), None)
        old = entry.get("value") if entry is not None else None
        try:
            settings, new = spec.migrate_v2_setup(st["settings"], old if isinstance(old, dict) else None)
        except InputError as exc:
            raise SessionError(exc.message, f"session.engines.{name}.{exc.where}") from None
        st["settings"] = settings
        if new is not None and new != old:
            label = f"{entry.get('name')} ({spec.title} settings)" if entry is not None else \
                f"{spec.title} target"
            st["target"] = add_target(new, label)
    for i, r in enumerate(doc.get("runs") or () if isinstance(doc.get("runs"), list) else ()):
        spec = known.get(str(r.get("engine"))) if isinstance(r, dict) else None
        if spec is None or spec.migrate_v2_setup is None or not isinstance(r.get("settings"), dict):
            continue
        snap = r.get("target")
        value = snap.get("value") if isinstance(snap, dict) else None
        try:
            settings, new = spec.migrate_v2_setup(r["settings"], value if isinstance(value, dict) else None)
        except InputError as exc:
            raise SessionError(exc.message, f"session.runs[{i}].{exc.where}") from None
        r["settings"] = settings
        if new is not None and new != value:
            r["target"] = {**snap, "value": new} if isinstance(snap, dict) else \
                {"id": "", "name": f"{spec.title} target", "value": new}
    doc["version"] = 3
    return doc


def migrate_v3(doc: dict[str, Any]) -> dict[str, Any]:
    """Format 4 added the optional run index (encode_text) and nothing else: format-3 readers refuse
    the unknown key, so the version says it instead ("written by a newer version")."""
    return {**doc, "version": 4}


def _with_target_defaults(value: Any) -> Any:
    """A target's JSON with every field its kind's schema has and the JSON lacks set to its default
    (the kind's own reader checks the rest later; anything not a known schema target is left alone)."""
    if not isinstance(value, dict):
        return value
    from core.kinds import kind_of

    found = kind_of("targets", str(value.get("kind")))
    schema = getattr(found.cls, "SCHEMA", None) if found is not None else None
    if not isinstance(schema, dict):
        return value
    missing = {k: p["default"] for k, p in schema["properties"].items() if k not in value and "default" in p}
    return {**value, **missing}


def migrate_v4(doc: dict[str, Any]) -> dict[str, Any]:
    """Format 5 targets describe hardware (issue 50): the dataflow accelerator's clock, bandwidth and
    energies, SCAMP-5's instruction time, the mobile SoC's clock, bandwidth and caches. Every target
    of the library and every run's target snapshot gets the new fields at their defaults, written
    out, so the file says what the model of each old run's target assumes."""
    doc = dict(doc)
    library = doc.get("library")
    for item in (library.get("targets") if isinstance(library, dict) else None) or ():
        if isinstance(item, dict) and "value" in item:
            item["value"] = _with_target_defaults(item["value"])
    for r in doc.get("runs") or () if isinstance(doc.get("runs"), list) else ():
        snap = r.get("target") if isinstance(r, dict) else None
        if isinstance(snap, dict) and "value" in snap:
            snap["value"] = _with_target_defaults(snap["value"])
    doc["version"] = 5
    return doc


# MIGRATIONS[n] turns a version-n document into a version-(n+1) document.
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {1: migrate_v1, 2: migrate_v2, 3: migrate_v3,
                                                                     4: migrate_v4}
