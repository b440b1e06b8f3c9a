"""The merit engine through its command-line path, its result and its input errors; its settings
schema, its workloads from the library and format-1 sessions."""

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from core.merit.result import MeritResult
from core.engine import JobRequest, get_engine
from core.errors import InputError
from core.jobs import CancelToken, FinalResult, MetricPoint, run_foreground
from core.workload import FpspFilter, Kernel, KernelSet, MeritTransformWorkload

ROOT = Path(__file__).resolve().parents[1]
QUICK = {"networks": [], "table_ix": False, "curve_alus": [32]}


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
    assert isinstance(out.result, MeritResult)
    return spec, out.result


def test_registry_entry():
    spec = get_engine("merit")
    assert (spec.title, spec.order, spec.workload_kinds, spec.target_kinds) == (
        "MERIT mapping", 30, ("merit_transform", "kernels"), ())


def test_cli_run_fig6_workload():
    spec, r = _run("--workload", "conv3x3", "--networks", "", "--no-table-ix", "--curve", "32,64")
    assert MeritResult.from_json(json.loads(json.dumps(r.to_json()))) == r        # stored and read back
    assert r.verification.ok and r.verification.max_abs_diff is not None and r.verification.max_abs_diff < 1e-12
    assert r.tiling.footprints["0:I"] == [1, 6, 6]
    layouts = {L.layout: L for L in r.banks.layouts}
    assert layouts["naive"].extra_cycles > 0 and layouts["xor"].extra_cycles == 0
    assert r.butterfly_examples["eq13_H"] == ["100", "x10", "xx1"]
    assert r.butterfly_examples["eq16_H_prime"] == ["10x", "x1x", "001"]
    assert [row.rate for row in r.reuse.rows][:2] == pytest.approx([0.3333, 5.3333], abs=1e-3)
    assert r.meritz.curve.alus == [32, 64]
    rates = {(row.architecture, row.level): row.rate for row in r.reuse.rows}
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
    assert r.verification.ok and r.banks.banks == 4


@pytest.mark.parametrize("argv, where", [
    (["--workload", "conv3x3", "--banks", "6"], "settings.banks"),
    (["--workload", "conv3x3", "--alus", "100"], "settings.alus"),
    (["--workload", "nope"], "--workload"),
    (["--workload", "conv3x3", "--curve", "32,48"], "--curve"),
    (["--workload", "conv3x3", "--banks", "128"], "settings.banks"),
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
    assert e.value.where == f"{f}:2:15"          # line:column (core.checks reads every JSON file)
    f.write_text(json.dumps({"parallel": [["m", 4]], "accumulate": [["k", 3]], "operands": [
        {"name": "A", "shape": [4, 3], "map": {"m": [0, 2, 0], "k": [1]}},
        {"name": "B", "shape": [3], "map": {"k": [0]}}]}))
    with pytest.raises(InputError) as e:
        spec.request_from_cli(_parse("--transform", str(f))[1])
    assert "leave the tensor" in e.value.message


@pytest.mark.slow
def test_cancel_stops_the_model():
    spec = get_engine("merit")
    cancel = CancelToken()
    req = JobRequest(MeritTransformWorkload("gemm"), None, spec.default_settings())
    gen = spec.run(req, cancel)
    for ev in gen:
        if isinstance(ev, MetricPoint):
            cancel.cancel()
            break
    from core.jobs import Cancelled
    with pytest.raises(Cancelled):
        for _ in gen:
            pass


@pytest.mark.slow
def test_kernel_set_workload_as_convolution():
    spec = get_engine("merit")
    ks = KernelSet("blur", 16, [Kernel("g", [[1, 2, 1], [2, 4, 2], [1, 2, 1]]), Kernel("s", [[1, 0, -1]] * 3)])
    req = JobRequest(ks, None, dict(spec.default_settings(), **QUICK))
    out = run_foreground(spec.run(req, CancelToken()), quiet=True)
    assert out.error is None and out.result.verification.ok
    assert out.result.verification.output_shape == [2, 30, 30]


def test_mixed_kernel_sizes_are_a_workload_problem_and_refused():
    spec = get_engine("merit")
    ks = KernelSet("mixed", 1, [Kernel("a", [[1, 2, 1]] * 3), Kernel("b", [[1] * 5] * 5)])
    assert "3x3, 5x5" in spec.workload_problem(ks) and "one kernel size" in spec.workload_problem(ks)
    out = run_foreground(spec.run(JobRequest(ks, None, dict(spec.default_settings(), **QUICK)), CancelToken()),
                         quiet=True)
    assert isinstance(out.error, InputError) and out.error.where == "workload.kernels"
    assert spec.workload_problem(KernelSet("same", 1, ks.kernels[:1])) is None
    assert spec.workload_problem(MeritTransformWorkload("motion")) is None


@pytest.mark.parametrize("workload", [None, FpspFilter("gauss3")])
def test_a_run_without_a_merit_workload_says_so(workload):
    spec = get_engine("merit")
    out = run_foreground(spec.run(JobRequest(workload, None, spec.default_settings()), CancelToken()), quiet=True)
    assert isinstance(out.error, InputError) and out.error.where == "workload.kind"


def test_tile_override():
    _, r = _run("--workload", "conv5x5", "--tile", "y=8,x=8", "--networks", "", "--no-table-ix", "--curve", "32")
    assert r.tiling.footprints["0:I"] == [1, 12, 12]
    spec, args = _parse("--workload", "conv5x5", "--tile", "y=eight")
    with pytest.raises(InputError):
        spec.request_from_cli(args)
    spec, args = _parse("--workload", "conv5x5", "--tile", "q=8", "--networks", "", "--no-table-ix")
    out = run_foreground(spec.run(spec.request_from_cli(args), CancelToken()), quiet=True)
    assert isinstance(out.error, InputError) and out.error.where == "settings.tile.q"


@pytest.mark.parametrize("bad, where", [
    ({"workload": "conv3x3"}, "settings.workload"),        # the workload is the tab's library item now
    ({"transform": None}, "settings.transform"),
    ({"banks": 128}, "settings.banks"),
    ({"seed": -1}, "settings.seed"),
    ({"networks": ["vgg16", "vgg16"]}, "settings.networks[1]"),
    ({"tile": {"y": 0}}, "settings.tile.y"),
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


# ------------------------------------------------------------------ settings schema
def test_schema_describes_every_setting_with_the_ranges_the_engine_accepts():
    from core.merit.engine import BANK_COUNTS, MAX_ALUS, MAX_SEED, SETTINGS_SCHEMA, check_settings

    spec = get_engine("merit")
    props = SETTINGS_SCHEMA["properties"]
    assert set(props) == set(spec.default_settings())
    for key, prop in props.items():
        assert prop.get("title") and prop.get("description"), key
    # the extremes the schema (and so the widgets) allow, the engine accepts
    check_settings({"banks": BANK_COUNTS[-1], "alus": MAX_ALUS, "curve_alus": [32, MAX_ALUS], "seed": MAX_SEED,
                    "bandwidth_gbps": 1e-3, "networks": props["networks"]["items"]["enum"], "tile": {"y": 1}})
    for bad in ({"banks": BANK_COUNTS[-1] * 2}, {"alus": MAX_ALUS + 32}, {"seed": MAX_SEED + 1}):
        with pytest.raises(InputError):
            check_settings(bad)


# ------------------------------------------------------------------ format-1 sessions
def _v1(merit_settings, workload=None):
    return {"format": "dataflow-explorer-session", "version": 1,
            "workload": workload or {"kind": "fpsp_filter", "preset": "analognet2"},
            "target": {"kind": "scamp5", "registers": 6, "array_size": 256},
            "engines": {"merit": {"settings": merit_settings}}}


OLD = {"banks": 16, "alus": 256, "bandwidth_gbps": 6.4, "networks": ["vgg16"], "table_ix": False,
       "curve_alus": [32, 64], "seed": 3, "tile": {"y": 8}}


def test_v1_builtin_workload_becomes_a_library_item():
    from core.session import from_json

    p = from_json(_v1(dict(OLD, workload="motion", transform=None)))
    chosen = p.chosen("merit", "workloads")
    assert chosen.value == MeritTransformWorkload("motion")
    # workload and transform left the settings; settings added since come with their defaults
    assert p.settings("merit") == dict(get_engine("merit").default_settings(), **OLD)
    assert p.problem("merit", "workloads") is None
    assert p.request("merit").workload == MeritTransformWorkload("motion")


def test_v1_transform_becomes_a_transform_workload():
    from core.session import from_json

    transform = {"name": "gemm-small", "parallel": [["m", 4], ["n", 4]], "accumulate": [["k", 3]],
                 "operands": [{"name": "A", "shape": [4, 3], "map": {"m": [0], "k": [1]}},
                              {"name": "B", "shape": [3, 4], "map": {"k": [0], "n": [1]}}]}
    p = from_json(_v1(dict(OLD, workload="conv3x3", transform=transform)))
    assert p.chosen("merit", "workloads").value == MeritTransformWorkload(transform=transform)
    assert "transform" not in p.settings("merit")


def test_v1_window_kernels_keep_the_sessions_kernel_set():
    from core.session import from_json

    ks = {"kind": "kernels", "name": "blur", "denominator": 16, "kernels": [{"name": "g", "values": [[1, 2, 1]] * 3}]}
    p = from_json(_v1(dict(OLD, workload="window-kernels", transform=None), ks))
    chosen = p.chosen("merit", "workloads")
    assert chosen.kind == "kernels" and chosen.value.name == "blur"
    # with an FPSP filter in the session (no kernel set) the tab gets a starter item it can run instead
    p = from_json(_v1(dict(OLD, workload="window-kernels", transform=None)))
    assert p.chosen("merit", "workloads").kind in ("kernels", "merit_transform")
    assert p.problem("merit", "workloads") is None


def test_v1_unknown_workload_is_refused_with_its_place():
    from core.errors import SessionError
    from core.session import from_json

    with pytest.raises(SessionError) as e:
        from_json(_v1(dict(OLD, workload="nope", transform=None)))
    assert e.value.where == "session.engines.merit.settings.workload" and "nope" in e.value.message


def test_the_kept_example_session_opens_with_a_merit_workload():
    from core.session import load

    p = load(ROOT / "tests" / "data" / "sessions_v1" / "example_session.dfx")
    assert p.chosen("merit", "workloads").value == MeritTransformWorkload("conv3x3")
    assert "workload" not in p.settings("merit") and p.problem("merit", "workloads") is None


# ------------------------------------------------------------------ the command line
@pytest.mark.slow
def test_command_line_json(tmp_path):
    out = subprocess.run([sys.executable, "main.py", "merit", "--workload", "gemm", "--networks", "",
                          "--no-table-ix", "--curve", "32,64", "--tile", "m=4", "--json"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    assert r["workload"] == "gemm" and r["verification"]["ok"] and r["meritz"]["curve"]["alus"] == [32, 64]
    assert r["tiling"]["tile"]["parallel"]["m"] == 4
    bad = subprocess.run([sys.executable, "main.py", "merit", "--workload", "gemm", "--tile", "m=4,n"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert bad.returncode != 0 and "--tile" in bad.stderr and "'n'" in bad.stderr


def test_tile_and_alu_list_texts():
    from core.merit.engine import format_tile, parse_alu_list, parse_tile

    assert parse_tile(format_tile({"y": 16, "x": 8})) == {"y": 16, "x": 8}
    assert parse_tile("") == {}
    for text in ("y=16,x", "y=0", "y=2,y=4", "=3"):
        with pytest.raises(InputError):
            parse_tile(text)
    assert parse_alu_list("32, 64,") == [32, 64]
    for text in ("32,x", "48", "0"):
        with pytest.raises(InputError):
            parse_alu_list(text)


def test_layers_carry_their_tile_footprints():
    """What the panel's layer -> tile view reads: each MERIT-z layer's parallel indices and footprints."""
    _, r = _run("--workload", "conv3x3", "--networks", "", "--no-table-ix", "--curve", "32")
    layer = r.meritz.suites[-1].layers[0]
    tile = layer.tile
    assert layer.parallel == ["oc", "y", "x"] and layer.footprints is not None
    # eq. 9 for the input: channels ic, rows y + ky - 1, columns x + kx - 1
    assert layer.footprints["0:I"] == [tile["ic"], tile["y"] + tile["ky"] - 1, tile["x"] + tile["kx"] - 1]
