"""Read an ONNX model into a layer table (`load_onnx`) and its folded weights (`load_onnx_weights`).

Only inference graphs made of the operators in `SUPPORTED` are accepted.  Dropout, Identity and
Softmax leave shapes alone and are folded away; BatchNormalization is folded into the Conv/Gemm
before it; Add/Concat become `Eltwise` entries.  A Relu sets `relu=True` on the layer whose output
it rectifies (directly, or through max pooling / flattening, with which ReLU commutes), or is
dropped when its input is already non-negative; a Relu that cannot be expressed that way (after
average pooling, on the network input, on a tensor other nodes also read) is reported as unsupported.  Every other operator is collected and
reported together in one `UnsupportedOperators` error (nothing is dropped silently).  Shapes are
computed with the formulas of `core.nets.layers` and cross-checked against ONNX shape inference,
so a layer table that disagrees with ONNX (e.g. padding the table cannot express) is refused.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from core.errors import InputError
from core.nets.layers import Conv, Eltwise, Layer, Network, Pool, conv_out
from core.nets.onnx_graph import (consumer_counts, interpreting, node_attrs, node_where, producers, read_model,
                                  tensor_dims)

# Only ReLU folds into a layer (Conv.relu / Eltwise.relu). Clip (ReLU6) and Sigmoid would change the
# numbers an engine computes from the layer table, so they are listed as unsupported, not altered.
ACTIVATIONS = {"Relu"}
PASS_THROUGH = {"Dropout", "Identity", "Softmax"}
SUPPORTED = ({"Conv", "Gemm", "MatMul", "MaxPool", "AveragePool", "GlobalAveragePool", "Flatten",
              "Reshape", "Add", "Concat", "BatchNormalization", "Constant"} | ACTIVATIONS | PASS_THROUGH)


class UnsupportedOperators(InputError):
    """The model uses operators the layer table cannot represent; `ops` lists (op_type, node, why).

    `layers` holds the layers that were imported anyway, so a caller can report its own objections
    to them in the same message instead of making the user fix the file twice.
    """

    def __init__(self, path: str, ops: list[tuple[str, str, str]], layers: list[Layer] | None = None) -> None:
        self.ops = ops
        self.layers = list(layers or [])
        items = "; ".join(f"{op} (node {name!r}{', ' + why if why else ''})" for op, name, why in ops)
        super().__init__(f"unsupported ONNX operator(s): {items}", str(path))


@dataclass
class _Tensor:
    shape: tuple[int, int, int]   # (C, H, W); a flat vector of N values is (N, 1, 1)
    flat: bool = False
    layer: str | None = None      # the Conv/FC whose un-activated output this is (BN can fold into it)
    relu_into: str | None = None  # the layer whose relu=True would rectify this tensor exactly
    nonneg: bool = False          # known >= 0 (after a ReLU), so a further Relu changes nothing


@dataclass
class _Graph:
    """Everything one pass over the ONNX graph produces."""

    network: Network
    weights: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)


def _pick_pad(n: int, k: int, stride: int, dil: int, begin: int, end: int) -> tuple[int, list[int]]:
    """ONNX output size for (begin, end) padding, and the symmetric pads that give the same size."""
    want = conv_out(n + begin + end, k, stride, 0, dil)
    cands = sorted({begin, end, (begin + end) // 2, -(-(begin + end) // 2)})
    ok = [p for p in cands if conv_out(n, k, stride, p, dil) == want]
    return want, ok


# ---------------------------------------------------------------------------------- the pass
class _Importer:
    def __init__(self, model: Any, path: str) -> None:
        from onnx import numpy_helper

        self.path = path
        self.graph = model.graph
        self.consts: dict[str, np.ndarray] = {i.name: numpy_helper.to_array(i) for i in self.graph.initializer}
        self.inferred = {vi.name: tensor_dims(vi) for vi in list(self.graph.value_info) + list(self.graph.output)}
        self.tensors: dict[str, _Tensor | None] = {}   # None: produced by an unsupported node
        self.layers: list[Layer] = []
        self.index: dict[str, int] = {}
        self.weights: dict[str, dict[str, np.ndarray]] = {}
        self.unsupported: list[tuple[str, str, str]] = []
        self.folded = {"BatchNormalization": 0, "activation": 0, "pass-through": 0}
        self.consumers = consumer_counts(self.graph)
        self.producer = producers(self.graph)

    # ------------------------------------------------------------------ helpers
    def where(self, node: Any) -> str:
        return node_where(self.path, node)

    def _name(self, node: Any, i: int) -> str:
        base = node.name or f"{node.op_type.lower()}_{i}"
        name, n = base, 1
        while name in self.index:
            n += 1
            name = f"{base}_{n}"
        return name

    def _add_layer(self, layer: Layer) -> None:
        self.index[layer.name] = len(self.layers)
        self.layers.append(layer)

    def _set(self, node: Any, name: str, t: _Tensor) -> None:
        """Record an output tensor after checking it against ONNX shape inference."""
        dims = self.inferred.get(name)
        if dims and all(d is not None for d in dims) and len(dims) >= 2:
            onnx_shape = cast("tuple[int, ...]", dims[1:])
            ours = (t.shape[0],) if t.flat else t.shape
            if int(np.prod(onnx_shape)) != int(np.prod(ours)) or (len(onnx_shape) == 3 and tuple(onnx_shape) != ours):
                raise InputError(f"computed shape {ours} disagrees with ONNX shape inference {tuple(onnx_shape)}",
                                 self.where(node))
        self.tensors[name] = t

    def _const(self, node: Any, name: str, what: str) -> np.ndarray:
        if name not in self.consts:
            raise InputError(f"{what} must be a constant initializer, not a computed tensor {name!r}", self.where(node))
        return self.consts[name]

    def _act(self, node: Any, name: str) -> _Tensor:
        t = self.tensors.get(name)
        if t is None:
            raise InputError(f"input {name!r} is not an activation tensor", self.where(node))
        return t

    def _relu_carry(self, name: str, x: _Tensor) -> str | None:
        """ReLU commutes with max pooling and reshapes, but only a tensor no one else reads may be
        rectified earlier, so the fold target passes through a single-consumer input only."""
        return x.relu_into if self.consumers.get(name, 0) == 1 else None

    def _input(self) -> tuple[int, int, int]:
        ins = [i for i in self.graph.input if i.name not in self.consts]
        if len(ins) != 1:
            raise InputError(f"expected exactly one input tensor, found {len(ins)}: {[i.name for i in ins]}", self.path)
        dims = tensor_dims(ins[0])
        if dims is None or len(dims) not in (2, 4) or any(d is None for d in dims[1:]):
            raise InputError(f"input {ins[0].name!r} must have a fixed shape (N, C, H, W) or (N, F), got {dims}",
                             self.path)
        fixed = cast("tuple[int, ...]", dims)       # checked above: no None past the batch axis
        if len(fixed) == 4:
            t = _Tensor((fixed[1], fixed[2], fixed[3]))
        else:
            t = _Tensor((fixed[1], 1, 1), flat=True)
        self.tensors[ins[0].name] = t
        return t.shape

    # ------------------------------------------------------------------ operators
    def conv(self, node: Any, i: int) -> None:
        a = node_attrs(node)
        x = self._act(node, node.input[0])
        w = self._const(node, node.input[1], "Conv weight")
        if w.ndim != 4 or x.flat:
            raise InputError("only 2-D convolutions over (C, H, W) maps are supported", self.where(node))
        out_ch, cin_g, kh, kw = w.shape
        g = int(a.get("group", 1))
        c, h, wd = x.shape
        if cin_g * g != c:
            raise InputError(f"weight expects {cin_g * g} input channels, input has {c}", self.where(node))
        strides = list(a.get("strides", [1, 1]))
        dil = list(a.get("dilations", [1, 1]))
        if strides[0] != strides[1] or dil[0] != dil[1]:
            raise InputError(f"unequal strides {strides} / dilations {dil} are not supported", self.where(node))
        pads = self._pads(node, a, (h, wd), (kh, kw), strides[0], dil[0])
        has_b = len(node.input) > 2 and node.input[2]
        b = self._const(node, node.input[2], "Conv bias") if has_b else np.zeros(out_ch, np.float32)
        name = self._name(node, i)
        layer = Conv(name, c, h, wd, out_ch, kh, kw, strides[0], pads, g, dil[0], relu=False)
        self._add_layer(layer)
        self.weights[name] = {"weight": w.astype(np.float32), "bias": np.asarray(b, np.float32).reshape(out_ch)}
        self._set(node, node.output[0], _Tensor(layer.out_shape, layer=name, relu_into=name))

    def _pads(self, node: Any, a: dict, hw: tuple[int, int], k: tuple[int, int], s: int, d: int) -> int:
        auto = a.get("auto_pad", b"NOTSET")
        auto = auto.decode() if isinstance(auto, bytes) else auto
        if auto in ("SAME_UPPER", "SAME_LOWER"):
            pads = []
            for n, kk in zip(hw, k):
                total = max(0, (-(-n // s) - 1) * s + d * (kk - 1) + 1 - n)
                lo = total // 2 if auto == "SAME_UPPER" else total - total // 2
                pads.append((lo, total - lo))
            begin_end = [pads[0][0], pads[1][0], pads[0][1], pads[1][1]]
        elif auto == "VALID":
            begin_end = [0, 0, 0, 0]
        else:
            begin_end = list(a.get("pads", [0, 0, 0, 0]))
        ok_h = _pick_pad(hw[0], k[0], s, d, begin_end[0], begin_end[2])[1]
        ok_w = _pick_pad(hw[1], k[1], s, d, begin_end[1], begin_end[3])[1]
        common = [p for p in ok_h if p in ok_w]
        if not common:
            raise InputError(f"padding {begin_end} cannot be expressed as one symmetric pad", self.where(node))
        return min(common)

    def pool(self, node: Any, i: int) -> None:
        a = node_attrs(node)
        x = self._act(node, node.input[0])
        if x.flat:
            raise InputError("pooling needs a (C, H, W) map", self.where(node))
        c, h, w = x.shape
        name = self._name(node, i)
        if node.op_type == "GlobalAveragePool":
            if h != w:
                raise InputError(f"global pooling of a non-square {h}x{w} map cannot be represented",
                                 self.where(node))
            layer = Pool(name, c, h, w, h, h, 0, "avg")
        else:
            k = list(a["kernel_shape"])
            strides = list(a.get("strides", [1, 1]))
            if k[0] != k[1] or strides[0] != strides[1] or any(v != 1 for v in a.get("dilations", [1, 1])):
                raise InputError(f"only square, undilated pooling is supported (kernel {k}, strides {strides})",
                                 self.where(node))
            ceil = bool(a.get("ceil_mode", 0))
            if ceil:
                begin_end = list(a.get("pads", [0, 0, 0, 0]))
                if len(set(begin_end)) > 1:
                    raise InputError(f"asymmetric pads {begin_end} with ceil_mode", self.where(node))
                pad = begin_end[0]
            else:
                pad = self._pads(node, a, (h, w), (k[0], k[1]), strides[0], 1)
            mode = "max" if node.op_type == "MaxPool" else "avg"
            layer = Pool(name, c, h, w, k[0], strides[0], pad, mode, ceil)
        self._add_layer(layer)
        # max(relu(a), relu(b)) = relu(max(a, b)); averaging does not commute with ReLU
        into = self._relu_carry(node.input[0], x) if node.op_type == "MaxPool" else None
        self._set(node, node.output[0], _Tensor(layer.out_shape, relu_into=into, nonneg=x.nonneg))

    def fc(self, node: Any, i: int) -> None:
        a = node_attrs(node)
        x = self._act(node, node.input[0])
        if not x.flat:
            raise InputError("a fully connected layer needs a flattened (N, F) input", self.where(node))
        b_mat = self._const(node, node.input[1], f"{node.op_type} weight")
        if b_mat.ndim != 2:
            raise InputError(f"weight must be a matrix, got shape {b_mat.shape}", self.where(node))
        if node.op_type == "Gemm":
            if a.get("transA", 0):
                raise InputError("transA=1 is not supported", self.where(node))
            w = b_mat if a.get("transB", 0) else b_mat.T
            w = w * float(a.get("alpha", 1.0))
        else:
            w = b_mat.T
        out, fan_in = w.shape
        if fan_in != x.shape[0]:
            raise InputError(f"weight expects {fan_in} inputs, the input has {x.shape[0]}", self.where(node))
        bias: np.ndarray = np.zeros(out, np.float32)
        if node.op_type == "Gemm" and len(node.input) > 2 and node.input[2]:
            c = self._const(node, node.input[2], "Gemm bias")
            bias = np.broadcast_to(c.reshape(-1) if c.size in (1, out) else c, (out,)) * float(a.get("beta", 1.0))
        name = self._name(node, i)
        layer = Conv(name, fan_in, 1, 1, out, 1, 1, fc=True, relu=False)
        self._add_layer(layer)
        self.weights[name] = {"weight": np.asarray(w, np.float32), "bias": np.asarray(bias, np.float32)}
        self._set(node, node.output[0], _Tensor((out, 1, 1), flat=True, layer=name, relu_into=name))

    def batchnorm(self, node: Any, i: int) -> None:
        x = self._act(node, node.input[0])
        if x.layer is None or self.consumers.get(node.input[0], 0) != 1:
            self.unsupported.append((node.op_type, node.name or f"#{i}",
                                     "not directly after a Conv/Gemm it can be folded into"))
            self.tensors[node.output[0]] = _Tensor(x.shape, x.flat)
            return
        a = node_attrs(node)
        gamma, beta, mean, var = (self._const(node, n, "BatchNormalization parameter") for n in node.input[1:5])
        scale = gamma / np.sqrt(var + float(a.get("epsilon", 1e-5)))
        wb = self.weights[x.layer]
        shape = (-1,) + (1,) * (wb["weight"].ndim - 1)
        wb["weight"] = (wb["weight"] * scale.reshape(shape)).astype(np.float32)
        wb["bias"] = ((wb["bias"] - mean) * scale + beta).astype(np.float32)
        self.folded["BatchNormalization"] += 1
        self._set(node, node.output[0], _Tensor(x.shape, x.flat, x.layer, relu_into=x.layer))

    def activation(self, node: Any, i: int) -> None:
        x = self._act(node, node.input[0])
        into = self._relu_carry(node.input[0], x)
        if x.nonneg:
            pass                                    # already rectified: the Relu is a no-op
        elif into is not None:
            j = self.index[into]
            target = self.layers[j]
            assert isinstance(target, (Conv, Eltwise))      # relu_into only ever names a conv or an add
            self.layers[j] = dataclasses.replace(target, relu=True)
        else:
            self.unsupported.append((node.op_type, node.name or f"#{i}", self._why_no_relu(node.input[0])))
            self.tensors[node.output[0]] = None
            return
        self.folded["activation"] += 1
        self._set(node, node.output[0], _Tensor(x.shape, x.flat, nonneg=True))

    def _why_no_relu(self, name: str) -> str:
        """Why the Relu reading tensor `name` has no layer to be folded into (for the error message)."""
        node = self.producer.get(name)
        if node is None:
            return "a ReLU of the network input has no layer to fold into"
        what = f"{node.op_type} {node.name!r}" if node.name else f"the {node.op_type} writing {name!r}"
        if self.consumers.get(name, 0) > 1:
            return f"the output of {what} is also read un-rectified by other nodes, so no layer can apply this ReLU"
        if node.op_type in ("AveragePool", "GlobalAveragePool"):
            return f"it follows {what}; ReLU does not commute with averaging, so it cannot move into the layer before"
        if node.op_type in ("MaxPool", "Flatten", "Reshape", "Dropout", "Identity") and node.input:
            return self._why_no_relu(node.input[0])
        return f"it follows {what}, which has no ReLU it could be folded into"

    def pass_through(self, node: Any, i: int) -> None:
        x = self._act(node, node.input[0])
        self.folded["pass-through"] += 1
        if node.op_type == "Softmax":           # not the layer's output any more, but non-negative
            self._set(node, node.output[0], _Tensor(x.shape, x.flat, nonneg=True))
            return
        single = self.consumers.get(node.input[0], 0) == 1
        self._set(node, node.output[0], dataclasses.replace(x, layer=x.layer if single else None,
                                                            relu_into=x.relu_into if single else None))

    def flatten(self, node: Any, i: int) -> None:
        x = self._act(node, node.input[0])
        axis = int(node_attrs(node).get("axis", 1))
        if axis not in (0, 1):
            raise InputError(f"Flatten axis {axis} would split a sample", self.where(node))
        n = int(np.prod(x.shape))
        self._set(node, node.output[0], _Tensor((n, 1, 1), flat=True, layer=x.layer if x.flat else None,
                                                relu_into=self._relu_carry(node.input[0], x), nonneg=x.nonneg))

    def reshape(self, node: Any, i: int) -> None:
        x = self._act(node, node.input[0])
        target = self._const(node, node.input[1], "Reshape shape").astype(int).tolist()
        n = int(np.prod(x.shape))
        into = self._relu_carry(node.input[0], x)
        if len(target) == 2 and target[0] in (1, -1, 0) and target[1] in (n, -1):
            self._set(node, node.output[0], _Tensor((n, 1, 1), flat=True, layer=x.layer if x.flat else None,
                                                    relu_into=into, nonneg=x.nonneg))
        elif len(target) == 4 and not x.flat and [abs(v) for v in target[1:]] == list(x.shape):
            self._set(node, node.output[0], dataclasses.replace(x, relu_into=into))
        else:
            self.unsupported.append((node.op_type, node.name or f"#{i}", f"reshape to {target} is not a flatten"))
            self.tensors[node.output[0]] = None

    def add(self, node: Any, i: int) -> None:
        a_name, b_name = node.input[0], node.input[1]
        const = a_name if a_name in self.consts else b_name if b_name in self.consts else None
        if const is not None:
            other = b_name if const == a_name else a_name
            x = self._act(node, other)
            bias = self.consts[const]
            out_ch = x.shape[0]
            if x.layer is None or bias.size not in (1, out_ch) or self.consumers.get(other, 0) != 1:
                self.unsupported.append((node.op_type, node.name or f"#{i}",
                                         "adding a constant is only supported as the bias of a Conv/MatMul "
                                         "no other node reads"))
                self.tensors[node.output[0]] = None
                return
            wb = self.weights[x.layer]
            wb["bias"] = (wb["bias"] + np.broadcast_to(bias.reshape(-1), (out_ch,))).astype(np.float32)
            self._set(node, node.output[0], dataclasses.replace(x))
            return
        xa, xb = self._act(node, a_name), self._act(node, b_name)
        if xa.shape != xb.shape:
            self.unsupported.append((node.op_type, node.name or f"#{i}",
                                     f"broadcasting add of {xa.shape} and {xb.shape}"))
            self.tensors[node.output[0]] = None
            return
        name = self._name(node, i)
        self._add_layer(Eltwise(name, *xa.shape, op="add"))
        self._set(node, node.output[0], _Tensor(xa.shape, xa.flat, relu_into=name, nonneg=xa.nonneg and xb.nonneg))

    def concat(self, node: Any, i: int) -> None:
        xs = [self._act(node, n) for n in node.input]
        axis = int(node_attrs(node).get("axis", 1))
        if any(x.flat for x in xs) or axis not in (1, -3) or len({x.shape[1:] for x in xs}) != 1:
            self.unsupported.append((node.op_type, node.name or f"#{i}",
                                     "only channel concatenation of equal-size maps is supported"))
            self.tensors[node.output[0]] = None
            return
        c = sum(x.shape[0] for x in xs)
        h, w = xs[0].shape[1:]
        name = self._name(node, i)
        self._add_layer(Eltwise(name, c, h, w, op="concat"))
        self._set(node, node.output[0], _Tensor((c, h, w), nonneg=all(x.nonneg for x in xs)))

    def constant(self, node: Any, i: int) -> None:
        from onnx import numpy_helper

        a = node.attribute[0] if node.attribute else None
        if a is None or a.name != "value":
            self.unsupported.append((node.op_type, node.name or f"#{i}", "only tensor-valued Constant"))
            return
        self.consts[node.output[0]] = numpy_helper.to_array(a.t)

    # ------------------------------------------------------------------ driver
    def run(self, name: str) -> _Graph:
        input_shape = self._input()
        handlers = {"Conv": self.conv, "Gemm": self.fc, "MatMul": self.fc, "MaxPool": self.pool,
                    "AveragePool": self.pool, "GlobalAveragePool": self.pool, "Flatten": self.flatten,
                    "Reshape": self.reshape, "Add": self.add, "Concat": self.concat,
                    "BatchNormalization": self.batchnorm, "Constant": self.constant}
        for op in ACTIVATIONS:
            handlers[op] = self.activation
        for op in PASS_THROUGH:
            handlers[op] = self.pass_through
        for i, node in enumerate(self.graph.node):
            if node.domain not in ("", "ai.onnx") or node.op_type not in handlers:
                self.unsupported.append((node.op_type, node.name or f"#{i}", ""))
                self._unknown(node)
                continue
            data_inputs = [n for n in node.input if n and n not in self.consts]
            if any(self.tensors.get(n, _Tensor((1, 1, 1))) is None for n in data_inputs):
                self._unknown(node)            # downstream of an unsupported node: already reported
                continue
            with interpreting(self.where(node)):
                handlers[node.op_type](node, i)
        if self.unsupported:
            raise UnsupportedOperators(self.path, self.unsupported, self.layers)
        if not any(isinstance(l, Conv) for l in self.layers):
            raise InputError("the model has no Conv, Gemm or MatMul layer", self.path)
        notes = (f"Imported from ONNX file {os.path.basename(self.path)}: {len(self.graph.node)} nodes; folded "
                 f"{self.folded['BatchNormalization']} BatchNormalization, {self.folded['activation']} "
                 f"activations, {self.folded['pass-through']} Dropout/Identity/Softmax.")
        net = Network(name, f"{name} (ONNX)", input_shape, list(self.layers), notes)
        return _Graph(net, self.weights)

    def _unknown(self, node: Any) -> None:
        for out in node.output:
            self.tensors[out] = None


def _import(path: str | os.PathLike) -> _Graph:
    model = read_model(path)
    name = os.path.splitext(os.path.basename(os.fspath(path)))[0]
    return _Importer(model, os.fspath(path)).run(name)


def load_onnx(path: str | os.PathLike) -> Network:
    """The layer table of an ONNX model (batch 1); InputError / UnsupportedOperators on bad input."""
    return _import(path).network


def load_onnx_weights(path: str | os.PathLike) -> dict[str, dict[str, np.ndarray]]:
    """Per Conv/FC layer of `load_onnx(path)`: {"weight", "bias"} as float32, BatchNorm folded in.

    Conv weights are (out, in/groups, k_h, k_w); FC weights are (out, in), so y = W @ x + b.
    """
    return _import(path).weights


def load_onnx_with_weights(path: str | os.PathLike) -> tuple[Network, dict[str, dict[str, np.ndarray]]]:
    """Both of the above from one read of the file (large models are parsed once)."""
    g = _import(path)
    return g.network, g.weights
