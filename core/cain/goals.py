"""Atoms, Goals and Goal-Bags (Cain section 3.1) in a compact, hashable encoding.

A Goal is a multiset of Atoms (x, y, z, sign).  Atoms at one position with the same sign are
counted, opposite signs cancel, so a Goal is a sparse integer kernel scaled by 2^d.  It is stored
as a sorted tuple of packed ints, one per position:

    element = (pos << 16) | (coefficient + 32768),   pos = (z << 16) | ((y + 128) << 8) | (x + 128)

so translating a Goal adds one constant to every element (order is kept), and equal Goals are
equal tuples.  A Goal-Bag is a multiset of Goals stored as a sorted tuple, so its hash and
equality do not depend on the order Goals were added in.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Iterable, Mapping

Goal = tuple[int, ...]
Bag = tuple[Goal, ...]

COEF_BIAS = 1 << 15
MAX_COEF = (1 << 15) - 1
_POS_SHIFT = 16
_MASK = (1 << _POS_SHIFT) - 1


def pack_pos(x: int, y: int, z: int = 0) -> int:
    return (z << 16) | ((y + 128) << 8) | (x + 128)


def unpack_pos(pos: int) -> tuple[int, int, int]:
    return (pos & 0xFF) - 128, ((pos >> 8) & 0xFF) - 128, pos >> 16


def make_goal(coefs: Mapping[tuple[int, int, int], int] | Iterable[tuple[tuple[int, int, int], int]]) -> Goal:
    items = coefs.items() if isinstance(coefs, Mapping) else coefs
    out = []
    for (x, y, z), c in items:
        if c:
            if abs(c) > MAX_COEF:
                raise ValueError(f"coefficient {c} too large for a Goal")
            out.append((pack_pos(x, y, z) << _POS_SHIFT) | (c + COEF_BIAS))
    return tuple(sorted(out))


def from_pairs(pairs: Iterable[tuple[int, int]]) -> Goal:
    """Goal from (packed pos, coefficient) pairs, dropping zeros."""
    return tuple(sorted((p << _POS_SHIFT) | (c + COEF_BIAS) for p, c in pairs if c))


def pairs(g: Goal) -> list[tuple[int, int]]:
    return [(e >> _POS_SHIFT, (e & _MASK) - COEF_BIAS) for e in g]


def as_dict(g: Goal) -> dict[int, int]:
    return {e >> _POS_SHIFT: (e & _MASK) - COEF_BIAS for e in g}


def atoms(g: Goal) -> list[tuple[int, int, int, int]]:
    """(x, y, z, coefficient) per position."""
    return [(*unpack_pos(e >> _POS_SHIFT), (e & _MASK) - COEF_BIAS) for e in g]


def delta(dx: int, dy: int) -> int:
    """What translating by (dx, dy) adds to every element."""
    return (dx + (dy << 8)) << _POS_SHIFT


def shift(g: Goal, dx: int, dy: int) -> Goal:
    if not dx and not dy:
        return g
    k = delta(dx, dy)
    return tuple(e + k for e in g)


def neg(g: Goal) -> Goal:
    return tuple(((e >> _POS_SHIFT) << _POS_SHIFT) | (2 * COEF_BIAS - (e & _MASK)) for e in g)


def scale(g: Goal, factor: int) -> Goal:
    return from_pairs((p, c * factor) for p, c in pairs(g))


def half(g: Goal) -> Goal | None:
    ps = pairs(g)
    if any(c & 1 for _, c in ps):
        return None
    return from_pairs((p, c // 2) for p, c in ps)


def half_floor(g: Goal) -> Goal:
    """Every coefficient halved and rounded towards zero (single Atoms drop out)."""
    return from_pairs((p, (abs(c) >> 1) * (1 if c > 0 else -1)) for p, c in pairs(g))


def add(a: Goal, b: Goal) -> Goal:
    d = as_dict(a)
    for p, c in pairs(b):
        d[p] = d.get(p, 0) + c
    return from_pairs(d.items())


def sub(a: Goal, b: Goal) -> Goal:
    return add(a, neg(b))


@lru_cache(maxsize=1 << 18)
def size(g: Goal) -> int:
    """|G|: the number of Atoms."""
    return sum(abs((e & _MASK) - COEF_BIAS) for e in g)


@lru_cache(maxsize=1 << 18)
def dist_sum(g: Goal) -> int:
    """Sum over Atoms of |x| + |y| + |z|, plus one per negative Atom (Cain eq. 12)."""
    total = 0
    for e in g:
        p = e >> _POS_SHIFT
        c = (e & _MASK) - COEF_BIAS
        total += (abs((p & 0xFF) - 128) + abs(((p >> 8) & 0xFF) - 128) + (p >> 16) + (c < 0)) * abs(c)
    return total


@lru_cache(maxsize=1 << 18)
def pow2_factor(g: Goal) -> int:
    """The largest power of two dividing every coefficient."""
    acc = 0
    for e in g:
        acc |= abs((e & _MASK) - COEF_BIAS)
    return acc & -acc if acc else 1


@lru_cache(maxsize=1 << 18)
def min_mult(g: Goal) -> int:
    return min(abs((e & _MASK) - COEF_BIAS) for e in g)


@lru_cache(maxsize=1 << 18)
def max_mult(g: Goal) -> int:
    return max(abs((e & _MASK) - COEF_BIAS) for e in g)


@lru_cache(maxsize=1 << 18)
def norm_key(g: Goal) -> Goal:
    """The Goal translated so its first position is at a fixed place (equal for translations)."""
    if not g:
        return g
    p0 = (g[0] >> _POS_SHIFT) & 0xFFFF
    k = (p0 - 0x8080) << _POS_SHIFT
    return tuple(e - k for e in g)


@lru_cache(maxsize=1 << 18)
def is_subgoal(a: Goal, b: Goal) -> bool:
    """a is a sub-multiset of b: same signs and no more Atoms at every position."""
    if len(a) > len(b) or a == b:
        return a == b
    db = as_dict(b)
    for p, c in pairs(a):
        cb = db.get(p, 0)
        if c > 0:
            if cb < c:
                return False
        elif cb > c:
            return False
    return True


def positions(g: Goal) -> list[int]:
    return [e >> _POS_SHIFT for e in g]


def to_matrix(g: Goal, radius: int | None = None, channel: int = 0) -> list[list[int]]:
    """Rows north to south, as in the paper's <..> notation."""
    ats = atoms(g)
    r = radius if radius is not None else max((max(abs(x), abs(y)) for x, y, _, _ in ats), default=0)
    d = {(x, y): c for x, y, z, c in ats if z == channel}
    return [[d.get((x, y), 0) for x in range(-r, r + 1)] for y in range(r, -r - 1, -1)]


# ------------------------------------------------------------------ bags (multisets of Goals)
def make_bag(goals: Iterable[Goal]) -> Bag:
    return tuple(sorted(goals))


def bag_remove_one(bag: Bag, g: Goal) -> Bag:
    i = bag.index(g)
    return bag[:i] + bag[i + 1:]


def bag_union(base: Bag, lowers: Iterable[Goal]) -> Bag:
    """Multiset union (max of multiplicities): Cain eq. 7's (F \\ U) U L."""
    out = list(base)
    need: dict[Goal, int] = {}
    for g in lowers:
        need[g] = need.get(g, 0) + 1
    for g, n in need.items():
        have = base.count(g)
        out.extend([g] * max(0, n - have))
    return tuple(sorted(out))
