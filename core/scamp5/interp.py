"""The exact macro-level reference interpreter for SCAMP-5 programs.

Two back ends share one semantics (`_step`):
  * `run_exact` runs a program on whole images with exact arithmetic: integer images are scaled
    by 2^k (k = number of halving macros), so every halving is an exact integer shift; values are
    int64 while a magnitude bound allows, Python integers otherwise.  Non-integer inputs run on
    `fractions.Fraction`.  No analogue noise.
  * `run_symbolic` runs the same program on kernels instead of images: each register holds a
    `SymKernel` (pixel offset and channel -> exact coefficient), i.e. the Goal it computes.

Model rules (shared with the bus-level simulator in `sims/`):
  * Edge rule: a shift reads zero from outside the array (zero padding at every shift), so the
    image result equals the kernel correlation except within a border as wide as the shifts.
  * Directions: north = (0, +1) = one row up, east = (+1, 0) = one column right.
    movx(y, x, d) sets y(p) := x(p + d), translating the register's kernel by +d.
  * Registers not given as inputs, and scratch operands of div/diva after the macro, hold no
    value; reading one is an ExecutionError (the hardware would give garbage).
  * NEWS is overwritten by every macro; its content after a macro is left unspecified at this
    level (no macro reads it as an operand).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Mapping, Sequence, cast

import numpy as np

from core.errors import InputError
from core.scamp5.isa import DIRECTIONS, register_names
from core.scamp5.program import Instr, parse_program, validate_instr

NEWS = "NEWS"


class ExecutionError(InputError):
    """A program that cannot run: it reads a register that holds no value."""


# ------------------------------------------------------------------ symbolic values (Goals)
@dataclass(frozen=True)
class SymKernel:
    """A linear combination of input pixels: ((x, y, z), coefficient) pairs, sorted, no zeros."""

    terms: tuple[tuple[tuple[int, int, int], Fraction], ...]

    @staticmethod
    def from_dict(d: Mapping[tuple[int, int, int], Fraction | int]) -> "SymKernel":
        return SymKernel(tuple(sorted((k, Fraction(v)) for k, v in d.items() if v != 0)))

    @staticmethod
    def identity(channel: int = 0) -> "SymKernel":
        return SymKernel((((0, 0, channel), Fraction(1)),))

    @staticmethod
    def from_matrix(matrix: Sequence[Sequence[float | Fraction]] | Sequence[Sequence[Sequence[float | Fraction]]],
                    scale: Fraction | int = 1) -> "SymKernel":
        """A kernel matrix (rows north to south, centre in the middle; or channels of them)."""
        chans = cast("Sequence[Sequence[Sequence[float | Fraction]]]",
                     matrix if (len(matrix) and isinstance(matrix[0][0], (list, tuple, np.ndarray))) else [matrix])
        d: dict[tuple[int, int, int], Fraction] = {}
        for z, chan in enumerate(chans):
            h, w = len(chan), len(chan[0])
            for r, row in enumerate(chan):
                for c, v in enumerate(row):
                    if v:
                        d[(c - w // 2, h // 2 - r, z)] = Fraction(v) * Fraction(scale)
        return SymKernel.from_dict(d)

    def as_dict(self) -> dict[tuple[int, int, int], Fraction]:
        return dict(self.terms)

    def _combine(self, other: "SymKernel", sign: int) -> "SymKernel":
        d = self.as_dict()
        for k, v in other.terms:
            d[k] = d.get(k, Fraction(0)) + sign * v
        return SymKernel.from_dict(d)

    def __add__(self, other: "SymKernel") -> "SymKernel":
        return self._combine(other, 1)

    def __sub__(self, other: "SymKernel") -> "SymKernel":
        return self._combine(other, -1)

    def __neg__(self) -> "SymKernel":
        return SymKernel(tuple((k, -v) for k, v in self.terms))

    def half(self) -> "SymKernel":
        return SymKernel(tuple((k, v / 2) for k, v in self.terms))

    def shift(self, dx: int, dy: int) -> "SymKernel":
        return SymKernel(tuple(sorted(((x + dx, y + dy, z), v) for (x, y, z), v in self.terms)))

    def channels(self) -> int:
        return 1 + max((z for (_, _, z), _ in self.terms), default=0)

    def radius(self) -> int:
        return max((max(abs(x), abs(y)) for (x, y, _), _ in self.terms), default=0)

    def to_matrix(self, radius: int | None = None, channel: int = 0, scale: Fraction | int = 1) -> list[list[Fraction]]:
        """Rows north to south of coefficient * scale, (2r+1) square."""
        r = self.radius() if radius is None else radius
        d = self.as_dict()
        return [[d.get((x, y, channel), Fraction(0)) * scale for x in range(-r, r + 1)] for y in range(r, -r - 1, -1)]

    def __str__(self) -> str:
        if not self.terms:
            return "0"
        return " + ".join(f"{v}*I{z}[{x},{y}]" for (x, y, z), v in self.terms)


class _SymOps:
    def zero(self) -> SymKernel:
        return SymKernel(())

    def add(self, *vals: SymKernel) -> SymKernel:
        out = vals[0]
        for v in vals[1:]:
            out = out + v
        return out

    def sub(self, a: SymKernel, b: SymKernel) -> SymKernel:
        return a - b

    def neg(self, a: SymKernel) -> SymKernel:
        return -a

    def half(self, a: SymKernel) -> SymKernel:
        return a.half()

    def shift(self, a: SymKernel, dx: int, dy: int) -> SymKernel:
        return a.shift(dx, dy) if (dx or dy) else a


# ------------------------------------------------------------------ image values
def shift_array(a: np.ndarray, dx: int, dy: int) -> np.ndarray:
    """out(p) = a(p + (dx, dy)), zero outside; rows run north to south, so +dy is one row up."""
    if dx == 0 and dy == 0:
        return a.copy()
    h, w = a.shape
    out = np.zeros_like(a)
    if abs(dx) >= w or abs(dy) >= h:
        return out
    # out[r, c] = a[r - dy, c + dx]
    out[max(dy, 0):h + min(dy, 0), max(-dx, 0):w + min(-dx, 0)] = \
        a[max(-dy, 0):h + min(-dy, 0), max(dx, 0):w + min(dx, 0)]
    return out


class _ArrayOps:
    def __init__(self, shape: tuple[int, ...], dtype: Any, fraction: bool) -> None:
        self.shape, self.dtype, self.fraction = shape, dtype, fraction

    def zero(self) -> np.ndarray:
        if self.dtype is object:
            out = np.empty(self.shape, dtype=object)
            out.fill(Fraction(0) if self.fraction else 0)
            return out
        return np.zeros(self.shape, dtype=self.dtype)

    def add(self, *vals: np.ndarray) -> np.ndarray:
        out = vals[0] + vals[1]
        for v in vals[2:]:
            out = out + v
        return out

    def sub(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return a - b

    def neg(self, a: np.ndarray) -> np.ndarray:
        return -a

    def half(self, a: np.ndarray) -> np.ndarray:
        if self.fraction:
            return a * Fraction(1, 2)
        return a // 2   # exact: values carry one spare factor of two per halving macro

    def shift(self, a: np.ndarray, dx: int, dy: int) -> np.ndarray:
        return shift_array(a, dx, dy) if (dx or dy) else a


# ------------------------------------------------------------------ shared semantics
def _offset(*dirs: str) -> tuple[int, int]:
    dx = sum(DIRECTIONS[d][0] for d in dirs)
    dy = sum(DIRECTIONS[d][1] for d in dirs)
    return dx, dy


def _step(state: dict[str, Any], ins: Instr, ops: Any, step_no: int) -> None:
    """Apply one macro to `state` (register -> value or None) in place."""
    spec = ins.spec
    a = ins.args

    def read(reg: str) -> Any:
        v = state.get(reg)
        if v is None:
            raise ExecutionError(f"{ins} reads register {reg}, which holds no value "
                                 f"(not an input, or clobbered by an earlier div/diva)", f"step {step_no}")
        return v

    name, n = ins.op, len(a)
    if name == "res":
        result = {r: ops.zero() for r in a}
    elif name == "mov":
        result = {a[0]: read(a[1])}
    elif name == "movx":
        result = {a[0]: ops.shift(read(a[1]), *_offset(a[2]))}
    elif name == "mov2x":
        result = {a[0]: ops.shift(read(a[1]), *_offset(a[2], a[3]))}
    elif name == "add":
        result = {a[0]: ops.add(*[read(r) for r in a[1:]])}
    elif name == "addx":
        result = {a[0]: ops.shift(ops.add(read(a[1]), read(a[2])), *_offset(a[3]))}
    elif name == "add2x":
        result = {a[0]: ops.shift(ops.add(read(a[1]), read(a[2])), *_offset(a[3], a[4]))}
    elif name == "sub":
        result = {a[0]: ops.sub(read(a[1]), read(a[2]))}
    elif name == "subx":
        result = {a[0]: ops.sub(ops.shift(read(a[1]), *_offset(a[2])), read(a[3]))}
    elif name == "sub2x":
        result = {a[0]: ops.sub(ops.shift(read(a[1]), *_offset(a[2], a[3])), read(a[4]))}
    elif name == "neg":
        result = {a[0]: ops.neg(read(a[1]))}
    elif name == "divq":
        result = {a[0]: ops.half(read(a[1]))}
    elif name == "div" and n == 3:
        result = {a[0]: ops.half(read(a[2]))}
    elif name == "div" and n == 4:
        result = {a[0]: ops.half(read(a[3]))}
    elif name == "diva":
        result = {a[0]: ops.half(read(a[0]))}
    else:  # pragma: no cover - the table and this dispatch are kept in step by tests
        raise ExecutionError(f"no semantics for {spec.key}", f"step {step_no}")
    for role, reg in zip(spec.roles, a):
        if role in ("scratch", "in_scratch"):
            state[reg] = None
    state.update(result)
    state[NEWS] = None


def _as_program(program: str | Sequence[Instr], regs: tuple[str, ...]) -> list[Instr]:
    if isinstance(program, str):
        return parse_program(program, regs)
    out = []
    for i, ins in enumerate(program, start=1):
        try:
            out.append(validate_instr(ins, regs))
        except InputError as exc:
            raise InputError(exc.message, f"step {i}") from None
    return out


HALVING_OPS = ("divq", "div", "diva")


@dataclass
class ExactRun:
    """Registers after a run, as integers over `scale` (or Fractions with scale 1)."""

    registers: dict[str, np.ndarray | None]
    scale: int
    trace: list[dict[str, np.ndarray | None]] = field(default_factory=list)

    def value(self, reg: str) -> np.ndarray:
        """Exact values as an object array of Fractions."""
        v = self.registers.get(reg)
        if v is None:
            raise ExecutionError(f"register {reg} holds no value at the end of the program")
        return np.vectorize(lambda x: Fraction(x) / self.scale, otypes=[object])(v)

    def as_float(self, reg: str) -> np.ndarray:
        v = self.registers.get(reg)
        if v is None:
            raise ExecutionError(f"register {reg} holds no value at the end of the program")
        return np.asarray(v, dtype=float) / self.scale if v.dtype != object else \
            np.vectorize(lambda x: float(Fraction(x) / self.scale), otypes=[float])(v)

    def scaled_equals(self, reg: str, numerators: np.ndarray, denominator: int) -> bool:
        """True when register == numerators / denominator exactly (numerators integer-valued)."""
        v = self.registers.get(reg)
        if v is None:
            return False
        lhs = v.astype(object) * denominator
        rhs = np.asarray(numerators).astype(object) * self.scale
        return bool(np.all(lhs == rhs))


def run_exact(program: str | Sequence[Instr], inputs: np.ndarray | Mapping[str, np.ndarray],
              registers: int | Sequence[str] = 6, input_register: str = "A",
              trace: bool = False) -> ExactRun:
    """Run `program` on images with exact arithmetic.

    `inputs` is one image (placed in `input_register`) or a mapping register -> image (one per
    input channel).  Integer-valued images run on scaled integers; others on Fractions.
    """
    regs = register_names(registers if isinstance(registers, int) else tuple(registers))
    prog = _as_program(program, regs)
    if isinstance(inputs, np.ndarray):
        inputs = {input_register: inputs}
    if not inputs:
        raise InputError("no input image given")
    shapes = {np.asarray(v).shape for v in inputs.values()}
    if len(shapes) != 1 or len(next(iter(shapes))) != 2:
        raise InputError("input images must be 2-D and all the same shape")
    for r in inputs:
        if r not in regs:
            raise InputError(f"input register {r!r} is not one of {', '.join(regs)}")
    shape = next(iter(shapes))
    arrays = {r: np.asarray(v) for r, v in inputs.items()}
    integral = all(np.issubdtype(a.dtype, np.integer) or
                   (np.issubdtype(a.dtype, np.floating) and np.all(np.isfinite(a)) and np.all(a == np.round(a)))
                   for a in arrays.values())
    n_half = sum(1 for ins in prog if ins.op in HALVING_OPS)
    if integral:
        scale = 1 << n_half
        peak = max((int(np.max(np.abs(a))) if a.size else 0) for a in arrays.values())
        bound = max(peak, 1) * scale * (3 ** len(prog))
        dtype: Any = np.int64 if bound < 2 ** 62 else object
        ops = _ArrayOps(shape, dtype, fraction=False)
        state: dict[str, Any] = {}
        for r, a in arrays.items():
            ai = np.round(a).astype(np.int64) if not np.issubdtype(a.dtype, np.integer) else a.astype(np.int64)
            state[r] = (ai * scale) if dtype is np.int64 else ai.astype(object) * scale
    else:
        scale = 1
        ops = _ArrayOps(shape, object, fraction=True)
        state = {r: np.vectorize(Fraction, otypes=[object])(a) for r, a in arrays.items()}
    for r in regs:
        state.setdefault(r, None)
    state[NEWS] = None
    steps: list[dict[str, Any]] = [dict(state)] if trace else []
    for i, ins in enumerate(prog, start=1):
        _step(state, ins, ops, i)
        if trace:
            steps.append(dict(state))
    return ExactRun({r: state[r] for r in regs}, scale, steps)


def run_symbolic(program: str | Sequence[Instr], inputs: Mapping[str, int] | None = None,
                 registers: int | Sequence[str] = 6, input_register: str = "A"
                 ) -> list[dict[str, SymKernel | None]]:
    """Run `program` on kernels: the Goal each register holds before step 1 and after every step.

    `inputs` maps register -> input channel (default: channel 0 in `input_register`).
    Returns len(program) + 1 states (register -> SymKernel, or None when it holds no value).
    """
    regs = register_names(registers if isinstance(registers, int) else tuple(registers))
    prog = _as_program(program, regs)
    inputs = {input_register: 0} if inputs is None else dict(inputs)
    state: dict[str, Any] = {r: None for r in regs}
    for r, z in inputs.items():
        if r not in regs:
            raise InputError(f"input register {r!r} is not one of {', '.join(regs)}")
        state[r] = SymKernel.identity(z)
    state[NEWS] = None
    ops = _SymOps()
    states = [{r: state[r] for r in regs}]
    for i, ins in enumerate(prog, start=1):
        _step(state, ins, ops, i)
        states.append({r: state[r] for r in regs})
    return states


def correlate_reference(image: np.ndarray, kernel: SymKernel) -> np.ndarray:
    """Direct exact evaluation of a kernel on a 2-D image with zero padding (for checks)."""
    img = np.asarray(image).astype(object)
    out = np.zeros(img.shape, dtype=object)
    out.fill(Fraction(0))
    for (x, y, _z), coef in kernel.terms:
        out = out + shift_array(img, x, y) * coef
    return out


__all__: list[str] = ["ExactRun", "ExecutionError", "SymKernel", "run_exact", "run_symbolic",
                      "shift_array", "correlate_reference", "NEWS"]
