"""The run index a saved session ends with, and `session validate`'s parallel check that uses it:
the index round-trips and points at each run's text; a missing, wrong or hand-edited index falls
back to the sequential check; and both checks give the same first error, word for word, for the
bad-session corpus of test_bad_inputs and for files with several errors in several runs."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from core import session as sessions
from core.session import validate
from core.errors import SessionError

EXAMPLE = Path(__file__).resolve().parents[1] / "assets" / "example_session.dfx"


def _dump(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), allow_nan=True)


def _indexed(doc: dict[str, Any]) -> str:
    """encode_text's layout for any document, NaN included (a damaged file's, which encode refuses);
    the spans found by searching the text, not by encode_text's own sums."""
    body = {k: v for k, v in doc.items() if k != "index"}
    if not isinstance(body.get("runs"), list):
        return _dump(body)
    texts = [_dump(r) for r in body.get("runs", [])]
    text = _dump({**body, "runs": "\0RUNS"})
    at = text.index('"\\u0000RUNS"')
    runs = "[" + ",".join(texts) + "]"
    spans, pos = [], at + 1
    for t in texts:
        spans.append([pos, pos + len(t)])
        pos += len(t) + 1
    return text[:at] + runs + text[at + len('"\\u0000RUNS"'):-1] + ',"index":' + _dump({"runs": spans}) + "}"


def _runs_doc(n: int = 12) -> dict[str, Any]:
    """The example session, current version, with its runs repeated to n under fresh ids."""
    doc = sessions.read_document(EXAMPLE)
    base = doc["runs"]
    doc["runs"] = [dict(base[i % len(base)], id=f"r{i + 1}") for i in range(n)]
    doc["version"] = sessions.VERSION
    return doc


def _outcome(path: Path, workers: int) -> tuple[str, str] | sessions.Summary:
    try:
        return sessions.check_file(path, workers=workers)
    except SessionError as exc:
        return exc.message, exc.where


def _both(tmp_path: Path, text: str) -> tuple[Any, Any]:
    path = tmp_path / "s.dfx"
    path.write_text(text)
    return _outcome(path, 1), _outcome(path, 2)


def test_the_index_round_trips_and_points_at_each_run(tmp_path):
    doc = _runs_doc(5)
    text = sessions.encode_text(doc)
    assert text == _indexed(doc)            # the writer's sums agree with a search of its text
    back = json.loads(text)
    assert list(back)[-1] == "index" and {k: v for k, v in back.items() if k != "index"} == doc
    for (a, b), run in zip(back["index"]["runs"], doc["runs"]):
        assert json.loads(text[a:b]) == run
    split = validate._split_runs(text)
    assert split is not None and split[1] == [tuple(s) for s in back["index"]["runs"]]
    assert sessions.encode(doc) == sessions.encode(doc)          # the same bytes each time (mtime 0)
    assert gzip.decompress(sessions.encode(doc)).decode() == text


def test_a_saved_session_validates_in_parallel_and_reads_back(tmp_path):
    doc = _runs_doc(9)
    path = tmp_path / "a.dfx"
    path.write_bytes(sessions.encode(doc))
    assert validate._split_runs(sessions.decode_raw(path.read_bytes(), str(path))) is not None
    seq, par = _outcome(path, 1), _outcome(path, 2)
    assert isinstance(par, sessions.Summary) and par == seq and sum(par.runs.values()) == 9
    assert len(sessions.load(path).runs) == 9


@pytest.mark.parametrize("damage", [
    lambda t: t[: t.rindex(',"index":')] + "}",                              # no index
    lambda t: t.replace('"index":{"runs":[[', '"index":{"runs":[[1', 1),     # a start moved
    lambda t: t.replace(',"index":{"runs":[', ',"index":{"runs":[[0,5],', 1),  # an extra span
    lambda t: t.replace('"note":""', '"note":"x"', 1),                       # edited: spans shifted
    lambda t: t.replace('"runs":[{', '"runs": [{', 1),                       # reformatted by hand
    lambda t: t[: t.rindex("]]}") - 1] + t[t.rindex("]]}"):],                # an end cut short
])
def test_a_wrong_index_falls_back_to_the_sequential_check(tmp_path, damage):
    text = damage(sessions.encode_text(_runs_doc(6)))
    seq, par = _both(tmp_path, text)
    assert seq == par
    assert validate._split_runs(text) is None or isinstance(par, sessions.Summary)


def test_an_index_into_a_nested_array_is_not_trusted(tmp_path):
    """A hand-made file whose index points at a "runs" list inside the view, not the session's."""
    doc = _runs_doc(3)
    inner = doc["runs"]
    doc["runs"] = []
    doc["view"] = {"runs": inner}
    text = _dump(doc)[:-1]
    pos = text.index('"view":{"runs":[') + len('"view":{"runs":[')
    spans = []
    for run in inner:
        spans.append([pos, pos + len(_dump(run))])
        pos += len(_dump(run)) + 1
    text += ',"index":' + _dump({"runs": spans}) + "}"
    assert json.loads(text[spans[1][0]:spans[1][1]]) == inner[1]
    assert validate._split_runs(text) is None
    seq, par = _both(tmp_path, text)
    assert seq == par


def _corpus_sessions() -> list[tuple[str, str]]:
    """test_bad_inputs' bad sessions that are JSON objects, with an index added."""
    import tests.test_bad_inputs as corpus

    out = []
    for case in corpus.CASES:
        content = case.files.get("s.dfx")
        if case.kind != "session_file" or not isinstance(content, str):
            continue
        try:
            doc = json.loads(content)
        except (ValueError, RecursionError):
            continue
        if isinstance(doc, dict):
            if isinstance(doc.get("runs"), list) and doc.get("version") == 3:
                doc["version"] = sessions.VERSION
            out.append((case.name, _indexed(doc)))
    return out


@pytest.mark.slow
def test_the_corpus_of_bad_sessions_says_the_same_in_parallel(tmp_path):
    cases = _corpus_sessions()
    assert len(cases) >= 30
    parallel = 0
    for name, text in cases:
        seq, par = _both(tmp_path, text)
        assert isinstance(seq, tuple), name
        assert par == seq, name
        parallel += validate._split_runs(text) is not None
    assert parallel >= 8            # the cases with runs went the parallel way


def _set(doc: dict[str, Any], path: list[Any], value: Any) -> None:
    for p in path[:-1]:
        doc = doc[p]
    doc[path[-1]] = value


NAN = float("nan")
SEVERAL = {     # errors in several runs (and elsewhere): the first one the sequential check meets wins
    "numbers_before_schema": [(["runs", 9, "status"], "sleeping"), (["runs", 10, "duration_s"], NAN)],
    "numbers_in_order": [(["runs", 10, "duration_s"], NAN), (["runs", 3, "settings", "x"], 10 ** 30)],
    "numbers_head_after_runs": [(["view", "x"], NAN), (["runs", 8, "duration_s"], NAN)],
    "numbers_head_before_runs": [(["engines", "cain", "settings", "time_s"], NAN), (["runs", 1, "duration_s"], NAN)],
    "schema_string_order": [(["runs", 9, "status"], "sleeping"), (["runs", 10, "status"], "sleeping")],
    "schema_head_and_run": [(["runs", 2, "status"], "sleeping"), (["view", "current_engine"], 5)],
    "schema_before_meaning": [(["runs", 1, "engine"], "nosuch"), (["runs", 11, "status"], "sleeping")],
    "meaning_in_order": [(["runs", 11, "engine"], "nosuch"), (["runs", 4, "settings", "nosuch"], 1)],
    "duplicate_before_meaning": [(["runs", 5, "id"], "r1"), (["runs", 9, "engine"], "nosuch")],
    "meaning_before_duplicate": [(["runs", 9, "id"], "r1"), (["runs", 5, "engine"], "nosuch")],
    "duplicate_and_meaning_same_run": [(["runs", 7, "id"], "r2"), (["runs", 7, "engine"], "nosuch")],
    "library_before_runs": [(["library", "workloads", 0, "id"], "w2"), (["runs", 0, "engine"], "nosuch")],
    "view_after_runs": [(["view", "current_engine"], "nosuch"), (["runs", 10, "engine"], "nosuch")],
    "view_alone": [(["view", "current_engine"], "nosuch")],
    "result_field": [(["runs", 6, "result"], {"x": 1})],
    "deep_note": [(["runs", 4, "note"], json.loads("[" * 70 + "]" * 70))],
    # orjson reads an integer of over 64 bits as a float, which a number field would accept
    "huge_integer_where_a_float_goes": [(["runs", 6, "duration_s"], 10 ** 25)],
    "integer_just_over_63_bits": [(["runs", 6, "duration_s"], 2 ** 63 + 5)],
    "nan_in_a_result": [(["runs", 2, "result", "max_abs_error"], NAN)],
}


@pytest.mark.slow
@pytest.mark.parametrize("fast_decoder", [True, False])
@pytest.mark.parametrize("name", sorted(SEVERAL))
def test_several_errors_give_the_same_first_error_both_ways(tmp_path, name, fast_decoder, monkeypatch):
    if not fast_decoder:
        monkeypatch.setattr(validate, "orjson", None)
    doc = _runs_doc(12)
    for path, value in SEVERAL[name]:
        _set(doc, path, value)
    text = _indexed(doc)
    assert validate._split_runs(text) is not None
    seq, par = _both(tmp_path, text)
    assert isinstance(seq, tuple) and par == seq


def test_an_index_can_be_refused_by_no_older_reader_without_saying_why():
    """Format 4 is format 3 with the index: a format-3 reader says "newer version", not "unknown key"."""
    assert sessions.VERSION >= 4 and sessions.MIGRATIONS[3]({"version": 3, "x": 1}) == {"version": 4, "x": 1}


def test_settings_found_valid_are_remembered_by_exact_value():
    """check_settings skips jsonschema for settings it found valid, but 1, 1.0 and True, or a
    list and a tuple, are different settings: each is checked on its own."""
    from core.checks import _SETTINGS_OK, check_settings
    from core.errors import InputError

    schema = {"type": "object", "properties": {"n": {"type": "integer"}, "xs": {"type": "array"}}}
    check_settings(schema, {"n": 1, "xs": [1, 2]})
    assert any(s is schema for s in _SETTINGS_OK.values())
    check_settings(schema, {"xs": [1, 2], "n": 1})                  # the same, in another order
    for bad in ({"n": 1.0, "xs": [1, 2]}, {"n": True, "xs": [1, 2]}, {"n": 1, "xs": (1, 2)}):
        with pytest.raises(InputError):
            check_settings(schema, bad)


def test_an_older_result_owned_by_its_reader_is_upgraded_in_place_and_reads_the_same():
    from core.bound.result import BoundResult

    doc = sessions.read_document(EXAMPLE)
    data = next(r["result"] for r in doc["runs"] if r["engine"] == "bound")
    version = next(r["result_version"] for r in doc["runs"] if r["engine"] == "bound")
    assert version < BoundResult.VERSION
    kept = json.loads(json.dumps(data))
    copied = BoundResult.from_json(data, version)
    assert data == kept                                             # not owned: left as it was
    owned = BoundResult.from_json(json.loads(json.dumps(data)), version, owned=True)
    assert owned.to_json() == copied.to_json()


def test_large_floats_are_still_valid_in_parallel(tmp_path):
    """A float beyond 2**63 sends its run back to json (it may be an integer orjson turned into one)."""
    doc = _runs_doc(6)
    doc["runs"][3]["duration_s"] = 1e25
    seq, par = _both(tmp_path, sessions.encode_text(doc))
    assert isinstance(par, sessions.Summary) and par == seq
