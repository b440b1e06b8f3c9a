"""The convolution micro-kernels the synthesiser generates (issue 35): the register-block choice and,
in C, every tensor of a network of awkward shapes against numpy -- channels that are not a multiple
of V, a narrow input frame, stride 2, asymmetric padding and a non-square kernel, rows longer than a
block (blocks overlapping at the row end), 1x1 convolutions over a frame with halo (row blocks) and
without (flat blocks across rows), a fused residual on a 1x1, depthwise (8- and 7-pixel blocks), a misaligned
concatenation and a fully connected layer blocked over several output stacks -- in every mode, at
two vector widths and with 16 or 32 vector registers. The programs are built once per module."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from core.cappuccino import synth, synth_program
from core.cappuccino.forward import forward_reference
from core.cappuccino.graph_import import layer_table
from core.cappuccino.model import AddOp, CnnModel, ConcatOp, ConvOp, GlobalAvgPoolOp, Op
from core.cappuccino.numerics import IMPRECISE, PRECISE, RELAXED

pytestmark = pytest.mark.slow          # compiles C

CC = synth.find_compiler()
needs_cc = pytest.mark.skipif(CC is None, reason="no C compiler (gcc/cc/clang) on PATH: the generated C cannot be built")


def _w(rng: np.random.Generator, m: int, n: int, kh: int, kw: int | None = None) -> np.ndarray:
    kw = kh if kw is None else kw
    return (rng.standard_normal((m, n, kh, kw)) * np.sqrt(2.0 / (n * kh * kw))).astype(np.float32)


def _b(rng: np.random.Generator, m: int) -> np.ndarray:
    return (0.1 * rng.standard_normal(m)).astype(np.float32)


def odd_shapes_model(images: int = 3) -> CnnModel:
    rng = np.random.default_rng(35)
    ops: list[Op] = [
        # 5 input maps (a narrow frame), 37-wide rows (no block width divides them), 20 maps (a part stack)
        ConvOp("wide", _w(rng, 20, 5, 3), _b(rng, 20), 1, 1, True, (5, 23, 37), inputs=["input"]),
        ConvOp("s2", _w(rng, 33, 20, 3), _b(rng, 33), 2, 1, True, (20, 23, 37), inputs=["wide"]),
        # 1x1 over a frame with a halo (wide is also read by a padded 3x3): row blocks
        ConvOp("pw_row", _w(rng, 24, 20, 1), _b(rng, 24), 1, 0, True, (20, 23, 37), inputs=["wide"]),
        ConvOp("s3", _w(rng, 16, 24, 3), _b(rng, 16), 2, 1, True, (24, 23, 37), inputs=["pw_row"]),
        ConcatOp("cat", [(33, 12, 19), (16, 12, 19)], inputs=["s2", "s3"]),
        # 1x1 over a frame without halo: flat blocks running across rows
        ConvOp("pw_flat", _w(rng, 40, 49, 1), _b(rng, 40), 1, 0, True, (49, 12, 19), inputs=["cat"]),
        # 5x3 kernel, asymmetric padding -> (24, 12, 18)
        ConvOp("asym", _w(rng, 24, 40, 5, 3), _b(rng, 24), 1, 0, True, (40, 12, 19), pads=(2, 1, 2, 0),
               inputs=["pw_flat"]),
        ConvOp("dw2", _w(rng, 24, 1, 3), _b(rng, 24), 2, 1, True, (24, 12, 18), groups=24, inputs=["asym"]),
        ConvOp("pw_res", _w(rng, 24, 24, 1), _b(rng, 24), 1, 0, False, (24, 6, 9), inputs=["dw2"]),
        AddOp("res", (24, 6, 9), relu=True, inputs=["pw_res", "dw2"]),          # fused into pw_res
        # depthwise onto a 7-wide map (its own 7-pixel block)
        ConvOp("dw7", _w(rng, 24, 1, 3), _b(rng, 24), 1, 0, True, (24, 6, 9), groups=24, pads=(1, 0, 1, 0),
               inputs=["res"]),
        ConvOp("s2b", _w(rng, 36, 24, 3), _b(rng, 36), 2, 0, True, (24, 6, 7), inputs=["dw7"]),
        GlobalAvgPoolOp("gap", (36, 2, 3), inputs=["s2b"]),
        ConvOp("fc", _w(rng, 70, 36, 1), _b(rng, 70), 1, 0, False, (36, 1, 1), fc=True, inputs=["gap"]),
    ]
    x = rng.standard_normal((images, 5, 23, 37)).astype(np.float32)
    net = layer_table("odd-shapes", (5, 23, 37), ops, "seeded random weights")
    return CnnModel("odd-shapes", net, ops, x, np.zeros(images, np.int64), extra={"weights": "random (seed 35)"})


# ------------------------------------------------------------------ block choice
def test_blocks_fit_the_registers_divide_groups_and_cover_the_work():
    for regs in (16, 32):
        for stacks, width, rows, gout in [(4, 56, 56, 0), (32, 7, 7, 0), (256, 1, 1, 0), (1, 10, 5, 0), (6, 13, 13, 3),
                                          (8, 12544, 1, 0), (64, 49, 1, 0), (3, 1, 1, 0)]:
            rq, rp = synth_program.conv_blocking(stacks, width, rows, gout, regs)
            assert rq * rp + rq + 2 <= regs, (regs, stacks, width)          # accumulators + weights + a broadcast
            assert 1 <= rq <= stacks and 1 <= rp <= width
            assert not gout or gout % rq == 0
    assert synth_program.conv_blocking(4, 56, 56, 0, 32) == (2, 14)     # 56 = 4 x 14: no overlap, 28 accumulators
    rq, rp = synth_program.conv_blocking(256, 1, 1, 0, 32)               # fully connected: many stacks, one pixel
    assert rp == 1 and rq >= synth_program.FMA_CHAINS


def test_a_stack_groups_weights_fit_the_l2_cache_where_its_blocks_reuse_them():
    """Cache tiling (issue 35): rq x one output stack's weights within the L2 size, where a group has
    several blocks; an fc layer (one block per group) keeps the FMA units fed instead."""
    per_stack = 16 * 512 * 9 * 4                        # VGG conv5: 512 input maps, 3x3, float32, V = 16
    assert synth_program.conv_blocking(32, 14, 14, 0, 32, 512 * 9, 0.0, per_stack, None)[0] >= 2
    rq, _ = synth_program.conv_blocking(32, 14, 14, 0, 32, 512 * 9, 0.0, per_stack, 1 << 20)
    assert rq * per_stack <= 1 << 20
    assert synth_program.conv_blocking(32, 14, 14, 0, 32, 512 * 9, 0.0, per_stack, 64 << 10)[0] == 1
    fc = synth_program.conv_blocking(256, 1, 1, 0, 32, 25088, 0.0, 16 * 25088 * 4, 64 << 10)
    assert fc[0] >= synth_program.FMA_CHAINS


def test_plan_picks_row_and_flat_blocks():
    m = odd_shapes_model()
    ops = {op.name: op for op in synth_program.plan(m, {}, 16, 2).ops}
    assert not ops["pw_row"].flat and ops["pw_flat"].flat and not ops["wide"].flat
    assert ops["wide"].ps == 5 and ops["s2"].ps == 2 * 16 and ops["pw_flat"].ps == 16   # narrow frame; stride 2
    assert ops["pw_res+res"].res >= 0
    assert ops["fc"].rq > 1
    src = synth.synthesise_program(m, {}, 16, 2).source
    names = {synth_program.conv_kernel_name(op) for op in ops.values() if op.kind == "conv"}
    assert all(f"static __attribute__((noinline)) void {n}(" in src for n in names)
    assert src.count("static __attribute__((noinline)) void ck_") == len(names)     # one kernel per shape used


# ------------------------------------------------------------------ in C, every tensor
CASES = {"precise V16": (PRECISE, 16, 32, 2), "relaxed V8 16 registers": (RELAXED, 8, 16, 2),
         "imprecise V16": (IMPRECISE, 16, 32, 1), "precise V4 16 registers": (PRECISE, 4, 16, 3)}


@pytest.fixture(scope="module")
def odd_runs(tmp_path_factory):
    """Each case's program built and run once (--dump: every tensor of the last image)."""
    if CC is None:
        pytest.skip("no C compiler")
    m = odd_shapes_model()
    tmp = tmp_path_factory.mktemp("odd")
    synth.write_images(tmp / "x.f32", m.x_val)
    out = {}
    for key, (mode, V, regs, threads) in CASES.items():
        modes = {op.name: mode for op in m.conv_ops}
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(synth_program, "vector_registers", lambda regs=regs: regs)
            prog = synth.synthesise_program(m, modes, V, threads)
        stem = key.replace(" ", "_")
        src, exe, w = tmp / f"{stem}.c", tmp / stem, tmp / f"{stem}.bin"
        src.write_text(prog.source)
        w.write_bytes(prog.weights)
        synth.compile_c(CC, src, exe, True, lambda: None)
        rr = synth.run_program(exe, tmp / "x.f32", len(m.x_val), 0.0, lambda: None, weights=w, threads=threads)
        dump = tmp / f"{stem}.dump"
        subprocess.run([str(exe), str(w), str(tmp / "x.f32"), str(len(m.x_val)), "0", str(threads), "--dump",
                        str(dump)], check=True, capture_output=True)
        out[key] = (prog, rr, synth_program.read_dump(Path(dump), prog.plan), modes)
    return m, out


@needs_cc
@pytest.mark.parametrize("case", list(CASES))
def test_odd_shapes_every_tensor_matches_numpy(odd_runs, case):
    m, runs = odd_runs
    prog, rr, dump, modes = runs[case]
    _, outs = forward_reference(m, m.x_val, modes, keep=True)
    ref = {op.name: o[-1] for op, o in zip(m.ops, outs)}
    half = IMPRECISE in modes.values()
    checked = []
    for op in m.ops:
        got = dump.get(op.name)
        if got is None:
            continue
        want = ref[op.name].reshape(got.shape)
        err = float(np.abs(got - want).max()) / max(1.0, float(np.abs(want).max()))
        assert err <= (4e-3 if half else 2e-5), (case, op.name, err)
        checked.append(op.name)
    assert {"wide", "s2", "pw_row", "pw_flat", "asym", "dw2", "res", "dw7", "s2b", "fc"} <= set(checked)
    final = forward_reference(m, m.x_val, modes)[0]
    assert np.abs(rr.logits - final).max() <= (4e-3 if half else 2e-5) * max(1.0, float(np.abs(final).max()))
    blocks = {(op.rq, op.rp, op.flat) for op in prog.plan.ops if op.kind == "conv"}
    assert len(blocks) >= 3                      # several kernels, not one shape for all


# ------------------------------------------------------------------ the benchmark's load gate
def test_benchmark_waits_while_others_load_the_machine_and_refuses_after_max_wait(monkeypatch):
    from benchmarks import cappuccino_vs_onnxruntime as bench

    naps: list[float] = []
    monkeypatch.setattr(bench.time, "sleep", naps.append)
    loads = iter([3.0, 2.0, 0.4])
    gate = bench.LoadGate(1.5, 1e9, quiet=True)
    gate._wait("before round 1", lambda: next(loads))
    assert len(naps) == 2 and gate.checks[-1]["load"] == 0.4 and gate.checks[-1]["what"] == "before round 1"
    busy = bench.LoadGate(1.5, -1.0, quiet=True)           # no waiting allowed: refuses at once
    with pytest.raises(bench.TooBusy, match="3.00 > 1.5"):
        busy._wait("before round 1", lambda: 3.0)
    assert not busy.checks
    assert bench.others_running(samples=2, interval=0.0) >= 0.0
