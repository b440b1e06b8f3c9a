"""A CNN with weights and a validation set, as the engine's three inputs (network, model, data).

The model is a DAG of ops in topological order (`CnnModel.ops`). Every op has a `name` (which is
also the name of the tensor it writes), `inputs` (the tensors it reads; the network input is
"input") and (C, H, W) `in_shape` / `out_shape`. A chain is the special case where every op reads
the op before it; ops built without `inputs` are chained that way by CnnModel.

Kinds (`op.kind`): conv and fc (ConvOp; batch-norm already folded, optional fused ReLU; grouped
and depthwise through `groups`), pool (PoolOp: max or average, ONNX pads / ceil_mode /
count_include_pad), gap (GlobalAvgPoolOp), concat (ConcatOp, channel axis), add (AddOp, residual
sum, optional ReLU after), lrn (LrnOp, ONNX LRN) and softmax (SoftmaxOp, over the C*H*W values of
a sample). Zoo networks arrive as ONNX graphs (core.cappuccino.networks) and ONNX files through
core.cappuccino.graph_import; the layer-table path (`build_ops`) stays for chains.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Union, cast

import numpy as np

from core import faults
from core.errors import InputError
from core.files import file_problem
from core.nets.builder import NetBuilder
from core.nets.layers import Conv, Layer, Network, Pool, conv_out
from core.paths import ASSETS

ASSET = ASSETS / "digits_cnn.npz"
BUILTIN = "builtin-digits"
INPUT = "input"                 # the name of the network's input tensor in `op.inputs`
Shape = tuple[int, int, int]
Pads = tuple[int, int, int, int]    # (top, left, bottom, right) = ONNX [h_begin, w_begin, h_end, w_end]


def _shape(s: Any) -> Shape:
    """A (C, H, W) shape as a tuple (network shapes may come from JSON lists)."""
    return cast(Shape, tuple(int(v) for v in s))


def _norm_pads(pad: int, pads: Any) -> tuple[int, Pads | None]:
    """(pad, pads): pads is None when all four sides are equal (then pad is that value)."""
    if pads is None:
        return int(pad), None
    p = cast(Pads, tuple(int(v) for v in pads))
    if len(p) != 4 or min(p) < 0:
        raise ValueError(f"pads must be four non-negative ints (top, left, bottom, right), got {pads}")
    return (p[0], None) if len(set(p)) == 1 else (max(p), p)


def _span_out(n: int, k: int, stride: int, begin: int, end: int, ceil_mode: bool = False) -> int:
    """Output size along one axis (ONNX / PyTorch: with ceil_mode the last window starts in bounds)."""
    span = n + begin + end - k
    out = (-(-span // stride) if ceil_mode else span // stride) + 1
    if ceil_mode and (out - 1) * stride >= n + begin:
        out -= 1
    return out


@dataclass
class ConvOp:
    """A convolution; a fully connected layer is one whose kernel covers its whole input (fc=True).

    weight is (M, N/groups, KH, KW) with batch-norm folded in; depthwise is groups == N == M.
    `pad` is the symmetric pad; `pads` is set (top, left, bottom, right) only when the sides differ.
    """

    name: str
    weight: np.ndarray          # (M, N/groups, KH, KW) float32
    bias: np.ndarray            # (M,)
    stride: int
    pad: int
    relu: bool
    in_shape: Shape
    fc: bool = False
    groups: int = 1
    pads: Pads | None = None
    inputs: list[str] = field(default_factory=list)
    # int8 mode (issue 35): the input's activation scale calibrated on the validation images
    # (inexact.calibrate_int8); 0 = not calibrated, the mode is then refused
    int8_scale: float = field(default=0.0, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.pad, self.pads = _norm_pads(self.pad, self.pads)
        self.in_shape = _shape(self.in_shape)
        n = self.in_shape[0]
        m, ng = int(self.weight.shape[0]), int(self.weight.shape[1])
        if self.groups < 1 or n % self.groups or m % self.groups or ng * self.groups != n:
            raise ValueError(f"{self.name}: weight {tuple(self.weight.shape)} with groups={self.groups} "
                             f"does not fit {n} input channels")

    @property
    def kind(self) -> str:
        return "fc" if self.fc else "conv"

    @property
    def pads4(self) -> Pads:
        return self.pads if self.pads is not None else (self.pad,) * 4

    @property
    def depthwise(self) -> bool:
        return self.groups > 1 and self.groups == self.in_shape[0] == self.weight.shape[0]

    @property
    def out_shape(self) -> Shape:
        m, _, kh, kw = self.weight.shape
        _, h, w = self.in_shape
        t, left, b, r = self.pads4
        return (int(m), conv_out(h + t + b, kh, self.stride), conv_out(w + left + r, kw, self.stride))

    @property
    def macs(self) -> int:
        m, oh, ow = self.out_shape
        return m * oh * ow * int(np.prod(self.weight.shape[1:]))


class _KeepsShape:
    """An op whose output has its input's shape (add, LRN, softmax): said once, for all of them."""

    in_shape: Shape

    @property
    def out_shape(self) -> Shape:
        return self.in_shape


@dataclass
class PoolOp:
    """Max or average pooling with ONNX semantics: padded max ignores the pads; average divides by
    the in-bounds count unless count_include_pad (then by the window clipped to the padded map)."""

    name: str
    k: int
    stride: int
    pad: int
    mode: str                   # "max" | "avg"
    ceil_mode: bool
    in_shape: Shape
    count_include_pad: bool = False
    pads: Pads | None = None
    inputs: list[str] = field(default_factory=list)
    kind: ClassVar[str] = "pool"

    def __post_init__(self) -> None:
        self.pad, self.pads = _norm_pads(self.pad, self.pads)
        self.in_shape = _shape(self.in_shape)

    @property
    def pads4(self) -> Pads:
        return self.pads if self.pads is not None else (self.pad,) * 4

    @property
    def out_shape(self) -> Shape:
        c, h, w = self.in_shape
        t, left, b, r = self.pads4
        return (c, _span_out(h, self.k, self.stride, t, b, self.ceil_mode),
                _span_out(w, self.k, self.stride, left, r, self.ceil_mode))


@dataclass
class GlobalAvgPoolOp:
    """Mean of each whole map (ONNX GlobalAveragePool): (C, H, W) -> (C, 1, 1)."""

    name: str
    in_shape: Shape
    inputs: list[str] = field(default_factory=list)
    kind: ClassVar[str] = "gap"

    @property
    def out_shape(self) -> Shape:
        return (self.in_shape[0], 1, 1)


@dataclass
class ConcatOp:
    """Channel concatenation of maps of one H x W, in the order of `inputs`."""

    name: str
    in_shapes: list[Shape]
    inputs: list[str] = field(default_factory=list)
    kind: ClassVar[str] = "concat"

    @property
    def in_shape(self) -> Shape:
        return self.in_shapes[0]

    @property
    def out_shape(self) -> Shape:
        return (sum(s[0] for s in self.in_shapes), self.in_shapes[0][1], self.in_shapes[0][2])


@dataclass
class AddOp(_KeepsShape):
    """Element-wise sum of two or more equal-shape tensors (residual), then ReLU when `relu`."""

    name: str
    in_shape: Shape
    relu: bool = False
    inputs: list[str] = field(default_factory=list)
    kind: ClassVar[str] = "add"


@dataclass
class LrnOp(_KeepsShape):
    """ONNX LRN across channels: y = x / (bias + alpha/size * sum of x^2 over the size-window)^beta,
    the window of channel c being [c - floor((size-1)/2), c + ceil((size-1)/2)] clipped to the maps."""

    name: str
    size: int
    alpha: float
    beta: float
    bias: float
    in_shape: Shape
    inputs: list[str] = field(default_factory=list)
    kind: ClassVar[str] = "lrn"


@dataclass
class SoftmaxOp(_KeepsShape):
    """Softmax over all C*H*W values of a sample (the classifier's final op)."""

    name: str
    in_shape: Shape
    inputs: list[str] = field(default_factory=list)
    kind: ClassVar[str] = "softmax"


Op = Union[ConvOp, PoolOp, GlobalAvgPoolOp, ConcatOp, AddOp, LrnOp, SoftmaxOp]
OP_KINDS = ("conv", "fc", "pool", "gap", "concat", "add", "lrn", "softmax")


def op_in_shapes(op: Op) -> list[Shape]:
    """The shape of each tensor in op.inputs, in order."""
    if isinstance(op, ConcatOp):
        return list(op.in_shapes)
    return [op.in_shape] * max(1, len(op.inputs))


def check_graph(name: str, input_shape: Shape, ops: list[Op]) -> None:
    """Refuse (InputError) a graph whose ops are not in topological order or whose shapes disagree."""
    shapes: dict[str, Shape] = {INPUT: _shape(input_shape)}
    for op in ops:
        if op.name in shapes:
            raise InputError(f"duplicate op/tensor name {op.name!r}", name)
        if not op.inputs:
            raise InputError(f"{op.name}: reads no tensor", name)
        for t, want in zip(op.inputs, op_in_shapes(op)):
            if t not in shapes:
                raise InputError(f"{op.name}: reads {t!r}, which no earlier op writes (not topological)", name)
            have = shapes[t]
            flat = isinstance(op, (ConvOp, SoftmaxOp)) and int(np.prod(have)) == int(np.prod(want)) and \
                (getattr(op, "fc", False) or isinstance(op, SoftmaxOp))
            if have != want and not flat:
                raise InputError(f"{op.name}: reads {t!r} as {want} but it is {have}", name)
        if isinstance(op, ConcatOp) and len(op.inputs) != len(op.in_shapes):
            raise InputError(f"{op.name}: {len(op.inputs)} inputs but {len(op.in_shapes)} shapes", name)
        if isinstance(op, AddOp) and len(op.inputs) < 2:
            raise InputError(f"{op.name}: an add needs two or more inputs", name)
        if not isinstance(op, (ConcatOp, AddOp)) and len(op.inputs) != 1:
            raise InputError(f"{op.name}: a {op.kind} op reads one tensor, got {op.inputs}", name)
        if min(op.out_shape) <= 0:
            raise InputError(f"{op.name}: empty output {op.out_shape}", name)
        shapes[op.name] = op.out_shape


@dataclass
class CnnModel:
    """The network as a DAG of ops (topological order) plus its validation set.

    `extra["weights"]` says where the weights come from: "trained" or "random (seed N)".
    """

    name: str
    network: Network
    ops: list[Op]
    x_val: np.ndarray           # (B, C, H, W) float32
    y_val: np.ndarray           # (B,) int
    notes: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    # every op's precise output for x_val when the loader computed them anyway (forward.ActivationCache)
    precise_outputs: list[np.ndarray] | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        prev = INPUT
        for op in self.ops:             # ops built without connectivity form a chain
            if not op.inputs:
                op.inputs = [prev]
            prev = op.name
        check_graph(self.name, self.input_shape, self.ops)

    @property
    def input_shape(self) -> Shape:
        return _shape(self.network.input_shape)

    @property
    def conv_ops(self) -> list[ConvOp]:
        return [op for op in self.ops if isinstance(op, ConvOp)]

    @property
    def output(self) -> str:
        """The tensor the network returns (the last op's)."""
        return self.ops[-1].name

    @property
    def is_chain(self) -> bool:
        prev = INPUT
        for op in self.ops:
            if op.inputs != [prev]:
                return False
            prev = op.name
        return True

    def consumers(self, tensor: str) -> list[Op]:
        """The ops that read `tensor` ("input" for the network input)."""
        return [op for op in self.ops if tensor in op.inputs]

    def shape_of(self, tensor: str) -> Shape:
        if tensor == INPUT:
            return self.input_shape
        return next(op.out_shape for op in self.ops if op.name == tensor)

    @property
    def weights_source(self) -> str:
        return str(self.extra.get("weights", "trained"))


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
    """What a layer table cannot give the engine in one layer (chaining is checked separately)."""
    if isinstance(layer, Conv):
        bad = []
        if layer.dilation != 1:
            bad.append(f"{layer.name}: dilated convolution (dilation={layer.dilation})")
        return bad
    if isinstance(layer, Pool):
        return [f"{layer.name}: pooling mode {layer.mode!r}"] if layer.mode not in ("max", "avg") else []
    op = getattr(layer, "op", type(layer).__name__)
    return [f"{layer.name}: {type(layer).__name__} ({op}) needs the graph's connectivity, which a layer table "
            "lacks (give an ONNX file or a zoo network name)"]


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
            want = (layer.out_ch, layer.in_ch // layer.groups, layer.k_h, layer.k_w)
            if w.shape != want:
                raise InputError(f"{layer.name}: weight shape {w.shape}, expected {want}", net.name)
            op = ConvOp(layer.name, w, _bias(b, layer.out_ch, layer.name), layer.stride, layer.pad, layer.relu, shape,
                        groups=layer.groups)
        ops.append(op)
        shape = op.out_shape
    prev = INPUT
    for each in ops:
        each.inputs = [prev]
        prev = each.name
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
    why = file_problem(p)           # a FIFO would block np.load: refused like a missing file
    if why:
        raise InputError(f"{'no such file' if why == 'not found' else why}: {path}", "validation")
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
    """An ONNX graph (core.cappuccino.graph_import); its validation set from `validation` or the digits."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"no such file: {path}", "onnx")
    try:
        from core.cappuccino.graph_import import import_onnx
    except ImportError as exc:
        raise InputError(f"ONNX import is not available in this build ({exc})", "onnx") from None
    try:
        g = import_onnx(str(p))
    except (InputError, faults.MachineFault):      # the machine's fault (no memory) is not the file's
        raise
    except Exception as exc:
        raise InputError(f"cannot read ONNX model: {exc}", path) from None
    shape = g.input_shape
    outputs = int(np.prod(g.ops[-1].out_shape))
    if validation:
        x, y = load_validation_npz(validation, shape, outputs)
    elif shape == (1, 8, 8):
        x, y = digits_validation()
    else:
        raise InputError(f"the network reads {shape[0]}x{shape[1]}x{shape[2]} images and has no validation set; "
                         "give it one: a .npz of images x (B, C, H, W) and labels y", "validation")
    if limit:
        x, y = x[:limit], y[:limit]
    check_activation_sizes(g.ops, len(x), path)
    return CnnModel(g.name, g.network, g.ops, x, y, g.notes, {"weights": g.weights})


# The largest activation of one image a network may have: 16 M values (64 MB as float32), some
# twenty times VGG-16's largest; a 4 MB file with a 1x1 convolution to a million maps asks for more.
MAX_ACTIVATION = 1 << 24


def check_activation_sizes(ops: list[Any], images: int, where: str) -> None:
    """Refuse, before any forward pass allocates, a network whose activations do not fit: one image's
    largest tensor over MAX_ACTIVATION, or the validation batch's over half the free memory."""
    import psutil

    sizes = [(int(np.prod(op.out_shape, dtype=np.int64)), op) for op in ops if getattr(op, "out_shape", None)]
    if not sizes:
        return
    largest, op = max(sizes, key=lambda t: t[0])
    shape = "x".join(str(int(n)) for n in op.out_shape)
    if largest > MAX_ACTIVATION:
        raise InputError(f"layer {op.name!r} outputs {shape} = {largest:,} values per image; at most "
                         f"{MAX_ACTIVATION:,} are supported", where)
    need = largest * 4 * 3 * max(images, 1)          # float32, an op's input, output and one scratch copy
    free = psutil.virtual_memory().available
    if need > free // 2:
        raise InputError(f"layer {op.name!r} outputs {shape} values per image: {max(images, 1)} validation "
                         f"images need about {need / 2**30:.1f} GiB, and {free / 2**30:.1f} GiB of memory is free; "
                         f"use fewer images (Images / --limit)", where)


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
