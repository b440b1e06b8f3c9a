"""The workload and target the user picks in the window, with their JSON forms.

`from_json` functions check types and ranges and raise InputError with a field path, so a
hand-edited session names the exact field that is wrong.
"""

from __future__ import annotations

import copy
import math
from pathlib import Path
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, TypeVar

from core.checks import INT_LIMIT, check_name, check_numbers, number_problem
from core.errors import InputError
from core.target_fields import DRAM_PJ, GBUF_PJ, MAC_PJ, RF_PJ, bytes_field, cpu_memory_fields, energy_field, int_field, \
    num_field
from core.kinds import ItemKind, KindTitles, kind_of, register
from core.units import format_quantity

MAX_KERNEL_SIZE = 7
MAX_DENOMINATOR = 2 ** 31 - 1
MAX_BATCH = 1_000_000


# ---------------------------------------------------------------- small checked readers
def _join(path: str, key: str) -> str:
    """`path.key`, or just `key` at the root (a file's own fields: `kernels[0].values`)."""
    return f"{path}.{key}" if path else key


def _get(d: Any, key: str, path: str, kind: type | tuple[type, ...], default: Any = ...) -> Any:
    if not isinstance(d, dict):
        raise InputError(f"expected an object, got {type(d).__name__}", path)
    if key not in d:
        if default is ...:
            raise InputError("missing field", _join(path, key))
        return default
    value = d[key]
    ok = isinstance(value, kind) and not (isinstance(value, bool) and bool not in _as_tuple(kind))
    if not ok:
        names = "/".join(t.__name__ for t in _as_tuple(kind))
        raise InputError(f"expected {names}, got {type(value).__name__} {_short(value)}", _join(path, key))
    return value


def _as_tuple(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def _positive_int(d: Any, key: str, path: str, default: Any = ..., maximum: int = INT_LIMIT - 1) -> int:
    value = _get(d, key, path, int, default)
    if value <= 0 or value > maximum:
        raise InputError(f"must be 1..{maximum}, got {_short(value)}", _join(path, key))
    return value


def _short(value: Any) -> str:
    """A value for a message: huge integers by their digit count, long texts cut."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10 ** 24:
        return f"a number of {len(str(abs(value)))} digits"
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _str_list(d: Any, key: str, path: str, what: str, default: Any = ...) -> list[str]:
    values = _get(d, key, path, list, default)
    for i, v in enumerate(values):
        if not isinstance(v, str):
            raise InputError(f"expected {what}, got {v!r}"[:200], f"{_join(path, key)}[{i}]")
    return list(values)


def _positive_number(d: Any, key: str, path: str, default: Any = ...) -> float:
    raw = _get(d, key, path, (int, float), default)
    problem = number_problem(raw)
    if problem:
        raise InputError(problem, _join(path, key))
    value = float(raw)
    if not math.isfinite(value) or value <= 0:
        raise InputError(f"must be a positive number, got {value}", _join(path, key))
    return value


def read_fields(d: Any, schema: dict[str, Any], path: str) -> dict[str, Any]:
    """Read the fields a JSON schema's "properties" describe (integer/number/boolean/string, enum,
    minimum/maximum, defaults), with messages that name the field and the allowed range. The same
    schema sets the GUI widgets' ranges, so anything this accepts a widget can show."""
    if not isinstance(d, dict):
        raise InputError(f"expected an object, got {type(d).__name__}", path)
    out: dict[str, Any] = {}
    for key, prop in schema["properties"].items():
        where = _join(path, key)
        if key not in d:
            if "default" not in prop:
                raise InputError("missing field", where)
            out[key] = prop["default"]
            continue
        value = d[key]
        kind = prop.get("type")
        problem = number_problem(value) if isinstance(value, (int, float)) else None
        if problem:
            raise InputError(problem, where)
        if kind == "integer" and (isinstance(value, bool) or not isinstance(value, int)):
            raise InputError(f"expected an integer, got {value!r}"[:200], where)
        if kind == "number":
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise InputError(f"expected a finite number, got {value!r}"[:200], where)
            value = float(value)
        if kind == "string" and not isinstance(value, str):
            raise InputError(f"expected a string, got {value!r}"[:200], where)
        if kind == "boolean" and not isinstance(value, bool):
            raise InputError(f"expected true or false, got {value!r}"[:200], where)
        if "enum" in prop and value not in prop["enum"]:
            raise InputError(f"must be one of {', '.join(map(str, prop['enum']))}, got {value!r}"[:200], where)
        lo, hi = prop.get("minimum"), prop.get("maximum")
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            rng = f"{lo}..{hi}" if lo is not None and hi is not None else (f">= {lo}" if lo is not None else f"<= {hi}")
            raise InputError(f"must be {rng}, got {value}", where)
        if "exclusiveMinimum" in prop and value <= prop["exclusiveMinimum"]:
            raise InputError(f"must be above {prop['exclusiveMinimum']}, got {value}", where)
        out[key] = value
    return out


# ---------------------------------------------------------------- workloads
@dataclass
class Kernel:
    """One convolution kernel: numerators over the set's denominator; 2-D (h x w) or 3-D (z x h x w)."""

    name: str
    values: list

    @property
    def channels(self) -> list[list[list[float]]]:
        v = self.values
        return v if v and isinstance(v[0], list) and v[0] and isinstance(v[0][0], list) else [v]


def kernel_shape(values: Any, where: str) -> tuple[int, int, int]:
    """(channels, height, width) of a kernel's values: a matrix (rows of numbers) or a list of
    equally sized matrices, one per input channel. InputError names the row, column or channel once."""
    if not isinstance(values, list) or not values:
        raise InputError("empty kernel: expected rows of numbers", where)
    three_d = isinstance(values[0], list) and bool(values[0]) and isinstance(values[0][0], list)
    if not three_d:
        h, w = _matrix_shape(values, where, "")
        return 1, h, w
    shape: tuple[int, int] | None = None
    for c, chan in enumerate(values):
        if not isinstance(chan, list) or not chan or not isinstance(chan[0], list):
            raise InputError(f"channel {c + 1} is not a matrix (rows of numbers)", where)
        hw = _matrix_shape(chan, where, f"channel {c + 1}, ")
        if shape is None:
            shape = hw
        elif hw != shape:
            raise InputError(f"channel {c + 1} is {hw[0]}x{hw[1]}, channel 1 is {shape[0]}x{shape[1]}", where)
    assert shape is not None
    return len(values), shape[0], shape[1]


def _matrix_shape(rows: list[Any], where: str, prefix: str) -> tuple[int, int]:
    w = -1
    for r, row in enumerate(rows):
        if not isinstance(row, list):
            raise InputError(f"{prefix}row {r + 1}: expected a list of numbers, got {_short(row)}", where)
        if not row:
            raise InputError(f"{prefix}row {r + 1} is empty", where)
        if w < 0:
            w = len(row)
        elif len(row) != w:
            raise InputError(f"{prefix}ragged rows: row {r + 1} has {len(row)} values, row 1 has {w}", where)
        for j, v in enumerate(row):
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise InputError(f"{prefix}row {r + 1}, column {j + 1}: not a number: {_short(v)}", where)
            problem = number_problem(v)
            if problem:
                raise InputError(f"{prefix}row {r + 1}, column {j + 1}: {problem}", where)
    h = len(rows)
    if h > MAX_KERNEL_SIZE or w > MAX_KERNEL_SIZE:
        raise InputError(f"{prefix}kernel is {h}x{w}; the limit is {MAX_KERNEL_SIZE}x{MAX_KERNEL_SIZE}", where)
    return h, w


class Workload:
    """Every workload kind's item is one: its kind (core.kinds registers the kinds, so no list of
    them is kept here) and its JSON form. Engines narrow a workload to their own kinds' classes with
    isinstance, as they narrow a Target (every target kind's item is a _SchemaTarget)."""

    kind: str

    def to_json(self) -> dict[str, Any]:
        raise NotImplementedError


@dataclass
class KernelSet(Workload):
    """Kernels sharing one denominator, e.g. Cain's 1/16 [[1,2,1],...]."""

    name: str
    denominator: int
    kernels: list[Kernel]
    kind: str = field(default="kernels", init=False)

    def validate(self, path: str = "workload") -> None:
        check_name(self.name, _join(path, "name"))       # names reach the generated code and the window
        for i, k in enumerate(self.kernels):
            check_name(k.name, f"{_join(path, 'kernels')}[{i}].name")
        if not self.kernels:
            raise InputError("no kernels: add at least one", _join(path, "kernels"))
        den = self.denominator
        if isinstance(den, bool) or not isinstance(den, int) or not 0 < den <= MAX_DENOMINATOR:
            raise InputError(f"must be an integer 1..{MAX_DENOMINATOR}, got {_short(den)}", _join(path, "denominator"))
        for i, k in enumerate(self.kernels):
            kernel_shape(k.values, f"{_join(path, 'kernels')}[{i}].values")

    def to_json(self) -> dict[str, Any]:
        return {"kind": "kernels", "name": self.name, "denominator": self.denominator,
                "kernels": [{"name": k.name, "values": k.values} for k in self.kernels]}

    @staticmethod
    def from_json(d: Any, path: str = "workload") -> "KernelSet":
        name = _get(d, "name", path, str, "kernels")
        den = _positive_int(d, "denominator", path, 1, MAX_DENOMINATOR)
        raw = _get(d, "kernels", path, list)
        kernels = []
        for i, k in enumerate(raw):
            kp = f"{_join(path, 'kernels')}[{i}]"
            values = _get(k, "values", kp, list)
            kernels.append(Kernel(_get(k, "name", kp, str, f"k{i + 1}"), values))
        ks = KernelSet(name=name, denominator=den, kernels=kernels)
        ks.validate(path)
        return ks


def _check_batch(batch: Any, path: str) -> None:
    if isinstance(batch, bool) or not isinstance(batch, int) or not 0 < batch <= MAX_BATCH:
        raise InputError(f"must be an integer 1..{MAX_BATCH}, got {_short(batch)}", _join(path, "batch"))


@dataclass
class CnnSet(Workload):
    """Several CNNs from the model zoo to map together (f-CNNx), or one network (bounds)."""

    cnns: list[str]
    batch: int = 1
    onnx: list[str] = field(default_factory=list)    # ONNX files mapped beside the zoo networks
    kind: str = field(default="cnn_set", init=False)

    def validate(self, path: str = "workload") -> None:
        from core.nets import zoo

        if not self.cnns and not self.onnx:
            raise InputError("no CNNs picked", _join(path, "cnns"))
        _check_batch(self.batch, path)
        known = zoo.names()
        for i, n in enumerate(self.cnns):
            if n not in known:
                raise InputError(f"unknown CNN {n!r}; known: {', '.join(known)}", f"{_join(path, 'cnns')}[{i}]")

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"kind": "cnn_set", "cnns": list(self.cnns), "batch": self.batch}
        if self.onnx:
            d["onnx"] = list(self.onnx)
        return d

    @staticmethod
    def from_json(d: Any, path: str = "workload") -> "CnnSet":
        cnns = _str_list(d, "cnns", path, "a CNN name")
        onnx = _str_list(d, "onnx", path, "an ONNX file path", [])
        cs = CnnSet(cnns=cnns, batch=_positive_int(d, "batch", path, 1, MAX_BATCH), onnx=onnx)
        cs.validate(path)
        return cs


@dataclass
class FpspFilter(Workload):
    """A named filter preset for the focal-plane sensor-processor."""

    preset: str
    kind: str = field(default="fpsp_filter", init=False)

    def kernel_set(self) -> KernelSet:
        from core.filters import preset

        return preset(self.preset)

    def to_json(self) -> dict[str, Any]:
        return {"kind": "fpsp_filter", "preset": self.preset}

    @staticmethod
    def from_json(d: Any, path: str = "workload") -> "FpspFilter":
        from core.filters import PRESETS

        name = _get(d, "preset", path, str)
        if name not in PRESETS:
            raise InputError(f"unknown filter preset {name!r}; known: {', '.join(PRESETS)}", _join(path, "preset"))
        return FpspFilter(name)


# The trained 8x8 digits CNN shipped in assets/ (the one network here with real weights).
BUILTIN_DIGITS = "builtin-digits"


@dataclass
class CnnNetwork(Workload):
    """One CNN: a zoo network, the built-in digits CNN, or an ONNX file; optionally with a
    validation set attached (a .npz of images x and labels y)."""

    network: str = "vgg16"           # zoo name or BUILTIN_DIGITS; ignored when onnx_path is set
    onnx_path: str = ""
    validation_path: str = ""
    batch: int = 1
    kind: str = field(default="cnn", init=False)

    @property
    def source(self) -> str:
        return "onnx" if self.onnx_path else "builtin" if self.network == BUILTIN_DIGITS else "zoo"

    def validate(self, path: str = "workload") -> None:
        from core.nets import zoo

        _check_batch(self.batch, path)
        if not self.onnx_path and self.network != BUILTIN_DIGITS and self.network not in zoo.names():
            raise InputError(f"unknown CNN {self.network!r}; known: {', '.join([BUILTIN_DIGITS, *zoo.names()])}",
                             _join(path, "network"))

    def to_json(self) -> dict[str, Any]:
        return {"kind": "cnn", "network": self.network, "onnx_path": self.onnx_path,
                "validation_path": self.validation_path, "batch": self.batch}

    @staticmethod
    def from_json(d: Any, path: str = "workload") -> "CnnNetwork":
        c = CnnNetwork(_get(d, "network", path, str, "vgg16"), _get(d, "onnx_path", path, str, ""),
                       _get(d, "validation_path", path, str, ""), _positive_int(d, "batch", path, 1, MAX_BATCH))
        c.validate(path)
        return c


@dataclass
class MeritTransformWorkload(Workload):
    """A MERIT tensor transform: one of the engine's built-in workloads, or a user's transform JSON
    (the format of docs/merit.md)."""

    builtin: str = "conv3x3"
    transform: dict[str, Any] | None = None
    kind: str = field(default="merit_transform", init=False)

    def validate(self, path: str = "workload") -> None:
        if self.transform is not None:
            from core.merit_transform.fileformat import workload_from_json as merit_from_json

            check_numbers(self.transform, _join(path, "transform"))
            merit_from_json(self.transform, _join(path, "transform"))
            return
        from core.merit_transform import workloads as merit_workloads

        if self.builtin not in merit_workloads.WORKLOADS:
            raise InputError(f"unknown MERIT workload {self.builtin!r}; known: {', '.join(merit_workloads.names())}",
                             _join(path, "builtin"))

    def to_json(self) -> dict[str, Any]:
        return {"kind": "merit_transform", "builtin": self.builtin, "transform": self.transform}

    @staticmethod
    def from_json(d: Any, path: str = "workload") -> "MeritTransformWorkload":
        transform = _get(d, "transform", path, (dict, type(None)), None)
        w = MeritTransformWorkload(_get(d, "builtin", path, str, "conv3x3"), transform)
        w.validate(path)
        return w


@dataclass
class ConvLayers(Workload):
    """Convolution layers written as specs (`Ci=64,Hi=56,Wi=56,Co=128,kernel=3,pad=1`), for engines
    that analyse layers one by one."""

    layers: list[str] = field(default_factory=list)
    kind: str = field(default="conv_layers", init=False)

    def validate(self, path: str = "workload") -> None:
        if not self.layers:
            raise InputError("no layer given: add a spec like Ci=64,Hi=56,Wi=56,Co=128,kernel=3,pad=1",
                             _join(path, "layers"))

    def to_json(self) -> dict[str, Any]:
        return {"kind": "conv_layers", "layers": list(self.layers)}

    @staticmethod
    def from_json(d: Any, path: str = "workload") -> "ConvLayers":
        c = ConvLayers(_str_list(d, "layers", path, "a layer spec"))
        c.validate(path)
        return c


# kind -> title of every registered workload kind (core.kinds: kinds register themselves, below and in
# core/<pkg>/item_kinds.py)
WORKLOAD_KINDS = KindTitles("workloads")


def workload_from_json(d: Any, path: str = "workload") -> Workload:
    value: Workload = _read_item("workloads", "workload", WORKLOAD_KINDS, d, path)
    return value


def _read_item(lib: Literal["workloads", "targets"], what: str, titles: Any, d: Any, path: str) -> Any:
    """A library item of a registered kind (core.kinds), read by its kind's reader, no unknown key."""
    kind = _get(d, "kind", path, str)
    found = kind_of(lib, kind)
    if found is None:
        raise InputError(f"unknown {what} kind {kind!r}; expected one of {', '.join(titles)}", _join(path, "kind"))
    value = found.read(d, path)
    _refuse_unknown_keys(d, value, path)
    return value


def _refuse_unknown_keys(d: dict[str, Any], value: Any, path: str) -> None:
    """A key the kind does not have would be silently ignored (a study axis over `workload.netwrk`
    would run the same point every time): refused, with the nearest known key."""
    import dataclasses
    import difflib

    from core.checks import field_path

    known = {"kind", *(f.name for f in dataclasses.fields(value)), *value.to_json()}
    for key in d:
        if key not in known:
            near = difflib.get_close_matches(str(key), sorted(known), n=1)
            hint = f"; did you mean {near[0]!r}?" if near else f"; a {value.kind} has {', '.join(sorted(known))}"
            raise InputError(f"unknown field {str(key)[:40]!r}{hint}", field_path(path, key))


def kernels_of(workload: Workload | None) -> KernelSet:
    """The kernels of a kernel or FPSP-filter workload (engines that need kernels call this)."""
    if isinstance(workload, KernelSet):
        return workload
    if isinstance(workload, FpspFilter):
        return workload.kernel_set()
    raise InputError("this engine needs convolution kernels or an FPSP filter as workload", "workload.kind")


# ---------------------------------------------------------------- targets
# Each target's fields as a JSON schema: the reader checks them and the GUI builds its editor
# (widget kinds, ranges, labels, tooltips) from the same schema.
_int_field = int_field


# Defaults of the hardware fields and where they come from (docs/targets.md)
SCAMP5_INSTRUCTION_NS = 430.0               # Cain paper, section 5: 21 macro instructions in 9 us on SCAMP-5 (0.43 us)
DATAFLOW_CLOCK_MHZ = 200.0                  # Eyeriss (Chen et al., JSSC 2017): core clock 100-250 MHz, measured at 200
DATAFLOW_BANDWIDTH_GBPS = 3200e6 * 32 / 8 / 1e9     # LPDDR4-3200 (JEDEC JESD209-4), one x32 device (two 16-bit channels): 12.8 GB/s
DATAFLOW_DRAM_BYTES = 1024 ** 3             # a choice (1 GiB), read only by the check that a layer fits
DATAFLOW_RF_BYTES = 512                     # Eyeriss (ISCA 2016), the analysis framework's 512 B register file per PE
_SOC = cpu_memory_fields("SoC's CPU")
# Two vector FMA a cycle at the SoC's default 4 lanes (128 bits): two FMA pipes on Arm Cortex-A76 and
# later (Cortex-A76 Software Optimization Guide) and x86-64 since Haswell / Zen (docs/targets.md)
SOC_FMA_PER_CYCLE = 2

_TargetT = TypeVar("_TargetT", bound="_SchemaTarget")


class _SchemaTarget:
    """A target is its kind and the fields its SCHEMA describes: written and read from that one
    description (in the schema's order), so the four targets do not each spell out their keys."""

    SCHEMA: ClassVar[dict[str, Any]]
    kind: str

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, **{key: getattr(self, key) for key in self.SCHEMA["properties"]}}

    @classmethod
    def from_json(cls: type[_TargetT], d: Any, path: str = "target") -> _TargetT:
        return cls(**read_fields(d, cls.SCHEMA, path))


@dataclass
class Scamp5Target(_SchemaTarget):
    """SCAMP-5 focal-plane sensor-processor."""

    registers: int = 6
    array_size: int = 256
    instruction_ns: float = SCAMP5_INSTRUCTION_NS
    kind: str = field(default="scamp5", init=False)

    SCHEMA = {"properties": {
        "registers": _int_field("Registers", 6, 2, 26, "Analogue registers A, B, C, ... (SCAMP-5 has six)"),
        "array_size": _int_field("Array size", 256, 1, 4096, "Pixels per side of the square PE array (SCAMP-5: 256)",
                                 "px"),
        "instruction_ns": num_field("Instruction time", SCAMP5_INSTRUCTION_NS, "ns",
                                    "Time of one macro instruction on every PE at once (SCAMP-5: 9 us for Cain's "
                                    "21-instruction AnalogNet2 kernels, measured on the device by the Cain paper)",
                                    hi=1e9),
    }}


def _board_names() -> list[str]:
    from core.boards import BOARDS

    return list(BOARDS)


@dataclass
class FpgaTarget(_SchemaTarget):
    """An FPGA board with its off-chip bandwidth."""

    board: str = "zc706"
    bandwidth_gbps: float = 1.0
    kind: str = field(default="fpga", init=False)

    SCHEMA = {"properties": {
        "board": {"type": "string", "title": "Board", "default": "zc706", "enum": _board_names(),
                  "description": "FPGA board (device resources from the vendor's data sheet)"},
        "bandwidth_gbps": {"type": "number", "title": "Off-chip bandwidth", "default": 1.0, "exclusiveMinimum": 0,
                           "maximum": 1000.0, "unit": "GB/s",
                           "description": "Off-chip memory bandwidth shared by all CNNs"},
    }}


@dataclass
class DataflowTarget(_SchemaTarget):
    """A dataflow accelerator: a PE array at a clock, and three memory levels (off-chip DRAM behind a
    bandwidth, the on-chip global buffer, a register file per PE), each with its energy per word read
    and written, and the energy of one MAC (docs/targets.md: what each default comes from)."""

    memory_bytes: int = 64 * 1024            # the global buffer (the bound's S)
    word_bits: int = 16
    pe_rows: int = 16
    pe_cols: int = 16
    clock_mhz: float = DATAFLOW_CLOCK_MHZ
    bandwidth_gbps: float = DATAFLOW_BANDWIDTH_GBPS
    dram_bytes: int = DATAFLOW_DRAM_BYTES
    dram_read_pj: float = DRAM_PJ
    dram_write_pj: float = DRAM_PJ
    gbuf_read_pj: float = GBUF_PJ
    gbuf_write_pj: float = GBUF_PJ
    rf_bytes: int = DATAFLOW_RF_BYTES
    rf_read_pj: float = RF_PJ
    rf_write_pj: float = RF_PJ
    mac_pj: float = MAC_PJ
    kind: str = field(default="dataflow", init=False)

    SCHEMA = {"properties": {
        "memory_bytes": _int_field("On-chip memory", 65536, 1, 2 ** 31 - 1,
                                   "Global buffer: the on-chip memory between DRAM and the PE array", "B"),
        "word_bits": _int_field("Word", 16, 1, 64, "Bits per data word", "bit"),
        "pe_rows": _int_field("PE rows", 16, 1, 4096, "Rows of the processing-element array"),
        "pe_cols": _int_field("PE columns", 16, 1, 4096, "Columns of the processing-element array"),
        "clock_mhz": num_field("Clock", DATAFLOW_CLOCK_MHZ, "MHz", "PE array clock: one MAC per PE per cycle "
                               "(default: Eyeriss's 200 MHz, JSSC 2017)", hi=1e5),
        "bandwidth_gbps": num_field("Off-chip bandwidth", DATAFLOW_BANDWIDTH_GBPS, "GB/s",
                                    "DRAM bandwidth (default: one x32 LPDDR4-3200 device, 12.8 GB/s)", hi=1e5),
        "dram_bytes": bytes_field("DRAM", DATAFLOW_DRAM_BYTES, "Off-chip DRAM size: every layer's inputs, "
                                  "weights and outputs must fit in it"),
        "dram_read_pj": energy_field("DRAM read", DRAM_PJ, "Energy per word read from DRAM (default: 200 MACs, "
                                     "Eyeriss's ratio, at Horowitz's 1.5 pJ 16-bit MAC)"),
        "dram_write_pj": energy_field("DRAM write", DRAM_PJ, "Energy per word written to DRAM"),
        "gbuf_read_pj": energy_field("Buffer read", GBUF_PJ, "Energy per word read from the global buffer "
                                     "(default: 6 MACs, Eyeriss's ratio)"),
        "gbuf_write_pj": energy_field("Buffer write", GBUF_PJ, "Energy per word written to the global buffer"),
        "rf_bytes": bytes_field("Register file", DATAFLOW_RF_BYTES, "Register file per PE: it holds the PE's "
                                "partial sums, so dataflows needing more are not chosen (default: Eyeriss's 512 B)"),
        "rf_read_pj": energy_field("Register read", RF_PJ, "Energy per word read from a PE's registers "
                                   "(default: 1 MAC, Eyeriss's ratio)"),
        "rf_write_pj": energy_field("Register write", RF_PJ, "Energy per word written to a PE's registers"),
        "mac_pj": energy_field("MAC", MAC_PJ, "Energy of one multiply-accumulate (default: Horowitz, 45 nm, "
                               "16-bit float: 1.1 pJ multiply + 0.4 pJ add)"),
    }}

    @property
    def memory_words(self) -> int:
        return self.memory_bytes * 8 // self.word_bits

    @property
    def word_bytes(self) -> float:
        return self.word_bits / 8

    @property
    def pes(self) -> int:
        return self.pe_rows * self.pe_cols

    @property
    def rf_words(self) -> int:
        """Words one PE's register file holds: the partial sums the mapping keeps in it (core.bound.onchip)."""
        return self.rf_bytes * 8 // self.word_bits


@dataclass
class MobileSocTarget(_SchemaTarget):
    """A mobile SoC: CPU cores and SIMD vector width (in float32 lanes)."""

    cores: int = 2
    vector_width: int = 4
    fma_per_cycle: int = SOC_FMA_PER_CYCLE
    clock_mhz: float = _SOC["clock_mhz"]["default"]
    bandwidth_gbps: float = _SOC["bandwidth_gbps"]["default"]
    l1d_bytes: int = _SOC["l1d_bytes"]["default"]
    l2_bytes: int = _SOC["l2_bytes"]["default"]
    l3_bytes: int = _SOC["l3_bytes"]["default"]
    kind: str = field(default="mobile_soc", init=False)

    SCHEMA = {"properties": {
        "cores": _int_field("Cores", 2, 1, 256, "CPU cores (one worker thread each)"),
        "vector_width": {"type": "integer", "title": "Vector width", "default": 4, "enum": [1, 2, 4, 8, 16, 32, 64],
                         "unit": "lanes", "description": "SIMD width in float32 lanes (a power of two)"},
        "fma_per_cycle": _int_field("FMA issue", SOC_FMA_PER_CYCLE, 1, 16,
                                    "Vector fused multiply-adds of the width above a core starts per cycle: two "
                                    "128-bit FMA pipes on Arm Cortex-A76 and later and on x86-64 since Haswell / "
                                    "Zen; a vector wider than a pipe takes several (this machine, AMD Zen 4: 2 at "
                                    "4 or 8 lanes, 1 at 16). docs/targets.md names the sources", "/cycle"),
        **_SOC,
    }}


Target = _SchemaTarget          # every target kind's item (core.kinds registers the kinds)
TARGET_KINDS = KindTitles("targets")


def target_from_json(d: Any, path: str = "target") -> Target:
    value: Target = _read_item("targets", "target", TARGET_KINDS, d, path)
    return value


# ---------------------------------------------------------------- the kinds defined here
# A library item's summary is read by people: names and titles, never a registry key ("zoo vgg16").
def _counted(n: int, thing: str) -> str:
    return f"{n} {thing}{'' if n == 1 else 's'}"


def _kernels_summary(v: KernelSet) -> str:
    sizes = sorted({f"{len(k.channels[0])}x{len(k.channels[0][0])}" for k in v.kernels})
    scale = f", scaled by 1/{v.denominator:g}" if v.denominator != 1 else ""
    return f"{_counted(len(v.kernels), 'kernel')} {', '.join(sizes)}{scale}"


def _filter_summary(v: FpspFilter) -> str:
    ks = v.kernel_set()
    return f"{ks.name}: {_kernels_summary(ks)}"


def _zoo_title(name: str) -> str:
    """A zoo network's short title ("VGG-16"), or the name itself when the zoo has none by it."""
    return _short_title(_cnn_variants().get(name, name))


def _cnn_summary(v: CnnNetwork) -> str:
    src = {"onnx": f"ONNX file {v.onnx_path}", "builtin": "built-in trained digits CNN"}.get(
        v.source, f"{_zoo_title(v.network)} (zoo)")
    return src + (f"; validation set {v.validation_path}" if v.validation_path else "")


def _cnn_set_summary(v: CnnSet) -> str:
    names = [_zoo_title(n) for n in v.cnns] + [Path(p).name for p in v.onnx]
    return ", ".join(names) + (f"; batch {v.batch}" if v.batch != 1 else "")


def _merit_summary(v: MeritTransformWorkload) -> str:
    if v.transform:
        return f"transform {v.transform.get('name', '')} (from a file)"
    return f"built-in: {_merit_variants().get(v.builtin, v.builtin)}"


def _layers_summary(v: ConvLayers) -> str:
    """"2 conv layers (wide, fc)": the count, and the names the specs give (name=...)."""
    names = [p.split("=", 1)[1].strip() for spec in v.layers for p in spec.split(",")
             if p.split("=", 1)[0].strip().lower() == "name" and "=" in p]
    return _counted(len(v.layers), "conv layer") + (f" ({', '.join(names)})" if names else "")


def _fpga_summary(v: FpgaTarget) -> str:
    from core.boards import BOARDS

    board = BOARDS[v.board].name if v.board in BOARDS else v.board
    return f"{board}, {format_quantity(v.bandwidth_gbps, 'GB/s')}"


def _filter_variants() -> dict[str, str]:
    from core.filters import PRESETS

    return {n: ks.name for n, ks in PRESETS.items()}


def _cnn_variants() -> dict[str, str]:
    from core.nets import zoo

    return {BUILTIN_DIGITS: DIGITS_TITLE, **zoo.titles()}


def _merit_variants() -> dict[str, str]:
    from core.merit_transform import workloads as merit_workloads

    return {n: w.title for n, w in merit_workloads.WORKLOADS.items()}


def _my_kernels() -> KernelSet:
    from core.filters import preset

    g3 = preset("gauss3")
    return KernelSet("my kernels", g3.denominator, [Kernel(k.name, copy.deepcopy(k.values)) for k in g3.kernels])


def _short_title(title: str) -> str:
    return title.split(" (")[0]


def _cnn_name(v: CnnNetwork) -> str:
    if v.source == "onnx":
        return Path(v.onnx_path).stem or "ONNX model"
    return DIGITS_TITLE if v.source == "builtin" else _short_title(_cnn_variants().get(v.network, v.network))


def _fpga_name(v: FpgaTarget) -> str:
    from core.boards import BOARDS
    from core.units import format_quantity

    board = BOARDS[v.board].name if v.board in BOARDS else v.board
    return f"{board} at {format_quantity(v.bandwidth_gbps, 'GB/s')}"


def _dataflow_name(v: DataflowTarget) -> str:
    from core.units import format_quantity

    return f"Accelerator, {format_quantity(v.memory_bytes, 'B')}"


DIGITS_TITLE = "Digits CNN (trained)"
DEFAULT_CNN_SET = ["zfnet", "scenelabel", "vgg16"]       # f-CNNx's three-CNN example
DEFAULT_LAYER = "Ci=64,Hi=56,Wi=56,Co=128,kernel=3,pad=1"

for _kind in (
    ItemKind("workloads", "kernels", "Convolution kernels", KernelSet, KernelSet.from_json, _kernels_summary,
             lambda _v: ("Kernels", KernelSet("kernels", 1, [Kernel("k1", [[0.0, 0.0, 0.0], [0.0, 1.0, 0.0],
                                                                            [0.0, 0.0, 0.0]])])),
             starters=lambda: [(20, "My kernels", _my_kernels())], order=10),
    ItemKind("workloads", "fpsp_filter", "FPSP filter", FpspFilter, FpspFilter.from_json, _filter_summary,
             lambda v: (_filter_variants()[v or "gauss3"], FpspFilter(v or "gauss3")), _filter_variants,
             starters=lambda: [(10, "AnalogNet2", FpspFilter("analognet2"))], order=20,
             auto_name=lambda v: _short_title(_filter_variants().get(v.preset, v.preset))),
    ItemKind("workloads", "cnn", "CNN", CnnNetwork, CnnNetwork.from_json, _cnn_summary,
             lambda v: (_cnn_variants().get(v or "vgg16", v or "vgg16"), CnnNetwork(v or "vgg16")), _cnn_variants,
             starters=lambda: [(40, "VGG-16", CnnNetwork("vgg16")),
                               (50, DIGITS_TITLE, CnnNetwork(BUILTIN_DIGITS))], order=30, auto_name=_cnn_name),
    ItemKind("workloads", "cnn_set", "Multi-CNN set", CnnSet, CnnSet.from_json,
             _cnn_set_summary,
             lambda _v: ("CNN set", CnnSet(list(DEFAULT_CNN_SET))),
             starters=lambda: [(30, "f-CNNx: ZFNet + SceneLabel + VGG-16", CnnSet(list(DEFAULT_CNN_SET)))], order=40),
    ItemKind("workloads", "merit_transform", "MERIT transform", MeritTransformWorkload, MeritTransformWorkload.from_json,
             _merit_summary,
             lambda v: (f"MERIT {_merit_variants()[v or 'conv3x3']}", MeritTransformWorkload(v or "conv3x3")),
             _merit_variants, starters=lambda: [(60, "MERIT conv 3x3", MeritTransformWorkload("conv3x3"))], order=50),
    ItemKind("workloads", "conv_layers", "Convolution layers", ConvLayers, ConvLayers.from_json,
             _layers_summary, lambda _v: ("Layers", ConvLayers([DEFAULT_LAYER])), order=60),
    ItemKind("targets", "scamp5", "SCAMP-5 focal-plane sensor-processor", Scamp5Target, Scamp5Target.from_json,
             lambda v: f"{v.registers} registers, {v.array_size}x{v.array_size} PEs",
             lambda _v: ("SCAMP-5 focal-plane sensor-processor", Scamp5Target()),
             starters=lambda: [(10, "SCAMP-5", Scamp5Target())], order=10),
    ItemKind("targets", "fpga", "FPGA board", FpgaTarget, FpgaTarget.from_json,
             _fpga_summary, lambda _v: ("FPGA board", FpgaTarget()),
             starters=lambda: [(20, "ZC706 at 1 GB/s", FpgaTarget())], order=20, auto_name=_fpga_name),
    ItemKind("targets", "dataflow", "Dataflow accelerator", DataflowTarget, DataflowTarget.from_json,
             lambda v: (f"{format_quantity(v.memory_bytes, 'B')} on chip, {v.word_bits}-bit words, "
                        f"{v.pe_rows}x{v.pe_cols} PEs"),
             lambda _v: ("Dataflow accelerator", DataflowTarget()),
             starters=lambda: [(30, "Accelerator, 64 KiB", DataflowTarget())], order=30, auto_name=_dataflow_name),
    ItemKind("targets", "mobile_soc", "Mobile SoC", MobileSocTarget, MobileSocTarget.from_json,
             lambda v: f"{v.cores} cores x {v.vector_width} lanes", lambda _v: ("Mobile SoC", MobileSocTarget()),
             starters=lambda: [(40, "Mobile SoC, 2 cores x 4 lanes", MobileSocTarget())], order=40,
             auto_name=lambda v: f"Mobile SoC, {v.cores} cores x {v.vector_width} lanes"),
):
    register(_kind)
