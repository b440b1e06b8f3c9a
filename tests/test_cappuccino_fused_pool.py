"""Max pooling fused into the convolution before it (issue 35): only where no convolution work is
repeated (k x k windows at stride k, no padding, whole windows per block and map, a frame nothing else
reads), and then the same bits as the two ops run one after the other."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

from core.cappuccino import synth, synth_program
from core.cappuccino.forward import forward_reference
from core.cappuccino.graph_import import layer_table
from core.cappuccino.model import CnnModel, ConvOp, Op, PoolOp
from core.cappuccino.numerics import PRECISE
from tests.test_cappuccino_kernels import CC


def _model() -> CnnModel:
    rng = np.random.default_rng(7)

    def w(m, n, k):
        return (rng.standard_normal((m, n, k, k)) * np.sqrt(2 / (n * k * k))).astype(np.float32)

    def b(m):
        return (0.1 * rng.standard_normal(m)).astype(np.float32)

    ops: list[Op] = [
        ConvOp("c1", w(20, 8, 3), b(20), 1, 1, True, (8, 12, 28), inputs=["input"]),
        PoolOp("p1", 2, 2, 0, "max", False, (20, 12, 28), inputs=["c1"]),            # 2x2 / 2: fused
        ConvOp("c2", w(24, 20, 3), b(24), 1, 1, True, (20, 6, 14), inputs=["p1"]),
        PoolOp("p2", 3, 2, 0, "max", False, (24, 6, 14), inputs=["c2"]),              # 3x3 / 2: overlapping
        ConvOp("c3", w(16, 24, 3), b(16), 1, 1, True, (24, 2, 6), inputs=["p2"]),
        PoolOp("p3", 2, 2, 0, "max", False, (16, 2, 6), inputs=["c3"]),
        ConvOp("c4", w(10, 16, 1), b(10), 1, 0, False, (16, 1, 3), inputs=["p3"]),
    ]
    x = np.abs(rng.standard_normal((3, 8, 12, 28))).astype(np.float32)
    net = layer_table("fused-pool", (8, 12, 28), ops, "seeded random weights")
    return CnnModel("fused-pool", net, ops, x, np.zeros(3, np.int64), extra={"weights": "random (seed 7)"})


def test_only_non_overlapping_pools_after_row_blocked_convolutions_fuse():
    m = _model()
    p = synth_program.plan(m, {op.name: PRECISE for op in m.conv_ops}, 8, 2)
    by = {op.name: op for op in p.ops}
    assert by["c1"].rp % 2 == 0
    assert by["p1"].fused and p.ops[by["c1"].pool] is by["p1"]
    assert not by["p2"].fused and by["c2"].pool == -1                  # overlapping windows
    for op in p.ops:
        if op.fused:
            conv = next(c for c in p.ops if c.pool >= 0 and p.ops[c.pool] is op)
            t = p.tensors[conv.out]
            assert op.kh == op.stride and not any(op.pads) and t.H % op.kh == 0 and conv.rp % op.kh == 0


def _build_and_dump(tmp, m, modes, V, threads, fuse: bool):
    with pytest.MonkeyPatch.context() as mp:
        if not fuse:
            mp.setattr(synth_program, "fuse_pools", lambda *a: None)
        prog = synth.synthesise_program(m, modes, V, threads)
    key = f"{'f' if fuse else 'u'}{V}_{threads}_{len(set(modes.values()))}"
    src, exe, w, x, dump = tmp / f"{key}.c", tmp / key, tmp / f"{key}.bin", tmp / "x.f32", tmp / f"{key}.dump"
    src.write_text(prog.source)
    w.write_bytes(prog.weights)
    synth.write_images(x, m.x_val)
    synth.compile_c(CC, src, exe, True, lambda: None)
    run = synth.run_program(exe, x, len(m.x_val), 0.0, lambda: None, weights=w, threads=threads)
    subprocess.run([str(exe), str(w), str(x), str(len(m.x_val)), "0", str(threads), "--dump", str(dump)],
                   check=True, capture_output=True, timeout=120)
    return prog, run, synth_program.read_dump(dump, prog.plan)


@pytest.mark.slow
@pytest.mark.skipif(CC is None, reason="no C compiler")
@pytest.mark.parametrize("V,threads", [(8, 2), (16, 1), (4, 2)])
def test_a_fused_pooling_gives_the_same_bits_as_the_two_ops(tmp_path, V, threads):
    m = _model()
    modes = {op.name: PRECISE for op in m.conv_ops}
    fused, run_f, dump_f = _build_and_dump(tmp_path, m, modes, V, threads, True)
    assert any(op.fused for op in fused.plan.ops)
    _, run_u, dump_u = _build_and_dump(tmp_path, m, modes, V, threads, False)
    assert np.array_equal(run_f.logits, run_u.logits)
    for name in dump_u:
        assert np.array_equal(dump_f[name], dump_u[name]), name
    ref = forward_reference(m, m.x_val, modes)[0]
    assert np.abs(run_f.logits - ref).max() <= 2e-5 * max(1.0, float(np.abs(ref).max()))


@pytest.mark.slow
@pytest.mark.skipif(CC is None, reason="no C compiler")
def test_an_int8_convolution_with_its_pooling_fused_gives_the_same_bits(tmp_path):
    from core.cappuccino import inexact
    from core.cappuccino.forward import ActivationCache
    from core.cappuccino.numerics import INT8

    m = _model()
    ok = inexact.calibrate_int8(m, ActivationCache(m, m.x_val))
    modes = {op.name: (INT8 if op.name in ok else PRECISE) for op in m.conv_ops}
    fused, run_f, dump_f = _build_and_dump(tmp_path, m, modes, 16, 2, True)
    assert any(op.pool >= 0 and op.mode == INT8 for op in fused.plan.ops)
    _, run_u, dump_u = _build_and_dump(tmp_path, m, modes, 16, 2, False)
    assert np.array_equal(run_f.logits, run_u.logits)
    assert all(np.array_equal(dump_f[name], dump_u[name]) for name in dump_u)
