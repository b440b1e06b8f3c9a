"""core.nets.onnx_graph: the bookkeeping both ONNX readers share (who reads and writes each tensor,
how a malformed node is reported), and that the two readers therefore refuse the same Relu."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from core.cappuccino.graph_import import import_onnx
from core.errors import InputError
from core.nets.onnx_graph import consumer_counts, interpreting, node_where, producers, read_model
from core.nets.onnx_import import UnsupportedOperators, load_onnx


def _branchy(path) -> str:
    """x -> Conv c -> Relu r, and y = Add(c, r): the Conv's output is read twice, un-rectified once."""
    import onnx

    w = numpy_helper.from_array(np.ones((2, 1, 3, 3), np.float32), "w")
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("Add", ["c", "r"], ["y"], name="add")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 5, 5])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 5, 5])], initializer=[w])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return str(path)


def test_readers_and_writers_of_each_tensor(tmp_path):
    graph = read_model(_branchy(tmp_path / "b.onnx")).graph
    # node inputs, plus one for the graph output; the network input and the weights count too
    assert consumer_counts(graph) == {"x": 1, "w": 1, "c": 2, "r": 1, "y": 1}
    assert {name: node.name for name, node in producers(graph).items()} == {"c": "conv", "r": "relu", "y": "add"}
    assert node_where("m.onnx", graph.node[1]) == "m.onnx: node 'relu' (Relu)"


def test_both_readers_refuse_a_relu_whose_input_is_read_twice(tmp_path):
    path = _branchy(tmp_path / "b.onnx")
    with pytest.raises(UnsupportedOperators, match="also read un-rectified"):
        load_onnx(path)
    with pytest.raises(InputError, match="also read un-rectified") as err:
        import_onnx(path)
    assert err.value.where == f"{path}: node 'relu' (Relu)"


def test_a_malformed_node_becomes_an_input_error_naming_it():
    with pytest.raises(InputError) as err:
        with interpreting("m.onnx: node 'p' (MaxPool)"):
            {}["kernel_shape"]
    assert err.value.where == "m.onnx: node 'p' (MaxPool)"
    assert err.value.message == "cannot interpret this node (KeyError: 'kernel_shape')"
    own = InputError("only square pooling", "elsewhere")
    with pytest.raises(InputError) as err:
        with interpreting("m.onnx: node 'p' (MaxPool)"):
            raise own
    assert err.value is own
