"""The published Cain tool's search in C (core/cain/native.py): it must be the tool's search, plan for
plan, and every plan it reports must be a program the engine can allocate and verify."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from core.cain import native
from core.cain.approx import approximate
from core.cain.solver import build_problem, realise
from core.scamp5.isa import instruction_set, register_names

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from cain_suites import suites  # noqa: E402

if not native.available():
    pytest.skip("no C compiler here to build the published-search worker", allow_module_level=True)

SETS = {s.name: s for s in suites()}

# The published tool (ed741/cain 3dc1981d01d9, built by benchmarks/build_published_cain.sh) run with
# its recommended config but one worker thread and maxNodes 3000 / 20000, "all" set, 6 registers:
# each (length, nodes) is a plan it printed that was shorter than every earlier one, with the nodes
# its worker had expanded when it found it (read from its output here, 2026-11-27).
PUBLISHED_1_WORKER = {
    ("sharpen8", 3000): [(16, 16), (15, 38), (14, 49), (13, 90), (12, 183), (11, 832)],
    ("sobel-xy", 3000): [(10, 10), (9, 40)],
    ("eq15-k2-s201", 20000): [(35, 657), (32, 1730), (31, 1741), (30, 4412)],   # the 32 ends in a halving
                                                                             # that overwrites its input
    ("sobel5-xy", 20000): [(39, 58), (38, 200), (37, 241), (36, 621), (35, 782), (34, 2988), (33, 18459)],
    ("binomial5", 20000): [(46, 111), (41, 162), (40, 857), (39, 927), (35, 1042), (34, 10214), (33, 10246),
                           (24, 11972)],
}


def _problem(name: str):
    isa = instruction_set("all")
    approx = approximate(SETS[name].kernel_set, max_kernels=6)
    return approx, isa, build_problem(approx.goals, approx.d, approx.channels, register_names(6), isa)


def _run(name: str, nodes: int, workers: int) -> list:
    approx, isa, problem = _problem(name)
    s = native.NativeSearcher(approx.goals, approx.d, 6, isa, workers=workers)
    plans = []
    while s.nodes < nodes and not s.exhausted:
        plans += s.run(min(500, nodes - s.nodes), 5.0)
    assert s.dropped == 0       # every plan the C search reported became one of the engine's
    s.close()
    return plans


@pytest.mark.parametrize("name,nodes", sorted(PUBLISHED_1_WORKER))
def test_it_finds_what_the_published_tool_finds_at_the_same_node(name, nodes):
    plans = _run(name, nodes, workers=1)
    assert [(p.length, p.nodes_at_find) for p in plans] == PUBLISHED_1_WORKER[name, nodes]


@pytest.mark.parametrize("name", ["sharpen8", "gabor3-odd", "log5+gauss3", "eq15-k3-s302"])
def test_every_plan_allocates_and_verifies(name):
    approx, isa, problem = _problem(name)
    plans = _run(name, 4000, workers=4)
    assert plans
    lengths = [p.length for p in plans]
    assert lengths == sorted(lengths, reverse=True) and len(set(lengths)) == len(lengths)
    for p in plans:
        alloc, ok, msg = realise(problem, p, isa, approx.d)
        assert ok, msg
        assert len(alloc.program) == p.length


def test_a_node_budget_gives_the_same_plans_every_time():
    a = _run("eq15-k2-s203", 3000, workers=4)
    b = _run("eq15-k2-s203", 3000, workers=4)
    assert [(p.length, p.nodes_at_find, p.steps) for p in a] == [(p.length, p.nodes_at_find, p.steps) for p in b]


def test_a_slice_looks_at_the_clock_after_every_round_of_its_workers():
    # each round takes one node from each of the four virtual workers at most: a slice whose time
    # is up when it starts ends after one round, whatever its node budget
    approx, isa, _ = _problem("rand5-k2-s511")
    s = native.NativeSearcher(approx.goals, approx.d, 6, isa)
    for _ in range(5):
        before = s.nodes
        s.run(10 ** 9, 0.0)
        assert s.nodes - before <= native.VIRTUAL_WORKERS
    assert s.nodes > 0 and not s.exhausted
    s.close()


def test_a_bound_from_elsewhere_prunes():
    approx, isa, _ = _problem("sobel-xy")
    s = native.NativeSearcher(approx.goals, approx.d, 6, isa, best=9)
    plans = []
    while not s.exhausted and s.nodes < 3000:
        plans += s.run(500, 5.0)
    assert all(p.length < 9 for p in plans)
    s.close()


def test_multi_channel_kernels_are_refused():
    from core.cain import goals as gl

    g = gl.make_goal({(0, 0, 0): 1, (0, 0, 1): 1})
    with pytest.raises(ValueError, match="single-channel"):
        native.NativeSearcher([g], 0, 6, instruction_set("all"))


# ------------------------------------------------------------------ in the engine's portfolio
def _engine_run(name: str, **settings):
    from core.cain.engine import ENGINE
    from core.engine import JobRequest
    from core.jobs import CancelToken, FinalResult
    from core.workload import Scamp5Target

    req = JobRequest(SETS[name].kernel_set, Scamp5Target(registers=6),
                     {"time_s": 30.0, "workers": 2, "seed_share": 0.0, **settings})
    return next(e.data for e in ENGINE.run(req, CancelToken()) if isinstance(e, FinalResult))


def test_worker_1_runs_the_published_search_and_says_so():
    from core.cain.engine import format_text
    from core.cain.result import CainResult

    # with its four virtual workers the published search finds sharpen8's 11 at node 1137; the
    # engine's own worker 0 does not within its 2000 nodes, so the 11 comes from worker 1
    r = _engine_run("sharpen8", max_nodes=4000)
    assert r["found"] and r["verified"] and r["length"] == 11
    assert r["improvements"][-1]["searcher"] == "published"
    assert {i["searcher"] for i in r["improvements"]} <= {"engine", "published"}
    assert "found by the published tool's search (compiled)" in format_text(r)
    # a version-2 result (before `searcher`) still loads, and its text names no searcher
    old = {**r, "improvements": [{k: v for k, v in i.items() if k != "searcher"} for i in r["improvements"]]}
    back = CainResult.check(old, version=2)
    assert "found by" not in format_text(back)


def test_another_traversal_keeps_the_engines_own_workers():
    r = _engine_run("sobel-xy", max_nodes=600, traversal="dfs")
    assert r["found"] and {i["searcher"] for i in r["improvements"]} == {"engine"}


def test_the_published_mode_runs_the_published_search_alone():
    from core.cain.engine import format_text

    r = _engine_run("sobel-xy", mode="published", max_nodes=3000)
    assert r["found"] and r["verified"] and r["length"] == 9 and r["mode"] == "published"
    assert "the published search in one process" in format_text(r)       # not "2 worker(s)"
    assert {i["searcher"] for i in r["improvements"]} == {"published"}
    # the tool's own improvements with four workers, as the C search alone makes them
    assert [i["length"] for i in r["improvements"]] == [p.length for p in _run("sobel-xy", 3000, workers=4)]

