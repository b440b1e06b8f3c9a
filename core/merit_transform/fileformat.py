"""The transform JSON file format (`python main.py merit --transform FILE.json`), see docs/merit.md.

{
  "name": "gemm-4x6x5",
  "parallel":   [["m", 4], ["n", 5]],          # p indices with sizes, outermost first
  "accumulate": [["k", 6]],                    # a indices with sizes
  "operands": [                                # in the strategy's operand order
    {"name": "A", "shape": [4, 6], "pad": [0, 0],
     "map": {"m": [0, 1, 0], "k": [1, 1, 0]},  # index -> [axis d, stride s, offset o] (eq. 5)
     "accumulate_sizes": [6]},                 # optional: a-sizes of M(A), must match the others
    {"name": "B", "shape": [6, 5], "map": {"k": [0, 1, 0], "n": [1, 1, 0]}}
  ],
  "strategy": "dot",                           # dot | relu | l1 | residual | bilateral | copy | max | min
                                               # | sum | sad | ssd | "<combine>/<reduce>", or instead:
  "combine": "absdiff", "reduce": "sum",       # a user ⊙ (core.merit_transform.strategies.COMBINES / REDUCES)
  "params": {},                                # e.g. {"norm": -50} for bilateral
  "output_shape": [4, 5],                      # optional reshape of Vec(C)
  "tile": {"m": 2, "n": 4},                    # optional tile (missing indices: whole range)
  "bank_operand": "A",                         # optional: operand analysed for bank conflicts
  "data": {"A": [[...]]},                      # optional: operand values (default: random)
  "reference": {"kind": "gemm"}                # optional direct numpy reference, see REFERENCES
}
"""

from __future__ import annotations

import inspect
import math
from typing import Any, Callable

import numpy as np

from core.errors import InputError
from core.merit_transform import workloads as W
from core.merit_transform.strategies import canonical_strategy, combine_reduce_name
from core.merit_transform.transform import AxisMap, MeritTransform, Operand


def _ref_gemm(d: dict[str, np.ndarray], t: MeritTransform, **kw: Any) -> np.ndarray:
    a, b = t.operands[0].name, t.operands[1].name
    return d[a] @ d[b]


def _ref_conv(d: dict[str, np.ndarray], t: MeritTransform, stride: int = 1, dilation: int = 1, pad: int = 0,
              groups: int = 1, **kw: Any) -> np.ndarray:
    out = W.conv_ref(d[t.operands[0].name], d[t.operands[1].name], stride, dilation, pad, groups)
    return np.maximum(out, 0) if t.strategy == "relu" else out


REFERENCES: dict[str, Callable[..., np.ndarray]] = {
    "gemm": _ref_gemm,
    "conv2d": _ref_conv,
    "depthwise": lambda d, t, stride=1, pad=0, **kw: W.depthwise_ref(d[t.operands[0].name], d[t.operands[1].name],
                                                                     stride, pad),
    "correlation": lambda d, t, disp=1, **kw: W.correlation_ref(d[t.operands[0].name], d[t.operands[1].name], disp),
    "motion": lambda d, t, block=8, search=4, **kw: W.motion_ref(d[t.operands[0].name], d[t.operands[1].name],
                                                                 block, search),
    "pixel_shuffle": lambda d, t, r=2, **kw: W.pixel_shuffle_ref(d[t.operands[0].name], r),
}


# What a transform file may ask for: only the real limits (issue 31). The generated code indexes with
# 64-bit integers (C `long`), so every flat index, the outputs and the steps p x a must fit int64; and
# the run holds the operands (float64 data and a float32 copy with its padding) and the output (one
# float32 array per generated kernel) in this machine's memory, at most MEMORY_SHARE of it. Large
# transforms are verified on a sample of outputs (core.merit.sample), so nothing of size p x a (M()
# itself) is ever held.
MAX_SIZE = 2 ** 31 - 1
INT64_MAX = 2 ** 63 - 1
MEMORY_SHARE = 0.5
OUTPUT_BYTES_PER_ELEMENT = 8 + 4 * 5     # a float64 stage output (chains) and five float32 copies (the kernels)
MAX_DATA_ABS = 1e100         # operand values whose products and sums stay finite
MAX_AXES = 32                # numpy's limit on an array's axes (32 in numpy 1, 64 in numpy 2)


def machine_memory_bytes() -> int:
    """Physical memory of this machine (a fixed figure, so that a file is accepted or refused alike
    whatever else runs)."""
    import os

    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return 8 * 1024 ** 3


def _gib(n: int) -> str:
    return f"{n / 1024 ** 3:.3g} GiB"


def check_index_limits(t: MeritTransform, where: str = "transform") -> None:
    """Sizes the generated code's 64-bit indices and counters can hold (on every machine)."""
    for oi, op in enumerate(t.operands):
        pad = op.padding()
        padded = math.prod(int(n) + 2 * int(q) for n, q in zip(op.shape, pad)) if len(pad) == len(op.shape) \
            else math.prod(int(n) for n in op.shape)
        if padded > INT64_MAX:
            raise InputError(f"operand {op.name!r} with its padding has {padded} elements; the generated code "
                             f"indexes with 64-bit integers (at most {INT64_MAX})", f"{where}.operands[{oi}].shape")
    P = math.prod(int(n) for _, n in t.parallel)
    A = math.prod(int(n) for _, n in t.accumulate)
    if P > INT64_MAX:
        raise InputError(f"the parallel indices give {P} outputs; the generated code indexes them with 64-bit "
                         f"integers (at most {INT64_MAX})", f"{where}.parallel")
    if P * A > INT64_MAX:
        raise InputError(f"the indices span {P * A} steps (outputs x accumulated elements); the generated code "
                         f"counts them with 64-bit integers (at most {INT64_MAX})", f"{where}.accumulate")


def check_real_limits(t: MeritTransform, where: str = "transform") -> None:
    """int64 indices and this machine's memory; each refusal names the field that sets the size."""
    check_index_limits(t, where)
    P = math.prod(int(n) for _, n in t.parallel)
    need: list[tuple[int, str, str]] = []
    for oi, op in enumerate(t.operands):
        elements = math.prod(int(n) for n in op.shape)
        pad = op.padding()
        padded = math.prod(int(n) + 2 * int(q) for n, q in zip(op.shape, pad)) if len(pad) == len(op.shape) \
            else elements
        need.append((8 * elements, f"{where}.operands[{oi}].shape", f"operand {op.name!r}, {elements} elements"))
        # the float32 copy the kernels read holds the padding: a huge pad is named as such
        need.append((4 * padded, f"{where}.operands[{oi}].pad" if padded > elements else f"{where}.operands[{oi}].shape",
                     f"operand {op.name!r} with its padding, {padded} elements"))
    need.append((OUTPUT_BYTES_PER_ELEMENT * P, f"{where}.parallel", f"the {P} outputs"))
    total = sum(n for n, _, _ in need)
    limit = int(MEMORY_SHARE * machine_memory_bytes())
    if total > limit:
        big, field, what = max(need)
        raise InputError(f"the transform needs about {_gib(total)} of memory ({what}: {_gib(big)}), over "
                         f"{MEMORY_SHARE:.0%} of this machine's {_gib(machine_memory_bytes())}", field)


def _int(v: Any, where: str, positive: bool = False) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or (positive and v <= 0) or abs(v) > MAX_SIZE:
        shown = repr(v) if len(repr(v)) <= 40 else f"a number of {len(str(v))} characters"
        raise InputError(f"expected a{' positive' if positive else 'n'} integer up to {MAX_SIZE}, got {shown}", where)
    return v


def _index_list(v: Any, where: str) -> list[tuple[str, int]]:
    if not isinstance(v, list):
        raise InputError("expected a list of [name, size] pairs", where)
    out = []
    for i, item in enumerate(v):
        if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)):
            raise InputError(f"expected [name, size], got {item!r}", f"{where}[{i}]")
        out.append((item[0], _int(item[1], f"{where}[{i}]", True)))
    return out


def transform_from_json(d: Any, where: str = "transform", machine_limits: bool = True) -> MeritTransform:
    """Parse and validate; every error names the JSON field. `machine_limits`: also refuse a transform
    too large for this machine's memory (off when reading one a result keeps: it has run)."""
    if not isinstance(d, dict):
        raise InputError("a transform file holds one JSON object", where)
    par = _index_list(d.get("parallel", []), f"{where}.parallel")
    acc = _index_list(d.get("accumulate", []), f"{where}.accumulate")
    ops_raw = d.get("operands")
    if not isinstance(ops_raw, list) or not ops_raw:
        raise InputError("needs a non-empty list of operands", f"{where}.operands")
    operands: list[Operand] = []
    for oi, o in enumerate(ops_raw):
        ow = f"{where}.operands[{oi}]"
        if not isinstance(o, dict):
            raise InputError("expected an object", ow)
        name = o.get("name")
        if not isinstance(name, str) or not name:
            raise InputError("operand needs a name", f"{ow}.name")
        shape = o.get("shape")
        if not isinstance(shape, list) or not shape:
            raise InputError("operand needs a shape (list of sizes)", f"{ow}.shape")
        if len(shape) > MAX_AXES:
            raise InputError(f"operand {name!r} has {len(shape)} axes; at most {MAX_AXES}", f"{ow}.shape")
        shape_t = tuple(_int(s, f"{ow}.shape[{i}]", True) for i, s in enumerate(shape))
        maps = {}
        raw = o.get("map", {})
        if not isinstance(raw, dict):
            raise InputError("map must be an object: index -> [axis, stride, offset]", f"{ow}.map")
        for idx, m in raw.items():
            if not (isinstance(m, list) and 1 <= len(m) <= 3):
                raise InputError(f"expected [axis, stride, offset], got {m!r}", f"{ow}.map.{idx}")
            vals = [_int(x, f"{ow}.map.{idx}") for x in m] + [1, 0][len(m) - 1:]
            maps[idx] = AxisMap(vals[0], vals[1], vals[2])
        pad = tuple(_int(p, f"{ow}.pad[{i}]") for i, p in enumerate(o.get("pad", [])))
        if "accumulate_sizes" in o:
            sizes = o["accumulate_sizes"]
            declared = [n for _, n in acc]
            if not isinstance(sizes, list) or [_int(s, f"{ow}.accumulate_sizes", True) for s in sizes] != declared:
                raise InputError(f"accumulated sizes of M({name}) are {sizes!r} but the transform accumulates "
                                 f"{declared} (mismatched accumulated sizes)", f"{ow}.accumulate_sizes")
        same = next((op for op in operands if op.name == name), None)
        if same is not None and same.shape != shape_t:      # one name is one tensor (its data, its banks)
            raise InputError(f"a second operand is named {name!r}, with shape {list(shape_t)} where the first has "
                             f"{list(same.shape)}; operands of one name read one tensor: give this one its own name",
                             f"{ow}.name")
        operands.append(Operand(name, shape_t, maps, pad))
    # operands that state their a-sizes must agree with each other too
    strategy = d.get("strategy", "dot")
    if not isinstance(strategy, str):
        raise InputError("strategy must be a name", f"{where}.strategy")
    if "combine" in d or "reduce" in d:             # a user-defined ⊙: element-wise combine, then reduce
        if "strategy" in d and strategy != "custom":
            raise InputError(f"give either a strategy ({strategy!r}) or combine/reduce, not both "
                             "(or \"strategy\": \"custom\")", f"{where}.strategy")
        strategy = combine_reduce_name(d.get("combine"), d.get("reduce"), len(operands), where)
    else:
        strategy = canonical_strategy(strategy, len(operands), f"{where}.strategy")
    params = d.get("params", {})
    if not isinstance(params, dict):
        raise InputError("params must be an object", f"{where}.params")
    out_shape = d.get("output_shape")
    if out_shape is not None:
        if not isinstance(out_shape, list):
            raise InputError("output_shape must be a list", f"{where}.output_shape")
        if len(out_shape) > MAX_AXES:
            raise InputError(f"{len(out_shape)} axes; at most {MAX_AXES}", f"{where}.output_shape")
        out_shape = tuple(_int(s, f"{where}.output_shape", True) for s in out_shape)
    for key in ("name", "description"):
        if not isinstance(d.get(key, ""), str):
            raise InputError(f"expected a text, got {type(d[key]).__name__}", f"{where}.{key}")
    t = MeritTransform(str(d.get("name", "transform")), par, acc, operands, strategy, dict(params), out_shape,
                       str(d.get("description", "")))
    if machine_limits:
        check_real_limits(t, where)
    else:
        check_index_limits(t, where)
    t.validate(where)
    return t


def workload_from_json(d: dict[str, Any], where: str = "transform") -> W.Workload:
    """A user transform as a workload: its data (given or random) and optional reference."""
    t = transform_from_json(d, where)
    data_raw = d.get("data", {})
    if not isinstance(data_raw, dict):
        raise InputError("data must be an object: operand name -> nested list", f"{where}.data")
    given = {}
    for name, v in data_raw.items():
        try:
            arr = np.asarray(v, dtype=float)
        except (TypeError, ValueError, OverflowError):
            raise InputError("not a rectangular array of numbers", f"{where}.data.{name}") from None
        if arr.size and not (np.isfinite(arr).all() and float(np.abs(arr).max()) <= MAX_DATA_ABS):
            raise InputError(f"values must be finite numbers of magnitude at most {MAX_DATA_ABS:g}",
                             f"{where}.data.{name}")
        given[name] = arr
    shapes = {op.name: op.shape for op in t.operands}
    for name, arr in given.items():
        if name not in shapes:
            raise InputError(f"no operand named {name!r}; operands: {', '.join(shapes)}", f"{where}.data.{name}")
        if arr.shape != tuple(shapes[name]):
            raise InputError(f"data has shape {list(arr.shape)}, the operand is declared {list(shapes[name])}",
                             f"{where}.data.{name}")

    def make(rng: np.random.Generator) -> dict[str, np.ndarray]:
        out = {n: rng.standard_normal(s) for n, s in shapes.items()}
        out.update(given)
        return out

    ref = d.get("reference")
    reference = None
    if ref is not None:
        if not isinstance(ref, dict) or not isinstance(ref.get("kind"), str) or ref["kind"] not in REFERENCES:
            raise InputError(f"reference needs a kind among {', '.join(REFERENCES)}", f"{where}.reference")
        fn = REFERENCES[ref["kind"]]
        allowed = [p.name for p in inspect.signature(fn).parameters.values()
                   if p.kind == p.POSITIONAL_OR_KEYWORD and p.name not in ("d", "t")]
        kw = {}
        for k, v in ref.items():
            if k == "kind":
                continue
            if k not in allowed:
                raise InputError(f"the {ref['kind']} reference takes {', '.join(allowed) or 'no parameters'}, "
                                 f"not {k!r}", f"{where}.reference.{k}")
            kw[k] = _int(v, f"{where}.reference.{k}", positive=k != "pad")
            if kw[k] < 0:
                raise InputError(f"must be >= 0, got {v}", f"{where}.reference.{k}")

        def reference(data: dict[str, np.ndarray], fn: Callable[..., np.ndarray] = fn,
                      kw: dict[str, int] = kw) -> np.ndarray:
            try:
                return fn(data, t, **kw)
            except (ValueError, TypeError, IndexError, KeyError) as exc:
                raise InputError(f"the {ref['kind']} reference does not fit this transform's operands "
                                 f"({type(exc).__name__}: {exc})", f"{where}.reference") from None
    tile = d.get("tile", {})
    if not isinstance(tile, dict):
        raise InputError("tile must be an object: index -> size", f"{where}.tile")
    for name, size in tile.items():
        if name not in dict(t.indices):
            raise InputError(f"no index named {name!r}; indices: {', '.join(dict(t.indices))}", f"{where}.tile.{name}")
        _int(size, f"{where}.tile.{name}", positive=True)
    bank_op = d.get("bank_operand", t.operands[0].name)
    if not isinstance(bank_op, str) or bank_op not in shapes:
        raise InputError(f"no operand named {bank_op!r}", f"{where}.bank_operand")
    return W.Workload(t.name, t.description or t.name, [t], make, reference, dict(tile), bank_op,
                      "user transform file")


def load_transform_file(path: str) -> dict[str, Any]:
    """A transform file decoded (UTF-8 JSON, finite numbers: core.checks); its fields are read by
    workload_from_json."""
    from core.checks import read_json_file

    data = read_json_file(path, "transform file")
    if not isinstance(data, dict):
        raise InputError(f"a transform file holds one JSON object, got {type(data).__name__}", str(path))
    return data
