"""The register file per PE bounds the costed dataflow's search (issue 50 item 1): a PE keeps its
partial sums in it, so a dataflow whose partial sums per PE do not fit is not chosen; shrinking it
changes the chosen dataflow and raises its energy, the choice stays exact over the (smaller) space and
the trace simulator runs it within the register file; one too small for every dataflow is refused
with the least it would need, in words."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from core.bound.analysis import Machine, analyse_layer
from core.bound.cost import cost_layer, cost_tiling
from core.bound.loopnest import Tiling
from core.bound.objective import Hardware, candidates, costs, least_rf_words, search_for
from core.bound.onchip import map_to_pes
from core.bound.shapes import ConvShape
from core.errors import InputError
from core.workload import DataflowTarget
from sims.loopnest_trace import simulate_onchip

TARGET = DataflowTarget(memory_bytes=512, word_bits=16, pe_rows=4, pe_cols=3, clock_mhz=100.0, bandwidth_gbps=0.4,
                        dram_read_pj=200.0, dram_write_pj=260.0, gbuf_read_pj=6.0, gbuf_write_pj=7.0, rf_read_pj=1.0,
                        rf_write_pj=1.2, mac_pj=1.5)
SHAPE = ConvShape(name="c", B=1, Ci=2, Hi=6, Wi=6, Co=6, Hk=3, Wk=3, stride=1, pad=1, groups=1, dilation=1)
LAYER = analyse_layer(SHAPE, Machine(TARGET.memory_bytes, 16, TARGET.pe_rows, TARGET.pe_cols), ())


def _with_rf(words: int) -> DataflowTarget:
    return dataclasses.replace(TARGET, rf_bytes=2 * words)


def _chosen(words: int, objective: str = "energy"):
    t = _with_rf(words)
    term, cost = cost_layer(LAYER, t, objective)
    return t, term, cost


def test_shrinking_the_register_file_changes_the_dataflow_and_raises_its_energy():
    seen = []
    for words in (256, 8, 6, 4, 2):
        t, term, cost = _chosen(words)
        oc = map_to_pes(SHAPE, term.tiling, t.pe_rows, t.pe_cols, fastest=True, rf_words=t.rf_words)
        assert oc.psums_per_pe <= words
        # the trace simulator runs the chosen mapping: its PEs never hold more partial sums than fit
        sim = simulate_onchip(SHAPE, term.tiling, t.pe_rows, t.pe_cols, tuple(term.split))
        assert sim.max_abs_error == 0 and sim.max_psums_per_pe <= words
        assert sim.cycles == term.cycles
        assert (oc.gbuf_input_reads, oc.gbuf_weight_reads) == (sim.gbuf_input_reads, sim.gbuf_weight_reads)
        seen.append((words, term.tiling, oc.psums_per_pe, cost.energy_j.value))
    energies = [e for *_, e in seen]
    assert energies == sorted(energies)                   # a smaller space: never less energy
    assert seen[0][2] > 8 and energies[1] > energies[0]   # 256 words: the least-energy dataflow keeps 9 sums a PE
    assert len({tiling for _, tiling, _, _ in seen}) >= 3


def test_a_register_file_too_small_for_every_dataflow_is_refused_with_the_least_it_needs():
    need = least_rf_words(SHAPE, TARGET)
    assert need == 2                     # 6 output channels over 3 PE columns: 2 sums a PE at the least
    assert search_for(SHAPE, _with_rf(need), "traffic") is not None
    assert search_for(SHAPE, _with_rf(need - 1), "traffic") is None
    with pytest.raises(InputError) as info:
        cost_layer(LAYER, _with_rf(1), "energy")
    assert info.value.where == "target.rf_bytes"
    assert str(info.value).endswith("every dataflow of the search's space keeps at least 2 partial sums in each PE "
                                    "(4 B of 16-bit words), and the target's register file holds 2 B")


def test_the_choice_is_exact_over_the_space_the_register_file_leaves():
    """On every candidate, the vectorised search keeps exactly the tilings the one-tiling model can map
    within 4 words a PE, with the same time and energy, and chooses the least energy among them."""
    t = _with_rf(4)
    hw = Hardware.of(t)
    best, kept, left_out = np.inf, 0, 0
    for cand, order in ((cand, order) for cand in candidates(SHAPE, hw.words) for order in cand.orders):
        v = costs(SHAPE, hw, cand, order)
        free = costs(SHAPE, hw._replace(rf_words=2 ** 40), cand, order)
        for i in np.flatnonzero(free["ok"]):
            tiling = Tiling(int(cand.n[i]), int(cand.m[i]), int(cand.c[i]), int(cand.p[i]), int(cand.q[i]), order,
                            cand.hold, cand.slide, cand.stream)
            if not v["ok"][i]:
                with pytest.raises(ValueError, match="within 4 words"):
                    map_to_pes(SHAPE, tiling, t.pe_rows, t.pe_cols, fastest=True, rf_words=4)
                left_out += 1
                continue
            term, cost = cost_tiling(LAYER, tiling, t)
            assert term.cycles == v["cycles"][i]
            assert cost.energy_j.value == pytest.approx(v["energy"][i], rel=1e-12)
            best = min(best, cost.energy_j.value)
            kept += 1
    assert kept > 10 and left_out > 10
    _, cost = cost_layer(LAYER, t, "energy")
    assert cost.energy_j.value == pytest.approx(best, rel=1e-12)
