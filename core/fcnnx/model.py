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
* a conv stage consumes `n_pe * n_op` MACs per cycle and reads its input maps one word per cycle
  (no input-channel parallelism); its initiation interval for a layer is the larger of
  ceil(N_out/n_pe) * ceil(K^2/n_op) * h_out * w_out * (input maps of the tile per group) and
  h_in * w_in * (input maps); a pool stage reads n_pe words per cycle;
* the pipeline depth D of a subgraph is the time a single frame (B = 1) needs to drain: each stage's
  first output row comes its line-buffer fill after the previous stage's (K_k - 1 - pad_k input rows,
  arriving at the slower of its own input stream and the stream before it: filling needs no MACs), its
  last one II_k later or when the previous stage ends, whichever is later (subgraph_cycles);
* weights are placed per conv stage: *on chip* (all the weights of every layer the stage executes
  stay in BRAM, loaded once when the design is configured: no traffic per frame) or *streamed*
  (the stage's buffer holds one layer's weights, reloaded from off-chip memory for every
  subgraph and frame: t_weights of eq. 2 and traffic). `place_weights` keeps them on chip when
  they fit the device;
* every subgraph reads its input maps (and partial sums of earlier input tiles) from off-chip
  memory and writes its output; words are Q8.8 (2 bytes);
* resources follow the structure and coefficients of fpgaConvNet's module models (see
  "resource model" below and docs/fcnnx.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from core.nets.layers import Conv, Network, Pool

WORD_BYTES = 2                      # Q8.8
BRAM_WORDS = 1024                   # one 18 Kb BRAM as 1K x 18 (depth-cascaded beyond)
# Aspect ratios of one 18 Kb BRAM (depth, width): a FIFO of `depth` 16-bit words takes
# ceil(16 / width) BRAMs of the shallowest configuration that holds it.
BRAM_SHAPES = ((512, 36), (1024, 18), (2048, 9), (4096, 4), (8192, 2), (16384, 1))

ON_CHIP, STREAMED = "on_chip", "streamed"

# Resource model coefficients, carried over from fpgaConvNet's per-module linear models
# (fpgaconvnet-model 0.1.4.2, coefficients/*.npy, 16-bit data; the module and its regressors in
# brackets). They are facts about that model; the structure (which module a stage has, how many
# times) is fpgaConvNet's HLS layer with coarse_in = 1, coarse_out = N_PE and fine = N_op.
SW_LUT_K2, SW_LUT_K = 2.8237 * 16, 189.28       # sliding window [16 K^2, K - 1]
SW_FF_K2, SW_FF_K = 2.2413 * 16, 268.99
CONV_LUT_F, CONV_LUT_HW = 463.16, 142.83        # conv (dot product) [log2 filters/PE, log2 h_out w_out]
CONV_FF_F, CONV_FF_HW = 658.85, 164.64
ACC_LUT = (0.020092, 8.0781 * 16, 0.023015, 0.0038400, 0.047439)   # accum [f, 16, w, h, C]
ACC_FF = (0.016822, 9.6426 * 16, 0.0025610, 0.0, 0.062333)         # bias uses the same, C = 1
FORK_LUT, FORK_FF = 0.81100, 1.3412             # fork [ceil log2 (C h_out w_out)], when N_PE > 1
POOL_LUT_K, POOL_FF_K = 267.44, 447.80          # pool [K]
DSP_PER_PE = 1                                  # bias adder (one DSP48 per output stream)
# Engine I/O, not in fpgaConvNet's layer models: DMA interface, FIFOs and control of an engine.
LUT_ENGINE, FF_ENGINE, BRAM_ENGINE = 2500, 3500, 4

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
    pad: int = 0            # zero padding on each side (line buffers hold padded rows)

    @property
    def macs(self) -> int:
        return self.n_out * self.out_h * self.out_w * self.maps_per_group * self.k2

    def ii(self, n_pe: int, n_op: int) -> int:
        """Cycles for one frame on a stage with n_pe PEs of n_op operators (folded loops)."""
        inner = self.maps_per_group if self.kind == "conv" else 1
        compute = math.ceil(self.n_out / n_pe) * math.ceil(self.k2 / n_op) * self.out_h * self.out_w * inner
        return max(compute, self.reads(n_pe))

    def reads(self, n_pe: int) -> int:
        """Cycles the input stream of one frame takes: one word per cycle into a conv stage, one per PE
        into a pool stage."""
        return self.in_h * self.in_w * (self.in_maps if self.kind == "conv" else math.ceil(self.in_maps / n_pe))

    def fill(self, arrival: float) -> float:
        """Cycles before the stage's first output row: its line buffers take the K - 1 - pad input rows
        the first window reads (the top padding is made on chip), which arrive at `arrival` cycles a
        frame (no MACs run meanwhile, so not at the stage's own II)."""
        return arrival * max(self.k_h - 1 - self.pad, 0) / max(self.in_h, 1)


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
                     per_group, n_out * per_group * c.k_h * c.k_w, c.pad)


def _pool_task(p: Pool) -> LayerTask:
    return LayerTask("pool", p.name, p.ch, p.k * p.k, p.k, p.in_h, p.in_w, p.out_h, p.out_w, p.ch, 1, 0, p.pad)


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
    weights: str = ON_CHIP      # conv stages: ON_CHIP or STREAMED (see place_weights)


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

    def streamed_weight_words(self, j: int) -> int:
        """Weight words subgraph j loads from off-chip memory per execution (its streamed stages)."""
        return sum(conv.weights for k, (conv, _) in enumerate(self.subgraphs[j].blocks)
                   if self.stages[2 * k].weights == STREAMED)

    def on_chip_weight_words(self) -> int:
        return sum(t.weights for sc, ts in zip(self.stages, self.stage_tasks()) if sc.weights == ON_CHIP for t in ts)


# ---------------------------------------------------------------- performance model (eqs. 1-2)
def subgraph_cycles(design: EngineDesign, j: int) -> tuple[int, float]:
    """(II_max, pipeline depth D) of subgraph j, in cycles. D is when one frame's last output leaves:
    stage k's first output row comes its line-buffer fill after stage k-1's (LayerTask.fill, its rows
    arriving at the slower of its own input stream and the stream before it, which runs at the slowest
    II up to stage k-1; the first stage reads from memory), and its last one its II after its first,
    or as soon as the stage before it ends, whichever is later: a stage after the bottleneck fills while
    the bottleneck runs, so only the stages up to the bottleneck add their fill."""
    sub = design.subgraphs[j]
    ii_max, first, last = 0, 0.0, 0.0
    for k, (conv, pools) in enumerate(sub.blocks):
        for t, sc in ((conv, design.stages[2 * k]), *((p, design.stages[2 * k + 1]) for p in pools)):
            ii = t.ii(sc.n_pe, sc.n_op)
            first += t.fill(max(t.reads(sc.n_pe), ii_max))
            last = max(last, first + ii)
            ii_max = max(ii_max, ii)
    return ii_max, last


def subgraph_time(design: EngineDesign, j: int, clock_hz: float, batch: int = 1) -> float:
    """Eq. (1): t_ij(B) = (D_i + II_max (B - 1)) / clock rate, in seconds."""
    ii_max, depth = subgraph_cycles(design, j)
    return (depth + ii_max * (batch - 1)) / clock_hz


def weights_time(design: EngineDesign, j: int, bandwidth_bps: float) -> float:
    """t_ij,weights of eq. 2: loading subgraph j's streamed weights (on-chip ones cost nothing per frame)."""
    return WORD_BYTES * design.streamed_weight_words(j) / bandwidth_bps


def total_time(design: EngineDesign, clock_hz: float, bandwidth_bps: float, batch: int = 1) -> float:
    """Eq. (2): sum of the subgraphs' execution times plus their weight-loading times."""
    return sum(subgraph_time(design, j, clock_hz, batch) + weights_time(design, j, bandwidth_bps)
               for j in range(len(design.subgraphs)))


def subgraph_traffic(design: EngineDesign, j: int, batch: int) -> int:
    """Off-chip bytes of one execution of subgraph j: maps and partial sums per frame, streamed weights."""
    s = design.subgraphs[j]
    return WORD_BYTES * (batch * (s.in_words + s.out_words + s.psum_words) + design.streamed_weight_words(j))


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
    return [SubgraphLoad(s.name, subgraph_time(design, j, clock_hz, batch) + weights_time(design, j, bandwidth_bps),
                         subgraph_traffic(design, j, batch)) for j, s in enumerate(design.subgraphs)]


def alone_time(loads: list[SubgraphLoad], bandwidth_bps: float) -> float:
    """Time of one batch when the engine has the whole bandwidth: each subgraph runs at
    min(1, B/b(s)) of its full speed."""
    return sum(max(l.latency_s, l.traffic_bytes / bandwidth_bps) for l in loads)


# ---------------------------------------------------------------- resource model
def bram18_fifo(depth: int, width: int = 16) -> int:
    """18 Kb BRAMs of a FIFO/line buffer: width-cascaded in the shallowest shape that holds `depth`."""
    if depth <= 0:
        return 0
    for d, w in BRAM_SHAPES:
        if depth <= d:
            return math.ceil(width / w)
    return math.ceil(depth / BRAM_WORDS) * math.ceil(width / 18)


def bram18_memory(depth: int) -> int:
    """18 Kb BRAMs of a 16-bit memory of `depth` words (1K x 18, depth-cascaded; one at least)."""
    return max(1, math.ceil(depth / BRAM_WORDS)) if depth > 0 else 0


def _acc_cost(coef: tuple[float, ...], filters: int, w: int, h: int, maps: int) -> float:
    return coef[0] * filters + coef[1] + coef[2] * w + coef[3] * h + coef[4] * maps


def _window_rsc(k: int, row_words: int, maps: int) -> tuple[float, float, int]:
    """(LUT, FF, BRAM) of one sliding window: (K-1) line buffers of a padded row of all maps and
    K(K-1) window FIFOs of one pixel of all maps."""
    if k <= 1:
        return 0.0, 0.0, 0
    lut = SW_LUT_K2 * k * k + SW_LUT_K * (k - 1)
    ff = SW_FF_K2 * k * k + SW_FF_K * (k - 1)
    bram = (k - 1) * bram18_fifo(row_words + 1) + k * (k - 1) * bram18_fifo(maps + 1)
    return lut, ff, bram


def stage_weight_words(tasks: list[LayerTask], weights: str) -> int:
    """Weight words a conv stage stores: every task's on chip, the largest task's when streamed."""
    if not tasks:
        return 0
    return sum(t.weights for t in tasks) if weights == ON_CHIP else max(t.weights for t in tasks)


def stage_resources(kind: str, tasks: list[LayerTask], n_pe: int, n_op: int, weights: str = ON_CHIP) -> dict[str, int]:
    """LUT/FF/DSP/BRAM of one stage sized for the largest of its tasks (fpgaConvNet's module models,
    coefficients above): a conv stage is a sliding window, a fork to its N_PE PEs, and per PE a dot
    product of N_op multipliers (one DSP48 each), an accumulator and a bias adder; its weights are
    banked one bank per multiplier (at least one BRAM each), its accumulators and biases take one
    BRAM per PE. A pool stage is, per PE, a sliding window and a comparator tree."""
    r = {"luts": 0, "ffs": 0, "dsps": 0, "bram18k": 0}
    if not tasks:
        return r
    k = max(t.k_h for t in tasks)
    maps = max(t.in_maps for t in tasks)
    row = max((t.in_w + 2 * t.pad) * t.in_maps for t in tasks)
    w_out, h_out = max(t.out_w for t in tasks), max(t.out_h for t in tasks)
    hw = max(t.out_h * t.out_w for t in tasks)
    if kind == "conv":
        n_out = max(t.n_out for t in tasks)
        f = math.ceil(n_out / n_pe)                # filters per PE
        sw_lut, sw_ff, sw_bram = _window_rsc(k, row, maps)
        pe_lut = CONV_LUT_F * math.log2(f) + CONV_LUT_HW * math.log2(hw)
        pe_ff = CONV_FF_F * math.log2(f) + CONV_FF_HW * math.log2(hw)
        pe_bram = bram18_memory(f)                 # bias memory
        if max(t.maps_per_group for t in tasks) > 1:
            pe_lut += _acc_cost(ACC_LUT, f, w_out, h_out, maps)
            pe_ff += _acc_cost(ACC_FF, f, w_out, h_out, maps)
            pe_bram += bram18_memory(f)            # accumulation buffer
        pe_lut += _acc_cost(ACC_LUT, n_out, w_out, h_out, 1)     # bias adder
        pe_ff += _acc_cost(ACC_FF, n_out, w_out, h_out, 1)
        fork = n_pe > 1
        fork_bits = math.ceil(math.log2(max(2, maps * hw)))
        r["luts"] = round(sw_lut + fork * FORK_LUT * fork_bits + n_pe * pe_lut)
        r["ffs"] = round(sw_ff + fork * FORK_FF * fork_bits + n_pe * pe_ff)
        r["dsps"] = n_pe * n_op + n_pe * DSP_PER_PE
        banks = n_pe * n_op
        r["bram18k"] = sw_bram + n_pe * pe_bram + banks * bram18_memory(
            math.ceil(stage_weight_words(tasks, weights) / banks))
    else:
        sw_lut, sw_ff, sw_bram = _window_rsc(k, math.ceil(row / n_pe), math.ceil(maps / n_pe))
        r["luts"] = round(n_pe * (sw_lut + POOL_LUT_K * k))
        r["ffs"] = round(n_pe * (sw_ff + POOL_FF_K * k))
        r["bram18k"] = n_pe * sw_bram
    return r


def engine_resources(design: EngineDesign) -> dict[str, int]:
    total = engine_base()
    for sc, tasks in zip(design.stages, design.stage_tasks()):
        for k, v in stage_resources(sc.kind, tasks, sc.n_pe, sc.n_op, sc.weights).items():
            total[k] += v
    return total


def choose_placement(base: dict[str, int], on_chip: list[dict[str, int]], streamed: list[dict[str, int]],
                     avail: dict[str, int]) -> list[str] | None:
    """Weights on chip where they fit: every stage starts on chip (`on_chip[i]` its resources that
    way, `streamed[i]` streamed); while the engine (`base` + stages) does not fit `avail`, the stage
    whose streaming frees the most BRAM streams. None if even that does not fit. Only stages that
    execute several layers save BRAM by streaming (a buffer holds at least one layer's weights)."""
    chosen = [ON_CHIP] * len(on_chip)
    total = {k: base[k] + sum(r[k] for r in on_chip) for k in RESOURCE_KEYS}
    while not fits(total, avail):
        saving = [(on_chip[i]["bram18k"] - streamed[i]["bram18k"], i) for i in range(len(chosen))
                  if chosen[i] == ON_CHIP and streamed[i]["bram18k"] < on_chip[i]["bram18k"]]
        if not saving:
            return None
        gain, i = max(saving)
        chosen[i] = STREAMED
        total["bram18k"] -= gain
    return chosen


def engine_base() -> dict[str, int]:
    return {"luts": LUT_ENGINE, "ffs": FF_ENGINE, "dsps": 0, "bram18k": BRAM_ENGINE}


def place_weights(design: EngineDesign, avail: dict[str, int]) -> bool:
    """Sets each conv stage's weight placement by `choose_placement`; False (all on chip) if the
    engine does not fit even with streamed weights."""
    tasks = design.stage_tasks()
    on = [stage_resources(sc.kind, ts, sc.n_pe, sc.n_op, ON_CHIP) for sc, ts in zip(design.stages, tasks)]
    st = [stage_resources(sc.kind, ts, sc.n_pe, sc.n_op, STREAMED) for sc, ts in zip(design.stages, tasks)]
    chosen = choose_placement(engine_base(), on, st, avail)
    for sc, w in zip(design.stages, chosen or [ON_CHIP] * len(design.stages)):
        sc.weights = w
    return chosen is not None


def stream_all(design: EngineDesign) -> None:
    """The smallest-BRAM placement: every conv stage that executes several layers streams."""
    for sc, ts in zip(design.stages, design.stage_tasks()):
        sc.weights = STREAMED if sc.kind == "conv" and len(ts) > 1 else ON_CHIP


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
                       | ({"weights": s.weights} if s.kind == "conv" else {}) for s in d.stages],
            "weights_on_chip_words": d.on_chip_weight_words(),
            "weights_streamed_words": sum(d.streamed_weight_words(j) for j in range(len(d.subgraphs)))}
