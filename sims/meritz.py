"""A tile-level timing model of the MERIT-z processor (paper, sections V-A and VI-C/D).

What is modelled (and why), see also docs/merit.md:
* TAUs of 32 ALUs run SIMD: the p-tile's outputs are spread over the lanes (ceil(P_t / 32) lane
  groups), each group runs the a-chunk's Loop() calls, one ALU instruction per cycle per lane.
* Each TAU has two Read Pipelines whose SRAMs (16 KB and 8 KB) are circular FIFOs of tiles
  (Fig. 9): a tile's footprint (eq. 9) is allocated when its load starts and freed, in order, when
  the last chunk using it has been computed. The largest operand goes to the 16 KB RP.
* Prefetch overlaps compute (Fig. 10): a TAU loads the next chunk as soon as FIFO space allows,
  so compute waits only when DRAM falls behind.
* Partial sums stay in the Compute Pipeline SRAM (5 KB) until the accumulation ends (output
  stationary, Table III: no output traffic before that); the Write Pipeline then queues the
  outputs for DRAM without stalling the TAU.
* One DRAM shared by all TAUs serves requests first come first served at a fixed bandwidth
  (3.2 GB/s by default, the paper's DDR3-1600 setting) plus a fixed latency; misaligned bursts
  are assumed absorbed by the 1 KB L1 the paper mentions, so traffic = footprint bytes.
* Words are 16 bit (the ISA's fixed-point format), the clock is 400 MHz.
Pooling fused after a convolution (CONV+Pool in Table VIII) adds no DRAM traffic and is not timed.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections import deque
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, Callable

from core.merit.strategies import get_strategy
from core.merit.tiling import clipped_footprint
from core.merit.transform import MeritTransform
from core.merit import workloads as W


@dataclass(frozen=True)
class MeritzConfig:
    alus: int = 128
    alus_per_tau: int = 32
    clock_hz: float = 400e6
    dram_gbps: float = 3.2
    word_bytes: int = 2
    rp_bytes: tuple[int, int] = (16 * 1024, 8 * 1024)
    cp_bytes: int = 5 * 1024
    dram_latency: int = 40          # cycles (100 ns)
    pipeline_depth: int = 13        # 5-stage butterfly + 3-stage omega + 5-stage butterfly

    @property
    def taus(self) -> int:
        return max(1, self.alus // self.alus_per_tau)

    @property
    def bytes_per_cycle(self) -> float:
        return self.dram_gbps * 1e9 / self.clock_hz


@dataclass
class Plan:
    """The tile chosen for one transform: extents per index and each operand's RP."""

    tile: dict[str, int]
    rp_of: dict[str, int]           # operand name -> 0 (16 KB) or 1 (8 KB)
    estimate: float


@dataclass
class LayerResult:
    name: str
    useful_ops: int
    cycles: float
    alus: int
    dram_bytes: float
    compute_cycles_per_tau: float
    tile: dict[str, int]

    @property
    def utilisation(self) -> float:
        return self.useful_ops / (self.alus * self.cycles) if self.cycles else 0.0

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "utilisation": round(self.utilisation, 4), "cycles": round(self.cycles),
                "useful_ops": self.useful_ops, "dram_bytes": round(self.dram_bytes),
                "bound": "dram" if self.dram_bytes / 1 >= 0.9 * self.cycles * self._bpc else "compute",
                "tile": self.tile}

    _bpc: float = 1.0


# ---------------------------------------------------------------- tiling for MERIT-z
def _operand_groups(t: MeritTransform) -> dict[str, list[int]]:
    """Operands reading the same tensor share one buffered footprint (e.g. the bilateral centre)."""
    groups: dict[str, list[int]] = {}
    for i, op in enumerate(t.operands):
        groups.setdefault(op.name, []).append(i)
    return groups


def _group_words(t: MeritTransform, idxs: list[int], ext: dict[str, int]) -> int:
    return max(math.prod(clipped_footprint(t, t.operands[i], ext)) for i in idxs)


def _candidates(n: int, parallel: bool) -> list[int]:
    """Tile extents tried per index: powers of two and the whole range; a short accumulated
    index (a kernel window or a few channels) is either split to 1 or kept whole."""
    if not parallel and n <= 16:
        return sorted({1, n})
    return sorted({v for v in (1, 2, 4, 8, 16, 32, 64, 128, 256) if v < n} | {n})


def plan_tiles(t: MeritTransform, cfg: MeritzConfig) -> Plan:
    """Pick the tile that minimises the estimated time under the SRAM limits (double buffered)."""
    return _plan_cached(_key(t), cfg)


def _key(t: MeritTransform) -> str:
    import json

    return json.dumps(t.to_json(), sort_keys=True)


_TRANSFORMS: dict[str, MeritTransform] = {}


@lru_cache(maxsize=512)
def _plan_cached(key: str, cfg: MeritzConfig) -> Plan:
    t = _TRANSFORMS[key]
    s = get_strategy(t.strategy)
    groups = _operand_groups(t)
    wb = cfg.word_bytes
    cap = [b // wb // 2 for b in cfg.rp_bytes]
    cp_words = cfg.cp_bytes // wb
    lanes = cfg.alus_per_tau
    names = [n for n, _ in t.indices]
    sizes = dict(t.indices)
    pnames = {n for n, _ in t.parallel}
    cand = [_candidates(sizes[n], n in pnames) for n in names]
    best: Plan | None = None
    best_size = 0
    for combo in itertools.product(*cand):
        ext = dict(zip(names, combo))
        Pt = math.prod(ext[n] for n, _ in t.parallel) if t.parallel else 1
        if Pt > cp_words:
            continue
        At = math.prod(ext[n] for n, _ in t.accumulate) if t.accumulate else 1
        words = {g: _group_words(t, idx, ext) for g, idx in groups.items()}
        order = sorted(words, key=lambda g: -words[g])
        rp_of = {g: (0 if i == 0 else 1) for i, g in enumerate(order)}
        use = [0, 0]
        for g, r in rp_of.items():
            use[r] += words[g]
        if use[0] > cap[0] or use[1] > cap[1]:
            continue
        n_p = math.prod(math.ceil(sizes[n] / ext[n]) for n, _ in t.parallel) if t.parallel else 1
        n_a = math.prod(math.ceil(sizes[n] / ext[n]) for n, _ in t.accumulate) if t.accumulate else 1
        compute = n_p * n_a * math.ceil(Pt / lanes) * At * s.ops_per_iter
        anames = {n for n, _ in t.accumulate}
        load = 0
        for g, idx in groups.items():
            uses_a = any(set(t.operands[i].maps) & anames for i in idx)
            load += words[g] * n_p * (n_a if uses_a else 1)
        load += n_p * Pt                                   # outputs
        est = max(compute / cfg.taus, load * wb / cfg.bytes_per_cycle)
        est += n_p * n_a / cfg.taus            # tie-break: one dispatch cycle per chunk
        if best is None or (est, -Pt * At) < (best.estimate, -best_size):
            best = Plan(ext, rp_of, est)
            best_size = Pt * At
    if best is None:
        raise ValueError(f"no tile of {t.name} fits the MERIT-z SRAMs")
    return best


# ---------------------------------------------------------------- the timing simulation
@dataclass
class _Tau:
    compute_end: float = 0.0
    fifo: list = field(default_factory=lambda: [deque(), deque()])
    live: list = field(default_factory=lambda: [0, 0])
    last: dict = field(default_factory=dict)          # operand group -> (key, entry)
    pending_write: float = 0.0
    chunks: Any = None
    nxt: Any = None
    compute_busy: float = 0.0


def _ranges(n: int, t: int) -> list[tuple[int, int]]:
    return [(s, min(t, n - s)) for s in range(0, n, t)]


def simulate(t: MeritTransform, cfg: MeritzConfig, name: str = "",
             check: Callable[[], None] | None = None, op_scale: int = 1) -> LayerResult:
    """Cycles for one transform on MERIT-z; utilisation = useful ALU ops / (ALUs x cycles)."""
    _TRANSFORMS[_key(t)] = t
    plan = plan_tiles(t, cfg)
    s = get_strategy(t.strategy)
    groups = _operand_groups(t)
    anames = {n for n, _ in t.accumulate}
    sizes = dict(t.indices)
    p_ranges = [_ranges(sizes[n], plan.tile[n]) for n, _ in t.parallel]
    a_ranges = [_ranges(sizes[n], plan.tile[n]) for n, _ in t.accumulate]
    pn = [n for n, _ in t.parallel]
    an = [n for n, _ in t.accumulate]
    lanes = cfg.alus_per_tau
    wb = cfg.word_bytes
    cap = [b // wb for b in cfg.rp_bytes]
    bpc = cfg.bytes_per_cycle
    T = cfg.taus
    fp_cache: dict[tuple, int] = {}

    def group_words(g: str, ext: dict[str, int]) -> int:
        key = (g,) + tuple(ext[n] for n in names_of[g])
        w = fp_cache.get(key)
        if w is None:
            w = _group_words(t, groups[g], ext)
            fp_cache[key] = w
        return w

    names_of = {g: sorted({n for i in idx for n in t.operands[i].maps}) for g, idx in groups.items()}
    n_a_chunks = math.prod(len(r) for r in a_ranges) if a_ranges else 1

    def chunks_for(tau: int):
        """Chunks of the p-tiles assigned to this TAU (round robin), with what each must load."""
        for pi, pt in enumerate(itertools.product(*p_ranges) if p_ranges else [()]):
            if pi % T != tau:
                continue
            p_ext = {n: e for n, (_, e) in zip(pn, pt)}
            p_start = {n: s0 for n, (s0, _) in zip(pn, pt)}
            Pt = math.prod(p_ext.values()) if p_ext else 1
            groups_of_lanes = math.ceil(Pt / lanes)
            for ai, at in enumerate(itertools.product(*a_ranges) if a_ranges else [()]):
                ext = dict(p_ext)
                ext.update({n: e for n, (_, e) in zip(an, at)})
                start = dict(p_start)
                start.update({n: s0 for n, (s0, _) in zip(an, at)})
                At = math.prod(e for _, e in at) if at else 1
                cycles = groups_of_lanes * At * s.ops_per_iter
                last = ai == n_a_chunks - 1
                if last:
                    cycles += groups_of_lanes * s.post_ops
                loads = []
                for g in groups:
                    key = tuple((start[n], ext[n]) for n in names_of[g])
                    loads.append((g, key, group_words(g, ext)))
                yield cycles, loads, (Pt if last else 0), Pt * At

    taus = [_Tau() for _ in range(T)]
    for i, st in enumerate(taus):
        st.chunks = chunks_for(i)
    dram_free = 0.0
    dram_bytes = 0.0
    heap: list[tuple[float, int]] = []
    useful = 0

    def prepare(i: int) -> None:
        st = taus[i]
        nxt = next(st.chunks, None)
        st.nxt = nxt
        if nxt is None:
            return
        cycles, loads, outw, _ = nxt
        ready = 0.0
        for g, key, words in loads:
            prev = st.last.get(g)
            if prev is not None and prev[0] == key:
                continue
            r = plan.rp_of[g]
            fifo = st.fifo[r]
            while fifo and st.live[r] + words > cap[r]:
                e = fifo.popleft()
                st.live[r] -= e[0]
                ready = max(ready, e[1])
        heapq.heappush(heap, (ready, i))

    for i in range(T):
        prepare(i)
    count = 0
    while heap:
        ready, i = heapq.heappop(heap)
        st = taus[i]
        cycles, loads, outw, ops = st.nxt
        useful += ops
        new_words = 0
        to_push = []
        for g, key, words in loads:
            prev = st.last.get(g)
            if prev is not None and prev[0] == key:
                to_push.append((g, prev[1], False))
                continue
            new_words += words
            to_push.append((g, [words, 0.0], True))
        nbytes = new_words * wb + st.pending_write
        st.pending_write = 0.0
        if nbytes:
            start = max(ready, dram_free)
            dram_free = start + nbytes / bpc
            dram_bytes += nbytes
            load_done = dram_free + cfg.dram_latency
        else:
            load_done = ready
        begin = max(load_done, st.compute_end)
        if begin > st.compute_end:
            begin += cfg.pipeline_depth if st.compute_end == 0.0 else 0
        st.compute_end = begin + cycles
        st.compute_busy += cycles
        for g, entry, fresh in to_push:
            entry[1] = st.compute_end
            if fresh:
                r = plan.rp_of[g]
                st.fifo[r].append(entry)
                st.live[r] += entry[0]
                st.last[g] = (next(k for gg, k, _ in loads if gg == g), entry)
        if outw:
            st.pending_write += outw * wb
        count += 1
        if check is not None and count % 2048 == 0:
            check()
        prepare(i)
    end = max(st.compute_end for st in taus) + cfg.pipeline_depth
    tail = sum(st.pending_write for st in taus)
    if tail:
        dram_free = max(dram_free, max(st.compute_end for st in taus)) + tail / bpc
        dram_bytes += tail
    total = max(end, dram_free)
    res = LayerResult(name or t.name, useful * s.ops_per_iter * op_scale, total, cfg.alus, dram_bytes,
                      max(st.compute_busy for st in taus), dict(plan.tile))
    res._bpc = bpc
    return res


# ---------------------------------------------------------------- workloads at the paper's sizes
def network_transforms(net: Any, batch: int = 32) -> list[tuple[str, MeritTransform]]:
    """Convolutions of a zoo network as MERIT transforms; fully connected layers as GEMM (batch)."""
    out = []
    for layer in net.convs:
        if layer.fc:
            k = layer.weights // layer.out_ch
            out.append((layer.name, W.gemm(layer.out_ch, batch, k, name=layer.name)))
        else:
            out.append((layer.name, W.conv(layer.in_ch, layer.in_h, layer.in_w, layer.out_ch, layer.k_h,
                                           layer.stride, layer.dilation, layer.pad, layer.groups,
                                           name=layer.name, kw=layer.k_w)))
    return out


def table_ix_transforms() -> list[tuple[str, MeritTransform, str]]:
    """The Table IX workloads at the table's output sizes (unstated sizes are chosen, see docs)."""
    return [
        ("Dilated", W.conv(32, 64, 64, 32, 3, dilation=2, pad=2, name="dilated"), "64x64x32"),
        ("Pixel Shuffle (ESPCN)", W.conv(32, 16, 16, 128, 3, pad=1, name="espcn-subpixel"), "32x32x32"),
        ("Correlation (FlowNet)", W.correlation(256, 64, 64, 5), "64x64x11x11"),
        ("Depthwise (MobileNet)", W.depthwise(32, 64, 64), "64x64x32"),
        ("GEMM (FC, RNN)", W.gemm(256, 128, 512), "256x128"),
        ("Motion estimation", W.motion_estimation(720, 1280, 8, 8), "720p, 8x8 block"),
    ]


PAPER_TABLE_IX = {"Dilated": 0.95, "Pixel Shuffle (ESPCN)": 0.96, "Correlation (FlowNet)": 0.74,
                  "Depthwise (MobileNet)": 0.63, "GEMM (FC, RNN)": 0.92, "Motion estimation": 0.74}
PAPER_TABLE_VIII = {"alexnet": 0.88, "vgg16": 0.85}


def run_layers(layers: list[tuple[str, MeritTransform]], cfg: MeritzConfig,
               check: Callable[[], None] | None = None) -> tuple[float, list[LayerResult]]:
    """Per-layer results and the time-weighted overall utilisation."""
    results = [simulate(tr, cfg, name, check) for name, tr in layers]
    ops = sum(r.useful_ops for r in results)
    cyc = sum(r.cycles for r in results)
    return (ops / (cfg.alus * cyc) if cyc else 0.0), results


def scaling(layers: list[tuple[str, MeritTransform]], alus: list[int], cfg: MeritzConfig,
            check: Callable[[], None] | None = None) -> list[float]:
    """Fig. 15: utilisation against ALU count."""
    return [run_layers(layers, replace(cfg, alus=a), check)[0] for a in alus]
