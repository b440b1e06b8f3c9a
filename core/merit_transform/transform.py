"""A MERIT transform as data (paper, section III-C, equation 5).

The concatenated index k = (p, a) splits into parallel indices p (one output each) and accumulated
indices a (reduced by the ranged inner product). For every operand tensor, each index k_j either
does not move in it (the element repeats along k_j) or moves along axis d_j with stride s_j and
offset o_j:

    M(A)_{p,a} = A_x,   x_i = sum_j delta(i, d_j) (k_j s_j + o_j)          (eq. 5)

Several indices may move along the same axis (e.g. 4 p2 + a2 - 5 for AlexNet CONV1). Operands may
declare zero padding per axis, so convolutions with padding read zeros just outside the tensor;
anything further out is an input error.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from core.errors import InputError


@dataclass(frozen=True)
class AxisMap:
    """How one transform index moves inside one operand: axis d, stride s, offset o (eq. 5)."""

    axis: int
    stride: int = 1
    offset: int = 0


@dataclass
class Operand:
    """One input tensor of the transform and how each transform index walks through it."""

    name: str
    shape: tuple[int, ...]
    maps: dict[str, AxisMap]               # index name -> axis map; absent index = repetition
    pad: tuple[int, ...] = ()              # zero padding per axis (both sides); () = none

    def __post_init__(self) -> None:
        # one spelling of "no padding" (the file form writes a 0 per axis), so an operand read back
        # from its file form equals the one written
        if self.pad and len(self.pad) == len(self.shape) and not any(self.pad):
            self.pad = ()

    def padding(self) -> tuple[int, ...]:
        return self.pad if self.pad else (0,) * len(self.shape)


@dataclass
class MeritTransform:
    """Sizes of the parallel and accumulated indices, the operands and the inner-product strategy."""

    name: str
    parallel: list[tuple[str, int]]
    accumulate: list[tuple[str, int]]
    operands: list[Operand]
    strategy: str = "dot"
    params: dict[str, Any] = field(default_factory=dict)
    output_shape: tuple[int, ...] | None = None     # reshape of Vec(C); default: the p sizes
    description: str = ""

    def __post_init__(self) -> None:
        # one spelling of "the p sizes" (the file form writes the output shape out), as for padding
        if self.output_shape is not None and tuple(self.output_shape) == (self.p_sizes or (1,)):
            self.output_shape = None

    # ------------------------------------------------------------------ structure
    @property
    def indices(self) -> list[tuple[str, int]]:
        return list(self.parallel) + list(self.accumulate)

    @property
    def p_sizes(self) -> tuple[int, ...]:
        return tuple(n for _, n in self.parallel)

    @property
    def a_sizes(self) -> tuple[int, ...]:
        return tuple(n for _, n in self.accumulate)

    @property
    def p_count(self) -> int:
        return int(np.prod(self.p_sizes, dtype=np.int64)) if self.parallel else 1

    @property
    def a_count(self) -> int:
        return int(np.prod(self.a_sizes, dtype=np.int64)) if self.accumulate else 1

    def operand(self, name: str) -> Operand:
        for op in self.operands:
            if op.name == name:
                return op
        raise KeyError(name)

    def out_shape(self) -> tuple[int, ...]:
        return tuple(self.output_shape) if self.output_shape else (self.p_sizes or (1,))

    # ------------------------------------------------------------------ checks
    def validate(self, where: str = "transform") -> None:
        """Names, sizes, axes and bounds: every element M() reads lies in the (padded) tensor."""
        seen: set[str] = set()
        for part, items in (("parallel", self.parallel), ("accumulate", self.accumulate)):
            for i, (name, n) in enumerate(items):
                if not isinstance(name, str) or not name:
                    raise InputError("index names must be non-empty strings", f"{where}.{part}[{i}]")
                if name in seen:
                    raise InputError(f"index {name!r} is declared twice", f"{where}.{part}[{i}]")
                if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n <= 0:
                    raise InputError(f"size of index {name!r} must be a positive integer, got {n!r}",
                                     f"{where}.{part}[{i}]")
                seen.add(name)
        if not self.operands:
            raise InputError("a transform needs at least one operand", f"{where}.operands")
        from core.merit_transform.strategies import get_strategy

        strategy = get_strategy(self.strategy, f"{where}.strategy")
        if len(self.operands) != len(strategy.roles):
            raise InputError(f"strategy {self.strategy!r} takes {len(strategy.roles)} operands "
                             f"({', '.join(strategy.roles)}), the transform has {len(self.operands)}",
                             f"{where}.operands")
        if strategy.name == "bilateral" and not isinstance(self.params.get("norm"), (int, float)):
            raise InputError("the bilateral strategy needs a number params.norm (= -1 / (2 sigma_r^2))",
                             f"{where}.params.norm")
        sizes = dict(self.indices)
        a_names = {n for n, _ in self.accumulate}
        for oi, op in enumerate(self.operands):
            ow = f"{where}.operands[{oi}]"
            if not op.shape or any((not isinstance(s, (int, np.integer))) or s <= 0 for s in op.shape):
                raise InputError(f"operand {op.name!r} needs a shape of positive integers, got {op.shape}",
                                 f"{ow}.shape")
            pad = op.padding()
            if len(pad) != len(op.shape) or any(p < 0 for p in pad):
                raise InputError(f"pad must have one non-negative entry per axis ({len(op.shape)})", f"{ow}.pad")
            for idx, m in op.maps.items():
                if idx not in sizes:
                    raise InputError(f"operand {op.name!r} maps unknown index {idx!r}; declared: "
                                     f"{', '.join(sizes)}", f"{ow}.map.{idx}")
                if not 0 <= m.axis < len(op.shape):
                    raise InputError(f"axis {m.axis} does not exist in a {len(op.shape)}-D tensor",
                                     f"{ow}.map.{idx}")
            if strategy.per_output[oi]:
                bad = sorted(set(op.maps) & a_names)
                if bad:
                    raise InputError(f"operand {op.name!r} is read once per output by strategy "
                                     f"{self.strategy!r} and cannot move with accumulated indices {bad}",
                                     f"{ow}.map")
            lo, hi = self.index_range(op)
            for axis in range(len(op.shape)):
                if lo[axis] < -pad[axis] or hi[axis] > op.shape[axis] - 1 + pad[axis]:
                    movers = [i for i, m in op.maps.items() if m.axis == axis]
                    raise InputError(
                        f"operand {op.name!r} axis {axis}: indices {', '.join(movers) or '(none)'} reach "
                        f"{lo[axis]}..{hi[axis]}, but the tensor spans 0..{op.shape[axis] - 1}"
                        + (f" with {pad[axis]} zero padding" if pad[axis] else "")
                        + " (strides/offsets leave the tensor)", f"{ow}.map")
        if self.output_shape is not None and int(np.prod(self.output_shape)) != self.p_count:
            raise InputError(f"output shape {tuple(self.output_shape)} has {int(np.prod(self.output_shape))} "
                             f"elements, the parallel indices give {self.p_count}", f"{where}.output_shape")

    def index_range(self, op: Operand) -> tuple[list[int], list[int]]:
        """Lowest and highest coordinate per axis that eq. 5 produces (linear, so at the corners)."""
        sizes = dict(self.indices)
        lo = [0] * len(op.shape)
        hi = [0] * len(op.shape)
        for idx, m in op.maps.items():
            a, b = m.offset, (sizes[idx] - 1) * m.stride + m.offset
            lo[m.axis] += min(a, b)
            hi[m.axis] += max(a, b)
        return lo, hi

    # ------------------------------------------------------------------ eq. 5
    def coords(self, op: Operand, k: dict[str, np.ndarray]) -> list[np.ndarray]:
        """Source coordinates x_i of eq. 5 for broadcastable index arrays k[name]."""
        xs: list[Any] = [0] * len(op.shape)
        for idx, m in op.maps.items():
            xs[m.axis] = xs[m.axis] + k[idx] * m.stride + m.offset
        return [np.asarray(x) for x in xs]

    def gather(self, op: Operand, data: np.ndarray, k: dict[str, np.ndarray]) -> np.ndarray:
        """M(op) at the given index arrays, reading zeros in the padding."""
        pad = op.padding()
        padded = np.pad(data, [(p, p) for p in pad]) if any(pad) else data
        xs = self.coords(op, k)
        full = np.broadcast_shapes(*[np.shape(v) for v in k.values()]) if k else ()
        xs = [np.broadcast_to(x + p, full) for x, p in zip(xs, pad)]
        return padded[tuple(xs)]

    def source_index(self, op: Operand, k: dict[str, int]) -> tuple[int, ...]:
        """The element of `op` that M(op)_{k} copies (may lie in the zero padding)."""
        return tuple(int(x) for x in self.coords(op, {n: np.asarray(v) for n, v in k.items()}))

    def m_shape(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        return self.p_sizes, self.a_sizes

    # ------------------------------------------------------------------ JSON
    def json_form(self) -> dict[str, Any]:
        """The transform-file form (what users write), also what a result keeps (core.results)."""
        return self.to_json()

    @classmethod
    def from_json_form(cls, value: Any, where: str) -> "MeritTransform":
        """A transform a result keeps, checked as a transform file is (InputError naming the field),
        but not against this machine's memory: it has already run."""
        from core.merit_transform.fileformat import transform_from_json

        return transform_from_json(value, where or "transform", machine_limits=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "parallel": [[n, int(s)] for n, s in self.parallel],
            "accumulate": [[n, int(s)] for n, s in self.accumulate],
            "operands": [{
                "name": op.name, "shape": [int(s) for s in op.shape],
                "pad": [int(p) for p in op.padding()],
                "map": {i: [m.axis, m.stride, m.offset] for i, m in op.maps.items()},
            } for op in self.operands],
            "strategy": self.strategy,
            "params": dict(self.params),
            "output_shape": list(self.out_shape()),
        }
