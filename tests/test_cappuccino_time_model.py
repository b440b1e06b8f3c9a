"""Cappuccino's time model on a mobile SoC (issue 50, item 4): the FMA issue per cycle as a target
field and read from the microarchitecture, and each per-step term of core.cappuccino.time_model
against the program's plan. Nothing here times anything: the plans are synthesised, never run."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

from core.cappuccino import cost as C
from core.cappuccino import engine as capp
from core.cappuccino import synth
from core.cappuccino import time_model as T
from core.cappuccino.numerics import INT8, PRECISE
from core.errors import InputError
from core.host_machine import FmaDatapath, fma_datapath
from core.workload import BUILTIN_DIGITS, CnnNetwork, MobileSocTarget, target_from_json

ZEN4 = ("vendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\n"
        "flags\t\t: fpu sse avx fma avx2 avx512f avx512bw\n")


def test_fma_issue_follows_the_microarchitectures_pipes():
    zen4 = fma_datapath(ZEN4)
    assert (zen4.pipes, zen4.pipe_bytes) == (2, 32) and "Zen 4" in zen4.source
    assert [zen4.issue_per_cycle(v) for v in (4, 8, 16)] == [2, 2, 1]     # a 512-bit FMA takes both pipes
    zen1 = fma_datapath("vendor_id : AuthenticAMD\ncpu family : 23\nmodel : 1\nflags : avx fma avx2\n")
    assert [zen1.issue_per_cycle(v) for v in (4, 8, 16)] == [2, 1, 1]
    zen3 = fma_datapath("vendor_id : AuthenticAMD\ncpu family : 25\nmodel : 33\nflags : avx fma avx2\n")
    assert zen3.issue_per_cycle(8) == 2 and "Zen 3" in zen3.source
    intel = fma_datapath("vendor_id : GenuineIntel\ncpu family : 6\nmodel : 85\nflags : avx fma avx2 avx512f\n")
    assert intel.issue_per_cycle(16) == 2
    assert fma_datapath("flags : sse sse2\n").issue_per_cycle(4) == 1           # no FMA at all
    arm = fma_datapath("", "aarch64")
    assert [arm.issue_per_cycle(v) for v in (4, 8)] == [2, 1]
    assert FmaDatapath(1, 16, "x").issue_per_cycle(16) == 1                     # never below one


def test_the_soc_target_holds_its_fma_issue_and_reads_an_old_item_without_it():
    prop = MobileSocTarget.SCHEMA["properties"]["fma_per_cycle"]
    assert prop["default"] == 2 and prop["unit"] == "/cycle" and "Zen 4" in prop["description"]
    assert list(MobileSocTarget.SCHEMA["properties"])[:3] == ["cores", "vector_width", "fma_per_cycle"]
    t = MobileSocTarget(cores=4, vector_width=16, fma_per_cycle=1)
    assert target_from_json(t.to_json()) == t
    old = target_from_json({"kind": "mobile_soc", "cores": 4, "vector_width": 8})     # a session before the field
    assert old.fma_per_cycle == 2
    with pytest.raises(InputError) as info:
        target_from_json({"kind": "mobile_soc", "fma_per_cycle": 0})
    assert info.value.where == "target.fma_per_cycle"
    assert C.ceilings_of(t).peak_macs_per_s == 4 * 16 * 1 * t.clock_mhz * 1e6


@pytest.fixture(scope="module")
def digits() -> Any:
    model = capp.load_model(CnnNetwork(BUILTIN_DIGITS), 4)
    modes = {op.name: PRECISE for op in model.conv_ops}
    return model, modes


def _plan(digits: Any, v: int, threads: int = 2) -> Any:
    model, modes = digits
    return synth.synthesise_program(model, modes, v, threads).plan


def _convs(plan: Any) -> list[int]:
    return [i for i, p in enumerate(plan.ops) if p.kind == "conv" and not p.fused]


def test_a_conv_issues_vector_fmas_for_every_lane_however_many_maps_are_left(digits):
    model, _ = digits
    for v in (4, 16):
        plan = _plan(digits, v)
        by_name = {op.name: op for op in model.conv_ops}
        for i in _convs(plan):
            p = plan.ops[i]
            blocks, steps = T.conv_fmas(plan, p)
            lanes_issued = blocks * steps * p.rq * p.rp * v
            assert lanes_issued >= by_name[p.name].macs          # overlapping blocks and idle lanes cost
    fc16 = _plan(digits, 16)
    fc = next(fc16.ops[i] for i in _convs(fc16) if fc16.ops[i].name == "fc")
    blocks, steps = T.conv_fmas(fc16, fc)
    assert blocks * steps * fc.rq * fc.rp * 16 == 16 * by_name["fc"].macs // 10     # 10 maps in 16 lanes


def test_a_k_step_is_the_slowest_of_fma_issue_latency_and_loads(digits):
    plan = _plan(digits, 16)
    i = _convs(plan)[0]
    p = plan.ops[i]
    blocks, steps = T.conv_fmas(plan, p)
    one = T.step_cycles(plan, i, 1)
    pool = T._pool_cycles(plan, plan.ops[p.pool]) if p.pool >= 0 else 0.0
    step = max(p.rq * p.rp, T.FMA_LATENCY, T.load_cycles(p.rq + p.rp, p.rq, 16))
    assert one == pytest.approx(blocks * (steps * step + T.CONV_OUT_CYCLES_ONE * p.rq * p.rp + T.BLOCK_SETUP) + pool)
    # two workers pay the (measured) larger cost per output vector
    assert T.step_cycles(plan, i, 1, workers=2) == pytest.approx(
        one + blocks * p.rq * p.rp * (T.CONV_OUT_CYCLES_SHARED - T.CONV_OUT_CYCLES_ONE))
    # more FMA issue never costs more, and never less than the FMA latency per step
    many = T.step_cycles(plan, i, 16)
    assert many <= one and many >= blocks * steps * T.FMA_LATENCY
    # a 512-bit vector takes two 256-bit load ports' slots, a broadcast one
    assert T.load_cycles(3, 1, 16) == pytest.approx((2 + 2) / T.LOADS_PER_CYCLE)
    assert T.load_cycles(3, 1, 8) == pytest.approx(3 / T.LOADS_PER_CYCLE)


def test_a_shared_step_splits_its_chunks_over_the_workers_and_pays_the_shared_phase(digits):
    plan = _plan(digits, 4)
    i = _convs(plan)[1]
    shared = dataclasses.replace(plan.ops[i], chunks=8)
    plan.ops[i] = shared
    two = T.step_time(plan, i, MobileSocTarget(cores=2, vector_width=4), 2, 0.0)
    one = T.step_time(plan, i, MobileSocTarget(cores=1, vector_width=4), 2, 0.0)
    three = T.step_time(plan, i, MobileSocTarget(cores=3, vector_width=4), 2, 0.0)
    assert (two.workers, one.workers, three.workers) == (2, 1, 3)
    clock = MobileSocTarget().clock_mhz * 1e6
    assert one.compute_s == pytest.approx(T.step_cycles(plan, i, 2, workers=1) / clock)
    assert two.compute_s == pytest.approx(T.step_cycles(plan, i, 2, workers=2) / 2 / clock)
    assert three.compute_s == pytest.approx(T.step_cycles(plan, i, 2, workers=3) * 3 / 8 / clock)  # 3 of 8 chunks
    assert one.compute_s / 2 < two.compute_s < one.compute_s      # shared: each output vector costs more
    assert two.fixed_s == T.PHASE_NS_SHARED * 1e-9 and one.fixed_s == T.PHASE_NS_ONE * 1e-9
    plan.ops[i] = dataclasses.replace(shared, chunks=1)                     # one chunk: worker 0 alone
    assert T.step_time(plan, i, MobileSocTarget(cores=2, vector_width=4), 2, 0.0).workers == 1


def test_memory_term_is_the_compulsory_bytes_plus_rereads_of_an_input_beyond_the_last_level_cache(digits):
    plan = _plan(digits, 4)
    i = _convs(plan)[1]
    p = plan.ops[i] = dataclasses.replace(plan.ops[i], rq=1)       # one output stack a group: 8 groups
    soc = MobileSocTarget(vector_width=4, bandwidth_gbps=1.0)
    assert T.reread_bytes(plan, p, soc.l3_bytes) == 0.0
    st = T.step_time(plan, i, soc, 2, 1000.0)
    assert st.memory_s == pytest.approx(1000.0 / 1e9)
    groups = -(-(-(-plan.tensors[p.out].C // 4)) // p.rq)
    frame = plan.frames[plan.tensors[p.ins[0]].buf].nbytes
    tiny = dataclasses.replace(soc, l3_bytes=frame - 1)
    assert T.reread_bytes(plan, p, tiny.l3_bytes) == frame * (groups - 1)
    assert groups > 1 and T.step_time(plan, i, tiny, 2, 1000.0).memory_s > st.memory_s


def test_every_kernel_kind_costs_cycles_from_its_shape():
    plan = _plan_of_kinds()
    for i, p in enumerate(plan.ops):
        if p.kind in ("maxpool", "lrn", "softmax", "add", "gap"):
            assert T.step_cycles(plan, i, 2) > 0, p.kind


def _plan_of_kinds() -> Any:
    """A small plan with pooling, LRN and softmax (AlexNet's kinds) without loading a zoo network:
    the digits CNN's plan with op kinds swapped in (the cycle model reads shapes only)."""
    model = capp.load_model(CnnNetwork(BUILTIN_DIGITS), 1)
    plan = synth.synthesise_program(model, {op.name: PRECISE for op in model.conv_ops}, 4, 1).plan
    base = plan.ops[_convs(plan)[0]]
    plan.ops = [dataclasses.replace(base, kind=k, kh=2, kw=2, lrn=(5, 1.0, 1.0, 1.0), pool=-1)
                for k in ("maxpool", "lrn", "softmax", "add", "gap")]
    return plan


def test_the_record_uses_the_time_model_and_never_goes_below_the_roofline(digits):
    model, modes = digits
    plan = _plan(digits, 4)
    soc = MobileSocTarget(cores=2, vector_width=4, clock_mhz=1000.0, bandwidth_gbps=5.0)
    c = C.cost_of_plan(model, plan, soc, modes, None, False, "precise")
    assert c.record.problems() == []
    for s, l in zip(c.steps, c.record.layers):
        assert s.modelled_us == pytest.approx(max(max(s.compute_us, s.memory_us) + s.fixed_us,
                                                  (l.time_s.limit or 0) * 1e6))
        assert s.modelled_us * 1e-6 >= (l.time_s.limit or 0) * (1 - 1e-12)
    assert c.modelled_total_us > c.record.total.time_s.limit * 1e6      # the program does not run at the peak
    faster = C.cost_of_plan(model, plan, dataclasses.replace(soc, clock_mhz=2000.0), modes, None, False, "precise")
    assert faster.modelled_total_us < c.modelled_total_us


def test_the_profiles_cpu_column_is_read_beside_the_wall_times():
    out = "pred 1 2\npasses 3 seconds 0.5\nop conv1 conv 4.500 us wall 1.250 us cpu\nop fc conv 2.000 us wall 2.000 us cpu\n"
    r = synth.parse_output(out, 2, "p")
    assert r.op_list == [4.5, 2.0] and r.op_cpu_list == [1.25, 2.0]
    old = synth.parse_output("pred 1 2\npasses 3 seconds 0.5\nop conv1 conv 4.500 us wall\n", 2, "p")
    assert old.op_list == [4.5] and old.op_cpu_list is None
    assert np.isfinite(T.SQRT_CYCLES_PER_LANE + T.DIV_CYCLES_PER_LANE + T.EXPF_CYCLES)


def test_an_int8_conv_sums_four_maps_a_step_and_pays_its_quantisation(digits):
    plan = _plan(digits, 16)
    i = _convs(plan)[1]                                   # conv2: 16 input maps, 3x3
    p = plan.ops[i]
    blocks, steps = T.conv_fmas(plan, p)
    fp32 = T.step_cycles(plan, i, 1)
    plan.ops[i] = dataclasses.replace(p, mode=INT8)
    int8 = T.step_cycles(plan, i, 1)
    pool = T._pool_cycles(plan, plan.ops[p.pool]) if p.pool >= 0 else 0.0
    step = max(p.rq * p.rp, T.FMA_LATENCY, T.load_cycles(p.rq + p.rp, p.rq, 16)) + T.INT8_QUANT_CYCLES / 4 * p.rp
    assert int8 == pytest.approx(blocks * (steps // 4 * step + T.CONV_OUT_CYCLES_ONE * p.rq * p.rp + T.BLOCK_SETUP) + pool)
    assert int8 < fp32


def test_the_steps_terms_and_cpu_times_go_through_json_and_an_older_step_reads(digits):
    from core.results import read_value, to_plain

    model, modes = digits
    plan = _plan(digits, 4)
    c = C.cost_of_plan(model, plan, MobileSocTarget(), modes, [3.0] * len(plan.ops), True, "precise",
                       op_cpu_us=[2.0] * len(plan.ops))
    assert c.measured_cpu_total_us == 2.0 * len(c.steps)
    js = to_plain(c)
    assert read_value(C.CappuccinoCost, js, "cost") == c
    for step in js["steps"]:                    # a result written before the time model
        for key in ("compute_us", "memory_us", "fixed_us", "measured_cpu_us"):
            del step[key]
    old = read_value(C.CappuccinoCost, js, "cost")
    assert old.measured_cpu_total_us is None and old.steps[0].compute_us == 0.0
