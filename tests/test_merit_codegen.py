"""Code generated from MERIT transforms (core.merit.codegen_c / codegen_cuda / codegen_run) and the
user-defined ⊙ (combine/reduce) of core.merit_transform.strategies."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import json
import shutil
import subprocess

import numpy as np
import pytest

from core.errors import InputError
from core.merit import codegen_c as CG
from core.merit import codegen_cuda as CU
from core.merit import codegen_rows as CR
from core.merit.result import MeritResult
from core.merit_transform import workloads as W
from core.merit.codegen_run import TOLERANCE, check_c, check_cuda, find_compiler, max_rel_error
from core.merit.evaluate import evaluate, naive_rows
from core.merit_transform.fileformat import workload_from_json

pytestmark = pytest.mark.slow          # compiles C

needs_cc = pytest.mark.skipif(find_compiler() is None, reason="no C compiler (gcc, cc, clang) here")
needs_cxx = pytest.mark.skipif(find_compiler(("g++", "clang++")) is None, reason="no C++ compiler here")

# GEMM-like built-ins: a parallel index only one operand moves with on each side, M >= 4
PACKED = {"gemm", "alexnet-conv1", "dilated", "strided", "residual"}


def _data(wl, seed=0):
    data = wl.make_data(np.random.default_rng(seed))
    for st in wl.stages:
        data[st.name] = evaluate(st, data)
    return data


@needs_cc
@pytest.mark.parametrize("name", W.names())
def test_every_builtin_transform_generates_c_that_matches_numpy(name):
    wl = W.WORKLOADS[name]
    data = _data(wl)
    r = check_c(wl.stages, data, wl.tile, lambda: wl.reference(data), rounds=1)
    assert r.compiled and r.run, r.message
    assert r.verified, r.message
    assert r.errors is not None
    variants = set(r.errors)
    assert {"naive", "tiled"} <= variants and (("packed" in variants) == (name in PACKED))
    assert ("rows" in variants) == all(CR.rows_plan(st) is not None for st in wl.stages)
    assert all(e < TOLERANCE for e in r.errors.values()) and r.max_rel_error == max(r.errors.values())
    assert set(r.timings_s) == variants | {"numpy"} and all(v > 0 for v in r.timings_s.values())
    assert r.best in variants - {"naive"} and r.time_s == r.timings_s[r.best]
    assert r.threads >= 1 and r.sources and "#pragma omp" in next(iter(r.sources.values()))


@needs_cc
@pytest.mark.parametrize("name, tile", [
    ("conv3x3", {"y": 3, "x": 5, "ky": 2}),             # edge tiles in p and a: partial sums across a-tiles
    ("motion", {"dy": 4, "dx": 5, "i": 3, "j": 8}),      # reduction along j, a-tiles along i
    ("bilateral", {"y": 7, "x": 9, "kx": 2}),           # two accumulators, per-output centre, a-tiles
    ("residual", {"oc": 3, "y": 5, "x": 7, "ic": 3}),    # PostLoop reads R after a-tiles
    ("pixel-shuffle", {"c": 3, "x": 5}),                 # nothing accumulates
    ("gemm", {"m": 5, "n": 7, "k": 100}),
])
def test_tiles_that_do_not_divide_the_ranges(name, tile):
    wl = W.WORKLOADS[name]
    data = _data(wl, seed=3)
    r = check_c(wl.stages, data, tile, None, rounds=1)
    assert r.verified, (r.message, r.errors)


def test_error_measure_is_relative_to_the_largest_output():
    ref = np.array([100.0, -1e-9, 3.0])
    assert max_rel_error(ref + np.array([0, 1e-3, 0]), ref) == pytest.approx(1e-5)
    assert max_rel_error(np.array([np.nan, 0, 0]), ref) == float("inf")
    assert max_rel_error(ref[:2], ref) == float("inf")


def test_the_packed_view_of_a_convolution_is_a_gemm_and_others_are_not():
    v = CG.gemm_view(W.conv(8, 10, 10, 16, 3, pad=1))
    assert v.M == ["oc"] and v.N == ["y", "x"] and v.K == ["ic", "ky", "kx"] and v.batch == []
    assert CG.gemm_view(W.WORKLOADS["depthwise"].stages[0]) is None          # M = 1: no register block
    assert CG.gemm_view(W.WORKLOADS["motion"].stages[0]) is None             # l1 is not bilinear
    corr = W.correlation(4, 6, 6, 2)
    assert CG.gemm_view(corr) is None


# ---------------------------------------------------------------- user-defined ⊙
def _sad_json(**extra):
    d = {"name": "sad", "parallel": [["y", 5], ["x", 6]], "accumulate": [["i", 3], ["j", 3]],
         "operands": [{"name": "A", "shape": [7, 8], "map": {"y": [0], "i": [0], "x": [1], "j": [1]}},
                      {"name": "B", "shape": [3, 3], "map": {"i": [0], "j": [1]}}]}
    d.update(extra)
    return d


def _windows(a, b):
    return np.lib.stride_tricks.sliding_window_view(a, b.shape)        # (5, 6, 3, 3)


COMBOS = [
    ({"combine": "absdiff", "reduce": "sum"}, lambda w, b: np.abs(w - b).sum(axis=(2, 3))),
    ({"combine": "mul", "reduce": "max"}, lambda w, b: (w * b).max(axis=(2, 3))),
    ({"combine": "min", "reduce": "min"}, lambda w, b: np.minimum(w, b).min(axis=(2, 3))),
    ({"combine": "sqdiff", "reduce": "sum"}, lambda w, b: ((w - b) ** 2).sum(axis=(2, 3))),
    ({"combine": "add", "reduce": "prod"}, lambda w, b: (w + b).prod(axis=(2, 3))),
    ({"reduce": "max"}, lambda w, b: (w * b).max(axis=(2, 3))),          # two operands: combine defaults to mul
    ({"strategy": "max"}, lambda w, b: (w * b).max(axis=(2, 3))),        # was refused before
    ({"strategy": "sad"}, lambda w, b: np.abs(w - b).sum(axis=(2, 3))),
]


@pytest.mark.parametrize("extra, direct", COMBOS)
def test_user_defined_odot_is_evaluated_as_the_direct_numpy_computation(extra, direct):
    wl = workload_from_json(_sad_json(**extra))
    t = wl.stages[0]
    assert "/" in t.strategy
    data = wl.make_data(np.random.default_rng(1))
    out = evaluate(t, data)
    want = direct(_windows(data["A"], data["B"]), data["B"])
    assert np.allclose(out.reshape(5, 6), want, rtol=1e-12, atol=1e-12)
    assert np.allclose(naive_rows(t, data, list(range(30))), out.reshape(-1), rtol=1e-12, atol=1e-12)


@needs_cc
@pytest.mark.parametrize("extra", [c for c, _ in COMBOS[:5]])
def test_user_defined_odot_generates_c_that_matches(extra):
    wl = workload_from_json(_sad_json(**extra, tile={"y": 2, "x": 4, "j": 2}))
    data = wl.make_data(np.random.default_rng(2))
    r = check_c(wl.stages, data, wl.tile, None, rounds=1)
    assert r.verified, r.message


def test_max_pooling_as_one_operand_value_max():
    d = {"name": "pool", "parallel": [["y", 4], ["x", 4]], "accumulate": [["i", 2], ["j", 2]],
         "operands": [{"name": "I", "shape": [8, 8], "map": {"y": [0, 2], "i": [0], "x": [1, 2], "j": [1]}}],
         "strategy": "max"}
    wl = workload_from_json(d)
    assert wl.stages[0].strategy == "value/max"
    data = wl.make_data(np.random.default_rng(0))
    want = data["I"].reshape(4, 2, 4, 2).max(axis=(1, 3))
    assert np.array_equal(evaluate(wl.stages[0], data), want)
    if find_compiler():
        assert check_c(wl.stages, data, {"y": 2}, None, rounds=1).verified


@pytest.mark.parametrize("extra, where, words", [
    ({"combine": "xor"}, "transform.combine", "unknown combine 'xor'"),
    ({"combine": "absdiff", "reduce": "median"}, "transform.reduce", "unknown reduce 'median'"),
    ({"combine": "abs"}, "transform.combine", "takes 1 operand(s), the transform has 2"),
    ({"combine": 3}, "transform.combine", "unknown combine 3"),
    ({"strategy": "dot", "combine": "mul"}, "transform.strategy", "either a strategy"),
    ({"strategy": "bogus"}, "transform.strategy", "unknown strategy 'bogus'"),
    ({"strategy": "absdiff/median"}, "transform.strategy", "unknown strategy"),
])
def test_bad_odot_names_the_field(extra, where, words):
    with pytest.raises(InputError) as e:
        workload_from_json(_sad_json(**extra))
    assert e.value.where == where and words in e.value.message


def test_bad_odot_on_the_command_line_exits_2(tmp_path):
    f = tmp_path / "t.json"
    f.write_text(json.dumps(_sad_json(combine="xor")))
    import sys

    p = subprocess.run([sys.executable, "main.py", "merit", "--transform", str(f), "--networks",
                        "", "--no-table-ix", "--curve", "32"], capture_output=True, text=True,
                       cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert p.returncode == 2 and "combine" in p.stderr and "Traceback" not in p.stderr


# ---------------------------------------------------------------- CUDA
@needs_cxx
@pytest.mark.parametrize("name", ["conv3x3", "strided", "motion", "bilateral", "separable", "pixel-shuffle",
                                  "correlation", "gemm"])
def test_cuda_kernels_run_in_the_cpu_emulation_and_match(name):
    from core.merit import banks as B

    wl = W.WORKLOADS[name]
    data = _data(wl)
    bank_stage = next(st for st in wl.stages if any(op.name == wl.bank_operand for op in st.operands))
    rep = B.report(bank_stage, bank_stage.operand(wl.bank_operand), wl.tile, 8)
    r = check_cuda(wl.stages, data, wl.tile, rep, wl.bank_operand, nvcc_compile=False)
    em = r.emulated_check
    assert em is not None and em.ran and em.ok and em.max_rel_error is not None and em.max_rel_error < TOLERANCE, \
        em and em.message
    assert r.verified is False or r.gpu                           # verified only where it ran on a GPU
    if not r.gpu:
        assert r.message.startswith("not run: no")
    assert "__shared__" in next(iter(r.sources.values())) and "__syncthreads()" in next(iter(r.sources.values()))


def test_the_cuda_bank_layout_is_the_engines_and_reproduces_its_bank_grid():
    from core.merit import banks as B

    wl = W.WORKLOADS["conv3x3"]
    t = wl.stages[0]
    rep = B.report(t, t.operand("I"), wl.tile, 8)
    fp = tuple(rep.footprint)
    lay, note = CU.pick_layout(rep, fp)
    assert lay is not None and lay.name == "xor" and lay.pitch == 8 and "12 padding words" in note   # Fig. 6 (ii-c)
    for L in rep.layouts:
        parsed = CU.parse_layout(L, fp[-1])
        if L.layout.startswith("retile"):
            assert parsed is None
        else:
            assert parsed is not None and CU.layout_matches(parsed, L, int(np.prod(fp[:-1])), 8)
    prog = CU.cuda_program(t, wl.tile, rep, "I")
    assert "^ ((((" in prog.source and "pitch 8" in prog.source
    # AlexNet CONV1: strided reads need padding inside the rows (1 word after every 4)
    a1 = W.WORKLOADS["alexnet-conv1"]
    rep1 = B.report(a1.stages[0], a1.stages[0].operand("I"), a1.tile, 8)
    lay1, _ = CU.pick_layout(rep1, tuple(rep1.footprint))
    assert lay1.kind == "pad" and (lay1.g, lay1.p) == (4, 1)


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="no nvcc here")
def test_nvcc_compiles_the_cuda_source():
    wl = W.WORKLOADS["conv3x3"]
    r = check_cuda(wl.stages, _data(wl), wl.tile, None, None, emulate=False)
    assert r.compiled, r.message


# ---------------------------------------------------------------- engine, JSON, --emit
def _cli_run(*argv):
    import argparse

    from core.engine import get_engine
    from core.jobs import CancelToken
    from core.jobs import run_foreground

    spec = get_engine("merit")
    p = argparse.ArgumentParser()
    spec.add_cli_arguments(p)
    out = run_foreground(spec.run(spec.request_from_cli(p.parse_args(list(argv))), CancelToken()), quiet=True)
    assert out.error is None, out.error
    assert isinstance(out.result, MeritResult)
    return spec, out.result


@needs_cc
def test_emit_writes_sources_and_a_makefile_that_builds_and_checks(tmp_path):
    spec, r = _cli_run("--workload", "conv3x3", "--networks", "", "--no-table-ix", "--curve", "32",
                       "--emit", str(tmp_path / "out"))
    cg = r.codegen
    assert cg is not None
    c, cu = cg.c, cg.cuda
    assert c.verified is True and c.max_rel_error is not None and c.max_rel_error < 1e-5
    assert set(c.timings_s) >= {"naive", "tiled", "numpy"}
    assert cu.verified is False and "not run" in cu.message and cu.max_rel_error is None
    assert cu.emulated_check is not None and cu.emulated_check.ok is True
    assert json.loads(json.dumps(r.to_json()))["codegen"]["c"]["sources"] == c.sources
    text = spec.format_text(r)
    assert "C (-O3 -march=native -fopenmp" in text and "emulated check: ok" in text
    out = tmp_path / "out"
    names = {p.name for p in out.iterdir()}
    assert {"Makefile", "merit_conv3x3.c", "merit_conv3x3.cu", "merit_conv3x3_emulated.cpp", "data"} <= names
    if shutil.which("make"):
        b = subprocess.run(["make", "-s", "merit_conv3x3"], cwd=out, capture_output=True, text=True)
        assert b.returncode == 0, b.stderr
        run = subprocess.run(["./merit_conv3x3", "data/merit_conv3x3", "1"], cwd=out, capture_output=True, text=True)
        assert run.returncode == 0 and "median_s" in run.stdout
        ref = np.fromfile(out / "data/merit_conv3x3/numpy_reference.f32", dtype=np.float32)
        for v in ("naive", "tiled"):
            got = np.fromfile(out / f"data/merit_conv3x3/out_{v}.f32", dtype=np.float32)
            assert max_rel_error(got, ref) < 1e-5


def test_without_codegen_the_result_has_no_codegen_and_reads_as_version_1():
    _, r = _cli_run("--workload", "gemm", "--networks", "", "--no-table-ix", "--curve", "32")
    stored = r.to_json()
    assert r.codegen is None and "codegen" not in stored and MeritResult.VERSION == 3
    assert MeritResult.from_json(stored, version=1) == r              # a version-1 result reads unchanged


def test_emit_and_no_codegen_conflict():
    import argparse

    from core.engine import get_engine

    spec = get_engine("merit")
    p = argparse.ArgumentParser()
    spec.add_cli_arguments(p)
    with pytest.raises(InputError) as e:
        spec.request_from_cli(p.parse_args(["--workload", "gemm", "--emit", "x", "--no-codegen"]))
    assert e.value.where == "--emit"


def test_codegen_settings_are_checked():
    from core.merit.engine import check_settings

    with pytest.raises(InputError) as e:
        check_settings({"codegen": "yes"})
    assert e.value.where == "settings.codegen"
    with pytest.raises(InputError) as e:
        check_settings({"emit_dir": 5})
    assert e.value.where == "settings.emit_dir"


# ---------------------------------------------------------------- panel
@needs_cc
def test_the_code_tab_shows_the_code_and_the_check(qtbot, tmp_path):
    from core.engine import JobRequest, get_engine
    from core.jobs import CancelToken
    from core.workload import MeritTransformWorkload
    from gui.panels.merit import NO_CODE_TEXT, PANEL
    from panel_context import FakeContext

    spec = get_engine("merit")
    s = dict(spec.default_settings(), networks=[], table_ix=False, curve_alus=[32])
    assert s["codegen"] is True                       # on by default in the window
    typed = list(spec.run(JobRequest(MeritTransformWorkload("gemm"), None, s), CancelToken()))[-1].data
    result = json.loads(json.dumps(typed.to_json()))                  # as a session stores it
    panel = PANEL(spec, FakeContext())
    qtbot.addWidget(panel)
    panel.resize(1100, 800)
    panel.show_result(MeritResult.from_json(result))
    assert panel.codegen_check.isChecked()
    assert [panel.code_file_box.itemText(i) for i in range(panel.code_file_box.count())] == \
        ["merit_gemm.c", "merit_gemm.cu"]
    assert "merit_gemm_packed" in panel.code_view.toPlainText() and "merit_micro" in panel.code_view.toPlainText()
    panel.code_file_box.setCurrentIndex(1)
    assert "__global__ void __launch_bounds__(128) merit_gemm_cuda" in panel.code_view.toPlainText()
    assert "verified" in panel.code_status.text() and "not run: no" in panel.code_status.text()
    kernels = [panel.code_table.item(r, 1).text() for r in range(panel.code_table.rowCount())]
    assert {"naive", "numpy"} <= set(kernels) and any(k.startswith("packed") or k.startswith("tiled") for k in kernels)
    assert "merit_gemm_cuda" in kernels
    panel.tabs.setCurrentWidget(panel.code_tab)
    panel.grab()
    written = panel.save_sources(str(tmp_path / "src"))
    assert sorted(os.path.basename(p) for p in written) == ["merit_gemm.c", "merit_gemm.cu"]
    assert (tmp_path / "src" / "merit_gemm.c").read_text() == result["codegen"]["c"]["sources"]["merit_gemm.c"]
    result.pop("codegen")
    panel.show_result(MeritResult.from_json(result))
    assert panel.code_status.text() == NO_CODE_TEXT and panel.code_view.toPlainText() == ""
    assert not panel.code_save_button.isEnabled()


@needs_cc
def test_unroll_and_jam_and_the_vectorisable_exp_keep_the_numbers():
    dw = W.WORKLOADS["depthwise"]
    prog = CG.c_program(dw.stages[0], {"c": 1, "y": 8, "x": 16})
    tiled = next(k for k in prog.kernels if k.variant == "tiled")
    assert "unroll-and-jam" in tiled.note and "4 outputs along y" in tiled.note
    assert check_c(dw.stages, _data(dw), {"c": 1, "y": 8, "x": 16}, None, rounds=1).verified
    bl = W.WORKLOADS["bilateral"]
    prog = CG.c_program(bl.stages[0], bl.tile)
    naive, tiled = prog.kernels[0], prog.kernels[1]
    assert "merit_expf(" in tiled.text and "merit_expf(" not in naive.text and "expf(" in naive.text
    r = check_c(bl.stages, _data(bl), bl.tile, None, rounds=1)
    assert r.verified and r.errors is not None and r.errors["tiled"] < 1e-6


@needs_cxx
def test_a_tile_of_more_than_1024_outputs_gives_threads_several():
    wl = W.WORKLOADS["gemm"]
    tile = {"m": 48, "n": 40, "k": 16}                        # 1920 outputs in one block
    prog = CU.cuda_program(wl.stages[0], tile)
    assert (prog.threads, prog.outputs_per_thread, prog.blocks) == (1024, 2, 1)
    r = check_cuda(wl.stages, _data(wl), tile, None, None, nvcc_compile=False)
    assert r.emulated_check is not None and r.emulated_check.ok, r.emulated_check and r.emulated_check.message



@needs_cxx
def test_a_tile_over_48_kb_runs_from_dynamic_shared_memory_in_the_emulation():
    """Issue 31: footprints of 78 KB (over the static 48 KB, within Hopper's opt-in 227 KB) are kept and
    declared dynamically; the host opts in and launches with the byte count; the emulation runs it."""
    t = W.conv(32, 16, 16, 32, 3, pad=1, name="dyn")
    tile = {"oc": 32, "y": 16, "x": 16}                       # a-range whole: I 32x18x18 + W 32x32x3x3
    prog = CU.cuda_program(t, tile)
    assert prog.dynamic and prog.smem_bytes == 4 * (32 * 18 * 18 + 32 * 32 * 9) and not prog.ext["ic"] < 32
    assert "MERIT_DYNAMIC_SMEM(merit_smem, 19584)" in prog.source and "__shared__ float s" not in prog.source
    assert f"cudaFuncAttributeMaxDynamicSharedMemorySize, {prog.smem_bytes})" in prog.source
    assert f"<<<1, 1024, {prog.smem_bytes}>>>" in prog.source and "__launch_bounds__(1024)" in prog.source
    rng = np.random.default_rng(5)
    data = {"I": rng.standard_normal((32, 16, 16)), "W": rng.standard_normal((32, 32, 3, 3))}
    r = check_cuda([t], data, tile, None, None, nvcc_compile=False)
    assert r.kernels[0].dynamic_smem and r.kernels[0].smem_limit == 227 * 1024
    assert r.emulated_check is not None and r.emulated_check.ok, r.emulated_check and r.emulated_check.message

@needs_cxx
def test_negative_strides_and_offsets_in_every_kernel():
    """A true (flipped) convolution, I[y - ky + 2, x - kx + 2], with GEMM-like channels: all three C
    kernels and the CUDA emulation read it right."""
    d = {"name": "flip", "parallel": [["oc", 4], ["y", 6], ["x", 7]], "accumulate": [["ic", 2], ["ky", 3], ["kx", 3]],
         "operands": [{"name": "I", "shape": [2, 8, 9], "map": {"ic": [0], "y": [1], "ky": [1, -1, 2], "x": [2],
                                                                 "kx": [2, -1, 2]}},
                      {"name": "W", "shape": [4, 2, 3, 3], "map": {"oc": [0], "ic": [1], "ky": [2], "kx": [3]}}],
         "tile": {"y": 4, "x": 4, "kx": 2}}
    wl = workload_from_json(d)
    t = wl.stages[0]
    data = wl.make_data(np.random.default_rng(5))
    I, Wt = data["I"], data["W"]
    want = np.zeros((4, 6, 7))
    for ky in range(3):
        for kx in range(3):
            want += np.einsum("oc,cyx->oyx", Wt[:, :, ky, kx], I[:, 2 - ky:8 - ky, 2 - kx:9 - kx])
    assert np.allclose(evaluate(t, data).reshape(4, 6, 7), want)
    r = check_c([t], data, wl.tile, None, rounds=1)
    assert r.verified and r.errors is not None and "packed" in r.errors, r
    cu = check_cuda([t], data, wl.tile, None, None, nvcc_compile=False)
    assert cu.emulated_check is not None and cu.emulated_check.ok, cu.emulated_check and cu.emulated_check.message


# ---------------------------------------------------------------- the rows kernel (short windows)
@pytest.mark.parametrize("t, lane, inner, outer", [
    (W.depthwise(64, 112, 112), "x", [], ["c", "y"]),                    # 9 taps
    (W.separable_stages(1024, 1024, 5)[0], "x", [], ["y"]),            # row pass: x and j move along one axis
    (W.separable_stages(1024, 1024, 5)[1], "x", [], ["y"]),            # column pass
    (W.pixel_shuffle(64, 128, 128, 2), "x", ["j"], ["c", "y", "i"]),    # a copy: j written out per lane
    (W.bilateral(512, 512, 5), "x", [], ["y"]),                         # per-output centre pixel, 25 steps
])
def test_short_window_transforms_get_the_rows_kernel_along_their_unit_stride_row(t, lane, inner, outer):
    plan = CR.rows_plan(t)
    assert plan is not None and (plan.lane, plan.inner, plan.outer) == (lane, inner, outer)
    k = CR.rows_kernel(t, "f")
    assert k is not None and k.variant == "rows"
    assert "P_acc" not in k.text and "simdlen(MERIT_SIMDLEN)" in k.text      # sums in registers, wide vectors
    assert ("schedule(static)" in k.text) == (t.p_count * t.a_count >= CR.ROWS_PARALLEL_MIN_WORK)
    assert ("merit_stream(" in k.text) == (4 * t.p_count >= CR.STREAM_MIN_BYTES)
    assert "for (long ky" not in k.text and "for (long j " not in k.text   # every a-step written out


@pytest.mark.parametrize("t", [
    W.conv(8, 10, 10, 16, 3, pad=1),          # 72 a-steps: a long window (the packed kernel's)
    W.motion_estimation(64, 64, 8, 4),        # the unit-stride lane (dx) has 9 outputs: too short a run
    W.correlation(4, 6, 6, 2),                # p4 runs 5, p2 has 25 outputs per lane
    W.gemm(64, 64, 128),                      # 128 steps
])
def test_long_windows_and_short_rows_get_no_rows_kernel(t):
    assert CR.rows_plan(t) is None and CR.rows_kernel(t, "f") is None
    assert "rows" not in {k.variant for k in CG.c_program(t, {}).kernels}


@needs_cc
@pytest.mark.parametrize("name", ["depthwise", "separable", "pixel-shuffle", "bilateral", "gemm"])
def test_rows_kernel_with_threads_streaming_stores_and_chunked_rows_matches(name, monkeypatch):
    # the toy sizes are under every threshold: force each path (threads, streaming stores, rows cut
    # into chunks with a remainder) so that they run and are checked here
    monkeypatch.setattr(CR, "ROWS_PARALLEL_MIN_WORK", 1)
    monkeypatch.setattr(CR, "STREAM_MIN_BYTES", 1)
    monkeypatch.setattr(CR, "ROWS_MAX_RUN", 7)
    wl = W.WORKLOADS[name]
    text = "".join(CR.rows_kernel(st, "f").text for st in wl.stages)
    assert "schedule(static)" in text and "merit_stream(" in text and "C += " in text
    data = _data(wl, seed=5)
    r = check_c(wl.stages, data, wl.tile, None, rounds=1, threads=2)
    assert r.errors is not None and "rows" in r.errors and r.verified, (r.message, r.errors)


@needs_cc
def test_a_user_transform_with_the_same_access_gets_the_rows_kernel():
    # a 1-D 7-tap max filter written by a user: nothing in the rows kernel knows its name
    d = {"name": "maxfilter", "parallel": [["y", 6], ["x", 40]], "accumulate": [["k", 7]],
         "combine": "value", "reduce": "max",
         "operands": [{"name": "A", "shape": [6, 46], "map": {"y": [0], "x": [1], "k": [1]}}]}
    wl = workload_from_json(d)
    t = wl.stages[0]
    assert CR.rows_plan(t).lane == "x"
    data = _data(wl, seed=2)
    r = check_c(wl.stages, data, {}, None, rounds=1)
    assert r.verified and r.errors is not None and "rows" in r.errors, r.message
    want = np.lib.stride_tricks.sliding_window_view(data["A"], 7, axis=1).max(axis=2)
    assert np.allclose(evaluate(t, data).reshape(6, 40), want)
