"""Fuzzing every reader of a user's file (issue 34): kernel files, transform files, sessions, program
files and ONNX models, each fed random bytes, damaged text and valid documents with random changes.
Each reader either accepts its input or raises the project's InputError (core/errors.py) with a
message; any other exception (a KeyError, a numpy error, a RecursionError) fails the test with the
input that caused it, shrunk by hypothesis.

Bounded for CI: a fixed number of examples per reader, derandomized (the same examples every run,
so a failure is never a matter of luck), about 20 s in all on the build machine. Studies get their
own reader tests with core/study.
"""

from __future__ import annotations

import copy
import json
import tempfile
from pathlib import Path
from typing import Any, Callable

import pytest
from tests.examples import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.checks import deepcopy_json
from core.errors import InputError

ROOT = Path(__file__).resolve().parents[1]
PROGRAM = ROOT / "assets" / "programs" / "analognet2_cain_table2.txt"
REGISTERS = ("A", "B", "C", "D", "E", "F")

FUZZ = settings(max_examples=examples(60), deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.fixture(scope="module")
def folder():
    with tempfile.TemporaryDirectory(prefix="fuzz_readers_") as tmp:
        yield Path(tmp)


def accepts_or_refuses(read: Callable[[Path], Any], path: Path, data: bytes) -> None:
    """`read(path)` on a file holding `data` returns, or raises InputError with a message."""
    path.write_bytes(data)
    try:
        read(path)
    except InputError as exc:
        assert str(exc).strip(), "an InputError without a message"
    # anything else propagates: hypothesis reports it with the (shrunk) input


# ---------------------------------------------------------------- what the inputs are made of
# Leaves a hand-edited file may hold: the edge numbers core.checks refuses, and names the formats use.
NAMES = ["A", "B", "k", "m", "n", "k1", "gemm", "conv2d", "dot", "kernels", "scamp5", "cain", "values", "finished",
         "r1", "w1", "t1", ""]
LEAVES = st.one_of(st.none(), st.booleans(), st.integers(-3, 20), st.integers(-(2 ** 70), 2 ** 70),
                   st.floats(allow_nan=True, allow_infinity=True), st.sampled_from(NAMES), st.text(max_size=6))
KEYS = st.one_of(st.sampled_from(["name", "values", "kernels", "denominator", "kind", "shape", "map", "pad",
                                  "operands", "parallel", "accumulate", "strategy", "data", "tile", "version",
                                  "library", "engines", "runs", "settings", "value", "id", "result"]),
                 st.text(max_size=5))
JSON = st.recursive(LEAVES, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4),
                    max_leaves=10)


def _paths(doc: Any, prefix: tuple = ()) -> list[tuple]:
    """Every place in a document (the root too), as a path of keys and indices."""
    out = [prefix]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _paths(v, (*prefix, i))
    return out


@st.composite
def mutated(draw: Any, valid: Any, changes: int = 3) -> Any:
    """A valid document with up to `changes` random edits: a value replaced, a key or item removed, an
    item repeated."""
    doc = deepcopy_json(valid)          # copy.deepcopy's copy, several times faster on a session
    for _ in range(draw(st.integers(1, changes))):
        path = draw(st.sampled_from(_paths(doc)))
        if not path:
            doc = draw(JSON) if draw(st.integers(0, 9)) == 0 else doc
            continue
        parent = doc
        for p in path[:-1]:
            parent = parent[p]
        key = path[-1]
        action = draw(st.sampled_from(["replace", "replace", "delete", "repeat"]))
        if action == "replace":
            parent[key] = draw(JSON)
        elif action == "delete":
            del parent[key]
        elif isinstance(parent, list):
            parent.insert(key, copy.deepcopy(parent[key]))
        else:
            parent[key] = [copy.deepcopy(parent[key])] * 2
    return doc


def _text(doc: Any) -> bytes:
    return json.dumps(doc, allow_nan=True).encode()


@st.composite
def damaged(draw: Any, good: bytes) -> bytes:
    """A good file's bytes cut short, with bytes flipped, a BOM in front, or CRLF line ends."""
    data = good
    how = draw(st.sampled_from(["cut", "flip", "bom", "crlf", "insert"]))
    if how == "cut":
        data = data[:draw(st.integers(0, len(data)))]
    elif how == "flip" and data:
        i = draw(st.integers(0, len(data) - 1))
        data = data[:i] + bytes([draw(st.integers(0, 255))]) + data[i + 1:]
    elif how == "bom":
        data = b"\xef\xbb\xbf" + data
    elif how == "crlf":
        data = data.replace(b"\n", b"\r\n")
    else:
        i = draw(st.integers(0, len(data)))
        data = data[:i] + draw(st.binary(max_size=8)) + data[i:]
    return data


def inputs(valid: Any) -> Any:
    """Random bytes, a damaged file, or a valid document with random changes, as file bytes."""
    good = valid if isinstance(valid, bytes) else _text(valid)
    parts = [st.binary(max_size=300), damaged(good)]
    if not isinstance(valid, bytes):
        parts.append(mutated(valid).map(_text))
    return st.one_of(*parts)


# ---------------------------------------------------------------- kernel files
KERNELS = {"name": "blur", "denominator": 16, "kernels": [
    {"name": "k1", "values": [[1, 2, 1], [2, 4, 2], [1, 2, 1]]},
    {"name": "k2", "values": [[[0, 1, 0], [1, -4, 1], [0, 1, 0]], [[1, 0, -1], [2, 0, -2], [1, 0, -1]]]}]}


def read_kernels(path: Path) -> None:
    """The kernel file as Cain reads it, then approximated at every d the engine allows (issue 34:
    d = 9 or 10 crashed on coefficients the Goal could not hold)."""
    from core.cain.approx import MAX_D, approximate
    from core.cain.engine import load_kernel_file

    ks = load_kernel_file(str(path))
    for d in (None, 0, 4, MAX_D):
        approximate(ks, d)


@pytest.mark.slow
@FUZZ
@given(data=inputs(KERNELS))
def test_kernel_files(folder, data):
    accepts_or_refuses(read_kernels, folder / "k.json", data)


@FUZZ
@given(data=inputs(KERNELS))
def test_library_import(folder, data):
    """The window's File > Import (core.library_items.import_file): it tells the kind from the content."""
    from core.library_items import import_file

    accepts_or_refuses(lambda p: import_file(str(p)), folder / "item.json", data)


# ---------------------------------------------------------------- MERIT transform files
TRANSFORM = {"name": "g", "parallel": [["m", 4], ["n", 5]], "accumulate": [["k", 6]], "operands": [
    {"name": "A", "shape": [4, 6], "pad": [0, 1], "map": {"m": [0, 1, 0], "k": [1, 1, 0]}},
    {"name": "B", "shape": [6, 5], "map": {"k": [0, 1, 0], "n": [1, 1, 0]}}],
    "tile": {"m": 2}, "reference": {"kind": "gemm"}, "data": {"B": [[1.0] * 5] * 6}}


def read_transform(path: Path) -> None:
    """The transform file as MERIT reads it, made into a workload, its data made and its reference run."""
    import numpy as np

    from core.merit_transform.fileformat import load_transform_file, workload_from_json

    wl = workload_from_json(load_transform_file(str(path)))
    data = wl.make_data(np.random.default_rng(0))
    if wl.reference is not None:
        wl.reference(data)


@FUZZ
@given(data=inputs(TRANSFORM))
def test_transform_files(folder, data):
    accepts_or_refuses(read_transform, folder / "t.json", data)


# ---------------------------------------------------------------- sessions
def _session_doc() -> dict[str, Any]:
    """The example session with two of its runs (a Cain search and a simulator run): small, valid."""
    from core import session

    doc = session.read_document(ROOT / "assets" / "example_session.dfx")
    doc["runs"] = [r for r in doc["runs"] if r["id"] in ("r1", "r2")]
    return doc


SESSION = _session_doc()


def read_session(path: Path) -> None:
    from core import session

    session.load(path)


@settings(FUZZ, max_examples=examples(80))
@given(data=inputs(SESSION))
def test_sessions(folder, data):
    accepts_or_refuses(read_session, folder / "s.dfx", data)


@FUZZ
@given(doc=mutated(SESSION, changes=2))
def test_sessions_compressed(folder, doc):
    """As the app saves them (gzip): the same checks after decompression."""
    import gzip

    accepts_or_refuses(read_session, folder / "z.dfx", gzip.compress(_text(doc)))


# ---------------------------------------------------------------- simulator programs
def read_program(path: Path) -> None:
    from core.simulate.sources import from_file

    from_file(str(path), REGISTERS)


LINES = ["add(A, B, C);", "sub(A, B, C);", "div2(A, A);", "mov2x(B, A, north, east);", "movx(C, B, west);",
         "neg(D, A);", "abs(A, B);", "add(Q, A, B);", "add(A, B);", "frobnicate(A);", "# outputs: A B",
         "# input: A", "# input: Z", "# outputs:", "#", "", "add(A, A, A)", "add(A, B, C); add(D, E, F);",
         "\ufeffadd(A, B, C);", "add(A,\tB, C);\r", "mov2x(A, A, up, down);"]


@FUZZ
@given(data=st.one_of(inputs(PROGRAM.read_bytes()),
                      st.lists(st.sampled_from(LINES), max_size=12).map(lambda ls: "\n".join(ls).encode())))
def test_program_files(folder, data):
    accepts_or_refuses(read_program, folder / "p.txt", data)


# ---------------------------------------------------------------- ONNX models (through their import)
OPS = ["Conv", "MaxPool", "AveragePool", "Relu", "Flatten", "Gemm", "Add", "BatchNormalization", "Softmax",
       "GlobalAveragePool", "Concat", "Identity"]


@st.composite
def onnx_models(draw: Any) -> bytes:
    """A small CNN with random shapes, attributes and weights (zero, negative or huge strides, kernels
    larger than the image, NaN weights, operators in odd places), as ONNX file bytes."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    small = st.integers(-1, 5)
    c, hw = draw(st.integers(1, 3)), draw(st.integers(1, 9))
    maps, k = draw(st.integers(0, 4)), draw(small)
    stride, pad, dil = draw(small), draw(st.integers(-1, 3)), draw(st.integers(0, 2))
    weights = np.full((max(maps, 0), c, max(k, 1), max(k, 1)), draw(st.floats(allow_nan=True, allow_infinity=True,
                                                                              width=32)), np.float32)
    nodes = [helper.make_node("Conv", ["x", "w"], ["t0"], name="conv", kernel_shape=[k, k], strides=[stride, stride],
                              pads=[pad] * 4, dilations=[dil, dil])]
    inits = [numpy_helper.from_array(weights, "w")]
    last, rank = "t0", 4
    for i, op in enumerate(draw(st.lists(st.sampled_from(OPS), max_size=3)), start=1):
        rank = 2 if op in ("Flatten", "Gemm") else rank
        ins = [last]
        attrs: dict[str, Any] = {}
        if op in ("MaxPool", "AveragePool"):
            attrs = {"kernel_shape": [draw(small)] * 2, "strides": [draw(small)] * 2}
        elif op == "Conv":
            ins.append("w")
            attrs = {"kernel_shape": [max(k, 1)] * 2}
        elif op == "Gemm":
            n = draw(st.integers(1, 4))
            inits.append(numpy_helper.from_array(np.ones((n, draw(st.integers(1, 50))), np.float32), f"g{i}"))
            ins.append(f"g{i}")
            attrs = {"transB": 1}
        elif op in ("Add", "Concat"):
            ins.append(last)
            attrs = {"axis": 1} if op == "Concat" else {}
        elif op == "BatchNormalization":
            for name in ("scale", "bias", "mean", "var"):
                inits.append(numpy_helper.from_array(np.ones(max(maps, 1), np.float32), f"{name}{i}"))
                ins.append(f"{name}{i}")
        nodes.append(helper.make_node(op, ins, [f"t{i}"], name=f"n{i}", **attrs))
        last = f"t{i}"
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, hw, hw])],
                              [helper.make_tensor_value_info(last, TensorProto.FLOAT, ["d0", "d1", "d2", "d3"][:rank])],
                              inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model.SerializeToString()


def read_onnx(path: Path) -> None:
    """Both ONNX readers: the layer table (bound, f-CNNx) and Cappuccino's op DAG."""
    from core.cappuccino.graph_import import import_onnx
    from core.nets.onnx_import import load_onnx

    for read in (load_onnx, import_onnx):
        try:
            read(str(path))
        except InputError:
            pass


@settings(FUZZ, max_examples=examples(80))
@given(data=st.one_of(onnx_models(), onnx_models().flatmap(damaged), st.binary(max_size=200)))
def test_onnx_models(folder, data):
    accepts_or_refuses(read_onnx, folder / "m.onnx", data)
