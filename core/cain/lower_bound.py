"""A proven lower bound on the length of any SCAMP-5 program that computes a set of Goals.

It is what lets the engine say "optimal" (best length == bound) and show the gap otherwise, and
the search prunes with it (depth + bound of a node's Goal-Bag >= best length: no shorter plan
below). The bound holds for every program over the instruction set, not only the ones our search
can generate. The proof of each term is in docs/cain.md ("Lower bound"); in short, every macro
is one of three disjoint kinds and each term counts instructions of one kind:

  * halvings (divq, div, diva): a coefficient c / 2^d whose numerator is an odd multiple of 2^j
    needs d - j of them (no other macro creates a factor 1/2);
  * adds (add, addx, add2x, sub, subx, sub2x): the signed-digit weight of a value (the fewest
    terms +-2^k at one position summing to it) is at most the sum of its operands' weights, and
    no other macro raises it, so after t adds no value weighs more than k^t (k = 3 with the
    three-operand add, else 2); and each class of values equal up to sign, translation and a
    power of two needs an add of its own. Sorting the Final-Goals' weights w_1 >= w_2 >= ...,
    the i heaviest classes need i distinct adds, each after at least ceil(log_k w_i) adds;
  * moves (mov, movx, mov2x, neg, res): without shifting adds (the basic and AUKE sets) a Goal
    with an Atom off the centre needs at least one movx/mov2x.

The total is max(outputs, halvings + adds + moves), where "outputs" counts the Goals that need an
instruction writing them (one register each; an Initial-Goal already in its register is free).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable

from core.cain import goals as gl
from core.cain.goals import Goal
from core.scamp5.isa import InstructionSet

SHIFTING_ADDS = ("addx/4", "add2x/5", "subx/4", "sub2x/5")


@dataclass(frozen=True)
class LowerBound:
    """The bound and its terms (instruction counts of disjoint macro kinds, see the module doc)."""

    outputs: int        # Goals that some instruction must write last
    halvings: int       # divq / div / diva
    adds: int           # add / addx / add2x / sub / subx / sub2x
    moves: int          # mov / movx / mov2x / neg / res (only the shift forced in sets without shifting adds)

    @property
    def value(self) -> int:
        return max(self.outputs, self.halvings + self.adds + self.moves)

    def as_json(self) -> dict[str, int]:
        return {"value": self.value, "outputs": self.outputs, "halvings": self.halvings, "adds": self.adds,
                "moves": self.moves}


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


@dataclass(frozen=True)
class BoundContext:
    """What the bound needs to know about the problem besides the Goals."""

    d: int
    initial: frozenset[Goal]        # identity Goal (2^d at the centre) per input channel
    add_arity: int                  # 3 with the three-operand add, else 2
    needs_move_for_shift: bool      # no shifting adds: an off-centre Atom needs a movx / mov2x

    @staticmethod
    def of(isa: InstructionSet, d: int, initial: Iterable[Goal]) -> "BoundContext":
        return BoundContext(d=d, initial=frozenset(initial), add_arity=3 if isa.allows("add/4") else 2,
                            needs_move_for_shift=not any(isa.allows(k) for k in SHIFTING_ADDS))


def lower_bound(ctx: BoundContext, goals: Iterable[Goal]) -> LowerBound:
    """A lower bound on the instructions of any program that leaves every Goal in a register of
    its own (the Goals of a Goal-Bag: a Goal listed twice needs two registers)."""
    outputs = 0
    used_initial: set[Goal] = set()
    min_pow = 1 << ctx.d
    classes: dict[Goal, int] = {}
    off_centre = False
    for g in goals:
        if g in ctx.initial and g not in used_initial:
            used_initial.add(g)
            continue
        outputs += 1
        f = gl.pow2_factor(g)
        if f < min_pow:
            min_pow = f
        w = goal_weight(g)
        if w > 1:
            classes[goal_class(g)] = w
        if not off_centre and _off_centre(g):
            off_centre = True
    halvings = ctx.d - (min_pow.bit_length() - 1)
    adds = adds_needed(classes.values(), ctx.add_arity)
    moves = 1 if ctx.needs_move_for_shift and off_centre else 0
    return LowerBound(outputs, max(0, halvings), adds, moves)


def bound_value(ctx: BoundContext, goals: Iterable[Goal]) -> int:
    return lower_bound(ctx, goals).value


def clear_caches() -> None:
    for f in (goal_weight, goal_class, _off_centre):
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
