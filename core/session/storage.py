"""Session files (.dfx): a session document as bytes on disk (compact JSON, gzip-compressed), written
atomically and read back, with the file versions that keep two windows from losing each other's save.

Writing is atomic and keeps the previous file as `.bak`. No version is lost when two windows or
processes save the same file: a save may name the version it read (`expected`, the digest
`load_stamped` gave), and is refused with SessionChanged when the file on disk is no longer that
version; the check, the backup and the replacement happen under one lock (core.atomic), so the
`.bak` is always the version that was on disk just before.
"""

from __future__ import annotations

import gzip
import hashlib
import threading
import json
import zlib
from pathlib import Path
from typing import Any

from core.atomic import atomic_write_bytes
from core.checks import decode_text, loads, paused_gc, plain_loads
from core.errors import InputError, SessionError
from core.files import SESSION_LIMIT, read_bytes
from core.project import Project
from core.session.document import from_json, to_json

GZIP_MAGIC = b"\x1f\x8b"
GZIP_LEVEL = 6
MAX_UNCOMPRESSED = 1 << 30        # a compressed file that would unpack to more is refused, not read
SUFFIX = ".dfx"


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
    return decode_plain(raw, where)[0]


def decode_plain(raw: bytes, where: str, version: str | None = None) -> tuple[Any, bool]:
    """decode, and whether check_numbers is known to have nothing to say of the document: orjson
    read it (core.checks.plain_loads) and it is plain, so the loader skips its number phase. Any
    doubt, and every error, goes to json (loads), whose messages and values are the reference.
    `version`: the bytes' stamp, when the caller has it already."""
    text = decode_raw(raw, where)
    version = stamp(raw) if version is None else version
    doc = plain_loads(text, trusted=version in _PLAIN)
    if doc is None:
        return loads(text, where), False     # UTF-8, nesting checked before decoding
    _remember(_PLAIN, version)
    return doc, True


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
    raw = Path(path).read_bytes()
    with paused_gc():
        return decode(raw, str(path))


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


# The digests of session files this process read without an error, newest last: the same bytes pass
# the number and schema phases again, so a session opened again (the example session, a file reopened
# in the window) skips them (document.from_json's `checked`). A few dozen digests.
_PASSED: dict[str, None] = {}
_PASSED_KEPT = 64
_PASSED_LOCK = threading.Lock()
# ... and of session files whose orjson reading was found plain (decode_plain): the same bytes read
# the same, so the scan that showed it is not run again.
_PLAIN: dict[str, None] = {}


def _remember(memo: dict[str, None], version: str | None) -> None:
    with _PASSED_LOCK:
        memo[str(version)] = None
        while len(memo) > _PASSED_KEPT:
            del memo[next(iter(memo))]


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
    version = stamp(raw)
    try:
        with paused_gc():
            doc, plain = decode_plain(raw, str(path), version)
            project = from_json(doc, owned=True, checked=version in _PASSED, plain=plain)
    except SessionError:
        raise
    except InputError as exc:
        raise SessionError(exc.message, exc.where) from None
    except RecursionError:          # not reached past the checks above; a bad file must never escape as one
        raise SessionError("nested too deeply to read", str(path)) from None
    _remember(_PASSED, version)
    return project, version
