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

import numpy as np

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
    bytes_per_cycle: float = 1.0

    @property
    def utilisation(self) -> float:
        return self.useful_ops / (self.alus * self.cycles) if self.cycles else 0.0

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "utilisation": round(self.utilisation, 4), "cycles": round(self.cycles),
                "useful_ops": self.useful_ops, "dram_bytes": round(self.dram_bytes),
                "bound": "dram" if self.dram_bytes >= 0.9 * self.cycles * self.bytes_per_cycle else "compute",
                "tile": self.tile}


# ---------------------------------------------------------------- tiling for MERIT-z
def _operand_groups(t: MeritTransform) -> dict[str, list[int]]:
    """Operands reading the same tensor share one buffered footprint (e.g. the bilateral centre)."""
    groups: dict[str, list[int]] = {}
    for i, op in enumerate(t.operands):
        groups.setdefault(op.name, []).append(i)
    return groups


def _group_words(t: MeritTransform, idxs: list[int], ext: dict[str, int]) -> int:
    return max(math.prod(clipped_footprint(t, t.operands[i], ext)) for i in idxs)


_STEPS = (1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 20, 24, 28, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160,
          192, 224, 256)


def _candidates(n: int, parallel: bool, fine: bool = True) -> list[int]:
    """Tile extents tried per index; a short accumulated index (a kernel window or a few
    channels) is either split to 1 or kept whole."""
    if not parallel and n <= 16:
        return sorted({1, n})
    steps = _STEPS if fine else (1, 2, 4, 8, 16, 32, 64, 128, 256)
    return sorted({v for v in steps if v < n} | {n})


def plan_tiles(t: MeritTransform, cfg: MeritzConfig) -> Plan:
    """Pick the tile that minimises the estimated time under the SRAM limits (double buffered)."""
    return _plan_cached(_key(t), cfg)


def _key(t: MeritTransform) -> str:
    import json

    return json.dumps(t.to_json(), sort_keys=True)


_TRANSFORMS: dict[str, MeritTransform] = {}


@lru_cache(maxsize=512)
def _plan_cached(key: str, cfg: MeritzConfig) -> Plan:
    """Vectorised search over all candidate tiles: estimated time = max(compute per TAU, DRAM)."""
    t = _TRANSFORMS[key]
    s = get_strategy(t.strategy)
    groups = _operand_groups(t)
    wb = cfg.word_bytes
    cap = [b // wb // 2 for b in cfg.rp_bytes]          # double buffered in the circular FIFO
    cp_words = cfg.cp_bytes // wb
    lanes = cfg.alus_per_tau
    names = [n for n, _ in t.indices]
    sizes = dict(t.indices)
    pnames = [n for n, _ in t.parallel]
    anames = [n for n, _ in t.accumulate]
    cand = [_candidates(sizes[n], n in pnames) for n in names]
    if math.prod(len(c) for c in cand) > 3_000_000:
        cand = [_candidates(sizes[n], n in pnames, fine=False) for n in names]
    grids = np.meshgrid(*[np.array(c, dtype=np.float64) for c in cand], indexing="ij", sparse=True)
    ext = dict(zip(names, grids))
    one = np.ones((), dtype=np.float64)
    Pt = math.prod([ext[n] for n in pnames], start=one)
    At = math.prod([ext[n] for n in anames], start=one)
    n_p = math.prod([np.ceil(sizes[n] / ext[n]) for n in pnames], start=one)
    n_a = math.prod([np.ceil(sizes[n] / ext[n]) for n in anames], start=one)
    words = {}
    for g, idx in groups.items():
        vols = []
        for i in idx:
            op = t.operands[i]
            fp = [one] * len(op.shape)
            for j, m in op.maps.items():
                fp[m.axis] = fp[m.axis] + (ext[j] - 1) * abs(m.stride)
            pad = op.padding()
            vols.append(math.prod([np.minimum(f, sz + 2 * pd) for f, sz, pd in zip(fp, op.shape, pad)], start=one))
        words[g] = vols[0] if len(vols) == 1 else np.maximum.reduce(np.broadcast_arrays(*vols))
    gnames = list(groups)
    fits = None
    assignments = list(itertools.product((0, 1), repeat=len(gnames)))
    for asg in assignments:
        use = [0 * one, 0 * one]
        for g, r in zip(gnames, asg):
            use[r] = use[r] + words[g]
        ok = (use[0] <= cap[0]) & (use[1] <= cap[1])
        fits = ok if fits is None else (fits | ok)
    assert fits is not None             # product(..., repeat=0) still yields one assignment
    feasible = fits & (Pt <= cp_words)
    compute = n_p * n_a * np.ceil(Pt / lanes) * At * s.ops_per_iter
    load = n_p * Pt
    for g, idx in groups.items():
        uses_a = any(set(t.operands[i].maps) & set(anames) for i in idx)
        load = load + words[g] * n_p * (n_a if uses_a else 1)
    est = np.maximum(compute / cfg.taus, load * wb / cfg.bytes_per_cycle) + n_p * n_a / cfg.taus
    est = np.broadcast_to(est, np.broadcast_shapes(*[np.shape(g) for g in grids]))
    feasible = np.broadcast_to(feasible, est.shape)
    if not feasible.any():
        raise ValueError(f"no tile of {t.name} fits the MERIT-z SRAMs")
    masked = np.where(feasible, est, np.inf)
    pos = np.unravel_index(int(np.argmin(masked)), masked.shape)
    tile = {n: int(c[i]) for n, c, i in zip(names, cand, pos)}
    w_best = {g: float(np.broadcast_to(words[g], est.shape)[pos]) for g in gnames}
    rp_of = None
    for asg in sorted(assignments, key=lambda a: sum(w_best[g] for g, r in zip(gnames, a) if r == 1)):
        used = [0.0, 0.0]
        for g, r in zip(gnames, asg):
            used[r] += w_best[g]
        if used[0] <= cap[0] and used[1] <= cap[1]:
            rp_of = dict(zip(gnames, asg))
            break
    return Plan(tile, rp_of or {g: 0 for g in gnames}, float(masked[pos]))


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
        need = [0, 0]
        for g, key, words in loads:
            prev = st.last.get(g)
            if prev is None or prev[0] != key:
                need[plan.rp_of[g]] += words
        for r in (0, 1):
            fifo = st.fifo[r]
            while fifo and st.live[r] + need[r] > cap[r]:     # free the oldest tiles, in order
                e = fifo.popleft()
                st.live[r] -= e[0]
                ready = max(ready, e[1])
                for g in [g for g, (_, entry) in st.last.items() if entry is e]:
                    del st.last[g]                           # freed: no longer resident
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
                      max(st.compute_busy for st in taus), dict(plan.tile), bpc)
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
