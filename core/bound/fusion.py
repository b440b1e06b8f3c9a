"""Fused chains of two or three layers: a proven lower bound, an exact fused schedule, a fusion plan.

A chain is consecutive layers where each layer's output is read by the next one only (the
intermediate feature maps may then stay on chip). docs/bound.md ("Fused chains") gives the machine
model and the proof of `chain_bound`; in short, every needed input of the first layer must be
loaded, every needed weight of every layer loaded and every output of the last layer stored, at
least once, whatever the schedule does with the intermediates (recomputation included).

The fused schedule (`FusedSchedule`) tiles the last layer's output into strips of q columns, each
swept top to bottom in bands of p rows with all channels. For each band, each layer computes only
its output rows the band needs that the previous band did not already compute (the halo rows are
kept on chip, so no row is computed twice within a strip); across strips the columns the strips
share are recomputed (and their first-layer inputs loaded again). Intermediates never leave the
chip. Weights of each layer are either held for the whole chain (loaded once) or streamed (one
output channel's filters at a time, loaded again for every band and strip that computes rows of
that layer). The counts are exact and separable by axis; `sims/fused_trace.py` runs the schedule
on numbers and checks them word for word.

`plan_fusion` is a shortest path over the layer sequence: an edge is a single layer (its optimal
dataflow, `loopnest.search_optimal`) or a fusable chain of two or three (its best fused schedule),
so the plan is never worse than layer by layer. Residual additions (ResNet's `add`) are
pass-through layers in this model (no off-chip traffic modelled), as in the single-layer engine.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Sequence

import numpy as np

from core.bound.bounds import axes
from core.bound.geometry import Axis, distinct_tiles
from core.bound.loopnest import search_optimal
from core.bound.shapes import ConvShape

MAX_CHAIN = 3


def chains_up(a: ConvShape, b: ConvShape) -> bool:
    """Whether b can read a's output directly: same batch, a's output is b's input."""
    return a.B == b.B and a.Co == b.Ci and a.Ho == b.Hi and a.Wo == b.Wi


def _reads(ax: Axis, mask: np.ndarray) -> np.ndarray:
    """The real input rows (a mask) that the output rows in `mask` read."""
    rows = ax.taps()[mask].ravel()
    out = np.zeros(ax.I, dtype=bool)
    out[rows[(rows >= 0) & (rows < ax.I)]] = True
    return out


def _needed(chain_axes: Sequence[Axis]) -> list[np.ndarray]:
    """Per axis position j = 0..L: the rows of tensor j (0: the chain's input, j: layer j's output) that
    some output of the last layer depends on."""
    need = [np.ones(chain_axes[-1].O, dtype=bool)]
    for ax in reversed(chain_axes):
        need.append(_reads(ax, need[-1]))
    return need[::-1]


def _taps_used(ax: Axis, out_mask: np.ndarray) -> int:
    """Kernel taps that some needed output row applies to a real input row."""
    taps = ax.taps()[out_mask]
    return int(((taps >= 0) & (taps < ax.I)).any(axis=0).sum())


@dataclass(frozen=True)
class ChainBound:
    """The proven lower bound of a fused chain: needed first-layer inputs, needed weights of every
    layer and the last layer's outputs, each moved at least once (docs/bound.md, "Fused chains")."""

    inputs: int
    weights: int
    outputs: int
    total: int


def chain_bound(chain: Sequence[ConvShape]) -> ChainBound:
    """The chain's compulsory traffic, counted exactly (padding, stride gaps and unused taps excluded)."""
    first, last = chain[0], chain[-1]
    per_axis = [[axes(s)[k] for s in chain] for k in (0, 1)]
    need = [_needed(a) for a in per_axis]
    inputs = first.B * first.Ci * int(need[0][0].sum()) * int(need[1][0].sum())
    weights = 0
    for j, s in enumerate(chain):
        ty = _taps_used(per_axis[0][j], need[0][j + 1])
        tx = _taps_used(per_axis[1][j], need[1][j + 1])
        weights += s.Co * s.Cig * ty * tx
    outputs = last.outputs
    return ChainBound(inputs, weights, outputs, inputs + weights + outputs)


@dataclass(frozen=True)
class RowPlan:
    """One strip's sweep along rows in bands of p output rows of the last layer (per band t):
    `rows[t, j]` rows of tensor j on chip (0: chain input, L: the band itself), `new[t, j]` the rows
    of tensor j it loads (j = 0) or computes (j >= 1)."""

    rows: np.ndarray
    new: np.ndarray


def band_masks(chain_axes: Sequence[Axis], p: int) -> list[list[np.ndarray]]:
    """For each band of p rows of the last layer: per tensor j = 0..L the mask of rows on chip
    (what the band's new rows of layer j + 1 read, or the band itself for j = L)."""
    L = len(chain_axes)
    out: list[list[np.ndarray]] = []
    prev: list[np.ndarray] | None = None
    O = chain_axes[-1].O
    for t0 in range(0, O, p):
        band = np.zeros(O, dtype=bool)
        band[t0:t0 + p] = True
        need: list[np.ndarray] = [np.zeros(0, dtype=bool)] * (L + 1)
        need[L] = band
        new = band
        for j in range(L, 0, -1):
            need[j - 1] = _reads(chain_axes[j - 1], new)
            new = need[j - 1] & ~prev[j - 1] if prev is not None else need[j - 1]
        out.append(need)
        prev = need
    return out


@lru_cache(maxsize=4096)
def row_plan(chain_axes: tuple[Axis, ...], p: int) -> RowPlan:
    masks = band_masks(chain_axes, p)
    L = len(chain_axes)
    rows = np.array([[int(m[j].sum()) for j in range(L + 1)] for m in masks], dtype=np.int64)
    new = np.zeros_like(rows)
    for t, m in enumerate(masks):
        for j in range(L + 1):
            new[t, j] = int((m[j] & ~masks[t - 1][j]).sum()) if t else rows[t, j]
    return RowPlan(rows, new)


@lru_cache(maxsize=4096)
def col_plan(chain_axes: tuple[Axis, ...], q: int) -> np.ndarray:
    """Per strip of q columns of the last layer: the columns of each tensor j = 0..L it needs
    (everything its windows read, recomputed for each strip)."""
    O = chain_axes[-1].O
    L = len(chain_axes)
    cols = []
    for s0 in range(0, O, q):
        m = np.zeros(O, dtype=bool)
        m[s0:s0 + q] = True
        row = [int(m.sum())]
        for j in range(L, 0, -1):
            m = _reads(chain_axes[j - 1], m)
            row.append(int(m.sum()))
        cols.append(row[::-1])
    return np.array(cols, dtype=np.int64)


@dataclass(frozen=True)
class FusedSchedule:
    """Strips of q columns and bands of p rows of the last layer's output; `hold[j]` says whether
    layer j's weights are held for the whole chain (else streamed per band and strip)."""

    p: int
    q: int
    hold: tuple[bool, ...]

    def label(self) -> str:
        h = "".join("H" if x else "s" for x in self.hold)
        return f"p={self.p},q={self.q},w={h}"


@dataclass(frozen=True)
class FusedTraffic:
    """Words moved by a fused schedule for the whole chain (every image of the batch)."""

    input_reads: int
    weight_reads: int
    output_writes: int
    memory: int          # peak words on chip

    @property
    def total(self) -> int:
        return self.input_reads + self.weight_reads + self.output_writes


def _chain_axes(chain: Sequence[ConvShape]) -> tuple[tuple[Axis, ...], tuple[Axis, ...]]:
    return tuple(axes(s)[0] for s in chain), tuple(axes(s)[1] for s in chain)


def fused_traffic(chain: Sequence[ConvShape], sched: FusedSchedule) -> FusedTraffic:
    """Exact traffic and peak footprint of one fused schedule."""
    ya, xa = _chain_axes(chain)
    rp, cp = row_plan(ya, sched.p), col_plan(xa, sched.q)
    return _traffic(chain, _moves(chain, rp, cp), sched.hold, _activations(chain, rp, cp))


def _activations(chain: Sequence[ConvShape], rp: RowPlan, cp: np.ndarray) -> int:
    """The most activation words on chip at once: over bands and strips, every tensor's rows on chip
    times its strip columns times its channels (the band's outputs included)."""
    chans = np.array([chain[0].Ci] + [s.Co for s in chain], dtype=np.int64)
    return int(((rp.rows * chans[None, :]) @ cp.T).max())


def _moves(chain: Sequence[ConvShape], rp: RowPlan, cp: np.ndarray) -> tuple[int, list[int]]:
    """What a plan moves whatever weights are held: the chain's input words, and each layer's weight
    words when streamed (once per band and strip that computes some of its rows)."""
    B = chain[0].B
    inputs = B * chain[0].Ci * int(rp.new[:, 0].sum()) * int(cp[:, 0].sum())
    bands, strips = (rp.new[:, 1:] > 0).sum(axis=0), (cp[:, 1:] > 0).sum(axis=0)
    return inputs, [B * s.weights * int(bands[j]) * int(strips[j]) for j, s in enumerate(chain)]


def _traffic(chain: Sequence[ConvShape], moves: tuple[int, list[int]], hold: tuple[bool, ...],
             activations: int) -> FusedTraffic:
    inputs, streamed_weights = moves
    weights = 0
    for j, s in enumerate(chain):
        weights += s.weights if hold[j] else streamed_weights[j]
    held = sum(s.weights for s, h in zip(chain, hold) if h)
    streamed = [s.Cig * s.Hk * s.Wk for s, h in zip(chain, hold) if not h]
    memory = activations + held + max(streamed, default=0)
    return FusedTraffic(inputs, weights, chain[-1].outputs, memory)


@dataclass(frozen=True)
class FusedResult:
    schedule: FusedSchedule
    traffic: FusedTraffic


def search_fused(chain: Sequence[ConvShape], S: int, exhaustive: bool = False) -> FusedResult | None:
    """The least traffic over the fused schedules that fit S words: every p and q that is the smallest
    tile of its trip count (every p, q with `exhaustive`), every choice of held weights. Ties go to the
    smaller footprint. None when nothing fits."""
    return _search_fused(tuple(replace(c, name="") for c in chain), S, exhaustive)


@lru_cache(maxsize=1024)
def _search_fused(chain: tuple[ConvShape, ...], S: int, exhaustive: bool) -> FusedResult | None:
    ya, xa = _chain_axes(chain)
    Ho, Wo = chain[-1].Ho, chain[-1].Wo
    ps = range(1, Ho + 1) if exhaustive else [int(v) for v in distinct_tiles(Ho)]
    qs = range(1, Wo + 1) if exhaustive else [int(v) for v in distinct_tiles(Wo)]
    best: tuple[int, int, FusedSchedule, FusedTraffic] | None = None
    holds = list(itertools.product((False, True), repeat=len(chain)))
    for q in qs:
        cp = col_plan(xa, q)
        for p in ps:
            rp = row_plan(ya, p)
            act = _activations(chain, rp, cp)
            if act > S:
                continue
            moves = _moves(chain, rp, cp)
            for hold in holds:
                tr = _traffic(chain, moves, hold, act)
                if tr.memory > S:
                    continue
                key = (tr.total, tr.memory)
                if best is None or key < best[:2]:
                    best = (tr.total, tr.memory, FusedSchedule(p, q, hold), tr)
    return None if best is None else FusedResult(best[2], best[3])


# ---- the fusion plan -------------------------------------------------------------------------

@dataclass(kw_only=True)
class FusedSegment:
    """One step of a fusion plan: a single layer (its optimal dataflow) or a fused chain."""

    layers: list[str]
    traffic: int                       # words this step moves
    layer_by_layer: int                # the same layers' optimal dataflows, one after another
    bound: int                         # proven lower bound of the step (a chain's; 0 for a single layer)
    schedule: str = ""                 # a chain's fused schedule (FusedSchedule.label); "" for one layer
    memory: int = 0                    # peak words of a chain's schedule


@dataclass(kw_only=True)
class FusionPlan:
    """The fusion plan with the least total traffic at one memory size (chains of 1 to 3 layers)."""

    memory_words: int
    total: int                         # the plan's traffic
    layer_by_layer: int                # every layer's optimal dataflow, summed
    saved: int                         # layer_by_layer - total (never negative)
    segments: list[FusedSegment] = field(default_factory=list)

    @property
    def fused_chains(self) -> int:
        return sum(1 for s in self.segments if len(s.layers) > 1)


def fusable_links(shapes: Sequence[ConvShape], inputs: dict[str, list[str]] | None) -> list[bool]:
    """links[i]: shapes[i]'s output goes only to shapes[i + 1], which reads nothing else. With the
    network's graph (`inputs`: layer -> the layers it reads) that is checked; without one (a list of
    layer specs) consecutive layers whose shapes chain are taken as a chain."""
    links = []
    consumers: dict[str, int] = {}
    if inputs:
        for srcs in inputs.values():
            for s in srcs:
                consumers[s] = consumers.get(s, 0) + 1
    for a, b in zip(shapes, shapes[1:]):
        ok = chains_up(a, b)
        if inputs is not None and inputs:
            ok = ok and inputs.get(b.name) == [a.name] and consumers.get(a.name, 0) == 1
        elif inputs is not None:
            ok = False                         # a network without its graph: nothing is fused
        links.append(ok)
    return links


def plan_fusion(shapes: Sequence[ConvShape], links: Sequence[bool], S: int,
                single: Sequence[int] | None = None) -> FusionPlan:
    """Least total traffic over every split of the layer sequence into single layers and fusable
    chains of 2..3 (a shortest path; edges: a single layer's optimal dataflow, a chain's best fused
    schedule). `single[i]` may give layer i's optimal traffic (else it is searched)."""
    n = len(shapes)
    if single is None:
        found = [search_optimal(s, S) for s in shapes]
        single = [r.traffic.total if r is not None else -1 for r in found]
    if any(v < 0 for v in single):
        raise ValueError("some layer does not fit the memory")
    INF = float("inf")
    cost: list[float] = [0.0] + [INF] * n
    back: list[tuple[int, FusedSegment] | None] = [None] * (n + 1)
    for i in range(n):
        if cost[i] == INF:
            continue
        for L in range(1, MAX_CHAIN + 1):
            if i + L > n or (L > 1 and not all(links[i:i + L - 1])):
                break
            names = [s.name for s in shapes[i:i + L]]
            lbl = sum(single[i:i + L])
            if L == 1:
                seg = FusedSegment(layers=names, traffic=single[i], layer_by_layer=lbl, bound=0)
            else:
                r = search_fused(shapes[i:i + L], S)
                if r is None:
                    continue
                seg = FusedSegment(layers=names, traffic=r.traffic.total, layer_by_layer=lbl,
                                   bound=chain_bound(shapes[i:i + L]).total, schedule=r.schedule.label(),
                                   memory=r.traffic.memory)
            c = cost[i] + seg.traffic
            if c < cost[i + L]:
                cost[i + L], back[i + L] = c, (i, seg)
    segs: list[FusedSegment] = []
    k = n
    while k > 0:
        entry = back[k]
        assert entry is not None
        k, seg = entry
        segs.append(seg)
    segs.reverse()
    lbl_total = int(sum(single))
    total = int(cost[n])
    return FusionPlan(memory_words=S, total=total, layer_by_layer=lbl_total, saved=lbl_total - total,
                      segments=segs)


def plan_text(plan: FusionPlan) -> list[str]:
    """The plan as text lines for the command line (fused chains only, then the totals)."""
    lines = []
    for s in plan.segments:
        if len(s.layers) > 1:
            lines.append(f"  {' + '.join(s.layers):<58} {s.traffic:>12,} (layer by layer {s.layer_by_layer:,}, "
                         f"bound {s.bound:,}; {s.schedule})")
    pct = 100.0 * plan.saved / plan.layer_by_layer if plan.layer_by_layer else 0.0
    lines.append(f"Fusion plan: {plan.total:,} words against {plan.layer_by_layer:,} layer by layer "
                 f"({plan.saved:,} saved, {pct:.1f} %), {plan.fused_chains} fused "
                 f"{'chain' if plan.fused_chains == 1 else 'chains'}")
    return lines
