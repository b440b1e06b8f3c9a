"""The workload and target the user picks in the window, with their JSON forms.

`from_json` functions check types and ranges and raise InputError with a field path, so a
hand-edited session names the exact field that is wrong.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Union

from core.errors import InputError

MAX_KERNEL_SIZE = 7


# ---------------------------------------------------------------- small checked readers
def _get(d: Any, key: str, path: str, kind: type | tuple[type, ...], default: Any = ...) -> Any:
    if not isinstance(d, dict):
        raise InputError(f"expected an object, got {type(d).__name__}", path)
    if key not in d:
        if default is ...:
            raise InputError("missing field", f"{path}.{key}")
        return default
    value = d[key]
    ok = isinstance(value, kind) and not (isinstance(value, bool) and bool not in _as_tuple(kind))
    if not ok:
        names = "/".join(t.__name__ for t in _as_tuple(kind))
        raise InputError(f"expected {names}, got {type(value).__name__} {value!r}"[:200], f"{path}.{key}")
    return value


def _as_tuple(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def _positive_int(d: Any, key: str, path: str, default: Any = ..., maximum: int | None = None) -> int:
    value = _get(d, key, path, int, default)
    if value <= 0 or (maximum is not None and value > maximum):
        rng = f"1..{maximum}" if maximum else "a positive integer"
        raise InputError(f"must be {rng}, got {value}", f"{path}.{key}")
    return value


def _positive_number(d: Any, key: str, path: str, default: Any = ...) -> float:
    value = float(_get(d, key, path, (int, float), default))
    if not math.isfinite(value) or value <= 0:
        raise InputError(f"must be a positive number, got {value}", f"{path}.{key}")
    return value


# ---------------------------------------------------------------- workloads
@dataclass
class Kernel:
    """One convolution kernel: numerators over the set's denominator; 2-D (h x w) or 3-D (z x h x w)."""

    name: str
    values: list

    @property
    def channels(self) -> list[list[list[float]]]:
        return self.values if self.values and isinstance(self.values[0][0], list) else [self.values]


@dataclass
class KernelSet:
    """Kernels sharing one denominator, e.g. Cain's 1/16 [[1,2,1],...]."""

    name: str
    denominator: int
    kernels: list[Kernel]
    kind: str = field(default="kernels", init=False)

    def validate(self, path: str = "workload") -> None:
        if not self.kernels:
            raise InputError("no kernels: add at least one", f"{path}.kernels")
        if self.denominator <= 0:
            raise InputError(f"denominator must be positive, got {self.denominator}", f"{path}.denominator")
        for i, k in enumerate(self.kernels):
            kp = f"{path}.kernels[{i}].values"
            chans = k.channels
            if not chans or not chans[0]:
                raise InputError("empty kernel", kp)
            h, w = len(chans[0]), len(chans[0][0]) if chans[0] else 0
            for c, chan in enumerate(chans):
                for r, row in enumerate(chan):
                    if not isinstance(row, list):
                        raise InputError("rows must be lists of numbers", f"{kp}[{c}][{r}]")
                    if len(row) != w:
                        raise InputError(f"ragged rows: row {r + 1} has {len(row)} values, row 1 has {w}", kp)
                    for j, v in enumerate(row):
                        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                            raise InputError(f"not a number: {v!r} (row {r + 1}, column {j + 1})", kp)
                if len(chan) != h:
                    raise InputError("channels have different sizes", kp)
            if h > MAX_KERNEL_SIZE or w > MAX_KERNEL_SIZE:
                raise InputError(f"kernel is {h}x{w}; the limit is {MAX_KERNEL_SIZE}x{MAX_KERNEL_SIZE}", kp)

    def to_json(self) -> dict[str, Any]:
        return {"kind": "kernels", "name": self.name, "denominator": self.denominator,
                "kernels": [{"name": k.name, "values": k.values} for k in self.kernels]}

    @staticmethod
    def from_json(d: Any, path: str = "workload") -> "KernelSet":
        name = _get(d, "name", path, str, "kernels")
        den = _positive_int(d, "denominator", path, 1)
        raw = _get(d, "kernels", path, list)
        kernels = []
        for i, k in enumerate(raw):
            kp = f"{path}.kernels[{i}]"
            values = _get(k, "values", kp, list)
            kernels.append(Kernel(_get(k, "name", kp, str, f"k{i + 1}"), values))
        ks = KernelSet(name=name, denominator=den, kernels=kernels)
        ks.validate(path)
        return ks


@dataclass
class CnnSet:
    """Several CNNs from the model zoo to map together (f-CNNx), or one network (bounds)."""

    cnns: list[str]
    batch: int = 1
    kind: str = field(default="cnn_set", init=False)

    def validate(self, path: str = "workload") -> None:
        from core.nets import zoo

        if not self.cnns:
            raise InputError("no CNNs picked", f"{path}.cnns")
        known = zoo.names()
        for i, n in enumerate(self.cnns):
            if n not in known:
                raise InputError(f"unknown CNN {n!r}; known: {', '.join(known)}", f"{path}.cnns[{i}]")

    def to_json(self) -> dict[str, Any]:
        return {"kind": "cnn_set", "cnns": list(self.cnns), "batch": self.batch}

    @staticmethod
    def from_json(d: Any, path: str = "workload") -> "CnnSet":
        cnns = _get(d, "cnns", path, list)
        for i, n in enumerate(cnns):
            if not isinstance(n, str):
                raise InputError(f"expected a CNN name, got {n!r}", f"{path}.cnns[{i}]")
        cs = CnnSet(cnns=list(cnns), batch=_positive_int(d, "batch", path, 1))
        cs.validate(path)
        return cs


@dataclass
class FpspFilter:
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
            raise InputError(f"unknown filter preset {name!r}; known: {', '.join(PRESETS)}", f"{path}.preset")
        return FpspFilter(name)


Workload = Union[KernelSet, CnnSet, FpspFilter]
WORKLOAD_KINDS = {"kernels": "Convolution kernels", "cnn_set": "Multi-CNN set", "fpsp_filter": "FPSP filter"}


def workload_from_json(d: Any, path: str = "workload") -> Workload:
    kind = _get(d, "kind", path, str)
    readers = {"kernels": KernelSet.from_json, "cnn_set": CnnSet.from_json, "fpsp_filter": FpspFilter.from_json}
    if kind not in readers:
        raise InputError(f"unknown workload kind {kind!r}; expected one of {', '.join(readers)}", f"{path}.kind")
    return readers[kind](d, path)


def kernels_of(workload: Workload | None) -> KernelSet:
    """The kernels of a kernel or FPSP-filter workload (engines that need kernels call this)."""
    if isinstance(workload, KernelSet):
        return workload
    if isinstance(workload, FpspFilter):
        return workload.kernel_set()
    raise InputError("this engine needs convolution kernels or an FPSP filter as workload", "workload.kind")


# ---------------------------------------------------------------- targets
@dataclass
class Scamp5Target:
    """SCAMP-5 focal-plane sensor-processor."""

    registers: int = 6
    array_size: int = 256
    kind: str = field(default="scamp5", init=False)

    def to_json(self) -> dict[str, Any]:
        return {"kind": "scamp5", "registers": self.registers, "array_size": self.array_size}

    @staticmethod
    def from_json(d: Any, path: str = "target") -> "Scamp5Target":
        regs = _positive_int(d, "registers", path, 6, maximum=26)
        if regs < 2:
            raise InputError("SCAMP-5 needs at least 2 analogue registers", f"{path}.registers")
        return Scamp5Target(regs, _positive_int(d, "array_size", path, 256, maximum=4096))


@dataclass
class FpgaTarget:
    """An FPGA board with its off-chip bandwidth."""

    board: str = "zc706"
    bandwidth_gbps: float = 1.0
    kind: str = field(default="fpga", init=False)

    def to_json(self) -> dict[str, Any]:
        return {"kind": "fpga", "board": self.board, "bandwidth_gbps": self.bandwidth_gbps}

    @staticmethod
    def from_json(d: Any, path: str = "target") -> "FpgaTarget":
        from core.boards import BOARDS

        board = _get(d, "board", path, str, "zc706")
        if board not in BOARDS:
            raise InputError(f"unknown board {board!r}; known: {', '.join(BOARDS)}", f"{path}.board")
        return FpgaTarget(board, _positive_number(d, "bandwidth_gbps", path, 1.0))


@dataclass
class DataflowTarget:
    """A dataflow accelerator: on-chip memory and a PE array."""

    memory_bytes: int = 64 * 1024
    word_bits: int = 16
    pe_rows: int = 16
    pe_cols: int = 16
    kind: str = field(default="dataflow", init=False)

    @property
    def memory_words(self) -> int:
        return self.memory_bytes * 8 // self.word_bits

    def to_json(self) -> dict[str, Any]:
        return {"kind": "dataflow", "memory_bytes": self.memory_bytes, "word_bits": self.word_bits,
                "pe_rows": self.pe_rows, "pe_cols": self.pe_cols}

    @staticmethod
    def from_json(d: Any, path: str = "target") -> "DataflowTarget":
        return DataflowTarget(_positive_int(d, "memory_bytes", path, 65536),
                              _positive_int(d, "word_bits", path, 16, maximum=64),
                              _positive_int(d, "pe_rows", path, 16, maximum=4096),
                              _positive_int(d, "pe_cols", path, 16, maximum=4096))


@dataclass
class MobileSocTarget:
    """A mobile SoC: CPU cores and SIMD vector width (in float32 lanes)."""

    cores: int = 2
    vector_width: int = 4
    kind: str = field(default="mobile_soc", init=False)

    def to_json(self) -> dict[str, Any]:
        return {"kind": "mobile_soc", "cores": self.cores, "vector_width": self.vector_width}

    @staticmethod
    def from_json(d: Any, path: str = "target") -> "MobileSocTarget":
        vw = _positive_int(d, "vector_width", path, 4, maximum=64)
        if vw & (vw - 1):
            raise InputError(f"vector width must be a power of two, got {vw}", f"{path}.vector_width")
        return MobileSocTarget(_positive_int(d, "cores", path, 2, maximum=256), vw)


Target = Union[Scamp5Target, FpgaTarget, DataflowTarget, MobileSocTarget]
TARGET_KINDS = {"scamp5": "SCAMP-5 focal-plane sensor-processor", "fpga": "FPGA board",
                "dataflow": "Dataflow accelerator", "mobile_soc": "Mobile SoC"}


def target_from_json(d: Any, path: str = "target") -> Target:
    kind = _get(d, "kind", path, str)
    readers = {"scamp5": Scamp5Target.from_json, "fpga": FpgaTarget.from_json,
               "dataflow": DataflowTarget.from_json, "mobile_soc": MobileSocTarget.from_json}
    if kind not in readers:
        raise InputError(f"unknown target kind {kind!r}; expected one of {', '.join(readers)}", f"{path}.kind")
    return readers[kind](d, path)
