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

from core import faults
from core.errors import InputError
from core.files import MODEL_LIMIT, regular_file


# The newest ONNX opset the readers were written against (ONNX 1.17): later opsets changed operators
# they read (Flatten, Reshape, Constant and Identity in opset 25), so a newer model is refused by name
# rather than read by rules that may no longer hold.
MAX_OPSET = 22
# Element types a graph input may have: the readers compute in floating point (ONNX TensorProto codes).
FLOAT_TYPES = {1: "float32", 10: "float16", 11: "float64", 16: "bfloat16"}
# Reading an ONNX file needs about this many times its size (the bytes, then the parsed message).
LOAD_FACTOR = 2.5


def read_model(path: str | os.PathLike) -> Any:
    """Load, check and shape-infer an ONNX file; InputError naming the file on anything unreadable,
    MachineFault (core.faults) when the machine had too little memory to read it (a file that is fine
    is not called unreadable)."""
    where = str(path)
    if not os.path.exists(path) and not os.path.islink(path):
        raise InputError("file not found", where)
    size = regular_file(os.fspath(path), "ONNX model", MODEL_LIMIT).stat().st_size   # not a FIFO, device or folder
    try:
        return _read_model(path, where, size)
    except MemoryError as exc:
        raise _no_memory(where, size) from exc


def _no_memory(where: str, size: int) -> faults.MachineFault:
    return faults.MachineFault(faults.out_of_memory(f"reading the ONNX model {where} ({faults.mib(size)})",
                                                    LOAD_FACTOR * size, "model"))


def _first_line(exc: Exception) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def _read_model(path: str | os.PathLike, where: str, size: int) -> Any:
    import onnx
    from onnx import shape_inference

    try:
        model = onnx.load(os.fspath(path))
    except MemoryError:
        raise
    except Exception as exc:  # protobuf DecodeError, truncated files, external data missing...
        room = faults.memory_headroom()
        if room is not None and room < LOAD_FACTOR * size:      # protobuf says "Error parsing" when an allocation fails
            raise _no_memory(where, size) from exc
        raise InputError(f"not a readable ONNX model ({type(exc).__name__}: {exc})"[:300], where) from None
    if not model.graph.node:
        raise InputError("not an ONNX model: the graph has no nodes", where)
    check_opset_and_inputs(model, where)
    try:
        onnx.checker.check_model(model)
    except MemoryError:
        raise
    except Exception as exc:
        raise InputError(f"invalid ONNX model: {_first_line(exc)}"[:300], where) from None
    check_attributes(model.graph, where)
    check_weights(model.graph, where)
    try:
        return shape_inference.infer_shapes(model)
    except MemoryError:
        raise
    except Exception as exc:
        raise InputError(f"ONNX shape inference failed: {_first_line(exc)}"[:300], where) from None


def check_opset_and_inputs(model: Any, where: str) -> None:
    """The model's opset is one the readers know, and every graph input (not a weight) holds floating
    point numbers; InputError naming the opset or the input and its type otherwise."""
    from onnx import TensorProto

    for o in model.opset_import:
        if o.domain in ("", "ai.onnx") and o.version > MAX_OPSET:
            raise InputError(f"the model uses ONNX opset {o.version}; this importer knows opsets up to {MAX_OPSET} "
                             f"(export the model with opset {MAX_OPSET} or older)", f"{where}: opset_import")
    weights = {t.name for t in model.graph.initializer}
    for value in model.graph.input:
        if value.name in weights or not value.type.HasField("tensor_type"):
            continue
        code = value.type.tensor_type.elem_type
        if code not in FLOAT_TYPES:
            kind = TensorProto.DataType.Name(code).lower() if code in TensorProto.DataType.values() else str(code)
            raise InputError(f"input {value.name!r} holds {kind} values; the importer reads models whose inputs "
                             f"are floating point ({', '.join(sorted(set(FLOAT_TYPES.values())))})",
                             f"{where}: input {value.name!r}")


# Attributes that count steps or sizes: ONNX's checker lets 0 and negatives through, and every
# reader would divide by them or loop on them (a zero stride was a ZeroDivisionError in f-CNNx).
_AT_LEAST_ONE = ("strides", "dilations", "kernel_shape", "group")


def check_attributes(graph: Any, where: str) -> None:
    """Every stride, dilation, kernel size and group count is at least 1; InputError naming the node
    and the attribute otherwise."""
    for node in graph.node:
        for attr in node.attribute:
            if attr.name in _AT_LEAST_ONE:
                values = list(attr.ints) if attr.ints else [attr.i]
                if any(v < 1 for v in values):
                    shown = values if len(values) > 1 else values[0]
                    raise InputError(f"attribute {attr.name} is {shown}; every value must be at least 1",
                                     node_where(where, node))


def check_weights(graph: Any, where: str) -> None:
    """Every floating-point weight (initializers and Constant nodes) is finite: a NaN or infinite
    weight would otherwise surface far away, e.g. as a layout check that finds outputs differ."""
    import numpy as np
    from onnx import numpy_helper

    tensors = [(t.name, t) for t in graph.initializer]
    tensors += [(node.output[0] if node.output else node.name, a.t) for node in graph.node
                if node.op_type == "Constant" for a in node.attribute if a.name == "value"]
    for name, tensor in tensors:
        try:
            arr = numpy_helper.to_array(tensor)
        except Exception:       # external or malformed data: the importers name it when they read it
            continue
        if arr.dtype.kind == "f" and arr.size and not np.isfinite(arr).all():
            bad = arr[~np.isfinite(arr)]
            kinds = " and ".join(k for k, n in (("NaN", np.isnan(bad).sum()), ("infinite", np.isinf(bad).sum())) if n)
            raise InputError(f"weight tensor {name!r} holds {bad.size} {kinds} value(s) (of {arr.size}); "
                             f"weights must be finite numbers", where)


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
