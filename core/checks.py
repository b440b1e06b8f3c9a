"""The checks every input edge shares: JSON text that is UTF-8, not nested without end, with finite
numbers that fit a machine word; and settings read against their JSON schema.

Session files, kernel files, transform files and engine settings all come through here, so a NaN, a
400-digit number or a file nested 100,000 levels deep gets the same refusal, naming the field,
wherever it is given (command line, GUI, a hand-edited file). Python's json module accepts all of
them (NaN, Infinity and 1e400 as floats, big integers exactly, deep nesting until RecursionError).
"""

from __future__ import annotations

import contextlib
import copy
import gc
import json
import math
from pathlib import Path
from typing import Any, Iterable, Iterator

import jsonschema

try:            # optional: a faster JSON decoder (requirements-runtime.txt); json does the same work without it
    import orjson
except ImportError:                     # pragma: no cover
    orjson = None  # type: ignore[assignment]

from core.errors import InputError
from core.files import TEXT_LIMIT, read_bytes

# Deepest JSON nesting read: the app's own files reach about 12; 64 keeps every later step (copies,
# schema checks) far from Python's recursion limit, even from a GUI callback.
MAX_DEPTH = 64
# Integers are machine integers downstream (numpy, C code, array sizes): a C long at most.
INT_LIMIT = 2 ** 63


# Characters no name may hold: C0 and C1 controls (a newline, NUL, escape sequences), line and
# paragraph separators, and the bidirectional overrides and isolates that reorder what is shown.
_BIDI = set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def name_problem(text: str) -> str | None:
    """Why `text` cannot be a name (of a kernel, workload, target, run, study), or None. A name
    reaches generated code (comments, identifiers), file names, logs and the window: one line of
    printable text."""
    import unicodedata

    for i, ch in enumerate(text):
        if ch in _BIDI or unicodedata.category(ch) in ("Cc", "Zl", "Zp"):
            label = unicodedata.name(ch, "") or {"\n": "LINE FEED", "\r": "CARRIAGE RETURN", "\t": "TAB",
                                                 "\x00": "NUL", "\x1b": "ESCAPE"}.get(ch, "control character")
            return (f"contains a control character (U+{ord(ch):04X} {label.lower()} at character {i + 1}); "
                    f"a name is one line of printable text")
    return None


def printable_name(text: str) -> str:
    """A name the program makes from something else (a file's name): each character no name may hold
    shown as U+FFFD instead, so a file called "a<newline>b.json" still imports."""
    return "".join("\ufffd" if name_problem(ch) else ch for ch in text)


def check_name(text: str, where: str) -> str:
    """`text` if it can be a name; InputError naming the field (`where`) otherwise."""
    problem = name_problem(text)
    if problem is not None:
        raise InputError(problem, where)
    return text


class _TooLong(float):
    """An integer literal too long for Python to read (over 4300 digits) stands in as this infinite
    float, so the number check can name its field instead of json failing with no position."""

    digits: int

    def __new__(cls, text: str) -> "_TooLong":
        obj = super().__new__(cls, math.inf)
        obj.digits = len(text.lstrip("-"))
        return obj


def _parse_int(text: str) -> int | float:
    return int(text) if len(text) <= 4000 else _TooLong(text)


def loads(text: str, where: str) -> Any:
    """Decode JSON text; `where` names the source (a file path) in messages, syntax errors add
    line:column. Nesting deeper than the decoder can follow (it stops with RecursionError, cleanly,
    at Python's recursion limit) is refused here; check_numbers refuses anything past MAX_DEPTH."""
    if not text.strip():
        raise InputError("the file is empty", where)
    try:
        try:        # the C decoder alone first: a hook per integer costs a third more on large sessions
            return json.loads(text)
        except json.JSONDecodeError:
            raise
        except ValueError:          # an integer over Python's 4300-digit limit: again, reading it as _TooLong
            return json.loads(text, parse_int=_parse_int)
    except json.JSONDecodeError as exc:
        # an error on the text's last line (the end itself, or a string or number cut short there)
        hint = " (the file looks truncated)" if "\n" not in text[exc.pos:].rstrip() else ""
        raise InputError(f"not valid JSON: {exc.msg}{hint}", f"{where}:{exc.lineno}:{exc.colno}") from None
    except RecursionError:
        raise InputError(f"nested too deeply: at most {MAX_DEPTH} levels of arrays and objects are read",
                         where) from None


@contextlib.contextmanager
def paused_gc() -> Any:
    """Python's cycle collector paused while a document is decoded and read: a session makes some
    hundred thousand objects (JSON values, typed results), none in a cycle, and each few thousand of
    them would start a collection, now and then a full one over the whole heap (on the command line,
    much of an open's time). The window and the tests run the collector
    themselves, on their UI thread, so there it is paused already and this changes nothing. It runs
    again after, as it was; the objects are the same."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def decode_text(raw: bytes, where: str) -> str:
    """Bytes of a text file as str; InputError saying what the file seems to be when it is not UTF-8."""
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise InputError("the file is UTF-16 text; save it as UTF-8", where)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        what = "a binary file" if b"\0" in raw[:4096] else "not UTF-8 text"
        raise InputError(f"{what} (byte {exc.start + 1} cannot be read as UTF-8); expected a UTF-8 text file",
                         where) from None


def read_text_file(path: str | Path, what: str = "file", limit: int = TEXT_LIMIT) -> str:
    """A UTF-8 text file's contents (a BOM dropped); InputError naming the file for anything else:
    a folder, FIFO or device (core.files), a file over `limit` bytes, bytes that are not UTF-8."""
    return decode_text(read_bytes(path, what, limit), str(path))


def read_json_file(path: str | Path, what: str = "file") -> Any:
    """A JSON file decoded, its nesting and numbers checked; InputError naming the file (and line or
    field) otherwise."""
    doc = loads(read_text_file(path, what), str(path))
    try:
        check_numbers(doc, "")
    except InputError as exc:                 # `file.json: kernels[0].values[1][2]: ...`
        raise InputError(exc.message, f"{path}: {exc.where}" if exc.where else str(path)) from None
    return doc


# ---------------------------------------------------------------- numbers
def number_problem(value: Any) -> str | None:
    """Why a JSON number cannot be used (NaN, infinite, beyond a C long), or None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, _TooLong):
        return f"a number of {value.digits} digits is beyond the 64-bit integer range"
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN is not a number here" if math.isnan(value) else \
            f"{value} is beyond the floating-point range (about 1.8e308)"
    if isinstance(value, int) and not -INT_LIMIT <= value < INT_LIMIT:
        digits = len(str(abs(value)))
        shown = str(value) if digits <= 24 else f"a number of {digits} digits"
        return f"{shown} is beyond the 64-bit integer range"
    return None


def check_numbers(doc: Any, root: str, prefix: tuple[Any, ...] = ()) -> None:
    """Every number in a decoded JSON document is finite and fits a C long, and nesting stays within
    MAX_DEPTH; InputError names the first offending field in document order (e.g.
    `session.runs[0].settings.noise`). Iterative, so any document a caller built can be checked.
    `prefix`: where `doc` lies in a larger document (e.g. ("runs", 3)), for its depth and paths,
    so a part checked on its own (session.check_file's workers) gets the whole's message."""
    if type(doc) in (dict, list) and _plain(doc, len(prefix)):
        return
    if not isinstance(doc, (dict, list, tuple)):
        problem = number_problem(doc) if isinstance(doc, (int, float)) else None
        if problem:
            raise InputError(problem, root)
        return
    stack: list[tuple[Iterator[tuple[Any, Any]], tuple[Any, ...]]] = [(_items(doc), prefix)]
    while stack:
        items, path = stack[-1]
        for key, item in items:
            kind = type(item)
            if kind is float:                   # the common cases first, by exact type (sessions hold
                if item - item == 0.0:          # tens of thousands of numbers): finite floats,
                    continue
            elif kind is int:
                if -INT_LIMIT <= item < INT_LIMIT:      # machine integers,
                    continue
            elif kind is str or kind is bool or item is None:      # and what holds no number
                continue
            if isinstance(item, (dict, list, tuple)):
                if len(path) + 1 >= MAX_DEPTH:
                    raise InputError(f"nested too deeply: at most {MAX_DEPTH} levels of arrays and objects are read",
                                     json_path((*path, key)[:8], root) + "...")
                stack.append((_items(item), (*path, key)))
                break           # the child first; this level's iterator goes on after it
            if isinstance(item, (int, float)):
                problem = number_problem(item)
                if problem:
                    raise InputError(problem, json_path((*path, key), root))
        else:
            stack.pop()


def plain_numbers(doc: dict[str, Any] | list[Any], depth: int = 0) -> bool:
    """True when check_numbers(doc, root, prefix) with a prefix of `depth` parts has nothing to say,
    and no float is beyond the 64-bit integer range either: what a decoder that reads integers too
    large for 64 bits as floats (orjson) may have made of one. False: decode again with json and run
    check_numbers, which names the field."""
    return _plain(doc, depth, float(INT_LIMIT))


def plain_loads(text: str, trusted: bool = False) -> Any:
    """orjson's reading of JSON text (an object or array) when it is exactly json's (loads') and
    check_numbers has nothing to say of it; None otherwise: the caller reads the text with loads (and
    check_numbers), which give every message. orjson refuses what json reads and check_numbers or a
    schema names (NaN, Infinity, 1e400, a lone surrogate escape, nesting past 1024 levels, a BOM),
    and reads an integer beyond 64 bits as a float: plain_numbers sends any float that large, and
    anything check_numbers refuses, back to json. `trusted`: these very bytes were found plain before
    (orjson is deterministic), so the scan is skipped. About three times as fast as json.loads on a
    session's float-heavy results."""
    if orjson is None:
        return None
    try:
        doc = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    if type(doc) is not dict and type(doc) is not list:
        return None
    return doc if trusted or plain_numbers(doc) else None


def _plain(doc: dict[str, Any] | list[Any], depth0: int = 0, float_limit: float = math.inf) -> bool:
    """True when check_numbers has nothing to say (the usual case), found without building a field
    path per container: a third faster on large sessions. False sends the document to the full check,
    which finds the problem again and names its field. A float at or beyond `float_limit` (either
    sign) is False too (plain_numbers)."""
    lo, hi = -INT_LIMIT, INT_LIMIT
    flo = -float_limit
    stack: list[tuple[Any, int]] = [(doc, depth0)]
    pop, push = stack.pop, stack.append
    while stack:
        container, depth = pop()
        for v in (container.values() if type(container) is dict else container):
            t = type(v)
            if t is float:
                if not flo < v < float_limit:       # NaN, infinite (or beyond float_limit)
                    return False
            elif t is int:
                if not lo <= v < hi:
                    return False
            elif t is dict or t is list or t is tuple:
                if depth + 1 >= MAX_DEPTH:
                    return False
                push((v, depth + 1))
            elif not (t is str or t is bool or v is None):
                return False
    return True


def deepcopy_json(value: Any) -> Any:
    """copy.deepcopy of decoded JSON (dicts with string keys, lists, tuples of scalars, scalars),
    several times faster: no memo entry per value, a list of scalars copied at once. Anything else,
    or a container met twice (shared or cyclic, which deepcopy keeps so), is left to deepcopy, so the
    copy is always deepcopy's."""
    try:
        return _copy_tree(value, set())
    except _NotTree:
        return copy.deepcopy(value)


class _NotTree(Exception):
    """deepcopy_json met something it does not copy itself."""


_SCALAR_KINDS = frozenset((str, int, float, bool, type(None)))


def _copy_tree(value: Any, seen: set[int]) -> Any:
    kind = type(value)
    if kind in _SCALAR_KINDS:
        return value                          # immutable: deepcopy returns it as it is
    if kind is tuple:
        if _SCALAR_KINDS.issuperset(map(type, value)):
            return value                      # a tuple of scalars: deepcopy returns it as it is
        raise _NotTree
    if id(value) in seen:
        raise _NotTree
    seen.add(id(value))
    if kind is list:
        if _SCALAR_KINDS.issuperset(map(type, value)):
            return list(value)
        return [_copy_tree(v, seen) for v in value]
    if kind is dict:
        out = {}
        for k, v in value.items():
            if type(k) is not str:
                raise _NotTree
            out[k] = _copy_tree(v, seen)
        return out
    raise _NotTree


def _items(value: Any) -> Iterator[tuple[Any, Any]]:
    return iter(value.items()) if isinstance(value, dict) else enumerate(value)


def json_path(parts: Iterable[Any], root: str) -> str:
    """`root.key[3].other` from a path of keys and indices."""
    path = root
    for part in parts:
        if isinstance(part, int):
            path += f"[{part}]"
        elif not (isinstance(part, str) and part.isidentifier()):
            path += f"[{json.dumps(str(part))[:40]}]"          # a key with spaces, dots or newlines
        elif path:
            path += f".{part}"
        else:
            path = part
    return path


# ---------------------------------------------------------------- settings
def _is_int(checker: Any, value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# JSON schema's "integer" also admits 2.0; engines index and size things with these, so only ints.
_Validator = jsonschema.validators.extend(
    jsonschema.Draft202012Validator,
    type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine("integer", _is_int))


def schema_errors(schema: dict[str, Any], doc: Any) -> list[Any]:
    """jsonschema's errors, the first in document order first. A document _conforms finds valid has
    none (jsonschema is not asked: a session's runs, their series of points, took it tens of
    milliseconds); any other is jsonschema's to judge and describe."""
    if _conforms(schema, doc):
        return []
    return sorted(_Validator(schema).iter_errors(doc), key=lambda e: [str(p) for p in e.absolute_path])


# What _conforms takes for each JSON schema type: exact Python types, the same as or narrower than
# _Validator's type checker (an int subclass, a Decimal: left to jsonschema).
_SCHEMA_TYPES: dict[str, frozenset[type]] = {
    "object": frozenset((dict,)), "array": frozenset((list,)), "string": frozenset((str,)),
    "integer": frozenset((int,)), "number": frozenset((int, float)), "boolean": frozenset((bool,)),
    "null": frozenset((type(None),)),
}
# keywords that say nothing of validity
_ANNOTATIONS = frozenset(("title", "description", "default", "examples", "$comment", "unit", "units"))


def _conforms(schema: Any, doc: Any) -> bool:
    """True when jsonschema (_Validator) would find no error in `doc`; False when it might, or when
    the schema uses a keyword this does not know (jsonschema decides then). A quick and plain reading
    of the few keywords the app's schemas use, each applied as JSON schema applies it (to the kinds of
    value it is about)."""
    try:
        return _valid(schema, doc)
    except (RecursionError, TypeError):        # too deep, or a malformed schema: jsonschema's to say
        return False


def _valid(schema: Any, doc: Any) -> bool:
    if schema is True:
        return True
    if type(schema) is not dict:
        return False
    kind = type(doc)
    for key, want in schema.items():
        if key == "type":
            names = [want] if type(want) is str else want
            if type(names) is not list or not any(kind in _SCHEMA_TYPES.get(n, ()) for n in names):
                return False
        elif key == "properties":
            if kind is dict:
                if type(want) is not dict:
                    return False
                for name, sub in want.items():
                    if name in doc and not _valid(sub, doc[name]):
                        return False
        elif key == "additionalProperties":
            if kind is dict:
                if "patternProperties" in schema:
                    return False
                named = schema.get("properties", {})
                extra = [k for k in doc if k not in named]
                if want is False:
                    if extra:
                        return False
                elif not all(_valid(want, doc[k]) for k in extra):
                    return False
        elif key == "required":
            if kind is dict and (type(want) is not list or not all(k in doc for k in want)):
                return False
        elif key == "items":
            if kind is list:
                if want == {"type": "number"}:             # a column of numbers: checked at once
                    if not _NUMBER_KINDS.issuperset(map(type, doc)):
                        return False
                elif not all(_valid(want, x) for x in doc):
                    return False
        elif key in ("enum", "const"):
            allowed = want if key == "enum" else [want]
            # strings alone (jsonschema's equality tells 1, 1.0 and True apart in ways left to it)
            if kind is not str or type(allowed) is not list or not any(type(a) is str and a == doc for a in allowed):
                return False
        elif key in ("minLength", "maxLength"):
            if kind is str:
                if type(want) is not int or (len(doc) < want if key == "minLength" else len(doc) > want):
                    return False
        elif key in ("minItems", "maxItems"):
            if kind is list:
                if type(want) is not int or (len(doc) < want if key == "minItems" else len(doc) > want):
                    return False
        elif key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
            if kind is int or kind is float:
                if type(want) not in (int, float) or not (
                        doc >= want if key == "minimum" else doc <= want if key == "maximum"
                        else doc > want if key == "exclusiveMinimum" else doc < want):
                    return False
        elif key not in _ANNOTATIONS:
            return False
    return True


_NUMBER_KINDS = _SCHEMA_TYPES["number"]


def check_schema(schema: dict[str, Any], doc: Any, where: str) -> None:
    """Numbers first (check_numbers), then the schema; InputError names the first wrong field."""
    check_numbers(doc, where)
    errors = schema_errors(schema, doc)
    if errors:
        err = errors[0]
        raise InputError(_schema_message(err), json_path(err.absolute_path, where))


def field_path(where: str, key: Any) -> str:
    """`where.key` for a key as a user wrote it: a plain name as it is, anything else (spaces, line
    breaks, other characters) quoted and cut short, so a message stays one line."""
    text = str(key)
    return f"{where}.{text}" if text.isidentifier() else f"{where}[{text[:40]!r}]"


def check_settings(schema: dict[str, Any], settings: Any, where: str = "settings") -> None:
    """An engine's settings against its settings schema (types, ranges, enums) with finite numbers:
    the one check for the GUI, the command line and session files."""
    if not isinstance(settings, dict):
        raise InputError(f"settings are an object, got {type(settings).__name__}", where)
    known = schema.get("properties")
    if isinstance(known, dict) and known:        # a misspelt or retired setting would silently do nothing
        for key in settings:
            if key not in known:
                raise InputError(f"unknown setting {str(key)[:40]!r}; known: {', '.join(known)}", field_path(where, key))
    key = _settings_key(schema, settings)
    if key is not None and _SETTINGS_OK.get(key) is schema:
        return
    check_schema(schema, settings, where)
    if key is not None:
        if len(_SETTINGS_OK) >= 4096:
            _SETTINGS_OK.clear()
        _SETTINGS_OK[key] = schema


# Settings already found valid, by (schema, settings) as _settings_key gives them: a session of
# hundreds of runs holds the same few settings again and again, and jsonschema is slow to say so.
# Only success is kept (an error is checked again, so its message and field are the caller's own).
_SETTINGS_OK: dict[tuple[int, Any], dict[str, Any]] = {}


def _settings_key(schema: dict[str, Any], settings: dict[str, Any]) -> tuple[int, Any] | None:
    """A hashable key telling settings apart exactly as the checks do (1, 1.0 and True differ, a
    tuple is no list), or None for anything but plain JSON values."""
    def canon(v: Any) -> Any:
        kind = type(v)
        if kind is str or kind is int or kind is bool or v is None:
            return (kind.__name__, v)
        if kind is float:
            return ("float", v) if v - v == 0.0 else _Unkeyed.raise_()
        if kind is list:
            return ("list", tuple(canon(x) for x in v))
        if kind is dict:
            return ("dict", tuple(sorted((str(k), type(k) is str, canon(x)) for k, x in v.items())))
        return _Unkeyed.raise_()
    try:
        return id(schema), canon(settings)
    except (_Unkeyed, RecursionError):
        return None


class _Unkeyed(Exception):
    @staticmethod
    def raise_() -> Any:
        raise _Unkeyed


def settings_over_defaults(schema: dict[str, Any], defaults: dict[str, Any],
                           raw: dict[str, Any] | None) -> dict[str, Any]:
    """An engine's defaults with the request's settings over them, checked against its schema
    (InputError names the setting): the whole settings step of an engine whose schema says all
    there is to check, written once for every such engine."""
    s = dict(defaults)
    s.update(raw or {})
    check_settings(schema, s)
    return s


def check_types(schema: dict[str, Any], settings: Any, where: str = "settings") -> None:
    """Numbers (check_numbers) and the JSON types the schema names, nothing else: what an engine's
    own, more specific range checks may then rely on (a list where a name belongs would otherwise
    reach `name in table` as a TypeError). check_settings after them checks the rest."""
    if not isinstance(settings, dict):
        raise InputError(f"settings are an object, got {type(settings).__name__}", where)
    key = id(schema)
    if key not in _TYPES_ONLY or _TYPES_ONLY[key][0] is not schema:
        _TYPES_ONLY[key] = (schema, _types_only(schema))
    check_schema(_TYPES_ONLY[key][1], settings, where)


_TYPES_ONLY: dict[int, tuple[dict[str, Any], dict[str, Any]]] = {}
_JSON_TYPES = ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"), (list, "array"),
               (dict, "object"), (type(None), "null"))


def _types_only(prop: dict[str, Any]) -> dict[str, Any]:
    """A schema reduced to its types (an enum's type taken from its values), ranges left out."""
    out: dict[str, Any] = {}
    kind = prop.get("type")
    if kind is None and isinstance(prop.get("enum"), list):
        kind = sorted({next(name for t, name in _JSON_TYPES if isinstance(v, t)) for v in prop["enum"]})
    if kind is not None:
        out["type"] = kind
    for sub in ("items", "additionalProperties"):
        if isinstance(prop.get(sub), dict):
            out[sub] = _types_only(prop[sub])
    if isinstance(prop.get("properties"), dict):
        out["properties"] = {k: _types_only(v) for k, v in prop["properties"].items() if isinstance(v, dict)}
    return out


def _schema_message(err: Any) -> str:
    text = str(err.message)
    return text if len(text) <= 300 else text[:297] + "..."
