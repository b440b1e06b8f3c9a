"""The SCAMP-5 analogue macro instructions and the instruction sets of Cain's Table 1, as data.

Restates `scamp5-instructions.md`: one `OpSpec` per macro form (name and operand count), its
operand roles, the operand pairs that must be different registers, and its bus-step count.
The parser, the interpreter, the code search and the simulator all read this one table.

Operand roles:
  "out"        register written with the result
  "in"         register read (kept)
  "inout"      register read and overwritten with the result (diva's y0)
  "scratch"    register clobbered (left undefined)
  "in_scratch" register read, then clobbered (div's y2 in the three-operand form)
  "dir"        a direction: north, east, south, west
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

DIRECTIONS: dict[str, tuple[int, int]] = {
    "north": (0, 1),
    "east": (1, 0),
    "south": (0, -1),
    "west": (-1, 0),
}
CLOCKWISE: dict[str, str] = {"north": "east", "east": "south", "south": "west", "west": "north"}
REGISTER_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
MAX_REGISTERS = len(REGISTER_LETTERS)


@dataclass(frozen=True)
class OpSpec:
    """One macro form, e.g. `add` with 3 operands."""

    name: str
    roles: tuple[str, ...]
    distinct: tuple[tuple[int, int], ...]   # operand index pairs that must name different registers
    bus_steps: int
    effect: str
    mov2x_rule: bool = False                # d2 == d1 or d2 == clockwise(d1)

    @property
    def key(self) -> str:
        return f"{self.name}/{len(self.roles)}"

    @property
    def arity(self) -> int:
        return len(self.roles)


def _all_pairs(*idx: int) -> tuple[tuple[int, int], ...]:
    return tuple(combinations(idx, 2))


OPS: tuple[OpSpec, ...] = (
    OpSpec("res", ("out",), (), 2, "a := 0"),
    OpSpec("res", ("out", "out"), ((0, 1),), 3, "a := 0; b := 0"),
    OpSpec("mov", ("out", "in"), (), 2, "y := x"),
    OpSpec("movx", ("out", "in", "dir"), (), 2, "y := x shifted by d"),
    OpSpec("mov2x", ("out", "in", "dir", "dir"), (), 2, "y := x shifted by d1 + d2", mov2x_rule=True),
    OpSpec("add", ("out", "in", "in"), ((1, 2),), 2, "y := x0 + x1"),
    OpSpec("add", ("out", "in", "in", "in"), _all_pairs(1, 2, 3), 2, "y := x0 + x1 + x2"),
    OpSpec("addx", ("out", "in", "in", "dir"), ((1, 2),), 2, "y := (x0 + x1) shifted by d"),
    OpSpec("add2x", ("out", "in", "in", "dir", "dir"), ((1, 2),), 2, "y := (x0 + x1) shifted by d1 + d2"),
    OpSpec("sub", ("out", "in", "in"), ((0, 2),), 2, "y := x0 - x1"),
    OpSpec("subx", ("out", "in", "dir", "in"), ((0, 3),), 2, "y := (x0 shifted by d) - x1"),
    OpSpec("sub2x", ("out", "in", "dir", "dir", "in"), ((0, 4),), 2, "y := (x0 shifted by d1 + d2) - x1"),
    OpSpec("neg", ("out", "in"), ((0, 1),), 2, "y := -x"),
    OpSpec("divq", ("out", "in"), ((0, 1),), 2, "y := x / 2 (fast, less accurate)"),
    OpSpec("div", ("out", "scratch", "in_scratch"), _all_pairs(0, 1, 2), 5, "y0 := y2 / 2; y1, y2 clobbered"),
    OpSpec("div", ("out", "scratch", "scratch", "in"), _all_pairs(0, 1, 2, 3), 5,
           "y0 := x0 / 2; y1, y2 clobbered; x0 kept"),
    OpSpec("diva", ("inout", "scratch", "scratch"), _all_pairs(0, 1, 2), 5, "y0 := y0 / 2; y1, y2 clobbered"),
)

OP_TABLE: dict[str, OpSpec] = {op.key: op for op in OPS}
OP_NAMES: frozenset[str] = frozenset(op.name for op in OPS)


def lookup(name: str, arity: int) -> OpSpec | None:
    return OP_TABLE.get(f"{name}/{arity}")


def arities(name: str) -> list[int]:
    return sorted(op.arity for op in OPS if op.name == name)


@dataclass(frozen=True)
class InstructionSet:
    """A named subset of the macro forms the search may emit.

    `pow2_split` enables the search's coefficient split by a power of two and a subtraction
    (7 = 8 - 1, 14 = 16 - 2, 15 = 16 - 1), part of Cain's "All" set.
    """

    name: str
    ops: frozenset[str]           # OpSpec keys, e.g. "add/3"
    pow2_split: bool
    description: str

    def allows(self, key: str) -> bool:
        return key in self.ops


_ALL_KEYS = frozenset(op.key for op in OPS)

INSTRUCTION_SETS: dict[str, InstructionSet] = {
    "all": InstructionSet(
        "all", _ALL_KEYS - {"divq/2"}, True,
        "every macro except divq, plus the power-of-two split with a subtraction"),
    "basic": InstructionSet(
        "basic", frozenset({"mov/2", "movx/3", "add/3", "sub/3", "neg/2", "res/1", "res/2",
                            "divq/2", "div/3", "div/4", "diva/3"}), False,
        "Cain's comparison with AUKE: no mov2x, three-operand add, addx, add2x, subx, sub2x"),
    # AUKE's set: copy, one-pixel shifts, add, sub, halve, negate.  AUKE's add-and-negate has no
    # macro in the SCAMP-5 table, so it is not offered.
    "auke": InstructionSet(
        "auke", frozenset({"mov/2", "movx/3", "add/3", "sub/3", "divq/2", "neg/2"}), False,
        "AUKE's own set: copy, one-pixel shifts, add, sub, halve (divq), negate"),
}


def instruction_set(name: str) -> InstructionSet:
    try:
        return INSTRUCTION_SETS[name]
    except KeyError:
        raise KeyError(f"unknown instruction set {name!r}; known: {', '.join(INSTRUCTION_SETS)}") from None


def register_names(registers: int | tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """'A'.. for a count (6 -> A-F, 18 -> A-R); a sequence of names is kept as given."""
    if isinstance(registers, int):
        if not 1 <= registers <= MAX_REGISTERS:
            raise ValueError(f"register count must be 1..{MAX_REGISTERS}, got {registers}")
        return tuple(REGISTER_LETTERS[:registers])
    return tuple(registers)
