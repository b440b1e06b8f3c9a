"""A network's cost record from MERIT transforms on a CPU or GPU target (core.merit.cost, issue 50):
every conv layer a transform, the GPU modelled by its roofline, this machine's layers timed through a
fake measurement (no wall clock), limits checked, the engine's settings, command line and result."""

import argparse
import json

import pytest

from core.engine import JobRequest, get_engine
from core.errors import InputError
from core.hardware.targets import GpuTarget, this_machine
from core.jobs import CancelToken, run_foreground
from core.merit import cost as MC
from core.merit.result import MeritResult
from core.nets import zoo
from core.workload import MeritTransformWorkload

QUICK = {"networks": [], "table_ix": False, "curve_alus": [32], "codegen": False}


def _fake_at(rate_macs_per_s):
    """A measurement that takes MACs / rate seconds: what a program at that rate would report."""
    calls = []

    def measure(t, seed):
        calls.append(t)
        return MC.macs_of(t) / rate_macs_per_s, "fake kernel"
    return measure, calls


def test_every_conv_layer_is_a_transform_with_its_macs():
    net = zoo.get("lenet5")
    name, layers = MC.network_layers("lenet5")
    assert name == net.name and len(layers) == len(net.convs) and layers
    for layer in layers:
        assert MC.macs_of(MC.layer_transform(layer)) == layer.macs


def test_gpu_is_the_roofline_of_its_fields_and_never_below_its_limits():
    g = GpuTarget()
    c = MC.network_cost("lenet5", g)
    assert c.target_kind == "gpu" and not c.measured_here and "roofline" in c.notes[0].how
    assert c.gpu_note and "CUDA" in c.gpu_note
    for layer in c.record.layers:
        roof = max(layer.macs / g.peak_macs_per_s, layer.offchip_bytes.value / (g.bandwidth_gbps * 1e9))
        assert layer.time_s.value == pytest.approx(roof)
        assert layer.time_s.how == "modelled" and layer.energy_j.value is None
        assert layer.offchip_bytes.value >= layer.offchip_bytes.limit
    assert c.record.problems() == []


def test_this_machine_measures_small_layers_and_extrapolates_scaled_ones():
    cpu = this_machine()
    measure, calls = _fake_at(cpu.peak_macs_per_s / 1000)
    budget = 200_000
    c = MC.network_cost("lenet5", cpu, measure=measure, budget=budget)
    assert c.measured_here and len(calls) == len(c.record.layers)
    assert all(MC.macs_of(t) <= budget for t in calls)
    for layer, note, t in zip(c.record.layers, c.notes, calls):
        # a program at a thousandth of the peak: 1000 times the compute limit, scaled or not, unless its
        # data come from DRAM slower (timed in cache, the bandwidth's time is taken, modelled)
        compute = 1000 * layer.macs / cpu.peak_macs_per_s
        stream = layer.offchip_bytes.value / (cpu.bandwidth_gbps * 1e9)
        assert layer.time_s.value == pytest.approx(max(compute, stream))
        if stream > compute:
            assert layer.time_s.how == "modelled" and "in cache" in note.how
        elif MC.macs_of(t) == layer.macs:
            assert layer.time_s.how == "measured" and note.how.startswith("measured here")
        else:
            assert layer.time_s.how == "modelled" and "scaled-down" in note.how
    assert {l.time_s.how for l in c.record.layers} == {"measured", "modelled"}
    assert c.record.total.time_s.how == "mixed"


def test_a_measurement_faster_than_the_peak_is_refused():
    measure, _ = _fake_at(this_machine().peak_macs_per_s * 10)
    with pytest.raises(InputError) as err:
        MC.network_cost("lenet5", this_machine(), measure=measure, budget=10**9)
    assert "below its limit" in err.value.message and err.value.where.startswith("cost.layers[")


def test_another_cpu_and_a_failed_measurement_are_modelled():
    measure, calls = _fake_at(1.0)
    other = this_machine()
    other.cores += 1
    c = MC.network_cost("lenet5", other, measure=measure)
    assert not calls and not c.measured_here
    c = MC.network_cost("lenet5", this_machine(), measure=lambda t, s: None, budget=10**9)
    assert all(l.time_s.how == "modelled" for l in c.record.layers)
    assert "did not run" in c.notes[0].how


def test_scaled_layer_keeps_the_budget_and_the_kernel():
    layer = next(l for l in zoo.get("vgg16").convs if not l.fc)
    t = MC.scaled_layer(layer, 1 << 20)
    assert MC.macs_of(t) <= 1 << 20
    fc = next(l for l in zoo.get("vgg16").convs if l.fc)
    assert MC.macs_of(MC.scaled_layer(fc, 1 << 16)) <= 1 << 16


def test_unknown_network_and_target_kind_say_so():
    with pytest.raises(InputError) as err:
        MC.network_cost("nonet", GpuTarget())
    assert err.value.where == "settings.cost_network" and "resnet18" in err.value.message
    with pytest.raises(InputError) as err:
        MC.network_cost("lenet5", object())
    assert err.value.where == "target.kind"


def _request(*argv):
    spec = get_engine("merit")
    p = argparse.ArgumentParser()
    spec.add_cli_arguments(p)
    return spec, spec.request_from_cli(p.parse_args(list(argv)))


def test_command_line_picks_the_network_and_the_target(tmp_path):
    spec, req = _request("--network", "lenet5", "--cost-target", "gpu")
    assert req.settings["cost_network"] == "lenet5" and req.settings["cost_target"] == "gpu"
    assert isinstance(req.workload, MeritTransformWorkload)
    f = tmp_path / "gpu.json"
    f.write_text(json.dumps({**GpuTarget().to_json(), "sms": 66}))
    _, req = _request("--network", "lenet5", "--target-file", str(f))
    assert req.target.kind == "gpu" and req.target.sms == 66
    for argv, where in ((["--network", "nonet"], "--network"), (["--target-file", str(f)], "--target-file"),
                        (["--onnx", str(tmp_path / "missing.onnx")], "--onnx")):
        with pytest.raises(InputError) as err:
            _request(*argv)
        assert err.value.where == where


def test_engine_result_carries_the_record_and_reads_back():
    spec = get_engine("merit")
    req = JobRequest(MeritTransformWorkload("conv3x3"), GpuTarget(),
                     dict(spec.default_settings(), **QUICK, cost_network="lenet5"))
    out = run_foreground(spec.run(req, CancelToken()), quiet=True)
    assert out.error is None, out.error
    r = out.result
    assert r.cost is not None and r.cost.record.layers and r.cost.target_kind == "gpu"
    d = json.loads(json.dumps(r.to_json()))
    assert MeritResult.from_json(d) == r and "cost of" in spec.format_text(r)
    d["cost"]["record"]["layers"][0]["time_s"]["value"] = 0.0          # a corrupt record is refused
    with pytest.raises(InputError):
        MeritResult.from_json(d)


def test_a_version_2_result_reads_without_a_cost():
    spec = get_engine("merit")
    out = run_foreground(spec.run(JobRequest(MeritTransformWorkload("conv3x3"), None,
                                             dict(spec.default_settings(), **QUICK)), CancelToken()), quiet=True)
    d = json.loads(json.dumps(out.result.to_json()))
    d.pop("cost", None)
    assert MeritResult.from_json(d, version=2).cost is None


@pytest.mark.parametrize("raw,where", [({"cost_network": "nonet"}, "settings.cost_network"),
                                       ({"cost_network": 3}, "settings.cost_network"),
                                       ({"cost_target": "tpu"}, "settings.cost_target")])
def test_bad_cost_settings(raw, where):
    from core.merit.engine import check_settings

    with pytest.raises(InputError) as err:
        check_settings(raw)
    assert err.value.where == where


@pytest.mark.parametrize("net", ["resnet18", "alexnet"])
def test_the_limit_is_the_bound_engines_compulsory_traffic(net):
    """The off-chip limit is proven for any memory: the bound engine's compulsory words, layer by layer."""
    from core.bound.bounds import conv_bound
    from core.bound.shapes import from_conv

    for layer in MC.network_layers(net)[1]:
        assert MC.compulsory_words(layer) == conv_bound(from_conv(layer, 1), 1 << 40).compulsory.total


def test_an_onnx_file_is_costed_like_its_zoo_network(tmp_path):
    from core.nets.onnx_export import export

    path = export(zoo.get("lenet5"), tmp_path / "lenet5.onnx")
    a, b = MC.network_cost(str(path), GpuTarget()), MC.network_cost("lenet5", GpuTarget())
    assert [l.macs for l in a.record.layers] == [l.macs for l in b.record.layers]
    assert a.record.total.time_s.value == pytest.approx(b.record.total.time_s.value)
