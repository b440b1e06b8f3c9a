"""Reverse search step: (Uppers, Lowers, instruction) pairs for a Goal-Bag, ordered by Cain's
SCAMP-5 local heuristic (equations 11-14).

For a node F and a Goal G in F, each candidate says "G = inst(Lowers)"; the child is
C = (F \\ {G}) U Lowers (multiset union, eq. 7).  Candidates come from:
  * copies (G twice in F), translations (movx, mov2x), negation, halving (div: Lowers = 2G),
    doubling by adding a Goal to itself;
  * sub-Goals already in the bag, possibly translated (add, addx/add2x), and super-Goals
    (sub, subx/sub2x) -- this is where common sub-expressions are shared;
  * translational self-similarity of G (G = S + S shifted by t + R, two- or three-operand add)
    and antisymmetry (G = S shifted by t - S + R, subx / sub2x: edge filters);
  * for small Goals every split into two parts (the published tool's exhaustive generator);
  * splits by sign, by position and by half-plane, and the power-of-two split (7 = 8 - 1).
Children needing more registers than exist (the Goals plus outputs and scratch registers the
macro needs) are culled here.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Iterator

from core.cain import goals as gl
from core.cain import lower_bound as lb
from core.cain.goals import Bag, Goal
from core.scamp5.isa import InstructionSet

MOVE1: dict[tuple[int, int], tuple[str, ...]] = {
    (0, 1): ("north",), (1, 0): ("east",), (0, -1): ("south",), (-1, 0): ("west",)}
# Two-step translations; every one is reachable with mov2x's rule (d2 = d1 or d1 turned clockwise).
MOVE2: dict[tuple[int, int], tuple[str, ...]] = {
    (0, 2): ("north", "north"), (1, 1): ("north", "east"), (2, 0): ("east", "east"),
    (1, -1): ("east", "south"), (0, -2): ("south", "south"), (-1, -1): ("south", "west"),
    (-2, 0): ("west", "west"), (-1, 1): ("west", "north")}

# Step = (op, upper Goal, lower Goals in operand order, directions)
Step = tuple[str, Goal, tuple[Goal, ...], tuple[str, ...]]


@dataclass
class PairConfig:
    d: int
    registers: int
    isa: InstructionSet
    initial: Bag                     # Initial-Goals (identity Goal per input channel)
    max_coef: int                    # cap on Atoms per position in any Lower
    max_radius: int                  # cap on how far a Lower may reach from the centre
    random_order: bool = False
    jitter: float = 0.0              # relative noise on costs: diversifies parallel workers
    scaled_cost: bool = True         # count a Goal's Atoms divided by the power of two common to them
    max_children: int | None = None  # best children kept per node (None: all; a cap can cut off the optimum)
    focus: bool = False              # split only the largest Goal (moves/copies of all Goals still allowed)
    exhaustive_atoms: int = 0        # every split of every Goal when no Goal has more Atoms (Cain's Threshold generator)
    half_split: bool = False         # G = floor(G/2) + rest (the published tool's Goal paired with itself at distance 0)
    max_triples: int = 0             # below the exhaustive threshold, G = H + A + B (3-operand add) with H a Goal of
                                     # the bag, when G - H has at most this many two-part splits (0: none)
    all_triples: bool = False        # ... and every three-part split (when G has at most max_triples of them)
    diagonal: bool = False           # the published tool's pairs of a Goal with itself at every distance
    rng: random.Random = field(default_factory=lambda: random.Random(0))
    rng_salt: int = 0                # the run's seed, mixed into the per-bag noise and shuffles
    lb_cache: dict[Bag, int] = field(default_factory=dict)    # remaining_lower_bound per bag (this problem's d)
    cost_cache: dict[Bag, float] = field(default_factory=dict)  # eq. 11 per bag (this problem and variant)

    def __post_init__(self) -> None:
        ops = self.isa.ops
        self.has = {k: (k in ops) for k in ("mov/2", "movx/3", "mov2x/4", "add/3", "add/4", "addx/4",
                                            "add2x/5", "sub/3", "subx/4", "sub2x/5", "neg/2", "divq/2",
                                            "div/3", "div/4", "diva/3")}
        self.has_div = any(self.has[k] for k in ("divq/2", "div/3", "div/4", "diva/3"))
        self.initial_set = set(self.initial)
        self.two_d = 2 ** self.d
        self.bound_ctx = lb.BoundContext.of(self.isa, self.d, self.initial)


def div_extra(cfg: PairConfig, dead_input: bool) -> int | None:
    """Registers besides the live ones that the cheapest available halving macro needs."""
    options = []
    if cfg.has["divq/2"]:
        options.append(1)
    if dead_input and (cfg.has["diva/3"] or cfg.has["div/3"]):
        options.append(2)
    if cfg.has["div/4"]:
        options.append(3)
    return min(options) if options else None


# macros whose two operands may be one register (x0 - x1 with x0 = x1 shifted: edge filters)
SAME_OPERANDS_OK = ("sub", "subx", "sub2x")

# operand positions whose register the output may reuse (when that input is dead afterwards)
_REUSE = {"mov": (0,), "movx": (0,), "mov2x": (0,), "add": (0, 1, 2), "addx": (0, 1), "add2x": (0, 1),
          "sub": (0,), "subx": (0,), "sub2x": (0,), "neg": ()}


def extra_registers(cfg: PairConfig, op: str, lowers: tuple[Goal, ...], rest: Bag) -> int | None:
    """Registers needed on top of the child's Goals (None: no available macro fits)."""
    live: dict[Goal, int] = {}
    for g in rest:
        live[g] = live.get(g, 0) + 1
    dead = []
    for g in lowers:
        if live.get(g, 0) > 0:
            live[g] -= 1
        else:
            dead.append(g)
    if op == "div":
        return div_extra(cfg, bool(dead))
    for i in _REUSE[op]:
        if i < len(lowers) and lowers[i] in dead:
            return 0
    return 1


def _match_split(g: Goal, t: tuple[int, int], opposite: bool) -> tuple[Goal, Goal] | None:
    """Greedy S, R with Atoms at p and p + t paired along t: of equal sign, G = S + shift(S, t) + R;
    of opposite signs (`opposite`), G = shift(S, t) - S + R. S takes the sign of the Atom at p + t.
    None when no pair matches."""
    d = gl.as_dict(g)
    k = gl.delta(*t) >> 10
    rem = dict(d)
    s: dict[int, int] = {}
    at_p = -1 if opposite else 1            # how S counts at p: -S or +S
    for p in sorted(d, key=lambda q: q if k > 0 else -q):
        q = p + k
        a, b = rem.get(p, 0), rem.get(q, 0)
        if a and b and ((a > 0) != (b > 0)) == opposite:
            m = min(abs(a), abs(b)) * (1 if b > 0 else -1)
            s[p] = s.get(p, 0) + m
            rem[p] = a - at_p * m
            rem[q] = b - m
    if not s:
        return None
    return gl.from_pairs(s.items()), gl.from_pairs(rem.items())


SHARED_PER_PAIR = 3


def _shared_parts(g: Goal, distinct: list[Goal], initial: set[Goal]) -> list[Goal]:
    """Largest parts of G equal to a translated part of another Goal (same signs, fewest Atoms)."""
    dg = gl.as_dict(g)
    found: dict[Goal, int] = {}
    for h in distinct:
        if h == g or h in initial:
            continue
        ph = gl.pairs(h)
        best: list[tuple[int, Goal]] = []
        tried: set[int] = set()
        for pg in dg:
            for q, _ in ph:
                k = pg - q
                if k in tried:
                    continue
                tried.add(k)
                inter = []
                n = 0
                for p2, c2 in ph:
                    c1 = dg.get(p2 + k)
                    if c1 and (c1 > 0) == (c2 > 0):
                        m = min(abs(c1), abs(c2))
                        inter.append((p2 + k, m if c1 > 0 else -m))
                        n += m
                if n >= 2 and len(inter) >= 2:
                    best.append((n, gl.from_pairs(inter)))
        best.sort(key=lambda t: -t[0])
        for n, shared in best[:SHARED_PER_PAIR]:
            if shared != g:
                found[shared] = n
    return list(found)


def _candidates(cfg: PairConfig, bag: Bag) -> list[Step]:
    out: list[Step] = []
    has = cfg.has
    distinct = sorted(set(bag))
    others_base = set(distinct) | cfg.initial_set
    focus_goal = None
    if cfg.focus:
        big = [g for g in distinct if g not in cfg.initial_set]
        if big:
            focus_goal = max(big, key=lambda g: (gl.size(g) / gl.pow2_factor(g), g))
    # every split of every Goal once the largest Goal is small (the published tool's Threshold)
    exhaustive = max(gl.size(g) for g in distinct) <= cfg.exhaustive_atoms
    for g in distinct:
        if g in cfg.initial_set and bag.count(g) == 1:
            continue
        if bag.count(g) > 1 and has["mov/2"]:
            out.append(("mov", g, (g,), ()))
        # translations: towards the centre, or onto a Goal that is there anyway
        dg = gl.dist_sum(g)
        moves = (list(MOVE1.items()) if has["movx/3"] else []) + (list(MOVE2.items()) if has["mov2x/4"] else [])
        for t, dirs in moves:
            lo = gl.shift(g, -t[0], -t[1])
            if gl.dist_sum(lo) < dg or lo in others_base:
                out.append(("movx" if len(dirs) == 1 else "mov2x", g, (lo,), dirs))
        ps = gl.pairs(g)
        negs = sum(1 for _, c in ps if c < 0)
        if has["neg/2"] and 2 * negs >= len(ps):
            out.append(("neg", g, (gl.neg(g),), ()))
        if cfg.has_div and 2 * gl.max_mult(g) <= cfg.two_d:
            out.append(("div", g, (gl.scale(g, 2),), ()))
        if has["add/3"]:
            # G = H + H; with half_split G = floor(G/2) + the rest: the published tool's pair of
            # a Goal with itself at distance zero (it builds 9 as 4 + 5)
            h = gl.half_floor(g) if cfg.half_split else gl.half(g)
            if h:
                out.append(("add", g, (h, gl.sub(g, h)), ()))
        # sub-Goals and super-Goals already available (common sub-expressions)
        for h in others_base:
            if h == g:
                continue
            shifts: list[tuple[tuple[int, int], tuple[str, ...]]] = [((0, 0), ())]
            if has["addx/4"] or has["subx/4"]:
                shifts += list(MOVE1.items())
            if has["add2x/5"] or has["sub2x/5"]:
                shifts += list(MOVE2.items())
            sh, sg = gl.size(h), gl.size(g)
            if sh == sg or (sh < sg and len(h) > len(g)) or (sh > sg and len(h) < len(g)):
                continue        # neither can hold the other (more positions than Atoms allow)
            for t, dirs in shifts:
                hs = gl.shift(h, *t)
                one = len(dirs) == 1
                if sh < sg and gl.is_subgoal(hs, g):
                    r = gl.sub(g, hs)
                    if not dirs:
                        if has["add/3"]:
                            out.append(("add", g, (h, r), ()))
                        if exhaustive and cfg.max_triples and has["add/4"] and gl.size(r) > 1:
                            # G = H + A + B: the sub-Goal H shared, the rest in two parts (one add)
                            rp = gl.pairs(r)
                            if _pair_count(rp) <= cfg.max_triples:
                                out.extend(("add", g, (h, a, b), ()) for a, b in _two_part_splits(rp))
                    elif (has["addx/4"] if one else has["add2x/5"]):
                        out.append(("addx" if one else "add2x", g, (h, gl.shift(r, -t[0], -t[1])), dirs))
                elif sh > sg and gl.is_subgoal(g, hs):
                    b = gl.sub(hs, g)
                    if not dirs:
                        if has["sub/3"]:
                            out.append(("sub", g, (h, b), ()))
                    elif (has["subx/4"] if one else has["sub2x/5"]):
                        out.append(("subx" if one else "sub2x", g, (h, b), dirs))
        if exhaustive and (len(ps) > 1 or abs(ps[0][1]) > 1):
            out.extend(_all_splits(cfg, g, ps))
            if cfg.all_triples and has["add/4"] and gl.size(g) > 2 and _triple_count(ps) <= cfg.max_triples:
                out.extend(("add", g, t, ()) for t in _three_part_splits(ps))
        if cfg.diagonal and (len(ps) > 1 or abs(ps[0][1]) > 1):
            out.extend(_diagonal_steps(cfg, g, ps))
        if focus_goal is not None and g != focus_goal:
            continue
        if len(ps) > 1 and has["add/3"]:
            # partial matches with other Goals (Cain's Atom-distance pairs): the part of G that
            # equals a translated part of another Goal H becomes a Lower of its own, to be shared
            for inter in _shared_parts(g, distinct, cfg.initial_set):
                rest = gl.sub(g, inter)
                out.append(("add", g, (inter, rest), ()))
                if has["sub/3"]:
                    out.append(("sub", g, (inter, gl.neg(rest)), ()))
            # antisymmetry: G = S shifted by t - S + R, one subx / sub2x whose operands are both S
            # when R is empty (an edge filter: a column minus the same column two steps away)
            for t, dirs in _SHIFTS:
                one = len(dirs) == 1
                if not (has["subx/4"] if one else has["sub2x/5"]):
                    continue
                sp = _match_split(g, t, opposite=True)
                if sp is None:
                    continue
                s_, r = sp
                op = "subx" if one else "sub2x"
                if not r:
                    out.append((op, g, (s_, s_), dirs))
                else:
                    out.append((op, g, (s_, gl.sub(s_, r)), dirs))
                    out.append((op, g, (gl.add(s_, gl.shift(r, -t[0], -t[1])), s_), dirs))
            # translational self-similarity
            pos = [p for p, _ in ps]
            seen_t = set()
            for i, p in enumerate(pos):
                for q in pos[i + 1:]:
                    x1, y1, z1 = gl.unpack_pos(p)
                    x2, y2, z2 = gl.unpack_pos(q)
                    if z1 != z2:
                        continue
                    t = (x2 - x1, y2 - y1)
                    if t in seen_t:
                        continue
                    seen_t.add(t)
                    sp = _match_split(g, t, opposite=False)
                    if sp is None:
                        continue
                    s, r = sp
                    st = gl.shift(s, *t)
                    if not r:
                        out.append(("add", g, (s, st), ()))
                    else:
                        out.append(("add", g, (gl.add(s, r), st), ()))
                        out.append(("add", g, (s, gl.add(st, r)), ()))
                        if has["add/4"] and len({s, st, r}) == 3:
                            out.append(("add", g, (s, st, r), ()))
            # sign split
            pos_part = gl.from_pairs((p, c) for p, c in ps if c > 0)
            neg_part = gl.from_pairs((p, c) for p, c in ps if c < 0)
            if pos_part and neg_part:
                out.append(("add", g, (pos_part, neg_part), ()))
                if has["sub/3"]:
                    out.append(("sub", g, (pos_part, gl.neg(neg_part)), ()))
            # position peels and half-plane splits
            for p, c in ps:
                a = gl.from_pairs([(p, c)])
                out.append(("add", g, (a, gl.sub(g, a)), ()))
            xs = sorted({gl.unpack_pos(p)[0] for p in pos})
            ys = sorted({gl.unpack_pos(p)[1] for p in pos})
            for axis, cuts in ((0, xs[1:]), (1, ys[1:])):
                for cut in cuts:
                    lo = gl.from_pairs((p, c) for p, c in ps if gl.unpack_pos(p)[axis] < cut)
                    out.append(("add", g, (lo, gl.sub(g, lo)), ()))
        if cfg.isa.pow2_split and has["sub/3"]:
            for p, c in ps:
                m = abs(c)
                if m < 3:
                    continue
                k = 1 << m.bit_length()
                extra = k - m
                if extra & (extra - 1) == 0 and extra < m:
                    sgn = 1 if c > 0 else -1
                    d = gl.as_dict(g)
                    d[p] = sgn * k
                    out.append(("sub", g, (gl.from_pairs(d.items()), gl.from_pairs([(p, sgn * extra)])), ()))
    return out


def _sub_multisets(ps: list[tuple[int, int]]) -> list[Goal]:
    """Every part of a Goal (its Atoms split any way between two Goals), the empty one and the
    whole Goal included."""
    parts: list[list[tuple[int, int]]] = [[]]
    for p, c in ps:
        sgn = 1 if c > 0 else -1
        parts = [q + ([(p, sgn * m)] if m else []) for q in parts for m in range(abs(c) + 1)]
    return [gl.from_pairs(q) for q in parts]


def _pair_count(ps: list[tuple[int, int]]) -> int:
    """Ordered splits of a Goal into two parts (either may be empty): per position, |c| + 1 ways."""
    n = 1
    for _, c in ps:
        n *= abs(c) + 1
    return n


def _two_part_splits(ps: list[tuple[int, int]]) -> list[tuple[Goal, Goal]]:
    """Every split of a Goal into two non-empty parts, each unordered pair once (sorted)."""
    whole = gl.from_pairs(ps)
    out = set()
    for a in _sub_multisets(ps)[1:-1]:
        b = gl.sub(whole, a)
        out.add((a, b) if a <= b else (b, a))
    return sorted(out)


def _triple_count(ps: list[tuple[int, int]]) -> int:
    """Ordered splits of a Goal into three parts: per position, C(|c| + 2, 2) ways."""
    n = 1
    for _, c in ps:
        m = abs(c)
        n *= (m + 1) * (m + 2) // 2
    return n


def _three_part_splits(ps: list[tuple[int, int]]) -> list[tuple[Goal, Goal, Goal]]:
    """Every split of a Goal into three non-empty parts, each unordered triple once (sorted): the
    published tool's exhaustive generator offers them as add with 3 operands (9 = 1 + 4 + 4 with
    one part shared, or a centre with two of its neighbours)."""
    parts: list[tuple[list[tuple[int, int]], list[tuple[int, int]], list[tuple[int, int]]]] = [([], [], [])]
    for p, c in ps:
        sgn = 1 if c > 0 else -1
        m = abs(c)
        nxt = []
        for a, b, r in parts:
            for i in range(m + 1):
                for j in range(m + 1 - i):
                    k = m - i - j
                    nxt.append((a + [(p, sgn * i)] if i else a, b + [(p, sgn * j)] if j else b,
                                r + [(p, sgn * k)] if k else r))
        parts = nxt
    out: set[tuple[Goal, Goal, Goal]] = set()
    for a, b, r in parts:
        if a and b and r:
            ga, gb, gr = sorted((gl.from_pairs(a), gl.from_pairs(b), gl.from_pairs(r)))
            out.add((ga, gb, gr))
    return sorted(out)


def _without(a: dict[int, int], b: dict[int, int]) -> dict[int, int]:
    """The Atoms of a that b does not hold (same-sign counts taken away, never past zero)."""
    out = dict(a)
    for p, c in b.items():
        have = out.get(p)
        if have and (have > 0) == (c > 0):
            left = have - c if abs(c) < abs(have) else 0
            if left:
                out[p] = left
            else:
                del out[p]
    return out


def _diagonal_parts(ps: list[tuple[int, int]]) -> list[tuple[dict[int, int], int, bool]]:
    """For every translation k between two positions of G and each sign relation: the part T of G
    at positions b whose Atoms recur at b - k (min of the two counts; halved at k = 0), with the
    sign relation `opposite`. The published tool's Atom-distance list of a Goal with itself."""
    acc: dict[tuple[int, bool], dict[int, int]] = {}
    for pa, ca in ps:
        for pb, cb in ps:
            k = pb - pa
            m = min(abs(ca), abs(cb))
            if k == 0:
                m >>= 1
            if m:
                acc.setdefault((k, (ca > 0) != (cb > 0)), {})[pb] = m if cb > 0 else -m
    return [(t, k, opp) for (k, opp), t in acc.items()]


def _major_step(x: float, y: float) -> tuple[int, int] | None:
    """The unit step along the larger coordinate (x on ties), None at the origin."""
    if not x and not y:
        return None
    if abs(x) >= abs(y):
        return (1, 0) if x > 0 else (-1, 0)
    return (0, 1) if y > 0 else (0, -1)


def _centre_steps(g: Goal) -> list[tuple[tuple[int, int], tuple[str, ...]]]:
    """The one-step and two-step translations towards G's rounded mean Atom position: the shifts
    of the published tool's addx / add2x on a Goal paired with itself."""
    n = x = y = 0
    for ax, ay, _z, c in gl.atoms(g):
        n += abs(c)
        x += ax * abs(c)
        y += ay * abs(c)
    cx, cy = int(math.floor(x / n + 0.5)), int(math.floor(y / n + 0.5))
    first = _major_step(cx, cy)
    if first is None:
        return []
    out = [(first, MOVE1[first])]
    if abs(cx) + abs(cy) > 1:
        second = _major_step(cx - first[0], cy - first[1])
        if second is not None:
            t = (first[0] + second[0], first[1] + second[1])
            if t in MOVE2:
                out.append((t, MOVE2[t]))
    return out


def _unpack_delta(k: int) -> tuple[int, int]:
    """(dx, dy) of a difference of two packed positions of one channel."""
    dy = (k + 128) >> 8 if k >= 0 else -((-k + 128) >> 8)
    return k - (dy << 8), dy


def _steps_along(first: tuple[int, int], rest: tuple[int, int]) -> list[tuple[tuple[int, int], tuple[str, ...]]]:
    """The one-step translation `first` and, when `rest` still points somewhere, the two-step one
    that adds its major step (the published tool's movx / mov2x choice along a distance)."""
    out = [(first, MOVE1[first])]
    second = _major_step(*rest)
    if second is not None:
        t = (first[0] + second[0], first[1] + second[1])
        if t in MOVE2:
            out.append((t, MOVE2[t]))
    return out


def _diagonal_steps(cfg: PairConfig, g: Goal, ps: list[tuple[int, int]]) -> list[Step]:
    """The published tool's pairs of a Goal with itself (its Atom-distance generator on the
    diagonal): for each recurring part T (_diagonal_parts), G = (G - T) + T by add or sub, by
    addx / add2x towards G's centre, and the three-part G = S + (T shifted back, less T) + T in
    one 3-operand add. Its programs for random eq. 15 kernels end with that add, and with these
    pairs nearly every step of its programs for our tuning sets is one our generator offers
    (tests/test_cain_pairgen.py). Off by default: at equal time neither worker found shorter
    programs with them on the tuning sets (docs/cain.md, issue 15)."""
    has = cfg.has
    out: list[Step] = []
    dg = gl.as_dict(g)
    steps = _centre_steps(g)
    for t, k, opposite in _diagonal_parts(ps):
        if t == dg:
            continue
        to = gl.from_pairs(t.items())
        rest_d = _without(dg, t)
        rest = gl.from_pairs(rest_d.items())
        if opposite:
            if has["sub/3"]:
                out.append(("sub", g, (rest, gl.neg(to)), ()))
        elif has["add/3"]:
            out.append(("add", g, (rest, to), ()))
        for st, dirs in steps:
            one = len(dirs) == 1
            if has["addx/4"] if one else has["add2x/5"]:
                out.append(("addx" if one else "add2x", g,
                            (gl.shift(rest, -st[0], -st[1]), gl.shift(to, -st[0], -st[1])), dirs))
        sk = _unpack_delta(k)
        away = _major_step(-sk[0], -sk[1])
        if away is not None:
            for mt, mdirs in _steps_along(away, (-sk[0] - away[0], -sk[1] - away[1])):
                one = len(mdirs) == 1
                if has["subx/4"] if one else has["sub2x/5"]:
                    out.append(("subx" if one else "sub2x", g, (gl.shift(rest, -mt[0], -mt[1]), gl.neg(to)), mdirs))
        if has["add/4"]:
            back = {p - k: (-c if opposite else c) for p, c in t.items()}
            mid = _without(back, t)
            first = _without(rest_d, mid)
            if first and mid:
                a, b = gl.from_pairs(first.items()), gl.from_pairs(mid.items())
                if gl.add(gl.add(a, b), to) == g:
                    out.append(("add", g, (a, b, to), ()))
    return out


@lru_cache(maxsize=1 << 16)
def _toward_centre(g: Goal) -> list[tuple[tuple[int, int], tuple[str, ...]]]:
    """The one- and two-step translations (towards the Goal, as in the shifting macros) after
    which the reverse-translated Goal is no farther from the centre: the shifts worth trying
    (equal distance keeps mirror images, e.g. an east column moved onto the west one)."""
    here = gl.dist_sum(g)
    out = []
    for t, dirs in _SHIFTS:
        if gl.dist_sum(gl.shift(g, -t[0], -t[1])) <= here:
            out.append((t, dirs))
    return out


_SHIFTS = list(MOVE1.items()) + list(MOVE2.items())


def _all_splits(cfg: PairConfig, g: Goal, ps: list[tuple[int, int]]) -> list[Step]:
    """Every split of a small Goal into two parts, with every two-operand macro that can join
    them (add, sub; addx / add2x and subx / sub2x with the shifts that bring the shifted operand
    nearer the centre): the published Cain's exhaustive generator below its threshold."""
    has = cfg.has
    out: list[Step] = []
    parts = _sub_multisets(ps)[1:-1]            # neither empty nor the whole Goal
    seen: set[Goal] = set()
    for a in parts:
        b = gl.sub(g, a)
        if has["add/3"] and b not in seen:
            seen.add(a)
            out.append(("add", g, (a, b), ()))
        if has["sub/3"]:
            out.append(("sub", g, (a, gl.neg(b)), ()))
        for t, dirs in _toward_centre(a):
            one = len(dirs) == 1
            if has["subx/4"] if one else has["sub2x/5"]:
                out.append(("subx" if one else "sub2x", g, (gl.shift(a, -t[0], -t[1]), gl.neg(b)), dirs))
        if a < b:
            for t, dirs in _toward_centre(g):
                one = len(dirs) == 1
                if has["addx/4"] if one else has["add2x/5"]:
                    out.append(("addx" if one else "add2x", g,
                                (gl.shift(a, -t[0], -t[1]), gl.shift(b, -t[0], -t[1])), dirs))
    return out


_LOWER_OK: dict[tuple[Goal, int, int], bool] = {}


def _lower_ok(cfg: PairConfig, g: Goal) -> bool:
    key = (g, cfg.max_coef, cfg.max_radius)
    ok = _LOWER_OK.get(key)
    if ok is None:
        if len(_LOWER_OK) > 200_000:
            _LOWER_OK.clear()
        ok = _LOWER_OK[key] = _lower_ok_uncached(cfg, g)
    return ok


def _lower_ok_uncached(cfg: PairConfig, g: Goal) -> bool:
    if not g:
        return False
    if gl.max_mult(g) > cfg.max_coef:
        return False
    for e in g:
        x, y, _ = gl.unpack_pos(e >> 10)
        if abs(x) > cfg.max_radius or abs(y) > cfg.max_radius:
            return False
    return True


def cost(cfg: PairConfig, bag: Bag) -> float:
    """Cain eq. 11: dists + reps + divs (memoised per bag).

    dists: every Atom counts 1 plus its distance from the centre (|x| + |y| + |z|, +1 if
    negative), the distance shared among the Goals holding this Goal as a sub-Goal;
    reps: |G|^2 once per class of Goals equal up to translation (Goals of one repeated Atom are
    free); divs: 2^d over the fewest Atoms at any position, plus the most over 2^d.
    """
    cache = cfg.cost_cache
    c = cache.get(bag)
    if c is not None:
        return c
    if len(cache) > 150_000:
        cache.clear()
    total = 0.0
    classes: set[Goal] = set()
    min_m, max_m = 1 << 30, 0
    distinct = [(b, gl.size(b)) for b in set(bag)]
    size, dist_sum, norm_key, is_sub = gl.size, gl.dist_sum, gl.norm_key, gl.is_subgoal
    scaled = cfg.scaled_cost
    for g in bag:
        sg = size(g)
        holders = 1
        for b, sb in distinct:
            if sb > sg and is_sub(g, b):
                holders += 1
        f = gl.pow2_factor(g) if scaled else 1
        total += (sg + dist_sum(g) / holders) / f
        k = norm_key(g)
        if k not in classes:
            classes.add(k)
            if len(g) > 1:
                total += (sg / f) ** 2
        m = gl.min_mult(g)
        if m < min_m:
            min_m = m
        m = gl.max_mult(g)
        if m > max_m:
            max_m = m
    c = total + cfg.two_d / min_m + max_m / cfg.two_d
    cache[bag] = c
    return c


def children(cfg: PairConfig, bag: Bag) -> list[tuple[Bag, Step]]:
    """Every legal child of `bag`, best first by the local heuristic (or shuffled). The same bag
    gives the same list every time (noise and shuffles are drawn from the bag and the seed), so
    a search may drop the list and make it again (child_stream)."""
    seen: set[Bag] = set()
    rng = random.Random(hash(bag) ^ cfg.rng_salt) if (cfg.jitter or cfg.random_order) else cfg.rng
    scored: list[tuple[float, int, Bag, Step]] = []
    n = 0
    for step in _candidates(cfg, bag):
        op, g, lowers, _dirs = step
        if not all(_lower_ok(cfg, lo) for lo in lowers):
            continue
        rest = gl.bag_remove_one(bag, g)
        same = op in SAME_OPERANDS_OK and lowers[0] == lowers[1]
        # x0 - x1 may read one register twice (S shifted - S): then S is needed once, and the
        # output needs a register of its own (y != x1)
        child = gl.bag_union(rest, lowers[:1] if same else lowers)
        if child in seen or child == bag:
            continue
        if len(child) > cfg.registers:
            continue
        extra = 1 if same else extra_registers(cfg, op, lowers, rest)
        if extra is None or len(child) + extra > cfg.registers:
            continue
        seen.add(child)
        if set(child) <= cfg.initial_set and len(child) == len(set(child)):
            c = float("-inf")
        else:
            c = cost(cfg, child)
            if op == "mov":
                c *= 2.0
            if cfg.jitter:
                c *= 1.0 + cfg.jitter * (2.0 * rng.random() - 1.0)
        scored.append((c, n, child, step))
        n += 1
    if cfg.random_order:
        rng.shuffle(scored)
        scored.sort(key=lambda t: t[0] != float("-inf"))
    else:
        scored.sort(key=lambda t: (t[0], t[1]))
    return [(child, step) for _, _, child, step in scored[:cfg.max_children]]


CHUNK = 12      # children a waiting parent keeps; the rest are made again when it gets there


def child_stream(cfg: PairConfig, bag: Bag) -> Iterator[tuple[Bag, Step]]:
    """Every child of `bag` in `children` order, holding at most CHUNK of them between visits:
    no child is ever cut off, and a frontier of waiting parents costs CHUNK children each, not
    hundreds (a parent that yields more than CHUNK makes its list again, which is rare)."""
    kids = children(cfg, bag)
    n = len(kids)
    chunk = kids[:CHUNK]
    del kids
    start = 0
    while True:
        yield from chunk
        start += CHUNK
        if start >= n:
            return
        chunk = children(cfg, bag)[start:start + CHUNK]


def clear_caches() -> None:
    """Drop memoised costs and Goal facts (memory guard)."""
    _LOWER_OK.clear()
    lb.clear_caches()
    _toward_centre.cache_clear()
    for f in (gl.size, gl.dist_sum, gl.min_mult, gl.max_mult, gl.norm_key, gl.is_subgoal, gl.pow2_factor):
        f.cache_clear()


def remaining_lower_bound(cfg: PairConfig, bag: Bag) -> int:
    """Instructions still needed to make `bag` from the input, at least: the proven bound of
    core.cain.lower_bound (memoised per bag, per problem: the bound depends on d and the set)."""
    cache = cfg.lb_cache
    v = cache.get(bag)
    if v is None:
        if len(cache) > 400_000:
            cache.clear()
        v = cache[bag] = lb.bound_value(cfg.bound_ctx, bag)
    return v


def is_initial(cfg: PairConfig, bag: Bag) -> bool:
    """Only Initial-Goals left, each once: the input registers themselves."""
    return len(set(bag)) == len(bag) and all(g in cfg.initial_set for g in bag)
