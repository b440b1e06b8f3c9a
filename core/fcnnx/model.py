"""Streaming CNN engines of f-CNNx: stages, subgraphs, the SDF performance model (eqs. 1-2) and a
resource model for Q8.8 (16-bit) arithmetic.

A CNN's feature extractor (layers up to the first fully connected one; f-CNNx maps the feature
extractor only) is cut into *blocks*: one convolution plus the pooling/merge layers that follow it.
A *partition* groups consecutive blocks into subgraphs; a convolution whose weights exceed the tile
cap is folded over its input maps (`in_tile` maps per tile) and each tile becomes a subgraph of its
own (partitioning along the input feature maps). The engine is a pipeline whose k-th conv stage
(and the pool stage after it) executes the k-th block of every subgraph, so one datapath runs all
subgraphs; each stage has `n_pe` PEs of `n_op` operators (folding).

Modelling assumptions (the paper gives the equations, not the constants):
* a conv stage consumes `n_pe * n_op` MACs per cycle; its initiation interval for a layer is
  ceil(N_out/n_pe) * ceil(K^2/n_op) * h_out * w_out * (input maps of the tile per group);
* the pipeline depth D of a subgraph is II_max plus each stage's line-buffer fill
  (II_k * (K_k - 1) / h_in_k): the time a single frame (B = 1) needs to drain;
* t_weights (eq. 2) is the subgraph's weight bytes over the effective bandwidth;
* every subgraph reads its input maps, weights (and partial sums of earlier input tiles) from
  off-chip memory and writes its output; words are Q8.8 (2 bytes);
* resources: one DSP48 per 16-bit multiplier; LUT/FF costs per operator, per PE and per stage
  below; weights in banks of one per multiplier (LUTRAM when a bank holds <= 64 words, else
  18 Kb BRAMs of 1024 words); line buffers of (K-1) rows in BRAM.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from core.nets.layers import Conv, Network, Pool

WORD_BYTES = 2                      # Q8.8
BRAM_WORDS = 1024                   # one 18 Kb BRAM as 1K x 18
LUTRAM_WORDS = 64                   # one LUT as 64 x 1 distributed RAM

# Resource costs (LUTs, FFs) of the building blocks of a stage, for 16-bit datapaths.
LUT_PER_OP, FF_PER_OP = 42, 64      # multiplier glue, adder-tree node, pipeline registers
LUT_PER_PE, FF_PER_PE = 160, 220    # accumulator, window registers, control of one PE
LUT_PER_STAGE, FF_PER_STAGE = 600, 900
LUT_POOL_OP, FF_POOL_OP = 24, 32
LUT_ENGINE, FF_ENGINE, BRAM_ENGINE = 2500, 3500, 4     # DMA interface, FIFOs, control of an engine

RESOURCE_KEYS = ("luts", "ffs", "dsps", "bram18k")


@dataclass(frozen=True)
class LayerTask:
    """One layer (or input tile of a folded conv layer) as executed inside a subgraph."""

    kind: str               # "conv" or "pool"
    name: str
    n_out: int              # output maps
    k2: int                 # K^2 (filter or pooling window elements)
    k_h: int
    in_h: int
    in_w: int
    out_h: int
    out_w: int
    in_maps: int            # input maps read by this task (a tile for folded convs)
    maps_per_group: int     # input maps each output reads (tile / groups)
    weights: int            # weight words of this task

    @property
    def macs(self) -> int:
        return self.n_out * self.out_h * self.out_w * self.maps_per_group * self.k2

    def ii(self, n_pe: int, n_op: int) -> int:
        """Cycles for one frame on a stage with n_pe PEs of n_op operators (folded loops)."""
        inner = self.maps_per_group if self.kind == "conv" else 1
        return math.ceil(self.n_out / n_pe) * math.ceil(self.k2 / n_op) * self.out_h * self.out_w * inner

    def fill(self, ii: int) -> float:
        return ii * (self.k_h - 1) / max(self.in_h, 1)


@dataclass
class Subgraph:
    """Layers executed together on the engine; position k holds (conv task, pool tasks)."""

    name: str
    blocks: list[tuple[LayerTask, list[LayerTask]]]
    in_words: int
    out_words: int
    psum_words: int = 0      # partial sums of earlier input tiles read back
    ops: int = 0             # operations (Table I convention) this subgraph performs

    @property
    def weight_words(self) -> int:
        return sum(c.weights for c, _ in self.blocks)

    def traffic_bytes(self, batch: int) -> int:
        return WORD_BYTES * (batch * (self.in_words + self.out_words + self.psum_words) + self.weight_words)


@dataclass(frozen=True)
class Block:
    conv: Conv
    pools: tuple[Pool, ...]
    in_shape: tuple[int, int, int]


def feature_blocks(net: Network) -> list[Block]:
    """The conv blocks of the feature extractor (stops at the first fully connected layer)."""
    blocks: list[Block] = []
    pending_pools: list[Pool] = []
    for layer in net.layers:
        if isinstance(layer, Conv):
            if layer.fc:
                break
            if pending_pools and not blocks:   # pools before the first conv: not streamed
                pending_pools = []
            blocks.append(Block(layer, (), (layer.in_ch, layer.in_h, layer.in_w)))
        elif isinstance(layer, Pool) and blocks:
            b = blocks[-1]
            blocks[-1] = Block(b.conv, b.pools + (layer,), b.in_shape)
        # Eltwise layers add no MACs; their data stays on chip in the stage that produced it.
    return blocks


def block_out_words(b: Block) -> int:
    if b.pools:
        p = b.pools[-1]
        return p.ch * p.out_h * p.out_w
    return b.conv.out_ch * b.conv.out_h * b.conv.out_w


def _conv_task(c: Conv, maps: int, name: str) -> LayerTask:
    g = c.groups
    per_group = max(1, maps // g) if g > 1 else maps
    n_out = c.out_ch if g == 1 else max(1, c.out_ch * maps // c.in_ch)
    return LayerTask("conv", name, n_out, c.k_h * c.k_w, c.k_h, c.in_h, c.in_w, c.out_h, c.out_w, maps,
                     per_group, n_out * per_group * c.k_h * c.k_w)


def _pool_task(p: Pool) -> LayerTask:
    return LayerTask("pool", p.name, p.ch, p.k * p.k, p.k, p.in_h, p.in_w, p.out_h, p.out_w, p.ch, 1, 0)


def in_tile_for(c: Conv, cap_words: int | None) -> int:
    """Largest number of input maps per tile whose weights fit the cap (1 map at least)."""
    if cap_words is None or c.weights <= cap_words or c.groups > 1:
        return c.in_ch
    per_map = c.out_ch * c.k_h * c.k_w
    return max(1, min(c.in_ch, cap_words // per_map))


def build_subgraphs(blocks: list[Block], groups: list[list[int]], cap_words: int | None) -> list[Subgraph]:
    """Subgraphs of one partition: `groups` lists block indices; folded convs become their own tiles."""
    subs: list[Subgraph] = []
    for gi, group in enumerate(groups):
        folded = [bi for bi in group if in_tile_for(blocks[bi].conv, cap_words) < blocks[bi].conv.in_ch]
        if folded and len(group) > 1:
            raise ValueError("a folded convolution must form a subgraph on its own")
        if folded:
            b = blocks[group[0]]
            c = b.conv
            tile = in_tile_for(c, cap_words)
            n_tiles = math.ceil(c.in_ch / tile)
            conv_ops = 2 * c.macs
            pool_ops = sum(p.ch * p.out_h * p.out_w * p.k * p.k for p in b.pools)
            for t in range(n_tiles):
                maps = min(tile, c.in_ch - t * tile)
                last = t == n_tiles - 1
                task = _conv_task(c, maps, f"{c.name}[{t * tile}:{t * tile + maps}]")
                out = block_out_words(b) if last else c.out_ch * c.out_h * c.out_w
                ops = conv_ops * maps // c.in_ch + (pool_ops if last else 0)
                subs.append(Subgraph(f"{c.name}.t{t + 1}", [(task, [_pool_task(p) for p in b.pools] if last else [])],
                                     maps * c.in_h * c.in_w, out,
                                     c.out_ch * c.out_h * c.out_w if t > 0 else 0, ops))
            continue
        bl = [blocks[bi] for bi in group]
        first = bl[0]
        ops = sum(2 * b.conv.macs + sum(p.ch * p.out_h * p.out_w * p.k * p.k for p in b.pools) for b in bl)
        name = bl[0].conv.name if len(bl) == 1 else f"{bl[0].conv.name}..{bl[-1].conv.name}"
        subs.append(Subgraph(name, [(_conv_task(b.conv, b.conv.in_ch, b.conv.name), [_pool_task(p) for p in b.pools])
                                    for b in bl],
                             first.in_shape[0] * first.in_shape[1] * first.in_shape[2], block_out_words(bl[-1]),
                             0, ops))
    return subs


@dataclass
class StageConfig:
    """<N_PE, N_op> of one engine stage (position k, conv or pool)."""

    kind: str
    position: int
    n_pe: int = 1
    n_op: int = 1


@dataclass
class EngineDesign:
    """One point of a CNN's design space: partition, tile cap and per-stage folding."""

    cnn: str
    groups: list[list[int]]
    cap_words: int | None
    subgraphs: list[Subgraph]
    stages: list[StageConfig] = field(default_factory=list)

    # ------------------------------------------------------------------ structure
    def stage_tasks(self) -> list[list[LayerTask]]:
        """Tasks each stage executes over all subgraphs (conv stages at even, pool stages at odd slots)."""
        depth = max(len(s.blocks) for s in self.subgraphs)
        out: list[list[LayerTask]] = [[] for _ in range(2 * depth)]
        for s in self.subgraphs:
            for k, (conv, pools) in enumerate(s.blocks):
                out[2 * k].append(conv)
                out[2 * k + 1].extend(pools)
        return out

    def init_stages(self) -> None:
        self.stages = [StageConfig("conv" if i % 2 == 0 else "pool", i // 2) for i in range(len(self.stage_tasks()))]


# ---------------------------------------------------------------- performance model (eqs. 1-2)
def subgraph_cycles(design: EngineDesign, j: int) -> tuple[int, float]:
    """(II_max, pipeline depth D) of subgraph j, in cycles."""
    sub = design.subgraphs[j]
    iis: list[tuple[int, LayerTask]] = []
    for k, (conv, pools) in enumerate(sub.blocks):
        sc = design.stages[2 * k]
        iis.append((conv.ii(sc.n_pe, sc.n_op), conv))
        sp = design.stages[2 * k + 1]
        for p in pools:
            iis.append((p.ii(sp.n_pe, sp.n_op), p))
    ii_max = max(ii for ii, _ in iis)
    depth = ii_max + sum(t.fill(ii) for ii, t in iis)
    return ii_max, depth


def subgraph_time(design: EngineDesign, j: int, clock_hz: float, batch: int = 1) -> float:
    """Eq. (1): t_ij(B) = (D_i + II_max (B - 1)) / clock rate, in seconds."""
    ii_max, depth = subgraph_cycles(design, j)
    return (depth + ii_max * (batch - 1)) / clock_hz


def weights_time(sub: Subgraph, bandwidth_bps: float) -> float:
    return WORD_BYTES * sub.weight_words / bandwidth_bps


def total_time(design: EngineDesign, clock_hz: float, bandwidth_bps: float, batch: int = 1) -> float:
    """Eq. (2): sum of the subgraphs' execution times plus their weight-loading times."""
    return sum(subgraph_time(design, j, clock_hz, batch) + weights_time(s, bandwidth_bps)
               for j, s in enumerate(design.subgraphs))


@dataclass(frozen=True)
class SubgraphLoad:
    """What the scheduler needs of a subgraph: latency at full speed and off-chip traffic."""

    name: str
    latency_s: float         # L(s) = eq. (1) + weight loading
    traffic_bytes: int

    def bandwidth(self) -> float:
        """b(s) in bytes/s: the traffic spread over the latency."""
        return self.traffic_bytes / self.latency_s


def subgraph_loads(design: EngineDesign, clock_hz: float, bandwidth_bps: float, batch: int = 1) -> list[SubgraphLoad]:
    return [SubgraphLoad(s.name, subgraph_time(design, j, clock_hz, batch) + weights_time(s, bandwidth_bps),
                         s.traffic_bytes(batch)) for j, s in enumerate(design.subgraphs)]


def alone_time(loads: list[SubgraphLoad], bandwidth_bps: float) -> float:
    """Time of one batch when the engine has the whole bandwidth: each subgraph runs at
    min(1, B/b(s)) of its full speed."""
    return sum(max(l.latency_s, l.traffic_bytes / bandwidth_bps) for l in loads)


# ---------------------------------------------------------------- resource model
def stage_resources(kind: str, tasks: list[LayerTask], n_pe: int, n_op: int) -> dict[str, int]:
    r = {"luts": 0, "ffs": 0, "dsps": 0, "bram18k": 0}
    if not tasks:
        return r
    if kind == "conv":
        r["dsps"] = n_pe * n_op
        r["luts"] = LUT_PER_STAGE + n_pe * (LUT_PER_PE + n_op * LUT_PER_OP)
        r["ffs"] = FF_PER_STAGE + n_pe * (FF_PER_PE + n_op * FF_PER_OP)
        banks = n_pe * n_op
        per_bank = math.ceil(max(t.weights for t in tasks) / banks)
        if per_bank <= LUTRAM_WORDS:
            r["luts"] += banks * 16      # 16 bits of 64 x 1 LUTRAM per bank
        else:
            r["bram18k"] += banks * math.ceil(per_bank / BRAM_WORDS)
    else:
        r["luts"] = LUT_PER_STAGE // 2 + n_pe * (LUT_PER_PE // 2 + n_op * LUT_POOL_OP)
        r["ffs"] = FF_PER_STAGE // 2 + n_pe * (FF_PER_PE // 2 + n_op * FF_POOL_OP)
    line = max((t.k_h - 1) * t.in_w * t.in_maps for t in tasks)
    if line > 0:
        r["bram18k"] += max(tasks[0].k_h - 1, math.ceil(line / BRAM_WORDS))
    return r


def engine_resources(design: EngineDesign) -> dict[str, int]:
    total = {"luts": LUT_ENGINE, "ffs": FF_ENGINE, "dsps": 0, "bram18k": BRAM_ENGINE}
    for sc, tasks in zip(design.stages, design.stage_tasks()):
        for k, v in stage_resources(sc.kind, tasks, sc.n_pe, sc.n_op).items():
            total[k] += v
    return total


def utilisation(res: dict[str, int], avail: dict[str, int]) -> dict[str, float]:
    return {k: res[k] / avail[k] for k in RESOURCE_KEYS}


def average_utilisation(res: dict[str, int], avail: dict[str, int]) -> float:
    """The horizontal axis of Fig. 4: mean fraction over LUTs, FFs, DSPs and BRAMs."""
    return sum(utilisation(res, avail).values()) / len(RESOURCE_KEYS)


def fits(res: dict[str, int], avail: dict[str, int]) -> bool:
    return all(res[k] <= avail[k] for k in RESOURCE_KEYS)


def design_to_json(d: EngineDesign) -> dict[str, Any]:
    return {"cnn": d.cnn, "partition": d.groups, "tile_cap_words": d.cap_words,
            "subgraphs": [s.name for s in d.subgraphs],
            "stages": [{"kind": s.kind, "position": s.position, "n_pe": s.n_pe, "n_op": s.n_op}
                       for s in d.stages]}
