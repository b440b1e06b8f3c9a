"""The exact method (core/cain/exact.py) against exhaustive search, with node budgets only.

The breadth-first search of tests/test_cain_lower_bound.py applies every macro of a set (every
form, register choice and direction) forwards from the input on 2-3 registers and finds, for
every group of values some program leaves in registers, the fewest instructions t. The prover,
given such a group as its goals and the same registers, must find exactly t: a shorter program
would contradict the exhaustive search, a longer bound would be a false refutation. Every program
it returns is checked with run_symbolic (inside the prover, and again here).
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from core.cain import goals as gl
from core.cain.exact import Prover, check_program, isa_flags, prove, symmetry_mask, zero_free
from core.scamp5.interp import run_symbolic
from core.scamp5.isa import InstructionSet, instruction_set
from tests.test_cain_lower_bound import D, _exhaustive

TT = 16          # a small transposition table: these problems are tiny


def _optima(isa_name: str, registers: int, depth: int) -> dict[tuple[gl.Goal, ...], int]:
    """Fewest instructions leaving each group of one or two values in registers of their own."""
    best: dict[tuple[gl.Goal, ...], int] = {}
    for t, level in _exhaustive(isa_name, registers, depth):
        for state, _prog in level:
            vals = [g for g in state if g]
            groups = [(v,) for v in vals] + [tuple(sorted((a, b))) for i, a in enumerate(vals) for b in vals[i + 1:]]
            for key in groups:
                best.setdefault(key, t)
    return best


def _sample(best: dict[tuple[gl.Goal, ...], int], per_length: int) -> list[tuple[tuple[gl.Goal, ...], int]]:
    """A fixed spread of groups per optimal length (sorted, then evenly spaced)."""
    out = []
    for t in sorted(set(best.values())):
        keys = sorted(k for k, v in best.items() if v == t)
        step = max(1, len(keys) // per_length)
        out += [(k, t) for k in keys[::step][:per_length]]
    return out


@pytest.mark.slow
@pytest.mark.parametrize("isa_name,registers,depth,per_length", [
    ("all", 2, 3, 60), ("all", 3, 2, 40), ("basic", 3, 3, 60), ("auke", 2, 3, 60)])
def test_the_prover_finds_exactly_the_exhaustive_optimum(isa_name, registers, depth, per_length):
    isa = instruction_set(isa_name)
    best = _optima(isa_name, registers, depth)
    cases = _sample(best, per_length)
    assert len(cases) >= 2 * per_length
    for goals, t in cases:
        p = Prover(list(goals), D, 1, isa, registers, tt_bits=TT)
        p.run(200_000)
        assert p.done and p.program is not None, (isa_name, [gl.to_matrix(g) for g in goals], t, p.bound)
        assert p.bound == t == len(p.program), (isa_name, [gl.to_matrix(g) for g in goals], t, p.bound,
                                                [str(i) for i in p.program])
        outs = check_program(p.program, list(goals), D, 1, registers)
        assert outs == p.outputs and len(set(outs)) == len(goals)
        final = run_symbolic(p.program, {"A": 0}, "ABCDEFGH"[:registers])[-1]
        for g, r in zip(goals, outs):
            want = {(x, y, z): Fraction(c, 2 ** D) for x, y, z, c in gl.atoms(g)}
            assert final[r] is not None and final[r].as_dict() == want


@pytest.mark.parametrize("isa_name,registers,coefs,length", [
    # one value stands for both goals once halvings are free (-x, halved once and twice): the
    # relaxed phase must count it once
    ("auke", 2, (-4, -2), 3),
    # div(y0, y1, y2, x) and divq keep x and write a copy: halvings add register weight too
    ("basic", 3, (-6, 4), 3),
])
def test_cases_an_earlier_version_refuted_wrongly(isa_name, registers, coefs, length):
    goals = [gl.make_goal({(0, 0, 0): c}) for c in coefs]
    for relax in (True, False):
        p = Prover(goals, D, 1, instruction_set(isa_name), registers, relax=relax, tt_bits=TT)
        p.run(100_000)
        assert p.program is not None and len(p.program) == length


def test_a_shorter_program_than_the_known_one():
    """Sharpen (4-neighbour) in 5: x + (2x - west - east) + (2x - north - south), each bracket two
    self-subtractions; the Cain search's best is 6. Given upper = 6 the prover finds the 5."""
    sharpen4 = gl.make_goal({(0, 0, 0): 5, (1, 0, 0): -1, (-1, 0, 0): -1, (0, 1, 0): -1, (0, -1, 0): -1})
    r = prove([sharpen4], 0, 1, instruction_set("all"), 6, upper=6, max_nodes=100_000)
    assert r.optimal and r.program is not None and r.bound == len(r.program) == 5
    assert check_program(r.program, [sharpen4], 0, 1, 6) == r.outputs


def test_the_bound_reaching_the_known_length_proves_it_optimal():
    """Prewitt x has a 4-instruction program; refuting 1-3 proves it optimal, with no program."""
    prewitt = gl.make_goal({(x, y, 0): x for x in (-1, 1) for y in (-1, 0, 1)})
    r = prove([prewitt], 0, 1, instruction_set("all"), 6, upper=4, max_nodes=100_000)
    assert r.optimal and r.program is None and r.bound == 4
    free = prove([prewitt], 0, 1, instruction_set("all"), 6, max_nodes=100_000)
    assert free.optimal and free.program is not None and len(free.program) == 4


def test_a_node_budget_gives_the_same_result():
    g = gl.make_goal({(0, 0, 0): 2, (1, 0, 0): 1, (-1, 0, 0): 1})       # [1 2 1] / 4
    runs = []
    for _ in range(2):
        p = Prover([g], 2, 1, instruction_set("all"), 6, tt_bits=TT)
        p.run(30)
        runs.append((p.bound, p.nodes, p.done))
    assert runs[0] == runs[1]
    p = Prover([g], 2, 1, instruction_set("all"), 6, tt_bits=TT)
    for _ in range(1000):
        if p.done:
            break
        p.run(7)
    assert p.done and p.program is not None and len(p.program) == 5


def test_two_input_channels():
    """Channel z starts in register z: I0 + I1 is one add."""
    g = gl.make_goal({(0, 0, 0): 1, (0, 0, 1): 1})
    r = prove([g], 0, 2, instruction_set("all"), 3, max_nodes=10_000)
    assert r.program is not None and len(r.program) == 1 and r.program[0].op == "add"
    h = gl.make_goal({(0, 0, 0): 1, (1, 0, 1): -1})                     # I0 - I1 shifted east
    r = prove([h], 0, 2, instruction_set("all"), 3, max_nodes=10_000)
    assert r.program is not None and len(r.program) == 2


def test_symmetries_and_zero_free_sets():
    g3 = gl.make_goal({(x, y, 0): (2 - abs(x)) * (2 - abs(y)) for x in (-1, 0, 1) for y in (-1, 0, 1)})
    sobel = gl.make_goal({(x, y, 0): x * (2 - abs(y)) for x in (-1, 1) for y in (-1, 0, 1)})
    flags = isa_flags(instruction_set("all"))
    assert symmetry_mask([g3], flags) == 0xFF
    assert symmetry_mask([sobel], flags) == 0b100001                     # identity and y -> -y
    assert symmetry_mask([sobel, gl.neg(sobel)], flags) == 0b110101      # and x -> -x, both mirrors
    assert all(zero_free(isa_flags(instruction_set(n))) for n in ("all", "basic", "auke"))
    no_mov = InstructionSet("no-mov", frozenset({"add/3", "movx/3", "res/1"}), False, "")
    assert not zero_free(isa_flags(no_mov))


def test_goals_out_of_reach_end_cleanly():
    """auke has no shifting add and movx shifts by one: a Goal two pixels east of the input is two
    movx; without movx at all it is out of reach, and the prover says every length is refuted."""
    far = gl.make_goal({(2, 0, 0): 1})
    r = prove([far], 0, 1, instruction_set("auke"), 3, max_nodes=10_000)
    assert r.program is not None and len(r.program) == 2
    no_shift = InstructionSet("no-shift", frozenset({"mov/2", "add/3", "sub/3", "neg/2"}), False, "")
    p = Prover([far], 0, 1, no_shift, 3, tt_bits=TT)
    p.run(10_000)
    assert p.done and p.program is None and p.bound > 40


def test_without_the_relaxed_phase_the_bound_is_the_same():
    g = gl.make_goal({(0, 0, 0): 2, (1, 0, 0): 1, (-1, 0, 0): 1})
    a = prove([g], 2, 1, instruction_set("all"), 6, max_nodes=50_000)
    p = Prover([g], 2, 1, instruction_set("all"), 6, relax=False, tt_bits=TT)
    p.run(50_000)
    assert a.program is not None and p.program is not None and len(a.program) == len(p.program) == 5


@pytest.mark.slow
@pytest.mark.parametrize("depth, parts", [(1, 3), (2, 3), (2, 7)])
def test_shares_of_a_split_proof_together_find_the_optimum(depth, parts):
    """Prover.split: share k searches only the programs whose first instruction is the input state's
    child i with i % n == k (split_depth 2: whose first two are children i, j with a share of (i, j)
    equal to k); the shares' smallest length is the whole search's optimum, for groups of every
    optimal length the exhaustive search gives."""
    isa = instruction_set("all")
    best = _optima("all", 2, 3)       # two registers: few programs of the optimal length, so a share
    for goals, t in _sample(best, 12):  # that misses a subtree shows (checked by breaking split_share)
        ends = []
        for k in range(parts):
            p = Prover(list(goals), D, 1, isa, 2, tt_bits=TT, split=(k, parts), split_depth=depth)
            p.run(200_000)
            assert p.done and p.program is not None and p.bound >= t
            ends.append(p.bound)
        assert min(ends) == t, ([gl.to_matrix(g) for g in goals], t, ends)


def _pair(m: list[list[int]]) -> list[gl.Goal]:
    """The kernel `m` (rows north to south) and its transpose as goals."""
    t = [list(r) for r in zip(*m)]
    return [gl.make_goal({(x - 1, 1 - y, 0): c for y, row in enumerate(k) for x, c in enumerate(row) if c})
            for k in (m, t)]


def test_one_instruction_more_than_goals_missing_prunes_the_pair_prewitt_x_y():
    """With one instruction more than goal copies missing, a result that is not a goal must feed a goal
    write: prewitt x and y need 8 instructions, and every length up to 6 is refuted within 1.5 million
    nodes (30 million without the rule)."""
    p = Prover(_pair([[-1, 0, 1], [-1, 0, 1], [-1, 0, 1]]), 0, 1, instruction_set("all"), 6, upper=8)
    while p.bound < 7 and p.nodes < 1_500_000:
        p.run(10_000)
    assert p.bound >= 7 and p.program is None


@pytest.mark.slow
def test_a_reading_instruction_makes_a_missing_goal_and_reads_no_copy_of_it():
    """A result that is not a goal is read by an instruction making a goal copy that is missing, whose
    other operands may be goals made in between but not the goal it makes (one copy missing): sobel x
    and y refute every length up to 6 within 300 000 nodes (620 000 when any goal, and the goal
    itself, counted as made from such a result)."""
    p = Prover(_pair([[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]), 0, 1, instruction_set("all"), 6, upper=8)
    while p.bound < 7 and p.nodes < 300_000:
        p.run(10_000)
    assert p.bound >= 7 and p.program is None


def test_the_recorded_prover_program_for_sobel_x_y_computes_both_kernels():
    """benchmarks/cain_exact.py takes this 8-instruction program (the search finds 9) as the upper bound
    of its proof; check_program runs it symbolically."""
    from benchmarks.cain_exact import PROVER_PROGRAMS
    from core.scamp5.program import parse_program

    prog = parse_program(PROVER_PROGRAMS["sobel-xy"])
    assert len(prog) == 8
    outs = check_program(prog, _pair([[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]), 0, 1, 6)
    assert len(set(outs)) == 2
