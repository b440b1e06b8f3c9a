"""The MCNN-HS table of a whole schedule cycle (core.fcnnx.hwtable): memory map, JSON and C header,
and its replay in the discrete-event simulation (sims.fcnnx_des.replay_table)."""

from __future__ import annotations

import copy
import json
import math
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from core.errors import InputError
from core.fcnnx.dse import partitions
from core.fcnnx.hwsched import rounds_needed
from core.fcnnx.hwtable import TABLE_FILES, build_table, c_header, write_table
from core.fcnnx.model import (ON_CHIP, STREAMED, EngineDesign, LayerTask, Subgraph, SubgraphLoad, build_subgraphs,
                              feature_blocks, subgraph_loads)
from core.fcnnx.result import FcnnxResult
from core.fcnnx.schedule import CAPACITY, Objective, Problem, Schedule, build_problem, pattern_search, rcls
from core.nets import zoo
from fcnnx_problems import random_problem
from sims.fcnnx_des import planning_efficiency, replay_matches, replay_table

REPO = Path(__file__).resolve().parents[1]
RAW = 1e9                                   # port bandwidth of the synthetic cases
EFF = RAW * planning_efficiency()


def _design(name: str, words: list[tuple[int, int]]) -> EngineDesign:
    """An engine whose subgraphs move (input words, output words) each and keep no weights."""
    subs = []
    for j, (i, o) in enumerate(words):
        task = LayerTask("conv", f"{name}.s{j}", 1, 1, 1, 1, 1, 1, 1, 1, 1, 0)
        subs.append(Subgraph(f"s{j}", [(task, [])], i, o))
    d = EngineDesign(name, [[j] for j in range(len(words))], None, subs)
    d.init_stages()
    return d


def _schedule(p: Problem) -> tuple[Schedule, float]:
    obj = Objective("throughput", tuple(1.0 for _ in p.reps), tuple(1_000_000_000 for _ in p.reps))
    res = pattern_search(p, obj, budget=60)
    return res.schedule, res.period_s


def _fps(p: Problem, period_s: float) -> list[float]:
    return [f / period_s for f in p.frames]


def _json_round_trip(doc: dict) -> dict:
    return json.loads(json.dumps(doc))


def _regions_sound(doc: dict) -> None:
    """Regions on burst boundaries, disjoint; every transfer inside its region."""
    regions = doc["memory"]["regions"]
    align = doc["memory"]["alignment"]
    assert align == doc["burst_bytes"] == doc["burst_beats"] * doc["port_bytes"]
    ends = 0
    for g in sorted(regions, key=lambda g: g["address"]):
        assert g["address"] % align == 0 and g["address"] >= ends
        ends = g["address"] + g["bytes"]
    assert doc["memory"]["bytes"] == ends
    for e in doc["engines"]:
        for rep in e["repetitions"]:
            for sg in rep["subgraphs"]:
                assert sg["bytes"] == sum(t["bytes"] for t in sg["transfers"])
                for t in sg["transfers"]:
                    g = regions[t["region"]]
                    assert g["address"] <= t["address"] and t["address"] + t["bytes"] <= g["address"] + g["bytes"]
                    assert t["bursts"] == math.ceil(t["bytes"] / align)


def example_case():
    """Section III-D's example: three CNNs of one subgraph each, 16384, 16384 and 32768 elements,
    at 1/16, 2/16 and 4/16 of the bandwidth (1, 2 and 4 slots of 16)."""
    elements = [16384, 16384, 32768]
    fractions = [1 / 16, 2 / 16, 4 / 16]
    designs = [_design(f"cnn{i + 1}", [(e // 2, e // 2)]) for i, e in enumerate(elements)]
    loads = [[SubgraphLoad("s0", 2 * e / (f * EFF), 2 * e)] for e, f in zip(elements, fractions)]
    p = build_problem(loads, [1, 1, 1], EFF)
    s = rcls(p, [p.levels] * len(p.tasks))
    assert s is not None
    return p, s, s.makespan * p.tick_s, designs, loads


def test_worked_example_slots_rounds_and_replay(tmp_path):
    p, s, period, designs, loads = example_case()
    table = build_table(p, s, period, designs, loads, ["cnn1", "cnn2", "cnn3"], RAW)
    doc = table.to_json()
    runs = [e["repetitions"][0]["subgraphs"][0] for e in doc["engines"]]
    assert [r["slots"] for r in runs] == [1, 2, 4]
    assert [r["rounds"] for r in runs] == [4, 2, 2]               # the paper's 4, 2 and 2 rounds
    assert [r["rounds"] for r in runs] == [rounds_needed(e, k) for e, k in zip([16384, 16384, 32768], [1, 2, 4])]
    _regions_sound(doc)
    paths = write_table(doc, tmp_path)
    assert [x.name for x in paths] == list(TABLE_FILES)
    rep = replay_table(json.loads(paths[0].read_text()))          # read back from the file
    assert rep.error is None and replay_matches(_fps(p, period), rep)


def test_table_round_trips_through_its_files(tmp_path):
    p, s, period, designs, loads = example_case()
    doc = build_table(p, s, period, designs, loads, ["cnn1", "cnn2", "cnn3"], RAW).to_json()
    js, h = write_table(doc, tmp_path / "new" / "dir")
    back = json.loads(js.read_text())
    assert back == _json_round_trip(doc)
    assert h.read_text() == c_header(back)                        # the header is a function of the JSON


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_replay_matches_the_schedule_on_generated_problems(seed):
    rng = random.Random(seed)
    shape = random_problem(rng, (2, 3), (2, 5), (20, 200), (100, 900))
    tick = 2e-5
    loads = [[SubgraphLoad(f"s{j}", shape.tasks[i].d0 * tick, 2 * math.ceil(shape.tasks[i].q0 / CAPACITY * EFF *
                                                                          shape.tasks[i].d0 * tick / 2))
              for j, i in enumerate(ch)] for ch in shape.chains]
    reps = [rng.randint(1, 3) for _ in loads]
    p = build_problem(loads, reps, EFF)
    s, period = _schedule(p)
    # subgraphs whose shapes do not chain (input words != the previous output) get input buffers of their own
    designs = [_design(f"e{c}", [(l.traffic_bytes // 4, l.traffic_bytes // 2 - l.traffic_bytes // 4) for l in ls])
               for c, ls in enumerate(loads)]
    doc = _json_round_trip(build_table(p, s, period, designs, loads, [f"e{c}" for c in range(len(loads))], RAW).to_json())
    _regions_sound(doc)
    assert [len(e["repetitions"]) for e in doc["engines"]] == reps
    rep = replay_table(doc)
    assert rep.error is None
    assert replay_matches(_fps(p, period), rep), (rep.fps, _fps(p, period))


def _vgg_case(weights: str):
    """VGG16's feature extractor on one engine with input folding (64 Ki weight words per tile), two
    inferences per cycle, weights on chip or streamed."""
    blocks = feature_blocks(zoo.get("vgg16"))
    cap = 1 << 16
    groups = next(g for g in partitions(blocks, cap) if len(g) == len(blocks))
    d = EngineDesign("vgg16", groups, cap, build_subgraphs(blocks, groups, cap))
    d.init_stages()
    for st in d.stages:
        st.n_pe, st.n_op = 8, 9
        if st.kind == "conv":
            st.weights = weights
    loads = subgraph_loads(d, 150e6, EFF)
    p = build_problem([loads], [2], EFF)
    s = rcls(p, [p.max_level(i) for i in range(len(p.tasks))])
    assert s is not None
    return p, s, d, loads


@pytest.mark.parametrize("weights", [ON_CHIP, STREAMED])
def test_memory_map_follows_the_tensors_of_a_folded_cnn(weights):
    p, s, d, loads = _vgg_case(weights)
    assert any(sg.psum_words for sg in d.subgraphs)               # the case has input tiles
    doc = build_table(p, s, s.makespan * p.tick_s, [d], [loads], ["vgg16"], RAW).to_json()
    _regions_sound(doc)
    regions = doc["memory"]["regions"]
    kinds = {g["kind"] for g in regions}
    assert kinds == {"input", "weights", "fmap", "psum", "output"}
    assert sum(g["kind"] == "input" for g in regions) == 2 == sum(g["kind"] == "output" for g in regions)
    assert all(g["streamed"] == (weights == STREAMED) for g in regions if g["kind"] == "weights")
    runs0, runs1 = (rep["subgraphs"] for rep in doc["engines"][0]["repetitions"])
    # the input tiles of a folded convolution read consecutive channel slices that cover the map
    for a, b in zip(runs0, runs0[1:]):
        ra, rb = a["transfers"][0], b["transfers"][0]
        sub_b = d.subgraphs[b["subgraph"]]
        if sub_b.psum_words:
            assert rb["region"] == ra["region"] and rb["address"] == ra["address"] + ra["bytes"]
            assert regions[b["transfers"][1]["region"]]["kind"] == "psum"
        else:                       # a new map: what the previous subgraph wrote
            assert rb["region"] == a["transfers"][-1]["region"] and a["transfers"][-1]["write"]
    # only the first and last runs touch a repetition's own buffers
    assert runs0[0]["transfers"][0]["region"] != runs1[0]["transfers"][0]["region"]
    assert runs0[-1]["transfers"][-1]["region"] != runs1[-1]["transfers"][-1]["region"]
    assert [x["transfers"] for x in runs0[1:-1]] == [x["transfers"] for x in runs1[1:-1]]
    rep = replay_table(_json_round_trip(doc))
    assert replay_matches(_fps(p, s.makespan * p.tick_s), rep)


def test_a_corrupted_table_does_not_match():
    rng = random.Random(7)
    shape = random_problem(rng, (3, 3), (3, 4), (50, 200), (300, 700))
    tick = 2e-5
    loads = [[SubgraphLoad(f"s{j}", shape.tasks[i].d0 * tick, 2 * math.ceil(shape.tasks[i].q0 / CAPACITY * EFF *
                                                                          shape.tasks[i].d0 * tick / 2))
              for j, i in enumerate(ch)] for ch in shape.chains]
    p = build_problem(loads, [1, 2, 1], EFF)
    s, period = _schedule(p)
    designs = [_design(f"e{c}", [(l.traffic_bytes // 4, l.traffic_bytes // 2 - l.traffic_bytes // 4) for l in ls])
               for c, ls in enumerate(loads)]
    doc = _json_round_trip(build_table(p, s, period, designs, loads, ["a", "b", "c"], RAW).to_json())
    fps = _fps(p, period)
    assert replay_matches(fps, replay_table(doc))
    # a slot removed: the run with the fewest slots has none left, so the control unit never serves it
    bad = copy.deepcopy(doc)
    runs = [sg for e in bad["engines"] for rep in e["repetitions"] for sg in rep["subgraphs"]]
    min(runs, key=lambda sg: sg["slots"])["slots"] -= min(sg["slots"] for sg in runs)
    rep = replay_table(bad)
    assert not replay_matches(fps, rep) and rep.error and "never served" in rep.error
    # a row removed: an inference that misses a subgraph
    bad = copy.deepcopy(doc)
    del bad["engines"][1]["repetitions"][1]["subgraphs"][1]
    rep = replay_table(bad)
    assert not replay_matches(fps, rep) and "expected 0.." in (rep.error or "")
    # a period the engines cannot keep: measured, not assumed
    bad = copy.deepcopy(doc)
    bad["period_beats"] = bad["period_beats"] // 2
    rep = replay_table(bad)
    assert rep.error is None and not replay_matches(fps, rep)


C_CHECK = r"""
#include <stdio.h>
#include "mcnn_hs_table.h"
int main(void) {
    unsigned long long entry_bytes = 0, transfer_bytes = 0, bursts = 0;
    for (uint32_t i = 0; i < MCNN_HS_N_ENTRIES; i++) {
        const mcnn_hs_entry_t *e = &mcnn_hs_entries[i];
        entry_bytes += e->bytes;
        for (uint32_t k = 0; k < e->n_transfers; k++) {
            const mcnn_hs_transfer_t *t = &mcnn_hs_transfers[e->first_transfer + k];
            transfer_bytes += t->bytes;
            bursts += t->bursts;
            if (t->address < mcnn_hs_regions[t->region].address) return 1;
        }
    }
    printf("%llu %llu %llu %u %llu %s %u\n", entry_bytes, transfer_bytes, bursts, mcnn_hs_engine_entries[0],
           (unsigned long long)MCNN_HS_PERIOD_BEATS, mcnn_hs_region_names[0], mcnn_hs_engine_first_entry[0]);
    return 0;
}
"""


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_the_header_compiles_and_holds_the_table(tmp_path):
    p, s, d, loads = _vgg_case(STREAMED)
    doc = build_table(p, s, s.makespan * p.tick_s, [d], [loads], ["vgg16"], RAW).to_json()
    write_table(doc, tmp_path)
    (tmp_path / "check.c").write_text(C_CHECK)
    flags = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"]
    subprocess.run(["gcc", *flags, "-c", str(tmp_path / TABLE_FILES[1]), "-o", str(tmp_path / "h.o")],
                   check=True, cwd=tmp_path)
    subprocess.run(["gcc", *flags, "check.c", "-o", "check"], check=True, cwd=tmp_path)
    out = subprocess.run([str(tmp_path / "check")], check=True, capture_output=True, text=True).stdout.split()
    runs = [sg for e in doc["engines"] for rep in e["repetitions"] for sg in rep["subgraphs"]]
    total = sum(sg["bytes"] for sg in runs)
    assert out == [str(total), str(total), str(sum(t["bursts"] for sg in runs for t in sg["transfers"])),
                   str(len(runs)), str(doc["period_beats"]), doc["memory"]["regions"][0]["name"], "0"]
    # names from ONNX files may hold anything: quotes, backslashes, comment ends, trigraphs, newlines
    p, s, period, designs, loads = example_case()
    odd = ['net "1"\\', "a*/b??/", "c\nd é"]
    write_table(build_table(p, s, period, designs, loads, odd, RAW).to_json(), tmp_path / "odd")
    subprocess.run(["gcc", *flags, "-c", TABLE_FILES[1], "-o", "h.o"], check=True, cwd=tmp_path / "odd")


def test_a_version_2_result_loads_and_upgrades():
    """A kept example session (the shipped one before results v3) holds a version-2 f-CNNx run: it
    reads unchanged as version 3, with
    its old one-row-per-subgraph table and no hardware table (the panel asks for a re-run); a new
    result has the hardware table and not the old table."""
    session = json.loads((REPO / "tests/data/sessions_v2/example_session_before_results_v3.dfx").read_text())
    run = next(r for r in session["runs"] if r["engine"] == "fcnnx")
    assert run["result_version"] == 2 and "configuration_table" in run["result"]["schedule"]
    upgraded = FcnnxResult.check(run["result"], version=2)
    assert upgraded == run["result"] and "hardware_table" not in upgraded
    assert FcnnxResult.from_json(run["result"], version=2).hardware_table is None
    assert FcnnxResult.check(upgraded) == upgraded
    with pytest.raises(InputError, match="newer"):
        FcnnxResult.check(upgraded, version=FcnnxResult.VERSION + 1)


@pytest.mark.slow
def test_command_line_exports_the_table_and_the_result_carries_its_replay(tmp_path):
    import sys

    out = tmp_path / "hs"
    proc = subprocess.run([sys.executable, "main.py", "fcnnx", "--cnns", "lenet5,cifar10_quick", "--bandwidth",
                           "0.5GB/s", "--objective", "throughput", "--no-simulate", "--export-table", str(out), "--json"],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    r = json.loads(proc.stdout)
    hw = r["hardware_table"]
    assert hw["replay_matches"] is True and "replay_error" not in hw
    assert hw["schedule_fps"] == pytest.approx([f / r["schedule"]["period_s"] for f in r["schedule"]["frames_per_cycle"]])
    assert hw["replay_fps"] == pytest.approx(hw["schedule_fps"], rel=1e-4)
    assert hw["exported"] == [str(out / name) for name in TABLE_FILES]
    doc = json.loads((out / TABLE_FILES[0]).read_text())
    assert doc == hw["table"] and hw["entries"] == len(r["schedule"]["subgraphs"])
    # every run of the schedule is in the table, with its own slots (one repetition may differ from the next)
    rows = {(s["cnn"], s["inference"] - 1, s["subgraph"]): s for s in r["schedule"]["subgraphs"]}
    for e in doc["engines"]:
        for rep in e["repetitions"]:
            for sg in rep["subgraphs"]:
                assert rows[(e["cnn"], rep["repetition"], sg["name"])]["slots"] == sg["slots"]
    assert replay_matches(hw["schedule_fps"], replay_table(doc))
    # a folder that cannot be made is bad input naming the option
    (tmp_path / "file").write_text("x")
    proc = subprocess.run([sys.executable, "main.py", "fcnnx", "--cnns", "lenet5", "--bandwidth", "0.5GB/s",
                           "--no-simulate", "--export-table", str(tmp_path / "file" / "sub")],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and "export_table" in proc.stderr and "Traceback" not in proc.stderr
