"""A proven lower bound on the length of any SCAMP-5 program that computes a set of Goals.

It is what lets the engine say "optimal" (best length == bound) and show the gap otherwise, and
the search prunes with it (depth + bound of a node's Goal-Bag >= best length: no shorter plan
below). The bound holds for every program over the instruction set, not only the ones our search
can generate. The proof of each term is in docs/cain.md ("Lower bound"); in short, every macro
is one of three disjoint kinds and the terms count instructions of each kind:

  * halvings (divq, div, diva): a coefficient c / 2^d whose numerator is an odd multiple of 2^j
    needs d - j of them (no other macro creates a factor 1/2);
  * adds (add, addx, add2x, sub, subx, sub2x): the signed-digit weight of a value (the fewest
    terms +-2^k at one position summing to it) is at most the sum of its operands' weights, and
    no other macro raises it, so after t adds no value weighs more than k^t (k = 3 with the
    three-operand add, else 2); and each class of values equal up to sign, translation and a
    power of two needs an add of its own. Sorting the Final-Goals' weights w_1 >= w_2 >= ...,
    the i heaviest classes need i distinct adds, each after at least ceil(log_k w_i) adds;
  * shifts: every value is supported in the box of the input grown by the shifts made so far, so
    the box of the Goals sets how many shifting instructions (movx, mov2x, and the shifting adds
    addx, add2x, subx, sub2x) are needed. Shifting adds are adds too, so adds and shifts combine:
    a4 three-operand adds and b two-operand ones reach weight 3^a4 2^b, and only the shifting adds
    among the b can stand for shifts; the moves are the shifts left over.
  * register weight: a new value weighs at most the sum W of the registers' weights (operands in
    distinct registers) or twice the largest (x shifted minus x), so W grows at most that fast,
    and the Goals' weights must be held at once. Halvings that keep their operand (div with four
    operands, divq) write a copy: then this counts every instruction.

The total is max(outputs, halvings + adds + moves, potential) where "outputs" counts the Goals that
need an instruction writing them (one register each; an Initial-Goal already in its register is
free) and the potential term is added to the halvings only in sets whose halvings never copy.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Iterable

import numpy as np

from core.cain import goals as gl
from core.cain.goals import Goal
from core.results import optional_key
from core.scamp5.isa import InstructionSet

SHIFTING_ADDS = ("addx/4", "add2x/5", "subx/4", "sub2x/5")


@dataclass(frozen=True)
class LowerBound:
    """The bound and its terms (instruction counts of disjoint macro kinds, see the module doc).

    The same object is what a Cain result keeps (CainResult.lower_bound, written and read by
    core.results): there `value` may stand above the terms, raised by the exact prover
    (core.cain.exact), which then says so in `exact`; results of version 2 have no `shifts` or
    `potential`. `of_terms` computes `value` from the terms."""

    value: int
    outputs: int        # Goals that some instruction must write last
    halvings: int       # divq / div / diva
    adds: int           # add / addx / add2x / sub / subx / sub2x
    moves: int          # mov / movx / mov2x / neg / res: the shifts no shifting add can make
    shifts: int | None = optional_key()      # shifting instructions the Goals' box needs (moves or shifting adds)
    potential: int | None = optional_key()   # instructions that write a value, for the registers' total weight
    exact: int | None = optional_key()       # every length below it refuted by the exact prover

    @staticmethod
    def of_terms(outputs: int, halvings: int, adds: int, moves: int, shifts: int = 0, potential: int = 0,
                 potential_counts_halvings: bool = True) -> "LowerBound":
        """The bound the terms prove: max(outputs, halvings + adds + moves, potential), where the
        potential term counts the halvings too unless they keep their operand (copying halvings)."""
        weight = potential if potential_counts_halvings else halvings + potential
        return LowerBound(max(outputs, halvings + adds + moves, weight), outputs, halvings, adds, moves, shifts,
                          potential)

    def raised(self, proven: int) -> "LowerBound":
        """The bound after the exact prover refuted every length below `proven` (if that is more)."""
        return self if proven <= self.value else replace(self, value=proven, exact=proven)


def signed_digit_weight(n: int) -> int:
    """Fewest terms +-2^k summing to n: the non-zero digits of its non-adjacent form."""
    n = abs(n)
    w = 0
    while n:
        if n & 1:
            w += 1
            n -= 2 - (n & 3)        # n = ...01 -> take +1; n = ...11 -> take -1 (carry up)
        n >>= 1
    return w


@lru_cache(maxsize=1 << 18)
def goal_weight(g: Goal) -> int:
    """Signed-digit weight of a Goal: the sum over its positions (positions are independent)."""
    return sum(signed_digit_weight(c) for _, c in gl.pairs(g))


@lru_cache(maxsize=1 << 18)
def goal_class(g: Goal) -> Goal:
    """The Goal with its common power of two divided out, its first coefficient made positive and
    translated to a fixed place: equal for Goals equal up to sign, translation and 2^k."""
    f = gl.pow2_factor(g)
    ps = gl.pairs(g)
    sign = -1 if ps and ps[0][1] < 0 else 1
    return gl.norm_key(gl.from_pairs((p, sign * c // f) for p, c in ps))


@lru_cache(maxsize=1 << 18)
def _off_centre(g: Goal) -> bool:
    return any(x or y for x, y, _, _ in gl.atoms(g))


def _log_ceil(w: int, k: int) -> int:
    """Smallest t with k^t >= w."""
    t, reach = 0, 1
    while reach < w:
        reach *= k
        t += 1
    return t


def adds_needed(weights_by_class: Iterable[int], k: int) -> int:
    """max over i of ceil(log_k w_i) + i - 1, the weights (one per class, > 1) sorted descending."""
    best = 0
    for i, w in enumerate(sorted(weights_by_class, reverse=True)):
        best = max(best, _log_ceil(w, k) + i)
    return best


_UNIT = ((1, 0), (0, 1), (-1, 0), (0, -1))
_DOUBLE = ((2, 0), (0, 2), (-2, 0), (0, -2), (1, 1), (-1, 1), (-1, -1), (1, -1))
_SHIFT_CAP = 12         # box growth per direction looked up exactly; beyond it, counted as 12


def shift_offsets(isa: InstructionSet) -> tuple[tuple[int, int], ...]:
    """The non-zero shifts one instruction of the set can make (movx / addx / subx by one,
    mov2x / add2x / sub2x by the 8 offsets of length 2)."""
    out: list[tuple[int, int]] = []
    if any(isa.allows(k) for k in ("movx/3", "addx/4", "subx/4")):
        out += _UNIT
    if any(isa.allows(k) for k in ("mov2x/4", "add2x/5", "sub2x/5")):
        out += _DOUBLE
    return tuple(out)


@lru_cache(maxsize=64)
def _shift_table(offsets: tuple[tuple[int, int], ...]) -> tuple[int, ...]:
    """Fewest shifts from `offsets` whose positive x parts sum to >= e, negative x parts to >= w,
    and likewise n, s for y; indexed ((e * C + w) * C + n) * C + s, C = _SHIFT_CAP + 1.

    Filled by the total e + w + n + s still needed, all boxes of one total at once: a shift that
    lowers the total leads to a box of a smaller total, already filled."""
    C = _SHIFT_CAP + 1
    big = 10 ** 6
    e, w, n, s = (a.ravel() for a in np.meshgrid(*(np.arange(C),) * 4, indexing="ij"))    # box of each index
    total = e + w + n + s
    table = np.full(C ** 4, big, dtype=np.int64)
    table[0] = 0
    for t in range(1, 4 * _SHIFT_CAP + 1):
        at = np.flatnonzero(total == t)
        best = np.full(at.size, big, dtype=np.int64)
        for dx, dy in offsets:
            e2, w2 = np.maximum(0, e[at] - max(dx, 0)), np.maximum(0, w[at] - max(-dx, 0))
            n2, s2 = np.maximum(0, n[at] - max(dy, 0)), np.maximum(0, s[at] - max(-dy, 0))
            after = 1 + table[((e2 * C + w2) * C + n2) * C + s2]
            best = np.minimum(best, np.where(e2 + w2 + n2 + s2 < t, after, big))
        table[at] = best
    return tuple(table.tolist())


def shifts_needed(offsets: tuple[tuple[int, int], ...], east: int, west: int, north: int, south: int) -> int:
    """Shifting instructions for the box of all values to grow by these amounts (a big number
    when the set cannot shift)."""
    C = _SHIFT_CAP + 1
    e, w, n, s = (min(max(v, 0), _SHIFT_CAP) for v in (east, west, north, south))
    return _shift_table(offsets)[((e * C + w) * C + n) * C + s]


@lru_cache(maxsize=1 << 18)
def goal_box(g: Goal) -> tuple[int, int, int, int]:
    """x min, x max, y min, y max of a Goal's Atoms (any channel)."""
    ats = gl.atoms(g)
    xs = [x for x, _, _, _ in ats]
    ys = [y for _, y, _, _ in ats]
    return min(xs), max(xs), min(ys), max(ys)


def mixed_adds_moves(top_weight: int, classes_adds: int, shifts: int, three: bool, shifting_adds: bool,
                     have: int = 1) -> tuple[int, int]:
    """(adds, moves) minimising adds + moves: a4 three-operand adds and b others reach weight
    have * 3^a4 * 2^b >= top_weight; there are at least `classes_adds` adds; the shifts left to
    moves are `shifts` less the shifting adds (at most b, and none in sets without them)."""
    best: tuple[int, int] | None = None
    reach = have
    for a4 in range(0, 41 if three else 1):
        b, r = 0, reach
        while r < top_weight:
            r *= 2
            b += 1
        b = max(b, classes_adds - a4)
        moves = max(0, shifts - (b if shifting_adds else 0))
        if best is None or a4 + b + moves < sum(best):
            best = (a4 + b, moves)
        if reach < top_weight:
            reach *= 3
        elif a4 >= classes_adds:
            break
    assert best is not None
    return best


def potential_steps(weights: list[int], top_weight: int, total_weight: int, self_sub: bool,
                    registers: int | None = None) -> int:
    """Instructions that write a value before registers holding `weights` can hold a value of
    weight `top_weight` and a total of `total_weight` at once: a new value weighs at most the sum W
    of the registers' weights, or twice the largest M with x shifted minus x."""
    W, M = sum(weights), max(weights, default=0)
    if M <= 0:
        return 10 ** 6
    t = 0
    while M < top_weight or W < total_weight:
        n = max(W, 2 * M) if self_sub else W
        M = max(M, n)
        W += n
        if registers is not None:
            W = min(W, registers * M)
        t += 1
    return t


@dataclass(frozen=True)
class BoundContext:
    """What the bound needs to know about the problem besides the Goals."""

    d: int
    initial: frozenset[Goal]        # identity Goal (2^d at the centre) per input channel
    add_arity: int                  # 3 with the three-operand add, else 2
    needs_move_for_shift: bool      # no shifting adds: every shift is a move
    offsets: tuple[tuple[int, int], ...] = ()    # the shifts one instruction can make
    self_sub: bool = False          # subx / sub2x: x shifted minus x doubles a weight
    copying_halvings: bool = True   # div(y0, y1, y2, x) or divq: a halving writes a copy
    channels: int = 1

    @staticmethod
    def of(isa: InstructionSet, d: int, initial: Iterable[Goal]) -> "BoundContext":
        init = frozenset(initial)
        return BoundContext(d=d, initial=init, add_arity=3 if isa.allows("add/4") else 2,
                            needs_move_for_shift=not any(isa.allows(k) for k in SHIFTING_ADDS),
                            offsets=shift_offsets(isa),
                            self_sub=isa.allows("subx/4") or isa.allows("sub2x/5"),
                            copying_halvings=isa.allows("div/4") or isa.allows("divq/2"),
                            channels=max(1, len(init)))


def lower_bound(ctx: BoundContext, goals: Iterable[Goal]) -> LowerBound:
    """A lower bound on the instructions of any program that leaves every Goal in a register of
    its own (the Goals of a Goal-Bag: a Goal listed twice needs two registers)."""
    outputs = 0
    used_initial: set[Goal] = set()
    min_pow = 1 << ctx.d
    classes: dict[Goal, int] = {}
    x0 = x1 = y0 = y1 = 0           # the input's box, grown to the Goals'
    top = total = 0
    for g in goals:
        w = goal_weight(g)
        total += w
        if g in ctx.initial and g not in used_initial:
            used_initial.add(g)
            continue
        outputs += 1
        f = gl.pow2_factor(g)
        if f < min_pow:
            min_pow = f
        if w > 1:
            classes[goal_class(g)] = w
        top = max(top, w)
        bx0, bx1, by0, by1 = goal_box(g)
        x0, x1, y0, y1 = min(x0, bx0), max(x1, bx1), min(y0, by0), max(y1, by1)
    halvings = max(0, ctx.d - (min_pow.bit_length() - 1))
    class_adds = adds_needed(classes.values(), ctx.add_arity)
    if not outputs:
        return LowerBound.of_terms(0, 0, 0, 0)
    shifts = shifts_needed(ctx.offsets, x1, -x0, y1, -y0) if (x0, x1, y0, y1) != (0, 0, 0, 0) else 0
    if shifts >= 10 ** 6 and not ctx.offsets:
        shifts = 1 if ctx.needs_move_for_shift else 0   # a set that cannot shift: keep the old term
    adds, moves = mixed_adds_moves(top, class_adds, shifts, ctx.add_arity == 3, not ctx.needs_move_for_shift)
    potential = potential_steps([1] * ctx.channels, top, total, ctx.self_sub)
    return LowerBound.of_terms(outputs, halvings, adds, moves, shifts, potential, ctx.copying_halvings)


def bound_value(ctx: BoundContext, goals: Iterable[Goal]) -> int:
    return lower_bound(ctx, goals).value


def clear_caches() -> None:
    for f in (goal_weight, goal_class, _off_centre, goal_box):
        f.cache_clear()


def initial_goals(d: int, channels: int) -> list[Goal]:
    """The input: 2^d Atoms at the centre of each channel."""
    return [gl.make_goal({(0, 0, z): 2 ** d}) for z in range(channels)]


def problem_bound(goals: Iterable[Goal], d: int, channels: int, isa: InstructionSet) -> LowerBound:
    """The bound for a whole filter: its Final-Goals from its input channels."""
    return lower_bound(BoundContext.of(isa, d, initial_goals(d, channels)), goals)


def verdict(length: int | None, bound: int | None) -> str:
    """How a program length stands against the bound, as the CLI and the panel say it."""
    if bound is None:
        return "no lower bound (result from an older version)"
    if length is None:
        return f"lower bound {bound}"
    if length <= bound:
        return f"optimal (proven lower bound {bound})"
    return f"lower bound {bound} (gap {length - bound})"
