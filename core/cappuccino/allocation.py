"""Thread workload allocation: kernel-, filter-bank- and output-level parallelism (section IV-A).

For a convolution with M output maps of OH x OW pixels, N input maps and KH x KW kernels:

* KLP: one thread per multiplication -> M*OH*OW*N*KH*KW threads doing 1 MAC each; every output
  needs a cross-thread reduction of N*KH*KW partial products (N*KH*KW - 1 additions,
  ceil(log2(N*KH*KW)) synchronised tree levels).
* FLP: one thread per kernel (one input map of one filter bank) -> M*OH*OW*N threads of
  KH*KW MACs; reduction of N partial sums per output.
* OLP: one thread per output pixel -> M*OH*OW threads (padded to whole stacks of V maps in the
  map-major program) computing the whole 3-D convolution, N*KH*KW MACs, no reduction.

Data reuse is counted as the paper argues it: in OLP the OH*OW threads of one output map apply
the same filter bank, so with a cache a filter bank is loaded once and used OH*OW times; in KLP
and FLP a thread's operands serve only its own partial product(s) and the partial results must be
written and read back for the reduction (counted as extra memory words).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import cast

from core.cappuccino import layout
from core.cappuccino.model import AddOp, ConcatOp, ConvOp, GlobalAvgPoolOp, LrnOp, Op, PoolOp, Shape, SoftmaxOp


@dataclass
class Strategy:
    name: str                   # "KLP" | "FLP" | "OLP"
    threads: int
    work_per_thread: int        # MACs (or compares for pooling)
    reduction_adds: int         # additions done across threads after the parallel step
    reduction_depth: int        # synchronised levels of the reduction tree
    weight_reuse: int           # uses of each loaded weight (filter-bank sharing across threads)
    memory_words: int           # words loaded + stored, including partial results

    def to_json(self) -> dict:
        return asdict(self)


@dataclass
class LayerAllocation:
    name: str
    kind: str                   # model.OP_KINDS: conv, fc, pool, gap, concat, add, lrn, softmax
    in_shape: tuple[int, int, int]
    out_shape: tuple[int, int, int]
    strategies: list[Strategy]
    chosen: str                 # always "OLP": no reduction, best reuse
    olp_threads: int            # padded to whole stacks of V maps
    groups: int                 # OLP threads / V: one pixel of one output stack
    worker_ranges: list[tuple[int, int]]   # V-groups each hardware thread computes

    def to_json(self) -> dict:
        d = asdict(self)
        d["strategies"] = [s.to_json() for s in self.strategies]
        return d


def conv_strategies(op: ConvOp) -> list[Strategy]:
    """A grouped convolution reads N/groups maps per output (depthwise: one), so its taps shrink."""
    m, oh, ow = op.out_shape
    _, n, kh, kw = op.weight.shape          # n = input maps per group
    outs = m * oh * ow
    taps = n * kh * kw
    macs = outs * taps
    weights = m * taps
    klp = Strategy("KLP", macs, 1, outs * (taps - 1), _depth(taps), 1,
                   2 * macs + macs + macs + outs)          # operands, partial stores, partial loads, outputs
    flp = Strategy("FLP", outs * n, kh * kw, outs * (n - 1), _depth(n), 1,
                   2 * macs + 2 * outs * n + outs)
    olp = Strategy("OLP", outs, taps, 0, 0, oh * ow, weights + macs + outs)
    return [klp, flp, olp]


def pool_strategies(op: PoolOp) -> list[Strategy]:
    c, oh, ow = op.out_shape
    outs = c * oh * ow
    k2 = op.k * op.k
    return [Strategy("OLP", outs, k2, 0, 0, 0, outs * k2 + outs)]


def other_strategies(op: Op) -> list[Strategy]:
    """Weightless kinds: one OLP thread per output value, reading what that value needs.

    Global average pooling and softmax are reductions, so KLP-style splitting would need a
    cross-thread sum; OLP threads each sum a whole map (gap) or, for softmax, every thread reads
    the whole vector's maximum and sum, which one reduction computes first (counted as adds)."""
    c, oh, ow = op.out_shape
    outs = c * oh * ow
    if isinstance(op, GlobalAvgPoolOp):
        hw = op.in_shape[1] * op.in_shape[2]
        return [Strategy("OLP", outs, hw, 0, 0, 0, outs * hw + outs)]
    if isinstance(op, ConcatOp):        # a copy, unless producers write into the slices (stack-aligned)
        return [Strategy("OLP", outs, 1, 0, 0, 0, 2 * outs)]
    if isinstance(op, AddOp):
        k = len(op.inputs)
        return [Strategy("OLP", outs, k - 1, 0, 0, 0, outs * k + outs)]
    if isinstance(op, LrnOp):
        return [Strategy("OLP", outs, op.size + 2, 0, 0, 0, outs * op.size + outs)]
    if isinstance(op, SoftmaxOp):
        return [Strategy("OLP", outs, 2, 2 * (outs - 1), _depth(outs), 0, 3 * outs)]
    raise TypeError(f"no strategies for {op!r}")       # pragma: no cover


def _depth(n: int) -> int:
    return math.ceil(math.log2(n)) if n > 1 else 0


def allocate(ops: list[Op], V: int, workers: int) -> list[LayerAllocation]:
    """Per op: the three strategies' costs (where they differ) and the OLP split over `workers`."""
    table = []
    for op in ops:
        c, h, w = op.out_shape
        t = layout.olp_threads(c, h, w, V)
        groups = t // V
        if isinstance(op, ConvOp):
            strategies = conv_strategies(op)
        elif isinstance(op, PoolOp):
            strategies = pool_strategies(op)
        else:
            strategies = other_strategies(op)
        in_shape, out_shape = cast(Shape, tuple(op.in_shape)), cast(Shape, tuple(op.out_shape))
        table.append(LayerAllocation(op.name, op.kind, in_shape, out_shape, strategies, "OLP",
                                     t, groups, layout.worker_ranges(groups, workers)))
    return table
