"""The lower bounds of off-chip traffic (Chen, Han, Wang, HPCA 2020, section 3).

Matrix multiply of A x C by C x B with S words on chip: Q >= 2ABC/sqrt(S) (+ AB output writes).
Convolution: an input element serves up to R sliding windows, so Q >= 2*MACs/sqrt(R*S) + outputs.
We take R as the exact maximum number of windows reading one input element (3x3 stride 1 -> 9;
11x11 stride 4 -> 9), which is the quantity the pebble-game argument needs; the paper's
approximation Hk*Wk/D^2 is reported beside it. Compulsory traffic (every input that some window
reads, every weight and every output moved once) is a second lower bound that dominates for small
layers, so results are also compared with max(bound, compulsory).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from core.bound.geometry import Axis, max_reuse, rows_used
from core.bound.shapes import ConvShape


def matmul_bound(A: int, B: int, C: int, S: int) -> float:
    """Reads needed to multiply an A x C by a C x B matrix with S words on chip (writes excluded)."""
    return 2.0 * A * B * C / math.sqrt(S)


def axes(shape: ConvShape) -> tuple[Axis, Axis]:
    return (Axis(shape.Ho, shape.Hi, shape.Hk, shape.stride, shape.pad, shape.dilation),
            Axis(shape.Wo, shape.Wi, shape.Wk, shape.stride, shape.pad, shape.dilation))


def window_reuse(shape: ConvShape) -> int:
    """R: the most windows that read one input element (1 for 1x1 kernels and fully connected)."""
    ay, ax = axes(shape)
    return max(1, max_reuse(ay) * max_reuse(ax))


def paper_reuse(shape: ConvShape) -> float:
    """The paper's approximation R ~ Hk*Wk/D^2 (at least 1)."""
    return max(1.0, shape.Hk * shape.Wk / shape.stride ** 2)


@dataclass(frozen=True)
class LayerBound:
    R: int
    R_paper: float
    reads: float          # 2 * MACs / sqrt(R * S)
    writes: int           # every output written once
    compulsory_inputs: int
    compulsory_weights: int
    compulsory_outputs: int

    @property
    def total(self) -> float:
        return self.reads + self.writes

    @property
    def compulsory(self) -> int:
        return self.compulsory_inputs + self.compulsory_weights + self.compulsory_outputs

    @property
    def reference(self) -> float:
        """The larger of the two lower bounds; no dataflow can move less."""
        return max(self.total, float(self.compulsory))

    def to_json(self) -> dict[str, Any]:
        return {"R": self.R, "R_paper": self.R_paper, "reads": self.reads, "writes": self.writes,
                "total": self.total,
                "compulsory": {"inputs": self.compulsory_inputs, "weights": self.compulsory_weights,
                               "outputs": self.compulsory_outputs, "total": self.compulsory},
                "reference": self.reference}


def conv_bound(shape: ConvShape, S: int) -> LayerBound:
    """The convolution bound for S words of on-chip memory, and the compulsory traffic."""
    R = window_reuse(shape)
    ay, ax = axes(shape)
    used_inputs = shape.B * shape.Ci * rows_used(ay) * rows_used(ax)
    return LayerBound(R=R, R_paper=paper_reuse(shape), reads=2.0 * shape.macs / math.sqrt(R * S),
                      writes=shape.outputs, compulsory_inputs=used_inputs,
                      compulsory_weights=shape.weights, compulsory_outputs=shape.outputs)
