"""The costed dataflow for an objective (core.bound.objective): its vectorised time and energy equal the
one-tiling model (core.bound.cost, whose cycles and on-chip counts the trace simulator checks) on every
candidate of small layers, so the choice is exact over the space; the traffic objective keeps the
traffic search's least traffic; each objective is the least of its own measure."""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest

from core.bound.analysis import Machine, analyse_layer
from core.bound.cost import cost_tiling
from core.bound.engine import ENGINE
from core.bound.loopnest import Tiling, search_optimal
from core.bound.objective import OBJECTIVES, Hardware, candidates, costs, search_for
from core.bound.shapes import ConvShape
from core.engine import JobRequest
from core.jobs import CancelToken, FinalResult
from core.workload import CnnNetwork, DataflowTarget

TARGET = DataflowTarget(memory_bytes=512, word_bits=16, pe_rows=4, pe_cols=3, clock_mhz=100.0, bandwidth_gbps=0.4,
                        dram_read_pj=200.0, dram_write_pj=260.0, gbuf_read_pj=6.0, gbuf_write_pj=7.0, rf_read_pj=1.0,
                        rf_write_pj=1.2, mac_pj=1.5)


def _shape(seed: int) -> ConvShape:
    rng = random.Random(seed)
    k = rng.choice([1, 3])
    groups = rng.choice([1, 1, 2])
    return ConvShape(name="t", B=rng.randint(1, 2), Ci=groups * rng.randint(1, 2), Hi=rng.randint(4, 6),
                     Wi=rng.randint(4, 6), Co=groups * rng.randint(2, 4), Hk=k, Wk=k, stride=rng.choice([1, 2]),
                     pad=k // 2, groups=groups, dilation=1)


def _value(term, cost, objective: str) -> float:
    e, t = cost.energy_j.value, cost.time_s.value
    return {"traffic": cost.offchip_bytes.value, "energy": e, "latency": t, "edp": e * t}[objective]


@pytest.mark.parametrize("seed", range(5))
def test_vectorised_costs_equal_the_one_tiling_model_on_every_candidate(seed):
    shape = _shape(seed)
    la = analyse_layer(shape, Machine(TARGET.memory_bytes, 16, TARGET.pe_rows, TARGET.pe_cols), ())
    hw = Hardware.of(TARGET)
    best = {o: np.inf for o in OBJECTIVES}
    seen = 0
    for cand, order in ((cand, order) for cand in candidates(shape, hw.words) for order in cand.orders):
        v = costs(shape, hw, cand, order)
        for i in np.flatnonzero(v["ok"]):
            t = Tiling(int(cand.n[i]), int(cand.m[i]), int(cand.c[i]), int(cand.p[i]), int(cand.q[i]), order,
                       cand.hold, cand.slide, cand.stream)
            term, cost = cost_tiling(la, t, TARGET)
            G = shape.groups
            assert term.cycles == G * v["cycles"][i]
            assert cost.time_s.value == pytest.approx(G * v["time"][i], rel=1e-12)
            assert cost.energy_j.value == pytest.approx(G * v["energy"][i], rel=1e-12)
            assert cost.offchip_bytes.value == G * v["traffic"][i] * 2
            for o in OBJECTIVES:
                best[o] = min(best[o], _value(term, cost, o))
            seen += 1
    assert seen > 10
    for o in OBJECTIVES:
        found = search_for(shape, TARGET, o)
        term, cost = cost_tiling(la, found.tiling, TARGET)
        assert _value(term, cost, o) == pytest.approx(best[o], rel=1e-12), o
    assert search_for(shape, TARGET, "traffic").traffic.total == search_optimal(shape, TARGET.memory_words).traffic.total


def test_each_objective_is_least_in_its_own_measure():
    shape = ConvShape(name="t", B=1, Ci=16, Hi=14, Wi=14, Co=32, Hk=3, Wk=3, stride=1, pad=1, groups=1, dilation=1)
    target = dataclasses.replace(DataflowTarget(), memory_bytes=8192)
    la = analyse_layer(shape, Machine(8192, 16), ())
    got = {o: cost_tiling(la, search_for(shape, target, o).tiling, target) for o in OBJECTIVES}
    for o in OBJECTIVES:
        assert all(_value(*got[o], o) <= _value(*got[other], o) * (1 + 1e-12) for other in OBJECTIVES)


def _run(objective: str):
    req = JobRequest(CnnNetwork("alexnet"), DataflowTarget(),
                     {"sweep": False, "fusion": False, "dataflows": [], "objective": objective})
    events = list(ENGINE.run(req, CancelToken()))
    assert isinstance(events[-1], FinalResult)
    return events[-1].data


def test_engine_objective_setting():
    traffic, latency = _run("traffic"), _run("latency")
    assert traffic.costing.objective == "traffic" and latency.costing.objective == "latency"
    assert latency.costing.record.total.time_s.value <= traffic.costing.record.total.time_s.value
    assert traffic.costing.record.total.offchip_bytes.value == traffic.totals.optimal * 2
    assert latency.totals == traffic.totals                  # the table's optimal dataflow is the traffic one
    assert latency.costing.record.problems() == []
