"""Studies over targets (issue 51, item 5): a study sweeps a target's fields, typed with their units,
for one network; each point is the network costed on the target those values make (engine "cost",
through the cost record of the engine that costs the kind); energy and latency are its objectives,
read from the declared metrics, and the Pareto front is drawn as points arrive."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from core.errors import InputError
from core.study import spec as study_spec
from core.study.point import run_point
from core.study.search import front

ROOT = Path(__file__).resolve().parents[1]

# 2 x 2: the global buffer (typed with its unit) x the off-chip bandwidth, LeNet-5 on the dataflow accelerator
SWEEP = {
    "name": "lenet5 buffer x bandwidth", "engine": "cost",
    "workload": {"kind": "cnn", "network": "lenet5"}, "target": {"kind": "dataflow"},
    "axes": [{"param": "target.memory_bytes", "label": "buffer", "values": ["1 KiB", "8 KiB"]},
             {"param": "target.bandwidth_gbps", "label": "bandwidth", "values": ["3.2 GB/s", "25.6 GB/s"]}],
    "metrics": ["energy_j", "latency_s", "offchip_bytes"],
    "objectives": ["energy_j", "latency_s"],
}


def _records(study):
    """Each point run in this process as a study's worker runs it (core.study.point.run_point)."""
    return [{"index": p.index, "key": p.key, "params": p.params,
             **run_point(study.engine, p.request_json(), study.metrics)} for p in study.points]


@pytest.fixture(scope="module")
def sweep_records():
    """The 2 x 2 sweep's points, each run once in this process (shared by the tests that read them)."""
    return _records(study_spec.from_json(SWEEP))


def _fill_cache(cache, study, recs) -> None:
    """The cache of finished points holds the sweep's points, as a run of the study would leave it."""
    from core.engine import get_engine
    from core.study.cache import content_key

    for p, r in zip(study.points, recs):
        cache.put(content_key(get_engine("cost"), p.request_json(), p.repeat), r)


def test_a_target_sweep_reads_units_and_moves_the_right_way(sweep_records):
    study = study_spec.from_json(json.loads(json.dumps(SWEEP)))
    # the units are read into the fields' own: bytes and GB/s
    assert [p.params for p in study.points] == [
        {"buffer": 1024, "bandwidth": 3.2}, {"buffer": 1024, "bandwidth": 25.6},
        {"buffer": 8192, "bandwidth": 3.2}, {"buffer": 8192, "bandwidth": 25.6}]
    assert study.points[3].target["memory_bytes"] == 8192 and study.points[3].target["bandwidth_gbps"] == 25.6
    # the objectives go the declared metrics' better way (core.metrics): both lower
    assert [(o.metric, o.direction) for o in study.objectives] == [("energy_j", "minimize"), ("latency_s", "minimize")]
    recs = sweep_records
    assert [r["key"] for r in recs] == [p.key for p in study.points]
    assert all(r["status"] == "finished" for r in recs)
    m = {(r["params"]["buffer"], r["params"]["bandwidth"]): r["metrics"] for r in recs}
    for bw in (3.2, 25.6):      # a larger buffer: less off-chip traffic, so less energy
        assert m[8192, bw]["offchip_bytes"] < m[1024, bw]["offchip_bytes"]
        assert m[8192, bw]["energy_j"] < m[1024, bw]["energy_j"]
    for buf in (1024, 8192):    # more bandwidth: the same traffic and energy, in less time
        assert m[buf, 25.6]["latency_s"] < m[buf, 3.2]["latency_s"]
        assert m[buf, 25.6]["energy_j"] == pytest.approx(m[buf, 3.2]["energy_j"])
    # the metrics are the cost record's totals, as its result declares them
    r = recs[3]
    assert r["metrics"]["latency_s"] == r["result"]["record"]["total"]["time_s"]["value"]
    assert r["metrics"]["energy_j"] == r["result"]["record"]["total"]["energy_j"]["value"]
    # the front: no point on it is beaten in both objectives by any point; every point off it is
    best = front(study.front_spec, recs)
    assert [b["params"] for b in best] == [{"buffer": 8192, "bandwidth": 25.6}]

    def beats(a, b):
        ea, la, eb, lb = a["energy_j"], a["latency_s"], b["energy_j"], b["latency_s"]
        return ea <= eb and la <= lb and (ea < eb or la < lb)
    on = {b["key"] for b in best}
    for r in recs:
        beaten = any(beats(o["metrics"], r["metrics"]) for o in recs)
        assert beaten == (r["key"] not in on)


def test_the_pe_array_trades_energy_for_latency():
    """A larger PE array: less latency, more energy (more array traffic): a front of more than one point."""
    doc = {**SWEEP, "axes": [{"zip": [{"param": "target.pe_rows", "values": [8, 32]},
                                      {"param": "target.pe_cols", "values": [8, 32]}]}]}
    study = study_spec.from_json(doc)
    recs = _records(study)
    small, big = (r["metrics"] for r in recs)
    assert big["latency_s"] < small["latency_s"] and big["energy_j"] > small["energy_j"]
    assert len(front(study.front_spec, recs)) == 2


def test_a_target_that_runs_part_of_the_network_says_how_much():
    """On the FPGA board f-CNNx maps the feature extractor only: the totals are of the layers it runs,
    and the declared metric macs_run says which share of the network's MACs that is."""
    doc = {**SWEEP, "target": {"kind": "fpga"}, "metrics": ["latency_s", "macs_run"], "objectives": ["latency_s"],
           "axes": [{"param": "target.bandwidth_gbps", "values": ["1 GB/s", "4 GB/s"]}]}
    study = study_spec.from_json(doc)
    recs = _records(study)
    assert all(r["status"] == "finished" for r in recs)
    convs = 288_000 + 1_600_000                 # LeNet-5's two convolutions; ip1 and ip2 are not run
    assert all(r["metrics"]["macs_run"] == pytest.approx(convs / 2_293_000) for r in recs)
    assert recs[1]["metrics"]["latency_s"] <= recs[0]["metrics"]["latency_s"]


@pytest.mark.parametrize("axis, where, words", [
    ({"param": "target.memory_byte", "values": [1024]}, "study.axes[0].param",
     "no field 'memory_byte'; did you mean 'memory_bytes'?"),
    ({"param": "target.memory_bytes", "values": ["1 KiB", "0 KiB"]}, "study.axes[0].values[1]",
     "On-chip memory (memory_bytes) cannot be 0 KiB: must be at least 1 B"),
    ({"param": "target.memory_bytes", "values": ["3 GiB"]}, "study.axes[0].values[0]", "must be at most"),
    ({"param": "target.memory_bytes", "values": [0]}, "study.axes[0].values[0]", "target.memory_bytes: must be 1.."),
    ({"param": "target.bandwidth_gbps", "values": ["12 GHz"]}, "study.axes[0].values[0]",
     "'GHz' is not a unit of"),
    ({"param": "target.bandwidth_gbps", "range": {"from": "-1 GB/s", "to": "4 GB/s", "times": 2}},
     "study.axes[0].range.from", "Off-chip bandwidth (bandwidth_gbps) cannot be -1 GB/s"),
    ({"param": "target.memory_bytes", "range": {"from": "1 KiB", "to": "4 KiB", "times": 1}},
     "study.axes[0].range.times", "must be above 1"),
])
def test_a_bad_target_parameter_is_refused_naming_it(axis, where, words):
    with pytest.raises(InputError) as e:
        study_spec.from_json({**SWEEP, "axes": [axis]})
    assert e.value.where == where and words in e.value.message, (e.value.where, e.value.message)


def test_the_base_target_takes_units_too():
    study = study_spec.from_json({**SWEEP, "target": {"kind": "dataflow", "memory_bytes": "4 KiB", "clock_mhz": "1 GHz"},
                                  "axes": []})
    assert study.points[0].target["memory_bytes"] == 4096 and study.points[0].target["clock_mhz"] == 1000.0
    with pytest.raises(InputError) as e:
        study_spec.from_json({**SWEEP, "target": {"kind": "dataflow", "clock_mhz": "0 GHz"}, "axes": []})
    assert e.value.where == "study.target.clock_mhz" and "Clock (clock_mhz) cannot be 0 GHz" in e.value.message


def test_a_range_by_times_with_units():
    doc = {**SWEEP, "axes": [{"param": "target.memory_bytes", "range": {"from": "1 KiB", "to": "1 MiB", "times": 4}}]}
    assert [p.params["memory_bytes"] for p in study_spec.from_json(doc).points] == [1024, 4096, 16384, 65536, 262144,
                                                                                    1048576]


def test_objectives_are_metrics_of_the_study():
    with pytest.raises(InputError) as e:
        study_spec.from_json({**SWEEP, "objectives": ["energy", "latency_s"]})
    assert e.value.where == "study.objectives[0].metric" and "did you mean 'energy_j'?" in e.value.message
    with pytest.raises(InputError) as e:
        study_spec.from_json({**SWEEP, "search": {"budget": 2, "objectives": ["energy_j"]}})
    assert e.value.where == "study.objectives"


@pytest.mark.slow
def test_the_command_line_refuses_a_bad_field_with_exit_2(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**SWEEP, "axes": [{"param": "target.bandwith_gbps", "values": [1.0]}]}))
    p = subprocess.run([sys.executable, "main.py", "study", "validate", str(bad)], cwd=ROOT, capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 2
    assert p.stderr.strip().splitlines() == ["error: study.axes[0].param: Dataflow accelerator has no field "
                                             "'bandwith_gbps'; did you mean 'bandwidth_gbps'?"]


def test_the_example_studies_are_valid():
    study = study_spec.load(ROOT / "assets" / "studies" / "dataflow_targets.json")
    assert study.engine == "cost" and len(study.points) == 27
    assert [o.metric for o in study.objectives] == ["energy_j", "latency_s"]
    assert study.param_text("global buffer", 4096) == "4 KiB" and study.param_text("PE rows", 8) is None
    soc = study_spec.load(ROOT / "assets" / "studies" / "mobile_soc_targets.json")
    assert [p.target["clock_mhz"] for p in soc.points[:3]] == [800.0, 1600.0, 2400.0]
    # the peak MAC rate has no better way of its own: the file says which way it goes
    assert [(o.metric, o.direction) for o in soc.objectives] == [("peak_macs_per_s", "minimize"),
                                                                 ("latency_s", "minimize")]


def test_the_studies_dock_draws_the_front_as_points_arrive(qtbot, tmp_path, monkeypatch, sweep_records):
    """The study is typed into the dock's editor; its points come through the window's run
    controller (from the cache of finished points here, filled in this process, so no cluster
    starts) and each becomes a run of the cost engine; the Pareto tab opens on energy x latency,
    both lower-is-better, and its front is the non-dominated point."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QMessageBox
    from PySide6.QtTest import QTest

    from core.study.cache import PointCache
    from gui.main_window import MainWindow

    monkeypatch.setenv("DATAFLOW_EXPLORER_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Discard)
    _fill_cache(PointCache(), study_spec.from_json(SWEEP), sweep_records)

    w = MainWindow(restore_layout=False)
    qtbot.addWidget(w)
    w.show()
    panel = w.study_panel
    monkeypatch.setattr(panel, "results_path", lambda _study: tmp_path / "typed.results.jsonl")
    try:
        panel.editor.clear()
        panel.editor.setFocus()
        QTest.keyClicks(panel.editor, json.dumps(SWEEP))
        panel.check()
        assert panel.study is not None, panel.message.text()
        assert panel.pareto_x.currentData() == "energy_j" and panel.min_x.isChecked()
        assert panel.pareto_x.currentText() == "Energy (J)"
        assert panel.pareto_y.currentData() == "latency_s" and panel.min_y.isChecked()
        assert panel.tabs.currentWidget() is panel.pareto.parentWidget()
        before = len(w.project.runs)
        QTest.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: not panel.is_running(), timeout=30_000)
        assert panel.summary is not None and panel.summary.counts["finished"] == 4
        runs = w.project.runs[before:]
        assert len(runs) == 4 and all(r.engine == "cost" and r.status == "finished" for r in runs)
        assert panel.front_indices() == [3]
        # the axes' values with their fields' units, as typed
        assert [panel.table.item(i, 1).text() for i in range(4)] == ["1 KiB", "1 KiB", "8 KiB", "8 KiB"]
        assert panel.table.item(1, 2).text() == "25.6 GB/s"
        assert (tmp_path / "typed.results.jsonl").exists()
        items = panel.pareto.getPlotItem().listDataItems()
        assert len(items) == 2 and len(items[0].getData()[0]) == 4 and len(items[1].getData()[0]) == 1
    finally:
        panel.shutdown()
        w.shutdown_jobs()


def test_the_target_cost_tab_lists_each_layer_against_its_limit(qtbot):
    """A point's run opens in the Target cost tab: one row per layer and the total, each figure
    beside its limit; its settings are typed fields of the tab."""
    from core.engine import get_engine
    from core.study.runner import outcome_of_record
    from gui.main_window import MainWindow

    study = study_spec.from_json(SWEEP)
    out = run_point("cost", study.points[0].request_json(), study.metrics)
    result = outcome_of_record({**out, "status": "finished"}, get_engine("cost")).result
    w = MainWindow(restore_layout=False)
    qtbot.addWidget(w)
    panel = w.panels["cost"]
    panel.show_result(result)
    layers = result.record.layers
    assert panel.layers.rowCount() == len(layers) + 1
    assert [panel.layers.item(i, 0).text() for i in range(len(layers) + 1)] == [l.name for l in layers] + ["total"]
    assert "s (" in panel.layers.item(len(layers), 2).text()         # the total time, then (its limit, % of it)
    assert set(panel.binding.widgets) == {"measure", "fcnnx_max_joint", "scamp5_max_nodes", "scamp5_time_s"}
    w.shutdown_jobs()


@pytest.mark.slow
def test_a_target_sweep_runs_on_a_dask_cluster(tmp_path):
    """The same sweep on a local Dask cluster of two worker processes (as `--cluster local:2`): every
    point finishes with the metrics a point run here gives, and no worker process is left."""
    import psutil

    from core.study.runner import StudyRunner

    study = study_spec.from_json(SWEEP)
    before = {c.pid for c in psutil.Process().children(recursive=True)}
    summary = StudyRunner(study, "local:2", tmp_path / "t.results.jsonl", cache=False).run()
    assert summary.error is None and summary.counts["finished"] == 4
    here = {r["key"]: r["metrics"] for r in _records(study)}
    for r in summary.records:
        assert r["metrics"] == pytest.approx(here[r["key"]])
    assert [b["index"] for b in front(study.front_spec, summary.records)] == [3]
    left = [c for c in psutil.Process().children(recursive=True) if c.pid not in before and c.is_running()
            and c.status() != psutil.STATUS_ZOMBIE and "resource_tracker" not in " ".join(c.cmdline())]
    assert left == []


@pytest.mark.slow
def test_the_command_line_prints_the_sweeps_front(tmp_path, sweep_records):
    """`study run --json` gives the sweep's front over its objectives (the points come from the cache
    of finished points, filled here, so no cluster starts)."""
    import os

    from core.study.cache import PointCache

    _fill_cache(PointCache(tmp_path / "cache" / "points"), study_spec.from_json(SWEEP), sweep_records)
    f = tmp_path / "sweep.json"
    f.write_text(json.dumps(SWEEP))
    p = subprocess.run([sys.executable, "main.py", "study", "run", str(f), "--json", "--quiet"], cwd=ROOT,
                       capture_output=True, text=True, timeout=120,
                       env={**os.environ, "DATAFLOW_EXPLORER_CACHE": str(tmp_path / "cache")})
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["counts"]["cached"] == 4
    assert doc["front"]["objectives"] == [{"metric": "energy_j", "direction": "minimize"},
                                          {"metric": "latency_s", "direction": "minimize"}]
    assert [q["index"] for q in doc["front"]["points"]] == [3]
