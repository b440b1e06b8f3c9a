"""`session validate`: a session file checked as load checks it, without building its runs for a
window: the same SessionError, word for word, because the checks are the loader's own phases
(core.session.document). A large file written by this program is checked in parallel: the run index
its writer put last (storage.encode_text) says where each run's text lies, so forked workers each
decode and check a share of the runs, and the loader's phases merge what they found.
"""

from __future__ import annotations

import json
import multiprocessing
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.checks import check_numbers, loads, paused_gc, plain_loads, plain_numbers
from core.errors import InputError, SessionError
from core.files import SESSION_LIMIT, read_bytes
from core.project import Run
from core.session.document import (RunError, SchemaError, _check_start, check_numbers_phase, check_schema_phase,
                                   from_json, read_meaning, read_runs, runs_schema_error)
from core.session.migrations import VERSION, _migrate
from core.session.storage import decode_raw

try:            # optional: a faster JSON decoder for `session validate`'s workers (requirements-runtime.txt)
    import orjson
except ImportError:                     # pragma: no cover - the stdlib decoder does the same work
    orjson = None  # type: ignore[assignment]


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
        doc = plain_loads(text)             # orjson where it reads as json, the number check passed
        with paused_gc():
            p = from_json(loads(text, where) if doc is None else doc, owned=True, plain=doc is not None)
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
    """Runs lo..hi-1 checked by the loader's phases in its order: numbers, schema, meaning. Returns
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
        worst = runs_schema_error(runs, lo)
        if worst is not None:
            return {"schema": worst}
        built, wrong = read_runs(runs, lo, engines())
        if wrong is not None:
            return {"ids": [x["id"] for x in runs], "meaning": wrong}
        statuses: dict[str, int] = {}
        for run in built:
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


class ForkedRuns:
    """The runs as the workers found them (_check_share's answers, in the order of the runs): what
    the loader's phases ask of a document's runs."""

    def __init__(self, results: list[dict[str, Any]]) -> None:
        self.results = results

    def numbers(self) -> RunError | None:
        return min((r["numbers"] for r in self.results if "numbers" in r), default=None)

    def schema(self) -> SchemaError | None:
        return min((r["schema"] for r in self.results if "schema" in r), key=lambda f: f[0], default=None)

    def meaning(self, known: dict[str, Any]) -> tuple[list[str], list[Run], RunError | None]:
        ids = [i for r in self.results for i in r["ids"]]
        return ids, [], min((r["meaning"] for r in self.results if "meaning" in r), default=None)

    def statuses(self) -> dict[str, int]:
        runs: dict[str, int] = {}
        for r in self.results:
            for status, count in r["statuses"].items():
                runs[status] = runs.get(status, 0) + count
        return runs


def _check_parallel(text: str, head: dict[str, Any], spans: list[tuple[int, int]], n: int) -> Summary | None:
    """from_json's phases with the runs' share done by forked workers; None when a worker doubts
    (the caller checks sequentially)."""
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
    runs = ForkedRuns(results)
    check_numbers_phase(head, runs)
    head = _migrate(head)           # its version check: the file is of the current version (_split_runs)
    check_schema_phase(head, runs)
    p = read_meaning(head, runs, known)
    return Summary(len(p.workloads), len(p.targets), runs.statuses(), sorted(p.engines))
