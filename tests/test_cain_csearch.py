"""The compiled Goal-Bag search (core/cain/csrc/bagsearch.c) and its portfolio members.

Every plan any member reports must allocate and pass the exact interpreter; a node budget gives the
same plans every time, however the run is sliced; a length from elsewhere prunes; a memory limit is
kept by trimming without losing the search.
"""

from __future__ import annotations

import pytest

from core.cain import goals as gl
from core.cain.approx import approximate
from core.cain.csearch import PORTFOLIO, Strategy
from core.cain.solver import build_problem, realise
from core.filters import preset
from core.scamp5.isa import instruction_set, register_names
from core.workload import Kernel, KernelSet

MEMBERS = {m.name: m for m in PORTFOLIO}


def _problem(name: str = "gauss3", isa: str = "all", registers: int = 6, ks: KernelSet | None = None):
    a = approximate(ks or preset(name), max_kernels=registers)
    return a, build_problem(a.goals, a.d, a.channels, register_names(registers), instruction_set(isa))


def _drive(searcher, nodes: int, slice_nodes: int) -> list:
    plans = []
    while searcher.nodes < nodes and not searcher.exhausted:
        plans += searcher.run(min(slice_nodes, nodes - searcher.nodes), 60.0)
    return plans


def _signature(plans) -> list:
    return [(p.length, p.nodes_at_find, tuple((op, up, lo, d) for op, up, lo, d in p.steps)) for p in plans]


@pytest.mark.parametrize("member", sorted(MEMBERS))
def test_every_plan_allocates_and_verifies(member):
    a, p = _problem("analognet2")
    s = p.searcher(MEMBERS[member], 1 << 30, 0, 200)
    plans = _drive(s, 3000, 3000)
    assert plans, member
    lengths = [pl.length for pl in plans]
    assert lengths == sorted(lengths, reverse=True) and len(set(lengths)) == len(lengths)
    for pl in plans:
        _alloc, ok, msg = realise(p, pl, p.isa, a.d)
        assert ok, msg
        assert pl.strategy == member
        assert pl.bags[0] == gl.make_bag(p.initial) and pl.bags[-1] == gl.make_bag(p.final_goals)


@pytest.mark.slow
@pytest.mark.parametrize("member", sorted(MEMBERS))
def test_a_node_budget_gives_the_same_plans_however_it_is_sliced(member):
    _a, p = _problem("gauss5+gauss3")
    one = _drive(p.searcher(MEMBERS[member], 1 << 30, 7, 200), 4000, 4000)
    again = _drive(p.searcher(MEMBERS[member], 1 << 30, 7, 200), 4000, 4000)
    sliced = _drive(p.searcher(MEMBERS[member], 1 << 30, 7, 200), 4000, 137)
    assert one and _signature(one) == _signature(again) == _signature(sliced)


def test_gauss3_reaches_table_1_within_a_node_budget():
    a, p = _problem("gauss3")
    for member in ("cgds", "beam"):
        plans = _drive(p.searcher(MEMBERS[member], 1 << 30, 0, 200), 2000, 2000)
        assert plans[-1].length <= 10, member        # Cain's Table 1, 'All': 10


def test_a_length_from_elsewhere_prunes():
    _a, p = _problem("analognet2")
    free = _drive(p.searcher(MEMBERS["cgds"], 1 << 30, 0, 200), 3000, 3000)
    best = free[-1].length
    s = p.searcher(MEMBERS["cgds"], best, 0, 200)
    assert all(pl.length < best for pl in _drive(s, 3000, 3000))
    s = p.searcher(MEMBERS["beam"], 1 << 30, 0, 200)
    s.set_best(3)                                      # nothing of 3 or more is reported after this
    assert not _drive(s, 2000, 2000)


@pytest.mark.slow
def test_a_small_memory_limit_trims_and_the_search_goes_on():
    a, p = _problem("gauss5+gauss3")
    s = p.searcher(MEMBERS["cgds"], 1 << 30, 0, 16)
    plans = _drive(s, 60000, 5000)
    assert s.trims > 0 and s.memory_bytes < 40 * 2 ** 20
    assert plans
    for pl in plans:
        assert realise(p, pl, p.isa, a.d)[1]


def test_multi_channel_kernels_and_many_registers():
    ks = KernelSet("two channels", 2, [Kernel("k", [[[0, 1, 0], [0, 2, 0], [0, 1, 0]],
                                                    [[0, 0, 0], [1, 0, -1], [0, 0, 0]]])])
    a, p = _problem(ks=ks, registers=8)
    plans = _drive(p.searcher(MEMBERS["cgds"], 1 << 30, 0, 100), 3000, 3000)
    assert plans and realise(p, plans[-1], p.isa, a.d)[1]
    a, p = _problem("analognet2", registers=18)
    plans = _drive(p.searcher(MEMBERS["beam"], 1 << 30, 0, 100), 3000, 3000)
    assert plans and realise(p, plans[-1], p.isa, a.d)[1]


def test_the_basic_set_never_gets_a_macro_it_lacks():
    a, p = _problem("gauss3", isa="basic")
    for member in MEMBERS.values():
        for pl in _drive(p.searcher(member, 1 << 30, 0, 100), 1500, 1500):
            alloc, ok, _msg = realise(p, pl, p.isa, a.d)
            assert ok and {i.op for i in alloc.program} <= {"mov", "movx", "add", "sub", "neg", "div", "diva", "divq"}


def test_random_order_and_other_traversals_find_programs():
    a, p = _problem("sobel")
    for traversal in ("random", "dfs"):
        plans = _drive(p.searcher(Strategy(traversal, traversal=traversal), 1 << 30, 3, 100), 3000, 3000)
        assert plans and realise(p, plans[-1], p.isa, a.d)[1], traversal


@pytest.mark.parametrize("isa", ["all", "basic", "auke"])
def test_the_search_prunes_with_the_same_bound_that_is_reported(isa):
    """The compiled search's lower bound (pruning) is core/cain/lower_bound.py's, term for term, on
    random Goal sets (and the Final-Goals of the presets)."""
    import random

    from core.cain.lower_bound import problem_bound

    rng = random.Random(11)
    cases = [approximate(preset(n), max_kernels=6) for n in ("gauss3", "gauss5", "analognet2", "sobel")]
    sets = [(a.goals, a.d) for a in cases]
    for _ in range(60):
        d = rng.randint(0, 4)
        goals = []
        for _ in range(rng.randint(1, 4)):
            coefs = {(rng.randint(-2, 2), rng.randint(-2, 2), 0): rng.choice([-5, -3, -1, 1, 2, 3, 4, 7, 12])
                     for _ in range(rng.randint(1, 6))}
            goals.append(gl.make_goal(coefs))
        sets.append((goals, d))
    for goals, d in sets:
        p = build_problem(goals, d, 1, register_names(6), instruction_set(isa))
        assert p.searcher(MEMBERS["cgds"], 1 << 30, 0, 32).root_bound() == \
            problem_bound(goals, d, 1, instruction_set(isa)).value, [gl.to_matrix(g) for g in goals]


def _signed_low_digit(c: int) -> int:
    """The lowest digit of c's non-adjacent form: 0 for even c, +1 for c = 4q + 1, -1 for c = 4q + 3."""
    return 0 if c % 2 == 0 else (1 if c % 4 == 1 else -1)


def _halving_split(g):
    """(H, H + L) for Goal g: L the low signed digits of its odd coefficients, H = (g - L) / 2."""
    coefs = gl.as_dict(g)
    low = {pos: _signed_low_digit(c) for pos, c in coefs.items()}
    h = gl.from_pairs((pos, (c - low[pos]) // 2) for pos, c in coefs.items() if c != low[pos])
    return h, gl.add(h, gl.from_pairs((pos, d) for pos, d in low.items() if d))


LOG_LIKE = [[0, 0, -1, 0, 0], [0, -1, -3, -1, 0], [-1, -3, 13, -3, -1], [0, -1, -3, -1, 0], [0, 0, -1, 0, 0]]


def _first_steps(member, denominator):
    _a, p = _problem(ks=KernelSet(name="log", denominator=denominator, kernels=[Kernel("k", LOG_LIKE)]))
    (g,) = p.final_goals
    steps = {(op, tuple(sorted(lowers))) for _child, (op, _up, lowers, _d) in
             p.searcher(MEMBERS[member], 1 << 30, 0, 64).root_children()}
    return g, steps


@pytest.mark.parametrize("member", sorted(MEMBERS))
def test_the_halving_split_is_among_the_first_steps(member):
    """A LoG-like integer Goal (centre 13, ring -3, diagonals and distance 2 at -1): every member's
    children of the Final-Goals include G = H + K with L the low signed digits (+1, +1, -1, -1),
    H = (G - L) / 2 = (6, -2, 0, 0) and K = H + L: H is made once and used twice."""
    g, steps = _first_steps(member, 1)
    h, k = _halving_split(g)
    assert sorted(c for _pos, c in gl.pairs(h)) == [-2, -2, -2, -2, 6]
    assert ("add", tuple(sorted((h, k)))) in steps


@pytest.mark.parametrize("member", sorted(MEMBERS))
def test_no_halving_split_where_no_coefficient_exceeds_the_inputs_weight(member):
    """The same kernel over 16 (every value at most 1, so 13/16 is built by halving the input): the
    split, a doubling, is not proposed."""
    g, steps = _first_steps(member, 16)
    assert max(abs(c) for _pos, c in gl.pairs(g)) <= 16
    h, k = _halving_split(g)
    assert ("add", tuple(sorted((h, k)))) not in steps
