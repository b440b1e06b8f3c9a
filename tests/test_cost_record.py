"""The cost record (core.cost): limits from the target's ceilings, totals as sums, a JSON round trip,
and a record that verifies itself: a figure below its limit, a wrong limit or a wrong total is refused
naming the figure."""

import copy

import pytest
from tests.examples import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from core.cost import Ceilings, CostRecord, layer_cost
from core.errors import InputError

pos = st.floats(min_value=1e-3, max_value=1e12, allow_nan=False, allow_infinity=False)
slack = st.floats(min_value=1.0, max_value=100.0)


@st.composite
def records(draw, energy=True):
    c = Ceilings(peak_macs_per_s=draw(pos), bandwidth_bytes_per_s=draw(pos),
                 mac_j=draw(pos) * 1e-12 if energy else None, dram_j_per_byte=draw(pos) * 1e-12 if energy else None)
    layers = []
    for i in range(draw(st.integers(1, 6))):
        macs = draw(st.integers(0, 10 ** 12))
        lower = draw(st.floats(min_value=0, max_value=1e12))
        t = c.time_limit(macs, lower) * draw(slack)
        e = c.energy_limit(macs, lower)
        layers.append(layer_cost(f"l{i}", macs, c, lower, time_s=t, offchip_bytes=lower * draw(slack),
                                 energy_j=None if e is None else e * draw(slack)))
    return CostRecord.of("test target", c, layers)


@settings(max_examples=examples(60), deadline=None)
@given(records(), st.booleans())
def test_a_record_at_or_above_its_limits_is_sound_and_round_trips(r, _):
    assert r.problems() == []
    assert r.total.macs == sum(l.macs for l in r.layers)
    assert r.total.time_s.value == pytest.approx(sum(l.time_s.value for l in r.layers))
    for l in [*r.layers, r.total]:
        for f in (l.time_s, l.offchip_bytes, l.energy_j):
            assert f.value >= f.limit * (1 - 1e-9)
    assert CostRecord.from_json(r.to_json()) == r


@settings(max_examples=examples(30), deadline=None)
@given(records(energy=False))
def test_without_an_energy_model_energy_and_its_limit_are_none(r):
    assert all(l.energy_j.value is None and l.energy_j.limit is None for l in [*r.layers, r.total])
    assert CostRecord.from_json(r.to_json()) == r


def _small():
    c = Ceilings(peak_macs_per_s=1e9, bandwidth_bytes_per_s=2e9, mac_j=1e-12, dram_j_per_byte=1e-10)
    # 1000 MACs at 1e9/s: 1 us; 100 bytes at 2e9 B/s: 50 ns -> time limit 1 us; energy 100 * 1e-10 + 1000 * 1e-12
    layer = layer_cost("conv1", 1000, c, 100.0, time_s=3e-6, offchip_bytes=150.0, energy_j=2e-8)
    return CostRecord.of("t", c, [layer, layer])


def test_limits_by_hand():
    r = _small()
    l = r.layers[0]
    assert l.time_s.limit == pytest.approx(1e-6) and l.offchip_bytes.limit == 100.0
    assert l.energy_j.limit == pytest.approx(1.1e-8)
    assert l.time_s.of_limit == pytest.approx(3.0)
    assert r.total.energy_j.limit == pytest.approx(2.2e-8) and r.total.time_s.how == "modelled"


@pytest.mark.parametrize("edit, where", [
    (lambda d: d["layers"][1]["time_s"].update(value=5e-7), "cost.layers[1].time_s.value"),
    (lambda d: d["layers"][0]["offchip_bytes"].update(value=99.0), "cost.layers[0].offchip_bytes.value"),
    (lambda d: d["layers"][0]["energy_j"].update(limit=1e-9), "cost.layers[0].energy_j.limit"),
    (lambda d: d["layers"][0]["energy_j"].update(value=None), "cost.layers[0].energy_j"),
    (lambda d: d["total"].update(macs=1), "cost.total.macs"),
    (lambda d: d["total"]["time_s"].update(value=1.0), "cost.total.time_s"),
    (lambda d: d["total"]["time_s"].update(how="measured"), "cost.total.time_s"),
    (lambda d: d["ceilings"].update(bandwidth_bytes_per_s=-1.0), "cost.ceilings"),
    (lambda d: d["ceilings"].update(bandwidth_bytes_per_s=0.0), "cost.layers[0].offchip_bytes.limit"),
    (lambda d: d["layers"][0]["time_s"].update(how="guessed"), "cost.layers[0].time_s.how"),
])
def test_an_unsound_record_is_refused_naming_the_figure(edit, where):
    d = copy.deepcopy(_small().to_json())
    edit(d)
    with pytest.raises(InputError) as info:
        CostRecord.from_json(d)
    assert info.value.where == where


def test_measured_and_modelled_layers_total_as_mixed():
    c = Ceilings(peak_macs_per_s=1e9, bandwidth_bytes_per_s=1e9)
    a = layer_cost("a", 10, c, 1.0, time_s=1e-6, offchip_bytes=1.0, energy_j=None, time_how="measured")
    b = layer_cost("b", 10, c, 1.0, time_s=1e-6, offchip_bytes=1.0, energy_j=None)
    r = CostRecord.of("t", c, [a, b])
    assert (r.total.time_s.how, r.total.offchip_bytes.how) == ("mixed", "modelled")
    with pytest.raises(ValueError):
        layer_cost("c", 1, c, 1.0, time_s=1.0, offchip_bytes=1.0, energy_j=1.0)
