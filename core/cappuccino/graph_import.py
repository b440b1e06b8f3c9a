"""ONNX -> the engine's op DAG (core.cappuccino.model), weights attached.

Unlike the shared layer-table importer (core.nets.onnx_import; both read and check the file, and
count each tensor's readers, with core.nets.onnx_graph), this keeps the graph's connectivity so
branches (Inception, Fire modules, residual adds) can be executed. BatchNormalization folds into the Conv/Gemm before it, Relu fuses
into the Conv/Gemm/Add whose output it rectifies (also through max pooling and flattening, with
which it commutes) and disappears after a non-negative tensor; Dropout, Identity, Flatten and
Reshape-to-flat only change shape bookkeeping. Every other operator is refused in one InputError
naming each node and operator (nothing is dropped silently). Ops that do not lead to the graph
output (e.g. training-only auxiliary heads) are pruned.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from core.errors import InputError
from core.nets.layers import Conv, Eltwise, Layer, Network, Pool
from core.nets.onnx_graph import consumer_counts, interpreting, node_attrs, node_where, read_model, tensor_dims

from core.cappuccino.model import (INPUT, AddOp, ConcatOp, ConvOp, GlobalAvgPoolOp, LrnOp, Op, Pads, PoolOp, Shape,
                                   SoftmaxOp)

SKIPPED = {"Dropout", "Identity", "Flatten", "Reshape"}
SUPPORTED = {"Conv", "Gemm", "MatMul", "MaxPool", "AveragePool", "GlobalAveragePool", "Add", "Concat", "LRN",
             "Softmax", "BatchNormalization", "Relu", "Constant"} | SKIPPED


@dataclass(frozen=True)
class _T:
    """What an ONNX tensor is in our graph."""

    name: str                   # our tensor (op name or INPUT)
    shape: Shape                # its (C, H, W)
    flat: bool = False          # ONNX sees it as (N, C*H*W)
    fold: str | None = None     # our ConvOp/AddOp whose un-rectified output this is, read by no one else
    nonneg: bool = False        # known >= 0


@dataclass
class Imported:
    name: str
    input_shape: Shape
    ops: list[Op]
    network: Network            # the layer table of the same graph (for MACs and the zoo tools)
    notes: str
    weights: str = "from the ONNX file"     # the file's metadata "weights" when it has one (e.g. "random (seed 0)")


class _Importer:
    def __init__(self, model: Any, path: str) -> None:
        from onnx import numpy_helper

        self.path = path
        self.graph = model.graph
        self.consts: dict[str, np.ndarray] = {i.name: numpy_helper.to_array(i) for i in self.graph.initializer}
        self.tensors: dict[str, _T] = {}
        self.ops: dict[str, Op] = {}
        self.unsupported: list[str] = []
        self.counts = {"BatchNormalization": 0, "Relu": 0, "skipped": 0}
        self.consumers = consumer_counts(self.graph)

    # ------------------------------------------------------------------ helpers
    def where(self, node: Any) -> str:
        return node_where(self.path, node)

    def fail(self, node: Any, why: str) -> InputError:
        return InputError(why, self.where(node))

    def _name(self, node: Any, i: int) -> str:
        base = (node.name or f"{node.op_type.lower()}_{i}").replace(" ", "_")
        name, n = base, 1
        while name in self.ops or name == INPUT:
            n += 1
            name = f"{base}_{n}"
        return name

    def _act(self, node: Any, onnx_name: str) -> _T:
        if onnx_name not in self.tensors:
            raise self.fail(node, f"input {onnx_name!r} is not an activation tensor (a constant, or never computed)")
        return self.tensors[onnx_name]

    def _const(self, node: Any, name: str, what: str) -> np.ndarray:
        if name not in self.consts:
            raise self.fail(node, f"{what} must be a constant initializer, not a computed tensor {name!r}")
        return self.consts[name]

    def _exclusive(self, onnx_name: str, t: _T) -> str | None:
        """The fold target survives only through a tensor no other node reads."""
        return t.fold if self.consumers.get(onnx_name, 0) == 1 else None

    def _emit(self, node: Any, op: Op, fold: bool = False, nonneg: bool = False, flat: bool = False) -> None:
        self.ops[op.name] = op
        self.tensors[node.output[0]] = _T(op.name, op.out_shape, flat, op.name if fold else None, nonneg)

    def _alias(self, node: Any, t: _T) -> None:
        self.tensors[node.output[0]] = t

    # ------------------------------------------------------------------ operators
    def conv(self, node: Any, i: int, a: dict) -> None:
        x = self._act(node, node.input[0])
        w = self._const(node, node.input[1], "Conv weight").astype(np.float32)
        if w.ndim != 4 or x.flat:
            raise self.fail(node, "only 2-D convolutions over (C, H, W) maps are supported")
        m, ng, kh, kw = w.shape
        g = int(a.get("group", 1))
        if ng * g != x.shape[0]:
            raise self.fail(node, f"weight expects {ng * g} input channels, the input has {x.shape[0]}")
        strides = list(a.get("strides", [1, 1]))
        if strides[0] != strides[1]:
            raise self.fail(node, f"unequal strides {strides} are not supported")
        if any(d != 1 for d in a.get("dilations", [1, 1])):
            raise self.fail(node, f"dilated convolution (dilations {list(a['dilations'])}) is not supported")
        pads = _pads(a, x.shape[1:], (kh, kw), strides[0])
        has_b = len(node.input) > 2 and node.input[2]
        b = self._const(node, node.input[2], "Conv bias") if has_b else np.zeros(m, np.float32)
        op = ConvOp(self._name(node, i), w, np.asarray(b, np.float32).reshape(m), strides[0], 0, False, x.shape,
                    groups=g, pads=pads, inputs=[x.name])
        self._emit(node, op, fold=True)

    def fc(self, node: Any, i: int, a: dict) -> None:
        x = self._act(node, node.input[0])
        if not x.flat:
            raise self.fail(node, "a fully connected layer needs a flattened (N, F) input")
        mat = self._const(node, node.input[1], f"{node.op_type} weight")
        if mat.ndim != 2:
            raise self.fail(node, f"weight must be a matrix, got shape {mat.shape}")
        if node.op_type == "Gemm":
            if a.get("transA", 0):
                raise self.fail(node, "transA=1 is not supported")
            w = (mat if a.get("transB", 0) else mat.T) * float(a.get("alpha", 1.0))
        else:
            w = mat.T
        out, fan_in = w.shape
        c, h, wd = x.shape
        if fan_in != c * h * wd:
            raise self.fail(node, f"weight expects {fan_in} inputs, the input has {c * h * wd}")
        bias: np.ndarray = np.zeros(out, np.float32)
        if node.op_type == "Gemm" and len(node.input) > 2 and node.input[2]:
            cst = self._const(node, node.input[2], "Gemm bias").reshape(-1)
            if cst.size not in (1, out):
                raise self.fail(node, f"bias has {cst.size} values, expected {out}")
            bias = np.broadcast_to(cst, (out,)) * float(a.get("beta", 1.0))
        weight = np.asarray(w, np.float32).reshape(out, c, h, wd)       # NCHW flatten order
        op = ConvOp(self._name(node, i), weight, np.asarray(bias, np.float32), 1, 0, False, x.shape, fc=True,
                    inputs=[x.name])
        self._emit(node, op, fold=True, flat=True)

    def pool(self, node: Any, i: int, a: dict) -> None:
        x = self._act(node, node.input[0])
        if x.flat:
            raise self.fail(node, "pooling needs a (C, H, W) map")
        name = self._name(node, i)
        if node.op_type == "GlobalAveragePool":
            self._emit(node, GlobalAvgPoolOp(name, x.shape, inputs=[x.name]), nonneg=x.nonneg)
            return
        k = list(a["kernel_shape"])
        strides = list(a.get("strides", [1, 1]))
        if k[0] != k[1] or strides[0] != strides[1] or any(v != 1 for v in a.get("dilations", [1, 1])):
            raise self.fail(node, f"only square, undilated pooling is supported (kernel {k}, strides {strides})")
        pads = _pads(a, x.shape[1:], (k[0], k[1]), strides[0])
        mode = "max" if node.op_type == "MaxPool" else "avg"
        op = PoolOp(name, k[0], strides[0], 0, mode, bool(a.get("ceil_mode", 0)), x.shape,
                    count_include_pad=bool(a.get("count_include_pad", 0)), pads=pads, inputs=[x.name])
        self.ops[name] = op
        # max(relu(a), relu(b)) = relu(max(a, b)): a Relu after max pooling can move into the producer
        fold = self._exclusive(node.input[0], x) if mode == "max" else None
        self.tensors[node.output[0]] = _T(name, op.out_shape, False, fold, x.nonneg)

    def batchnorm(self, node: Any, i: int, a: dict) -> None:
        x = self._act(node, node.input[0])
        target = self._exclusive(node.input[0], x)
        op = self.ops.get(target or "")
        if not isinstance(op, ConvOp) or op.relu or (x.name != op.name):
            raise self.fail(node, "BatchNormalization is only supported directly after a Conv/Gemm it can be "
                                  "folded into (no other node reading the Conv's output)")
        gamma, beta, mean, var = (self._const(node, n, "BatchNormalization parameter").astype(np.float64)
                                  for n in node.input[1:5])
        scale = gamma / np.sqrt(var + float(a.get("epsilon", 1e-5)))
        op.weight = (op.weight * scale.reshape(-1, 1, 1, 1)).astype(np.float32)
        op.bias = ((op.bias - mean) * scale + beta).astype(np.float32)
        self.counts["BatchNormalization"] += 1
        self._alias(node, x)

    def relu(self, node: Any, i: int, a: dict) -> None:
        x = self._act(node, node.input[0])
        self.counts["Relu"] += 1
        if x.nonneg:
            self._alias(node, x)                    # already rectified: a no-op
            return
        target = self._exclusive(node.input[0], x)
        op = self.ops.get(target or "")
        if isinstance(op, (ConvOp, AddOp)) and not op.relu:
            op.relu = True
            self._alias(node, replace(x, fold=None, nonneg=True))
            return
        raise self.fail(node, f"this Relu has no Conv/Gemm/Add to fuse into: {self._why_no_relu(node.input[0], x)}")

    def _why_no_relu(self, onnx_name: str, x: _T) -> str:
        if x.name == INPUT:
            return "it rectifies the network input"
        if self.consumers.get(onnx_name, 0) > 1:
            return f"the tensor {onnx_name!r} is also read un-rectified by other nodes"
        op = self.ops[x.name]
        if isinstance(op, (PoolOp, GlobalAvgPoolOp)) and getattr(op, "mode", "avg") == "avg":
            return f"it follows average pooling {op.name!r}, and ReLU does not commute with averaging"
        return f"it follows the {op.kind} op {op.name!r}, which has no ReLU it could be fused into"

    def add(self, node: Any, i: int, a: dict) -> None:
        names = list(node.input)
        const = [n for n in names if n in self.consts]
        if const:
            other = next(n for n in names if n not in self.consts)
            x = self._act(node, other)
            target = self._exclusive(other, x)
            op = self.ops.get(target or "")
            bias = self.consts[const[0]].reshape(-1)
            if not isinstance(op, ConvOp) or op.relu or bias.size not in (1, op.out_shape[0]):
                raise self.fail(node, "adding a constant is only supported as the bias of a Conv/Gemm/MatMul "
                                      "no other node reads")
            op.bias = (op.bias + np.broadcast_to(bias, op.bias.shape)).astype(np.float32)
            self._alias(node, x)
            return
        xs = [self._act(node, n) for n in names]
        if len({x.shape for x in xs}) != 1 or len({x.flat for x in xs}) != 1:
            raise self.fail(node, f"only equal-shape adds are supported, got {[x.shape for x in xs]}")
        op = AddOp(self._name(node, i), xs[0].shape, inputs=[x.name for x in xs])
        self._emit(node, op, fold=True, nonneg=all(x.nonneg for x in xs), flat=xs[0].flat)

    def concat(self, node: Any, i: int, a: dict) -> None:
        xs = [self._act(node, n) for n in node.input]
        axis = int(a.get("axis", 1))
        if any(x.flat for x in xs) or axis not in (1, -3) or len({x.shape[1:] for x in xs}) != 1:
            raise self.fail(node, "only channel concatenation (axis 1) of equal-size maps is supported")
        op = ConcatOp(self._name(node, i), [x.shape for x in xs], inputs=[x.name for x in xs])
        self._emit(node, op, nonneg=all(x.nonneg for x in xs))

    def lrn(self, node: Any, i: int, a: dict) -> None:
        x = self._act(node, node.input[0])
        if x.flat:
            raise self.fail(node, "LRN needs a (C, H, W) map")
        op = LrnOp(self._name(node, i), int(a["size"]), float(a.get("alpha", 1e-4)), float(a.get("beta", 0.75)),
                   float(a.get("bias", 1.0)), x.shape, inputs=[x.name])
        self._emit(node, op, nonneg=x.nonneg)

    def softmax(self, node: Any, i: int, a: dict, opset: int) -> None:
        x = self._act(node, node.input[0])
        axis = int(a.get("axis", 1 if opset < 13 else -1))
        c, h, w = x.shape
        whole = (x.flat and axis in (1, -1)) or (not x.flat and h == w == 1 and axis in (1, -1, -3)) or \
            (not x.flat and opset < 13 and axis == 1)
        if not whole:
            raise self.fail(node, f"softmax over axis {axis} of a {'flat' if x.flat else 'map'} tensor {x.shape}: "
                                  "only a softmax over all values of a sample is supported")
        self._emit(node, SoftmaxOp(self._name(node, i), x.shape, inputs=[x.name]), nonneg=True, flat=x.flat)

    def skip(self, node: Any, i: int, a: dict) -> None:
        x = self._act(node, node.input[0])
        fold = self._exclusive(node.input[0], x)
        n = int(np.prod(x.shape))
        if node.op_type == "Flatten":
            if int(a.get("axis", 1)) not in (0, 1):
                raise self.fail(node, f"Flatten axis {a.get('axis')} would split a sample")
            t = replace(x, flat=True, fold=fold)
        elif node.op_type == "Reshape":
            target = self._const(node, node.input[1], "Reshape shape").astype(int).tolist()
            if len(target) == 2 and target[0] in (1, -1, 0) and target[1] in (n, -1):
                t = replace(x, flat=True, fold=fold)
            elif len(target) == 4 and not x.flat and [abs(v) for v in target[1:]] == list(x.shape):
                t = replace(x, fold=fold)
            else:
                raise self.fail(node, f"reshape to {target} is neither a flatten nor the same map shape")
        else:
            t = replace(x, fold=fold)
        self.counts["skipped"] += 1
        self._alias(node, t)

    def constant(self, node: Any, i: int, a: dict) -> None:
        from onnx import numpy_helper

        attr = node.attribute[0] if node.attribute else None
        if attr is None or attr.name != "value":
            raise self.fail(node, "only tensor-valued Constant nodes are supported")
        self.consts[node.output[0]] = numpy_helper.to_array(attr.t)

    # ------------------------------------------------------------------ driver
    def run(self, name: str, opset: int) -> Imported:
        ins = [t for t in self.graph.input if t.name not in self.consts]
        if len(ins) != 1:
            raise InputError(f"expected exactly one input tensor, found {len(ins)}: {[t.name for t in ins]}",
                             self.path)
        dims = tensor_dims(ins[0])
        if dims is None or len(dims) not in (2, 4) or any(d is None or d <= 0 for d in dims[1:]):
            raise InputError(f"input {ins[0].name!r} must have a fixed shape (N, C, H, W) or (N, F), got {dims}",
                             self.path)
        d = [int(v or 0) for v in dims]             # all set: checked above
        shape: Shape = (d[1], d[2], d[3]) if len(d) == 4 else (d[1], 1, 1)
        self.tensors[ins[0].name] = _T(INPUT, shape, len(dims) == 2)
        handlers = {"Conv": self.conv, "Gemm": self.fc, "MatMul": self.fc, "MaxPool": self.pool,
                    "AveragePool": self.pool, "GlobalAveragePool": self.pool, "Add": self.add,
                    "Concat": self.concat, "LRN": self.lrn, "BatchNormalization": self.batchnorm, "Relu": self.relu,
                    "Constant": self.constant, **{k: self.skip for k in SKIPPED}}
        for i, node in enumerate(self.graph.node):
            if node.domain not in ("", "ai.onnx") or node.op_type not in SUPPORTED:
                self.unsupported.append(f"{node.op_type} (node {node.name or '#' + str(i)!r})")
                continue
            if any(n and n not in self.consts and n not in self.tensors for n in node.input):
                continue                            # downstream of an unsupported node: reported already
            with interpreting(self.where(node)):
                a = node_attrs(node)
                if node.op_type == "Softmax":
                    self.softmax(node, i, a, opset)
                else:
                    handlers[node.op_type](node, i, a)
        if self.unsupported:
            raise InputError("unsupported ONNX operator(s): " + "; ".join(self.unsupported), self.path)
        outs = list(self.graph.output)
        if len(outs) != 1 or outs[0].name not in self.tensors:
            raise InputError(f"expected one output computed from the input, found {[o.name for o in outs]}", self.path)
        ops = _prune(list(self.ops.values()), self.tensors[outs[0].name].name)
        if not ops:
            raise InputError("the output is the input: the graph computes nothing", self.path)
        if not any(isinstance(op, ConvOp) for op in ops):
            raise InputError("the model has no Conv, Gemm or MatMul layer", self.path)
        notes = (f"Imported from ONNX file {os.path.basename(self.path)}: {len(self.graph.node)} nodes -> {len(ops)} "
                 f"ops; folded {self.counts['BatchNormalization']} BatchNormalization, fused/dropped "
                 f"{self.counts['Relu']} Relu, skipped {self.counts['skipped']} Dropout/Identity/Flatten/Reshape.")
        return Imported(name, shape, ops, layer_table(name, shape, ops, notes), notes)


def _pads(a: dict, hw: tuple[int, int], k: tuple[int, int], s: int) -> Pads:
    """ONNX pads / auto_pad as (top, left, bottom, right)."""
    auto = a.get("auto_pad", b"NOTSET")
    auto = auto.decode() if isinstance(auto, bytes) else auto
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        out = []
        for n, kk in zip(hw, k):
            total = max(0, (-(-n // s) - 1) * s + kk - n)
            lo = total // 2 if auto == "SAME_UPPER" else total - total // 2
            out.append((lo, total - lo))
        return (out[0][0], out[1][0], out[0][1], out[1][1])
    if auto == "VALID":
        return (0, 0, 0, 0)
    p = [int(v) for v in a.get("pads", [0, 0, 0, 0])]
    if len(p) != 4 or min(p) < 0:
        raise ValueError(f"pads {p} are not four non-negative values")
    return (p[0], p[1], p[2], p[3])


def _prune(ops: list[Op], output: str) -> list[Op]:
    """Keep the ops the output depends on (topological order kept), ending with the output's op."""
    need = {output}
    for op in reversed(ops):
        if op.name in need:
            need.update(op.inputs)
    kept = [op for op in ops if op.name in need]
    if kept and kept[-1].name != output:
        raise InputError(f"the output {output!r} is not the last op", output)
    return kept


def layer_table(name: str, shape: Shape, ops: list[Op], notes: str = "", title: str = "") -> Network:
    """The shape-only layer table of the DAG (core.nets), for MACs and parameter counts."""
    layers: list[Layer] = []
    for op in ops:
        if isinstance(op, ConvOp):
            c, h, w = op.in_shape
            if op.fc:
                layers.append(Conv(op.name, c * h * w, 1, 1, op.out_shape[0], 1, 1, fc=True, relu=op.relu))
            else:
                _, _, kh, kw = op.weight.shape
                layers.append(Conv(op.name, c, h, w, op.out_shape[0], kh, kw, op.stride, op.pad, op.groups,
                                   relu=op.relu))
        elif isinstance(op, PoolOp):
            layers.append(Pool(op.name, op.in_shape[0], op.in_shape[1], op.in_shape[2], op.k, op.stride, op.pad,
                               op.mode, op.ceil_mode))
        elif isinstance(op, GlobalAvgPoolOp):
            c, h, w = op.in_shape
            layers.append(Pool(op.name, c, h, w, h, h, 0, "avg"))
        elif isinstance(op, (AddOp, ConcatOp)):
            c, h, w = op.out_shape
            layers.append(Eltwise(op.name, c, h, w, op.kind, getattr(op, "relu", False)))
    return Network(name, title or f"{name} (ONNX)", shape, layers, notes)


def import_onnx(path: str | os.PathLike) -> Imported:
    """Read, check and import an ONNX file; InputError (naming the node) on anything unsupported."""
    model = read_model(path)
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 13)
    name = os.path.splitext(os.path.basename(os.fspath(path)))[0]
    g = _Importer(model, os.fspath(path)).run(name, opset)
    props = {p.key: p.value for p in model.metadata_props}
    if props.get("weights"):
        g.weights = props["weights"][:200]
    return g
