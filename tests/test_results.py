"""Typed, versioned engine results (core.results and core/<pkg>/result.py).

Every engine runs once on a small case; its result must be what its type describes (the engine
checks it before yielding it), round-trip unchanged, and refuse missing, mistyped and unknown
fields naming their path. The stored results of the kept format-1 example session and of the
shipped example session (format 2) must pass their types.
"""

from __future__ import annotations

import argparse
import copy
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pytest

from core.bound.loopnest import BASELINES
from core.bound.result import BoundResult
from core.session import read_document
from core.cain.result import CainResult
from core.cappuccino.result import CappuccinoResult
from core.engine import JobRequest, get_engine
from core.errors import InputError
from core.fcnnx.result import FcnnxResult
from core.simulate.result import SimulateResult
from core.jobs import FinalResult
from core.lifecycle import record_run
from core.merit.result import MeritResult
from core.results import EngineResult, extra_keys, optional_key, read_value

REPO = Path(__file__).resolve().parents[1]
TABLE2 = str(REPO / "assets/programs/analognet2_cain_table2.txt")

TYPES: dict[str, type[EngineResult]] = {
    "cain": CainResult, "simulate": SimulateResult, "merit": MeritResult,
    "cappuccino": CappuccinoResult, "fcnnx": FcnnxResult, "bound": BoundResult,
}


def _cli(name: str, *argv: str) -> JobRequest:
    spec = get_engine(name)
    parser = argparse.ArgumentParser()
    spec.add_cli_arguments(parser)
    return spec.request_from_cli(parser.parse_args(list(argv)))


# The quick settings of the engines' own tests, through the command line (their stable interface);
# the first run per engine is the one mutated below.
RUNS: dict[str, Any] = {
    "cain": lambda: _cli("cain", "--preset", "gauss3", "--workers", "1", "--time", "20", "--max-nodes", "300"),
    "simulate": lambda: _cli("simulate", "--program", TABLE2, "--size", "32", "--filter", "analognet2-tool",
                             "--compare", TABLE2),
    "merit": lambda: _cli("merit", "--workload", "conv3x3", "--networks", "", "--curve", "32,64"),
    "cappuccino": lambda: _cli("cappuccino", "--no-compile", "--limit", "30", "--threads", "2"),
    "fcnnx": lambda: _cli("fcnnx", "--cnns", "lenet5", "--bandwidth", "0.5GB/s"),
    "bound": lambda: _cli("bound", "--network", "lenet5", "--memory", "8192", "--word-bits", "8", "--dataflows", "all"),
}

# Other shapes a result takes (nothing found, optional parts present or absent, other sources), each
# with what shows that the run really has that shape.
VARIANTS: list[tuple[str, Any, Any]] = [
    ("cain", lambda: _cli("cain", "--preset", "analognet2", "--workers", "1", "--time", "5", "--max-nodes", "1"),
     lambda r: not r["found"] and "method" not in r),
    ("simulate", lambda: _cli("simulate", "--program", TABLE2, "--size", "16", "--noise", "0.01"),
     lambda r: r["noise"]["enabled"] and "comparison" not in r),
    ("bound", lambda: _cli("bound", "--layer", "Ci=4,Hi=8,Wi=8,Co=4,Hk=3", "--memory", "4096", "--no-sweep"),
     lambda r: r["source"]["kind"] == "layer" and r["sweep"] == []),
    ("fcnnx", lambda: _cli("fcnnx", "--cnns", "lenet5,cifar10_quick", "--bandwidth", "0.5GB/s", "--objective",
                           "throughput", "--no-simulate"),
     lambda r: len(r["cnns"]) == 2 and "simulated" not in r and "simulated" not in r["baseline"]),
]
for _w in ("gemm", "conv5x5", "dilated", "strided", "residual", "correlation", "motion", "bilateral", "separable",
           "depthwise", "pixel-shuffle"):
    VARIANTS.append(("merit", lambda w=_w: _cli("merit", "--workload", w, "--networks", "", "--no-table-ix",
                                                 "--curve", "32"),
                     lambda r, w=_w: r["workload"] == w))
# (a compiled Cappuccino run's shape and round trip: tests/test_typed_results_cappuccino.py)


def _run(name: str, request: JobRequest) -> tuple[dict[str, Any], Any]:
    """The result's JSON form (as a session stores it) and what the engine's generator yielded last,
    recorded by the one run lifecycle."""
    yielded: list[Any] = []
    out = record_run(get_engine(name), request,
                     on_event=lambda ev: yielded.append(ev.data) if isinstance(ev, FinalResult) else None)
    assert out.status == "finished" and out.result is not None, out.error
    return out.result.to_json(), yielded[-1]


@pytest.fixture(scope="module")
def runs() -> dict[str, tuple[dict[str, Any], Any]]:
    """Each engine's result as JSON, and the object its run yielded."""
    return {name: _run(name, RUNS[name]()) for name in TYPES}


def _at(data: Any, path: tuple) -> tuple[Any, Any]:
    for key in path[:-1]:
        data = data[key]
    return data, path[-1]


def _where(path: tuple) -> str:
    return "result" + "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in path)


# ------------------------------------------------------------------ every engine
@pytest.mark.parametrize("name", list(TYPES))
def test_engine_declares_and_checks_its_result_type(runs, name):
    spec = get_engine(name)
    assert spec.result_type is TYPES[name] and issubclass(spec.result_type, EngineResult)
    data, yielded = runs[name]
    # the engine yields its typed result (JSON only at process and session boundaries)
    assert isinstance(yielded, spec.result_type) and yielded.to_json() == data


@pytest.mark.parametrize("name", list(TYPES))
def test_result_round_trips(runs, name):
    data, _ = runs[name]
    rtype = TYPES[name]
    assert rtype.check(data) == data
    assert list(rtype.check(data)) == list(data)              # same keys, same order
    stored = json.loads(json.dumps(data, allow_nan=False))    # plain JSON, as a session keeps it
    assert stored == data and rtype.check(stored) == data
    assert rtype.check(data, version=rtype.VERSION) == data


@pytest.mark.parametrize("name,request_of,has_shape", VARIANTS, ids=[f"{v[0]}-{i}" for i, v in enumerate(VARIANTS)])
def test_other_result_shapes_round_trip(name, request_of, has_shape):
    data, _ = _run(name, request_of())
    assert has_shape(data)
    assert TYPES[name].check(json.loads(json.dumps(data, allow_nan=False))) == data


def _chosen_time(r):
    p = (r["synthesis"].get("programs") or {}).get("parallel_inexact")
    return None if p is None else p["median_microseconds_per_image"] * 1e-6


HEADLINES = {
    "cain": ("length", lambda r: r["length"]),
    "simulate": ("max_error", lambda r: max(o["max_error"] for o in r["outputs"].values())),
    "merit": ("verification_ok", lambda r: r["verification"]["ok"]),
    "cappuccino": ("time_per_image_s", _chosen_time),
    "fcnnx": ("fps", lambda r: r["predicted"]["fps"]),
    "bound": ("optimal_traffic", lambda r: r["totals"]["optimal"]),
}


@pytest.mark.parametrize("name", list(TYPES))
def test_headline_leads_with_the_key_metric(runs, name):
    """The headline is the type's declared metrics, in order, the first the quantity a person compares."""
    from core.metrics import is_metric_value

    data, _ = runs[name]
    head = TYPES[name].from_json(data).headline()
    key, value_of = HEADLINES[name]
    assert list(head) == [m.name for m in TYPES[name].METRICS]
    assert 2 <= len(head) <= 8 and next(iter(head)) == key and head[key] == value_of(data)
    assert all(is_metric_value(v) for v in head.values())
    json.dumps(head, allow_nan=False)


# (field to delete, field to change, its new value, the message)
MUTATIONS = {
    "cain": (("improvements", 0, "nodes"), ("program", 2), 7, "expected str, got int 7"),
    "simulate": (("outputs", "A", "max_error"), ("array", "size"), "256", "expected int, got str '256'"),
    "merit": (("banks", "layouts", 1, "butterfly", "butterfly_ok"), ("verification", "ok"), 1,
              "expected bool, got int 1"),
    "cappuccino": (("inexact", "configurations", 0, "accuracy"), ("layers", 3, "name"), 5,
                   "expected str, got int 5"),
    "fcnnx": (("schedule", "makespan_s"), ("predicted", "fps", 0), None, "expected float, got null"),
    "bound": (("totals", "optimal"), ("layers", 0, "optimal", "tiling", "order"), ["N"],
              "expected str, got list of 1"),
}


@pytest.mark.parametrize("name", list(TYPES))
def test_missing_field_is_named(runs, name):
    data, _ = runs[name]
    for path in (MUTATIONS[name][0], (next(iter(data)),)):
        bad = copy.deepcopy(data)
        parent, key = _at(bad, path)
        del parent[key]
        with pytest.raises(InputError) as e:
            TYPES[name].check(bad)
        assert (e.value.where, e.value.message) == (_where(path), "missing field")


@pytest.mark.parametrize("name", list(TYPES))
def test_wrong_type_is_named(runs, name):
    data, _ = runs[name]
    _, path, value, message = MUTATIONS[name]
    bad = copy.deepcopy(data)
    parent, key = _at(bad, path)
    parent[key] = value
    with pytest.raises(InputError) as e:
        TYPES[name].check(bad)
    assert (e.value.where, e.value.message) == (_where(path), message)


@pytest.mark.parametrize("name", list(TYPES))
def test_unknown_field_is_refused(runs, name):
    data, _ = runs[name]
    bad = dict(data, colour="blue")
    with pytest.raises(InputError) as e:
        TYPES[name].check(bad)
    assert (e.value.where, e.value.message) == ("result.colour", "unknown field")


@pytest.mark.parametrize("name", list(TYPES))
def test_newer_version_is_refused(runs, name):
    data, _ = runs[name]
    rtype = TYPES[name]
    with pytest.raises(InputError) as e:
        rtype.check(data, version=rtype.VERSION + 1, path="session.runs[0].result")
    assert e.value.where == "session.runs[0].result" and "newer" in e.value.message
    assert f"up to {rtype.VERSION}" in e.value.message


def test_paths_name_odd_keys_and_typos(runs):
    data, _ = runs["merit"]
    bad = copy.deepcopy(data)
    bad["tiling"]["footprints"]["0:I"][1] = 6.5
    with pytest.raises(InputError) as e:
        MeritResult.check(bad)
    assert e.value.where == 'result.tiling.footprints["0:I"][1]' and e.value.message == "expected int, got float 6.5"
    bad = copy.deepcopy(runs["fcnnx"][0])
    bad["schedule"]["makespan"] = bad["schedule"].pop("makespan_s")
    with pytest.raises(InputError) as e:
        FcnnxResult.check(bad)
    assert e.value.where == "result.schedule.makespan_s"        # the missing one is found first
    bad["schedule"]["makespan_s"] = 1.0
    with pytest.raises(InputError, match="did you mean 'makespan_s'") as e:
        FcnnxResult.check(bad)
    assert e.value.where == "result.schedule.makespan"


def test_optional_and_extra_keys_keep_the_dict(runs):
    bound, _ = runs["bound"]
    assert set(BASELINES) <= set(bound["totals"]) and "ws" in bound["sweep"][0]
    bad = copy.deepcopy(bound)
    bad["totals"]["ws"] = "many"
    with pytest.raises(InputError) as e:
        BoundResult.check(bad)
    assert e.value.where == "result.totals.ws" and e.value.message == "expected int or null, got str 'many'"
    sim, _ = runs["simulate"]
    assert "comparison" in sim and "exported" not in sim
    bad = dict(sim, exported=None)                  # an absent optional key is left out, not written as null
    with pytest.raises(InputError) as e:
        SimulateResult.check(bad)
    assert e.value.where == "result.exported"


def test_stored_example_session_results_pass_their_types():
    doc = json.loads((REPO / "tests/data/sessions_v1/example_session.dfx").read_text(encoding="utf-8"))
    for name in ("cain", "simulate"):
        stored = doc["engines"][name]["result"]
        rtype = get_engine(name).result_type
        assert rtype is TYPES[name]
        assert rtype.check(stored, version=1) == stored
    head = CainResult.from_json(doc["engines"]["cain"]["result"]).headline()
    assert head["length"] == 21            # the README's "21 instructions in 10 s"
    shipped = read_document(REPO / "assets/example_session.dfx")
    assert shipped["version"] == 3 and {r["engine"] for r in shipped["runs"]} >= {"cain", "simulate", "bound"}
    kept = json.loads((REPO / "tests/data/sessions_v2/example_session_before_results_v3.dfx").read_text(encoding="utf-8"))
    for run in shipped["runs"] + kept["runs"]:
        rtype = TYPES[run["engine"]]
        checked = rtype.check(run["result"], version=run["result_version"])
        if run["result_version"] == rtype.VERSION:
            assert checked == run["result"], run["id"]
        else:                                   # an upgrade may add fields, never change or drop one
            assert _keeps(checked, run["result"]), run["id"]


def _keeps(upgraded: Any, stored: Any) -> bool:
    """Whether `upgraded` holds everything `stored` holds, with the same values."""
    if isinstance(stored, dict):
        return isinstance(upgraded, dict) and all(k in upgraded and _keeps(upgraded[k], v) for k, v in stored.items())
    if isinstance(stored, list):          # list items (layers, sweep rows) may gain fields too
        return isinstance(upgraded, list) and len(upgraded) == len(stored) and \
            all(_keeps(u, s) for u, s in zip(upgraded, stored))
    return upgraded == stored


# ------------------------------------------------------------------ versions and upgrades
@dataclass(kw_only=True)
class _Fake(EngineResult):
    """Version 3; version 1 called `total` "sum", version 2 had no unit."""

    VERSION = 3
    UPGRADES = {1: lambda d: {"total": d.pop("sum"), **d}, 2: lambda d: dict(d, unit="s")}
    total: int
    unit: str

    def headline(self) -> dict[str, float | int | str | None]:
        return {"total": self.total, "unit": self.unit}


def test_upgrades_bring_old_versions_forward():
    v1 = {"sum": 5}
    assert _Fake.from_json(v1, version=1) == _Fake(total=5, unit="s")
    assert v1 == {"sum": 5}                                   # the caller's dict is left alone
    assert _Fake.check({"total": 5}, version=2) == {"total": 5, "unit": "s"}
    assert _Fake.check({"total": 5, "unit": "ms"}) == {"total": 5, "unit": "ms"}
    with pytest.raises(InputError) as e:
        _Fake.check({"total": 5}, version=3)                  # read as version 3, the unit is missing
    assert (e.value.where, e.value.message) == ("result.unit", "missing field")
    with pytest.raises(InputError, match="newer"):
        _Fake.check({"total": 5, "unit": "s"}, version=4)
    with pytest.raises(InputError, match="cannot bring version 1 forward"):
        _Fake.check({"total": 5}, version=1)                  # no "sum" in what claims to be version 1
    for bad in (0, True, "1"):
        with pytest.raises(InputError, match="version"):
            _Fake.check({"total": 5, "unit": "s"}, version=bad)


def test_a_missing_upgrade_is_refused():
    @dataclass(kw_only=True)
    class Gap(EngineResult):
        VERSION = 3
        UPGRADES = {2: lambda d: d}
        total: int

    assert Gap.check({"total": 1}, version=2) == {"total": 1}
    with pytest.raises(InputError) as e:
        Gap.check({"total": 1}, version=1, path="run.result")
    assert e.value.where == "run.result" and "no upgrade from version 1 to 2" in e.value.message


# ------------------------------------------------------------------ the type-directed reader
@dataclass(kw_only=True)
class _Inner:
    name: str
    size: int = 3


@dataclass(kw_only=True)
class _Sample(EngineResult):
    n: int
    x: float
    s: str
    flag: bool
    nothing: None
    maybe: float | None
    either: int | str
    items: list[int]
    table: dict[str, float]
    pair: tuple[str, int]
    many: tuple[int, ...]
    kind: Literal["a", "b"]
    free: Any
    inner: _Inner
    inners: list[_Inner] = field(default_factory=list)
    note: str | None = optional_key()
    more: dict[str, int] = extra_keys()


GOOD = {"n": 1, "x": 2, "s": "s", "flag": False, "nothing": None, "maybe": None, "either": "e", "items": [1, 2],
        "table": {"a": 0.5}, "pair": ["p", 1], "many": [1, 2, 3], "kind": "a", "free": {"k": [1, None, "v"]},
        "inner": {"name": "i"}, "extra_count": 4}


def test_reader_accepts_and_writes_back():
    r = _Sample.from_json(GOOD)
    assert r.inner == _Inner(name="i", size=3) and r.pair == ("p", 1) and r.more == {"extra_count": 4}
    assert r.x == 2 and type(r.x) is int                      # an int is a float, and stays 2 (not 2.0)
    out = r.to_json()
    assert out == dict(GOOD, inner={"name": "i", "size": 3}, inners=[])
    assert "note" not in out and list(out)[-1] == "extra_count"
    assert _Sample.check(dict(GOOD, note="hi", maybe=0.25))["note"] == "hi"
    assert _Sample.from_json(GOOD).headline() == {}


@pytest.mark.parametrize("key,value,where,message", [
    ("n", True, "result.n", "expected int, got bool True"),
    ("n", 1.0, "result.n", "expected int, got float 1.0"),
    ("x", True, "result.x", "expected float, got bool True"),
    ("x", math.nan, "result.x", "expected a finite number, got nan"),
    ("x", math.inf, "result.x", "expected a finite number, got inf"),
    ("maybe", -math.inf, "result.maybe", "expected a finite number, got -inf"),
    ("maybe", "1", "result.maybe", "expected float or null, got str '1'"),
    ("s", None, "result.s", "expected str, got null"),
    ("flag", 0, "result.flag", "expected bool, got int 0"),
    ("nothing", 0, "result.nothing", "expected null, got int 0"),
    ("either", 1.5, "result.either", "expected int or str, got float 1.5"),
    ("items", [1, "2"], "result.items[1]", "expected int, got str '2'"),
    ("items", {"a": 1}, "result.items", "expected list, got object"),
    ("table", {"a": "b"}, "result.table.a", "expected float, got str 'b'"),
    ("pair", ["p"], "result.pair", "expected 2 items, got 1"),
    ("pair", ["p", "q"], "result.pair[1]", "expected int, got str 'q'"),
    ("many", [1, None], "result.many[1]", "expected int, got null"),
    ("kind", "c", "result.kind", "expected one of 'a', 'b', got str 'c'"),
    ("free", {"k": [math.nan]}, 'result.free.k[0]', "expected a finite number, got nan"),
    ("free", {1: 2}, "result.free", "expected a string key, got int 1"),
    ("free", {"k": {1, 2}}, "result.free.k", "expected a JSON value, got set"),
    ("inner", {"size": 2}, "result.inner.name", "missing field"),
    ("inner", {"name": "i", "colour": 1}, "result.inner.colour", "unknown field"),
    ("inners", [{"name": "a"}, "b"], "result.inners[1]", "expected object, got str 'b'"),
    ("note", None, "result.note", "expected str, got null"),
    ("extra_count", "4", "result.extra_count", "expected int, got str '4'"),
])
def test_reader_refuses_with_the_path(key, value, where, message):
    with pytest.raises(InputError) as e:
        _Sample.from_json(dict(GOOD, **{key: value}))
    assert (e.value.where, e.value.message) == (where, message)


def test_reader_picks_the_union_arm_that_fits():
    matrix = list[list[int]] | list[list[list[int]]]
    assert read_value(matrix, [[[1]], [[2]]], "k") == [[[1]], [[2]]]
    with pytest.raises(InputError) as e:
        read_value(matrix, [[[1]], [[2, "x"]]], "k")
    assert e.value.where == "k[1][0][1]"                      # the arm that got furthest explains
    with pytest.raises(TypeError):
        read_value(dict[int, int], {}, "k")                   # JSON object keys are strings
