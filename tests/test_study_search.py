"""Studies that search (core/study/search.py): a sampler picks points of the study's grid, within a
budget, never running a point twice, and a resumed search goes on from what it knew."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from core.errors import InputError
from core.study import results_file, search, spec
from core.study.runner import StudyRunner
from study_helpers import loopback_cluster

GRID = {"name": "bound search", "engine": "bound",
        "workload": {"kind": "conv_layers", "layers": ["Ci=8,Hi=12,Wi=12,Co=8,Hk=3,pad=1"]},
        "target": {"kind": "dataflow", "memory_bytes": 65536, "word_bits": 16, "pe_rows": 16, "pe_cols": 16},
        "settings": {"sweep": False, "dataflows": []},
        "axes": [{"param": "target.memory_bytes", "values": [2048, 4096, 8192, 16384, 32768, 65536]},
                 {"param": "target.word_bits", "values": [8, 16, 32]}],
        "metrics": ["optimal_traffic", {"name": "memory", "path": "memory_bytes"}]}
TWO = [{"metric": "optimal_traffic", "direction": "minimize"}, {"metric": "memory", "direction": "minimize"}]


def _study(tmp_path: Path | None = None, **search_fields: Any) -> spec.Study:
    doc = {**copy.deepcopy(GRID), "search": {"sampler": "tpe", "budget": 6, "seed": 1, "objectives": TWO,
                                             **search_fields}}
    path = None
    if tmp_path is not None:
        path = tmp_path / "search.json"
        path.write_text(json.dumps(doc))
    return spec.from_json(doc, None, path)


@pytest.mark.parametrize("change, where, says", [
    ({"sampler": "annealing"}, "study.search.sampler", "tpe"),
    ({"budget": 19}, "study.search.budget", "1..18"),
    ({"objectives": [{"metric": "optimal_trafic"}]}, "study.search.objectives[0].metric", "optimal_traffic"),
    ({"objectives": [{"metric": "memory", "direction": "down"}]}, "study.search.objectives[0].direction", "maximize"),
    ({"objectives": []}, "study.search.objectives", "list the metrics"),
    ({"budgets": 3}, "study.search.budgets", "budget"),
])
def test_a_bad_search_is_refused_naming_its_field(change, where, says):
    with pytest.raises(InputError) as exc:
        _study(**change)
    assert exc.value.where == where and says in exc.value.message


def test_a_search_goes_with_the_grid_only():
    doc = {**copy.deepcopy(GRID), "combine": "zip", "search": {"budget": 2, "objectives": ["memory"]},
           "axes": [{"param": "target.memory_bytes", "values": [2048, 4096]}]}
    with pytest.raises(InputError) as exc:
        spec.from_json(doc)
    assert exc.value.where == "study.search"


def _rec(key: str, traffic: float | None, memory: float, status: str = "finished") -> dict[str, Any]:
    return {"type": "point", "key": key, "index": 0, "status": status,
            "metrics": {"optimal_traffic": traffic, "memory": memory}}


def test_the_front_keeps_what_nothing_beats_and_its_hypervolume_counts_it():
    s = search.SearchSpec("tpe", 5, [search.Objective(o["metric"], o["direction"]) for o in TWO])
    recs = [_rec("a", 10, 4), _rec("b", 8, 8), _rec("c", 12, 8), _rec("d", 9, 2), _rec("e", 1, 1, "failed"),
            _rec("f", None, 1)]
    assert [r["key"] for r in search.front(s, recs)] == ["b", "d"]
    # dominated area up to (20, 20): b covers (20-8)*(20-8), d adds (20-9)*(8-2)
    assert search.hypervolume(s, recs, [20, 20]) == 12 * 12 + 11 * 6
    maxi = search.SearchSpec("tpe", 5, [search.Objective("optimal_traffic", "maximize")])
    assert [r["key"] for r in search.front(maxi, recs)] == ["c"]


@pytest.fixture(scope="module")
def one_worker():
    """One worker thread: the sampler sees each result before its next proposal, so a seed gives the
    same points every time (with more slots, which point ends first is up to the machine)."""
    yield from loopback_cluster(1)


def _points(path: Path) -> list[dict[str, Any]]:
    return [r for r in results_file.read(path) if r["type"] == "point"]


@pytest.mark.slow          # a Dask cluster of worker processes (one_worker)
def test_a_search_runs_its_budget_of_distinct_grid_points_and_repeats_with_its_seed(one_worker, tmp_path):
    s = _study(tmp_path)
    summary = StudyRunner(s, one_worker).run()
    ran = _points(s.results_path())
    keys = [r["key"] for r in ran]
    assert summary.error is None and len(keys) == 6 == len(set(keys))            # the budget, no point twice
    assert set(keys) <= {p.key for p in s.points}                               # points of the grid
    assert summary.counts["finished"] == 6 and summary.counts["not_run"] == 18 - 6
    again = _study(tmp_path / "..")
    StudyRunner(again, one_worker, tmp_path / "again.jsonl").run()
    assert [r["key"] for r in _points(tmp_path / "again.jsonl")] == keys      # same seed, one slot: same points


@pytest.mark.slow          # a Dask cluster of worker processes (one_worker)
def test_a_resumed_search_reuses_every_point_and_runs_only_new_ones(one_worker, tmp_path):
    first = _study(tmp_path)
    StudyRunner(first, one_worker).run()
    done = {r["key"] for r in _points(first.results_path())}
    more = _study(tmp_path, budget=10)
    ran: list[dict[str, Any]] = []
    summary = StudyRunner(more, one_worker, resume=True, on_record=ran.append).run()
    assert {r["key"] for r in ran if r.get("resumed")} == done
    new = [r["key"] for r in ran if not r.get("resumed")]
    assert len(new) == 10 and not set(new) & done and len(set(new)) == 10      # budget counts points run now
    assert summary.counts["finished"] == 16


@pytest.mark.slow          # a Dask cluster of worker processes (one_worker)
def test_a_whole_grid_search_finds_the_grid_front(one_worker, tmp_path):
    """The "grid" sampler with the grid's size as budget runs every point once: its front is the
    grid's, and the command line prints it and gives it in --json."""
    from main import main

    path = tmp_path / "grid.json"
    doc = {**copy.deepcopy(GRID), "search": {"sampler": "grid", "objectives": TWO}}
    path.write_text(json.dumps(doc))
    import io
    from contextlib import redirect_stdout

    out = io.StringIO()
    with redirect_stdout(out):
        code = main(["study", "run", str(path), "--cluster", one_worker, "--json", "--quiet"])
    assert code == 0
    got = json.loads(out.getvalue())
    assert got["search"]["grid"] == 18 and len(got["points"]) == 18 and got["counts"]["not_run"] == 0
    front_keys = {r["key"] for r in got["search"]["front"]}
    s = spec.from_json(doc)
    assert s.search is not None
    assert front_keys == {r["key"] for r in search.front(s.search, [dict(r, type="point") for r in got["points"]])}
    assert front_keys


@pytest.mark.slow          # a Dask cluster of worker processes (one_worker)
def test_nothing_is_computed_twice_across_studies(one_worker, tmp_path, monkeypatch):
    """Another study (other name, other metrics, other file) that contains points already finished
    reuses them from the cache of finished points, its own metrics read from the cached result; a
    search proposing them does too; --no-cache runs them again."""
    monkeypatch.setenv("DATAFLOW_EXPLORER_CACHE", str(tmp_path / "cache"))
    sweep = spec.from_json({**copy.deepcopy(GRID), "axes": [GRID["axes"][0]]})       # 6 points at 16-bit words
    first = StudyRunner(sweep, one_worker, tmp_path / "a.jsonl").run()
    assert first.counts["finished"] == 6 and first.counts["cached"] == 0
    other = {**copy.deepcopy(GRID), "name": "another", "metrics": [{"name": "S", "path": "memory_words"}],
             "axes": [{"param": "target.memory_bytes", "values": [4096, 8192, 1 << 20]}]}
    ran: list[dict[str, Any]] = []
    second = StudyRunner(spec.from_json(other), one_worker, tmp_path / "b.jsonl", on_record=ran.append).run()
    cached = {r["params"]["memory_bytes"]: r for r in ran if r.get("cached")}
    assert set(cached) == {4096, 8192} and second.counts["cached"] == 2
    assert cached[4096]["metrics"] == {"S": 2048}                    # this study's metric, from the cached result
    again = StudyRunner(spec.from_json(other), one_worker, tmp_path / "c.jsonl", cache=False).run()
    assert again.counts["cached"] == 0 and again.counts["finished"] == 3


# ------------------------------------------------------------------ polishing the best point
def _replay(study: spec.Study, value) -> list[tuple[int, ...]]:
    """The points a search runs when each point's objective is value(indices), answered at once."""
    s = search.Searcher(study, study.search)
    ran = []
    while (got := s.next_point()) is not None:
        p, known = got
        if known is None:
            idx = tuple(s._indices(p))
            ran.append(idx)
            s.told(p, {"type": "point", "key": p.key, "status": "finished",
                       "metrics": {"optimal_traffic": value(idx), "memory": 1.0}})
    return ran


@pytest.mark.parametrize("sampler", ["random", "nsga2", "tpe"])
def test_a_single_objective_search_ends_at_a_point_no_one_axis_step_improves(sampler):
    """A bowl with its bottom at (4, 1) on the 6 x 3 grid: whatever the sampler drew first, the
    polish walks one axis at a time to the bottom, within the budget, and runs no point twice."""
    study = _study(sampler=sampler, budget=9, objectives=["optimal_traffic"])
    ran = _replay(study, lambda i: (i[0] - 4) ** 2 + 3 * (i[1] - 1) ** 2)
    assert len(ran) == 9 == len(set(ran))
    assert (4, 1) in ran


def test_the_polish_tries_the_next_best_points_adjacent_values_before_longer_steps():
    """Once every value adjacent to the best point is tried, the polish goes to the adjacent values of
    the next best point (another basin), not to a longer step from the best: (3, 2), next to the
    second best (4, 2), before (2, 0), two steps from the best (0, 0). Then a better point found there
    leads at once."""
    study = _study(sampler="random", budget=9, objectives=["optimal_traffic"])
    s = search.Searcher(study, study.search)
    values = {(0, 0): 1.0, (1, 0): 5.0, (0, 1): 5.0, (4, 2): 2.0}
    for idx, v in values.items():
        p = s._point(list(idx))
        s.told(p, {"type": "point", "key": p.key, "status": "finished",
                   "metrics": {"optimal_traffic": v, "memory": 1.0}})
    nxt = s._next_neighbour()
    assert nxt is not None and tuple(s._indices(nxt)) == (3, 2)
    s.told(nxt, {"type": "point", "key": nxt.key, "status": "finished",
                 "metrics": {"optimal_traffic": 0.5, "memory": 1.0}})
    nxt = s._next_neighbour()
    assert nxt is not None and tuple(s._indices(nxt)) == (2, 2)      # next to the new best, (3, 2)


def test_polish_off_and_several_objectives_leave_the_sampler_alone(monkeypatch):
    """With "polish": false, or two objectives, no point comes from the polish."""
    calls = []
    monkeypatch.setattr(search.Searcher, "_next_neighbour", lambda self: calls.append(1))
    _replay(_study(sampler="random", budget=9, objectives=["optimal_traffic"], polish=False), lambda i: i[0])
    _replay(_study(sampler="random", budget=9), lambda i: i[0])
    assert calls == []
    _replay(_study(sampler="random", budget=9, objectives=["optimal_traffic"]), lambda i: i[0])
    assert calls


def test_polish_must_be_true_or_false():
    with pytest.raises(InputError) as exc:
        _study(polish="yes")
    assert exc.value.where == "study.search.polish" and "true or false" in exc.value.message
