"""Property tests (hypothesis) of every input parser: random and mutated inputs give either a valid
object or the project's own InputError (SessionError for sessions), never another exception -- no
IndexError, OverflowError, RecursionError, UnicodeDecodeError or numpy error from inside.

Each parser gets both kinds of input: random ones (texts, bytes, JSON values of any shape with NaN,
infinities and 400-digit numbers among them) and valid inputs with one part replaced or removed,
which get past the first checks and reach the deeper ones.
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import pytest
from tests.examples import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core import session as sessions
from core.bound.shapes import parse_layer_spec
from core.checks import check_settings, loads
from core.session import read_document
from core.engine import engines
from core.errors import InputError, SessionError
from core.library_items import layers_from_text, parse_kernel_text
from core.merit_transform.fileformat import workload_from_json as transform_from_json
from core.project import Project
from core.units import parse_bandwidth, parse_bytes
from core.workload import KernelSet, target_from_json, workload_from_json

ROOT = Path(__file__).resolve().parents[1]
# No example database (it would write .hypothesis/ into the repository), no deadline (shared machine).
QUICK = settings(max_examples=examples(150), deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
SLOW = settings(max_examples=examples(40), deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])

# ---------------------------------------------------------------- strategies
NUMBERS = (st.integers() | st.integers(min_value=-10 ** 400, max_value=10 ** 400)
           | st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from([0, 1, -1, 2 ** 63, -2 ** 63 - 1, 1e308]))
SCALARS = st.none() | st.booleans() | NUMBERS | st.text(max_size=12)
JSON = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner,
                                                                                         max_size=5), max_leaves=25)


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a JSON document (the root excluded)."""
    out = []
    items = doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else []
    for key, value in items:
        out.append((*prefix, key))
        out.extend(_paths(value, (*prefix, key)))
    return out


@st.composite
def mutated(draw: Any, base: Any, replacements: Any = JSON, max_changes: int = 2) -> Any:
    """`base` with one or two parts replaced by a drawn value, or removed."""
    doc = copy.deepcopy(base)
    for _ in range(draw(st.integers(1, max_changes))):
        places = _paths(doc)
        if not places:
            break
        path = draw(st.sampled_from(places))
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        if draw(st.booleans()) and isinstance(parent, dict):
            parent.pop(path[-1], None)
        else:
            parent[path[-1]] = draw(replacements)
    return doc


def _only_own_errors(fn: Any, *args: Any, errors: type[Exception] = InputError) -> Any:
    """Call; an InputError (errors) is a fine answer, anything else fails the property."""
    try:
        return fn(*args)
    except errors as exc:
        assert str(exc), "an error without a message"
        assert "\n" not in exc.where
        return None


# ---------------------------------------------------------------- kernels
G3 = [[1, 2, 1], [2, 4, 2], [1, 2, 1]]
KERNELS = {"kind": "kernels", "name": "k", "denominator": 16,
           "kernels": [{"name": "a", "values": G3}, {"name": "b", "values": [G3, G3]}]}
KERNEL_TEXT_CHARS = st.sampled_from(list("0123456789 ,;.-+eE[](){}\n\tnaifNI_x"))


@QUICK
@given(st.text(KERNEL_TEXT_CHARS, max_size=80) | st.text(max_size=40))
def test_kernel_text(text):
    mats = _only_own_errors(parse_kernel_text, text)
    if mats is not None:
        assert mats and all(m and all(row and len(row) == len(m[0]) for row in m) for m in mats)
        assert all(math.isfinite(v) for m in mats for row in m for v in row)


@QUICK
@given(JSON | mutated(KERNELS))
def test_kernel_json(doc):
    ks = _only_own_errors(KernelSet.from_json, doc, "")
    if ks is not None:
        ks.validate("k")                     # what was accepted stays valid
        json.dumps(ks.to_json(), allow_nan=False)


@SLOW
@given(st.binary(max_size=200) | st.builds(lambda d: json.dumps(d, allow_nan=True).encode(), JSON | mutated(KERNELS)))
def test_kernel_file(tmp_path_factory, data):
    from core.cain.engine import load_kernel_file

    path = tmp_path_factory.mktemp("k") / "k.json"
    path.write_bytes(data)
    _only_own_errors(load_kernel_file, str(path))


# ---------------------------------------------------------------- layer specs and units
SPEC = "name=c1,Ci=64,Hi=56,Wi=56,Co=128,Hk=3,Wk=3,stride=1,pad=1,groups=1,batch=1,dilation=1"
SPEC_CHARS = st.sampled_from(list("0123456789=,CiHoWkKbatchpdsrgneu-+ _.x9"))


@st.composite
def mutated_spec(draw: Any) -> str:
    parts = SPEC.split(",")
    i = draw(st.integers(0, len(parts) - 1))
    key = parts[i].split("=")[0]
    value = draw(st.sampled_from(["0", "-1", "", "nan", "1.5", "9" * 30, "9" * 5000, "2048", "65537", "x"])
                 | st.integers(-10, 10 ** 6).map(str))
    parts[i] = draw(st.sampled_from([f"{key}={value}", value, f"{key}={value}={value}", ""]))
    return ",".join(parts)


@QUICK
@given(st.text(SPEC_CHARS, max_size=60) | st.text(max_size=30) | mutated_spec())
def test_layer_spec(text):
    shape = _only_own_errors(parse_layer_spec, text)
    if shape is not None:
        assert shape.macs > 0 and shape.Ho > 0 and shape.Wo > 0
    _only_own_errors(layers_from_text, text)


UNIT_CHARS = st.sampled_from(list("0123456789.eE+-KkMmGgiBb/s naif "))


@QUICK
@given(st.text(UNIT_CHARS, max_size=30) | st.text(max_size=20) | st.integers(0, 10 ** 500).map(str))
def test_sizes_and_rates(text):
    size = _only_own_errors(parse_bytes, text)
    if size is not None:
        assert isinstance(size, int) and 0 < size < 2 ** 63
    rate = _only_own_errors(parse_bandwidth, text)
    if rate is not None:
        assert math.isfinite(rate) and rate > 0


# ---------------------------------------------------------------- workloads and targets
def _library() -> dict[str, list[dict[str, Any]]]:
    return sessions.to_json(Project.starter())["library"]


WORKLOAD_VALUES = [e["value"] for e in _library()["workloads"]] + [
    {"kind": "conv_layers", "layers": [SPEC]}, KERNELS,
    {"kind": "cnn_set", "cnns": ["lenet5"], "batch": 2, "onnx": []}]
TARGET_VALUES = [e["value"] for e in _library()["targets"]]


@QUICK
@given(JSON | st.sampled_from(WORKLOAD_VALUES).flatmap(mutated))
def test_workloads(doc):
    w = _only_own_errors(workload_from_json, doc)
    if w is not None:
        json.dumps(w.to_json(), allow_nan=False)
        assert workload_from_json(w.to_json()).to_json() == w.to_json()


@QUICK
@given(JSON | st.sampled_from(TARGET_VALUES).flatmap(mutated))
def test_targets(doc):
    t = _only_own_errors(target_from_json, doc)
    if t is not None:
        assert target_from_json(t.to_json()) == t


GEMM = {"name": "g", "parallel": [["m", 4], ["n", 5]], "accumulate": [["k", 6]], "operands": [
    {"name": "A", "shape": [4, 6], "map": {"m": [0, 1, 0], "k": [1, 1, 0]}},
    {"name": "B", "shape": [6, 5], "map": {"k": [0, 1, 0], "n": [1, 1, 0]}}], "reference": {"kind": "gemm"},
    "tile": {"m": 2}, "data": {"A": [[1.0] * 6] * 4}}


@QUICK
@given(JSON | mutated(GEMM, max_changes=1))
def test_transforms(doc):
    w = _only_own_errors(transform_from_json, doc)
    if w is not None and w.reference is not None:       # an accepted reference computes, or says why not
        import numpy as np

        _only_own_errors(w.reference, w.make_data(np.random.default_rng(0)))


# ---------------------------------------------------------------- engine settings
ENGINES = list(engines().values())


@QUICK
@given(st.sampled_from(ENGINES).flatmap(lambda spec: st.tuples(st.just(spec), JSON | mutated(spec.default_settings()))))
def test_engine_settings(spec_and_settings):
    spec, raw = spec_and_settings
    _only_own_errors(check_settings, spec.settings_schema, raw)


def _engine_checks() -> dict[str, Any]:
    """Each engine's own settings check, as its run calls it first (with a fitting target)."""
    from core.bound.engine import _settings as bound_settings
    from core.cain.engine import _settings as cain_settings
    from core.cappuccino.engine import _settings as cappuccino_settings
    from core.engine import JobRequest
    from core.fcnnx.engine import _settings as fcnnx_settings
    from core.simulate.engine import checked_settings as simulate_settings
    from core.target_cost.engine import checked_settings as cost_settings
    from core.merit.engine import check_settings as merit_settings
    from core.workload import Scamp5Target

    return {"cain": lambda s: cain_settings(s, Scamp5Target()), "simulate": simulate_settings,
            "merit": merit_settings, "cappuccino": cappuccino_settings,
            "bound": lambda s: bound_settings(JobRequest(None, None, s)),
            "fcnnx": lambda s: fcnnx_settings(JobRequest(None, None, s)),
            "cost": lambda s: cost_settings(JobRequest(None, None, s))}


ENGINE_CHECKS = _engine_checks()


@QUICK
@given(st.sampled_from(ENGINES).flatmap(lambda spec: st.tuples(st.just(spec), mutated(spec.default_settings()))))
def test_each_engines_own_settings_check(spec_and_settings):
    spec, raw = spec_and_settings
    if isinstance(raw, dict):
        checked = _only_own_errors(ENGINE_CHECKS[spec.name], raw)
        if checked is not None:                 # what an engine accepts, its schema accepts too
            check_settings(spec.settings_schema, {k: v for k, v in raw.items()})


# ---------------------------------------------------------------- sessions
def _session_with_runs() -> dict[str, Any]:
    doc = read_document(ROOT / "assets" / "example_session.dfx")
    doc["runs"] = [r for r in doc["runs"] if r["id"] in ("r1", "r2")]
    return doc


STARTER = sessions.to_json(Project.starter())
WITH_RUNS = _session_with_runs()


@SLOW
@given(JSON | mutated(STARTER) | mutated(WITH_RUNS))
def test_session_documents(doc):
    p = _only_own_errors(sessions.from_json, doc, errors=SessionError)
    if p is not None:
        again = sessions.to_json(p)
        json.dumps(again, allow_nan=False)             # what opened can be saved again


@SLOW
@given(st.binary(max_size=300) | st.builds(lambda d: json.dumps(d, allow_nan=True), mutated(STARTER, max_changes=1))
       | st.builds(lambda n: "[" * n + "]" * n, st.integers(50, 200_000)))
def test_session_files(tmp_path_factory, content):
    path = tmp_path_factory.mktemp("s") / "s.dfx"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    _only_own_errors(sessions.load, path, errors=SessionError)


@QUICK
@given(st.text(max_size=60) | st.builds(lambda d: json.dumps(d, allow_nan=True), JSON))
def test_json_text(text):
    _only_own_errors(loads, text, "x.json")


def test_the_mutations_reach_past_the_first_checks():
    """A property test that only ever sees its inputs refused at the door tests little: some mutated
    sessions must open (a changed note, name or setting within range)."""
    opened = []

    # all 40 draws, the same ones each run: this checks the generator, and 10 random draws (the fast
    # suite's scaled count) opened none now and then
    @settings(max_examples=40, deadline=None, database=None, derandomize=True)
    @given(mutated(STARTER, max_changes=1))
    def probe(doc):
        try:
            sessions.from_json(doc)
            opened.append(True)
        except SessionError:
            pass

    probe()
    assert opened, "no mutated session opened"


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000, '{"a": ' * 50_000 + "1" + "}" * 50_000])
def test_deep_json_is_refused_not_recursed(text):
    with pytest.raises(InputError, match="nested too deeply"):
        loads(text, "deep.json")
