"""What one macro does to the array, read off its bus operations: the registers it writes and
reads, and the NEWS shifts that move values between neighbouring PEs.

The stepper highlights the written registers and draws each shift as an arrow; the exported
frames (sims.scamp5.render) mark them the same way. Neighbour views (XN, XE, XS, XW) name the NEWS
register of a neighbour: writing into XE puts a value into the NEWS register of the PE to the east,
so values move east; reading XN takes the NEWS value of the PE to the north, so values move south.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from sims.scamp5.bus import NEWS, OFFSET, BusOp

# Compass names of the (row, column) directions; row 0 is the north edge.
DIRECTION_NAMES = {(-1, 0): "north", (0, 1): "east", (1, 0): "south", (0, -1): "west"}


@dataclass(frozen=True)
class Shift:
    """Values of `sources` (their negated sum, as the bus makes it) arrive in `dest` one PE away,
    in the direction (drow, dcol) they travelled."""

    sources: tuple[str, ...]
    dest: str
    drow: int
    dcol: int

    @property
    def direction(self) -> str:
        """Where the values go: 'east' means each PE receives its western neighbour's value."""
        return DIRECTION_NAMES[(self.drow, self.dcol)]

    def describe(self) -> str:
        return f"{' + '.join(self.sources) or '0'} → {self.dest}, one PE {self.direction}"


def physical(name: str) -> str:
    """The register a bus operand stands for (neighbour views are the NEWS plane)."""
    return NEWS if name in OFFSET else name


def written(ops: Sequence[BusOp]) -> tuple[str, ...]:
    """Registers the operations write, first write first, each once."""
    out: list[str] = []
    for op in ops:
        for name in op.writes:
            reg = physical(name)
            if reg not in out:
                out.append(reg)
    return tuple(out)


def read(ops: Sequence[BusOp]) -> tuple[str, ...]:
    """Registers whose values the operations read before writing them (the macro's inputs)."""
    out: list[str] = []
    done: set[str] = set()
    for op in ops:
        for name in op.reads:
            reg = physical(name)
            if reg not in done and reg not in out:
                out.append(reg)
        done.update(physical(w) for w in op.writes)
    return tuple(out)


def shifts(ops: Sequence[BusOp]) -> list[Shift]:
    """Every move of values between neighbouring PEs the operations make."""
    out: list[Shift] = []
    for op in ops:
        for name in op.writes:                    # write into a neighbour's NEWS
            if name in OFFSET:
                dr, dc = OFFSET[name]
                out.append(Shift(tuple(physical(r) for r in op.reads), NEWS, dr, dc))
        for name in op.reads:                     # read a neighbour's NEWS
            if name in OFFSET:
                dr, dc = OFFSET[name]
                for w in op.writes:
                    out.append(Shift((NEWS,), physical(w), -dr, -dc))
    return out
