"""ONNX import: models built here with onnx.helper, run by onnx's reference evaluator, compared with
a numpy forward pass over the imported layer table and folded weights."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from core.errors import InputError
from core.nets import zoo
from core.nets.check import check_chain
from core.nets.layers import Conv, Network, Pool
from core.nets.onnx_import import UnsupportedOperators, load_onnx, load_onnx_weights

RNG = np.random.default_rng(7)


def _rand(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def _save(path, nodes, inits: dict[str, np.ndarray], in_shape, out="y") -> str:
    """Save a one-input graph; the output's declared shape comes from ONNX shape inference."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, list(in_shape))
    probe = helper.make_model(helper.make_graph(nodes, "g", [x], [], initializer=[
        numpy_helper.from_array(v, k) for k, v in inits.items()]), opset_imports=[helper.make_opsetid("", 17)])
    inferred = {vi.name: vi for vi in onnx.shape_inference.infer_shapes(probe).graph.value_info}
    y = inferred[out]
    graph = helper.make_graph(nodes, "g", [x], [y],
                              initializer=[numpy_helper.from_array(v, k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, str(path))
    return str(path)


# ------------------------------------------------------------------ numpy reference of the layer table
def conv2d(x, w, b, stride, pad, groups):
    c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (pad, pad), (pad, pad)))
    oh, ow = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    y = np.zeros((o, oh, ow), np.float64)
    og = o // groups
    for g in range(groups):
        xs = xp[g * cg:(g + 1) * cg]
        ws = w[g * og:(g + 1) * og]
        for i in range(oh):
            for j in range(ow):
                patch = xs[:, i * stride:i * stride + kh, j * stride:j * stride + kw]
                y[g * og:(g + 1) * og, i, j] = np.tensordot(ws, patch, axes=3)
    return y + b[:, None, None]


def pool2d(x, p: Pool):
    assert p.pad == 0
    y = np.zeros(p.out_shape)
    for i in range(p.out_h):
        for j in range(p.out_w):
            win = x[:, i * p.stride:i * p.stride + p.k, j * p.stride:j * p.stride + p.k]
            y[:, i, j] = win.max(axis=(1, 2)) if p.mode == "max" else win.mean(axis=(1, 2))
    return y


def run_chain(net: Network, weights, x):
    """Forward pass of a sequential layer table (no branches)."""
    for l in net.layers:
        if isinstance(l, Conv):
            wb = weights[l.name]
            if l.fc:
                x = wb["weight"] @ x.reshape(-1) + wb["bias"]
                x = x.reshape(-1, 1, 1)
            else:
                x = conv2d(x, wb["weight"], wb["bias"], l.stride, l.pad, l.groups)
            if l.relu:
                x = np.maximum(x, 0)
        elif isinstance(l, Pool):
            x = pool2d(x, l)
    return x


def softmax(v):
    e = np.exp(v - v.max())
    return e / e.sum()


# ------------------------------------------------------------------ tests
def test_sequential_model_shapes_and_folded_weights_match_the_onnx_reference(tmp_path):
    inits = {"w1": _rand(4, 3, 3, 3), "b1": _rand(4),
             "g": np.abs(_rand(4)) + 0.5, "be": _rand(4), "mu": _rand(4), "var": np.abs(_rand(4)) + 0.1,
             "w2": _rand(4, 1, 3, 3), "w3": _rand(5, 16), "b3": _rand(5)}
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c1", "g", "be", "mu", "var"], ["n1"], name="bn1", epsilon=1e-3),
        helper.make_node("Relu", ["n1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "w2"], ["c2"], name="dw", group=4, strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("Dropout", ["r2"], ["d2"], name="drop"),
        helper.make_node("Flatten", ["d2"], ["f"], name="flat"),
        helper.make_node("Gemm", ["f", "w3", "b3"], ["z"], name="fc", transB=1),
        helper.make_node("Softmax", ["z"], ["y"], name="prob"),
    ]
    path = _save(tmp_path / "small.onnx", nodes, inits, (1, 3, 8, 8))
    net = load_onnx(path)
    check_chain(net)
    assert net.name == "small" and net.input_shape == (3, 8, 8)
    assert [(type(l).__name__, l.name, l.out_shape) for l in net.layers] == [
        ("Conv", "conv1", (4, 8, 8)), ("Pool", "pool1", (4, 4, 4)), ("Conv", "dw", (4, 2, 2)), ("Conv", "fc", (5, 1, 1))]
    conv1, _, dw, fc = net.layers
    assert conv1.relu and dw.relu and dw.groups == 4 and dw.stride == 2 and not fc.relu and fc.fc
    assert "1 BatchNormalization" in net.notes

    weights = load_onnx_weights(path)
    assert set(weights) == {"conv1", "dw", "fc"}
    assert weights["conv1"]["weight"].shape == (4, 3, 3, 3) and weights["fc"]["weight"].shape == (5, 16)
    x = _rand(1, 3, 8, 8)
    (want,) = ReferenceEvaluator(path).run(None, {"x": x})
    got = softmax(run_chain(net, weights, x[0]).reshape(-1))
    np.testing.assert_allclose(got, want.reshape(-1), rtol=1e-4, atol=1e-6)


def test_branches_add_concat_matmul_bias(tmp_path):
    inits = {"wa": _rand(4, 4, 3, 3), "wb": _rand(2, 4, 1, 1), "wc": _rand(3, 4, 3, 3),
             "wm": _rand(5, 3), "bm": _rand(3)}
    nodes = [
        helper.make_node("Conv", ["x", "wa"], ["a"], name="res_conv", pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["a", "x"], ["s"], name="res_add"),
        helper.make_node("Relu", ["s"], ["sr"], name="res_relu"),
        helper.make_node("Conv", ["sr", "wb"], ["b"], name="branch1x1"),
        helper.make_node("Conv", ["sr", "wc"], ["c"], name="branch3x3", pads=[1, 1, 1, 1]),
        helper.make_node("Concat", ["b", "c"], ["cat"], name="cat", axis=1),
        helper.make_node("GlobalAveragePool", ["cat"], ["gp"], name="gap"),
        helper.make_node("Reshape", ["gp", "shape"], ["f"], name="reshape"),
        helper.make_node("MatMul", ["f", "wm"], ["m"], name="fc"),
        helper.make_node("Add", ["m", "bm"], ["y"], name="fc_bias"),
    ]
    shape = helper.make_node("Constant", [], ["shape"], name="shape_const",
                             value=numpy_helper.from_array(np.array([1, -1], np.int64)))
    path = _save(tmp_path / "branches.onnx", [shape] + nodes, inits, (1, 4, 6, 6))
    net = load_onnx(path)
    check_chain(net)
    kinds = [(type(l).__name__, getattr(l, "op", ""), l.out_shape) for l in net.layers]
    assert kinds == [("Conv", "", (4, 6, 6)), ("Eltwise", "add", (4, 6, 6)), ("Conv", "", (2, 6, 6)),
                     ("Conv", "", (3, 6, 6)), ("Eltwise", "concat", (5, 6, 6)), ("Pool", "", (5, 1, 1)),
                     ("Conv", "", (3, 1, 1))]
    assert not net.layers[0].relu and net.layers[1].relu   # the ReLU follows the add, not the conv
    w = load_onnx_weights(path)
    np.testing.assert_array_equal(w["fc"]["bias"], inits["bm"])   # the Add was folded as the bias
    x = _rand(1, 4, 6, 6)
    (want,) = ReferenceEvaluator(path).run(None, {"x": x})
    s = np.maximum(conv2d(x[0], w["res_conv"]["weight"], w["res_conv"]["bias"], 1, 1, 1) + x[0], 0)
    cat = np.concatenate([conv2d(s, w["branch1x1"]["weight"], w["branch1x1"]["bias"], 1, 0, 1),
                          conv2d(s, w["branch3x3"]["weight"], w["branch3x3"]["bias"], 1, 1, 1)])
    got = w["fc"]["weight"] @ cat.mean(axis=(1, 2)) + w["fc"]["bias"]
    np.testing.assert_allclose(got, want.reshape(-1), rtol=1e-4, atol=1e-5)


def _zoo_to_onnx(net: Network, path) -> str:
    """Write a sequential zoo network as ONNX (random weights) the way a framework would export it."""
    nodes, inits, cur, flat = [], {}, "x", False
    for l in net.layers:
        if isinstance(l, Conv) and l.fc:
            if not flat:
                nodes.append(helper.make_node("Flatten", [cur], ["flat"], name="flatten"))
                cur, flat = "flat", True
            inits[l.name + "_w"], inits[l.name + "_b"] = _rand(l.out_ch, l.in_ch), _rand(l.out_ch)
            nodes.append(helper.make_node("Gemm", [cur, l.name + "_w", l.name + "_b"], [l.name], name=l.name,
                                          transB=1))
        elif isinstance(l, Conv):
            inits[l.name + "_w"] = _rand(l.out_ch, l.in_ch // l.groups, l.k_h, l.k_w)
            nodes.append(helper.make_node("Conv", [cur, l.name + "_w"], [l.name], name=l.name, group=l.groups,
                                          strides=[l.stride] * 2, pads=[l.pad] * 4))
        else:
            op = "MaxPool" if l.mode == "max" else "AveragePool"
            nodes.append(helper.make_node(op, [cur], [l.name], name=l.name, kernel_shape=[l.k] * 2,
                                          strides=[l.stride] * 2, pads=[l.pad] * 4, ceil_mode=int(l.ceil_mode)))
        cur = l.name
        if isinstance(l, Conv) and l.relu:
            nodes.append(helper.make_node("Relu", [cur], [cur + "_relu"], name=cur + "_relu"))
            cur = cur + "_relu"
    nodes.append(helper.make_node("Identity", [cur], ["y"], name="out"))
    return _save(path, nodes, inits, (1,) + tuple(net.input_shape))


@pytest.mark.parametrize("name", ["lenet5", "cifar10_quick", "pilotnet"])
def test_zoo_networks_round_trip_through_onnx(tmp_path, name):
    net = zoo.get(name)
    imported = load_onnx(_zoo_to_onnx(net, tmp_path / f"{name}.onnx"))
    assert imported.layers == net.layers
    assert imported.macs == net.macs


def test_unsupported_operators_are_all_listed(tmp_path):
    inits = {"w": _rand(2, 1, 3, 3)}
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv"),
             helper.make_node("LeakyRelu", ["c"], ["l"], name="leaky"),
             helper.make_node("Tanh", ["l"], ["t"], name="squash"),
             helper.make_node("Relu", ["t"], ["y"], name="relu")]
    path = _save(tmp_path / "odd.onnx", nodes, inits, (1, 1, 5, 5))
    with pytest.raises(UnsupportedOperators) as err:
        load_onnx(path)
    assert [(op, n) for op, n, _ in err.value.ops] == [("LeakyRelu", "leaky"), ("Tanh", "squash")]
    msg = str(err.value)
    assert "LeakyRelu" in msg and "'leaky'" in msg and "Tanh" in msg and "'squash'" in msg and "odd.onnx" in msg
    assert isinstance(err.value, InputError)


def test_batchnorm_that_cannot_be_folded_is_refused(tmp_path):
    inits = {"g": np.ones(1, np.float32), "b": np.zeros(1, np.float32), "m": np.zeros(1, np.float32),
             "v": np.ones(1, np.float32), "w": _rand(2, 1, 3, 3)}
    nodes = [helper.make_node("BatchNormalization", ["x", "g", "b", "m", "v"], ["n"], name="input_bn"),
             helper.make_node("Conv", ["n", "w"], ["y"], name="conv")]
    with pytest.raises(UnsupportedOperators, match="input_bn"):
        load_onnx(_save(tmp_path / "bn.onnx", nodes, inits, (1, 1, 5, 5)))


def test_asymmetric_padding(tmp_path):
    w = {"w": _rand(2, 1, 3, 3)}
    ok = [helper.make_node("Conv", ["x", "w"], ["y"], name="c", strides=[2, 2], pads=[0, 0, 1, 1])]
    net = load_onnx(_save(tmp_path / "tf_same.onnx", ok, w, (1, 1, 8, 8)))
    assert net.layers[0].pad == 1 and net.layers[0].out_shape == (2, 4, 4)   # ONNX: (8+1-3)//2+1 = 4
    w2 = {"w": _rand(2, 1, 2, 2)}
    bad = [helper.make_node("Conv", ["x", "w"], ["y"], name="c2", pads=[0, 0, 1, 1])]
    with pytest.raises(InputError, match="c2.*padding"):
        load_onnx(_save(tmp_path / "odd_pad.onnx", bad, w2, (1, 1, 5, 5)))


def test_truncated_garbage_and_missing_files_are_refused(tmp_path):
    net = zoo.get("lenet5")
    good = _zoo_to_onnx(net, tmp_path / "lenet.onnx")
    data = open(good, "rb").read()
    cut = tmp_path / "cut.onnx"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError) as err:
        load_onnx(cut)
    assert "cut.onnx" in str(err.value) and not isinstance(err.value, UnsupportedOperators)
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"this is not protobuf \x00\xff\xfe")
    with pytest.raises(InputError, match="junk.onnx"):
        load_onnx(junk)
    with pytest.raises(InputError, match="file not found"):
        load_onnx(tmp_path / "nope.onnx")
    with pytest.raises(InputError, match="cut.onnx"):
        load_onnx_weights(cut)


def test_auto_pad_activations_and_global_pool(tmp_path):
    inits = {"w": _rand(3, 2, 3, 3), "w2": _rand(4, 3, 1, 1)}
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="same", strides=[2, 2], auto_pad="SAME_UPPER"),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("Conv", ["r", "w2"], ["c2"], name="pw"),
             helper.make_node("AveragePool", ["c2"], ["p"], name="avg", kernel_shape=[3, 3], strides=[2, 2],
                              ceil_mode=1),
             helper.make_node("GlobalAveragePool", ["p"], ["y"], name="gap")]
    net = load_onnx(_save(tmp_path / "act.onnx", nodes, inits, (1, 2, 9, 9)))
    same, pw, avg, gap = net.layers
    assert same.out_shape == (3, 5, 5) and same.relu            # SAME: ceil(9 / 2) = 5
    assert not pw.relu and avg.ceil_mode and avg.out_shape == (4, 2, 2) and gap.out_shape == (4, 1, 1)
    check_chain(net)


def test_activations_other_than_relu_are_refused_not_altered(tmp_path):
    inits = {"w": _rand(3, 2, 3, 3), "lo": np.array(0, np.float32), "hi": np.array(6, np.float32),
             "w2": _rand(4, 3, 1, 1)}
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="same"),
             helper.make_node("Clip", ["c", "lo", "hi"], ["r"], name="relu6"),
             helper.make_node("Conv", ["r", "w2"], ["c2"], name="pw"),
             helper.make_node("Sigmoid", ["c2"], ["y"], name="gate")]
    with pytest.raises(UnsupportedOperators) as info:
        load_onnx(_save(tmp_path / "act2.onnx", nodes, inits, (1, 2, 9, 9)))
    assert [op for op, _name, _why in info.value.ops] == ["Clip", "Sigmoid"]


def test_non_square_global_pool_and_bad_reshape_are_refused(tmp_path):
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="c"),
             helper.make_node("GlobalAveragePool", ["c"], ["y"], name="gap")]
    with pytest.raises(InputError, match="gap.*non-square"):
        load_onnx(_save(tmp_path / "rect.onnx", nodes, {"w": _rand(2, 1, 1, 1)}, (1, 1, 4, 6)))
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="c"),
             helper.make_node("Reshape", ["c", "shape"], ["y"], name="fold")]
    inits = {"w": _rand(2, 1, 1, 1), "shape": np.array([1, 4, 2, 2], np.int64)}
    with pytest.raises(UnsupportedOperators, match="fold"):
        load_onnx(_save(tmp_path / "reshape.onnx", nodes, inits, (1, 1, 4, 2)))


# ------------------------------------------------------------------ where a Relu can go
def _relu_graph(tmp_path, name, middle, extra=None, in_shape=(1, 2, 6, 6)):
    """Conv 'conv' (3 maps, 3x3, pad 1) -> `middle` nodes -> Flatten -> Gemm 'fc' (output y)."""
    inits = {"w": _rand(3, in_shape[1], 3, 3), "b": _rand(3) - 0.5, **(extra or {})}
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1])] + middle
    probe = onnx.load(_save(tmp_path / f"{name}_probe.onnx", nodes, inits, in_shape, out=middle[-1].output[0]))
    n = int(np.prod([d.dim_value for d in probe.graph.output[0].type.tensor_type.shape.dim][1:]))
    inits.update(wf=_rand(4, n), bf=_rand(4))
    nodes = nodes + [helper.make_node("Flatten", [middle[-1].output[0]], ["f"], name="flat"),
                     helper.make_node("Gemm", ["f", "wf", "bf"], ["y"], name="fc", transB=1)]
    return _save(tmp_path / f"{name}.onnx", nodes, inits, in_shape)


def test_relu_after_max_pool_is_folded_into_the_conv(tmp_path):
    path = _relu_graph(tmp_path, "mp_relu", [
        helper.make_node("MaxPool", ["c"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Relu", ["p"], ["r"], name="relu")])
    net, w = load_onnx(path), load_onnx_weights(path)
    conv, pool, fc = net.layers
    assert conv.relu and pool.mode == "max" and not fc.relu
    x = _rand(1, 2, 6, 6)
    # ONNX order (pool, then ReLU) in numpy; the layer table computes ReLU, then pool
    c = conv2d(x[0], w["conv"]["weight"], w["conv"]["bias"], 1, 1, 1)
    pooled = c.reshape(3, 3, 2, 3, 2).max(axis=(2, 4))
    want = w["fc"]["weight"] @ np.maximum(pooled, 0).reshape(-1) + w["fc"]["bias"]
    got = run_chain(net, w, x[0]).reshape(-1)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    (onnx_y,) = ReferenceEvaluator(path).run(None, {"x": x})
    np.testing.assert_allclose(got, onnx_y.reshape(-1), rtol=1e-4, atol=1e-5)


def test_relu_after_flatten_is_folded_and_a_second_relu_is_a_no_op(tmp_path):
    path = _relu_graph(tmp_path, "flat_relu", [
        helper.make_node("Relu", ["c"], ["r0"], name="relu0"),
        helper.make_node("MaxPool", ["r0"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Relu", ["p"], ["r1"], name="again"),          # input already >= 0
        helper.make_node("Flatten", ["r1"], ["f0"], name="flat0"),
        helper.make_node("Gemm", ["f0", "w2"], ["g"], name="fc0", transB=1),
        helper.make_node("Flatten", ["g"], ["g2"], name="flat1"),
        helper.make_node("Relu", ["g2"], ["r2"], name="relu_flat")],   # FC -> Flatten -> Relu
        extra={"w2": _rand(5, 27)})
    net, w = load_onnx(path), load_onnx_weights(path)
    assert [(l.name, getattr(l, "relu", None)) for l in net.layers] == [
        ("conv", True), ("pool", None), ("fc0", True), ("fc", False)]
    x = _rand(1, 2, 6, 6)
    (want,) = ReferenceEvaluator(path).run(None, {"x": x})
    np.testing.assert_allclose(run_chain(net, w, x[0]).reshape(-1), want.reshape(-1), rtol=1e-4, atol=1e-5)
    # Conv -> Flatten -> Relu: the ReLU of the flattened maps is the conv's ReLU
    path = _relu_graph(tmp_path, "conv_flat_relu", [helper.make_node("Flatten", ["c"], ["cf"], name="flat_c"),
                                                     helper.make_node("Relu", ["cf"], ["r"], name="relu")])
    net, w = load_onnx(path), load_onnx_weights(path)
    assert [getattr(l, "relu", None) for l in net.layers] == [True, False]
    (want,) = ReferenceEvaluator(path).run(None, {"x": x})
    np.testing.assert_allclose(run_chain(net, w, x[0]).reshape(-1), want.reshape(-1), rtol=1e-4, atol=1e-5)


def test_relu_that_no_layer_can_apply_is_refused_with_the_reason(tmp_path):
    avg = _relu_graph(tmp_path, "avg_relu", [
        helper.make_node("AveragePool", ["c"], ["p"], name="avg", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Relu", ["p"], ["r"], name="relu_avg")])
    with pytest.raises(UnsupportedOperators) as err:
        load_onnx(avg)
    assert [(op, n) for op, n, _ in err.value.ops] == [("Relu", "relu_avg")]
    assert "AveragePool 'avg'" in str(err.value) and "averaging" in str(err.value)

    # the conv output is also read by a second pooling branch that needs it un-rectified
    shared = [helper.make_node("MaxPool", ["c"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
              helper.make_node("Relu", ["p"], ["r"], name="relu_shared"),
              helper.make_node("MaxPool", ["c"], ["q"], name="pool2", kernel_shape=[2, 2], strides=[2, 2]),
              helper.make_node("Add", ["r", "q"], ["s"], name="sum")]
    with pytest.raises(UnsupportedOperators) as err:
        load_onnx(_relu_graph(tmp_path, "shared", shared))
    assert [n for _, n, _ in err.value.ops] == ["relu_shared"] and "other nodes" in str(err.value)

    inits = {"w": _rand(3, 2, 3, 3)}
    on_input = [helper.make_node("Relu", ["x"], ["r"], name="relu_in"),
                helper.make_node("Conv", ["r", "w"], ["y"], name="conv")]
    with pytest.raises(UnsupportedOperators) as err:
        load_onnx(_save(tmp_path / "in_relu.onnx", on_input, inits, (1, 2, 5, 5)))
    assert [n for _, n, _ in err.value.ops] == ["relu_in"] and "network input" in str(err.value)
