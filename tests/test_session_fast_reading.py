"""Reading a session fast without reading it differently: orjson decodes (core.checks.plain_loads,
storage.decode_plain) only where its document is json's and check_numbers has nothing to say of it;
everything else, every error included, is json's (core.checks.loads), word for word. Copies of decoded
JSON (core.checks.deepcopy_json) are copy.deepcopy's; lists of numbers are read at once (core.results)
even where adding them up overflows."""

from __future__ import annotations

import copy
import gzip
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from core import checks
from core.checks import deepcopy_json, loads, plain_loads
from core.errors import InputError, SessionError
from core.results import EngineResult
from core.session import storage

EXAMPLE = Path(__file__).resolve().parents[1] / "assets" / "example_session.dfx"


def _json_reading(raw: bytes, where: str = "f.dfx") -> Any:
    """What decode gave before orjson: json, through core.checks.loads."""
    return loads(storage.decode_raw(raw, where), where)


def _outcome(f: Any) -> tuple[str, Any]:
    try:
        return "ok", f()
    except InputError as exc:
        return type(exc).__name__, (exc.message, exc.where)


def _same(a: Any, b: Any) -> bool:
    """Equal, and of the same types all the way down (1 is no 1.0, -0.0 no 0.0)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, float):
        return repr(a) == repr(b)
    return bool(a == b)


# texts orjson reads otherwise than json, or refuses: each must decode as json decodes it
EDGES = [
    '{"a": 1, "a": 2}', '{"a": {"x": 1}, "b": 2, "a": [3]}', "[1e-400, -0.0, -0, 0.1, 5e-324, 1E5]",
    "[1e400]", "[-1e400]", "[NaN]", "[Infinity]", "[-Infinity]", '{"n": 18446744073709551615}',
    '{"n": 18446744073709551616}', '{"n": -9223372036854775809}', '{"n": 9223372036854775808}',
    '{"n": -9223372036854775808}', '{"x": 9223372036854775807.0}', '{"x": -9.3e18}',
    '{"n": ' + "9" * 5000 + "}", '["\\ud800"]', '["\\udc00x"]', '["\\u0000", "é", "\\u2028"]',
    "[" * 70 + "]" * 70, "[" * 63 + "]" * 63, "[" * 2000 + "]" * 2000, "", "   ", "5", '"text"', "null",
    "[1,]", '{"a":1', "[1] [2]", "[1]\x00", "\ufeff[1]", '{"a": tru}', "[1.5e300, 2]",
]


@pytest.mark.parametrize("packed", [False, True], ids=["plain", "gzip"])
def test_decode_reads_as_json_reads_and_says_what_json_says(packed):
    for text in EDGES:
        raw = text.encode("utf-8")
        raw = gzip.compress(raw, mtime=0) if packed else raw
        storage._PLAIN.clear()
        expected = _outcome(lambda: _json_reading(raw))
        for _ in range(2):              # the second time, the bytes may be in the memo of plain readings
            got = _outcome(lambda: storage.decode_plain(raw, "f.dfx")[0])
            assert got[0] == expected[0], text[:80]
            assert _same(got[1], expected[1]) if got[0] == "ok" else got[1] == expected[1], text[:80]


def test_a_document_said_plain_passes_the_number_check_and_others_go_to_json(monkeypatch):
    for text in EDGES:
        doc = plain_loads(text)
        if doc is not None:
            checks.check_numbers(doc, "session")        # nothing to say
            assert _same(doc, json.loads(text))
    assert plain_loads('{"n": 18446744073709551616}') is None       # orjson's float for it: back to json
    assert plain_loads('{"n": -9.3e18}') is None                    # a float that large may have been an integer
    monkeypatch.setattr(checks, "orjson", None)                     # not installed: json does it all
    assert plain_loads("[1]") is None and storage.decode_plain(b"[1]", "f")[0] == [1]


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-2 ** 70, max_value=2 ** 70)
    | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=4), inner, max_size=5),
    max_leaves=30)


@settings(max_examples=25, deadline=None)
@given(doc=st.dictionaries(st.text(max_size=4), JSON, max_size=4))
def test_decode_of_any_document_is_json_s(doc):
    raw = json.dumps(doc).encode("ascii")           # NaN and Infinity written as json writes them
    storage._PLAIN.clear()
    read, plain = storage.decode_plain(raw, "f.dfx")
    assert _same(read, _json_reading(raw))
    ok = _outcome(lambda: checks.check_numbers(read, "session"))[0] == "ok"
    assert not plain or ok                  # "plain" only where the number phase has nothing to say


def _example_doc() -> dict[str, Any]:
    return storage.read_document(EXAMPLE)


def _small_doc() -> dict[str, Any]:
    """The example session less its large f-CNNx run (a tenth of the text): a run of each other engine."""
    doc = _example_doc()
    doc["runs"] = doc["runs"][:-1]
    return doc


# changes to a session that a number check, the schema or a type refuses, or that json reads otherwise
MUTATIONS = [
    lambda d: d["runs"][0]["settings"].__setitem__("max_nodes", 2 ** 64),
    lambda d: d["runs"][0]["settings"].__setitem__("max_nodes", 2 ** 63),
    lambda d: d["runs"][1].__setitem__("duration_s", -(2 ** 63) - 1),
    lambda d: d["runs"][1].__setitem__("duration_s", 1.0e19),
    lambda d: d["runs"][2].__setitem__("duration_s", float("nan")),
    lambda d: d["runs"][2].__setitem__("note", "\ud800"),
    lambda d: d["view"].__setitem__("deep", json.loads("[" * 70 + "]" * 70)),
    lambda d: d["runs"][0].__setitem__("status", 7),
    lambda d: d["runs"][4]["result"].__setitem__("memory_bytes", 2 ** 64),
    lambda d: d["runs"][4]["result"].__setitem__("memory_bytes", 1.5),
    lambda d: None,
]


@pytest.mark.parametrize("mutate", MUTATIONS, ids=range(len(MUTATIONS)))
def test_loading_with_orjson_says_what_loading_with_json_says(mutate, tmp_path, monkeypatch):
    doc = _small_doc()
    mutate(doc)
    path = tmp_path / "s.dfx"
    path.write_bytes(gzip.compress(json.dumps(doc).encode("utf-8"), mtime=0))

    def load() -> tuple[str, Any]:
        storage._PASSED.clear()
        storage._PLAIN.clear()
        try:
            p = storage.load(path)
        except SessionError as exc:
            return "error", (exc.message, exc.where)
        return "ok", json.dumps(storage.to_json(p) | {"saved_at": ""}, sort_keys=True)

    fast = load()
    monkeypatch.setattr(checks, "orjson", None)
    assert load() == fast


def test_the_example_opens_the_same_read_by_orjson_or_json(monkeypatch):
    storage._PASSED.clear()
    storage._PLAIN.clear()
    fast, again = storage.load(EXAMPLE), storage.load(EXAMPLE)      # read, then read from the memos
    monkeypatch.setattr(checks, "orjson", None)
    storage._PASSED.clear()
    slow = storage.load(EXAMPLE)
    assert [r.result for r in fast.runs] == [r.result for r in slow.runs] == [r.result for r in again.runs]
    text = [json.dumps(storage.to_json(p) | {"saved_at": ""}, sort_keys=True) for p in (fast, again, slow)]
    assert text[0] == text[1] == text[2]


# ---------------------------------------------------------------- deepcopy_json
def test_deepcopy_json_is_deepcopy():
    doc = _small_doc()
    copied = deepcopy_json(doc)
    assert _same(copied, copy.deepcopy(doc)) and copied is not doc
    assert copied["runs"][0] is not doc["runs"][0] and copied["runs"][-1]["result"] is not doc["runs"][-1]["result"]
    pair = (1, "a", None)
    assert deepcopy_json({"t": pair})["t"] is pair                  # immutable: kept, as deepcopy keeps it
    shared = [1, 2]
    out = deepcopy_json({"a": shared, "b": shared})                 # shared: deepcopy's copy, still shared
    assert out == {"a": [1, 2], "b": [1, 2]} and out["a"] is out["b"] and out["a"] is not shared
    loop: list[Any] = [1]
    loop.append(loop)
    again = deepcopy_json(loop)
    assert again[1] is again and again is not loop
    odd = {"k": {1: [2]}, "s": {3}, "t": ([1],)}                    # int keys, a set, a list in a tuple
    assert deepcopy_json(odd) == copy.deepcopy(odd) and deepcopy_json(odd)["t"][0] is not odd["t"][0]


# ---------------------------------------------------------------- lists of numbers in results
@dataclass(kw_only=True)
class _Columns(EngineResult):
    xs: list[float]
    ns: list[int]
    free: Any = None


def test_numbers_whose_sum_overflows_are_read_one_by_one():
    big = [1.7e308, 1.7e308, -1.0]
    got = _Columns.from_json({"xs": big, "ns": [1, 2], "free": {"v": big}})
    assert got.xs == big and got.free == {"v": big}
    with pytest.raises(InputError) as err:
        _Columns.from_json({"xs": [1.7e308, 1.7e308, math.inf], "ns": []})
    assert (err.value.message, err.value.where) == ("expected a finite number, got inf", "result.xs[2]")
    with pytest.raises(InputError) as err:
        _Columns.from_json({"xs": [], "ns": [1, True]})
    assert (err.value.message, err.value.where) == ("expected int, got bool True", "result.ns[1]")


# ---------------------------------------------------------------- schema checks without jsonschema
SCHEMAS = [
    {"type": "object", "required": ["a"], "additionalProperties": False,
     "properties": {"a": {"type": "integer", "minimum": 0}, "b": {"enum": ["x", "y"]}, "c": {"const": "k"},
                    "d": {"type": ["string", "null"], "minLength": 1, "maxLength": 3},
                    "e": {"type": "array", "items": {"type": "number"}, "minItems": 1, "maxItems": 2},
                    "f": {"type": "number", "exclusiveMinimum": 0, "maximum": 5, "exclusiveMaximum": 4},
                    "g": {"type": "object", "additionalProperties": {"type": "boolean"}}}},
    {"type": "array", "items": {"type": "object", "properties": {"n": {"enum": [1, True, "1"]}}}},
    {"type": "object", "patternProperties": {"^x": {"type": "string"}}, "additionalProperties": False},
    {"type": "object", "properties": {"s": {"type": "string", "pattern": "^a"}}, "title": "t"},
]


@settings(max_examples=30, deadline=None)
@given(doc=JSON | st.dictionaries(st.sampled_from("abcdefgnsx"), JSON, max_size=5))
def test_what_the_quick_schema_check_passes_jsonschema_passes(doc):
    from core.session.schema import _SCHEMA

    schemas = [*SCHEMAS, _SCHEMA, _SCHEMA["properties"]["runs"]["items"]]
    for schema in schemas:
        if checks._conforms(schema, doc):
            assert not list(checks._Validator(schema).iter_errors(doc)), schema


def test_the_quick_schema_check_passes_what_it_should():
    from core.session.schema import _SCHEMA

    doc = _small_doc()
    assert checks._conforms(_SCHEMA, doc) and checks.schema_errors(_SCHEMA, doc) == []
    good = {"a": 0, "b": "x", "c": "k", "d": None, "e": [1, 2.5], "f": 3.5, "g": {"k": True}}
    assert checks._conforms(SCHEMAS[0], good)
    for bad in ({"b": "x"}, {"a": -1}, {"a": True}, {"a": 1.0}, {"a": 1, "z": 0}, {"a": 1, "b": "z"},
                {"a": 1, "d": ""}, {"a": 1, "d": "abcd"}, {"a": 1, "e": []}, {"a": 1, "e": [1, True]},
                {"a": 1, "f": 0}, {"a": 1, "f": 4}, {"a": 1, "g": {"k": 1}}):
        assert not checks._conforms(SCHEMAS[0], bad) and checks.schema_errors(SCHEMAS[0], bad), bad
    assert not checks._conforms(SCHEMAS[2], {"x": "s"})        # a keyword it leaves to jsonschema
    assert checks.schema_errors(SCHEMAS[2], {"x": "s"}) == []
