"""SCAMP-5 macro programs as data: `Instr`, the parser for `add(A, B, C)` text, and the printer.

Accepted syntax: one macro call per line or several separated by `;`; comments start with `#` or
`//`; an optional leading line number (`1 mov(B,A);`, as in Cain's Table 2) is ignored.
`mov(y, x, d)` (the paper's Fig. 2 spelling) is read as `movx(y, x, d)`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.errors import InputError
from core.scamp5.isa import CLOCKWISE, DIRECTIONS, OP_NAMES, OpSpec, arities, lookup, register_names


@dataclass(frozen=True)
class Instr:
    """One macro call: `op` is the macro name, `args` its operands (registers and directions)."""

    op: str
    args: tuple[str, ...]

    @property
    def spec(self) -> OpSpec:
        spec = lookup(self.op, len(self.args))
        if spec is None:
            raise InputError(f"no macro {self.op} with {len(self.args)} operands")
        return spec

    def __str__(self) -> str:
        return format_instr(self)


_CALL = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\s*\((.*)\)$")
_LINE_NO = re.compile(r"^\d+\s*")


def _strip_comment(line: str) -> str:
    cut = len(line)
    for marker in ("#", "//"):
        i = line.find(marker)
        if i >= 0:
            cut = min(cut, i)
    return line[:cut]


def validate_instr(instr: Instr, registers: tuple[str, ...]) -> Instr:
    """Check operand count, kinds and constraints; raise InputError (without a location)."""
    spec = lookup(instr.op, len(instr.args))
    if spec is None:
        if instr.op not in OP_NAMES:
            raise InputError(f"unknown instruction {instr.op!r}")
        counts = " or ".join(str(a) for a in arities(instr.op))
        raise InputError(f"{instr.op} takes {counts} operands, got {len(instr.args)}")
    for i, (role, arg) in enumerate(zip(spec.roles, instr.args)):
        if role == "dir":
            if arg not in DIRECTIONS:
                raise InputError(f"{instr.op} operand {i + 1} must be a direction "
                                 f"(north/east/south/west), got {arg!r}")
        elif arg not in registers:
            raise InputError(f"{instr.op} operand {i + 1} must be a register ({registers[0]}-{registers[-1]}), "
                             f"got {arg!r}")
    for a, b in spec.distinct:
        if instr.args[a] == instr.args[b]:
            raise InputError(f"{instr.op}: operands {a + 1} and {b + 1} must be different registers "
                             f"(both {instr.args[a]})")
    if spec.mov2x_rule:
        d1, d2 = instr.args[2], instr.args[3]
        if d2 != d1 and d2 != CLOCKWISE[d1]:
            raise InputError(f"mov2x: the second direction must equal the first or be the first turned "
                             f"clockwise ({d1} -> {d1} or {CLOCKWISE[d1]}), got {d2}")
    return instr


def _normalise_arg(arg: str, registers: tuple[str, ...]) -> str:
    low = arg.lower()
    if low in DIRECTIONS:
        return low
    up = arg.upper()
    return up if up in registers else arg


def parse_program(text: str, registers: int | tuple[str, ...] = 6) -> list[Instr]:
    """Parse macro text into instructions, checking every operand against the instruction table."""
    regs = register_names(registers)
    program: list[Instr] = []
    for line_no, raw in enumerate(text.splitlines(), start=1):
        line = _strip_comment(raw).strip()
        for stmt in line.split(";"):
            stmt = _LINE_NO.sub("", stmt.strip(), count=1).strip()
            if not stmt:
                continue
            m = _CALL.match(stmt)
            if not m:
                raise InputError(f"expected a macro call like add(A, B, C), got {stmt!r}", f"line {line_no}")
            name = m.group(1).lower()
            body = m.group(2).strip()
            args = tuple(_normalise_arg(a.strip(), regs) for a in body.split(",")) if body else ()
            if any(not a for a in args):
                raise InputError(f"empty operand in {stmt!r}", f"line {line_no}")
            if name == "mov" and len(args) == 3:
                name = "movx"
            try:
                program.append(validate_instr(Instr(name, args), regs))
            except InputError as exc:
                raise InputError(exc.message, f"line {line_no}") from None
    return program


def format_instr(instr: Instr) -> str:
    return f"{instr.op}({', '.join(instr.args)})"


def format_program(program: list[Instr]) -> str:
    return "\n".join(format_instr(i) for i in program)
