"""The bound engine's cost record on the dataflow accelerator (issue 50): compute cycles of the PE
mapping checked against the trace simulator, one small layer's time and energy computed by hand,
every figure at or above its limit on ResNet-18 at the default target, the result's JSON (and a
version-8 result without costs) read back, and the command line's target flags."""

from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import random

import pytest

from core.bound.analysis import Machine, analyse_layer
from core.bound.cost import compute_cycles, cost_tiling, costing_of
from core.bound.engine import ENGINE
from core.bound.loopnest import Tiling, traffic_of
from core.bound.onchip import map_to_pes
from core.bound.result import BoundResult
from core.bound.shapes import ConvShape, parse_layer_spec
from core.errors import InputError
from core.jobs import CancelToken, FinalResult
from core.workload import CnnNetwork, DataflowTarget
from core.engine import JobRequest
from sims.loopnest_trace import simulate_onchip


def _cli(argv: list[str]) -> JobRequest:
    p = argparse.ArgumentParser()
    ENGINE.add_cli_arguments(p)
    return ENGINE.request_from_cli(p.parse_args(argv))


def _layer(spec: str, tiling: Tiling, pe: tuple[int, int], mem: int = 1 << 20):
    shape = parse_layer_spec(spec, None, "test")
    la = analyse_layer(shape, Machine(mem, 16, *pe), ())
    return dataclasses.replace(la, optimal=dataclasses.replace(la.optimal, tiling=tiling,
                                                               traffic=traffic_of(shape, tiling)))


def test_small_layer_by_hand():
    """B=1, Ci=2, 4x4, Co=4, 3x3 pad 1 on 2x2 PEs, the whole layer one block (n,m,c,p,q = 1,4,2,4,4).
    MACs = 4*4*4*9*2 = 1152. Fastest split of the 4x4 outputs over 2 PE rows: 1x2 or 2x1 (8 outputs a
    row either way; both send 4x6 = 24 input pixels a channel, the first found is kept): py=1, px=2;
    2 output channels a column. Cycles = 2*9 (channel x window) * 4 * 2 * 2 = 288: all 4 PEs busy."""
    t = DataflowTarget(memory_bytes=1 << 20, word_bits=16, pe_rows=2, pe_cols=2, clock_mhz=1.0,
                       bandwidth_gbps=0.001, dram_read_pj=100.0, dram_write_pj=200.0, gbuf_read_pj=10.0,
                       gbuf_write_pj=20.0, rf_read_pj=1.0, rf_write_pj=2.0, mac_pj=3.0)
    la = _layer("Ci=2,Hi=4,Wi=4,Co=4,kernel=3,pad=1", Tiling(1, 4, 2, 4, 4), (2, 2))
    tr = la.optimal.traffic
    assert (la.macs, tr.input_reads, tr.weight_reads, tr.output_writes, tr.output_reads) == (1152, 32, 72, 64, 0)
    assert la.bound.reference == 168                               # compulsory: 32 + 72 + 64
    c = costing_of([cost_tiling(la, Tiling(1, 4, 2, 4, 4), t)], t)
    term, cost = c.layers[0], c.record.layers[0]
    assert (term.cycles, term.split, term.utilisation) == (288, [1, 1, 2], 1.0)
    # time: 288 cycles at 1 MHz + 168 words x 2 B at 1e6 B/s = 288 us + 336 us; limit max(1152 / 4e6, 336 us)
    assert term.compute_s == pytest.approx(288e-6) and term.transfer_s == pytest.approx(336e-6)
    assert cost.time_s.value == pytest.approx(624e-6) and cost.time_s.limit == pytest.approx(336e-6)
    assert cost.offchip_bytes.value == 336 and cost.offchip_bytes.limit == 336
    # energy (pJ): DRAM (32+72) x 100 + 64 x 200 = 23200; buffer: reads 24 x 2 channels + 72 weights = 120 x 10,
    # fills 104 x 20 = 3280; registers: reads 2 x 1152 + 1152 (psums) = 3456 x 1, writes 48 + 72 (GRegs, one
    # group of 4 columns / rows) + 1152 = 1272 x 2 = 2544 -> 6000; MACs 1152 x 3 = 3456. Total 35936 pJ.
    assert (term.dram_j, term.gbuf_j, term.rf_j, term.mac_j) == pytest.approx((23200e-12, 3280e-12, 6000e-12,
                                                                               3456e-12))
    assert cost.energy_j.value == pytest.approx(35936e-12)
    # limit: 168 words at the cheaper DRAM access (100 pJ) + 1152 MACs x 3 pJ = 20256 pJ
    assert cost.energy_j.limit == pytest.approx(20256e-12)
    assert c.record.problems() == []


@pytest.mark.parametrize("seed", range(12))
def test_compute_cycles_match_the_trace_simulator(seed):
    rng = random.Random(seed)
    k = rng.choice([1, 3])
    shape = ConvShape(name="t", B=rng.randint(1, 2), Ci=rng.randint(1, 3), Hi=rng.randint(3, 7), Wi=rng.randint(3, 7),
                      Co=rng.randint(1, 6), Hk=k, Wk=k, stride=rng.choice([1, 2]), pad=k // 2, groups=1, dilation=1)
    t = Tiling(rng.randint(1, shape.B), rng.randint(1, shape.Co), rng.randint(1, shape.Ci), rng.randint(1, shape.Ho),
               rng.randint(1, shape.Wo))
    pe = (rng.randint(1, 5), rng.randint(1, 3))
    oc = map_to_pes(shape, t, *pe, fastest=True)
    sim = simulate_onchip(shape, t, *pe, (oc.split_b, oc.split_y, oc.split_x))
    assert sim.max_abs_error == 0
    assert compute_cycles(shape, t, oc) == sim.cycles
    assert (oc.gbuf_input_reads, oc.gbuf_weight_reads, oc.greg_reads) == \
        (sim.gbuf_input_reads, sim.gbuf_weight_reads, sim.greg_reads)
    assert shape.macs <= sim.cycles * pe[0] * pe[1]


def test_fastest_split_is_never_slower():
    shape = parse_layer_spec("Ci=64,Hi=56,Wi=56,Co=128,kernel=3,pad=1", None, "t")
    t = Tiling(1, 43, 64, 28, 1, "MNPQC", slide=True)
    fewest_reads, fastest = map_to_pes(shape, t, 16, 16), map_to_pes(shape, t, 16, 16, fastest=True)
    # the least-traffic split idles 15 of 16 PE rows; 14 rows give the 28 output rows 2 each, as 16 would
    assert (fewest_reads.split_y, fastest.split_y) == (1, 14)
    assert compute_cycles(shape, t, fastest) < compute_cycles(shape, t, fewest_reads)
    assert fastest.gbuf_input_reads >= fewest_reads.gbuf_input_reads


@pytest.fixture(scope="module")
def resnet18() -> BoundResult:
    req = JobRequest(CnnNetwork("resnet18"), DataflowTarget(), {"sweep": False, "fusion": False, "dataflows": []})
    events = list(ENGINE.run(req, CancelToken()))
    assert isinstance(events[-1], FinalResult)
    return events[-1].data


def test_resnet18_every_figure_at_or_above_its_limit(resnet18):
    c = resnet18.costing
    assert c is not None and c.record.problems() == []
    assert [l.name for l in c.record.layers] == [l.name for l in resnet18.layers]
    assert c.record.total.macs == resnet18.totals.macs
    for l in [*c.record.layers, c.record.total]:
        for f in (l.time_s, l.offchip_bytes, l.energy_j):
            assert f.how == "modelled" and f.value >= f.limit > 0
    words = resnet18.totals.optimal * 2                             # 16-bit words
    assert c.record.total.offchip_bytes.value == words


def test_costing_round_trips_and_an_unsound_one_is_refused(resnet18):
    d = json.loads(json.dumps(resnet18.to_json()))
    assert BoundResult.from_json(d) == resnet18
    bad = copy.deepcopy(d)
    bad["costing"]["record"]["layers"][3]["energy_j"]["value"] = 1e-12
    with pytest.raises(InputError) as info:
        BoundResult.from_json(bad)
    assert info.value.where == "result.costing.record.layers[3].energy_j.value"
    old = copy.deepcopy(d)
    old.pop("costing")
    back = BoundResult.from_json(old, version=8)                   # a version-8 result had no costs
    assert back.costing is None and back.layers == resnet18.layers


def test_text_output_has_the_cost_table(resnet18):
    text = ENGINE.format_text(resnet18)
    assert "least off-chip traffic on the dataflow accelerator: 16x16 PEs at 200 MHz" in text and "energy uJ" in text


def test_cli_target_flags(tmp_path):
    req = _cli(["--layer", "Ci=8,Hi=8,Wi=8,Co=8,kernel=3,pad=1", "--clock", "400", "--bandwidth", "25.6GB/s"])
    assert (req.target.clock_mhz, req.target.bandwidth_gbps, req.target.memory_bytes) == (400.0, 25.6, 65536)
    f = tmp_path / "t.json"
    f.write_text(json.dumps({"memory_bytes": 131072, "mac_pj": 0.5, "pe_rows": 8}))
    req = _cli(["--layer", "Ci=8,Hi=8,Wi=8,Co=8,kernel=3,pad=1", "--target-file", str(f), "--pe", "4x4"])
    assert (req.target.memory_bytes, req.target.mac_pj, req.target.pe_rows) == (131072, 0.5, 4)
    for argv, where in ((["--clock", "fast"], "--clock"), (["--bandwidth", "-1"], "--bandwidth"),
                        (["--target-file", str(tmp_path / "none.json")], "--target-file")):
        with pytest.raises(InputError) as info:
            _cli(["--layer", "Ci=8,Hi=8,Wi=8,Co=8,kernel=3,pad=1", *argv])
        assert where in f"{info.value.where} {info.value.message}"
    f.write_text(json.dumps({"kind": "dataflow", "rf_read_pj": -2}))
    with pytest.raises(InputError) as info:
        _cli(["--layer", "Ci=8,Hi=8,Wi=8,Co=8,kernel=3,pad=1", "--target-file", str(f)])
    assert info.value.where == "--target-file.rf_read_pj"


def test_a_layer_larger_than_the_dram_is_refused():
    req = JobRequest(CnnNetwork("vgg16"), DataflowTarget(dram_bytes=1 << 20), {"sweep": False, "fusion": False})
    with pytest.raises(InputError) as info:
        list(ENGINE.run(req, CancelToken()))
    assert info.value.where == "target.dram_bytes"


def test_an_onnx_network_is_costed(tmp_path):
    import numpy as np
    import onnx
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 8, 8])
    w1 = helper.make_tensor("w1", TensorProto.FLOAT, [6, 3, 3, 3], np.zeros(162, np.float32).tolist())
    w2 = helper.make_tensor("w2", TensorProto.FLOAT, [8, 6, 3, 3], np.zeros(432, np.float32).tolist())
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Conv", ["r1", "w2"], ["y"], pads=[1, 1, 1, 1], strides=[2, 2])]
    path = tmp_path / "two.onnx"
    onnx.save(helper.make_model(helper.make_graph(nodes, "g", [x], [y], [w1, w2]),
                                        opset_imports=[helper.make_opsetid("", 13)]), str(path))
    req = _cli(["--onnx", str(path), "--no-sweep", "--objective", "edp", "--memory", "4KiB"])
    events = list(ENGINE.run(req, CancelToken()))
    r = events[-1].data
    assert isinstance(r, BoundResult) and r.costing is not None and r.costing.objective == "edp"
    rec = r.costing.record
    assert len(rec.layers) == 2 and rec.problems() == []
    assert rec.total.macs == 16 * 16 * 6 * 27 + 8 * 8 * 8 * 54


def test_the_cost_record_is_kept_in_the_session(tmp_path):
    from core import session as sessions
    from core.lifecycle import record_run
    from core.project import Project
    from core.workload import ConvLayers

    p = Project.starter()
    wid = p.add("workloads", "one layer", ConvLayers(["Ci=16,Hi=14,Wi=14,Co=32,kernel=3,pad=1"]))
    tid = p.add("targets", "fast accelerator", DataflowTarget(clock_mhz=400.0, mac_pj=0.5))
    p.choose("bound", "workloads", wid)
    p.choose("bound", "targets", tid)
    p.set_setting("bound", "objective", "energy")
    run = p.start_run("bound")
    p.finish_run(run.id, record_run(ENGINE, p.request("bound")))
    path = tmp_path / "s.dfx"
    sessions.save(p, path)
    back = sessions.load(path).runs[-1]
    c = back.result.costing
    assert back.status == "finished" and c.objective == "energy" and c.clock_mhz == 400.0
    assert c.energy_pj["mac"] == 0.5 and c.record.problems() == []
    assert c == p.runs[-1].result.costing
    assert back.target.value.clock_mhz == 400.0        # the run's target snapshot holds the hardware


def test_a_register_file_too_small_for_every_dataflow_is_refused():
    """Every dataflow of the space keeps at least 2 partial sums (32 output channels over 16 columns) in a
    PE; a 2 B register file holds one 16-bit word (tests/test_bound_register_file.py: the search)."""
    from core.workload import ConvLayers

    req = JobRequest(ConvLayers(["Ci=16,Hi=14,Wi=14,Co=32,kernel=3,pad=1"]), DataflowTarget(rf_bytes=2),
                     {"sweep": False, "fusion": False, "dataflows": []})
    with pytest.raises(InputError) as info:
        list(ENGINE.run(req, CancelToken()))
    assert info.value.where == "target.rf_bytes"
    assert "at least 2 partial sums in each PE (4 B of 16-bit words)" in str(info.value)
    assert "register file holds 2 B" in str(info.value)
