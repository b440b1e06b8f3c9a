"""Small DAG networks with seeded weights that hold every op kind the synthesiser generates
(shared by tests/test_cappuccino_synth.py and benchmarks; small shapes so tests stay fast)."""

from __future__ import annotations

import numpy as np

from core.cappuccino.graph_import import layer_table
from core.cappuccino.model import (AddOp, CnnModel, ConcatOp, ConvOp, GlobalAvgPoolOp, LrnOp, PoolOp, SoftmaxOp)


def _w(rng: np.random.Generator, m: int, n: int, k: int, kw: int | None = None) -> np.ndarray:
    kw = k if kw is None else kw
    return (rng.standard_normal((m, n, k, kw)) * np.sqrt(2.0 / (n * k * kw))).astype(np.float32)


def _b(rng: np.random.Generator, m: int) -> np.ndarray:
    return (0.1 * rng.standard_normal(m)).astype(np.float32)


def every_kind_model(seed: int = 0, images: int = 6) -> CnnModel:
    """conv (3 input maps), depthwise with stride 2 and with stride 1, Inception-like concat of a 1x1 conv, a padded max
    pool and a 12-map conv (the slices after it are not stack-aligned: copies), grouped convs (unaligned and aligned), a
    residual add fused into a conv and a three-input add, LRN, average pooling with ceil_mode and
    count_include_pad, global average pooling, fc and softmax."""
    rng = np.random.default_rng(seed)
    ops = [
        ConvOp("c1", _w(rng, 16, 3, 3), _b(rng, 16), 1, 1, True, (3, 9, 19), inputs=["input"]),
        ConvOp("d1", _w(rng, 16, 1, 3), _b(rng, 16), 2, 1, True, (16, 9, 19), groups=16, inputs=["c1"]),
        ConvOp("b1", _w(rng, 16, 16, 1), _b(rng, 16), 1, 0, True, (16, 5, 10), inputs=["d1"]),
        PoolOp("b2", 3, 1, 1, "max", False, (16, 5, 10), inputs=["d1"]),
        ConvOp("b3", _w(rng, 12, 16, 3), _b(rng, 12), 1, 0, True, (16, 5, 10), pads=(1, 0, 1, 2), inputs=["d1"]),
        ConcatOp("cat", [(16, 5, 10), (12, 5, 10), (16, 5, 10)], inputs=["b1", "b3", "b2"]),
        ConvOp("g1", _w(rng, 16, 22, 3), _b(rng, 16), 1, 1, True, (44, 5, 10), groups=2, inputs=["cat"]),
        ConvOp("g2", _w(rng, 16, 8, 3), _b(rng, 16), 1, 1, True, (16, 5, 10), groups=2, inputs=["g1"]),
        ConvOp("d2", _w(rng, 16, 1, 3), _b(rng, 16), 1, 1, True, (16, 5, 10), groups=16, inputs=["g2"]),
        ConvOp("r1", _w(rng, 16, 16, 3), _b(rng, 16), 1, 1, False, (16, 5, 10), inputs=["d2"]),
        AddOp("res", (16, 5, 10), relu=True, inputs=["r1", "g2"]),
        AddOp("add3", (16, 5, 10), relu=False, inputs=["g1", "res", "g2"]),
        LrnOp("lrn", 5, 1e-2, 0.75, 2.0, (16, 5, 10), inputs=["add3"]),
        PoolOp("ap", 3, 2, 1, "avg", True, (16, 5, 10), count_include_pad=True, inputs=["lrn"]),
        PoolOp("mp", 2, 2, 0, "max", True, (16, 3, 6), inputs=["ap"]),
        GlobalAvgPoolOp("gap", (16, 2, 3), inputs=["mp"]),
        ConvOp("fc", _w(rng, 10, 16, 1), _b(rng, 10), 1, 0, False, (16, 1, 1), fc=True, inputs=["gap"]),
        SoftmaxOp("prob", (10, 1, 1), inputs=["fc"]),
    ]
    x = rng.standard_normal((images, 3, 9, 19)).astype(np.float32)
    y = np.zeros(images, np.int64)
    net = layer_table("every-kind", (3, 9, 19), ops, "seeded random weights")
    return CnnModel("every-kind", net, ops, x, y, extra={"weights": f"random (seed {seed})"})
