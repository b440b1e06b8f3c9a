"""The merit engine through its command-line path, its result and its input errors."""

import argparse
import json

import pytest

from core.engine import JobRequest, get_engine
from core.errors import InputError
from core.jobs import CancelToken, FinalResult, MetricPoint, run_foreground


def _parse(*argv):
    spec = get_engine("merit")
    p = argparse.ArgumentParser()
    spec.add_cli_arguments(p)
    return spec, p.parse_args(list(argv))


def _run(*argv):
    spec, args = _parse(*argv)
    req = spec.request_from_cli(args)
    out = run_foreground(spec.run(req, CancelToken()), quiet=True)
    assert out.error is None, out.error
    return spec, out.result


def test_registry_entry():
    spec = get_engine("merit")
    assert (spec.title, spec.order, spec.workload_kinds, spec.target_kinds) == ("MERIT mapping", 30, (), ())


def test_cli_run_fig6_workload():
    spec, r = _run("--workload", "conv3x3", "--networks", "", "--no-table-ix", "--curve", "32,64")
    json.dumps(r)
    assert r["verification"]["ok"] and r["verification"]["max_abs_diff"] < 1e-12
    assert r["tiling"]["footprints"]["0:I"] == [1, 6, 6]
    layouts = {L["layout"]: L for L in r["banks"]["layouts"]}
    assert layouts["naive"]["extra_cycles"] > 0 and layouts["xor"]["extra_cycles"] == 0
    assert r["butterfly_examples"]["eq13_H"] == ["100", "x10", "xx1"]
    assert r["butterfly_examples"]["eq16_H_prime"] == ["10x", "x1x", "001"]
    assert [row["rate"] for row in r["reuse"]["rows"]][:2] == pytest.approx([0.3333, 5.3333], abs=1e-3)
    assert r["meritz"]["curve"]["alus"] == [32, 64]
    rates = {(row["architecture"], row["level"]): row["rate"] for row in r["reuse"]["rows"]}
    assert rates[("MERIT-z", "1 TAU, 16x16 output tile")] == pytest.approx(78.77, abs=5e-3)
    assert rates[("Eyeriss", "Overall (row stationary)")] == pytest.approx(19.38, abs=5e-3)
    text = spec.format_text(r)
    # the text shows the computed rate next to the paper's, not just the paper's figure
    assert "extra cycles" in text and f"{rates[('MERIT-z', '1 TAU, 16x16 output tile')]:7.2f} (paper 78.77)" in text


def test_metric_points_for_the_curve():
    spec, args = _parse("--workload", "gemm", "--networks", "", "--no-table-ix", "--curve", "32,128,512")
    events = list(spec.run(spec.request_from_cli(args), CancelToken()))
    pts = [e for e in events if isinstance(e, MetricPoint)]
    assert [p.x for p in pts] == [32, 128, 512]
    assert isinstance(events[-1], FinalResult)


def test_transform_file(tmp_path):
    f = tmp_path / "t.json"
    f.write_text(json.dumps({
        "name": "dw", "parallel": [["c", 2], ["y", 6], ["x", 6]], "accumulate": [["ky", 3], ["kx", 3]],
        "operands": [
            {"name": "I", "shape": [2, 6, 6], "pad": [0, 1, 1],
             "map": {"c": [0, 1, 0], "y": [1, 1, -1], "ky": [1], "x": [2, 1, -1], "kx": [2]}},
            {"name": "W", "shape": [2, 3, 3], "map": {"c": [0], "ky": [1], "kx": [2]}}],
        "strategy": "dot", "tile": {"y": 4, "x": 4}, "reference": {"kind": "depthwise", "stride": 1, "pad": 1}}))
    _, r = _run("--transform", str(f), "--networks", "", "--no-table-ix", "--curve", "32", "--banks", "4")
    assert r["verification"]["ok"] and r["banks"]["banks"] == 4


@pytest.mark.parametrize("argv, where", [
    (["--workload", "conv3x3", "--banks", "6"], "settings.banks"),
    (["--workload", "conv3x3", "--alus", "100"], "settings.alus"),
    (["--workload", "nope"], "settings.workload"),
    (["--workload", "conv3x3", "--bandwidth", "fast"], "--bandwidth"),
    (["--workload", "conv3x3", "--networks", "nonet"], "settings.networks[0]"),
])
def test_bad_cli_input(argv, where):
    spec, args = _parse(*argv)
    with pytest.raises(InputError) as e:
        spec.request_from_cli(args)
    assert e.value.where == where


def test_bad_transform_files(tmp_path):
    spec = get_engine("merit")
    f = tmp_path / "broken.json"
    f.write_text('{"name": "x",\n "parallel": [}')
    with pytest.raises(InputError) as e:
        spec.request_from_cli(_parse("--transform", str(f))[1])
    assert e.value.where == f"{f}:2"
    f.write_text(json.dumps({"parallel": [["m", 4]], "accumulate": [["k", 3]], "operands": [
        {"name": "A", "shape": [4, 3], "map": {"m": [0, 2, 0], "k": [1]}},
        {"name": "B", "shape": [3], "map": {"k": [0]}}]}))
    with pytest.raises(InputError) as e:
        spec.request_from_cli(_parse("--transform", str(f))[1])
    assert "leave the tensor" in e.value.message


def test_cancel_stops_the_model():
    spec = get_engine("merit")
    cancel = CancelToken()
    req = JobRequest(None, None, dict(spec.default_settings(), workload="gemm"))
    gen = spec.run(req, cancel)
    for ev in gen:
        if isinstance(ev, MetricPoint):
            cancel.cancel()
            break
    from core.jobs import Cancelled
    with pytest.raises(Cancelled):
        for _ in gen:
            pass


def test_window_kernel_set_as_convolution():
    from core.workload import Kernel, KernelSet

    spec = get_engine("merit")
    ks = KernelSet("blur", 16, [Kernel("g", [[1, 2, 1], [2, 4, 2], [1, 2, 1]]), Kernel("s", [[1, 0, -1]] * 3)])
    req = JobRequest(ks, None, dict(spec.default_settings(), workload="window-kernels", networks=[],
                                     table_ix=False, curve_alus=[32]))
    out = run_foreground(spec.run(req, CancelToken()), quiet=True)
    assert out.error is None and out.result["verification"]["ok"]
    assert out.result["verification"]["output_shape"] == [2, 30, 30]


def test_tile_override():
    _, r = _run("--workload", "conv5x5", "--tile", "y=8,x=8", "--networks", "", "--no-table-ix", "--curve", "32")
    assert r["tiling"]["footprints"]["0:I"] == [1, 12, 12]
    spec, args = _parse("--workload", "conv5x5", "--tile", "y=eight")
    with pytest.raises(InputError):
        spec.request_from_cli(args)
    spec, args = _parse("--workload", "conv5x5", "--tile", "q=8", "--networks", "", "--no-table-ix")
    out = run_foreground(spec.run(spec.request_from_cli(args), CancelToken()), quiet=True)
    assert isinstance(out.error, InputError) and out.error.where == "settings.tile.q"


@pytest.mark.parametrize("bad, where", [
    ({"networks": "alexnet"}, "settings.networks"),
    ({"seed": "x"}, "settings.seed"),
    ({"curve_alus": [48]}, "settings.curve_alus[0]"),
    ({"bandwidth_gbps": -1}, "settings.bandwidth_gbps"),
    ({"tile": [1]}, "settings.tile"),
])
def test_bad_session_settings(bad, where):
    from core.merit.engine import check_settings

    with pytest.raises(InputError) as e:
        check_settings(bad)
    assert e.value.where == where
