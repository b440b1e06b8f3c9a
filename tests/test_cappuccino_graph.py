"""The Cappuccino engine's op DAG: every op kind and the paper's five networks against onnxruntime.

onnxruntime is the independent computation: each ONNX graph here is run by it and by the numpy
reference (core.cappuccino.forward), and the map-major computation is checked against the
reference as the engine does (check_layouts). The networks are the zoo's layer sequences at a
small input and with channels / 8 (the full-size ones are in the benchmark, not in the suite).
"""

from __future__ import annotations

import numpy as np
import pytest

from core.cappuccino import allocation, networks
from core.cappuccino.forward import check_layouts, forward_reference
from core.cappuccino.graph_import import import_onnx
from core.cappuccino.inexact import search_modes
from core.cappuccino.model import CnnModel, ConvOp
from core.cappuccino.numerics import IMPRECISE, RELAXED
from core.errors import InputError

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

RNG = np.random.default_rng(3)
SMALL = {"alexnet": 67, "squeezenet11": 64, "googlenet": 64, "resnet18": 64, "mobilenet_v1": 64}


def _ort(path, x: np.ndarray, output: str | None = None) -> np.ndarray:
    """onnxruntime's output for each image (batch 1, as the graphs are declared)."""
    m = onnx.load(str(path))
    if output is not None:          # expose an inner tensor as the graph output
        del m.graph.output[:]
        m.graph.output.append(helper.make_empty_tensor_value_info(output))
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(m.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    name = sess.get_inputs()[0].name
    return np.concatenate([sess.run(None, {name: xi[None]})[0].reshape(1, -1) for xi in x])


def _model(path, x: np.ndarray) -> CnnModel:
    g = import_onnx(path)
    return CnnModel(g.name, g.network, g.ops, x, np.zeros(len(x), np.int64))


def _init(name: str, v) -> object:
    v = np.asarray(v)
    return numpy_helper.from_array(v.astype(np.int64 if v.dtype.kind in "iu" else np.float32), name)


def _save(tmp_path, name: str, nodes, inits: dict, in_shape, out_shape, out: str = "y"):
    graph = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, *in_shape])],
        [helper.make_tensor_value_info(out, TensorProto.FLOAT, [1, *out_shape])],
        [_init(k, v) for k, v in inits.items()])
    path = tmp_path / f"{name}.onnx"
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def _w(*shape):
    return RNG.standard_normal(shape).astype(np.float32) / np.sqrt(np.prod(shape[1:]))


# ------------------------------------------------------------------ every op kind
def _conv_graph(c, m, k, groups=1, stride=1, pads=(1, 1, 1, 1), bn=False, relu=True):
    inits = {"w": _w(m, c // groups, k, k), "b": 0.1 * RNG.standard_normal(m)}
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", group=groups, strides=[stride] * 2,
                              pads=list(pads), kernel_shape=[k, k])]
    last = "c"
    if bn:
        inits.update(g=RNG.uniform(0.5, 1.5, m), be=RNG.standard_normal(m), mu=RNG.standard_normal(m),
                     var=RNG.uniform(0.5, 1.5, m))
        nodes.append(helper.make_node("BatchNormalization", ["c", "g", "be", "mu", "var"], ["n"], epsilon=1e-3))
        last = "n"
    nodes.append(helper.make_node("Relu" if relu else "Identity", [last], ["y"]))
    return inits, nodes


CONV_CASES = {
    "dense_bn": dict(c=5, m=7, k=3, bn=True),
    "grouped": dict(c=8, m=12, k=3, groups=2),
    "grouped_aligned": dict(c=16, m=16, k=3, groups=2),
    "grouped_odd": dict(c=6, m=9, k=3, groups=3, stride=2),
    "depthwise": dict(c=10, m=10, k=3, groups=10, stride=2),
    "asymmetric_pads": dict(c=3, m=5, k=3, pads=(0, 1, 1, 2), relu=False),
    "stride2_5x5": dict(c=4, m=6, k=5, stride=2, pads=(2, 2, 2, 2)),
}


@pytest.mark.parametrize("case", CONV_CASES)
def test_convolutions_match_onnxruntime(case, tmp_path):
    spec = dict(CONV_CASES[case])
    inits, nodes = _conv_graph(**spec)
    shape = (spec["c"], 11, 13)
    x = RNG.standard_normal((3, *shape)).astype(np.float32)
    sess_shape = _ort_shape(tmp_path, case, nodes, inits, shape)
    path = _save(tmp_path, case, nodes, inits, shape, sess_shape)
    m = _model(path, x)
    conv = m.conv_ops[0]
    assert conv.groups == spec.get("groups", 1) and conv.depthwise == (case == "depthwise")
    assert [op.kind for op in m.ops] == ["conv"]            # BN folded, ReLU fused
    np.testing.assert_allclose(forward_reference(m, x)[0], _ort(path, x), rtol=1e-4, atol=1e-5)
    for V in (4, 8):
        assert check_layouts(m, x, V).ok, V
        assert check_layouts(m, x, V, {"conv": IMPRECISE}).ok, V


def _ort_shape(tmp_path, name, nodes, inits, in_shape):
    """The output shape by onnxruntime's shape inference (so the test does not type it)."""
    graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, *in_shape])],
                              [helper.make_empty_tensor_value_info("y")],
                              [numpy_helper.from_array(np.asarray(v, np.float32), k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": np.zeros((1, *in_shape), np.float32)})[0].shape[1:]


POOL_CASES = {
    "max_pad": ("MaxPool", dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])),
    "max_ceil": ("MaxPool", dict(kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)),
    "max_ceil_pad": ("MaxPool", dict(kernel_shape=[2, 2], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1)),
    "avg_excl_pad": ("AveragePool", dict(kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1])),
    "avg_incl_pad": ("AveragePool", dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
                                         count_include_pad=1)),
    "avg_incl_pad_ceil": ("AveragePool", dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
                                              count_include_pad=1, ceil_mode=1)),
    "avg_asym": ("AveragePool", dict(kernel_shape=[2, 2], strides=[2, 2], pads=[0, 0, 1, 1])),
    "global": ("GlobalAveragePool", {}),
}


@pytest.mark.parametrize("case", POOL_CASES)
def test_pooling_matches_onnxruntime(case, tmp_path):
    op, attrs = POOL_CASES[case]
    inits = {"w": _w(6, 3, 1, 1)}
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", kernel_shape=[1, 1]),
             helper.make_node(op, ["c"], ["y"], name="pool", **attrs)]
    shape = (3, 10, 9)
    path = _save(tmp_path, case, nodes, inits, shape, _ort_shape(tmp_path, case, nodes, inits, shape))
    x = RNG.standard_normal((3, *shape)).astype(np.float32)
    m = _model(path, x)
    assert m.ops[-1].kind == ("gap" if case == "global" else "pool")
    np.testing.assert_allclose(forward_reference(m, x)[0], _ort(path, x), rtol=1e-5, atol=1e-6)
    assert check_layouts(m, x, 4).ok


def test_branches_lrn_softmax_and_skipped_ops_match_onnxruntime(tmp_path):
    """Concat, residual Add + ReLU, LRN, Gemm/MatMul(+Add bias), Flatten/Reshape/Dropout, Softmax."""
    inits = {"w1": _w(6, 3, 3, 3), "w2": _w(5, 6, 1, 1), "w3": _w(5, 6, 3, 3), "w4": _w(10, 10, 1, 1),
             "fc": _w(7, 10 * 4 * 4), "fb": RNG.standard_normal(7), "mm": _w(4, 7).T, "mb": RNG.standard_normal(4),
             "shape": np.array([1, -1])}
    nodes = [helper.make_node("Conv", ["x", "w1"], ["a"], name="c1", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["a"], ["ar"]),
             helper.make_node("LRN", ["ar"], ["l"], name="lrn", size=3, alpha=0.5, beta=0.75, bias=2.0),
             helper.make_node("Conv", ["l", "w2"], ["b1"], name="b1"),
             helper.make_node("Conv", ["l", "w3"], ["b2"], name="b2", pads=[1, 1, 1, 1]),
             helper.make_node("Concat", ["b1", "b2"], ["cat"], name="cat", axis=1),
             helper.make_node("Conv", ["cat", "w4"], ["d"], name="c4"),
             helper.make_node("Add", ["d", "cat"], ["s"], name="res"),
             helper.make_node("Relu", ["s"], ["sr"]),
             helper.make_node("MaxPool", ["sr"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Dropout", ["p"], ["pd"]),
             helper.make_node("Reshape", ["pd", "shape"], ["f"]),
             helper.make_node("Gemm", ["f", "fc", "fb"], ["g"], name="fc1", transB=1),
             helper.make_node("Relu", ["g"], ["gr"]),
             helper.make_node("MatMul", ["gr", "mm"], ["h"], name="fc2"),
             helper.make_node("Add", ["h", "mb"], ["hb"]),
             helper.make_node("Identity", ["hb"], ["hi"]),
             helper.make_node("Softmax", ["hi"], ["y"], name="prob", axis=1)]
    path = _save(tmp_path, "branchy", nodes, inits, (3, 8, 8), (4,))
    x = RNG.standard_normal((5, 3, 8, 8)).astype(np.float32)
    m = _model(path, x)
    assert [op.kind for op in m.ops] == ["conv", "lrn", "conv", "conv", "concat", "conv", "add", "pool", "fc", "fc",
                                         "softmax"]
    res = next(op for op in m.ops if op.kind == "add")
    assert res.relu and res.inputs == ["c4", "cat"] and not m.is_chain
    assert m.consumers("cat") == [m.ops[5], res]
    np.testing.assert_allclose(forward_reference(m, x)[0], _ort(path, x), rtol=1e-5, atol=1e-6)
    logits = forward_reference(m, x, keep=True)[1][-2].reshape(len(x), -1)
    np.testing.assert_allclose(logits, _ort(path, x, "hb"), rtol=1e-4, atol=1e-5)
    for V in (2, 4, 8):
        assert check_layouts(m, x, V).ok, V
        assert check_layouts(m, x, V, {"c1": IMPRECISE, "b2": RELAXED, "fc1": IMPRECISE}).ok, V


def test_allocation_covers_every_kind():
    m = networks.load("googlenet", images=1, resolution=64, divisor=8)
    table = allocation.allocate(m.ops, 4, 2)
    assert {row.kind for row in table} == {"conv", "fc", "pool", "gap", "concat", "lrn", "softmax"}
    for op, row in zip(m.ops, table):
        olp = row.strategies[-1]
        assert olp.name == "OLP" and olp.threads == int(np.prod(op.out_shape))
        if isinstance(op, ConvOp):
            assert [s.name for s in row.strategies] == ["KLP", "FLP", "OLP"]
            assert row.strategies[0].threads == op.macs       # KLP: one thread per multiplication
    dw = networks.load("mobilenet_v1", images=1, resolution=32, divisor=8)
    conv = next(op for op in dw.conv_ops if op.depthwise)
    klp, flp, olp = allocation.conv_strategies(conv)
    assert flp.threads == olp.threads and flp.reduction_adds == 0     # one input map per output: nothing to reduce


# ------------------------------------------------------------------ refusals
def test_unsupported_nodes_are_named(tmp_path):
    inits = {"w": _w(4, 3, 3, 3)}
    nodes = [helper.make_node("Conv", ["x", "w"], ["a"], name="c1"),
             helper.make_node("Sigmoid", ["a"], ["s"], name="sig"),
             helper.make_node("Tanh", ["s"], ["y"], name="th")]
    path = _save(tmp_path, "bad", nodes, inits, (3, 6, 6), (4, 4, 4))
    with pytest.raises(InputError) as e:
        import_onnx(path)
    assert "Sigmoid (node 'sig')" in e.value.message and e.value.where == str(path)
    cases = {
        "dilated": ([helper.make_node("Conv", ["x", "w"], ["y"], name="dil", dilations=[2, 2])], "dil", "dilat"),
        "bn_alone": ([helper.make_node("Conv", ["x", "w"], ["a"], name="c1"),
                      helper.make_node("Relu", ["a"], ["r"]),
                      helper.make_node("BatchNormalization", ["r", "g", "b", "m", "v"], ["y"], name="bn")],
                     "bn", "directly after a Conv"),
        "relu_avg": ([helper.make_node("Conv", ["x", "w"], ["a"], name="c1"),
                      helper.make_node("AveragePool", ["a"], ["p"], name="avg", kernel_shape=[2, 2]),
                      helper.make_node("Relu", ["p"], ["y"], name="r2")], "r2", "averaging"),
    }
    inits.update(g=np.ones(4), b=np.zeros(4), m=np.zeros(4), v=np.ones(4))
    for name, (nodes, node, why) in cases.items():
        graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 6, 6])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", "c", "h", "w"])],
                                  [numpy_helper.from_array(np.asarray(v, np.float32), k) for k, v in inits.items()])
        p = tmp_path / f"{name}.onnx"
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        model.ir_version = 8
        onnx.save(model, str(p))
        with pytest.raises(InputError) as e:
            import_onnx(p)
        assert f"node {node!r}" in e.value.where and why in e.value.message, name


def test_graph_check_refuses_a_non_topological_graph():
    w = np.ones((2, 1, 1, 1), np.float32)
    a = ConvOp("a", w, np.zeros(2, np.float32), 1, 0, False, (1, 4, 4), inputs=["b"])
    b = ConvOp("b", np.ones((1, 2, 1, 1), np.float32), np.zeros(1, np.float32), 1, 0, False, (2, 4, 4),
               inputs=["input"])
    from core.nets.layers import Network

    with pytest.raises(InputError) as e:
        CnnModel("t", Network("t", "t", (1, 4, 4)), [a, b], np.zeros((1, 1, 4, 4), np.float32), np.zeros(1))
    assert "a: reads 'b'" in e.value.message and "topological" in e.value.message


# ------------------------------------------------------------------ the paper's networks
@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("onnx")


@pytest.mark.parametrize("name", networks.PAPER)
def test_network_matches_onnxruntime(name, cache):
    m = networks.load(name, images=3, resolution=SMALL[name], divisor=8, folder=cache)
    assert m.weights_source == "random (seed 0)" and "own top-1" in m.extra["labels"]
    path = m.extra["onnx"]
    kinds = {op.kind for op in m.ops}
    expect = {"alexnet": {"lrn", "fc"}, "squeezenet11": {"concat", "gap"}, "googlenet": {"concat", "lrn", "gap"},
              "resnet18": {"add", "gap"}, "mobilenet_v1": {"gap"}}[name]
    assert expect <= kinds and m.ops[-1].kind == "softmax"
    if name == "mobilenet_v1":
        assert sum(op.depthwise for op in m.conv_ops) == 13
    if name == "alexnet":
        assert [op.groups for op in m.conv_ops[:5]] == [1, 2, 1, 2, 2]
    x = m.x_val
    np.testing.assert_allclose(forward_reference(m, x)[0], _ort(path, x), rtol=1e-4, atol=1e-6)
    before_softmax = onnx.load(path).graph.node[-1].input[0]
    logits = forward_reference(m, x, keep=True)[1][-2].reshape(len(x), -1)
    ref = _ort(path, x, before_softmax)
    assert np.abs(logits - ref).max() <= 1e-4 * max(1.0, float(np.abs(ref).max()))
    assert check_layouts(m, x, 4).ok


def test_inexact_search_on_a_branching_network(cache):
    m = networks.load("squeezenet11", images=6, resolution=48, divisor=8, folder=cache)
    items = list(search_modes(m, 0.0, IMPRECISE))
    choice = items[-1]
    assert choice.precise_accuracy == 100.0          # labels are the precise network's own classes
    assert set(choice.modes) == {op.name for op in m.conv_ops} and len(choice.configurations) > 2 * len(m.conv_ops)
    assert check_layouts(m, m.x_val, 4, choice.modes).ok


def test_zoo_names_and_files_on_the_command_line(tmp_path):
    from core.cappuccino.engine import _cli_network

    assert _cli_network("resnet18", "").source == "zoo"
    assert _cli_network(str(tmp_path / "m.onnx"), "").onnx_path == str(tmp_path / "m.onnx")
    with pytest.raises(InputError) as e:
        _cli_network("resnet19", "")
    assert e.value.where == "--model" and "squeezenet11" in e.value.message


# ------------------------------------------------------------------ a second trained model
@pytest.mark.slow
def test_trained_mlp_on_real_validation_data(tmp_path):
    """The breast-cancer MLP (trained here with scikit-learn) through the ONNX path: numpy's accuracy
    equals scikit-learn's own on the held-out split, and the inexact search runs on real labels."""
    pytest.importorskip("sklearn")
    from core.cappuccino import train_mlp
    from core.cappuccino.model import load_onnx_model

    assert train_mlp.main(["--out", str(tmp_path / "m.onnx"), "--validation", str(tmp_path / "v.npz")]) == 0
    mlp = train_mlp.train()
    m = load_onnx_model(str(tmp_path / "m.onnx"), str(tmp_path / "v.npz"))
    assert [op.kind for op in m.ops] == ["fc", "fc", "fc"] and m.input_shape == (30, 1, 1)
    assert m.weights_source.startswith("trained (scikit-learn MLPClassifier")
    x = m.x_val
    acc = 100 * float((forward_reference(m, x)[0].argmax(1) == m.y_val).mean())
    assert len(m.y_val) == 114 and acc == pytest.approx(mlp.val_accuracy)
    np.testing.assert_allclose(forward_reference(m, x)[0], _ort(tmp_path / "m.onnx", x.reshape(len(x), -1)),
                               rtol=1e-5, atol=1e-4)
    choice = list(search_modes(m, 0.5, IMPRECISE))[-1]
    assert choice.precise_accuracy == pytest.approx(acc) and choice.accuracy >= acc - 0.5


def test_engine_runs_a_zoo_network_and_says_its_weights_are_random(monkeypatch, tmp_path):
    import argparse

    from core.cappuccino.engine import ENGINE
    from core.cappuccino.result import CappuccinoResult
    from core.jobs import CancelToken, run_foreground

    monkeypatch.setenv("DFX_ONNX_CACHE", str(tmp_path))
    p = argparse.ArgumentParser()
    ENGINE.add_cli_arguments(p)
    request = ENGINE.request_from_cli(p.parse_args(["--model", "lenet5", "--no-compile", "--limit", "4",
                                                    "--threads", "2"]))
    out = run_foreground(ENGINE.run(request, CancelToken()), quiet=True)
    assert out.error is None, out.error
    r = out.result
    assert isinstance(r, CappuccinoResult)
    assert r.model.extra["weights"] == "random (seed 0)" and r.model.validation_images == 4
    assert r.layout_check.precise.ok and r.inexact.precise_accuracy == 100.0
    assert [row.kind for row in r.layers][-1] == "softmax"
    text = ENGINE.format_text(r)
    assert "weights: random (seed 0); labels are the precise network's own top-1 class" in text
