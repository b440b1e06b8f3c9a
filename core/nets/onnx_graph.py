"""What both ONNX readers need before they interpret a single operator: the checked, shape-inferred
model, a node's attributes, a tensor's dims, who reads and who writes each tensor, and how a node is
named in an error.

The layer table (core.nets.onnx_import) and Cappuccino's op DAG (core.cappuccino.graph_import) read
the same files and must agree on these, e.g. that a Relu folds into a layer only when no other node
(nor the graph output) reads the layer's output: one count of readers serves both.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from typing import Any, Iterator

from core.errors import InputError


def read_model(path: str | os.PathLike) -> Any:
    """Load, check and shape-infer an ONNX file; InputError naming the file on anything unreadable."""
    import onnx
    from onnx import shape_inference

    where = str(path)
    if not os.path.isfile(path):
        raise InputError("file not found", where)
    try:
        model = onnx.load(os.fspath(path))
    except Exception as exc:  # protobuf DecodeError, truncated files, external data missing...
        raise InputError(f"not a readable ONNX model ({type(exc).__name__}: {exc})"[:300], where) from None
    if not model.graph.node:
        raise InputError("not an ONNX model: the graph has no nodes", where)
    try:
        onnx.checker.check_model(model)
    except Exception as exc:
        raise InputError(f"invalid ONNX model: {str(exc).strip().splitlines()[0]}"[:300], where) from None
    try:
        return shape_inference.infer_shapes(model)
    except Exception as exc:
        raise InputError(f"ONNX shape inference failed: {str(exc).strip().splitlines()[0]}"[:300], where) from None


def tensor_dims(value_info: Any) -> tuple[int | None, ...] | None:
    """A tensor's dims (None for a symbolic one), or None when ONNX does not know its shape."""
    t = value_info.type
    if not t.HasField("tensor_type") or not t.tensor_type.HasField("shape"):
        return None
    return tuple(d.dim_value if d.HasField("dim_value") else None for d in t.tensor_type.shape.dim)


def node_attrs(node: Any) -> dict[str, Any]:
    """A node's attributes as Python values."""
    from onnx import helper

    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def consumer_counts(graph: Any) -> dict[str, int]:
    """How many node inputs and graph outputs read each tensor: what follows a layer (BatchNorm,
    Relu, a constant bias) may fold into it only when it is the one reader of the layer's output."""
    counts: dict[str, int] = {}
    for node in graph.node:
        for name in node.input:
            if name:
                counts[name] = counts.get(name, 0) + 1
    for out in graph.output:
        counts[out.name] = counts.get(out.name, 0) + 1
    return counts


def producers(graph: Any) -> dict[str, Any]:
    """The node writing each tensor (graph inputs and initializers have none)."""
    return {name: node for node in graph.node for name in node.output}


def node_where(path: str, node: Any) -> str:
    """Where an error about `node` points: the file, the node's name and its operator."""
    return f"{path}: node {node.name!r} ({node.op_type})"


@contextmanager
def interpreting(where: str) -> Iterator[None]:
    """Around one node's handler: malformed attributes or inputs surface there as KeyError,
    ValueError, IndexError or TypeError, and leave as an InputError naming the node (`where`), never
    a traceback; the handler's own InputErrors pass unchanged."""
    try:
        yield
    except InputError:
        raise
    except (KeyError, ValueError, IndexError, TypeError) as exc:
        raise InputError(f"cannot interpret this node ({type(exc).__name__}: {exc})"[:300], where) from None
