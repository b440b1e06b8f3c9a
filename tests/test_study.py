"""Studies: reading and expanding study files, and running them on a local Dask cluster on loopback
with two worker processes (points complete with their metrics, a killed worker's point is retried,
--resume skips finished points, Cancel leaves no process, the CLI's --json shape).

The cluster tests share one cluster (started once for the module) through its scheduler address,
as `--cluster tcp://...` would; the Cancel test starts and stops its own `local:2` cluster. The
points are short Cain searches with a node budget (and a time limit far beyond it), so they find the
same programs on any machine, loaded or not; the killed-worker test runs the demo engine, whose
points wait for the test's go-ahead, and the Cancel test searches that run until cancelled."""

from __future__ import annotations

import copy
import json
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from core.errors import InputError
from core.engine import get_engine
from core.lifecycle import RunError, RunOutcome
from core.project import Project, Snapshot
from core.study import results_file, spec
from core.study.analysis import pareto_front
from core.study.runner import StudyRunner, parse_cluster
from study_helpers import CAIN_STUDY, loopback_cluster

ROOT = Path(__file__).resolve().parents[1]

CAIN = CAIN_STUDY


def study(doc: dict[str, Any], tmp_path: Path | None = None) -> spec.Study:
    path = None if tmp_path is None else tmp_path / "study.json"
    if path is not None:
        path.write_text(json.dumps(doc))
    return spec.from_json(copy.deepcopy(doc), None, path)


# ================================================================ reading and expanding
def test_grid_points_with_params_metrics_and_stable_keys():
    s = study(CAIN)
    assert [p.params for p in s.points] == [{"seed": 1, "mode": "cain"}, {"seed": 1, "mode": "auke"},
                                            {"seed": 2, "mode": "cain"}, {"seed": 2, "mode": "auke"}]
    assert [m.name for m in s.metrics] == ["length", "nodes_explored", "kernels"]
    assert s.metrics[0].path is None and s.metrics[2].path == "kernel_names[0]"
    p = s.points[1]
    assert p.workload["kind"] == "kernels" and len(p.workload["kernels"]) == 1
    assert p.settings["mode"] == "auke" and p.settings["time_s"] == 120.0 and p.target["registers"] == 6
    assert len({q.key for q in s.points}) == 4
    assert [q.key for q in study(CAIN).points] == [q.key for q in s.points]       # the same study, the same keys


def test_random_kernels_are_nested_and_seeded():
    one = study({**CAIN, "axes": [{"param": "workload.count", "range": {"from": 1, "to": 3}}]})
    ks = [p.workload["kernels"] for p in one.points]
    assert [len(k) for k in ks] == [1, 2, 3]
    assert ks[2][:2] == ks[1] and ks[1][:1] == ks[0]        # kernel i is the same at every count
    for k in ks[2]:
        assert all(0 <= v <= 8 for row in k["values"] for v in row) and any(any(r) for r in k["values"])


def test_zip_random_repeats_and_from():
    s = study({**CAIN, "axes": [{"zip": [{"param": "settings.mode", "values": ["cain", "auke"]},
                                         {"param": "settings.time_s", "values": [0.1, 0.3]}]}], "repeats": 3})
    assert [(p.settings["mode"], p.settings["time_s"], p.repeat) for p in s.points] == \
        [("cain", 0.1, 0), ("cain", 0.1, 1), ("cain", 0.1, 2), ("auke", 0.3, 0), ("auke", 0.3, 1), ("auke", 0.3, 2)]
    assert len({p.key for p in s.points}) == 6
    doc = {**CAIN, "combine": "random", "samples": 7, "seed": 3,
           "axes": [{"param": "workload.seed", "random": {"integers": [0, 10 ** 6]}},
                    {"param": "settings.time_s", "random": {"uniform": [0.1, 0.5]}},
                    {"param": "settings.traversal", "values": ["cgds", "dfs"]}]}
    a, b = study(doc), study(doc)
    assert len(a.points) == 7 and [p.params for p in a.points] == [p.params for p in b.points]
    assert all(0.1 <= p.settings["time_s"] <= 0.5 for p in a.points)
    assert [p.params for p in study({**doc, "seed": 4}).points] != [p.params for p in a.points]
    bound = spec.load(ROOT / "assets/studies/bound_zoo_memory.json")
    from core.nets import zoo

    assert [p.params["network"] for p in bound.points[::4]] == zoo.names()


def test_every_example_study_is_valid():
    files = sorted((ROOT / "assets/studies").glob("*.json")) + sorted((ROOT / "assets/studies").glob("*.yaml"))
    engines = set()
    for f in files:
        s = spec.load(f)
        assert s.points, f
        engines.add(s.engine)
    from core.engine import engines as all_engines

    assert engines == set(all_engines())        # an example per engine
    fig4 = spec.load(ROOT / "assets/studies/cain_fig4.json")
    assert {p.params["kernels"] for p in fig4.points} == set(range(1, 11))
    assert {p.settings["mode"] for p in fig4.points} == {"cain", "auke"} and fig4.points[0].target["registers"] == 18


@pytest.mark.parametrize("change, where, words", [
    ({"engine": "nope"}, "study.engine", "unknown engine"),
    ({"axes": [{"param": "settings.time_s", "values": [1]}, {"param": "settings.tiem", "values": [1]}]},
     "study.axes[1].param", "no setting 'tiem'"),
    ({"axes": [{"param": "settings.time_s", "values": [1, -2]}]}, "study.axes[0].values[1]", "settings.time_s"),
    ({"axes": [{"param": "settings.mode", "values": ["cain", "auke", "quantum"]}]}, "study.axes[0].values[2]",
     "settings.mode"),
    ({"axes": [{"param": "target.registers", "range": {"from": 20, "to": 30, "step": 5}}]}, "study.axes[0].range",
     "target.registers"),
    ({"axes": [{"param": "settings.time_s", "values": []}]}, "study.axes[0].values", "non-empty"),
    ({"axes": [{"param": "settings.time_s"}]}, "study.axes[0]", "exactly one of"),
    ({"axes": [{"zip": [{"param": "settings.time_s", "values": [1, 2]},
                        {"param": "settings.mode", "values": ["cain"]}]}]}, "study.axes[0].zip[1]", "move together"),
    ({"axes": [{"param": "settings.rng_state", "random": {"integers": [0, 9]}}]}, "study.axes[0].param", "no setting"),
    ({"axes": [{"param": "settings.time_s", "random": {"uniform": [1, 2]}}]}, "study.axes[0].count", "missing"),
    ({"metrics": ["lenght"]}, "study.metrics[0]", "did you mean 'length'"),
    ({"metrics": ["improvements[0].lenght"]}, "study.metrics[0]", "no 'improvements[0].lenght'"),
    ({"workload": {"library": "No such thing"}}, "study.workload.library", "no workload named"),
    ({"workload": {"kind": "cnn", "network": "vgg16"}}, "study.workload", "not 'cnn'"),
    ({"repeats": 0}, "study.repeats", "1..1000"),
    ({"combine": "random"}, "study.samples", "missing"),
    ({"sttings": {}}, "study.sttings", "did you mean 'settings'"),
])
def test_bad_studies_are_refused_with_the_field(change, where, words):
    with pytest.raises(InputError) as err:
        study({**CAIN, **change})
    assert err.value.where == where, err.value
    assert words in err.value.message, err.value


def test_bad_text_says_where():
    with pytest.raises(InputError) as err:
        spec.parse_text('{"engine": "cain",\n "axes": [}', "s.json")
    assert err.value.where == "s.json:2:11"
    with pytest.raises(InputError) as err:
        spec.parse_text("engine: cain\naxes: [\n", "s.yaml", yaml_first=True)
    assert err.value.where.startswith("s.yaml:")


def test_yaml_and_library_names_from_a_session():
    p = Project.starter()
    wid = p.add("workloads", "Edge", p.entries("workloads")[0].value)
    text = "engine: cain\nworkload: {library: Edge}\nsettings: {time_s: 0.1}\n" \
           "axes:\n  - {param: settings.workers, values: [1, 2]}\n"
    s = spec.from_json(spec.parse_text(text, yaml_first=True), p)
    assert len(s.points) == 2 and s.workload_name == "Edge" and p.entry("workloads", wid) is not None
    assert s.points[0].workload == p.entry("workloads", wid).value.to_json()


def test_parse_cluster():
    assert parse_cluster("local:3").workers == 3 and parse_cluster("local").workers == (os.cpu_count() or 1)
    assert parse_cluster("tcp://10.0.0.1:8786").address == "tcp://10.0.0.1:8786"
    for bad in ("local:0", "local:x", "tcp://host", "10.0.0.1:8786", "http://h:1"):
        with pytest.raises(InputError) as err:
            parse_cluster(bad)
        assert err.value.where == "--cluster"


def test_pareto_front():
    pts = [(1, 5), (2, 3), (3, 4), (4, 1), (2, 3), (5, 1)]
    assert sorted(pareto_front(pts)) == [0, 1, 3, 4]
    assert sorted(pareto_front(pts, (False, False))) == [0, 2, 5]
    assert sorted(pareto_front(pts, (True, False))) == [0]


def test_add_finished_run_checks_the_result_like_any_run():
    p = Project.starter()
    n = len(p.runs)
    snap = Snapshot.from_json("workloads", {"id": "study", "name": "random x1",
                                             "value": {"kind": "fpsp_filter", "preset": "gauss3"}})
    bad = p.add_finished_run("cain", snap, None, {"time_s": 1.0},
                             RunOutcome.from_json({"status": "finished", "result": {"length": 3}, "duration_s": 1.5},
                                                  get_engine("cain")), "note")
    assert bad.status == "failed" and "does not match its type" in bad.error and bad.partial["result"]
    failed = p.add_finished_run("cain", snap, None, {}, RunOutcome.failed(RunError("other", "boom")))
    assert failed.status == "failed" and failed.error == "boom" and failed.duration_s is None
    assert len(p.runs) == n + 2 and bad.duration_s == 1.5 and bad.note == "note"


# ================================================================ on a Dask cluster
@pytest.fixture(scope="module")
def scheduler():
    """A two-process cluster on loopback."""
    yield from loopback_cluster(2)


@pytest.mark.slow
def test_a_study_completes_with_its_points_and_metrics(scheduler, tmp_path):
    s = study(CAIN, tmp_path)
    seen: list[dict[str, Any]] = []
    summary = StudyRunner(s, scheduler, on_record=seen.append).run()
    assert summary.error is None and summary.counts == {"total": 4, "finished": 4, "failed": 0, "not_run": 0,
                                                        "resumed": 0, "cached": 0}
    assert sorted(r["index"] for r in seen) == [0, 1, 2, 3]
    for r in summary.records:
        assert r["status"] == "finished" and r["attempts"] == 1
        assert set(r["metrics"]) == {"length", "nodes_explored", "kernels"}
        assert r["metrics"]["kernels"] == "r1" and r["metrics"]["length"] == r["result"]["length"] > 0
        assert r["request"]["settings"]["mode"] == r["params"]["mode"]
    lines = results_file.read(tmp_path / "study.results.jsonl")
    assert lines[0]["type"] == "header" and lines[0]["points"] == 4
    assert sorted(r["key"] for r in lines[1:]) == sorted(p.key for p in s.points)
    assert all("series" not in r and r["result"]["mode"] == r["params"]["mode"] for r in lines[1:])


def test_a_killed_worker_gets_its_point_again(scheduler, tmp_path, monkeypatch):
    """The points are the demo engine's: each says which worker process runs it, then waits for the
    test's go-ahead, so the worker is killed in the middle of its point however fast or loaded the
    machine is (no sleep that is hoped to be long enough)."""
    from distributed import Client

    from core import engine as engine_module
    from tests.dask_demo import DemoEngine
    from tests.demo_engine import STUDY_DEMO

    monkeypatch.setattr(engine_module, "_REGISTRY", {**engine_module.engines(), "demo": STUDY_DEMO})
    with Client(scheduler, set_as_default=False) as client:
        client.register_plugin(DemoEngine())        # every worker has it, one started after a death too
    started, gate = tmp_path / "started", tmp_path / "go"
    started.mkdir()
    doc = {"name": "killed", "engine": "demo", "settings": {"started": str(started), "wait_for": str(gate)},
           "axes": [{"param": "settings.steps", "values": [3, 4, 5]}], "metrics": ["sum"]}
    runner = StudyRunner(study(doc, tmp_path), scheduler)
    out: dict[str, Any] = {}
    th = threading.Thread(target=lambda: out.setdefault("summary", runner.run()))
    th.start()
    try:
        deadline = time.monotonic() + 120           # against a hang only: the points wait for the gate
        while not any(started.iterdir()) and time.monotonic() < deadline:
            time.sleep(0.05)
        running = sorted(int(f.name) for f in started.iterdir())
        assert running, "no point started"
        os.kill(running[0], signal.SIGKILL)         # a worker whose point is waiting for the gate
    finally:
        gate.touch()
        th.join(120)
    summary = out["summary"]
    assert summary.counts["finished"] == 3, [r.get("error") for r in summary.records]
    assert sorted(r["attempts"] for r in summary.records) == [1, 1, 2]


@pytest.mark.slow
def test_resume_skips_finished_points(scheduler, tmp_path):
    s = study(CAIN, tmp_path)
    path = tmp_path / "study.results.jsonl"
    assert StudyRunner(s, scheduler).run().counts["finished"] == 4
    lines = path.read_text().splitlines()
    kept = [lines[0], lines[2], lines[4]]          # two points finished, then the process died mid-line
    path.write_text("\n".join(kept) + "\n" + lines[1][: len(lines[1]) // 2])
    done = {json.loads(x)["key"] for x in kept[1:]}
    ran: list[dict[str, Any]] = []
    summary = StudyRunner(s, scheduler, resume=True, on_record=ran.append, cache=False).run()
    assert summary.counts == {"total": 4, "finished": 4, "failed": 0, "not_run": 0, "resumed": 2, "cached": 0}
    assert {r["key"] for r in ran if r.get("resumed")} == done
    assert {r["key"] for r in ran if not r.get("resumed")} == {p.key for p in s.points} - done
    again = StudyRunner(s, scheduler, resume=True).run()
    assert again.counts["resumed"] == 4 and "start_s" not in again.timings      # nothing to run: no cluster
    points = [r for r in results_file.read(path) if r["type"] == "point"]
    assert len(points) == 4 and {r["key"] for r in points} == {p.key for p in s.points}


def _new_children(before: set[int]) -> list[psutil.Process]:
    """Child processes started since `before`, less multiprocessing's resource tracker (one per
    process that ever used multiprocessing, not a worker)."""
    out = []
    for c in psutil.Process().children(recursive=True):
        try:
            if c.pid not in before and c.status() != psutil.STATUS_ZOMBIE and \
                    "resource_tracker" not in " ".join(c.cmdline()):
                out.append(c)
        except psutil.NoSuchProcess:
            pass
    return out


@pytest.mark.slow
def test_cancel_leaves_no_worker_process(tmp_path):
    # no node budget and a long time: the points search until they are cancelled
    doc = {**CAIN, "settings": {**CAIN["settings"], "time_s": 600.0, "max_nodes": None}}
    before = {c.pid for c in psutil.Process().children(recursive=True)}
    runner = StudyRunner(study(doc, tmp_path), "local:2")
    out: dict[str, Any] = {}
    th = threading.Thread(target=lambda: out.setdefault("summary", runner.run()))
    th.start()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (runner.client and any(runner.client.processing().values())):
        time.sleep(0.1)
    assert len(_new_children(before)) >= 2          # the two workers are up and busy
    runner.cancel()
    th.join(60)
    assert not th.is_alive()
    summary = out["summary"]
    assert summary.cancelled and summary.counts["not_run"] == 4
    assert _new_children(before) == []
    assert [r for r in results_file.read(tmp_path / "study.results.jsonl") if r["type"] == "point"] == []


def test_cli_json_and_exit_codes(scheduler, tmp_path, capsys):
    from main import main

    f = tmp_path / "s.json"
    f.write_text(json.dumps({**CAIN, "axes": [{"param": "workload.seed", "values": [1, 2]}]}))
    assert main(["study", "run", str(f), "--cluster", scheduler, "--json", "--quiet"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) >= {"study", "engine", "cluster", "results_file", "counts", "points"}
    assert out["counts"] == {"total": 2, "finished": 2, "failed": 0, "not_run": 0, "resumed": 0, "cached": 0}
    assert [p["params"] for p in out["points"]] == [{"seed": 1}, {"seed": 2}]
    for p in out["points"]:
        assert set(p) == {"index", "key", "params", "repeat", "status", "metrics", "error", "duration_s",
                          "attempts", "worker", "resumed"}
        assert p["status"] == "finished" and isinstance(p["metrics"]["length"], int)
    assert main(["study", "run", str(f), "--cluster", scheduler, "--json", "--resume", "--quiet"]) == 0
    assert json.loads(capsys.readouterr().out)["counts"]["resumed"] == 2
    f.write_text(json.dumps({**CAIN, "axes": [{"param": "settings.time_s", "values": [1, "x"]}]}))
    assert main(["study", "run", str(f), "--json"]) == 2
    captured = capsys.readouterr()
    assert json.loads(captured.out)["where"] == "study.axes[0].values[1]"
    assert "error: study.axes[0].values[1]: " in captured.err
    f.write_text(json.dumps(CAIN))
    assert main(["study", "run", str(f), "--cluster", "local:zero"]) == 2
    assert "error: --cluster: " in capsys.readouterr().err


def test_a_metric_path_may_count_from_the_end_of_a_list():
    """cain_search.json minimises improvements[-1].nodes: the nodes explored when the program a run
    ends with was found (nodes_explored is the node budget)."""
    from dataclasses import dataclass, field

    from core.study.metrics import StudyMetric as Metric, extract, split_path

    @dataclass
    class Imp:
        nodes: int

    @dataclass
    class Res:
        improvements: list = field(default_factory=list)

        def headline(self):
            return {}

    assert split_path("improvements[-1].nodes") == ["improvements", -1, "nodes"]
    m = [Metric("nodes_to_best", "improvements[-1].nodes")]
    assert extract(Res([Imp(1), Imp(1792)]), m) == {"nodes_to_best": 1792}
    assert extract(Res([]), m) == {"nodes_to_best": None}
