"""f-CNNx's cost records (core.fcnnx.cost, issue 50): one per CNN, its design alone on the board,
subgraph by subgraph against the board's limits; sound, read back, and refused when tampered with."""

from __future__ import annotations

import copy
import json

import pytest

from core.boards import BOARDS
from core.engine import JobRequest
from core.errors import InputError
from core.fcnnx.engine import ENGINE, default_settings
from core.fcnnx.result import FcnnxResult
from core.jobs import CancelToken, FinalResult
from core.nets import zoo
from core.fcnnx.model import block_out_words, feature_blocks
from core.workload import CnnSet, FpgaTarget


@pytest.fixture(scope="module")
def result() -> FcnnxResult:
    settings = {**default_settings(), "simulate": False}
    req = JobRequest(CnnSet(["lenet5", "cifar10_quick"], 2), FpgaTarget("zedboard", 1.0), settings)
    events = list(ENGINE.run(req, CancelToken()))
    assert isinstance(events[-1], FinalResult)
    return events[-1].data


def test_one_sound_record_per_cnn(result):
    assert result.costs is not None and len(result.costs) == 2
    board = BOARDS["zedboard"]
    for name, rec, design in zip(result.cnns, result.costs, result.design.per_cnn):
        assert rec.problems() == []
        assert rec.ceilings.peak_macs_per_s == board.dsps * board.clock_mhz * 1e6     # 220 DSPs at 100 MHz
        assert rec.ceilings.bandwidth_bytes_per_s == 1e9
        blocks = feature_blocks(zoo.get(name))       # what f-CNNx maps: the convolutions up to the first FC layer
        assert rec.total.macs == 2 * sum(b.conv.macs for b in blocks)                   # batch 2
        assert [l.name for l in rec.layers] == [s.name for s in design.subgraphs]
        assert rec.total.time_s.value == pytest.approx(design.frame_time_s, rel=1e-9)   # alone = its frame time
        assert rec.total.offchip_bytes.value == sum(s.traffic_bytes for s in design.subgraphs)
        for l in [*rec.layers, rec.total]:
            assert l.energy_j.value is None and l.energy_j.limit is None            # no energy model on a board
            assert l.time_s.value >= l.time_s.limit and l.offchip_bytes.value >= l.offchip_bytes.limit
        c, h, w = blocks[0].in_shape        # the extractor's input and output, 16-bit words, batch 2
        assert rec.total.offchip_bytes.limit == 2 * 2 * (c * h * w + block_out_words(blocks[-1]))


def test_costs_round_trip_and_a_tampered_one_is_refused(result):
    d = json.loads(json.dumps(result.to_json()))
    assert FcnnxResult.from_json(d) == result
    bad = copy.deepcopy(d)
    bad["costs"][0]["layers"][0]["time_s"]["value"] = 0.0
    with pytest.raises(InputError) as info:
        FcnnxResult.from_json(bad)
    assert info.value.where == "result.costs[0].layers[0].time_s.value"
    old = copy.deepcopy(d)
    old.pop("costs")
    assert FcnnxResult.from_json(old, version=3).costs is None


def test_text_output_says_the_cost_alone(result):
    text = ENGINE.format_text(result)
    assert "lenet5          alone, modelled:" in text and "ms per batch (limit" in text
