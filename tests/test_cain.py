"""Cain code search: approximation, Goal encoding, reverse steps, search, verification, CLI."""

from __future__ import annotations

import argparse
import json
import random
from dataclasses import replace
from fractions import Fraction

import pytest

from core.cain import goals as gl
from core.cain.api import compile_filter
from core.cain.approx import approximate
from core.cain.engine import ENGINE
from core.cain.result import CainResult, GoalMatrix
from core.cain.solver import build_problem, lanes
from core.cain.csearch import PORTFOLIO
from core.errors import InputError
from core.filters import preset
from core.jobs import CancelToken, Cancelled, FinalResult, MetricPoint, PartialResult, run_foreground
from core.engine import JobRequest
from core.scamp5.interp import SymKernel, run_symbolic
from core.scamp5.isa import INSTRUCTION_SETS, instruction_set, register_names
from core.scamp5.program import parse_program
from core.workload import FpspFilter, Kernel, KernelSet, Scamp5Target


def ks(*mats, den=1, name="t"):
    return KernelSet(name, den, [Kernel(f"k{i + 1}", m) for i, m in enumerate(mats)])


def expected_kernels(result: CainResult) -> dict[str, SymKernel]:
    den = result.denominator
    return {n: SymKernel.from_matrix(m, Fraction(1, den)) for n, m in result.approximated_kernels.items()}


def check_program_independently(result: CainResult, registers: int = 6) -> None:
    """Re-run the reported program text and compare every output with its approximated kernel."""
    prog = parse_program("\n".join(result.program), registers)
    final = run_symbolic(prog, {result.input_register: 0}, registers)[-1]
    for name, want in expected_kernels(result).items():
        assert final[result.outputs[name]] == want, name


# ------------------------------------------------------------------ approximation
def test_approximation_of_the_paper_filters_is_exact():
    a = approximate(preset("gauss3"))
    assert a.d == 4 and a.max_abs_error == 0 and a.approximated[0] == [[1, 2, 1], [2, 4, 2], [1, 2, 1]]
    a = approximate(preset("analognet2"))
    assert a.d == 2 and a.approximated[1] == [[-4, -1, -1], [-1, 2, 0], [1, 1, 0]]
    # the paper's Goal for AnalogNet2's first kernel: 9 Atoms, e.g. three (-1, 0, 0, -)
    g = a.goals[0]
    assert gl.size(g) == 9
    assert dict(((x, y), c) for x, y, _, c in gl.atoms(g)) == {(-1, 0): -3, (0, 0): 1, (-1, -1): -3, (1, -1): 2}


def test_automatic_d_meets_the_tolerance_and_reports_errors():
    third = ks([[1, 1, 1], [1, 1, 1], [1, 1, 1]], den=9)
    a = approximate(third, tolerance=0.01)
    assert a.d == 6 and a.approximated[0][0][0] == 7           # 7/64 for 1/9
    assert a.errors[0][0][0] == pytest.approx(abs(7 / 64 - 1 / 9))
    assert a.max_abs_error <= 0.01
    assert approximate(third, d=3).approximated[0][0][0] == 1   # 1/8


def test_a_loose_tolerance_never_picks_a_d_that_rounds_a_kernel_away():
    small = ks([[0, 0.2, 0], [0.2, 0.1, 0.2], [0, 0.2, 0]], den=1)
    a = approximate(small, tolerance=0.5)     # d = 0 and d = 1 are within 0.5 but give all zeros
    assert a.d == 2 and any(n for row in a.approximated[0] for n in row)
    assert a.max_abs_error <= 0.5


@pytest.mark.parametrize("kernels,kwargs,message", [
    (ks([[1, "x", 1]]), {}, "not a number"),
    (ks([]), {}, "empty kernel"),
    (ks([[1, 2, 1], [1, 2]]), {}, "ragged rows"),
    (ks([[1] * 9] * 9), {}, "limit is 7x7"),
    (ks([[1, 1]]), {}, "sizes must be odd"),
    (ks([[0, 0, 0]] * 3), {}, "all zeros"),
    (ks([[0.01]], den=1), {"d": 2}, "all zeros"),
    (ks(*[[[1]]] * 3), {"max_kernels": 2}, "only 2 registers"),
    (ks([[1]]), {"d": 20}, "unreasonable"),
    (ks([[1 / 3]]), {"tolerance": 1e-12}, "no d up to"),
    (ks([[float("nan")]]), {}, "not a number"),
])
def test_bad_kernels_are_refused_with_a_clear_message(kernels, kwargs, message):
    with pytest.raises(InputError, match=message):
        approximate(kernels, **kwargs)


# ------------------------------------------------------------------ Goals and Goal-Bags
def test_goal_encoding_round_trips_and_translates():
    g = gl.make_goal({(-1, 0, 0): -3, (0, 0, 0): 1, (1, -1, 0): 2, (2, 3, 1): 5})
    assert sorted(gl.atoms(g)) == sorted([(-1, 0, 0, -3), (0, 0, 0, 1), (1, -1, 0, 2), (2, 3, 1, 5)])
    t = gl.shift(g, 2, -1)
    assert sorted(gl.atoms(t)) == sorted([(1, -1, 0, -3), (2, -1, 0, 1), (3, -2, 0, 2), (4, 2, 1, 5)])
    assert gl.norm_key(g) == gl.norm_key(t) and gl.norm_key(g) != gl.norm_key(gl.neg(g))
    assert gl.add(g, gl.neg(g)) == ()
    assert gl.half(gl.scale(g, 2)) == g and gl.half(g) is None
    assert gl.size(g) == 11 and gl.is_subgoal(gl.make_goal({(-1, 0, 0): -2}), g)
    assert not gl.is_subgoal(gl.make_goal({(-1, 0, 0): 2}), g)


def test_goal_bags_hash_the_same_whatever_the_order():
    rng = random.Random(3)
    goals = [gl.make_goal({(rng.randint(-2, 2), rng.randint(-2, 2), 0): rng.choice([-3, -1, 1, 2]) for _ in range(4)})
             for _ in range(6)]
    goals.append(goals[0])            # a multiset: one Goal twice
    seen = {gl.make_bag(goals): "first"}
    for _ in range(20):
        shuffled = goals[:]
        rng.shuffle(shuffled)
        bag = gl.make_bag(shuffled)
        assert bag == gl.make_bag(goals) and hash(bag) == hash(gl.make_bag(goals))
        assert seen[bag] == "first"
    # multiset union keeps the larger multiplicity (Cain eq. 7)
    a, b = goals[1], goals[2]
    assert gl.bag_union(gl.make_bag([a, b]), [a]) == gl.make_bag([a, b])
    assert gl.bag_union(gl.make_bag([a]), [a, a]) == gl.make_bag([a, a])


# ------------------------------------------------------------------ reverse steps
def _forward(op, lowers, dirs):
    """Independent forward semantics of a search step on Goals (the test's oracle)."""
    off = {"north": (0, 1), "east": (1, 0), "south": (0, -1), "west": (-1, 0)}
    dx = sum(off[d][0] for d in dirs)
    dy = sum(off[d][1] for d in dirs)
    if op == "mov":
        return lowers[0]
    if op in ("movx", "mov2x"):
        return gl.shift(lowers[0], dx, dy)
    if op in ("add", "addx", "add2x"):
        total = lowers[0]
        for lo in lowers[1:]:
            total = gl.add(total, lo)
        return gl.shift(total, dx, dy)
    if op in ("sub", "subx", "sub2x"):
        return gl.sub(gl.shift(lowers[0], dx, dy), lowers[1])
    if op == "neg":
        return gl.neg(lowers[0])
    if op == "div":
        return gl.half(lowers[0])
    raise AssertionError(op)


@pytest.mark.parametrize("name,isa", [("analognet2", "all"), ("gauss5+gauss3", "all"), ("gauss3", "basic")])
@pytest.mark.parametrize("member", [m.name for m in PORTFOLIO])
def test_every_reverse_step_is_correct_and_fits_the_registers(name, isa, member):
    """Every child the compiled search makes of the Final-Goals (each member's pairs) is one macro of the
    set applied backwards: upper = op(lowers), and the child bag is (F \\ {upper}) U lowers within the
    registers (the oracle is the test's own forward semantics)."""
    a = approximate(preset(name))
    p = build_problem(a.goals, a.d, 1, register_names(6), instruction_set(isa))
    final_bag = gl.make_bag(p.final_goals)
    kids = p.searcher(next(m for m in PORTFOLIO if m.name == member), 1 << 30, 0, 64).root_children()
    assert len(kids) > 5
    allowed = {k.split("/")[0] for k in INSTRUCTION_SETS[isa].ops}
    for child, (op, upper, lowers, dirs) in kids:
        assert _forward(op, lowers, dirs) == upper
        assert op in allowed or (op == "div" and allowed & {"div", "diva", "divq"})
        assert len(child) <= 6
        rest = gl.bag_remove_one(final_bag, upper)
        same = op in ("sub", "subx", "sub2x") and lowers[0] == lowers[1]
        assert child == gl.bag_union(rest, lowers[:1] if same else lowers)
    assert len({c for c, _ in kids}) == len(kids)         # no child twice


def test_workers_share_out_the_portfolio():
    """One worker runs every member in turn; more workers split them; one traversal is run by all."""
    assert [m.name for m in lanes(1, "portfolio", 0)[0]] == [m.name for m in PORTFOLIO]
    two = lanes(2, "portfolio", 0)
    assert sorted(m.name for lane in two for m in lane) == sorted(m.name for m in PORTFOLIO)
    assert all(lane for lane in two)
    assert {m.traversal for lane in lanes(3, "beam", 0) for m in lane} == {"beam"}


# ------------------------------------------------------------------ search results
def _run(settings, kernels=None, name="gauss3", target=None):
    req = JobRequest(kernels or preset(name), target, settings)
    events = list(ENGINE.run(req, CancelToken()))
    finals = [e for e in events if isinstance(e, FinalResult)]
    assert len(finals) == 1
    r = finals[0].data
    assert isinstance(r, CainResult)
    # what a session stores reads back as the same result
    assert CainResult.from_json(json.loads(json.dumps(r.to_json(), allow_nan=False))) == r
    return events, r


def test_gauss3_all_reaches_the_table1_length_within_a_node_budget():
    events, r = _run({"isa": "all", "workers": 1, "time_s": 120, "max_nodes": 1500})
    assert r.found and r.verified and r.length is not None
    assert r.length <= 10               # Table 1: Cain 'All' 10 (AUKE and Cain 'Basic' 12)
    assert {m.method for m in r.improvements} == {"simultaneous"}
    assert r.nodes_explored <= 1500 + 40
    check_program_independently(r)
    plans = [e for e in events if isinstance(e, PartialResult) and e.kind == "plan"]
    lengths = [p.data.length for p in plans]
    assert lengths == sorted(lengths, reverse=True) and len(set(lengths)) == len(lengths)
    assert lengths[-1] == r.length
    assert {m.plot for m in events if isinstance(m, MetricPoint)} == {"nodes", "time"}
    assert r.cpp.count(";") >= r.length and "scamp5_kernel_begin();" in r.cpp
    # the Goal-Bag trace goes from the input Goal to the Final-Goals
    assert len(r.goal_bags) == r.length + 1
    assert r.goal_bags[0] == [GoalMatrix(atoms=16, matrix=[[16]])]
    assert r.to_json()["goal_bags"][0] == [{"atoms": 16, "matrix": [[16]]}]


def test_every_reported_plan_is_verified_analognet2():
    events, r = _run({"isa": "all", "workers": 1, "time_s": 120, "max_nodes": 800}, name="analognet2")
    plans = [e.data for e in events if isinstance(e, PartialResult) and e.kind == "plan"]
    assert plans and r.verified
    for p in plans:
        check_program_independently(replace(r, program=p.program, outputs=p.outputs))
    # the result keeps every improvement's program, the same ones the plans streamed
    assert [i.program for i in r.improvements] == [p.program for p in plans]
    assert r.length is not None and r.length < 49       # AUKE's 13 + 21 + 15


def test_basic_set_and_auke_baseline_use_only_their_instructions():
    _, r = _run({"isa": "basic", "workers": 1, "time_s": 120, "max_nodes": 600})
    assert r.found
    ops = {line.split("(")[0] for line in r.program}
    assert ops <= {"mov", "movx", "add", "sub", "neg", "res", "divq", "div", "diva"}
    check_program_independently(r)
    _, r = _run({"isa": "auke", "workers": 1, "time_s": 120, "max_nodes": 1200}, name="sobel")
    assert r.found and r.mode == "auke"
    assert {line.split("(")[0] for line in r.program} <= {"mov", "movx", "add", "sub", "divq", "neg"}
    check_program_independently(r)


@pytest.mark.parametrize("traversal", ["dfs", "best-first"])
def test_other_traversals_find_verified_programs(traversal):
    _, r = _run({"workers": 1, "traversal": traversal, "time_s": 120, "max_nodes": 1500})
    assert r.found and r.verified
    check_program_independently(r)


def test_multi_channel_kernel_and_more_registers():
    k = ks([[[0, 1, 0], [0, 2, 0], [0, 1, 0]], [[0, 0, 0], [1, 0, -1], [0, 0, 0]]], den=2)
    _, r = _run({"workers": 1, "time_s": 120, "max_nodes": 1500}, kernels=k, target=Scamp5Target(registers=8))
    assert r.found and r.verified
    assert set(r.input_registers) == {"0", "1"}


def test_a_search_that_finds_nothing_gives_a_typed_result_without_a_program():
    from core.cain.engine import _final, _settings, registers_of
    from core.cain.lower_bound import problem_bound

    k = preset("gauss3")
    s = _settings({}, None)
    a = approximate(k, max_kernels=registers_of(None))
    bound = problem_bound(a.goals, a.d, a.channels, instruction_set(s.isa))
    r = _final(k, a, s, registers_of(None), None, None, [], 10, 0.5, bound, bound.value)
    assert not r.found and r.length is None and r.program == [] and r.goal_bags == [] and r.gap is None
    assert r.bound == bound.value and r.nodes_per_s == 20.0
    assert "gap" not in r.to_json() and "method" not in r.to_json()
    assert CainResult.from_json(json.loads(json.dumps(r.to_json()))) == r
    assert "no program found within the budget" in ENGINE.format_text(r)


@pytest.mark.slow
def test_compile_filter_api_and_workers():
    plan = compile_filter(preset("sobel"), time_s=120.0, max_nodes=1500, workers=2)     # a node budget: no race
    assert plan.verified and plan.length >= 1
    assert set(plan.outputs) == {"sobel_x", "sobel_y"} and plan.input_register == "A"
    final = run_symbolic(plan.program, {"A": 0})[-1]
    for name, reg, approx in zip(plan.kernel_names, plan.output_registers, plan.approximated_kernels):
        assert final[reg] == SymKernel.from_matrix(approx, Fraction(1, plan.denominator)), name


def test_cancel_stops_the_search():
    token = CancelToken()
    job = ENGINE.run(JobRequest(preset("gauss5"), None, {"workers": 1, "time_s": 60}), token)
    next(job)
    token.cancel()
    with pytest.raises(Cancelled):
        for _ in range(1000):
            next(job)


# ------------------------------------------------------------------ command line and settings
def _parse(argv):
    p = argparse.ArgumentParser()
    ENGINE.add_cli_arguments(p)
    return p.parse_args(argv)


def test_cli_kernel_file_round_trip(tmp_path):
    f = tmp_path / "k.json"
    f.write_text(json.dumps(preset("laplacian").to_json()))
    req = ENGINE.request_from_cli(_parse(["--kernels", str(f), "--time", "30", "--max-nodes", "400",
                                          "--workers", "1"]))
    out = run_foreground(ENGINE.run(req, CancelToken()), quiet=True)
    r = out.result
    assert out.error is None and isinstance(r, CainResult) and r.found and r.verified
    check_program_independently(r)
    text = ENGINE.format_text(r)
    assert "laplacian" in text and r.program[0] in text


@pytest.mark.parametrize("argv,content,message", [
    (["--preset", "gauss3", "--registers", "1"], None, "registers must be 2"),
    (["--preset", "gauss3", "--time", "0"], None, "time must be a positive"),
    (["--preset", "gauss3", "--workers", "0"], None, "workers must be"),
    (["--preset", "gauss3", "--d", "30"], None, "unreasonable"),
    (["--kernels", "FILE"], "{not json", "not valid JSON"),
    (["--kernels", "FILE"], '{"name": "x", "kernels": []}', "no kernels"),
    (["--kernels", "FILE"], '{"kernels": [{"values": [[1, 2], [3]]}]}', "ragged"),
    (["--kernels", "FILE"], '{"kind": "cnn_set", "kernels": []}', "expected kind 'kernels'"),
    (["--kernels", "MISSING"], None, "cannot read"),
])
def test_cli_bad_input(tmp_path, argv, content, message):
    f = tmp_path / "k.json"
    if content is not None:
        f.write_text(content)
    argv = [str(f) if a == "FILE" else (str(tmp_path / "none.json") if a == "MISSING" else a) for a in argv]
    with pytest.raises(InputError, match=message):
        ENGINE.request_from_cli(_parse(argv))


def test_bad_settings_name_the_field():
    with pytest.raises(InputError, match="settings.traversal"):
        list(ENGINE.run(JobRequest(preset("gauss3"), None, {"traversal": "bfs"}), CancelToken()))
    with pytest.raises(InputError, match="unknown setting"):
        list(ENGINE.run(JobRequest(preset("gauss3"), None, {"colour": 1}), CancelToken()))


def test_one_by_one_seed_is_reported_first_and_must_be_beaten():
    events, r = _run({"workers": 1, "time_s": 120, "max_nodes": 1200, "seed_share": 0.5}, name="sobel")
    plans = [e.data for e in events if isinstance(e, PartialResult) and e.kind == "plan"]
    assert plans[0].method == "one-by-one"
    assert all(p.method == "simultaneous" for p in plans[1:])
    assert [p.length for p in plans] == sorted({p.length for p in plans}, reverse=True)
    assert r.verified and r.improvements[0].method == "one-by-one"
    assert r.length is not None and len(r.register_goals) == r.length + 1
    check_program_independently(r)


def test_closing_a_run_with_workers_ends_the_worker_processes():
    import multiprocessing

    job = ENGINE.run(JobRequest(preset("gauss5"), None, {"workers": 2, "time_s": 60}), CancelToken())
    for ev in job:
        if isinstance(ev, MetricPoint) or multiprocessing.active_children():
            break
    assert multiprocessing.active_children()
    job.close()                      # what the GUI/CLI do on Cancel
    assert not [p for p in multiprocessing.active_children() if p.is_alive()]


def test_a_failing_search_worker_fails_the_run_instead_of_finding_nothing():
    from dataclasses import replace

    from core.cain.solver import search_plans

    a = approximate(preset("gauss3"))
    p = build_problem(a.goals, a.d, 1, register_names(6), instruction_set("all"))
    broken = replace(p, final_goals=[None])          # the workers cannot even build their first Goal-Bag
    with pytest.raises(RuntimeError, match="search worker . failed"):
        list(search_plans(broken, 10.0, None, 2, "cgds", CancelToken()))


# ------------------------------------------------------------------ workload, target and format 1
def test_v1_register_count_becomes_the_tabs_target():
    from core.session import from_json

    doc = {"format": "dataflow-explorer-session", "version": 1,
           "workload": {"kind": "fpsp_filter", "preset": "sobel"},
           "target": {"kind": "scamp5", "registers": 6, "array_size": 256},
           "engines": {"cain": {"settings": {"isa": "basic", "registers": 8, "time_s": 5.0, "d": None,
                                             "tolerance": 1e-9, "seed_share": 0.4}}}}
    p = from_json(doc)
    s = p.settings("cain")
    assert "registers" not in s and s["isa"] == "basic" and s["seed_share"] == 0.4
    assert p.chosen("cain", "targets").value == Scamp5Target(registers=8)
    assert p.chosen("cain", "workloads").value == FpspFilter("sobel")
    doc["engines"]["cain"]["settings"]["registers"] = None      # 'the target's count': the v1 target
    p = from_json(doc)
    assert p.chosen("cain", "targets").value == Scamp5Target() and "registers" not in p.settings("cain")


def test_the_target_gives_the_register_count():
    _, r = _run({"workers": 1, "time_s": 60, "max_nodes": 300}, name="gauss3", target=Scamp5Target(registers=4))
    assert r.registers == 4 and r.found
    assert {a for line in r.program for a in line.split("(")[1].rstrip(")").split(", ")} <= set("ABCD") | {
        "north", "east", "south", "west"}
    with pytest.raises(InputError, match="target.registers"):
        list(ENGINE.run(JobRequest(preset("gauss3"), Scamp5Target(registers=1), {}), CancelToken()))


def test_workload_problem_names_kernels_the_search_cannot_take():
    assert ENGINE.workload_problem(FpspFilter("analognet2")) is None
    even = KernelSet("even", 1, [Kernel("k", [[1, 2], [3, 4]])])
    assert "odd" in ENGINE.workload_problem(even)
    mixed = KernelSet("mixed", 1, [Kernel("a", [[1]]), Kernel("b", [[[1]], [[2]]])])
    assert "channels" in ENGINE.workload_problem(mixed)


@pytest.mark.slow
def test_cli_json_from_main():
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "main.py", "cain", "--preset", "gauss3", "--time", "30", "--max-nodes",
                          "300", "--workers", "1", "--registers", "5", "--json"], cwd=repo, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    assert r["found"] and r["registers"] == 5 and r["improvements"][-1]["program"] == r["program"]
    out = subprocess.run([sys.executable, "main.py", "cain", "--preset", "gauss3", "--registers", "1"], cwd=repo,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode != 0 and "registers must be 2" in out.stderr


@pytest.mark.parametrize("d", [9, 10])
def test_the_largest_stated_d_runs_and_verifies(d):
    """d is said to go up to 10: a kernel over 2^9 or 2^10 (a coefficient near the denominator itself) must search
    and verify, not crash with "coefficient too large for a Goal" (issue 34's Cain class)."""
    from core.workload import Kernel, KernelSet

    den = 2 ** d
    matrix = [[1.0, 2.0, 1.0], [2.0, float(den - 12), 2.0], [1.0, 2.0, 1.0]]
    plan = compile_filter(KernelSet(name=f"over {den}", denominator=den, kernels=[Kernel("k", matrix)]),
                          time_s=120.0, max_nodes=3000, workers=1)
    assert plan.verified and plan.denominator == den
    final = run_symbolic(plan.program, {"A": 0})[-1]
    assert final[plan.output_registers[0]] == SymKernel.from_matrix(plan.approximated_kernels[0],
                                                                   Fraction(1, plan.denominator))
    assert plan.approximated_kernels[0] == matrix


def test_a_lane_with_the_prover_finishes_when_its_node_budget_is_spent():
    """Was: with one worker, once the search member had spent its nodes the prover was held to a share
    of nodes that no longer grew, so the lane never finished and spun until the time limit (CGDS at
    20,000 nodes on the 3x3 Gaussian took the whole 600 s). Counted in slices, never in seconds."""
    from core.cain.solver import MEMORY_BUDGET_MB, Lane

    a = approximate(preset("gauss3"))
    p = build_problem(a.goals, a.d, 1, register_names(6), instruction_set("all"))
    lane = Lane(p, lanes(1, "cgds", 0)[0], 1 << 30, 0, 0, MEMORY_BUDGET_MB, 6500, prove=True)
    try:
        slices = 0
        while not lane.exhausted and slices < 2000:
            lane.run(10.0)
            slices += 1
        assert lane.exhausted, (lane.nodes, slices)
        assert lane.nodes <= 2 * 6500
    finally:
        lane.close()
