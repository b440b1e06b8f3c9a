"""A CNN with weights and a validation set, as the engine's three inputs (network, model, data).

The network description is a `core.nets.layers.Network` (from the built-in digits model or from
ONNX via `core.nets.onnx_import`); the weights are attached per layer here. Only chains of
convolutions (groups 1, dilation 1), fully connected layers and max/average pooling can be
synthesised; everything else is listed and refused with an InputError.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union, cast

import numpy as np

from core.errors import InputError
from core.nets.builder import NetBuilder
from core.nets.layers import Conv, Layer, Network, Pool, conv_out

ASSET = Path(__file__).resolve().parents[2] / "assets" / "digits_cnn.npz"
BUILTIN = "builtin-digits"
Shape = tuple[int, int, int]


def _shape(s: Any) -> Shape:
    """A (C, H, W) shape as a tuple (network shapes may come from JSON lists)."""
    return cast(Shape, tuple(s))


@dataclass
class ConvOp:
    """A convolution (a fully connected layer becomes one whose kernel covers its whole input)."""

    name: str
    weight: np.ndarray          # (M, N, KH, KW) float32
    bias: np.ndarray            # (M,)
    stride: int
    pad: int
    relu: bool
    in_shape: Shape
    fc: bool = False

    @property
    def out_shape(self) -> Shape:
        m, _, kh, kw = self.weight.shape
        _, h, w = self.in_shape
        return (m, conv_out(h, kh, self.stride, self.pad), conv_out(w, kw, self.stride, self.pad))

    @property
    def macs(self) -> int:
        m, oh, ow = self.out_shape
        return m * oh * ow * int(np.prod(self.weight.shape[1:]))


@dataclass
class PoolOp:
    name: str
    k: int
    stride: int
    pad: int
    mode: str                   # "max" | "avg"
    ceil_mode: bool
    in_shape: Shape

    @property
    def out_shape(self) -> Shape:
        c, h, w = self.in_shape

        def out(n: int) -> int:
            span = n + 2 * self.pad - self.k
            return (-(-span // self.stride) if self.ceil_mode else span // self.stride) + 1

        return (c, out(h), out(w))


Op = Union[ConvOp, PoolOp]


@dataclass
class CnnModel:
    name: str
    network: Network
    ops: list[Op]
    x_val: np.ndarray           # (B, C, H, W) float32
    y_val: np.ndarray           # (B,) int
    notes: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def input_shape(self) -> Shape:
        return _shape(self.network.input_shape)

    @property
    def conv_ops(self) -> list[ConvOp]:
        return [op for op in self.ops if isinstance(op, ConvOp)]


# ------------------------------------------------------------------ building
def digits_network() -> Network:
    """The layer table of the built-in digits CNN (shapes only)."""
    b = NetBuilder(BUILTIN, "Digits CNN (scikit-learn 8x8 digits, trained in numpy)", (1, 8, 8))
    b.conv("conv1", 16, 3, 1, 1)
    b.pool("pool1", 2, 2)
    b.conv("conv2", 32, 3, 1, 1)
    b.pool("pool2", 2, 2)
    b.fc("fc", 10, relu=False)
    return b.network("Trained by `python -m core.cappuccino.train_digits` (seed 0); weights in assets/digits_cnn.npz.")


def layer_problems(layer: Layer) -> list[str]:
    """What the synthesiser cannot handle in one layer by itself (chaining is checked separately)."""
    if isinstance(layer, Conv):
        bad = []
        if layer.groups != 1:
            bad.append(f"{layer.name}: grouped/depthwise convolution (groups={layer.groups})")
        if layer.dilation != 1:
            bad.append(f"{layer.name}: dilated convolution (dilation={layer.dilation})")
        return bad
    if isinstance(layer, Pool):
        return [f"{layer.name}: pooling mode {layer.mode!r}"] if layer.mode not in ("max", "avg") else []
    op = getattr(layer, "op", type(layer).__name__)
    return [f"{layer.name}: {type(layer).__name__} ({op}) layers are not synthesised (branches)"]


def unsupported_layers(net: Network) -> list[str]:
    """Every layer the synthesiser cannot handle, each with the reason (empty when all are fine)."""
    bad = []
    shape = tuple(net.input_shape)
    for layer in net.layers:
        bad += layer_problems(layer)
        if isinstance(layer, Conv):
            expect = (layer.in_ch, layer.in_h, layer.in_w)
            flat = (shape[0] * shape[1] * shape[2], 1, 1)
            if expect != shape and not (layer.fc and expect == flat):
                bad.append(f"{layer.name}: reads {expect} but the previous layer gives {shape} (not a chain)")
        elif isinstance(layer, Pool):
            if (layer.ch, layer.in_h, layer.in_w) != shape:
                bad.append(f"{layer.name}: reads {(layer.ch, layer.in_h, layer.in_w)} but the previous layer gives {shape}")
        shape = layer.out_shape
    if not any(isinstance(l, Conv) for l in net.layers):
        bad.append(f"{net.name}: no convolution or fully connected layer")
    return bad


def build_ops(net: Network, weights: dict[str, tuple[np.ndarray, np.ndarray | None]]) -> list[Op]:
    """Attach weights to the layer table; refuses (InputError) when any layer is unsupported."""
    bad = unsupported_layers(net)
    if bad:
        raise InputError("cannot synthesise these layers: " + "; ".join(bad), net.name)
    ops: list[Op] = []
    shape = _shape(net.input_shape)
    for layer in net.layers:
        if isinstance(layer, Pool):
            ops.append(PoolOp(layer.name, layer.k, layer.stride, layer.pad, layer.mode, layer.ceil_mode, shape))
            shape = ops[-1].out_shape
            continue
        assert isinstance(layer, Conv)      # unsupported_layers refuses every other kind
        if layer.name not in weights:
            raise InputError(f"no weights for layer {layer.name!r}", net.name)
        w, b = weights[layer.name]
        w = np.asarray(w, np.float32)
        if layer.fc:
            c, h, wd = shape
            if w.size != layer.out_ch * c * h * wd:
                raise InputError(f"{layer.name}: {w.size} weights, expected {layer.out_ch}x{c * h * wd}", net.name)
            w = w.reshape(layer.out_ch, c, h, wd)      # flatten order of NCHW: channel-major
            op = ConvOp(layer.name, w, _bias(b, layer.out_ch, layer.name), 1, 0, layer.relu, shape, fc=True)
        else:
            want = (layer.out_ch, layer.in_ch, layer.k_h, layer.k_w)
            if w.shape != want:
                raise InputError(f"{layer.name}: weight shape {w.shape}, expected {want}", net.name)
            op = ConvOp(layer.name, w, _bias(b, layer.out_ch, layer.name), layer.stride, layer.pad, layer.relu, shape)
        ops.append(op)
        shape = op.out_shape
    return ops


def _bias(b: np.ndarray | None, m: int, name: str) -> np.ndarray:
    if b is None:
        return np.zeros(m, np.float32)
    b = np.asarray(b, np.float32).reshape(-1)
    if b.shape != (m,):
        raise InputError(f"{name}: bias has {b.size} values, expected {m}", name)
    return b


# ------------------------------------------------------------------ sources
def digits_validation(val_index: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The held-out digits images (B, 1, 8, 8) in [0, 1] and their labels."""
    from sklearn.datasets import load_digits

    data = load_digits()
    x = (data.images.astype(np.float32) / 16.0)[:, None, :, :]
    y = data.target.astype(np.int64)
    if val_index is None:
        with np.load(ASSET) as f:
            val_index = f["val_index"]
    return x[val_index], y[val_index]


def load_builtin(limit: int | None = None, validation: str | None = None) -> CnnModel:
    """The built-in digits CNN; its validation set is the held-out digits unless a file is given."""
    if not ASSET.exists():
        raise InputError(f"{ASSET} is missing; run `python -m core.cappuccino.train_digits`", "model")
    with np.load(ASSET) as f:
        params = {k: f[k] for k in f.files}
    net = digits_network()
    weights = {n: (params[f"{n}.weight"], params[f"{n}.bias"]) for n in ("conv1", "conv2", "fc")}
    ops = build_ops(net, weights)
    extra: dict[str, Any] = {"trained_validation_accuracy": float(params["val_accuracy"])}
    if validation:
        x, y = load_validation_npz(validation, _shape(net.input_shape), int(np.prod(ops[-1].out_shape)))
        extra["validation_file"] = str(validation)
    else:
        x, y = digits_validation(params["val_index"])
    if limit:
        x, y = x[:limit], y[:limit]
    return CnnModel(BUILTIN, net, ops, x, y, net.notes, extra)


def load_validation_npz(path: str, shape: Shape, outputs: int) -> tuple[np.ndarray, np.ndarray]:
    """A validation set file: arrays `x` (B, C, H, W) or (B, H, W) and labels `y` in 0..outputs-1.

    NaN/inf images and labels that are not class indices are refused here: they would otherwise
    turn into a meaningless accuracy (and wrong inexact-mode choices) without any error.
    """
    p = Path(path)
    if not p.is_file():
        raise InputError(f"no such file: {path}", "validation")
    try:
        with np.load(p) as f:
            x_raw, y_raw = np.asarray(f["x"]), np.asarray(f["y"]).reshape(-1)
    except KeyError as exc:
        raise InputError(f"{path}: needs arrays 'x' and 'y' ({exc})", "validation") from None
    except Exception as exc:  # not an npz
        raise InputError(f"{path}: not a numpy .npz file ({exc})", "validation") from None
    if x_raw.dtype.kind not in "iuf":
        raise InputError(f"{path}: images x must be numbers, got dtype {x_raw.dtype}", "validation")
    if y_raw.dtype.kind not in "iuf":
        raise InputError(f"{path}: labels y must be class indices 0..{outputs - 1}, got dtype {y_raw.dtype}",
                         "validation")
    x = x_raw.astype(np.float32)
    if x.ndim == 3:
        x = x[:, None]
    if x.shape[1:] != tuple(shape) or len(x) != len(y_raw) or len(y_raw) == 0:
        raise InputError(f"{path}: x has shape {x.shape} and y {y_raw.shape}; the network needs (B, {shape[0]}, "
                         f"{shape[1]}, {shape[2]}) with one label per image", "validation")
    finite = np.isfinite(x).reshape(len(x), -1).all(axis=1)
    if not finite.all():
        i = int(np.argmin(finite))
        raise InputError(f"{path}: image x[{i}] has a non-finite value (NaN or infinity as float32)", "validation")
    with np.errstate(invalid="ignore"):
        ok = np.isfinite(y_raw) & (y_raw == np.round(y_raw)) & (y_raw >= 0) & (y_raw < outputs)
    if not ok.all():
        i = int(np.argmin(ok))
        raise InputError(f"{path}: label y[{i}] = {y_raw[i]} is not a class index 0..{outputs - 1} "
                         f"(the network has {outputs} outputs)", "validation")
    return x, y_raw.astype(np.int64)


def load_onnx_model(path: str, validation: str | None = None, limit: int | None = None) -> CnnModel:
    """An ONNX network via the shared importer; its validation set from `validation` or the digits."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"no such file: {path}", "onnx")
    try:
        from core.nets import onnx_import
    except ImportError as exc:
        raise InputError(f"ONNX import is not available in this build ({exc})", "onnx") from None
    try:
        if hasattr(onnx_import, "load_onnx_with_weights"):
            net, raw = onnx_import.load_onnx_with_weights(str(p))
        else:
            net, raw = onnx_import.load_onnx(str(p)), onnx_import.load_onnx_weights(str(p))
    except InputError as exc:
        # operators the importer refuses: name the imported layers this engine refuses too, so that
        # one message lists everything to change (e.g. a Sigmoid and a depthwise convolution)
        layers = getattr(exc, "layers", None) or []
        more = [problem for layer in layers for problem in layer_problems(layer)]
        if more:
            raise InputError(f"{exc.message}; the synthesiser also cannot handle these layers: "
                             + "; ".join(more), exc.where) from None
        raise
    except Exception as exc:
        raise InputError(f"cannot read ONNX model: {exc}", path) from None
    weights = _normalise_weights(raw)
    ops = build_ops(net, weights)
    shape = _shape(net.input_shape)
    if validation:
        x, y = load_validation_npz(validation, shape, int(np.prod(ops[-1].out_shape)))
    elif shape == (1, 8, 8):
        x, y = digits_validation()
    else:
        raise InputError(f"the network reads {shape} images; give a validation set with --validation FILE.npz "
                         "(arrays x and y)", "validation")
    if limit:
        x, y = x[:limit], y[:limit]
    return CnnModel(net.name, net, ops, x, y, net.notes)


def _normalise_weights(raw: Any) -> dict[str, tuple[np.ndarray, np.ndarray | None]]:
    """Accept {layer: (W, b)}, {layer: {"weight": W, "bias": b}} or {layer: W}."""
    out: dict[str, tuple[Any, Any]] = {}
    for name, val in dict(raw).items():
        if isinstance(val, dict):
            out[name] = (val.get("weight", val.get("W")), val.get("bias", val.get("B")))
        elif isinstance(val, (tuple, list)):
            out[name] = (val[0], val[1] if len(val) > 1 else None)
        else:
            out[name] = (val, None)
    return out
