"""Cain pair generation: the published tool's pairs our generator must offer (issue 15).

The published tool's 11-instruction 8-neighbour sharpen program (a tuning set of
benchmarks/cain_suites.py) joins three parts with one 3-operand add, twice (its exhaustive generator
offers every split into three parts below its threshold), and builds the centre 9 as 4 + 5 (a
Goal paired with itself at distance zero). Our generator offered neither and found 12. Worker 1
(the published recipe) now offers the three-part splits in which one part is a Goal already in the
bag (both of the program's are: 4c + 1c + (-N - S) with 4c shared, 4c = 1c + 1c + 2c with the
input shared), and that alone gives 11. Every three-part split (`all_triples`) and the 4 + 5
pair (`half_split`) are options the search leaves off: each cost worker 1 length on random eq. 15
tuning sets at equal CPU time. The published program's own path is checked with `half_split` on.
"""

from __future__ import annotations

import itertools
from collections import Counter

from core.cain import goals as gl
from core.cain import pairgen
from core.cain.search import Searcher
from core.cain.solver import build_problem, worker_variant
from core.scamp5.interp import SymKernel, run_symbolic
from core.scamp5.isa import INSTRUCTION_SETS, register_names
from core.scamp5.program import parse_program

# printed by the published Cain (commit 3dc1981d01d9) for sharpen8, 60 s, "all", 6 registers
PUBLISHED_SHARPEN8 = """
neg(B, A); neg(D, B); movx(F, D, north); add(C, A, D); add(C, D, A, C); subx(E, B, south, F);
addx(A, B, E, west); mov2x(B, A, east, east); add(D, D, C, E); add(C, D, C); add(A, C, A, B);
"""
SHARPEN8 = [[-1, -1, -1], [-1, 9, -1], [-1, -1, -1]]


def _goal(k: SymKernel, d: int = 0) -> gl.Goal:
    return gl.make_goal({xyz: int(c * 2 ** d) for xyz, c in k.terms})


def _reverse_bags(text: str, outputs: list[str], d: int = 0) -> list[gl.Bag]:
    """The Goal-Bag of the live registers before step 1 and after every step (Goals scaled by 2^d)."""
    prog = parse_program(text, 6)
    states = run_symbolic(prog)
    live = set(outputs)
    lives = [set(live)]
    for ins in reversed(prog):
        roles = ins.spec.roles
        live -= {a for r, a in zip(roles, ins.args) if r in ("out", "scratch")}
        live |= {a for r, a in zip(roles, ins.args) if r in ("in", "inout", "in_scratch")}
        lives.append(set(live))
    lives.reverse()
    return [gl.make_bag(_goal(states[i][r], d) for r in lives[i]) for i in range(len(prog) + 1)]


def test_two_part_splits_are_every_split_once():
    g = gl.make_goal({(0, 0, 0): 2, (1, 0, 0): -1, (0, 1, 0): 1})
    ps = gl.pairs(g)
    got = pairgen._two_part_splits(ps)
    assert len(got) == len(set(got)) == (3 * 2 * 2 - 2) // 2
    for a, b in got:
        assert a and b and a <= b and gl.add(a, b) == g and gl.is_subgoal(a, g) and gl.is_subgoal(b, g)
    assert pairgen._pair_count(ps) == 12


def test_shared_three_part_split_is_offered():
    """G = H + A + B with H a Goal of the bag: one 3-operand add instead of two adds."""
    g = gl.make_goal({(0, 0, 0): 5, (0, 1, 0): -1, (0, -1, 0): -1})
    h = gl.make_goal({(0, 0, 0): 4})
    prob = build_problem([g, h], 0, 1, register_names(6), INSTRUCTION_SETS["all"])
    prob.cfg.exhaustive_atoms = 10
    want = gl.make_bag([h, gl.make_goal({(0, 0, 0): 1}), gl.make_goal({(0, 1, 0): -1, (0, -1, 0): -1})])
    assert want not in {c for c, _ in pairgen.children(prob.cfg, prob.final_bag)}
    prob.cfg.max_triples = 3000
    prob.cfg.cost_cache.clear()
    steps = {c: st for c, st in pairgen.children(prob.cfg, prob.final_bag)}
    assert want in steps and steps[want][0] == "add" and len(steps[want][2]) == 3


def test_three_part_splits_are_every_split_once():
    g = gl.make_goal({(0, 0, 0): 3, (1, 0, 0): -2, (0, 1, 0): 1})
    ps = gl.pairs(g)
    got = pairgen._three_part_splits(ps)
    assert len(got) == len(set(got))
    for t in got:
        assert all(t) and list(t) == sorted(t)
        assert gl.add(gl.add(t[0], t[1]), t[2]) == g
        for part in t:       # every part is a sub-Goal: same signs, no more Atoms
            assert gl.is_subgoal(part, g)
    # brute force: every assignment of each Atom to one of three parts, non-empty parts, unordered
    atoms = [p for p, c in ps for _ in range(abs(c))]
    sign = dict(ps)
    brute = set()
    for assign in itertools.product(range(3), repeat=len(atoms)):
        parts = [Counter() for _ in range(3)]
        for p, k in zip(atoms, assign):
            parts[k][p] += 1 if sign[p] > 0 else -1
        goals = sorted(gl.from_pairs(c.items()) for c in parts)
        if all(goals):
            brute.add(tuple(goals))
    assert set(got) == brute
    n = 1
    for _, c in ps:
        n *= (abs(c) + 1) * (abs(c) + 2) // 2
    assert pairgen._triple_count(ps) == n


def test_half_floor_split_is_offered():
    """9 = 4 + 5: a Goal paired with itself at distance zero, for odd coefficients too."""
    g = gl.make_goal({(0, 0, 0): 9, (0, 1, 0): -1})
    assert gl.half_floor(g) == gl.make_goal({(0, 0, 0): 4})
    prob = build_problem([g], 0, 1, register_names(6), INSTRUCTION_SETS["all"])
    split = gl.make_bag([gl.make_goal({(0, 0, 0): 4}), gl.make_goal({(0, 0, 0): 5, (0, 1, 0): -1})])
    assert split not in {c for c, _ in pairgen.children(prob.cfg, prob.final_bag)}   # default: H + H only
    prob.cfg.half_split = True
    prob.cfg.cost_cache.clear()
    assert split in {c for c, _ in pairgen.children(prob.cfg, prob.final_bag)}


def _sharpen8_problem(variant: int, **overrides: object):
    final = gl.make_goal({(x - 1, 1 - y, 0): v for y, row in enumerate(SHARPEN8) for x, v in enumerate(row)})
    prob = build_problem([final], 0, 1, register_names(6), INSTRUCTION_SETS["all"])
    for k, v in {**worker_variant(variant), **overrides}.items():
        setattr(prob.cfg, k, v)
    return prob


def test_published_sharpen8_program_is_in_our_search_space():
    bags = _reverse_bags(PUBLISHED_SHARPEN8, ["A"])
    prob = _sharpen8_problem(1, half_split=True)
    assert bags[-1] == prob.final_bag and pairgen.is_initial(prob.cfg, bags[0])
    for i in range(len(bags) - 1, 0, -1):
        kids = [c for c, _ in pairgen.children(prob.cfg, bags[i])]
        assert bags[i - 1] in kids, f"step {i} of the published program is not generated"


def test_worker1_finds_the_published_length_on_sharpen8():
    """11 instructions, as the published tool, within a fixed node count (deterministic); without
    the three-part splits the same search stays at 12."""
    def best(**overrides: object) -> int | None:
        s = Searcher(_sharpen8_problem(1, **overrides).cfg, _sharpen8_problem(1).final_bag, "cgds")
        found = [p.length for p in s.run(1500, 60.0)]
        return min(found) if found else None

    assert best() == 11
    assert best(max_triples=0) == 12


def _published_tuning_program(name: str):
    """A tuning set's kernels, d and the published tool's cached 60 s "all" program for them."""
    import json
    import math
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(root / "benchmarks"))
    from cain_suites import suites

    cache = json.loads((root / "benchmarks" / "cain_published_cache.json").read_text())["runs"]
    s = next(x for x in suites() if x.name == name)
    assert not s.held_aside                     # held-aside sets are never looked into
    row = next(v for k, v in cache.items() if k.startswith(f"{name}|all|r6|60s|"))
    d = int(math.log2(s.kernel_set.denominator))
    finals = [gl.make_goal({(x - len(k.values[0]) // 2, len(k.values) // 2 - y, 0): v
                            for y, r in enumerate(k.values) for x, v in enumerate(r) if v}) for k in s.kernels]
    return finals, d, "\n".join(row["program"]), row["outputs"]


def _missing_steps(name: str, **overrides: object) -> list[int]:
    finals, d, text, outputs = _published_tuning_program(name)
    prob = build_problem(finals, d, 1, register_names(6), INSTRUCTION_SETS["all"])
    for k, v in {**worker_variant(1), **overrides}.items():
        setattr(prob.cfg, k, v)
    bags = _reverse_bags(text, outputs, d)
    assert bags[-1] == prob.final_bag and pairgen.is_initial(prob.cfg, bags[0])
    return [i for i in range(len(bags) - 1, 0, -1)
            if bags[i - 1] not in {c for c, _ in pairgen.children(prob.cfg, bags[i])}]


def test_the_published_tools_diagonal_pairs_cover_its_programs():
    """Its programs for random eq. 15 sets end with G = S + (T shifted back) + T, T a part of G that
    recurs in G at some distance; with `diagonal` every step of these programs is one we offer."""
    for name in ("eq15-k1-s102", "eq15-k2-s203", "binomial5", "gabor3-0-90"):
        assert _missing_steps(name), name               # the default generator lacks some step
        assert _missing_steps(name, diagonal=True) == [], name
