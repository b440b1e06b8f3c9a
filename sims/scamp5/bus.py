"""SCAMP-5 macro instructions as sequences of analogue bus operations.

A bus operation opens some registers onto a PE's analogue bus. `bus(w, r0, r1, ...)` leaves
w := -(r0 + r1 + ...); `bus2(w1, w2, r0, ...)` divides that charge between two receivers, so
w1 := w2 := -(r0 + ...) / 2. Every macro is expanded here into the bus steps of the published
SCAMP-5 macro library as used by the Cain tool's emulator (see docs/simulate.md), so the NEWS
register really is overwritten and every intermediate value really carries its inverted sign.

Registers are named by strings: the analogue registers ("A".."F", or more when configured),
"NEWS", and the neighbour views "XN", "XE", "XS", "XW" (the NEWS register of the PE to the north,
east, south or west).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from core.errors import InputError

NEWS = "NEWS"
NEIGHBOUR = {"north": "XN", "east": "XE", "south": "XS", "west": "XW"}
OPPOSITE = {"north": "south", "south": "north", "east": "west", "west": "east"}
# Array offsets (row, column) of each neighbour view: row 0 is the top (north) edge.
OFFSET = {"XN": (-1, 0), "XE": (0, 1), "XS": (1, 0), "XW": (0, -1)}
DIRECTIONS = tuple(NEIGHBOUR)


@dataclass(frozen=True)
class BusOp:
    """One bus step: `writes` receive -(sum of `reads`) / len(writes)."""

    writes: tuple[str, ...]
    reads: tuple[str, ...]

    @property
    def kind(self) -> str:
        return "bus" if len(self.writes) == 1 else f"bus{len(self.writes)}"

    def __str__(self) -> str:
        return f"{self.kind}({', '.join(self.writes + self.reads)})"

    def describe(self) -> str:
        """The step as an assignment, e.g. 'NEWS := -(B + C)'."""
        lhs = " := ".join(self.writes)
        if not self.reads:
            return f"{lhs} := 0"
        total = " + ".join(self.reads)
        body = f"-({total})" if len(self.reads) > 1 else f"-{total}"
        return f"{lhs} := {body}" + (f" / {len(self.writes)}" if len(self.writes) > 1 else "")


def _bus(*names: str) -> BusOp:
    return BusOp((names[0],), tuple(names[1:]))


def _bus2(*names: str) -> BusOp:
    return BusOp((names[0], names[1]), tuple(names[2:]))


def _to(direction: str) -> str:
    """The neighbour view a value is written into so that it is read back from `direction`:
    writing into the opposite neighbour's NEWS leaves NEWS(p) = value(p + direction)."""
    return NEIGHBOUR[OPPOSITE[direction]]


def _dir(arg: str, op: str) -> str:
    d = str(arg).lower()
    if d not in NEIGHBOUR:
        raise InputError(f"{op}: {arg!r} is not a direction (north, east, south, west)")
    return d


def expand(op: str, args: Sequence[str]) -> list[BusOp]:
    """The bus steps of one macro instruction (its operands already checked by the parser)."""
    a = [str(x) for x in args]
    n = len(a)
    if op == "res" and n == 1:
        return [_bus(NEWS), _bus(a[0], NEWS)]
    if op == "res" and n == 2:
        return [_bus(NEWS), _bus(a[0], NEWS), _bus(a[1], NEWS)]
    if op == "mov" and n == 2:
        return [_bus(NEWS, a[1]), _bus(a[0], NEWS)]
    if op == "add" and n in (3, 4):
        return [_bus(NEWS, *a[1:]), _bus(a[0], NEWS)]
    if op == "sub" and n == 3:
        return [_bus(NEWS, a[1]), _bus(a[0], NEWS, a[2])]
    if op == "neg" and n == 2:
        return [_bus(NEWS), _bus(a[0], NEWS, a[1])]
    if op == "divq" and n == 2:
        return [_bus2(a[0], NEWS, a[1]), _bus(a[0], NEWS)]
    if op == "div" and n == 3:
        y0, y1, y2 = a
        return [_bus2(y0, y1, y2), _bus(NEWS, y2, y1), _bus(y2, NEWS, y0), _bus2(y0, y1, y2), _bus(y0, y1)]
    if op == "div" and n == 4:
        y0, y1, y2, x0 = a
        return [_bus2(y0, y1, x0), _bus(NEWS, x0, y1), _bus(y2, NEWS, y0), _bus2(y0, y1, y2), _bus(y0, y1)]
    if op == "diva" and n == 3:
        y0, y1, y2 = a
        return [_bus2(y1, y2, y0), _bus(NEWS, y1, y0), _bus(y0, NEWS, y2), _bus2(y1, y2, y0), _bus(y0, y1)]
    if op == "movx" and n == 3:
        return [_bus(_to(_dir(a[2], op)), a[1]), _bus(a[0], NEWS)]
    if op == "mov2x" and n == 4:
        return [_bus(_to(_dir(a[2], op)), a[1]), _bus(a[0], NEIGHBOUR[_dir(a[3], op)])]
    if op == "addx" and n == 4:
        return [_bus(_to(_dir(a[3], op)), a[1], a[2]), _bus(a[0], NEWS)]
    if op == "add2x" and n == 5:
        return [_bus(_to(_dir(a[3], op)), a[1], a[2]), _bus(a[0], NEIGHBOUR[_dir(a[4], op)])]
    if op == "subx" and n == 4:
        return [_bus(_to(_dir(a[2], op)), a[1]), _bus(a[0], NEWS, a[3])]
    if op == "sub2x" and n == 5:
        return [_bus(_to(_dir(a[2], op)), a[1]), _bus(a[0], NEIGHBOUR[_dir(a[3], op)], a[4])]
    raise InputError(f"no bus-level definition for {op} with {n} operands")


# Bus steps per macro (the table in scamp5-instructions.md), keyed by (name, operand count).
BUS_STEPS = {("res", 1): 2, ("res", 2): 3, ("mov", 2): 2, ("movx", 3): 2, ("mov2x", 4): 2,
             ("add", 3): 2, ("add", 4): 2, ("addx", 4): 2, ("add2x", 5): 2, ("sub", 3): 2,
             ("subx", 4): 2, ("sub2x", 5): 2, ("neg", 2): 2, ("divq", 2): 2, ("div", 3): 5,
             ("div", 4): 5, ("diva", 3): 5}
