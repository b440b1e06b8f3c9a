"""A tiny shape-tracking builder so zoo models are written as layer calls, never as typed shapes.

Every call takes the tensor it reads (default: the last one produced), computes the output shape
with the same formulas as `core.nets.layers`, appends the layer and returns a handle to its
output.  Branches (ResNet shortcuts, Inception modules) pass earlier handles explicitly, so the
flattened table stays in execution order while each layer still reads its true producer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import cast

from core.errors import InputError
from core.nets.layers import Conv, Eltwise, Layer, Network, Pool

Shape = tuple[int, int, int]


@dataclass(frozen=True)
class T:
    """A handle to a tensor: the layer that produced it ("input" for the network input) and its shape."""

    producer: str
    shape: Shape


@dataclass
class NetBuilder:
    name: str
    title: str
    input_shape: Shape
    layers: list[Layer] = field(default_factory=list)
    inputs: dict[str, list[str]] = field(default_factory=dict)   # layer -> producers it reads
    x: T = field(init=False)

    def __post_init__(self) -> None:
        self.x = T("input", cast(Shape, tuple(self.input_shape)))

    # ------------------------------------------------------------------ internals
    def _emit(self, layer: Layer, reads: list[T], shape: Shape) -> T:
        if layer.name in self.inputs or layer.name == "input":
            raise ValueError(f"{self.name}: duplicate layer name {layer.name!r}")
        if min(shape) <= 0:
            raise InputError(f"layer {layer.name} would produce an empty tensor {shape}", self.name)
        self.layers.append(layer)
        self.inputs[layer.name] = [t.producer for t in reads]
        self.x = T(layer.name, shape)
        return self.x

    # ------------------------------------------------------------------ layers
    def conv(self, name: str, out_ch: int, k: int | tuple[int, int], stride: int = 1, pad: int = 0, *,
             groups: int = 1, dilation: int = 1, relu: bool = True, x: T | None = None) -> T:
        """A convolution; `k` may be (k_h, k_w); depthwise is groups == in_ch == out_ch."""
        x = x or self.x
        c, h, w = x.shape
        k_h, k_w = (k, k) if isinstance(k, int) else k
        if c % groups or out_ch % groups:
            raise ValueError(f"{name}: channels {c}->{out_ch} not divisible by groups={groups}")
        layer = Conv(name, c, h, w, out_ch, k_h, k_w, stride, pad, groups, dilation, relu=relu)
        return self._emit(layer, [x], layer.out_shape)

    def dwconv(self, name: str, k: int, stride: int = 1, pad: int = 0, *, relu: bool = True,
               x: T | None = None) -> T:
        """Depthwise convolution (one filter per channel)."""
        x = x or self.x
        return self.conv(name, x.shape[0], k, stride, pad, groups=x.shape[0], relu=relu, x=x)

    def fc(self, name: str, out: int, *, relu: bool = True, x: T | None = None) -> T:
        """Fully connected layer: flattens its input into a 1x1 map of C*H*W channels."""
        x = x or self.x
        c, h, w = x.shape
        layer = Conv(name, c * h * w, 1, 1, out, 1, 1, fc=True, relu=relu)
        return self._emit(layer, [x], layer.out_shape)

    def pool(self, name: str, k: int, stride: int | None = None, pad: int = 0, *, mode: str = "max",
             ceil_mode: bool = False, x: T | None = None) -> T:
        x = x or self.x
        c, h, w = x.shape
        layer = Pool(name, c, h, w, k, stride or k, pad, mode, ceil_mode)
        return self._emit(layer, [x], layer.out_shape)

    def global_pool(self, name: str, *, mode: str = "avg", x: T | None = None) -> T:
        """Pooling over the whole (square) map down to 1x1."""
        x = x or self.x
        c, h, w = x.shape
        if h != w:
            raise ValueError(f"{name}: global pooling of a non-square {h}x{w} map cannot be a Pool")
        return self.pool(name, h, h, mode=mode, x=x)

    def add(self, name: str, *xs: T) -> T:
        shapes = {t.shape for t in xs}
        if len(xs) < 2 or len(shapes) != 1:
            raise ValueError(f"{name}: add needs >= 2 tensors of one shape, got {[t.shape for t in xs]}")
        c, h, w = xs[0].shape
        return self._emit(Eltwise(name, c, h, w, "add"), list(xs), (c, h, w))

    def concat(self, name: str, *xs: T) -> T:
        """Channel concatenation (Inception): an Eltwise(op="concat") bookkeeping entry."""
        sizes = {t.shape[1:] for t in xs}
        if len(xs) < 2 or len(sizes) != 1:
            raise ValueError(f"{name}: concat needs >= 2 tensors of one H x W, got {[t.shape for t in xs]}")
        c = sum(t.shape[0] for t in xs)
        h, w = xs[0].shape[1:]
        return self._emit(Eltwise(name, c, h, w, "concat"), list(xs), (c, h, w))

    # ------------------------------------------------------------------ result
    def network(self, notes: str = "") -> Network:
        return Network(self.name, self.title, cast(Shape, tuple(self.input_shape)), list(self.layers), notes,
                       {k: list(v) for k, v in self.inputs.items()})
