"""The proven lower bound (core/cain/lower_bound.py) against exhaustive search.

Breadth-first search over every program of the instruction set (every macro form, every register
choice, every direction) on a few registers finds, for each set of values the registers can hold,
the fewest instructions that leave them there. The bound must never exceed that optimum, for any
single value and any group of values held together. The search here shares nothing with the Cain
search's pair generation: it applies the macros forwards, and every value it finds is checked
against the project's interpreter (run_symbolic) on the program that produced it.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import pytest

from core.cain import goals as gl
from core.cain.lower_bound import BoundContext, adds_needed, goal_class, goal_weight, lower_bound, signed_digit_weight
from core.cain.result import CainResult
from core.scamp5.interp import SymKernel, run_symbolic
from core.scamp5.isa import CLOCKWISE, DIRECTIONS, OPS, instruction_set
from core.scamp5.program import Instr

D = 3                       # values in units of 1/8: three halvings stay exact
IDENTITY = gl.make_goal({(0, 0, 0): 2 ** D})


# ------------------------------------------------------------------ the terms
def _min_terms(n: int, limit: int = 6) -> int:
    """Brute force: fewest +-2^k (k < 10) summing to n."""
    powers = [s * (1 << k) for k in range(10) for s in (1, -1)]
    reach = {0}
    for t in range(limit + 1):
        if n in reach:
            return t
        reach = {r + p for r in reach for p in powers}
    raise AssertionError(n)


def test_signed_digit_weight_is_the_fewest_powers_of_two():
    for n in range(-70, 71):
        assert signed_digit_weight(n) == _min_terms(n), n


def test_adds_needed_counts_classes_and_the_doubling_chain():
    assert adds_needed([], 2) == 0
    assert adds_needed([9], 2) == 4 and adds_needed([9], 3) == 2
    assert adds_needed([2, 2, 2], 2) == 3                 # three classes, three adds
    assert adds_needed([8, 2], 2) == 3 and adds_needed([8, 5], 2) == 4


def test_classes_ignore_sign_translation_and_powers_of_two():
    g = gl.make_goal({(0, 0, 0): 2, (1, 0, 0): -6})
    assert goal_class(g) == goal_class(gl.neg(gl.shift(gl.scale(g, 4), 2, -1)))
    assert goal_class(g) != goal_class(gl.make_goal({(0, 0, 0): 2, (1, 0, 0): 6}))
    assert goal_weight(g) == 3                            # 2 -> 1 term, 6 = 8 - 2 -> 2 terms


def test_the_bound_of_the_paper_filters():
    from core.cain.approx import approximate
    from core.filters import preset

    for name, isa, want in (("gauss3", "all", 7), ("gauss3", "basic", 12), ("analognet2", "all", 6),
                            ("analognet2", "basic", 11), ("gauss5", "all", 11)):
        a = approximate(preset(name), max_kernels=6)
        ctx = BoundContext.of(instruction_set(isa), a.d, [gl.make_goal({(0, 0, 0): 2 ** a.d})])
        assert lower_bound(ctx, a.goals).value == want, name


# ------------------------------------------------------------------ exhaustive forward search
def _instructions(isa_name: str, regs: tuple[str, ...]) -> list[Instr]:
    """Every macro call of the set on these registers (operand constraints and mov2x's rule kept)."""
    isa = instruction_set(isa_name)
    out = []
    for spec in OPS:
        if not isa.allows(spec.key):
            continue
        slots = [list(DIRECTIONS) if role == "dir" else list(regs) for role in spec.roles]
        for args in itertools.product(*slots):
            if any(args[i] == args[j] for i, j in spec.distinct):
                continue
            dirs = [a for a in args if a in DIRECTIONS]
            if spec.mov2x_rule or len(dirs) == 2:
                if dirs[1] not in (dirs[0], CLOCKWISE[dirs[0]]):
                    continue
            out.append(Instr(spec.name, tuple(args)))
    return out


def _apply(state: tuple[gl.Goal | None, ...], ins: Instr, regs: tuple[str, ...]) -> tuple[gl.Goal | None, ...] | None:
    """One macro on Goals (coefficients over 2^D, () is zero); None when it reads an empty register
    or a halving would leave the 1/2^D grid (not within these depths: 8 halves three times)."""
    val = dict(zip(regs, state))
    a = ins.args
    ins_regs = [x for x, role in zip(a, ins.spec.roles) if role in ("in", "inout", "in_scratch")]
    if any(val[r] is None for r in ins_regs):
        return None

    def off(*ds: str) -> tuple[int, int]:
        return (sum(DIRECTIONS[x][0] for x in ds), sum(DIRECTIONS[x][1] for x in ds))

    def sh(g: gl.Goal, t: tuple[int, int]) -> gl.Goal:
        return gl.shift(g, *t)

    op = ins.op
    v = {r: val[r] for r in regs}
    res: gl.Goal | None
    if op == "res":
        for r in a:
            v[r] = ()
        return tuple(v[r] for r in regs)
    if op == "mov":
        res = v[a[1]]
    elif op in ("movx", "mov2x"):
        res = sh(v[a[1]], off(*a[2:]))
    elif op == "add":
        res = v[a[1]]
        for r in a[2:]:
            res = gl.add(res, v[r])
    elif op in ("addx", "add2x"):
        res = sh(gl.add(v[a[1]], v[a[2]]), off(*a[3:]))
    elif op == "sub":
        res = gl.sub(v[a[1]], v[a[2]])
    elif op in ("subx", "sub2x"):
        res = gl.sub(sh(v[a[1]], off(*a[2:-1])), v[a[-1]])
    elif op == "neg":
        res = gl.neg(v[a[1]])
    else:                       # divq / div / diva
        src = {"divq": a[1], "diva": a[0]}.get(op, a[-1])
        res = gl.half(v[src])
        if res is None:
            return None
    for r, role in zip(a, ins.spec.roles):
        if role in ("scratch", "in_scratch"):
            v[r] = None
    v[a[0]] = res               # () is zero: a value, but no Goal
    return tuple(v[r] for r in regs)


def _exhaustive(isa_name: str, registers: int, depth: int):
    """(state, program) for every register state first reached at each depth <= `depth`."""
    regs = tuple("ABCDEF"[:registers])
    instrs = _instructions(isa_name, regs)
    start = (IDENTITY,) + (None,) * (registers - 1)
    seen = {start}
    level = [(start, ())]
    yield 0, level
    for t in range(1, depth + 1):
        nxt = []
        for state, prog in level:
            for ins in instrs:
                s2 = _apply(state, ins, regs)
                if s2 is not None and s2 not in seen:
                    seen.add(s2)
                    nxt.append((s2, prog + (ins,)))
        level = nxt
        yield t, level


def _sym(g: gl.Goal) -> SymKernel:
    return SymKernel.from_dict({(x, y, z): Fraction(c, 2 ** D) for x, y, z, c in gl.atoms(g)})


def _check_against_exhaustive(isa_name: str, registers: int, depth: int) -> tuple[int, int]:
    """For every group of values some program of t instructions leaves in registers (t = the
    fewest, found breadth-first), the bound of that group is at most t; and it is reached (tight)
    on some of them, so the check would notice a bound that is always 0. Returns (groups, tight)."""
    ctx = BoundContext.of(instruction_set(isa_name), D, [IDENTITY])
    regs = tuple("ABCDEF"[:registers])
    best: dict[tuple[gl.Goal, ...], int] = {}
    for t, level in _exhaustive(isa_name, registers, depth):
        for i, (state, prog) in enumerate(level):
            if i % 97 == 0:     # the Goal model agrees with the project's interpreter
                final = run_symbolic(list(prog), {"A": 0}, regs)[-1]
                assert all((final[r] is None) == (g is None) and (g is None or final[r] == _sym(g))
                           for r, g in zip(regs, state)), prog
            vals = [g for g in state if g]         # Goals: not empty, not zero
            for k in range(1, len(vals) + 1):
                for group in itertools.combinations(vals, k):
                    key = tuple(sorted(group))
                    if key not in best:
                        best[key] = t
    checked = tight = 0
    for group, t in best.items():
        lb = lower_bound(ctx, group).value
        assert lb <= t, (isa_name, [gl.to_matrix(g) for g in group], lb, t)
        checked += 1
        tight += lb == t
    assert checked > 1000 and tight > checked // 50, (checked, tight)
    return checked, tight


@pytest.mark.slow
@pytest.mark.parametrize("isa_name,registers,depth", [("all", 3, 2), ("basic", 3, 3), ("auke", 2, 3),
                                                      ("all", 2, 3)])
def test_the_bound_never_exceeds_the_exhaustive_optimum(isa_name, registers, depth):
    _check_against_exhaustive(isa_name, registers, depth)


def test_the_exhaustive_check_catches_a_bound_one_too_high(monkeypatch):
    """The check above can fail: with every bound raised by one it finds a group reached in fewer
    instructions than the bound claims."""
    from dataclasses import replace

    real = lower_bound
    monkeypatch.setitem(globals(), "lower_bound", lambda ctx, goals: replace(b := real(ctx, goals), value=b.value + 1))
    with pytest.raises(AssertionError, match="auke"):
        _check_against_exhaustive("auke", 2, 3)


# ------------------------------------------------------------------ the engine reports it
def _run(kernels, **settings) -> CainResult:
    from core.cain.engine import ENGINE
    from core.engine import JobRequest
    from core.jobs import CancelToken, FinalResult
    from core.workload import Kernel, KernelSet, Scamp5Target

    ks = KernelSet("t", 1, [Kernel(f"k{i + 1}", m) for i, m in enumerate(kernels)])
    # a node budget by default, and a time limit far beyond it: what a run finds does not depend on the
    # machine's speed or load
    req = JobRequest(ks, Scamp5Target(registers=6), {"time_s": 120.0, "max_nodes": 20_000, "workers": 1, **settings})
    r = next(e.data for e in ENGINE.run(req, CancelToken()) if isinstance(e, FinalResult))
    assert isinstance(r, CainResult)
    return r


def test_a_program_at_the_bound_is_optimal_and_ends_the_search():
    """[0 -1 1] is one subx reading the input twice (x0 = x1: the input shifted minus itself): the
    bound (1) proves it optimal, and the search stops there instead of spending its budget."""
    r = _run([[[0, 0, 0], [0, -1, 1], [0, 0, 0]]])
    assert r.length == 1 and r.program == ["subx(B, A, east, A)"]
    assert r.lower_bound is not None and r.lower_bound.value == 1 and r.optimal is True and r.gap == 0
    assert r.nodes_explored < 50


def test_the_gap_is_reported_when_the_bound_is_not_reached():
    from core.cain.engine import format_text

    r = _run([[[1, 2, 1], [2, 4, 2], [1, 2, 1]]], max_nodes=200)
    assert r.length is not None and r.bound is not None
    assert r.bound <= r.length and r.gap == r.length - r.bound
    assert r.optimal is (r.gap == 0)
    assert f"lower bound {r.bound} (gap {r.gap})" in format_text(r)


@pytest.mark.slow
def test_same_seed_and_node_budget_give_the_same_length():
    """Workers share no lengths while they run and the seed program is searched for a fixed
    number of nodes, so a node-limited run is repeatable (with two worker processes too)."""
    kernels = [[[1, 3, 0], [2, 5, 1], [0, 4, 2]], [[2, 0, 1], [3, 1, 4], [1, 1, 0]]]
    a = _run(kernels, max_nodes=400, workers=2, seed=3)
    b = _run(kernels, max_nodes=400, workers=2, seed=3)
    assert a.found and (a.length, a.nodes_explored) == (b.length, b.nodes_explored)


def test_a_version_1_result_still_loads_without_a_bound():
    from core.cain.engine import format_text

    r = _run([[[0, 0, 0], [0, -1, 1], [0, 0, 0]]])
    old = {k: v for k, v in r.to_json().items() if k not in ("lower_bound", "gap", "optimal")}
    back = CainResult.from_json(old, version=1)
    assert back.lower_bound is None and back.bound is None and "lower_bound" not in back.to_json()
    assert CainResult.VERSION == 4
    assert "no lower bound (result from an older version)" in format_text(back)
