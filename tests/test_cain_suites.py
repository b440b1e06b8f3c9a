"""The suites of the comparison with the published Cain tool (benchmarks/cain_suites.py) and the
benchmark's reading of that tool's output (benchmarks/cain_vs_published.py)."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from benchmarks import cain_suites as cs
from benchmarks.cain_vs_published import Published, check_program, parse_published
from core.cain.approx import approximate
from core.workload import Kernel, KernelSet

# The end of a real run of the published tool (commit 3dc1981d01d9, built by
# benchmarks/build_published_cain.sh) on its README's recommended config (the Sobel pair over 8 in
# registers A and B), 5 s, 4 workers; the plan-step dumps between these lines are cut, and the
# space the tool prints after each instruction.
PUBLISHED_SAMPLE = """\
Initialising Reverse Search:
Worker 0 Starting
Found new Plan (id:2): Length: 13 (10) | max-Circuit-Depth: 8 | Cost: 13
Found new Plan (id:1): Length: 11 (9) | max-Circuit-Depth: 7 | Cost: 11
Time is up!
Worker 1 Finished:  Active: true,  Min Depth: 2,  Max Depth: 11,  PlansFound: 1, CacheHits: 17878,  CacheChecks: 23378,  Steals: 1, NodesExpanded: 5499
Worker 0 Finished:  Active: true,  Min Depth: 0,  Max Depth: 11,  PlansFound: 1, CacheHits: 4227,  CacheChecks: 7376,  Steals: 0, NodesExpanded: 3148
Worker 2 Finished:  Active: true,  Min Depth: 3,  Max Depth: 11,  PlansFound: 2, CacheHits: 28734,  CacheChecks: 35228,  Steals: 1, NodesExpanded: 6492
Worker 3 Finished:  Active: true,  Min Depth: 1,  Max Depth: 11,  PlansFound: 1, CacheHits: 6805,  CacheChecks: 11153,  Steals: 2, NodesExpanded: 4347
Master finished waiting
GoalsCache: {Size: 17921}
Number of Plans: 5
Current Max Depth: 10
Current Max Cost: 11
Plan: 0 Cost: 13 (length=13) (circuit-maxDepth=[8, 8]) found at 300ms after locally searching 9 nodes
Plan: 1 Cost: 13 (length=13) (circuit-maxDepth=[7, 8]) found at 323ms after locally searching 9 nodes
Plan: 2 Cost: 12 (length=12) (circuit-maxDepth=[7, 7]) found at 423ms after locally searching 141 nodes
Plan: 3 Cost: 12 (length=12) (circuit-maxDepth=[7, 8]) found at 437ms after locally searching 32 nodes
Plan: 4 Cost: 11 (length=11) (circuit-maxDepth=[7, 7]) found at 513ms after locally searching 110 nodes
/*Kernel Code!*/


/*Inputs in: [A]*/


scamp5_kernel_begin();


div(B, C, A);
diva(B, C, D);
div(C, D, A, B);
mov2x(D, C, west, west);
mov2x(A, C, south, south);
addx(A, A, C, north);
addx(C, D, C, east);
addx(C, B, C, south);
addx(B, B, A, east);
sub2x(A, B, west, west, B);
sub2x(B, C, north, north, C);
/*Null Instruction: [] <- [A, B]*/


scamp5_kernel_end();


/* ops: 11, selects: 0, comments: 8, other: 2  */
"""

SOBEL_OVER_8 = cs.SuiteSet("readme-sobel", "edge", KernelSet("Sobel over 8", 8, [
    Kernel("A", [[1, 0, -1], [2, 0, -2], [1, 0, -1]]), Kernel("B", [[1, 2, 1], [0, 0, 0], [-1, -2, -1]])]), False)


def test_at_least_30_sets_with_unique_names_in_every_suite():
    sets = cs.suites()
    assert len(sets) >= 30
    assert len({s.name for s in sets}) == len(sets)
    assert {s.suite for s in sets} == set(cs.SUITES)
    for n in (1, 2, 3, 4):      # eq. 15 sets of 1, 2, 3 and 4 kernels
        assert any(s.suite == "eq15" and len(s.kernels) == n for s in sets)


def test_held_aside_sets_are_about_a_third_disjoint_from_tuning_and_cover_every_suite():
    tuning, held = cs.tuning_sets(), cs.held_aside_sets()
    names_t, names_h = {s.name for s in tuning}, {s.name for s in held}
    assert not names_t & names_h
    assert names_t | names_h == {s.name for s in cs.suites()}
    first = [s for s in cs.suites() if s.draw == "issue 15"]
    assert 0.25 <= sum(s.held_aside for s in first) / len(first) <= 0.4
    assert {s.suite for s in held if s.draw == "issue 15"} == set(cs.SUITES)


def test_the_fresh_suite_is_held_aside_and_mixes_random_and_structured_sets():
    fresh = cs.fresh_sets()
    assert len(fresh) >= 10 and all(s.held_aside and s.draw == "issue 28" for s in fresh)
    assert sum(s.suite in ("eq15", "random5x5") for s in fresh) >= 4
    assert sum(s.suite not in ("eq15", "random5x5") for s in fresh) >= 6
    assert not {s.name for s in fresh} & {s.name for s in cs.suites() if s.draw == "issue 15"}


def test_suites_are_the_same_for_their_seeds():
    first = json.dumps([(s.name, s.held_aside, s.kernels_json()) for s in cs.suites()])
    cs._build.cache_clear()
    again = json.dumps([(s.name, s.held_aside, s.kernels_json()) for s in cs.suites()])
    assert first == again
    # the draw is pinned: Python's random.Random(101), 3x3, u in 0..8 (core.study.generate)
    s101 = cs.by_name(["eq15-k1-s101"])[0]
    assert s101.kernel_set.denominator == 8
    assert s101.kernels[0].values == [[3, 8, 5], [7, 0, 8], [3, 3, 4]]


def test_eq15_sets_follow_the_papers_definition():
    for s in cs.suites():
        if s.suite in ("eq15", "random5x5"):
            size = 3 if s.suite == "eq15" else 5
            assert s.kernel_set.denominator == 8
            for k in s.kernels:
                assert len(k.values) == size and all(len(r) == size for r in k.values)
                assert all(0 <= v <= 8 for r in k.values for v in r) and any(v for r in k.values for v in r)


def test_every_set_is_exact_in_binary_and_accepted_by_the_engine():
    """Both tools search for the very same kernels: no approximation error at any d."""
    for s in cs.suites():
        den = s.kernel_set.denominator
        assert den & (den - 1) == 0, s.name
        a = approximate(s.kernel_set, max_kernels=6)
        assert a.max_abs_error == 0 and 2 ** a.d <= den, s.name


def test_unknown_set_names_are_named():
    with pytest.raises(ValueError, match="no-such-set"):
        cs.by_name(["sobel-xy", "no-such-set"])


def test_published_output_is_read_into_lengths_times_nodes_and_a_program():
    p = parse_published(PUBLISHED_SAMPLE)
    assert p["plans"][0] == (13, 300, 9) and p["plans"][-1] == (11, 513, 110)
    assert p["nodes"] == 5499 + 3148 + 6492 + 4347
    assert len(p["program"]) == 11 and p["program"][0] == "div(B, C, A);"
    ok, msg = check_program(p["program"], SOBEL_OVER_8, "A", ["A", "B"], 6)
    assert ok, msg


def test_a_program_that_computes_something_else_fails_the_check():
    p = parse_published(PUBLISHED_SAMPLE)
    wrong = [ln.replace("north, north", "south, south") for ln in p["program"]]
    ok, msg = check_program(wrong, SOBEL_OVER_8, "A", ["A", "B"], 6)
    assert not ok and "register B" in msg
    ok, msg = check_program(p["program"], SOBEL_OVER_8, "A", ["B", "A"], 6)    # outputs swapped
    assert not ok
    ok, msg = check_program(["foo(A, B);"], SOBEL_OVER_8, "A", ["A", "B"], 6)
    assert not ok and "does not run" in msg


def test_no_program_in_the_output_is_no_program():
    p = parse_published("Initialising Reverse Search:\nTime is up!\nNo Solutions Found!\n")
    assert p["program"] == [] and p["plans"] == [] and p["no_solution"]


def test_the_published_config_carries_our_kernels_set_registers_and_time(tmp_path):
    base = {"registerAllocator": {"name": "linearScan", "availableRegisters": ["A"], "initialRegisters": ["A"]},
            "runConfig": {"searchTime": 60000, "workers": 4}, "pairGen": {"strategy": {"ops": "all"}},
            "filter": {}, "maxApproximationDepth": 3, "maxApproximationError": 0}
    pub = Published(tmp_path, "cp", "0" * 40, base)
    s = cs.by_name(["binomial5"])[0]
    cfg = pub.config(s, "basic", 5, 12.5, 4)
    assert cfg["pairGen"]["strategy"]["ops"] == "basic"
    assert cfg["registerAllocator"]["availableRegisters"] == ["A", "B", "C", "D", "E"]
    assert cfg["runConfig"]["searchTime"] == 12500 and cfg["runConfig"]["workers"] == 4
    f = cfg["filter"]["A"]
    assert cfg["maxApproximationDepth"] == 8 and f["depth"] == -8
    assert Fraction(f["array"][2][2], 2 ** 8) == Fraction(36, 256)
    assert base["runConfig"]["searchTime"] == 60000        # the base config is not changed


def test_absent_published_tool_is_said_not_raised(tmp_path):
    assert "no published tool given" in Published.find(None)
    assert "incomplete" in Published.find(str(tmp_path))


def test_published_mov2x_with_an_anticlockwise_second_direction_is_swapped_not_failed():
    """A real line of the published tool's output (eq15-k2-s202, 60 s): mov2x(C, C, south, east).
    The table allows d2 = d1 or d1 turned clockwise; the shift is the same with the two swapped."""
    from benchmarks.cain_vs_published import normalise_mov2x
    from core.scamp5.interp import run_symbolic

    prog, n = normalise_mov2x(["mov2x(C, A, south, east);", "mov2x(D, A, east, south); ", "movx(E, A, north);"])
    assert n == 1 and prog[0] == "mov2x(C, A, east, south);" and prog[1].strip() == "mov2x(D, A, east, south);"
    final = run_symbolic("\n".join(prog), {"A": 0}, 6)[-1]
    assert final["C"] == final["D"]


def test_our_lower_bound_is_read_before_and_after_the_result_had_one():
    from benchmarks.cain_vs_published import bound_value

    assert bound_value(None) is None                                   # CainResult version 1
    assert bound_value({"value": 6, "outputs": 1, "halvings": 3, "adds": 3, "moves": 0}) == 6
    assert bound_value(7) == 7 and bound_value(True) is None
