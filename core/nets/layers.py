"""Layers and networks as plain data (shapes only; weights, where needed, live beside them)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union


def conv_out(n: int, k: int, stride: int = 1, pad: int = 0, dilation: int = 1) -> int:
    """Output size of a convolution along one axis, rounded down as in PyTorch and ONNX.

    Every engine sizes convolutions through this one function so that they agree at the edges."""
    return (n + 2 * pad - dilation * (k - 1) - 1) // stride + 1


@dataclass(frozen=True)
class Conv:
    """Convolution; a fully connected layer is a Conv with k=1 over a 1x1 input (`fc=True`)."""

    name: str
    in_ch: int
    in_h: int
    in_w: int
    out_ch: int
    k_h: int
    k_w: int
    stride: int = 1
    pad: int = 0
    groups: int = 1
    dilation: int = 1
    fc: bool = False
    relu: bool = True

    @property
    def out_h(self) -> int:
        return conv_out(self.in_h, self.k_h, self.stride, self.pad, self.dilation)

    @property
    def out_w(self) -> int:
        return conv_out(self.in_w, self.k_w, self.stride, self.pad, self.dilation)

    @property
    def weights(self) -> int:
        return self.out_ch * (self.in_ch // self.groups) * self.k_h * self.k_w

    @property
    def macs(self) -> int:
        return self.out_ch * self.out_h * self.out_w * (self.in_ch // self.groups) * self.k_h * self.k_w

    @property
    def out_shape(self) -> tuple[int, int, int]:
        return (self.out_ch, self.out_h, self.out_w)


@dataclass(frozen=True)
class Pool:
    name: str
    ch: int
    in_h: int
    in_w: int
    k: int
    stride: int
    pad: int = 0
    mode: str = "max"          # "max" or "avg"
    ceil_mode: bool = False    # Caffe rounds pooled sizes up

    def _out(self, n: int) -> int:
        span = n + 2 * self.pad - self.k
        q = -(-span // self.stride) if self.ceil_mode else span // self.stride
        return q + 1

    @property
    def out_h(self) -> int:
        return self._out(self.in_h)

    @property
    def out_w(self) -> int:
        return self._out(self.in_w)

    @property
    def out_shape(self) -> tuple[int, int, int]:
        return (self.ch, self.out_h, self.out_w)


@dataclass(frozen=True)
class Eltwise:
    """Element-wise add of branches (ResNet) or concatenation bookkeeping; no weights."""

    name: str
    ch: int
    h: int
    w: int
    op: str = "add"
    relu: bool = False         # a ReLU follows the sum (ONNX Add -> Relu); shapes and MACs are unchanged

    @property
    def out_shape(self) -> tuple[int, int, int]:
        return (self.ch, self.h, self.w)


Layer = Union[Conv, Pool, Eltwise]


@dataclass
class Network:
    """A network as an ordered layer table (branches flattened in execution order)."""

    name: str
    title: str
    input_shape: tuple[int, int, int]          # (channels, height, width)
    layers: list[Layer] = field(default_factory=list)
    notes: str = ""                            # provenance, and any published figure it cannot match
    inputs: dict[str, list[str]] = field(default_factory=dict)  # layer -> layers it reads ("input"); empty: unknown

    @property
    def convs(self) -> list[Conv]:
        return [l for l in self.layers if isinstance(l, Conv)]

    @property
    def macs(self) -> int:
        return sum(l.macs for l in self.convs)

    @property
    def gops(self) -> float:
        """Workload in GOps, counting a multiply-accumulate as two operations."""
        return 2 * self.macs / 1e9
