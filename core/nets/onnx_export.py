"""Zoo networks as executable ONNX graphs with seeded random weights (no trained weights ship here).

The layer tables in core/nets/models/ give the hyper-parameters and, through `Network.inputs`,
the connectivity; `export` turns one into an ONNX model built with `onnx.helper`: Conv (+ a
BatchNormalization with random statistics where the published network has batch-norm, so an
importer's folding is exercised) + Relu, LRN where the published network has it (AlexNet,
GoogLeNet), MaxPool / AveragePool / GlobalAveragePool, Add (+ Relu for ResNets), Concat, Flatten +
Dropout + Gemm for fully connected layers, and a final Softmax. Weights are He-initialised from
`seed`. `scaled` rebuilds a table at another input resolution and with fewer channels (the same
layer sequence), for tests that need the graph but not its size.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from core.errors import InputError
from core.nets.builder import NetBuilder, T
from core.nets.layers import Conv, Eltwise, Network, Pool

OPSET = 13
LRN = {"size": 5, "alpha": 1e-4, "beta": 0.75, "bias": 1.0}     # Caffe's norm1/norm2 (AlexNet, GoogLeNet)


@dataclass(frozen=True)
class Extras:
    """What the published network has that a layer table leaves out (no MACs, so not in the zoo)."""

    lrn_after: tuple[str, ...] = ()     # layers followed by LRN (after their ReLU)
    batchnorm: bool = False             # every non-FC convolution is followed by batch-norm
    add_relu: bool = False              # a ReLU follows every residual add
    dropout: bool = True                # Dropout before fully connected layers (inference: identity)


EXTRAS: dict[str, Extras] = {
    "alexnet": Extras(lrn_after=("conv1", "conv2")),              # Caffe bvlc_alexnet norm1, norm2
    "googlenet": Extras(lrn_after=("pool1", "conv2/3x3")),        # Caffe bvlc_googlenet pool1/norm1, conv2/norm2
    "resnet18": Extras(batchnorm=True, add_relu=True),
    "resnet50": Extras(batchnorm=True, add_relu=True),
    "mobilenet_v1": Extras(batchnorm=True),
}


def _is_global(layer: Pool) -> bool:
    return layer.k == layer.in_h == layer.in_w and layer.stride == layer.k and layer.pad == 0


def scaled(net: Network, resolution: int | None = None, divisor: int = 1) -> Network:
    """The same layer sequence on a `resolution`-square input with channels divided by `divisor`
    (rounded up; grouped layers keep their group count, depthwise stays depthwise)."""
    if not net.inputs:
        raise InputError(f"{net.name}: the layer table has no connectivity (Network.inputs)", net.name)
    if divisor < 1:
        raise InputError(f"channel divisor must be >= 1, got {divisor}", "divisor")
    c0, h0, w0 = net.input_shape
    shape = (c0, resolution, resolution) if resolution else (c0, h0, w0)
    b = NetBuilder(net.name, net.title, shape)
    handles: dict[str, T] = {"input": b.x}

    def ch(n: int, groups: int = 1) -> int:
        m = max(1, -(-n // divisor))
        return -(-m // groups) * groups

    for layer in net.layers:
        xs = [handles[p] for p in net.inputs[layer.name]]
        if isinstance(layer, Conv) and layer.fc:
            out = layer.out_ch if layer is net.layers[-1] else ch(layer.out_ch)
            h = b.fc(layer.name, out, relu=layer.relu, x=xs[0])
        elif isinstance(layer, Conv):
            if layer.groups > 1 and layer.groups == layer.in_ch == layer.out_ch:
                h = b.dwconv(layer.name, layer.k_h, layer.stride, layer.pad, relu=layer.relu, x=xs[0])
            else:
                h = b.conv(layer.name, ch(layer.out_ch, layer.groups), (layer.k_h, layer.k_w), layer.stride, layer.pad,
                           groups=layer.groups, dilation=layer.dilation, relu=layer.relu, x=xs[0])
        elif isinstance(layer, Pool):
            if _is_global(layer):
                h = b.global_pool(layer.name, mode=layer.mode, x=xs[0])
            else:
                h = b.pool(layer.name, layer.k, layer.stride, layer.pad, mode=layer.mode, ceil_mode=layer.ceil_mode,
                           x=xs[0])
        elif isinstance(layer, Eltwise) and layer.op == "add":
            h = b.add(layer.name, *xs)
        else:
            h = b.concat(layer.name, *xs)
        handles[layer.name] = h
    return b.network(net.notes)


@dataclass
class _Emitter:
    rng: np.random.Generator
    nodes: list[Any] = field(default_factory=list)
    inits: list[Any] = field(default_factory=list)

    def const(self, name: str, value: np.ndarray) -> str:
        from onnx import numpy_helper

        self.inits.append(numpy_helper.from_array(np.asarray(value, np.float32), name))
        return name

    def node(self, op: str, inputs: list[str], out: str, **attrs: Any) -> str:
        from onnx import helper

        self.nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        return out

    def he(self, shape: tuple[int, ...], fan_in: int) -> np.ndarray:
        return (self.rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)


def export_model(net: Network, seed: int = 0, extras: Extras | None = None) -> Any:
    """The ONNX ModelProto of a zoo table with He-initialised weights from `seed`."""
    import onnx
    from onnx import TensorProto, helper

    extras = extras if extras is not None else EXTRAS.get(net.name, Extras())
    e = _Emitter(np.random.default_rng(seed))
    tensor = {"input": "input"}
    flat = {"input": False}
    for layer in net.layers:
        src = [tensor[p] for p in net.inputs[layer.name]]
        name = layer.name
        relu = bool(getattr(layer, "relu", False))
        is_flat = False
        if isinstance(layer, Conv) and layer.fc:
            x = src[0]
            if not flat[net.inputs[name][0]]:
                x = e.node("Flatten", [x], f"{name}/flatten", axis=1)
            if extras.dropout:
                x = e.node("Dropout", [x], f"{name}/dropout")
            w = e.he((layer.out_ch, layer.in_ch), layer.in_ch)
            b = (0.01 * e.rng.standard_normal(layer.out_ch)).astype(np.float32)
            y = e.node("Gemm", [x, e.const(f"{name}.weight", w), e.const(f"{name}.bias", b)], name, transB=1)
            is_flat = True
        elif isinstance(layer, Conv):
            fan = layer.in_ch // layer.groups * layer.k_h * layer.k_w
            w = e.he((layer.out_ch, layer.in_ch // layer.groups, layer.k_h, layer.k_w), fan)
            ins = [src[0], e.const(f"{name}.weight", w)]
            if not extras.batchnorm:
                ins.append(e.const(f"{name}.bias", (0.01 * e.rng.standard_normal(layer.out_ch)).astype(np.float32)))
            y = e.node("Conv", ins, name, kernel_shape=[layer.k_h, layer.k_w], strides=[layer.stride] * 2,
                       pads=[layer.pad] * 4, group=layer.groups,
                       **({"dilations": [layer.dilation] * 2} if layer.dilation != 1 else {}))
            if extras.batchnorm:
                m = layer.out_ch
                bn = [e.const(f"{name}.bn.{k}", v) for k, v in (
                    ("gamma", e.rng.uniform(0.5, 1.5, m)), ("beta", 0.1 * e.rng.standard_normal(m)),
                    ("mean", 0.1 * e.rng.standard_normal(m)), ("var", e.rng.uniform(0.5, 1.5, m)))]
                y = e.node("BatchNormalization", [y, *bn], f"{name}/bn", epsilon=1e-5)
        elif isinstance(layer, Pool):
            if _is_global(layer) and layer.mode == "avg":
                y = e.node("GlobalAveragePool", src, name)
            else:
                op = "MaxPool" if layer.mode == "max" else "AveragePool"
                y = e.node(op, src, name, kernel_shape=[layer.k] * 2, strides=[layer.stride] * 2,
                           pads=[layer.pad] * 4, ceil_mode=int(layer.ceil_mode))
        elif isinstance(layer, Eltwise) and layer.op == "add":
            y = src[0]
            for k, other in enumerate(src[1:]):
                y = e.node("Add", [y, other], name if k == len(src) - 2 else f"{name}/{k}")
            relu = relu or extras.add_relu
        else:
            y = e.node("Concat", src, name, axis=1)
        if relu:
            y = e.node("Relu", [y], f"{name}/relu")
        if name in extras.lrn_after:
            y = e.node("LRN", [y], f"{name}/lrn", **LRN)
        tensor[name], flat[name] = y, is_flat
    last = net.layers[-1].name
    y = tensor[last] if flat[last] else e.node("Flatten", [tensor[last]], "flatten", axis=1)
    y = e.node("Softmax", [y], "prob", axis=1)
    classes = int(np.prod(net.layers[-1].out_shape))
    graph = helper.make_graph(
        e.nodes, net.name, [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, *net.input_shape])],
        [helper.make_tensor_value_info(y, TensorProto.FLOAT, [1, classes])], e.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="dataflow-explorer")
    model.ir_version = min(model.ir_version, 8)          # readable by onnxruntime >= 1.17
    helper.set_model_props(model, {"weights": f"random (seed {seed})", "zoo": net.name,
                                   "input_shape": "x".join(map(str, net.input_shape))})
    onnx.checker.check_model(model)
    return model


def export(net: Network, path: str | os.PathLike, seed: int = 0, extras: Extras | None = None) -> Path:
    """Write `export_model(net, seed)` to `path` atomically (another process may read the cache)."""
    import onnx

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")      # threads write too
    try:
        onnx.save(export_model(net, seed, extras), str(tmp))
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return path
