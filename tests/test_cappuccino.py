"""Cappuccino engine: index maps, map-major reordering, allocation, inexact search, C synthesis."""

from __future__ import annotations

import argparse
import json

import numpy as np
import pytest

from core.cappuccino.result import CappuccinoResult
from core.cappuccino import allocation, layout, synth
from core.cappuccino.engine import ENGINE
from core.cappuccino.forward import apply_op, check_layouts, forward_map_major, forward_reference
from core.cappuccino.inexact import search_modes
from core.cappuccino.model import ConvOp, load_builtin
from core.cappuccino.numerics import IMPRECISE, PRECISE, RELAXED, flush_denormals, to_half
from core.errors import CheckFailed, InputError
from core.engine import JobRequest
from core.jobs import CancelToken, Cancelled, FinalResult, MetricPoint, run_foreground
from core.workload import BUILTIN_DIGITS, CnnNetwork, FpgaTarget, MobileSocTarget

DIGITS = CnnNetwork(BUILTIN_DIGITS)

HAVE_CC = synth.find_compiler() is not None
needs_cc = pytest.mark.skipif(not HAVE_CC, reason="no C compiler (gcc/cc/clang) on this machine")


@pytest.fixture(scope="module")
def model():
    return load_builtin()


def cli(*argv: str):
    p = argparse.ArgumentParser()
    ENGINE.add_cli_arguments(p)
    return ENGINE.request_from_cli(p.parse_args(list(argv)))


def run(req, cancel=None) -> CappuccinoResult:
    out = run_foreground(ENGINE.run(req, cancel or CancelToken()), quiet=True)
    if out.error:
        raise out.error
    assert isinstance(out.result, CappuccinoResult)         # the engine yields its typed result
    return out.result


# ------------------------------------------------------------------ equations 1-5
def test_map_major_order_matches_paper_example():
    # V = 4: (map,row,col) order (0,0,0) (1,0,0) (2,0,0) (3,0,0) (0,0,1) ... then row 1 after all row 0
    M, H, W, V = 8, 3, 5, 4
    m, r, c = np.meshgrid(np.arange(M), np.arange(H), np.arange(W), indexing="ij")
    addr = layout.address_map_major(m, r, c, H, W, V)
    order = sorted(zip(addr.ravel(), m.ravel(), r.ravel(), c.ravel()))
    seq = [(mm, rr, cc) for _, mm, rr, cc in order]
    assert seq[:5] == [(0, 0, 0), (1, 0, 0), (2, 0, 0), (3, 0, 0), (0, 0, 1)]
    assert seq[4 * W] == (0, 1, 0)                     # second row only after the whole first row
    assert seq[4 * W * H] == (4, 0, 0)                 # then the next stack of 4 maps
    assert sorted(addr.ravel().tolist()) == list(range(M * H * W))
    rm = layout.address_row_major(m, r, c, H, W)
    assert rm[1, 0, 0] == H * W and rm[0, 0, 1] == 1


@pytest.mark.parametrize("M,H,W,V", [(16, 8, 8, 4), (10, 1, 1, 4), (5, 3, 7, 2), (3, 4, 4, 8), (6, 2, 3, 1)])
def test_olp_thread_writes_its_own_address(M, H, W, V):
    t = np.arange(layout.olp_threads(M, H, W, V))
    m, r, c = layout.olp_thread_to_output(t, M, H, W, V)
    assert np.array_equal(layout.address_map_major(m, r, c, H, W, V), t)     # zero-overhead store
    assert tuple(x[1] for x in (m, r, c)) == ((1, 0, 0) if V > 1 else (0, 0, 1 % W if W > 1 else 0))
    mr, rr, cr = layout.olp_thread_to_output(t[: M * H * W], M, H, W, V, map_major=False)
    assert np.array_equal(layout.address_row_major(mr, rr, cr, H, W), t[: M * H * W])


def test_pack_unpack_and_weights_roundtrip():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 5, 4, 3)).astype(np.float32)
    for V, halo in ((4, 1), (2, 0), (8, 2)):
        f = layout.pack_feature_maps(x, V, halo)
        assert f.shape == (2, layout.stacks(5, V), 4 + 2 * halo, 3 + 2 * halo, V)
        assert np.array_equal(layout.unpack_feature_maps(f, 5, halo), x)
        assert f.sum() == pytest.approx(x.sum(), rel=1e-5)   # halo and padded maps are zero
    w = rng.standard_normal((6, 5, 3, 3)).astype(np.float32)
    wm = layout.weights_map_major(w, 4)
    assert wm.shape == (2, 2, 3, 3, 4, 4)
    assert wm[1, 1, 2, 0, 1, 0] == w[5, 4, 2, 0] and wm[1, 1, 0, 0, 2, 0] == 0    # padded map is zero


def test_worker_picture_splits_contiguous_groups():
    owner = layout.worker_of_outputs(16, 8, 8, 4, 2)
    assert owner.shape == (16, 8, 8)
    assert set(np.unique(owner)) == {0, 1}
    assert (owner == 0).sum() == (owner == 1).sum()


# ------------------------------------------------------------------ the two computations agree
@pytest.mark.parametrize("V", [1, 2, 4, 8, 16])
def test_map_major_network_equals_reference(model, V):
    chk = check_layouts(model, model.x_val[:60], V)
    assert chk.ok, chk.to_json()


def test_map_major_with_inexact_modes(model):
    modes = {"conv1": IMPRECISE, "conv2": RELAXED, "fc": IMPRECISE}
    chk = check_layouts(model, model.x_val[:60], 4, modes)
    assert chk.ok and all(chk.zero_overhead_ok.values())
    ref = forward_reference(model, model.x_val[:60], modes)[0]
    mm = forward_map_major(model, model.x_val[:60], 4, modes)[0]
    assert np.allclose(ref, mm, atol=2e-2)


def test_builtin_model_accuracy_matches_training_record(model):
    logits, _ = forward_reference(model, model.x_val)
    acc = float((logits.argmax(1) == model.y_val).mean())
    assert len(model.y_val) == 360
    assert acc == pytest.approx(model.extra["trained_validation_accuracy"])
    assert acc > 0.95


# ------------------------------------------------------------------ thread allocation
def test_allocation_strategies(model):
    table = allocation.allocate(model.ops, 4, 2)
    for op, row in zip(model.ops, table):
        if not isinstance(op, ConvOp):
            continue
        st = {s.name: s for s in row.strategies}
        m, oh, ow = op.out_shape
        for s in st.values():
            assert s.threads * s.work_per_thread == op.macs
        assert st["OLP"].reduction_adds == 0 and st["OLP"].threads == m * oh * ow
        assert st["KLP"].reduction_adds > st["FLP"].reduction_adds >= 0
        assert st["OLP"].weight_reuse == oh * ow
        assert st["OLP"].memory_words < st["FLP"].memory_words < st["KLP"].memory_words
        assert row.worker_ranges[0][0] == 0 and row.worker_ranges[-1][1] == row.groups


# ------------------------------------------------------------------ inexact modes
def test_numerics_modes():
    assert flush_denormals(np.float32(1e-40)) == 0 and flush_denormals(np.float32(2e-38)) == np.float32(2e-38)
    assert to_half(np.float32(1 / 3)) == np.float32(np.float16(1 / 3))


def test_mode_search_reports_every_configuration(model):
    items = list(search_modes(model, 0.5))
    choice = items[-1]
    configs = choice.configurations
    assert len(configs) == 27 == len({tuple(c.modes.values()) for c in configs})
    for c in configs[:6]:                                    # measured, not assumed
        acc = 100 * (forward_reference(model, model.x_val, c.modes)[0].argmax(1) == model.y_val).mean()
        assert c.accuracy == pytest.approx(acc)
    assert not choice.all_precise_fallback
    best = max(c.inexact_layers for c in configs if c.within_budget)
    assert sum(m != PRECISE for m in choice.modes.values()) == best
    assert choice.precise_accuracy - choice.accuracy <= 0.5


def test_budget_no_configuration_meets_keeps_precise():
    # scale conv1 into the float32 subnormal range (the logits only scale, so precise accuracy is
    # unchanged); every inexact mode then flushes or underflows it and accuracy collapses
    m = load_builtin(limit=120)
    s = np.float32(2.0 ** -130)
    c1, c2, fc = m.conv_ops
    c1.weight, c1.bias = c1.weight * s, c1.bias * s
    c2.bias, fc.bias = c2.bias * s, fc.bias * s
    choice = list(search_modes(m, 0.0))[-1]
    assert choice.all_precise_fallback and all(v == PRECISE for v in choice.modes.values())
    assert "stays precise" in choice.message
    assert all(not c.within_budget for c in choice.configurations if c.inexact_layers)
    assert min(c.accuracy for c in choice.configurations) < choice.precise_accuracy - 10


# ------------------------------------------------------------------ synthesis
@pytest.mark.slow
@needs_cc
def test_synthesised_programs_classify_like_numpy(model, tmp_path):
    x = model.x_val[:50]
    images = tmp_path / "img.f32"
    synth.write_images(images, x)
    check = lambda: None
    cc = synth.find_compiler()
    cases = [("base", synth.synthesise_baseline(model), False, {}),
             ("mix8", synth.synthesise_program(model, {"conv1": IMPRECISE, "conv2": RELAXED, "fc": PRECISE}, 8, 2),
              True, {"conv1": IMPRECISE, "conv2": RELAXED, "fc": PRECISE}),
             ("prec2", synth.synthesise_program(model, {}, 2, 3), True, {})]
    for name, src, omp, modes in cases:
        weights = None
        if isinstance(src, synth.Program):       # the synthesised programs read a weight file
            weights = tmp_path / f"{name}.bin"
            weights.write_bytes(src.weights)
            src = src.source
        (tmp_path / f"{name}.c").write_text(src)
        synth.compile_c(cc, tmp_path / f"{name}.c", tmp_path / name, omp, check)
        rr = synth.run_program(tmp_path / name, images, len(x), 0.0, check, weights=weights)
        ref_logits = forward_reference(model, x, modes)[0]
        assert rr.predictions == ref_logits.argmax(1).tolist(), name
        assert rr.passes >= 1
        tol = 2e-3 if IMPRECISE in modes.values() else 1e-5      # binary16 outputs: about one ulp
        assert np.abs(rr.logits - ref_logits).max() <= tol * max(1.0, np.abs(ref_logits).max()), name


def test_synthesised_source_structure(model):
    prog = synth.synthesise_program(model, {"conv1": IMPRECISE, "conv2": RELAXED, "fc": PRECISE}, 4, 2)
    src = prog.source
    assert "#pragma omp parallel num_threads(threads)" in src and "#define THREADS 2" in src
    assert "FTZ_ON(op->mode == RELAXED)" in src and "#define V 4" in src and "vector_size(4 * V)" in src
    assert '{"conv1", K_CONV, 2,' in src and '{"fc", K_CONV, 0,' in src      # per-op modes in the op table
    # conv2 reads conv1's binary16 values from a float32 frame (half_frames off): the float32-input variant
    assert "#define USE_I_F 1" in src and "#define USE_R_F 1" in src and "#define USE_P_F 1" in src
    assert "#define USE_R_H 0" in src and "#define HALF_FRAMES 0" in src
    assert len(prog.weights) > 4 * model.conv_ops[1].weight.size      # weights in the file, not the source
    base = synth.synthesise_baseline(model)
    assert "omp" not in base and "vector_size" not in base


# ------------------------------------------------------------------ engine end to end
@pytest.mark.slow
@needs_cc
def test_engine_cli_end_to_end(tmp_path):
    req = cli("--model", "builtin-digits", "--vector-width", "4", "--threads", "2", "--accuracy-budget", "0.5",
              "--emit", str(tmp_path / "out"), "--limit", "60", "--min-seconds", "0", "--repeats", "1")
    r = run(req)
    json.dumps(r.to_json())
    assert (r.target.threads, r.target.vector_width) == (2, 4)
    assert r.layout_check.precise.ok and r.layout_check.chosen.ok
    progs = r.synthesis.programs
    assert progs is not None
    assert set(progs) == {"baseline", "parallel", "relaxed", "imprecise", "parallel_inexact"}
    assert all(p.same_classifications for p in progs.values())
    assert all(p.max_logit_difference is not None and p.max_logit_difference < 2e-3 for p in progs.values())
    assert set(r.synthesis.speedups or {}) == set(progs)
    for k in ("parallel", "relaxed", "imprecise", "parallel_inexact"):      # weights as data: small C, a weight file
        p = progs[k]
        assert p.source_lines < 1000 and p.weight_file_bytes > 0 and p.build_seconds > 0
        assert p.max_rel_error <= (4e-3 if k == "imprecise" else 1e-5)
    assert progs["imprecise"].weight_file_bytes < progs["parallel"].weight_file_bytes     # binary16 weights
    assert r.synthesis.onnxruntime is None and "no ONNX file" in r.synthesis.onnxruntime_note
    names = {p.rsplit("/", 1)[1] for p in r.synthesis.emitted}
    assert {"cappuccino.c", "cappuccino_weights.bin", "baseline.c", "parallel_precise.c",
            "parallel_precise_weights.bin", "validation_images.f32"} <= names
    assert (tmp_path / "out" / "cappuccino.c").read_text().startswith("/* Cappuccino")
    assert [row.parallelism for row in r.layers] == ["OLP"] * 5
    text = ENGINE.format_text(r)
    assert "speedup" in text and "conv2" in text


def test_engine_without_compiling_emits_and_says_so(tmp_path):
    r = run(cli("--no-compile", "--limit", "40", "--emit", str(tmp_path)))
    assert r.synthesis.programs is None and "skipped" in r.synthesis.message
    assert (tmp_path / "baseline.c").exists()


def test_engine_metric_points_per_configuration():
    events = list(ENGINE.run(cli("--no-compile", "--limit", "30"), CancelToken()))
    pts = [e for e in events if isinstance(e, MetricPoint) and e.plot == "accuracy"]
    final = [e for e in events if isinstance(e, FinalResult)]
    assert len(final) == 1 and len(pts) == len(final[0].data.inexact.configurations)


def test_cancel_stops_run():
    tok = CancelToken()
    tok.cancel()
    with pytest.raises(Cancelled):
        for _ in ENGINE.run(cli("--no-compile", "--limit", "30"), tok):
            pass


# ------------------------------------------------------------------ ONNX input
def _digits_onnx(model, path, extra_group: bool = False, relu_after_pool: str = ""):
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    c1, c2, fc = model.conv_ops
    inits = [numpy_helper.from_array(a, n) for n, a in
             (("w1", c1.weight), ("b1", c1.bias), ("w2", c2.weight), ("b2", c2.bias),
              ("wf", fc.weight.reshape(10, -1)), ("bf", fc.bias))]
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["a1"], pads=[1, 1, 1, 1], name="conv1"),
             helper.make_node("Relu", ["a1"], ["r1"]),
             helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Conv", ["p1", "w2", "b2"], ["a2"], pads=[1, 1, 1, 1], name="conv2"),
             helper.make_node("Relu", ["a2"], ["r2"]),
             helper.make_node("MaxPool", ["r2"], ["p2"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Flatten", ["p2"], ["f"]),
             helper.make_node("Gemm", ["f", "wf", "bf"], ["y"], transB=1, name="fc")]
    if relu_after_pool:                 # conv1 -> MaxPool/AveragePool -> Relu instead of Relu -> MaxPool
        nodes[1:3] = [helper.make_node(relu_after_pool, ["a1"], ["q1"], kernel_shape=[2, 2], strides=[2, 2]),
                      helper.make_node("Relu", ["q1"], ["p1"], name="relu1")]
    if extra_group:
        inits.append(numpy_helper.from_array(np.ones((16, 1, 3, 3), np.float32), "wg"))
        nodes.insert(2, helper.make_node("Conv", ["r1", "wg"], ["g1"], pads=[1, 1, 1, 1], group=16, name="dw"))
        nodes[3] = helper.make_node("MaxPool", ["g1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2])
    graph = helper.make_graph(nodes, "digits", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 8, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))


@pytest.mark.slow
def test_onnx_model_gives_same_accuracy_as_builtin(model, tmp_path):
    pytest.importorskip("core.nets.onnx_import")
    _digits_onnx(model, tmp_path / "d.onnx")
    r = run(cli("--onnx", str(tmp_path / "d.onnx"), "--no-compile"))
    assert r.inexact.precise_accuracy == pytest.approx(
        100 * (forward_reference(model, model.x_val)[0].argmax(1) == model.y_val).mean())
    assert r.layout_check.precise.ok


def test_onnx_relu_after_max_pool_computes_like_onnx(model, tmp_path):
    pytest.importorskip("core.nets.onnx_import")
    from core.cappuccino.model import load_onnx_model

    _digits_onnx(model, tmp_path / "mp.onnx", relu_after_pool="MaxPool")
    m = load_onnx_model(str(tmp_path / "mp.onnx"))
    assert m.conv_ops[0].relu
    # ONNX semantics in numpy: conv1, max pool, then ReLU; the rest as the built-in model
    c1 = model.conv_ops[0]
    from core.cappuccino.numerics import conv2d_nchw, pool_nchw

    x = pool_nchw(conv2d_nchw(model.x_val, c1.weight, c1.bias, 1, 1), 2, 2, 0, "max")
    x = np.maximum(x, 0)
    for op in model.ops[2:]:
        x, _ = apply_op(op, x, False)
    np.testing.assert_allclose(forward_reference(m, m.x_val)[0], x.reshape(len(x), -1), rtol=1e-5, atol=1e-5)
    _digits_onnx(model, tmp_path / "avg.onnx", relu_after_pool="AveragePool")
    with pytest.raises(InputError) as e:
        run(cli("--onnx", str(tmp_path / "avg.onnx"), "--no-compile"))
    assert "relu1" in str(e.value) and "averaging" in str(e.value)


def test_onnx_depthwise_layer_is_imported(model, tmp_path):
    pytest.importorskip("core.nets.onnx_import")
    from core.cappuccino.model import load_onnx_model

    _digits_onnx(model, tmp_path / "g.onnx", extra_group=True)
    m = load_onnx_model(str(tmp_path / "g.onnx"), limit=20)
    dw = next(op for op in m.ops if op.name == "dw")
    assert dw.groups == 16 and dw.depthwise and dw.inputs == ["conv1"]
    assert check_layouts(m, m.x_val, 4).ok


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize("argv,where", [
    (["--vector-width", "3"], "--vector-width"),
    (["--threads", "0"], "--threads"),
    (["--accuracy-budget", "-1"], "--accuracy-budget"),
])
def test_bad_cli_arguments(argv, where):
    with pytest.raises(InputError) as e:
        cli(*argv)
    assert e.value.where == where


def test_bad_inputs_name_the_field(tmp_path):
    with pytest.raises(InputError) as e:
        run(cli("--onnx", str(tmp_path / "missing.onnx")))
    assert e.value.where == "onnx"
    from core.engine import JobRequest

    with pytest.raises(InputError) as e:
        run(JobRequest(None, FpgaTarget(), ENGINE.default_settings()))
    assert e.value.where == "target.kind"
    with pytest.raises(InputError) as e:
        run(JobRequest(None, MobileSocTarget(2, 4), dict(ENGINE.default_settings(), accuracy_budget="x")))
    assert e.value.where == "settings.accuracy_budget"
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError) as e:
        run(cli("--no-compile", "--limit", "20", "--emit", str(tmp_path / "file")))
    assert e.value.where == "emit"


@pytest.mark.slow
def test_training_is_deterministic():
    from core.cappuccino import train_digits

    a = train_digits.train(epochs=1, log=lambda *_: None)
    b = train_digits.train(epochs=1, log=lambda *_: None)
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert len(a["val_index"]) == 360


def test_onnx_with_validation_file(model, tmp_path):
    pytest.importorskip("core.nets.onnx_import")
    _digits_onnx(model, tmp_path / "d.onnx")
    np.savez(tmp_path / "val.npz", x=model.x_val[:30, 0], y=model.y_val[:30])     # (B, H, W) accepted
    r = run(cli("--onnx", str(tmp_path / "d.onnx"), "--validation", str(tmp_path / "val.npz"), "--no-compile"))
    assert r.model.validation_images == 30
    np.savez(tmp_path / "bad.npz", x=np.zeros((5, 3, 8, 8), np.float32), y=np.zeros(5))
    with pytest.raises(InputError) as e:
        run(cli("--onnx", str(tmp_path / "d.onnx"), "--validation", str(tmp_path / "bad.npz"), "--no-compile"))
    assert e.value.where == "validation" and "(B, 1, 8, 8)" in e.value.message


def test_without_a_compiler_the_result_says_so(monkeypatch, tmp_path):
    monkeypatch.setattr(synth, "find_compiler", lambda: None)
    r = run(cli("--limit", "20", "--emit", str(tmp_path)))
    assert "no C compiler found" in r.synthesis.message and r.synthesis.speedups is None
    assert (tmp_path / "cappuccino.c").exists()
    assert "no C compiler" in ENGINE.format_text(r)
    sample = r.layers[0].olp_map_sample                       # [t, m, r, c] with equations 3-5
    assert sample[:2] == [[0, 0, 0, 0], [1, 1, 0, 0]] and sample[4] == [4, 0, 0, 1]


def _random_model(kind: str):
    """Small random networks covering the other code paths: stride 2, 1x1 kernels, padded average
    pooling, a fully connected layer with > 64 taps, ceil-mode max pooling, maps not a multiple of V."""
    from core.cappuccino.model import CnnModel, build_ops
    from core.nets.builder import NetBuilder

    rng = np.random.default_rng(7)
    if kind == "a":
        b = NetBuilder("rand-a", "random A", (3, 17, 17))
        b.conv("c1", 5, 3, 2, 1)
        b.conv("c2", 7, 1)
        b.pool("p1", 3, 1, 1, mode="avg")
        b.fc("fc", 6, relu=False)
    else:
        b = NetBuilder("rand-b", "random B", (2, 10, 10))
        b.conv("c1", 9, 3, 1, 0)
        b.pool("p1", 3, 2, mode="max", ceil_mode=True)
        b.fc("fc", 5, relu=False)
    net = b.network()
    weights = {}
    for layer in net.layers:
        if hasattr(layer, "out_ch"):
            fan = layer.in_ch * layer.k_h * layer.k_w
            weights[layer.name] = (rng.standard_normal((layer.out_ch, fan)).astype(np.float32) / np.sqrt(fan),
                                   0.1 * rng.standard_normal(layer.out_ch).astype(np.float32))
            weights[layer.name] = (weights[layer.name][0].reshape(layer.out_ch, layer.in_ch, layer.k_h, layer.k_w)
                                   if not layer.fc else weights[layer.name][0], weights[layer.name][1])
    x = rng.random((40,) + tuple(net.input_shape)).astype(np.float32)
    ops = build_ops(net, weights)
    y = forward_reference(CnnModel(net.name, net, ops, x, np.zeros(40, int)), x)[0].argmax(1)
    return CnnModel(net.name, net, ops, x, y)


@pytest.mark.parametrize("kind", ["a", "b"])
def test_other_layer_shapes_both_layouts(kind):
    m = _random_model(kind)
    for V in (2, 4, 8):
        assert check_layouts(m, m.x_val, V, {"c1": IMPRECISE, "fc": RELAXED}).ok


@pytest.mark.slow
@needs_cc
@pytest.mark.parametrize("kind", ["a", "b"])
def test_other_layer_shapes_in_c(kind, tmp_path):
    m = _random_model(kind)
    images = tmp_path / "x.f32"
    synth.write_images(images, m.x_val)
    names = [op.name for op in m.conv_ops]
    for V, modes in ((4, {}), (4, dict.fromkeys(names, RELAXED)), (8, dict.fromkeys(names, IMPRECISE))):
        src = tmp_path / "p.c"
        prog = synth.synthesise_program(m, modes, V, 2)
        src.write_text(prog.source)
        (tmp_path / "w.bin").write_bytes(prog.weights)
        synth.compile_c(synth.find_compiler(), src, tmp_path / "p", True, lambda: None)
        got = synth.run_program(tmp_path / "p", images, len(m.x_val), 0.0, lambda: None,
                                weights=tmp_path / "w.bin").predictions
        assert got == forward_reference(m, m.x_val, modes)[0].argmax(1).tolist(), (V, modes)
    (tmp_path / "b.c").write_text(synth.synthesise_baseline(m))
    synth.compile_c(synth.find_compiler(), tmp_path / "b.c", tmp_path / "b", False, lambda: None)
    got = synth.run_program(tmp_path / "b", images, len(m.x_val), 0.0, lambda: None).predictions
    assert got == m.y_val.tolist()


def test_bad_settings_types_name_the_field():
    from core.engine import JobRequest

    for key, value in (("prefer", 3), ("compile", "yes"), ("emit_dir", None), ("model", "builtin-digits"),
                       ("limit", 2.5)):
        with pytest.raises(InputError) as e:
            run(JobRequest(DIGITS, MobileSocTarget(2, 4), dict(ENGINE.default_settings(), **{key: value})))
        assert e.value.where == f"settings.{key}"


def test_branches_and_depthwise_are_listed_not_skipped():
    from core.cappuccino.model import build_ops, unsupported_layers
    from core.nets.builder import NetBuilder

    b = NetBuilder("branchy", "branchy", (4, 8, 8))
    x = b.conv("c1", 4, 3, 1, 1)
    y = b.conv("c2", 4, 3, 1, 1)
    b.add("sum", x, y)
    b.dwconv("dw", 3, 1, 1)
    net = b.network()
    bad = unsupported_layers(net)       # a layer table has no connectivity; depthwise is fine
    assert any(s.startswith("sum:") for s in bad) and not any(s.startswith("dw:") for s in bad)
    with pytest.raises(InputError) as e:
        build_ops(net, {})
    assert "sum" in str(e.value) and "ONNX" in str(e.value)


# ------------------------------------------------------------------ failed checks fail the run
def test_failed_layout_check_fails_the_run(monkeypatch):
    from core.cappuccino import engine
    from core.cappuccino.forward import LayoutCheck

    broken = LayoutCheck({"conv1": 0.25, "conv2": 0.0}, {"conv1": True, "conv2": False}, 0.9, False)
    monkeypatch.setattr(engine, "check_layouts", lambda *a, **k: broken)
    with pytest.raises(CheckFailed) as e:
        run(cli("--no-compile", "--limit", "20"))
    msg = str(e.value)
    assert "map-major layout check failed" in msg and "conv1: max relative difference 2.50e-01" in msg
    assert "conv2" in msg and "own addresses" in msg and "90.0 %" in msg


@pytest.mark.slow
@needs_cc
def test_program_classifying_unlike_numpy_fails_the_run(misclassifying_program, tmp_path, capsys):
    from main import main

    argv = ["--limit", "30", "--min-seconds", "0", "--repeats", "1", "--threads", "1"]
    out = run_foreground(ENGINE.run(cli(*argv), CancelToken()), quiet=True)
    assert isinstance(out.error, CheckFailed) and "parallel_inexact classified 30 of 30" in str(out.error)
    assert isinstance(out.result, CappuccinoResult)
    assert out.result.summary.startswith("CHECK FAILED: parallel_inexact classified 30 of 30 images")
    assert out.result.check_failed and out.result.synthesis.programs["parallel"].mismatches == 0
    assert "CHECK FAILED" in ENGINE.format_text(out.result)
    assert main(["cappuccino", "--quiet", *argv]) == 1
    err = capsys.readouterr().err
    assert "compiled program check failed" in err and "Traceback" not in err     # a message, not a crash


def test_validation_file_refuses_non_finite_images_and_bad_labels(model, tmp_path):
    pytest.importorskip("core.nets.onnx_import")
    _digits_onnx(model, tmp_path / "d.onnx")
    x, y = model.x_val[:8].copy(), model.y_val[:8].copy()
    x[3, 0, 2, 2] = np.nan
    cases = {"nan": (x, y, "x[3]", "non-finite")}
    x_inf = model.x_val[:8].copy()
    x_inf[5, 0, 0, 0] = np.inf
    cases["inf"] = (x_inf, y, "x[5]", "non-finite")
    ok_x = model.x_val[:8]
    for name, labels, index in (("big", [0, 1, 57, 3, 4, 5, 6, 7], "y[2]"),
                                ("frac", [0, 1, 2, 3.5, 4, 5, 6, 7], "y[3]"),
                                ("neg", [0, -1, 2, 3, 4, 5, 6, 7], "y[1]"),
                                ("nan_label", [0, 1, 2, 3, 4, np.nan, 6, 7], "y[5]"),
                                ("text", list("abcdefgh"), "dtype")):
        cases[name] = (ok_x, np.array(labels), index, "0..9")
    for name, (xs, ys, index, what) in cases.items():
        path = tmp_path / f"{name}.npz"
        np.savez(path, x=xs, y=ys)
        with pytest.raises(InputError) as e:
            run(cli("--onnx", str(tmp_path / "d.onnx"), "--validation", str(path), "--no-compile"))
        assert e.value.where == "validation", name
        assert str(path) in e.value.message and index in e.value.message and what in e.value.message, name
    np.savez(tmp_path / "float_ok.npz", x=ok_x, y=y.astype(np.float64))       # whole numbers as floats
    r = run(cli("--onnx", str(tmp_path / "d.onnx"), "--validation", str(tmp_path / "float_ok.npz"), "--no-compile"))
    assert r.model.validation_images == 8


def test_unsupported_operators_and_layers_in_one_message(tmp_path):
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    inits = {"w1": rng.standard_normal((4, 1, 3, 3)), "wd": rng.standard_normal((4, 1, 3, 3)),
             "wf": rng.standard_normal((10, 64))}
    nodes = [helper.make_node("Conv", ["x", "w1"], ["a"], pads=[1, 1, 1, 1], name="c1"),
             helper.make_node("Conv", ["a", "wd"], ["d"], pads=[1, 1, 1, 1], group=4, name="dw"),
             helper.make_node("Sigmoid", ["d"], ["s"], name="sig"),
             helper.make_node("MaxPool", ["s"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Flatten", ["p"], ["f"]),
             helper.make_node("Gemm", ["f", "wf"], ["y"], transB=1, name="fc")]
    g = helper.make_graph(nodes, "t", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 8, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
                          [numpy_helper.from_array(v.astype(np.float32), k) for k, v in inits.items()])
    path = tmp_path / "dw_sig.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), str(path))
    with pytest.raises(InputError) as e:
        run(cli("--onnx", str(path), "--no-compile"))
    msg = str(e.value)
    assert "Sigmoid" in msg and "'sig'" in msg and "'dw'" not in msg      # depthwise is supported now
    assert e.value.where == str(path)


def test_builtin_model_uses_the_validation_file(model, tmp_path):
    np.savez(tmp_path / "val.npz", x=model.x_val[:25], y=model.y_val[:25])
    r = run(cli("--model", "builtin-digits", "--validation", str(tmp_path / "val.npz"), "--no-compile"))
    assert r.model.validation_images == 25 and r.model.extra["validation_file"] == str(tmp_path / "val.npz")
    np.savez(tmp_path / "bad.npz", x=model.x_val[:5], y=np.full(5, 10))
    with pytest.raises(InputError) as e:
        run(cli("--validation", str(tmp_path / "bad.npz"), "--no-compile"))
    assert e.value.where == "validation" and "y[0] = 10" in e.value.message


def test_text_lists_every_configuration_with_its_accuracy():
    r = run(cli("--no-compile", "--limit", "40"))
    text = ENGINE.format_text(r).splitlines()
    configs = r.inexact.configurations
    for c in configs:
        line = next(l for l in text if l.lstrip().startswith(f"#{c.index} "))
        assert f"{c.accuracy:.2f} %" in line and ("within budget" in line) == c.within_budget
    assert any("conv1=imprecise" in l and "single layer" in l for l in text)
    assert any("all precise" in l and l.lstrip().startswith("#0 ") for l in text)


def test_messages_say_where_the_programs_went(monkeypatch, tmp_path):
    r = run(cli("--no-compile", "--limit", "20"))
    assert "not kept" in r.synthesis.message and "written" not in r.synthesis.message
    monkeypatch.setattr(synth, "find_compiler", lambda: None)
    r = run(cli("--limit", "20", "--emit", str(tmp_path / "out")))
    assert f"written to {(tmp_path / 'out').resolve()}" in r.synthesis.message
    r = run(cli("--limit", "20"))
    assert "no C compiler found" in r.synthesis.message and "not kept" in r.synthesis.message


def test_missing_cc_is_reported_not_silently_replaced(monkeypatch):
    monkeypatch.setenv("CC", "no-such-compiler-xyz")
    cc, note = synth.find_compiler_noting()
    assert "CC='no-such-compiler-xyz'" in note and "not an executable" in note
    assert cc == synth.find_compiler()
    monkeypatch.setattr(synth, "find_compiler", lambda: None)
    events = list(ENGINE.run(cli("--limit", "20"), CancelToken()))
    logs = [e.message for e in events if type(e).__name__ == "LogLine"]
    assert any("no-such-compiler-xyz" in m for m in logs)
    final = events[-1].data.synthesis
    assert "no-such-compiler-xyz" in final.compiler_note and "no-such-compiler-xyz" in final.message
    monkeypatch.delenv("CC")
    assert synth.find_compiler_noting()[1] == ""


# ------------------------------------------------------------------ the network as a workload, the SoC as target
def test_registry_kinds():
    assert (ENGINE.workload_kinds, ENGINE.target_kinds) == (("cnn",), ("mobile_soc",))
    assert set(ENGINE.settings_schema["properties"]) == set(ENGINE.default_settings())
    for key, prop in ENGINE.settings_schema["properties"].items():
        assert prop.get("title") and prop.get("description"), key


def test_new_project_runs_on_a_mobile_soc_with_a_trained_network():
    """Was: File > New on the Mobile SoC tab, then Run: "target.kind: the Cappuccino engine needs a
    mobile SoC target, got 'scamp5'". A fresh project must give the tab what it can run."""
    from core.project import Project

    p = Project.starter()
    request = p.request("cappuccino")
    assert request.target.kind == "mobile_soc"
    assert isinstance(request.workload, CnnNetwork) and ENGINE.workload_problem(request.workload) is None
    # since issue 35 VGG-16 (the first starter CNN) runs too, in minutes: the tab starts on the
    # trained digits CNN (EngineSpec.preferred_workload)
    r = run(JobRequest(request.workload, request.target, dict(request.settings, compile=False, limit=20)))
    assert r.model.name == BUILTIN_DIGITS


def test_zoo_network_runs_with_random_weights_and_says_so(monkeypatch, tmp_path):
    """Was refused ("needs trained weights"); issue 17: zoo networks run with seeded random weights."""
    from core.cappuccino.engine import load_model
    from core.project import Project

    monkeypatch.setenv("DFX_ONNX_CACHE", str(tmp_path))
    assert ENGINE.workload_problem(CnnNetwork("resnet18")) is None
    assert ENGINE.workload_problem(CnnNetwork("vgg16")) is None      # issue 35: VGG-16 runs (sampled search)
    import core.cappuccino.engine as capp_engine
    monkeypatch.setattr(capp_engine, "MAX_ZOO_GMACS", 5.0)          # what the size limit still refuses
    p = Project.starter()
    vgg = next(e for e in p.workloads if e.value == CnnNetwork("vgg16"))
    p.choose("cappuccino", "workloads", vgg.id)
    assert "15.5 GMACs" in p.problem("cappuccino", "workloads")
    with pytest.raises(InputError) as e:
        run(JobRequest(CnnNetwork("vgg16"), MobileSocTarget(2, 4), ENGINE.default_settings()))
    assert e.value.where == "workload.network"
    m = load_model(CnnNetwork("lenet5"), 5)
    assert m.extra["weights"] == "random (seed 0)" and "own top-1" in m.extra["labels"]
    assert len(m.y_val) == 5 and (forward_reference(m, m.x_val)[0].argmax(1) == m.y_val).all()
    assert list(tmp_path.glob("lenet5-*.onnx"))
    with pytest.raises(InputError) as e:
        run(JobRequest(None, MobileSocTarget(2, 4), ENGINE.default_settings()))
    assert e.value.where == "workload.kind"


def test_missing_files_are_workload_problems(tmp_path):
    assert "ONNX file not found" in ENGINE.workload_problem(CnnNetwork(onnx_path=str(tmp_path / "x.onnx")))
    assert "validation file not found" in ENGINE.workload_problem(
        CnnNetwork(BUILTIN_DIGITS, validation_path=str(tmp_path / "v.npz")))
    assert ENGINE.workload_problem(DIGITS) is None


@pytest.mark.parametrize("lanes", [32, 64])
def test_vector_width_the_target_allows_but_synthesis_cannot_is_refused_not_clamped(lanes):
    from core.project import Project
    from core.workload import target_from_json

    target = target_from_json({"kind": "mobile_soc", "cores": 2, "vector_width": lanes})
    assert target.vector_width == lanes                      # a valid target: read as it is
    p = Project.starter()
    soc = next(e for e in p.targets if e.kind == "mobile_soc")
    p.set_value("targets", soc.id, target)
    request = p.request("cappuccino")
    assert request.target.vector_width == lanes             # nothing on the way clamps it
    with pytest.raises(InputError) as e:
        run(JobRequest(request.workload, request.target, dict(request.settings, compile=False, limit=10)))
    assert e.value.where == "target.vector_width" and str(lanes) in e.value.message
    assert "1, 2, 4, 8, 16" in e.value.message


def _v1(settings, target=None):
    return {"format": "dataflow-explorer-session", "version": 1,
            "workload": {"kind": "fpsp_filter", "preset": "analognet2"},
            "target": target or {"kind": "scamp5", "registers": 6, "array_size": 256},
            "engines": {"cappuccino": {"settings": settings}}}


OLD = {"accuracy_budget": 1.5, "prefer": "imprecise", "emit_dir": "/tmp/out", "compile": False, "min_seconds": 0.1,
       "repeats": 2, "limit": 50}


def test_v1_builtin_model_with_validation_becomes_the_cnn_workload():
    from core.session import from_json

    p = from_json(_v1(dict(OLD, model="builtin-digits", onnx_path="", validation_path="/data/val.npz")))
    assert p.chosen("cappuccino", "workloads").value == CnnNetwork(BUILTIN_DIGITS, validation_path="/data/val.npz")
    assert p.settings("cappuccino") == dict(OLD, search_sample=0, int8=False,
                                                   measure_split=True)      # issue 35 added them
    assert p.chosen("cappuccino", "targets").kind == "mobile_soc"     # the session's SCAMP-5 does not fit


def test_v1_onnx_model_becomes_an_onnx_workload():
    from core.session import from_json

    soc = {"kind": "mobile_soc", "cores": 4, "vector_width": 8}
    p = from_json(_v1(dict(OLD, model="onnx", onnx_path="/m/net.onnx", validation_path="/m/val.npz"), soc))
    assert p.chosen("cappuccino", "workloads").value == CnnNetwork(onnx_path="/m/net.onnx",
                                                                   validation_path="/m/val.npz")
    assert p.chosen("cappuccino", "targets").value == MobileSocTarget(4, 8)
    assert "ONNX file not found" in p.problem("cappuccino", "workloads")      # said, not a failed load


def test_the_kept_example_session_opens_ready_to_run():
    from pathlib import Path

    from core.session import load

    p = load(Path(__file__).resolve().parent / "data" / "sessions_v1" / "example_session.dfx")
    request = p.request("cappuccino")
    assert request.workload == DIGITS and request.target.kind == "mobile_soc"
    assert set(request.settings) == set(ENGINE.default_settings())


@pytest.mark.slow
def test_command_line_json():
    import subprocess
    import sys
    from pathlib import Path

    out = subprocess.run([sys.executable, "main.py", "cappuccino", "--model", "builtin-digits", "--no-compile",
                          "--limit", "20", "--threads", "2", "--vector-width", "8", "--json"],
                         cwd=Path(__file__).resolve().parents[1], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    assert r["model"]["name"] == BUILTIN_DIGITS and r["model"]["validation_images"] == 20
    assert r["target"] == {"threads": 2, "vector_width": 8}
