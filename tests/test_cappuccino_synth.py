"""The synthesised program (issue 17): weight file format and its checks, every op kind's C against
the numpy reference (each tensor, each mode, several vector widths and thread counts), and the
structure of the source (small, weights not in it)."""

from __future__ import annotations

import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest

from core.cappuccino.result import CappuccinoResult
from core.cappuccino import synth, synth_program, weights_file
from core.cappuccino.forward import forward_reference
from core.cappuccino.model import INPUT
from core.cappuccino.numerics import IMPRECISE, PRECISE, RELAXED
from tests.capp_synth_models import every_kind_model

pytestmark = pytest.mark.slow          # compiles C

CC = synth.find_compiler()
needs_cc = pytest.mark.skipif(CC is None, reason="no C compiler (gcc/cc/clang) on PATH: the generated C cannot be built")


def _no_cancel() -> None:
    return None


# ------------------------------------------------------------------ weight file
def _sample() -> weights_file.WeightFile:
    return weights_file.WeightFile(8, weights_file.fingerprint("net"), [b"\x01" * 100, b"", b"\x02" * 64, b"\x03"])


def test_weight_file_round_trip_and_alignment(tmp_path):
    wf = _sample()
    size = weights_file.write(tmp_path / "w.bin", wf)
    back = weights_file.read(tmp_path / "w.bin", expect_sizes=[100, 0, 64, 1], expect_fingerprint=wf.fingerprint,
                             expect_v=8)
    assert back == wf and size == (tmp_path / "w.bin").stat().st_size
    data = weights_file.encode(wf)
    for i in range(4):
        off, n = struct.unpack_from("<QQ", data, 32 + 16 * i)
        assert n == 0 or off % 64 == 0


@pytest.mark.parametrize("damage, expect, message", [
    (lambda d: b"NOTCAPPW" + d[8:], {}, "not a Cappuccino weight file"),
    (lambda d: d[:8] + struct.pack("<I", 99) + d[12:], {}, "format version 99"),
    (lambda d: d, {"expect_v": 16}, "vector width 8"),
    (lambda d: d, {"expect_sizes": [100, 0, 64]}, "4 ops, the program has 3"),
    (lambda d: d, {"expect_fingerprint": 1}, "another network"),
    (lambda d: d, {"expect_sizes": [100, 0, 60, 1]}, "op 2: 64 bytes of weights, expected 60"),
    (lambda d: d[:40], {}, "truncated op table"),
    (lambda d: d[:-70], {}, "outside the file"),
    (lambda d: d[:20], {}, "shorter than the 32-byte header"),
])
def test_weight_file_errors_say_what_is_wrong(damage, expect, message):
    data = damage(weights_file.encode(_sample()))
    with pytest.raises(weights_file.WeightFileError, match=message) as e:
        weights_file.decode(data, "w.bin", **expect)
    assert e.value.where == "w.bin"


@needs_cc
def test_program_refuses_a_weight_file_that_is_not_its_own(tmp_path):
    m = every_kind_model(images=1)
    prog = synth.synthesise_program(m, {}, 8, 1)
    other = synth.synthesise_program(m, {"c1": RELAXED}, 8, 1)      # same shapes, other modes
    (tmp_path / "p.c").write_text(prog.source)
    synth.compile_c(CC, tmp_path / "p.c", tmp_path / "p", True, _no_cancel)
    synth.write_images(tmp_path / "x.f32", m.x_val)
    cases = {"bad magic": b"XXXXXXXX" + prog.weights[8:],
             "fingerprint differs": other.weights,
             "shorter than its header": prog.weights[:10],
             "outside the file": prog.weights[:len(prog.weights) // 2]}
    for what, data in cases.items():
        (tmp_path / "w.bin").write_bytes(data)
        r = subprocess.run([str(tmp_path / "p"), str(tmp_path / "w.bin"), str(tmp_path / "x.f32"), "1", "0"],
                           capture_output=True, text=True)
        assert r.returncode == 3 and what in r.stderr and "w.bin" in r.stderr, (what, r.stderr)
    (tmp_path / "w.bin").write_bytes(prog.weights)
    ok = synth.run_program(tmp_path / "p", tmp_path / "x.f32", 1, 0.0, _no_cancel, weights=tmp_path / "w.bin")
    assert ok.passes >= 1


# ------------------------------------------------------------------ every op kind in C
def _run_dump(tmp_path: Path, m, modes: dict[str, str], V: int, threads: int, half_frames: bool = False):
    prog = synth.synthesise_program(m, modes, V, threads, half_frames=half_frames)
    src, exe, w = tmp_path / f"p{V}.c", tmp_path / f"p{V}", tmp_path / f"w{V}.bin"
    src.write_text(prog.source)
    w.write_bytes(prog.weights)
    synth.write_images(tmp_path / "x.f32", m.x_val)
    synth.compile_c(CC, src, exe, True, _no_cancel)
    rr = synth.run_program(exe, tmp_path / "x.f32", len(m.x_val), 0.0, _no_cancel, weights=w, threads=threads)
    subprocess.run([str(exe), str(w), str(tmp_path / "x.f32"), str(len(m.x_val)), "0", str(threads), "--dump",
                    str(tmp_path / "dump.f32")], check=True, capture_output=True)
    return prog, rr, synth_program.read_dump(tmp_path / "dump.f32", prog.plan)


@needs_cc
@pytest.mark.parametrize("mode, V, threads, half_frames", [
    (PRECISE, 8, 2, False), (RELAXED, 8, 2, False), (IMPRECISE, 8, 2, False), (IMPRECISE, 8, 2, True),
    (PRECISE, 4, 3, False), (PRECISE, 16, 1, False), ("mixed", 16, 2, False), ("mixed", 4, 2, True)])
def test_every_op_kind_in_c_matches_numpy(tmp_path, mode, V, threads, half_frames):
    m = every_kind_model()
    convs = [op.name for op in m.conv_ops]
    modes = ({n: (PRECISE, RELAXED, IMPRECISE)[i % 3] for i, n in enumerate(convs)} if mode == "mixed"
             else {n: mode for n in convs})
    prog, rr, dump = _run_dump(tmp_path, m, modes, V, threads, half_frames)
    assert any(f.half for f in prog.plan.frames) == (half_frames and mode != PRECISE)
    _, outs = forward_reference(m, m.x_val, modes, keep=True)
    ref = {op.name: o[-1] for op, o in zip(m.ops, outs)}
    ref[INPUT] = m.x_val[-1]
    kinds = {op.name: op.kind for op in m.ops}
    checked = set()
    half = mode in (IMPRECISE, "mixed")
    for name, got in dump.items():
        if name not in ref:
            continue                          # slices of a concatenation written by copies
        want = ref[name].reshape(got.shape)
        scale = max(1.0, float(np.abs(want).max()))
        tol = 4e-3 if half else 2e-5          # binary16 storage rounds; float32 differs only in summation order
        err = float(np.abs(got - want).max()) / scale
        assert err <= tol, (name, kinds.get(name), err)
        checked.add(kinds.get(name, "input"))
    # the fused residual conv (r1) writes the add's tensor, so "conv" and "add" are checked through it
    assert checked >= {"input", "conv", "pool", "concat", "add", "lrn", "gap", "fc", "softmax"}
    final = forward_reference(m, m.x_val, modes)[0]
    assert np.abs(rr.logits - final).max() <= (4e-3 if half else 2e-5)
    kinds_in_c = {op.kind for op in prog.plan.ops}
    assert kinds_in_c >= {"conv", "dw", "maxpool", "avgpool", "gap", "add", "lrn", "softmax", "none"}
    assert ("copy" in kinds_in_c) == (V > 4)                 # at V=4 every concatenated slice is aligned
    assert any(op.res >= 0 for op in prog.plan.ops)         # residual add fused into a conv


@needs_cc
def test_ops_shared_in_many_chunks_by_three_workers_match_numpy(tmp_path, monkeypatch):
    """Small chunks, so that every op of the small network is shared out (claims, done counters,
    one-chunk ops on worker 0) by 3 workers over 6 images; every tensor still matches numpy."""
    monkeypatch.setattr(synth_program, "CHUNK_WORK", 50)
    m = every_kind_model()
    modes = {op.name: RELAXED for op in m.conv_ops}
    prog, rr, dump = _run_dump(tmp_path, m, modes, 8, 3)
    assert "#define ANY_SHARED 1" in prog.source and max(op.chunks for op in prog.plan.ops) == 24
    _, outs = forward_reference(m, m.x_val, modes, keep=True)
    for op, o in zip(m.ops, outs):
        if op.name in dump:
            want = o[-1].reshape(dump[op.name].shape)
            assert np.abs(dump[op.name] - want).max() <= 2e-5 * max(1.0, float(np.abs(want).max())), op.name
    assert np.abs(rr.logits - forward_reference(m, m.x_val, modes)[0]).max() <= 2e-5


def test_plan_concat_is_zero_copy_when_aligned_and_copies_otherwise():
    m = every_kind_model()
    p8 = synth_program.plan(m, {}, 8, 2)
    copies = [op.name for op in p8.ops if op.kind == "copy"]
    assert copies == ["cat/copy0", "cat/copy1"]               # b3 (12 maps) is not whole stacks; b2 then starts at 28
    p4 = synth_program.plan(m, {}, 4, 2)
    assert not [op for op in p4.ops if op.kind == "copy"]      # at V=4 every slice is stack-aligned
    frame = {t.name: t.buf for t in p4.tensors}
    assert frame["b1"] == frame["b2"] == frame["b3"] == frame["cat"]
    assert {t.name: t.c0 for t in p4.tensors}["b2"] == 28


def test_source_is_small_and_holds_no_weights():
    m = every_kind_model()
    prog = synth.synthesise_program(m, {}, 8, 2)
    assert prog.source_lines < 1100          # the kernel library (~800 lines) plus one line per op and tensor
    w = m.ops[0].weight.reshape(-1)[:20]
    assert all(float(v).hex() not in prog.source for v in w)
    assert len(prog.weights) >= 4 * sum(op.weight.size for op in m.conv_ops)


def test_unsupported_op_is_named():
    m = every_kind_model()
    m.ops[3].mode = "lp"          # a pooling mode nothing computes
    with pytest.raises(Exception, match="b2: pooling mode 'lp'"):
        synth_program.plan(m, {}, 8, 2)


# ------------------------------------------------------------------ a small DAG network end to end
@needs_cc
def test_small_dag_network_end_to_end_through_the_engine(tmp_path):
    """ResNet-18 shrunk (32x32 input, channels / 8: residual adds, strided shortcuts, gap, fc,
    softmax) from an ONNX file: every mode's program checked against numpy and, when installed,
    onnxruntime on the same file; sizes, build times and errors in the result and the text."""
    import argparse

    from core.cappuccino import networks, ort_peer
    from core.cappuccino.engine import ENGINE
    from core.jobs import CancelToken, run_foreground

    onnx = networks.onnx_path("resnet18", resolution=32, divisor=8, folder=tmp_path)
    x = np.random.default_rng(3).standard_normal((3, 3, 32, 32)).astype(np.float32)
    np.savez(tmp_path / "val.npz", x=x, y=np.zeros(3, np.int64))
    p = argparse.ArgumentParser()
    ENGINE.add_cli_arguments(p)
    req = ENGINE.request_from_cli(p.parse_args(["--model", str(onnx), "--validation", str(tmp_path / "val.npz"),
                                                "--vector-width", "8", "--threads", "2", "--min-seconds", "0",
                                                "--repeats", "1", "--accuracy-budget", "0"]))
    out = run_foreground(ENGINE.run(req, CancelToken()), quiet=True)
    assert out.error is None, out.error
    r = out.result
    assert isinstance(r, CappuccinoResult)
    assert CappuccinoResult.from_json(r.to_json()) == r         # its JSON form reads back the same
    syn = r.synthesis
    progs = syn.programs
    assert progs is not None
    assert set(progs) == {"parallel", "relaxed", "imprecise", "parallel_inexact"}      # no naive baseline for a DAG
    assert "chains" in syn.baseline_note
    for k, prog in progs.items():
        assert prog.same_classifications and prog.mismatches == 0
        assert prog.max_rel_error <= (5e-3 if k == "imprecise" else 1e-5), (k, prog.max_rel_error)
        assert prog.source_lines < 1200 and prog.weight_file_bytes > 0 and prog.build_seconds > 0
    if ort_peer.version():
        assert syn.onnxruntime.threads == 2 and set(syn.onnxruntime.ratios) == set(progs)
        assert progs["parallel"].onnxruntime_max_rel_error <= 1e-5
        assert progs["imprecise"].onnxruntime_max_rel_error <= 5e-3
    else:
        assert "not installed" in syn.onnxruntime_note
    text = ENGINE.format_text(r)
    assert "max rel err" in text and "weights" in text
