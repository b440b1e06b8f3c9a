"""Cappuccino's cost record on a mobile SoC (issue 50): per-step MACs adding up to the network's,
every figure at or above its limit, measured and modelled marks, the record in the result (and an
older result still reading). Per-op times are made up, except in the one test that builds and
profiles the digits CNN's program here, which asserts nothing about how fast it ran."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from core.cappuccino import cost as C
from core.cappuccino import engine as capp
from core.cappuccino import synth
from core.cappuccino.forward import forward_reference
from core.cappuccino.numerics import PRECISE
from core.cappuccino.result import CappuccinoResult
from core.engine import JobRequest
from core.errors import InputError
from core.jobs import CancelToken, FinalResult
from core.workload import BUILTIN_DIGITS, CnnNetwork, MobileSocTarget

IMAGES = 16


@pytest.fixture(scope="module")
def digits() -> Any:
    model = capp.load_model(CnnNetwork(BUILTIN_DIGITS), IMAGES)
    modes = {op.name: PRECISE for op in model.conv_ops}
    return model, synth.synthesise_program(model, modes, 4, 2).plan, modes


def _op_us(plan: Any, us: float) -> list[float]:
    """Made-up profile: `us` per image for every op the program times, 0 for the ones it skips."""
    return [0.0 if p.kind == "none" or p.fused else us for p in plan.ops]


def test_steps_macs_add_up_to_the_networks_and_bytes_are_the_compulsory_traffic(digits):
    model, plan, modes = digits
    c = C.cost_of_plan(model, plan, MobileSocTarget(), modes, None, False, "precise")
    r = c.record
    assert sum(l.macs for l in r.layers) == r.total.macs == model.network.macs == 84224
    # conv1 (1x8x8 -> 16x8x8 with its 2x2 max pooling fused: 16x4x4 out), 3x3 weights and bias, float32
    first = r.layers[0]
    assert first.name == "conv1" and c.steps[0].ops == ["conv1", "pool1"]
    assert first.offchip_bytes.value == first.offchip_bytes.limit == 4 * (64 + 16 * 4 * 4 + 16 * 9 + 16)
    assert r.problems() == [] and r.check() is r


def test_another_soc_is_modelled_by_its_roofline(digits):
    model, plan, modes = digits
    soc = MobileSocTarget(cores=4, vector_width=8, clock_mhz=2000.0, bandwidth_gbps=10.0)
    c = C.cost_of_plan(model, plan, soc, modes, _op_us(plan, 5.0), C.is_this_machine(soc), "precise")
    assert not c.measured_here and c.record.ceilings.peak_macs_per_s == 4 * 8 * C.FMA_PER_CYCLE * 2000e6
    for s, l in zip(c.steps, c.record.layers):
        assert l.time_s.how == "modelled" and l.offchip_bytes.how == "modelled" and l.energy_j.value is None
        assert l.time_s.value == pytest.approx(s.modelled_us * 1e-6)
        assert s.measured_us == 5.0                    # measured here, shown beside the model
        assert l.time_s.value >= l.time_s.limit
    assert c.model_error == pytest.approx(c.modelled_total_us / (5.0 * len(c.steps)) - 1)


def test_this_machine_is_measured_and_a_time_below_its_limit_takes_the_limit(digits):
    model, plan, modes = digits
    here = MobileSocTarget()                           # this machine's clock, bandwidth and caches
    assert C.is_this_machine(here)
    slow = C.cost_of_plan(model, plan, here, modes, _op_us(plan, 50.0), True, "precise")
    assert slow.measured_here and {l.time_s.how for l in slow.record.layers} == {"measured"}
    assert slow.record.total.time_s.how == "measured" and slow.record.total.offchip_bytes.how == "modelled"
    assert all(l.time_s.value == pytest.approx(50e-6) for l in slow.record.layers)
    fast = C.cost_of_plan(model, plan, here, modes, _op_us(plan, 1e-6), True, "precise")
    assert {l.time_s.how for l in fast.record.layers} == {"modelled"}
    assert all(l.time_s.value == l.time_s.limit for l in fast.record.layers)
    assert all("below" in s.how for s in fast.steps) and fast.record.check() is fast.record


def test_a_record_below_its_limit_is_refused_naming_the_figure(digits):
    model, plan, modes = digits
    r = C.cost_of_plan(model, plan, MobileSocTarget(), modes, None, False, "precise").record
    js = r.to_json()
    js["layers"][1]["time_s"]["value"] = js["layers"][1]["time_s"]["limit"] / 2
    with pytest.raises(InputError) as e:
        C.CostRecord.from_json(js, "result.cost.record")
    assert e.value.where == "result.cost.record.layers[1].time_s.value"


@pytest.mark.slow
def test_cost_network_builds_and_profiles_the_digits_program_here():
    if synth.find_compiler_noting()[0] is None:
        pytest.skip("no C compiler")
    c = C.network_cost(CnnNetwork(BUILTIN_DIGITS), MobileSocTarget(), images=IMAGES, min_seconds=0.01)
    assert c.measured_here and c.measured_total_us is not None and c.whole_program_us is not None
    assert all(s.measured_us is not None and s.measured_us > 0 for s in c.steps)
    for s, l in zip(c.steps, c.record.layers):       # measured, or its limit where the caches beat it
        assert l.time_s.how == "measured" and l.time_s.value == pytest.approx(s.measured_us * 1e-6) or \
            l.time_s.how == "modelled" and l.time_s.value == l.time_s.limit
    assert c.record.problems() == []
    assert C.cost_network(CnnNetwork(BUILTIN_DIGITS), MobileSocTarget(clock_mhz=1000.0), measure=False).total.time_s.how \
        == "modelled"
    with pytest.raises(InputError):
        C.cost_network(CnnNetwork(BUILTIN_DIGITS), object())


def _engine_result(monkeypatch, target: Any = None) -> CappuccinoResult:
    """The engine on the digits CNN with the compiler and the programs' runs faked (each prints the
    numpy reference of its modes, and with --profile 7 µs per op)."""
    model = capp.load_model(CnnNetwork(BUILTIN_DIGITS), IMAGES)
    logits = forward_reference(model, model.x_val, {op.name: PRECISE for op in model.conv_ops})[0]

    def fake_run(exe: Path, images: Path, count: int, min_seconds: float, check: Any, profile: bool = False,
                 **_: Any) -> synth.RunResult:
        r = synth.RunResult(predictions=[int(i) for i in logits.argmax(1)], passes=2, seconds=2e-3,
                            logits=logits.astype(np.float32))
        return dataclasses.replace(r, op_list=[7.0] * 64) if profile else r

    monkeypatch.setattr(synth, "find_compiler_noting", lambda: ("/fake/cc", ""))
    monkeypatch.setattr(synth, "compile_c", lambda *a, **k: 0.5)
    monkeypatch.setattr(synth, "run_program", fake_run)
    settings = {**capp.default_settings(), "accuracy_budget": 0.0, "measure_split": False, "limit": IMAGES}
    events = list(capp.run(JobRequest(CnnNetwork(BUILTIN_DIGITS), target or MobileSocTarget(), settings),
                           CancelToken()))
    result = next(e.data for e in events if isinstance(e, FinalResult))
    assert isinstance(result, CappuccinoResult)
    return result


def test_the_engines_result_carries_the_record_and_an_old_version_reads(monkeypatch):
    result = _engine_result(monkeypatch)
    assert result.cost is not None and result.cost.measured_here
    assert result.cost.record.total.macs == 84224 and result.cost.record.problems() == []
    assert "Cost on the mobile SoC" in capp.format_text(result)
    js = result.to_json()
    assert CappuccinoResult.VERSION == 4 and js["cost"]["record"]["total"]["macs"] == 84224
    again = CappuccinoResult.from_json(js)
    assert again.cost is not None and again.cost.record == result.cost.record
    old = dict(js)
    del old["cost"]
    assert CappuccinoResult.from_json(old, version=3).cost is None
    bad = result.to_json()
    bad["cost"]["record"]["layers"][0]["time_s"]["value"] = 0.0
    with pytest.raises(InputError) as e:
        CappuccinoResult.from_json(bad)
    assert "cost.record.layers[0].time_s.value" in (e.value.where)


def test_another_socs_run_is_modelled_with_the_times_measured_here_beside(monkeypatch):
    result = _engine_result(monkeypatch, MobileSocTarget(cores=2, vector_width=4, clock_mhz=1800.0))
    assert result.cost is not None and not result.cost.measured_here
    assert {l.time_s.how for l in result.cost.record.layers} == {"modelled"}
    assert all(s.measured_us == 7.0 for s in result.cost.steps)
    assert "1800 MHz" in result.cost.record.target
