"""SCAMP-5's cost record (core.cain.cost): the first layer costed from Cain's programs where it fits,
every other layer not applicable with its reason; the search is a fake here (no wall clock)."""

import json

import numpy as np
import pytest

from core.cain.api import CainPlan
from core.cain.cost import first_layer_problem, scamp5_cost
from core.cost import Ceilings, CostRecord, layer_cost, not_applicable
from core.errors import InputError
from core.nets import zoo
from core.workload import Scamp5Target


def _fake(length_per_kernel, fail_groups=False):
    calls = []

    def search(ks, **kw):
        calls.append((len(ks.kernels), kw))
        if fail_groups and len(ks.kernels) > 1:
            raise InputError("no verified program found", "search")
        n = length_per_kernel * len(ks.kernels)
        return CainPlan([None] * n, [k.name for k in ks.kernels], ["B"] * len(ks.kernels), "A", {0: "A"}, 2, [],
                        0.125, 10, 0.0, True)
    return search, calls


def test_first_layer_from_cains_programs_and_the_rest_not_applicable():
    t = Scamp5Target()
    search, calls = _fake(200)
    c = scamp5_cost("lenet5", t, search=search, max_nodes=123)
    first, *rest = c.record.layers
    n_kernels = zoo.get("lenet5").convs[0].out_ch
    assert sum(k for k, _ in calls) == n_kernels and all(kw["max_nodes"] == 123 for _, kw in calls)
    assert first.reason is None and first.time_s.value == pytest.approx(200 * n_kernels * t.instruction_ns * 1e-9)
    assert first.time_s.limit <= first.time_s.value and first.offchip_bytes.value == 0.0
    assert rest and all(l.reason and "not the first layer" in l.reason and l.time_s.value is None for l in rest)
    assert c.record.total.time_s.value == first.time_s.value and c.record.total.macs == first.macs
    assert "proven least" in c.note
    back = CostRecord.from_json(json.loads(json.dumps(c.record.to_json())))
    assert back == c.record


def test_a_pass_cain_cannot_finish_is_searched_one_kernel_at_a_time():
    search, calls = _fake(50, fail_groups=True)
    c = scamp5_cost("lenet5", Scamp5Target(), search=search)
    assert c.record.layers[0].reason is None and any(k == 1 for k, _ in calls)


def test_a_first_layer_cain_cannot_program_is_not_applicable_with_why():
    def never(ks, **kw):
        raise InputError("no verified program found within 1 s", "search")
    c = scamp5_cost("lenet5", Scamp5Target(), search=never)
    assert c.record.layers[0].reason.startswith("Cain found no program")
    assert c.record.total.time_s.value is None


def test_colour_and_oversized_first_layers_say_why():
    assert "3 input channels" in scamp5_cost("resnet18", Scamp5Target()).record.layers[0].reason
    lenet = zoo.get("lenet5").convs[0]
    assert "larger than the 16x16 array" in first_layer_problem(lenet, Scamp5Target(array_size=16))
    assert first_layer_problem(lenet, Scamp5Target()) is None


def test_a_record_with_a_figure_on_a_not_applicable_layer_is_refused():
    c = Ceilings(peak_macs_per_s=1e9, bandwidth_bytes_per_s=1e9)
    ok = layer_cost("a", 10, c, 8.0, time_s=1e-6, offchip_bytes=8.0, energy_j=None)
    rec = CostRecord.of("t", c, [ok, not_applicable("b", 99, "why")])
    assert rec.total.macs == 10 and rec.problems() == []
    d = rec.to_json()
    d["layers"][1]["time_s"]["value"] = 1.0
    with pytest.raises(InputError) as err:
        CostRecord.from_json(d)
    assert err.value.where == "cost.layers[1]"


def test_an_onnx_files_own_weights_are_the_kernels(tmp_path):
    from core.nets.onnx_export import export
    from core.nets.onnx_import import load_onnx_weights

    path = export(zoo.get("lenet5"), tmp_path / "lenet5.onnx")
    seen = []

    def search(ks, **kw):
        seen.extend(k.values for k in ks.kernels)
        return _fake(10)[0](ks, **kw)
    c = scamp5_cost(str(path), Scamp5Target(), search=search)
    assert "the ONNX file's weights" in c.note
    w = load_onnx_weights(path)[zoo.get("lenet5").convs[0].name]["weight"]
    first = w[0, 0] / abs(w).max()
    assert np.allclose(np.array(seen[0]), first)
