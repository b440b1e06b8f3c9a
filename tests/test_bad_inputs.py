"""A corpus of bad inputs, run through the command line: every one must end with exit code 2 and
one line `error: <where>: <what>` that names the field, with no traceback, no hang and no file
written. Grouped by input kind (one test per kind, each listing all its failures at once).

The command lines run in child processes of tests/cli_batch.py, which imports the app once and
forks a real process per case (its own exit code, output, working folder and process group), all
cases of all kinds in one batch, in parallel; a few of them also run as a plain `python main.py`
to show the two agree. The GUI's `--screenshot` cases start the whole app each, and Ctrl-C is sent
to a running Cain search with worker processes.
"""

from __future__ import annotations

import copy
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow          # hundreds of command-line processes

ROOT = Path(__file__).resolve().parents[1]
MAIN = str(ROOT / "main.py")
PROGRAM = str(ROOT / "assets" / "programs" / "analognet2_cain_table2.txt")
EXAMPLE = ROOT / "assets" / "example_session.dfx"
CASE_TIMEOUT_S = 60.0


def read_document(path: Path) -> Any:
    """A session file's document (gzip-compressed or plain JSON), as core.session reads it."""
    from core.session import read_document as read

    return read(path)


@dataclass(frozen=True)
class Bad:
    kind: str
    name: str
    argv: tuple[str, ...]
    names: str                                   # the message must contain this (the field)
    files: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)
    says: str = ""                               # and this, when given (the problem)
    real: bool = False                           # also run as a plain `python main.py`


CASES: list[Bad] = []


def bad(kind: str, name: str, argv: list[str], names: str, files: dict[str, Any] | None = None, says: str = "",
        real: bool = False) -> None:
    CASES.append(Bad(kind, name, tuple(argv), names, dict(files or {}), says, real))


def _json(doc: Any) -> str:
    return json.dumps(doc, allow_nan=True)


# ================================================================ kernel files (cain --kernels)
def _kernels(values: Any, **top: Any) -> str:
    return _json({"kernels": [{"name": "k", "values": values}], **top})


G3 = [[1, 2, 1], [2, 4, 2], [1, 2, 1]]


def _kernel_case(name: str, content: Any, names: str, says: str = "", real: bool = False) -> None:
    bad("kernel_file", name, ["cain", "--kernels", "k.json", "--time", "1", "--quiet"], names, {"k.json": content},
        says, real)


for _name, _content, _names, _says in [
    ("binary", bytes(range(256)) * 8, "k.json", "UTF-8"),
    ("utf16", _kernels(G3).encode("utf-16"), "k.json", "UTF-16"),
    ("latin1", _kernels(G3).replace('"k"', '"k\u00e9"').encode("latin-1"), "k.json", "UTF-8"),
    ("empty_file", "", "k.json", "empty"),
    ("whitespace_only", " \n\t\n", "k.json", "empty"),
    ("truncated", _kernels(G3)[:-7], "k.json:1", "not valid JSON"),
    ("trailing_garbage", _kernels(G3) + " }", "k.json:1", "not valid JSON"),
    ("top_level_list", "[[1, 2, 1]]", "k.json", "expected an object"),
    ("top_level_number", "42", "k.json", "expected an object"),
    ("no_kernels_key", _json({"kernel": []}), "kernels", "missing"),
    ("no_kernels", _json({"kernels": []}), "kernels", "no kernels"),
    ("kernels_object", _json({"kernels": {"a": G3}}), "kernels", "expected list"),
    ("kernel_is_number", _json({"kernels": [7]}), "kernels[0]", "expected an object"),
    ("values_missing", _json({"kernels": [{"name": "k"}]}), "kernels[0].values", "missing"),
    ("values_empty", _kernels([]), "kernels[0].values", "empty"),
    ("one_empty_row", _kernels([[]]), "kernels[0].values", "row 1 is empty"),
    ("all_rows_empty", _kernels([[], [], []]), "kernels[0].values", "row 1 is empty"),
    ("second_row_empty", _kernels([[1, 2, 1], []]), "kernels[0].values", "row 2"),
    ("row_is_number", _kernels([[1, 2, 1], 5, [1, 2, 1]]), "kernels[0].values", "row 2"),
    ("ragged", _kernels([[1, 2, 1], [2, 4], [1, 2, 1]]), "kernels[0].values", "ragged"),
    ("channel_sizes_differ", _kernels([G3, [[1] * 5] * 5]), "kernels[0].values", "channel 2 is 5x5, channel 1 is 3x3"),
    ("channel_is_row", _kernels([G3, [1, 2, 3]]), "kernels[0].values", "channel 2"),
    ("coefficient_400_digits", _kernels([[1, 2, 1], [2, int("7" * 400), 2], [1, 2, 1]]),
     "kernels[0].values[1][1]", "400 digits"),
    ("coefficient_5000_digits", _kernels([[0]]).replace("0", "3" * 5000), "kernels[0].values[0][0]", "5000 digits"),
    ("coefficient_1e400", _kernels(G3).replace("4", "1e400", 1), "kernels[0].values[1][1]", "floating-point range"),
    ("coefficient_nan", _kernels([[1, 2, 1], [2, float("nan"), 2], [1, 2, 1]]), "kernels[0].values[1][1]", "NaN"),
    ("coefficient_minus_infinity", _kernels([[float("-inf")]]), "kernels[0].values[0][0]", "range"),
    ("coefficient_string", _kernels([[1, "2", 1], [2, 4, 2], [1, 2, 1]]), "kernels[0].values", "row 1, column 2"),
    ("coefficient_bool", _kernels([[True]]), "kernels[0].values", "not a number"),
    ("coefficient_null", _kernels([[1, None, 1]]), "kernels[0].values", "not a number"),
    ("eight_by_eight", _kernels([[1] * 8] * 8), "kernels[0].values", "limit is 7x7"),
    ("denominator_zero", _kernels(G3, denominator=0), "denominator", "1.."),
    ("denominator_negative", _kernels(G3, denominator=-16), "denominator", "1.."),
    ("denominator_fraction", _kernels(G3, denominator=1.5), "denominator", "expected int"),
    ("denominator_string", _kernels(G3, denominator="16"), "denominator", "expected int"),
    ("denominator_huge", _kernels(G3, denominator=10 ** 40), "denominator", "64-bit"),
    ("name_not_text", _json({"kernels": [{"name": ["k"], "values": G3}]}), "kernels[0].name", "expected str"),
    ("other_kind", _json({"kind": "fpsp_filter", "preset": "gauss3"}), "kind", "expected kind 'kernels'"),
    ("nested_100000", "[" * 100_000 + "]" * 100_000, "k.json", "nested too deeply"),
    ("nested_200_in_values", _json({"kernels": [{"values": json.loads("[" * 200 + "]" * 200)}]}), "k.json",
     "nested too deeply"),
]:
    _kernel_case(_name, _content, _names, _says, real=_name in ("binary", "channel_sizes_differ"))
bad("kernel_file", "missing_file", ["cain", "--kernels", "nope.json", "--quiet"], "nope.json", says="cannot read")
bad("kernel_file", "a_folder", ["cain", "--kernels", ".", "--quiet"], ".", says="folder")

# ================================================================ cain options
_CAIN = ["cain", "--preset", "gauss3", "--quiet"]
for _name, _extra, _names in [
    ("time_nan", ["--time", "nan"], "--time"), ("time_inf", ["--time", "inf"], "--time"),
    ("time_1e400", ["--time", "1e400"], "--time"), ("time_negative", ["--time", "-2"], "settings.time_s"),
    ("time_zero", ["--time", "0"], "settings.time_s"), ("time_two_days", ["--time", "172800"], "settings.time_s"),
    ("time_text", ["--time", "ten"], "--time"), ("registers_one", ["--registers", "1"], "target.registers"),
    ("registers_27", ["--registers", "27"], "target.registers"),
    ("registers_10e20", ["--registers", "1" + "0" * 20], "--registers"),
    ("workers_zero", ["--workers", "0"], "settings.workers"), ("workers_huge", ["--workers", "9" * 40], "--workers"),
    ("max_nodes_zero", ["--max-nodes", "0"], "settings.max_nodes"),
    ("max_nodes_10e30", ["--max-nodes", "1" + "0" * 30], "--max-nodes"),
    ("d_negative", ["--d", "-1"], "d: d must be"), ("d_eleven", ["--d", "11"], "d: d = 11"),
    ("tolerance_nan", ["--tolerance", "NaN"], "--tolerance"),
    ("tolerance_negative", ["--tolerance", "-0.5"], "tolerance: tolerance must be"),
    ("seed_share_one", ["--seed-share", "1"], "settings.seed_share"),
    ("seed_share_inf", ["--seed-share", "-inf"], "--seed-share"),
    ("traversal_unknown", ["--traversal", "bfs"], "--traversal"), ("isa_unknown", ["--isa", "avx"], "--isa"),
    ("unknown_option", ["--colour", "red"], "--colour"),
]:
    bad("cain_options", _name, _CAIN + _extra, _names, real=_name == "time_nan")
bad("cain_options", "no_workload", ["cain", "--quiet"], "--preset")
bad("cain_options", "mode_unknown", _CAIN + ["--mode", "java"], "--mode")
bad("cain_options", "mode_published_is_gone", _CAIN + ["--mode", "published"], "--mode")
bad("cain_options", "unknown_preset", ["cain", "--preset", "gauss7"], "--preset")

# ================================================================ simulate options and files
_SIM = ["simulate", "--program", PROGRAM, "--quiet"]
for _name, _extra, _names in [
    ("seed_negative", ["--seed", "-1"], "settings.seed"), ("seed_2e31", ["--seed", str(2 ** 31)], "settings.seed"),
    ("seed_10e30", ["--seed", "1" + "0" * 30], "--seed"), ("noise_nan", ["--noise", "nan"], "--noise"),
    ("noise_negative", ["--noise", "-0.01"], "settings.noise"),
    ("fixed_pattern_nan", ["--noise", "0.01", "--fixed-pattern", "nan"], "--fixed-pattern"),
    ("fixed_pattern_inf", ["--noise", "0.01", "--fixed-pattern", "inf"], "--fixed-pattern"),
    ("fixed_pattern_negative", ["--fixed-pattern", "-1"], "settings.fixed_pattern"),
    ("saturation_nan", ["--saturation", "nan"], "--saturation"),
    ("saturation_negative", ["--saturation", "-3"], "settings.saturation"),
    ("size_zero", ["--size", "0"], "target.array_size"), ("size_10e20", ["--size", "1" + "0" * 20], "--size"),
    ("size_too_big", ["--size", "100000"], "target.array_size"), ("registers_zero", ["--registers", "0"],
                                                                  "target.registers"),
    ("input_unknown", ["--input", "Q"], "input register"), ("outputs_unknown", ["--outputs", "A,Z"],
                                                            "output registers"),
    ("time_nan", ["--time", "nan"], "--time"), ("filter_unknown", ["--filter", "gauss9"], "--filter"),
    ("image_missing", ["--image", "nothere.png"], "nothere.png"), ("pattern_unknown", ["--image", "pattern:plaid"],
                                                                   "pattern:plaid"),
    ("compare_missing", ["--compare", "other.txt"], "other.txt"),
    ("export_into_missing_folder", ["--export", "no/such/dir/steps.gif"], "steps.gif"),
]:
    bad("simulate", _name, _SIM + _extra, _names)
for _name, _content, _names in [
    ("program_binary", bytes(range(256)), "p.txt"), ("program_empty", "", "p.txt"),
    ("program_comments_only", "# outputs: A\n# nothing else\n", "p.txt"),
    ("program_unknown_macro", "frobnicate(A, B);\n", "p.txt:line 1"),
    ("program_bad_register", "add(A, B, Q);\n", "p.txt:line 1"),
]:
    bad("simulate", _name, ["simulate", "--program", "p.txt", "--quiet"], _names, {"p.txt": _content})
for _name, _content in [("image_not_png", "hello"), ("image_truncated_png", b"\x89PNG\r\n\x1a\n\0\0")]:
    bad("simulate", _name, _SIM[:-1] + ["--image", "x.png", "--quiet"], "x.png", {"x.png": _content})

# ================================================================ MERIT options and transform files
_MERIT = ["merit", "--workload", "gemm", "--networks", "", "--no-table-ix", "--curve", "32", "--quiet"]
for _name, _extra, _names in [
    ("seed_negative", ["--seed", "-7"], "settings.seed"), ("seed_10e30", ["--seed", "9" * 31], "--seed"),
    ("banks_three", ["--banks", "3"], "settings.banks"), ("banks_128", ["--banks", "128"], "settings.banks"),
    ("alus_33", ["--alus", "33"], "settings.alus"), ("alus_10e30", ["--alus", "1" + "0" * 30], "--alus"),
    ("bandwidth_nan", ["--bandwidth", "nan"], "--bandwidth"),
    ("bandwidth_400_digits", ["--bandwidth", "9" * 400 + "GB/s"], "--bandwidth"),
    ("bandwidth_zero", ["--bandwidth", "0GB/s"], "--bandwidth"),
    ("bandwidth_unit", ["--bandwidth", "3 furlongs"], "--bandwidth"),
    ("curve_not_multiple", ["--curve", "32,48"], "--curve"), ("curve_text", ["--curve", "lots"], "--curve"),
    ("tile_zero", ["--tile", "m=0"], "--tile"), ("tile_10e30", ["--tile", "m=" + "9" * 30], "settings.tile.m"),
    ("tile_unknown_index", ["--tile", "q=4"], "settings.tile.q"),
    ("network_unknown", ["--networks", "lenet6"], "settings.networks[0]"),
    ("workload_unknown", ["--workload", "gemv"], "--workload"),
]:
    bad("merit_options", _name, (_MERIT + _extra) if _name != "network_unknown"
        else ["merit", "--workload", "gemm", "--no-table-ix", "--curve", "32", "--quiet"] + _extra, _names)

_GEMM = {"name": "g", "parallel": [["m", 4], ["n", 5]], "accumulate": [["k", 6]], "operands": [
    {"name": "A", "shape": [4, 6], "map": {"m": [0, 1, 0], "k": [1, 1, 0]}},
    {"name": "B", "shape": [6, 5], "map": {"k": [0, 1, 0], "n": [1, 1, 0]}}], "reference": {"kind": "gemm"}}


def _gemm(**change: Any) -> str:
    d = copy.deepcopy(_GEMM)
    for k, v in change.items():
        d[k] = v
    return _json(d)


def _gemm_operand(i: int, **change: Any) -> str:
    d = copy.deepcopy(_GEMM)
    d["operands"][i].update(change)
    return _json(d)


for _name, _content, _names in [
    ("binary", bytes(range(256)) * 4, "t.json"), ("utf16", _gemm().encode("utf-16"), "t.json"),
    ("empty", "", "t.json"), ("truncated", _gemm()[:40], "t.json:1"), ("a_list", "[1, 2]", "t.json"),
    ("nested_100000", "{\"a\": " + "[" * 100_000 + "]" * 100_000 + "}", "t.json"),
    ("data_nan", _gemm(data={"A": [[float("nan")] * 6] * 4}), "data.A[0][0]"),
    ("data_infinity", _gemm(data={"B": [[float("inf")] * 5] * 6}), "data.B[0][0]"),
    ("data_400_digits", _gemm(data={"A": [[int("5" * 400)] * 6] * 4}), "data.A[0][0]"),
    ("data_1e200", _gemm(data={"A": [[1e200] * 6] * 4}), "data.A"),
    ("data_text", _gemm(data={"A": [["x"] * 6] * 4}), "data.A"),
    ("data_wrong_shape", _gemm(data={"A": [[1.0] * 5] * 4}), "data.A"),
    ("size_10e20", _gemm(parallel=[["m", 10 ** 20], ["n", 5]]), "parallel[0][1]"),
    ("size_3e9", _gemm(accumulate=[["k", 3 * 10 ** 9]]), "accumulate[0]"),
    ("size_zero", _gemm(parallel=[["m", 0], ["n", 5]]), "parallel[0]"),
    ("shape_10e20", _gemm_operand(0, shape=[10 ** 20, 6]), "operands[0].shape[0]"),
    # 2^40 elements (4 TiB as float32): over the memory of any machine, so refused everywhere
    ("shape_too_many_elements", _gemm_operand(0, shape=[2 ** 20, 2 ** 20]), "operands[0].shape"),
    # 2^44 outputs x 2^20 steps each: the steps overflow the 64-bit count (a 4096^3 GEMM is accepted now)
    ("steps_over_int64", _gemm(parallel=[["m", 2 ** 22], ["n", 2 ** 22]], accumulate=[["k", 2 ** 20]],
                               operands=[{"name": "A", "shape": [2 ** 22, 2 ** 20], "map": {"m": [0, 1, 0], "k": [1, 1, 0]}},
                                         {"name": "B", "shape": [2 ** 20, 2 ** 22], "map": {"k": [0, 1, 0], "n": [1, 1, 0]}}]),
     "accumulate"),
    ("stride_10e30", _gemm_operand(0, map={"m": [0, 10 ** 30, 0], "k": [1, 1, 0]}), "operands[0].map.m[1]"),
    ("tile_negative", _gemm(tile={"m": -2}), "tile.m"), ("tile_unknown_index", _gemm(tile={"z": 2}), "tile.z"),
    ("reference_unknown_parameter", _gemm(reference={"kind": "gemm", "alpha": 2}), "reference.alpha"),
    ("reference_kind_unknown", _gemm(reference={"kind": "fft"}), "reference"),
    ("reference_parameter_text", _gemm(reference={"kind": "conv2d", "stride": "two"}), "reference.stride"),
    ("params_nan", _gemm(strategy="bilateral", params={"norm": float("nan")}), "params.norm"),
    ("name_not_text", _gemm(name=["gemm"]), "name"),
    ("strategy_unknown", _gemm(strategy="fma"), "strategy"),
]:
    bad("transform_file", _name, ["merit", "--transform", "t.json", "--networks", "", "--no-table-ix", "--curve", "32",
                                  "--quiet"], _names, {"t.json": _content}, real=_name == "data_nan")

# ================================================================ layer specs, sizes and the bound's options
_BOUND = ["bound", "--no-sweep", "--quiet"]
_L = "Ci=3,Co=8,Hi=32,Wi=32,kernel=3,pad=1"
for _name, _extra, _names in [
    ("memory_10e30_gib", ["--layer", _L, "--memory", "1" + "0" * 30 + "GiB"], "--memory"),
    ("memory_400_digits", ["--layer", _L, "--memory", "7" * 400], "--memory"),
    ("memory_nan", ["--layer", _L, "--memory", "nan"], "--memory"),
    ("memory_negative", ["--layer", _L, "--memory", "-64KiB"], "--memory"),
    ("memory_fraction_of_byte", ["--layer", _L, "--memory", "0.5"], "--memory"),
    ("memory_unknown_unit", ["--layer", _L, "--memory", "64 parsecs"], "--memory"),
    ("memory_3gib", ["--layer", _L, "--memory", "3GiB"], "--memory"),
    ("word_bits_zero", ["--layer", _L, "--word-bits", "0"], "--word-bits"),
    ("word_bits_10e30", ["--layer", _L, "--word-bits", "1" + "0" * 30], "--word-bits"),
    ("batch_zero", ["--layer", _L, "--batch", "0"], "--batch"),
    ("batch_negative", ["--layer", _L, "--batch", "-1"], "--batch"),
    ("batch_too_big", ["--layer", _L, "--batch", "2000000"], "--batch"),
    ("pe_zero", ["--layer", _L, "--pe", "0x16"], "--pe"), ("pe_huge", ["--layer", _L, "--pe", "9" * 20 + "x4"], "--pe"),
    ("pe_text", ["--layer", _L, "--pe", "square"], "--pe"),
    ("dataflows_unknown", ["--layer", _L, "--dataflows", "ws,xs"], "--dataflows"),
    ("network_unknown", ["--network", "vgg17"], "workload.network"),
    ("onnx_missing", ["--onnx", "model.onnx"], "model.onnx"),
    ("layer_channels_10e20", ["--layer", "Ci=100000000000000000000,Co=8"], "--layer"),
    ("layer_size_400_digits", ["--layer", "Ci=3,Co=8,Hi=" + "9" * 400], "--layer"),
    ("layer_size_5000_digits", ["--layer", "Ci=3,Co=" + "9" * 5000], "--layer"),
    ("layer_input_65536", ["--layer", "Ci=64,Co=64,Hi=65536,Wi=65536,kernel=3,pad=1"], "--layer"),
    ("layer_batch_zero", ["--layer", "Ci=3,Co=8,batch=0"], "--layer"),
    ("layer_negative_channels", ["--layer", "Ci=-3,Co=8"], "--layer"),
    ("layer_key_twice", ["--layer", "Ci=3,Ci=4,Co=8"], "--layer"),
    ("layer_empty", ["--layer", ""], "--layer"), ("layer_nan", ["--layer", "Ci=nan,Co=8"], "--layer"),
    ("layer_float", ["--layer", "Ci=3.5,Co=8"], "--layer"),
    ("layer_unknown_key", ["--layer", "Ci=3,Co=8,colour=7"], "--layer"),
    ("layer_no_equals", ["--layer", "Ci3,Co8"], "--layer"),
    ("layer_kernel_larger_than_input", ["--layer", "Ci=3,Co=8,Hi=4,Wi=4,kernel=9"], "--layer"),
    ("layer_groups_not_dividing", ["--layer", "Ci=6,Co=8,groups=4"], "--layer"),
]:
    bad("bound_options", _name, _BOUND + _extra, _names, real=_name == "memory_10e30_gib")
for _name, _content in [("onnx_binary", bytes(range(256)) * 4), ("onnx_text", "not a model"), ("onnx_empty", b"")]:
    bad("bound_options", _name, _BOUND + ["--onnx", "m.onnx"], "m.onnx", {"m.onnx": _content})

# ================================================================ f-CNNx options
_FCNNX = ["fcnnx", "--cnns", "lenet5", "--no-simulate", "--quiet"]
for _name, _extra, _names in [
    ("bandwidth_nan", ["--bandwidth", "NaN"], "--bandwidth"), ("bandwidth_10e400", ["--bandwidth", "1" + "0" * 400],
                                                                 "--bandwidth"),
    ("bandwidth_negative", ["--bandwidth", "-1GB/s"], "--bandwidth"),
    ("bandwidth_2000", ["--bandwidth", "2000GB/s"], "bandwidth"),
    ("targets_nan", ["--targets", "nan"], "--targets"), ("targets_inf", ["--targets", "inf"], "--targets"),
    ("targets_zero", ["--targets", "0"], "--targets"), ("targets_text", ["--targets", "fast"], "--targets"),
    ("targets_too_many", ["--targets", "25,25"], "--targets"),
    ("front_size_zero", ["--front-size", "0"], "--front-size"),
    ("front_size_10e30", ["--front-size", "1" + "0" * 30], "--front-size"),
    ("max_joint_zero", ["--max-joint", "0"], "--max-joint"),
    ("platform_unknown", ["--platform", "zc999"], "--platform"),
    ("cnn_unknown", ["--cnns", "lenet5,lenet6"], "--cnns"), ("no_cnns", ["--cnns", ""], "--cnns"),
    ("onnx_missing", ["--onnx", "absent.onnx"], "absent.onnx"),
    ("objective_unknown", ["--objective", "speed"], "--objective"),
]:
    bad("fcnnx_options", _name, _FCNNX + _extra, _names)

# ================================================================ Cappuccino options
_CAPP = ["cappuccino", "--no-compile", "--quiet"]
for _name, _extra, _names in [
    ("vector_width_three", ["--vector-width", "3"], "--vector-width"),
    ("vector_width_10e30", ["--vector-width", "1" + "0" * 30], "--vector-width"),
    ("threads_zero", ["--threads", "0"], "--threads"), ("threads_1000", ["--threads", "1000"], "--threads"),
    ("budget_nan", ["--accuracy-budget", "nan"], "--accuracy-budget"),
    ("budget_negative", ["--accuracy-budget", "-0.5"], "--accuracy-budget"),
    ("budget_200", ["--accuracy-budget", "200"], "--accuracy-budget"),
    ("min_seconds_inf", ["--min-seconds", "inf"], "--min-seconds"),
    ("min_seconds_negative", ["--min-seconds", "-1"], "settings.min_seconds"),
    ("min_seconds_hour", ["--min-seconds", "3600"], "settings.min_seconds"),
    ("repeats_zero", ["--repeats", "0"], "--repeats"), ("repeats_million", ["--repeats", "1000000"],
                                                        "settings.repeats"),
    ("limit_negative", ["--limit", "-1"], "settings.limit"), ("limit_10e30", ["--limit", "1" + "0" * 30], "--limit"),
    ("validation_missing", ["--validation", "v.npz"], "v.npz"), ("onnx_missing", ["--onnx", "m.onnx"], "m.onnx"),
    ("prefer_unknown", ["--prefer", "exact"], "--prefer"),
]:
    bad("cappuccino_options", _name, _CAPP + _extra, _names)
for _name, _content in [("validation_binary", bytes(range(256))), ("validation_text", "x,y\n1,2\n")]:
    bad("cappuccino_options", _name, _CAPP + ["--validation", "v.npz"], "v.npz", {"v.npz": _content})
bad("cappuccino_options", "emit_onto_a_file", _CAPP + ["--emit", "out"], "emit", {"out": "a file, not a folder"})


# ================================================================ session files (session validate)
def _starter() -> dict[str, Any]:
    from core import session
    from core.project import Project

    return session.to_json(Project.starter())


def _with_runs() -> dict[str, Any]:
    """The example session with two of its runs (Cain's search, the simulator's run): small, valid."""
    doc = read_document(EXAMPLE)
    doc["runs"] = [r for r in doc["runs"] if r["id"] in ("r1", "r2")]
    return doc


def _session_case(name: str, mutate: Any, names: str, says: str = "", base: Any = _starter) -> None:
    if isinstance(mutate, (str, bytes)):
        content: Any = mutate
    else:
        doc = base()
        mutate(doc)
        content = _json(doc)
    bad("session_file", name, ["session", "validate", "s.dfx"], names, {"s.dfx": content}, says,
        real=name == "nested_100000")


def _set(path: str, value: Any) -> Any:
    """A mutation: set the field at `path` (dots and [i]) to `value`."""
    def mutate(doc: Any) -> None:
        parts = [int(p) if p.isdigit() else p for p in path.replace("[", ".").replace("]", "").split(".")]
        target = doc
        for p in parts[:-1]:
            target = target[p]
        target[parts[-1]] = value
    return mutate


_W = "library.workloads"
_T = "library.targets"
for _name, _mutate, _names, _says in [
    ("nested_100000", "[" * 100_000 + "]" * 100_000, "s.dfx", "nested too deeply"),
    ("nested_in_a_note", None, "session.runs[0].note", ""),
    ("binary", bytes(range(256)) * 16, "s.dfx", "UTF-8"),
    ("utf16", _json(_starter()).encode("utf-16"), "s.dfx", "UTF-16"),
    ("empty", "", "s.dfx", "empty"),
    ("truncated", _json(_starter())[:500], "s.dfx:1", "truncated"),
    ("a_list", "[]", "session", "a session is a JSON object"),
    ("wrong_format", _set("format", "something-else"), "session.format", ""),
    ("newer_version", _set("version", 99), "session.version", "newer"),
    ("version_text", _set("version", "2"), "session.version", ""),
    ("setting_nan", _set("engines.cain.settings.time_s", float("nan")), "session.engines.cain.settings.time_s", "NaN"),
    ("setting_infinity", _set("engines.simulate.settings.noise", float("inf")),
     "session.engines.simulate.settings.noise", "range"),
    ("setting_1e400", None, "session.engines.merit.settings.bandwidth_gbps", "range"),
    ("setting_text_for_number", _set("engines.cain.settings.workers", "2"), "session.engines.cain.settings.workers",
     ""),
    ("setting_float_for_integer", _set("engines.cain.settings.workers", 2.0),
     "session.engines.cain.settings.workers", ""),
    ("setting_10e30", _set("engines.simulate.settings.seed", 10 ** 30), "session.engines.simulate.settings.seed",
     "64-bit"),
    ("setting_negative_seed", _set("engines.merit.settings.seed", -1), "session.engines.merit.settings.seed", ""),
    ("fixed_pattern_nan", _set("engines.simulate.settings.fixed_pattern", float("nan")),
     "session.engines.simulate.settings.fixed_pattern", "NaN"),
    ("setting_retired_bound_memory", _set("engines.bound.settings.memory_bytes", 10 ** 15),
     "session.engines.bound.settings.memory_bytes", ""),
    ("kernel_400_digits", _set(f"{_W}[1].value.kernels[0].values[1][1]", int("9" * 400)),
     "session.library.workloads[1].value.kernels[0].values[1][1]", "400 digits"),
    ("kernel_rows_empty", _set(f"{_W}[1].value.kernels[0].values", [[], [], []]),
     "session.library.workloads[1].value.kernels[0].values", "row 1 is empty"),
    ("kernel_channels_differ", _set(f"{_W}[1].value.kernels[0].values", [G3, [[1] * 5] * 5]),
     "session.library.workloads[1].value.kernels[0].values", "channel 2 is 5x5, channel 1 is 3x3"),
    ("kernel_denominator_zero", _set(f"{_W}[1].value.denominator", 0),
     "session.library.workloads[1].value.denominator", ""),
    ("batch_zero", _set(f"{_W}[2].value.batch", 0), "session.library.workloads[2].value.batch", ""),
    ("batch_10e12", _set(f"{_W}[3].value.batch", 10 ** 12), "session.library.workloads[3].value.batch", ""),
    ("transform_data_nan", _set(f"{_W}[5].value.transform", {**_GEMM, "data": {"A": [[float("nan")] * 6] * 4}}),
     "session.library.workloads[5].value.transform.data.A[0][0]", "NaN"),
    ("registers_10e30", _set(f"{_T}[0].value.registers", 10 ** 30), "session.library.targets[0].value.registers",
     "64-bit"),
    ("bandwidth_nan", _set(f"{_T}[1].value.bandwidth_gbps", float("nan")),
     "session.library.targets[1].value.bandwidth_gbps", "NaN"),
    ("memory_10e30", _set(f"{_T}[2].value.memory_bytes", 10 ** 30), "session.library.targets[2].value.memory_bytes",
     ""),
    ("vector_width_text", _set(f"{_T}[3].value.vector_width", "4"), "session.library.targets[3].value.vector_width",
     ""),
    ("choice_of_missing_item", _set("engines.cain.workload", "w99"), "session.engines.cain.workload", ""),
    ("duplicate_item_id", _set(f"{_W}[1].id", "w1"), "session.library.workloads[1].id", ""),
    ("unknown_engine", _set("engines.nosuch", {"settings": {}}), "session.engines.nosuch", ""),
]:
    if _name == "setting_1e400":
        _session_case(_name, _json(_starter()).replace('"bandwidth_gbps": 3.2', '"bandwidth_gbps": 1e400'), _names,
                      _says)
    elif _name == "nested_in_a_note":
        _deep: Any = "x"
        for _ in range(80):
            _deep = [_deep]
        _session_case(_name, _set("runs[0].note", _deep), "session.runs[0].note", "", base=_with_runs)
    else:
        _session_case(_name, _mutate, _names, _says)
for _name, _mutate, _names in [
    ("run_setting_text", _set("runs[0].settings.time_s", "10"), "session.runs[0].settings.time_s"),
    ("run_setting_nan", _set("runs[1].settings.noise", float("nan")), "session.runs[1].settings.noise"),
    ("run_result_text_for_number", _set("runs[0].result.length", "21"), "session.runs[0].result.length"),
    ("run_result_nan", _set("runs[0].result.max_abs_error", float("nan")), "session.runs[0].result.max_abs_error"),
    ("run_result_simulator_setting_text", _set("runs[1].result.settings.noise", "loud"),
     "session.runs[1].result.settings.noise"),
    ("run_series_nan", _set("runs[0].series.nodes", {"best length": [[1, float("nan")]]}), "session.runs[0].series"),
    ("run_duration_negative", _set("runs[0].duration_s", -3), "session.runs[0].duration_s"),
    ("run_headline_object", lambda d: d["runs"][0].update(status="cancelled", result=None, headline={"length": {}}),
     "session.runs[0].headline.length"),
]:
    _session_case(_name, _mutate, _names, base=_with_runs)
bad("session_file", "missing_file", ["session", "validate", "absent.dfx"], "absent.dfx", says="cannot read")
bad("session_file", "a_folder", ["session", "validate", "."], ".", says="folder")

# ================================================================ the command line itself
for _name, _argv, _names in [
    ("unknown_command", ["simulat"], "simulat"), ("session_without_action", ["session"], "ACTION"),
    ("validate_without_file", ["session", "validate"], "file"),
    ("engine_option_without_value", ["cain", "--preset"], "--preset"),
    ("two_workloads", ["cain", "--preset", "gauss3", "--kernels", "k.json"], "--kernels"),
]:
    bad("command_line", _name, _argv, _names)


# ================================================================ the GUI rendering to a file (--screenshot)
# `--open BROKEN --screenshot OUT.png` used to wait forever on a message box nobody could see.
_SHOT = ["--screenshot", "out.png"]
for _name, _content, _names in [
    ("open_nested_100000", "[" * 100_000 + "]" * 100_000, "broken.dfx"),
    ("open_setting_nan", _json(_starter()).replace('"time_s": 10.0', '"time_s": NaN'),
     "session.engines.cain.settings.time_s"),
    ("open_binary", bytes(range(256)) * 16, "broken.dfx"),
    ("open_kernel_rows_empty", _json(_starter()).replace("[[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]",
                                                         "[[], [], []]"), "kernels[0].values"),
]:
    bad("gui_screenshot", _name, ["--open", "broken.dfx", *_SHOT], _names, {"broken.dfx": _content})
for _name, _extra, _names in [
    ("missing_session", ["--open", "absent.dfx"], "absent.dfx"), ("unknown_tab", ["--tab", "nosuch"], "nosuch"),
    ("size_text", ["--size", "big"], "--size"), ("size_10e20", ["--size", "1" + "0" * 20 + "x600"], "--size"),
    ("compare_unknown_runs", ["--compare", "r1,r2"], "--compare"),
]:
    bad("gui_screenshot", _name, [*_extra, *_SHOT], _names)


# ================================================================ issue 34: special files, ONNX, emit, ...
@dataclass(frozen=True)
class Fifo:
    """A named pipe in the case's folder (reading it would wait for a writer forever)."""


@dataclass(frozen=True)
class Link:
    """A symbolic link in the case's folder to `target` (e.g. /dev/zero, read without end)."""

    target: str


@dataclass(frozen=True)
class Folder:
    """An empty folder in the case's folder (where a file is to be written)."""


for _name, _argv, _file in [
    ("kernel_file_fifo", ["cain", "--kernels", "k.json", "--quiet"], "k.json"),
    ("session_fifo", ["session", "validate", "s.dfx"], "s.dfx"),
    ("transform_file_fifo", ["merit", "--transform", "t.json", "--networks", "", "--no-table-ix", "--quiet"], "t.json"),
    ("program_fifo", ["simulate", "--program", "p.txt", "--quiet"], "p.txt"),
    ("image_fifo", ["simulate", "--program", PROGRAM, "--image", "in.png", "--quiet"], "in.png"),
    ("onnx_fifo", ["bound", "--no-sweep", "--onnx", "m.onnx", "--quiet"], "m.onnx"),
]:
    bad("special_file", _name, _argv, _file, {_file: Fifo()}, says="named pipe")
bad("special_file", "session_is_dev_zero", ["session", "validate", "s.dfx"], "s.dfx", {"s.dfx": Link("/dev/zero")},
    says="device")
bad("special_file", "kernel_file_is_dev_zero", ["cain", "--kernels", "k.json", "--quiet"], "k.json",
    {"k.json": Link("/dev/zero")}, says="device")


def _onnx(stride: int = 1, weight: float | None = None, maps: int = 4, kernel: int = 3) -> bytes:
    """A one-convolution ONNX model on 1x8x8 images (the digits' shape), as file bytes."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    w = np.full((maps, 1, kernel, kernel), 0.25, np.float32)
    if weight is not None:
        w.flat[1] = weight
    conv = helper.make_node("Conv", ["x", "conv1.weight"], ["y"], name="conv1", kernel_shape=[kernel, kernel],
                            strides=[stride, stride], pads=[kernel // 2] * 4)
    graph = helper.make_graph([conv], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 8, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, maps, 8, 8])],
                              [numpy_helper.from_array(w, "conv1.weight")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model.SerializeToString()


_ONNX_ENGINES = {"bound": ["bound", "--no-sweep"], "fcnnx": ["fcnnx", "--no-simulate"],
                 "cappuccino": ["cappuccino", "--no-compile"]}
for _engine, _argv in _ONNX_ENGINES.items():
    _run = [*_argv, "--onnx", "m.onnx", "--quiet"]
    bad("onnx_model", f"{_engine}_stride_zero", _run, "strides", {"m.onnx": _onnx(stride=0)}, says="at least 1")
    bad("onnx_model", f"{_engine}_weight_nan", _run, "conv1.weight", {"m.onnx": _onnx(weight=float("nan"))},
        says="NaN")
    bad("onnx_model", f"{_engine}_weight_infinite", _run, "conv1.weight", {"m.onnx": _onnx(weight=float("-inf"))},
        says="infinite")
# a 4 MB file whose 1x1 convolution makes a million maps: 256 MB per image, before any validation batch
bad("onnx_model", "cappuccino_million_maps", [*_ONNX_ENGINES["cappuccino"], "--onnx", "m.onnx", "--quiet"], "conv1",
    {"m.onnx": _onnx(maps=1_000_000, kernel=1)}, says="values per image")

for _name, _content, _names, _says in [
    ("operand_name_twice", _gemm_operand(1, name="A"), "operands[1].name", "second operand"),
    ("pad_two_billion", _gemm_operand(0, pad=[2_000_000_000, 0]), "operands[0].pad", "elements"),
    ("operand_70_axes", _gemm_operand(0, shape=[4, 6] + [1] * 68), "operands[0].shape", "70 axes"),
    ("output_shape_70_axes", _gemm(output_shape=[4, 5] + [1] * 68), "output_shape", "70 axes"),
]:
    bad("transform_file", _name, ["merit", "--transform", "t.json", "--networks", "", "--no-table-ix", "--curve", "32",
                                  "--quiet"], _names, {"t.json": _content}, _says)

# --emit into a folder where a file to be written is a folder (or a folder to be made is a file):
# refused before any file is written (the corpus checks the folder is unchanged)
_EMIT_MERIT = ["merit", "--workload", "gemm", "--networks", "", "--no-table-ix", "--curve", "32", "--emit", "out",
               "--quiet"]
bad("emit", "merit_makefile_is_a_folder", _EMIT_MERIT, "emit", {"out/Makefile": Folder()}, says="is a folder")
bad("emit", "merit_data_is_a_file", _EMIT_MERIT, "emit", {"out/data": "x"}, says="is a file")
bad("emit", "cappuccino_labels_is_a_folder", [*_CAPP, "--emit", "out"], "emit",
    {"out/validation_labels.txt": Folder()}, says="is a folder")

# the simulator: a decompression bomb, a program saved by Notepad (BOM, CRLF), a program too long
def _png_header(width: int, height: int) -> bytes:
    """A PNG that says it is width x height 1-bit pixels, with almost no data (a decompression bomb)."""
    import struct
    import zlib

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"\0" * 1000)) + chunk(b"IEND", b""))


bad("simulate", "image_bomb_100000_squared", _SIM[:-1] + ["--image", "in.png", "--quiet"], "in.png",
    {"in.png": _png_header(100_000, 100_000)}, says="million pixels")
bad("simulate", "image_10000_squared", _SIM[:-1] + ["--image", "in.png", "--quiet"], "in.png",
    {"in.png": _png_header(10_000, 10_000)}, says="million pixels")
bad("simulate", "program_bom_crlf_bad_third_line", ["simulate", "--program", "p.txt", "--quiet"], "p.txt:line 3",
    {"p.txt": b"\xef\xbb\xbf# outputs: A\r\nadd(A, B, C);\r\nfrobnicate(A);\r\n"})
bad("simulate", "program_12000_lines", ["simulate", "--program", "p.txt", "--quiet"], "p.txt",
    {"p.txt": "# outputs: A\n" + "add(A, B, C);\n" * 12_000}, says="at most 10,000")

# sessions: a run's snapshot of the wrong kind, a newer version whatever else it holds, retired
# settings of the wrong type (format 2) that migration used to drop unread
_session_case("run_target_of_wrong_kind", lambda d: d["runs"][0].update(
    target={"id": "t3", "name": "x", "value": _starter()["library"]["targets"][2]["value"]}),
    "session.runs[0].target.value.kind", "the engine reads", base=_with_runs)
_session_case("run_workload_of_wrong_kind", lambda d: d["runs"][1].update(
    workload={"id": "w3", "name": "x", "value": _starter()["library"]["workloads"][2]["value"]}),
    "session.runs[1].workload.value.kind", "the engine reads", base=_with_runs)
_session_case("newer_version_with_other_fields",
              _json({"format": "dataflow-explorer-session", "version": 7, "workspace": {"x": float("nan")}}),
              "session.version", "newer version")
_session_case("v2_override_text", lambda d: d.update(version=2) or d["engines"]["bound"]["settings"].update(
    memory_bytes="64KiB"), "session.engines.bound.settings.memory_bytes", "whole number")
_session_case("v2_run_override_fraction", lambda d: d.update(version=2) or d["runs"][0].update(
    engine="bound", settings={"word_bits": 16.5}), "session.runs[0].settings.word_bits", "whole number",
    base=_with_runs)

# f-CNNx: a bandwidth no design can be scheduled in
bad("fcnnx_options", "bandwidth_one_byte_per_second", _FCNNX + ["--bandwidth", "1B/s"], "bandwidth", says="too low")


# ================================================================ running the corpus
KINDS = sorted({c.kind for c in CASES})


def _write(folder: Path, files: dict[str, Any]) -> None:
    folder.mkdir(parents=True)
    for name, content in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, Fifo):
            os.mkfifo(path)
        elif isinstance(content, Link):
            path.symlink_to(content.target)
        elif isinstance(content, Folder):
            path.mkdir()
        elif isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


def _listing(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): p.stat().st_size for p in sorted(folder.rglob("*"))}


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory) -> dict[str, dict[str, Any]]:
    """Every case of the corpus run once, in one batch: id -> rc, stdout, stderr, files before/after."""
    base = tmp_path_factory.mktemp("bad_inputs")
    batch, before, folders = [], {}, {}
    for c in CASES:
        case_id = f"{c.kind}.{c.name}"
        folder = base / case_id
        _write(folder, c.files)
        folders[case_id], before[case_id] = folder, _listing(folder)
        batch.append({"id": case_id, "argv": list(c.argv), "cwd": str(folder)})
        if c.real:
            real_folder = base / f"{case_id}.real"
            _write(real_folder, c.files)
            folders[f"{case_id}.real"], before[f"{case_id}.real"] = real_folder, _listing(real_folder)
    (base / "cases.json").write_text(json.dumps(batch))
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONDONTWRITEBYTECODE": "1", "HOME": str(base),
           "XDG_CONFIG_HOME": str(base / "config")}
    runner = subprocess.Popen([sys.executable, str(ROOT / "tests" / "cli_batch.py"), str(base / "cases.json"),
                               str(base / "results.json"), "--jobs", "3", "--timeout", str(CASE_TIMEOUT_S)], env=env)
    real = {f"{c.kind}.{c.name}.real": subprocess.Popen(
        [sys.executable, MAIN, *c.argv], cwd=folders[f"{c.kind}.{c.name}.real"], env=env, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace") for c in CASES if c.real}
    results: dict[str, dict[str, Any]] = {}
    for key, proc in real.items():
        try:
            out, err = proc.communicate(timeout=CASE_TIMEOUT_S * 2)
            results[key] = {"rc": proc.returncode, "stdout": out, "stderr": err, "timed_out": False}
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            results[key] = {"rc": 124, "stdout": out, "stderr": err, "timed_out": True}
    assert runner.wait(timeout=900) == 0, "tests/cli_batch.py failed"
    results.update(json.loads((base / "results.json").read_text()))
    for key, r in results.items():
        r["before"], r["after"] = before[key], _listing(folders[key])
    return results


def _problems(case: Bad, r: dict[str, Any]) -> list[str]:
    err_lines = r["stderr"].strip().splitlines()
    out = []
    if r.get("timed_out"):
        out.append(f"no answer within {CASE_TIMEOUT_S:g} s")
    if r["rc"] != 2:
        out.append(f"exit code {r['rc']}, expected 2")
    if "Traceback" in r["stderr"]:
        out.append("a traceback")
    if len(err_lines) != 1:
        out.append(f"{len(err_lines)} lines on stderr, expected 1")
    line = err_lines[-1] if err_lines else ""
    if not line.startswith("error: "):
        out.append("the line does not start with 'error: '")
    if case.names not in line:
        out.append(f"the message does not name {case.names!r}")
    if case.says and case.says not in line:
        out.append(f"the message does not say {case.says!r}")
    if r["stdout"].strip():
        out.append("output on stdout")
    if r["after"] != r["before"]:
        out.append(f"files changed: {sorted(set(r['after']) ^ set(r['before'])) or 'contents'}")
    return out


def test_the_corpus_is_big_enough():
    assert len(CASES) >= 150
    assert len({(c.kind, c.name) for c in CASES}) == len(CASES), "two cases share a name"


@pytest.mark.parametrize("kind", KINDS)
def test_bad_inputs_end_with_one_line_naming_the_field(outcomes, kind):
    failures = []
    for c in [c for c in CASES if c.kind == kind]:
        for key in [f"{c.kind}.{c.name}"] + ([f"{c.kind}.{c.name}.real"] if c.real else []):
            r = outcomes[key]
            problems = _problems(c, r)
            if problems:
                tail = " | ".join(r["stderr"].strip().splitlines()[-3:])[:400]
                failures.append(f"{key}: {'; '.join(problems)}\n    stderr: {tail}")
    assert not failures, f"{len(failures)} bad input(s) of kind {kind} handled badly:\n" + "\n".join(failures)


def test_the_batch_runner_agrees_with_plain_runs(outcomes):
    """The forked children of cli_batch.py behave as `python main.py` does (same exit, same line)."""
    for c in [c for c in CASES if c.real]:
        forked, plain = outcomes[f"{c.kind}.{c.name}"], outcomes[f"{c.kind}.{c.name}.real"]
        assert (forked["rc"], forked["stderr"].strip()) == (plain["rc"], plain["stderr"].strip()), c.name


# ================================================================ Ctrl-C on a running search
def _group_alive(pgid: int) -> list[int]:
    alive = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":
                alive.append(int(entry))
    return alive


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process table from /proc")
@pytest.mark.parametrize("when", ["starting", "searching"])
def test_ctrl_c_on_cain_is_one_line_exit_130_and_leaves_no_process(tmp_path, when):
    """Ctrl-C in a terminal reaches the whole process group (the search's worker processes too):
    exit 130, one line, no KeyboardInterrupt traceback from any process, and no process left."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, MAIN, "cain", "--preset", "gauss5", "--time", "60", "--workers", "2"],
                            cwd=tmp_path, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        seen = ""
        marker = "search with" if when == "starting" else "verified program"
        while marker not in seen and time.monotonic() < deadline and proc.poll() is None:
            seen += proc.stderr.readline()
        assert marker in seen, f"the search did not get going: {seen[-2000:]}"
        if when == "searching":
            time.sleep(0.5)
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    stderr = seen + err
    assert proc.returncode == 130, stderr[-3000:]
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr[-3000:]
    assert err.strip().splitlines()[-1:] == ["error: interrupted"], err[-2000:]
    assert [line for line in err.splitlines() if line.startswith("error:")] == ["error: interrupted"]
    end = time.monotonic() + 15
    while _group_alive(proc.pid) and time.monotonic() < end:
        time.sleep(0.1)
    assert not _group_alive(proc.pid), "processes of the run are still alive"
