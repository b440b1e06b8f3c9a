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

Four of these choices are parameters of MeritzConfig (defaults = the model as first written), so the
distance to the paper's Tables VIII/IX can be traced to them (benchmarks/merit_tables.py):
`cp_bytes` (the partial-sum SRAM, 5 KB), `broadcast` (one DRAM transfer of a tile feeds every TAU of
the same round that needs it; off), `dram_model` ("flat" or "ddr3-1600" row/burst timing,
sims/meritz/dram.py) and `lane_padding` ("pad": each a-step of a p-tile takes ceil(P_t/32) lane
groups, idle lanes included; "fold": the P_t x A_t Loop() calls are packed 32 per instruction,
Fig. 10's folding).
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

from core.merit_transform.strategies import get_strategy
from core.merit_transform.transform import MeritTransform
from core.merit_transform import workloads as W
from sims.meritz.dram import DDR3_1600, DRAM_MODELS, DramTiming, burst_cost, pitches

LANE_RULES = ("pad", "fold")


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
    broadcast: bool = False         # one transfer of a tile feeds all TAUs of a round needing it
    dram_model: str = "flat"        # DRAM_MODELS
    lane_padding: str = "pad"       # LANE_RULES
    dram_timing: DramTiming = DDR3_1600

    def __post_init__(self) -> None:
        if self.dram_model not in DRAM_MODELS:
            raise ValueError(f"dram_model must be one of {DRAM_MODELS}, got {self.dram_model!r}")
        if self.lane_padding not in LANE_RULES:
            raise ValueError(f"lane_padding must be one of {LANE_RULES}, got {self.lane_padding!r}")

    @property
    def taus(self) -> int:
        return max(1, self.alus // self.alus_per_tau)

    @property
    def bytes_per_cycle(self) -> float:
        return self.dram_gbps * 1e9 / self.clock_hz

    @property
    def row_burst(self) -> bool:
        return self.dram_model != "flat"

    def assumptions(self) -> dict[str, Any]:
        """The choices behind a run, for the result JSON (what the panel shows as "assumptions used")."""
        fold = "folded (Fig. 10)" if self.lane_padding == "fold" else "padded to 32"
        dram = (f"{self.dram_model} row/burst ({self.dram_timing.burst_bytes} B bursts)" if self.row_burst
                else "flat rate")
        return {"psum_kib": self.cp_bytes / 1024, "broadcast": self.broadcast, "dram_model": self.dram_model,
                "lane_padding": self.lane_padding,
                "dram_timing": self.dram_timing.to_json() if self.row_burst else None,
                "summary": f"partial sums {self.cp_bytes / 1024:g} KB, broadcast {'on' if self.broadcast else 'off'}, "
                           f"DRAM {dram}, lanes {fold}"}


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

    @property
    def bound(self) -> str:
        """What limits the layer: "dram" when DRAM is busy 90% of its cycles, else "compute"."""
        return "dram" if self.dram_bytes >= 0.9 * self.cycles * self.bytes_per_cycle else "compute"

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "utilisation": round(self.utilisation, 4), "cycles": round(self.cycles),
                "useful_ops": self.useful_ops, "dram_bytes": round(self.dram_bytes), "bound": self.bound,
                "tile": self.tile}


# ---------------------------------------------------------------- tiling for MERIT-z
def _operand_groups(t: MeritTransform) -> dict[str, list[int]]:
    """Operands reading the same tensor share one buffered footprint (e.g. the bilateral centre)."""
    groups: dict[str, list[int]] = {}
    for i, op in enumerate(t.operands):
        groups.setdefault(op.name, []).append(i)
    return groups


def _clipped(op: Any, ext: dict[str, Any], one: Any = 1) -> tuple[list[Any], list[int]]:
    """Eq. 9 footprint clipped to the padded tensor (core.merit.tiling.clipped_footprint, here also for
    broadcastable arrays: the tile search evaluates every candidate at once), and the padded shape."""
    fp = [one] * len(op.shape)
    for j, m in op.maps.items():
        fp[m.axis] = fp[m.axis] + (ext[j] - 1) * abs(m.stride)
    padded = [sz + 2 * pd for sz, pd in zip(op.shape, op.padding())]
    return [np.minimum(f, sz) for f, sz in zip(fp, padded)], padded


def _address(op: Any, ext: dict[str, Any], sizes: dict[str, int], padded: list[int],
             start: dict[str, int] | None) -> tuple[Any, int]:
    """(step, first word) of a tile's footprint in the dense padded tensor: the exact first address of
    the tile at `start`; without it, the constant part and the step of the tile grid (gcd over the
    indices split into several tiles of extent x stride x pitch) for the search's average."""
    pitch = pitches(padded)
    pad = op.padding()
    first = [pad[k] for k in range(len(op.shape))]
    step: Any = 0
    for j, m in op.maps.items():
        first[m.axis] += m.offset
        if start is not None:
            first[m.axis] += min(start[j] * m.stride, (start[j] + ext[j] - 1) * m.stride)
        else:
            e = np.asarray(ext[j])
            step = np.gcd(step, np.where(e < sizes[j], e * abs(m.stride) * pitch[m.axis], 0).astype(np.int64))
    return step, sum(max(0, f) * p for f, p in zip(first, pitch))


def _group_cost(t: MeritTransform, idxs: list[int], ext: dict[str, Any], cfg: MeritzConfig,
                one: Any = 1, start: dict[str, int] | None = None) -> tuple[Any, Any, Any]:
    """(buffered words, DRAM bytes, row-buffer misses) of one tile of an operand group: the largest
    footprint of the operands reading the tensor; bytes are footprint bytes (flat) or whole bursts
    (row/burst model, exact for a tile at `start`, averaged over the tile grid without)."""
    words = bytes_ = misses = None
    sizes = dict(t.indices)
    for i in idxs:
        op = t.operands[i]
        fp, padded = _clipped(op, ext, one)
        vol = math.prod(fp, start=one)
        if cfg.row_burst:
            step, shift = _address(op, ext, sizes, padded, start)
            nb, nm = burst_cost(fp, padded, cfg.word_bytes, cfg.dram_timing, step, shift)
        else:
            nb, nm = vol * cfg.word_bytes, 0 * one
        words = vol if words is None else np.maximum(words, vol)
        bytes_ = nb if bytes_ is None else np.maximum(bytes_, nb)
        misses = nm if misses is None else np.maximum(misses, nm)
    return words, bytes_, misses


def _broadcast_share(pnames: list[str], counts: dict[str, Any], used: set[str], taus: int) -> Any:
    """Estimated TAUs served per DRAM transfer of an operand tile when broadcast is on: p-tiles are
    dealt round robin in product order (last index fastest), so a round of `taus` consecutive tiles
    sees about min(c_j, ceil(taus / tiles per step of j)) values of each index j; the tile's key takes
    the values of the indices it uses."""
    distinct = np.ones(())
    step = np.ones(())
    for n in reversed(pnames):
        c = counts[n]
        if n in used:
            distinct = distinct * np.minimum(c, np.maximum(1.0, np.ceil(taus / step)))
        step = step * c
    return np.maximum(1.0, np.minimum(float(taus), step) / distinct)


_SOFTMAX_P = 8        # the tile search's soft maximum of compute and DRAM time (see _plan_cached)

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
    """Search over all candidate tiles: which fit the SRAMs (on the sparse grid of candidates), then
    the estimated time (_estimate) of the fitting ones only; the first of the fastest wins."""
    t = _TRANSFORMS[key]
    names = [n for n, _ in t.indices]
    sizes = dict(t.indices)
    pnames = [n for n, _ in t.parallel]
    cand = [_candidates(sizes[n], n in pnames) for n in names]
    if math.prod(len(c) for c in cand) > 3_000_000:
        cand = [_candidates(sizes[n], n in pnames, fine=False) for n in names]
    grids = np.meshgrid(*[np.array(c, dtype=np.float64) for c in cand], indexing="ij", sparse=True)
    shape = np.broadcast_shapes(*[np.shape(g) for g in grids])
    flat = np.flatnonzero(np.broadcast_to(_fits(t, cfg, dict(zip(names, grids))), shape))
    if not flat.size:
        raise ValueError(f"no tile of {t.name} fits the MERIT-z SRAMs")
    pos = np.unravel_index(flat, shape)
    points = {n: np.asarray(c, dtype=np.float64)[p] for n, c, p in zip(names, cand, pos)}
    est = np.broadcast_to(_estimate(t, cfg, points), flat.shape)
    best = int(np.argmin(est))
    tile = {n: int(points[n][best]) for n in names}
    rp_of = _assign_rps(t, cfg, tile) or {g: 0 for g in _operand_groups(t)}
    return Plan(tile, rp_of, float(est[best]))


def _fits(t: MeritTransform, cfg: MeritzConfig, ext: dict[str, Any]) -> Any:
    """Whether each candidate tile fits: outputs in the partial-sum SRAM, and the operand groups'
    footprints in the two RPs (each tile at most half an RP: double buffered) under some assignment."""
    one = np.ones((), dtype=np.float64)
    cap = [b // cfg.word_bytes // 2 for b in cfg.rp_bytes]
    words = {}
    for g, idx in _operand_groups(t).items():
        vols = [math.prod(_clipped(t.operands[i], ext, one)[0], start=one) for i in idx]
        words[g] = vols[0] if len(vols) == 1 else np.maximum.reduce(np.broadcast_arrays(*vols))
    fits = None
    for asg in itertools.product((0, 1), repeat=len(words)):
        use = [0 * one, 0 * one]
        for g, r in zip(words, asg):
            use[r] = use[r] + words[g]
        ok = (use[0] <= cap[0]) & (use[1] <= cap[1])
        fits = ok if fits is None else (fits | ok)
    assert fits is not None             # product(..., repeat=0) still yields one assignment
    Pt = math.prod([ext[n] for n, _ in t.parallel], start=one)
    return fits & (Pt <= cfg.cp_bytes // cfg.word_bytes)


def _estimate(t: MeritTransform, cfg: MeritzConfig, ext: dict[str, Any]) -> Any:
    """Estimated cycles of each candidate tile (`ext`: index -> extents, arrays of one shape)."""
    s = get_strategy(t.strategy)
    groups = _operand_groups(t)
    wb = cfg.word_bytes
    lanes = cfg.alus_per_tau
    sizes = dict(t.indices)
    pnames = [n for n, _ in t.parallel]
    anames = [n for n, _ in t.accumulate]
    one = np.ones((), dtype=np.float64)
    Pt = math.prod([ext[n] for n in pnames], start=one)
    At = math.prod([ext[n] for n in anames], start=one)
    counts = {n: np.ceil(sizes[n] / ext[n]) for n in sizes}
    n_p = math.prod([counts[n] for n in pnames], start=one)
    n_a = math.prod([counts[n] for n in anames], start=one)
    if cfg.lane_padding == "fold":
        compute = n_p * n_a * np.ceil(Pt * At / lanes) * s.ops_per_iter
    else:
        compute = n_p * n_a * np.ceil(Pt / lanes) * At * s.ops_per_iter
    load = n_p * Pt                                     # words: outputs, written once, then the tiles
    misses = 0 * one
    first = 0 * one                                     # words the first round of TAUs loads
    first_taus = np.minimum(float(cfg.taus), n_p)
    for g, idx in groups.items():
        words, tbytes, tmiss = _group_cost(t, idx, ext, cfg, one)
        uses_a = any(set(t.operands[i].maps) & set(anames) for i in idx)
        times = n_p * (n_a if uses_a else 1)
        share = one
        if cfg.broadcast and cfg.taus > 1:
            used = {n for i in idx for n in t.operands[i].maps}
            share = _broadcast_share(pnames, counts, used, cfg.taus)
        gw = tbytes / wb if cfg.row_burst else words
        load = load + gw * times / share
        misses = misses + tmiss * times / share
        first = first + gw * first_taus / share
    if cfg.row_burst:
        dram = cfg.dram_timing.transfer_cycles(load * wb, misses, cfg.bytes_per_cycle, cfg.clock_hz, n_p * n_a)
    else:
        dram = load * wb / cfg.bytes_per_cycle
    # compute cannot start before the first round's tiles are in, nor end before the last outputs
    # are written: both grow with the tile, so they keep a large SRAM from picking a needlessly big tile
    fill = first * wb / cfg.bytes_per_cycle
    drain = first_taus * Pt * wb / cfg.bytes_per_cycle       # the last round's outputs, all at the end
    # p-tiles are dealt round robin: the busiest TAU computes ceil(n_p / TAUs) of them. TAUs in step
    # finish a round's p-tiles together, and the round's outputs then hold the DRAM for longer than
    # the one prefetched chunk lasts
    rounds = np.ceil(n_p / cfg.taus)
    chunk = compute / (n_p * n_a)
    per_tau = chunk * n_a * rounds + fill + (rounds - 1) * np.maximum(0.0, drain - chunk)
    # a soft maximum: a FCFS DRAM shared by TAUs stalls them when transfers and compute nearly balance,
    # so a tile whose DRAM time is close to its compute time is worse than max() says
    hi = np.maximum(per_tau, dram)
    lo = np.minimum(per_tau, dram)
    return hi * (1 + (lo / hi) ** _SOFTMAX_P) ** (1 / _SOFTMAX_P) + drain + n_p * n_a / cfg.taus


def _assign_rps(t: MeritTransform, cfg: MeritzConfig, tile: dict[str, int]) -> dict[str, int] | None:
    """Each operand group's Read Pipeline for a tile: the assignment that fits (double buffered)
    with the least in the small RP; None when none fits."""
    groups = _operand_groups(t)
    gnames = list(groups)
    cap = [b // cfg.word_bytes // 2 for b in cfg.rp_bytes]
    w = {g: float(_group_cost(t, idx, tile, cfg)[0]) for g, idx in groups.items()}
    for asg in sorted(itertools.product((0, 1), repeat=len(gnames)),
                      key=lambda a: sum(w[g] for g, r in zip(gnames, a) if r == 1)):
        used_w = [0.0, 0.0]
        for g, r in zip(gnames, asg):
            used_w[r] += w[g]
        if used_w[0] <= cap[0] and used_w[1] <= cap[1]:
            return dict(zip(gnames, asg))
    return None


def fixed_plan(t: MeritTransform, cfg: MeritzConfig, tile: dict[str, int]) -> Plan:
    """A plan for a given tile (missing indices: whole range), e.g. to compare assumptions at one tile.
    Raises ValueError when it does not fit the SRAMs."""
    full = {n: min(tile.get(n, size), size) for n, size in t.indices}
    if math.prod(full[n] for n, _ in t.parallel) > cfg.cp_bytes // cfg.word_bytes:
        raise ValueError(f"the tile's outputs do not fit the {cfg.cp_bytes} B partial-sum SRAM")
    rp_of = _assign_rps(t, cfg, full)
    if rp_of is None:
        raise ValueError("the tile's footprints do not fit the Read Pipeline SRAMs (double buffered)")
    return Plan(full, rp_of, float("nan"))


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
             check: Callable[[], None] | None = None, op_scale: int = 1,
             tile: dict[str, int] | None = None) -> LayerResult:
    """Cycles for one transform on MERIT-z; utilisation = useful ALU ops / (ALUs x cycles).
    `tile` fixes the tile instead of searching one."""
    _TRANSFORMS[_key(t)] = t
    plan = plan_tiles(t, cfg) if tile is None else fixed_plan(t, cfg, tile)
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
    fp_cache: dict[tuple, tuple[int, float, float]] = {}

    burst_words = max(1, cfg.dram_timing.burst_bytes // wb)
    padded_of = [[sz + 2 * pd for sz, pd in zip(op.shape, op.padding())] for op in t.operands]

    def group_cost(g: str, ext: dict[str, int], start: dict[str, int]) -> tuple[int, float, float]:
        """(words buffered, DRAM bytes, row-buffer misses) of a tile of group g."""
        key: tuple = (g,) + tuple(ext[n] for n in names_of[g])
        if cfg.row_burst:                   # the bursts depend on where the tile's rows start in a burst
            key += tuple(_address(t.operands[i], ext, sizes, padded_of[i], start)[1] % burst_words
                         for i in groups[g])
        c = fp_cache.get(key)
        if c is None:
            w, nb, nm = _group_cost(t, groups[g], ext, cfg, start=start if cfg.row_burst else None)
            c = (int(w), float(nb), float(nm))
            fp_cache[key] = c
        return c

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
                if cfg.lane_padding == "fold":
                    cycles = math.ceil(Pt * At / lanes) * s.ops_per_iter
                else:
                    cycles = groups_of_lanes * At * s.ops_per_iter
                last = ai == n_a_chunks - 1
                if last:
                    cycles += groups_of_lanes * s.post_ops
                loads = []
                for g in groups:
                    key = tuple((start[n], ext[n]) for n in names_of[g])
                    loads.append((g, key, group_cost(g, ext, start)))
                yield cycles, loads, (Pt if last else 0), Pt * At, pi // T

    taus = [_Tau() for _ in range(T)]
    for i, st in enumerate(taus):
        st.chunks = chunks_for(i)
    dram_free = 0.0
    dram_bytes = 0.0
    heap: list[tuple[float, int]] = []
    useful = 0
    # broadcast: (group, tile key, round) -> when the multicast tile has arrived
    shared: dict[tuple[str, tuple, int], float] = {}
    rounds = [0] * T

    def prepare(i: int) -> None:
        st = taus[i]
        nxt = next(st.chunks, None)
        st.nxt = nxt
        if nxt is None:
            return
        cycles, loads, outw, _, _ = nxt
        ready = 0.0
        need = [0, 0]
        for g, key, (words, _, _) in loads:
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
        cycles, loads, outw, ops, rnd = st.nxt
        rounds[i] = rnd
        useful += ops
        new_bytes = 0.0
        new_misses = 0.0
        multicast = 0.0
        sent: list[tuple[str, tuple]] = []
        to_push = []
        for g, key, (words, gbytes, gmiss) in loads:
            prev = st.last.get(g)
            if prev is not None and prev[0] == key:
                to_push.append((g, prev[1], False))
                continue
            to_push.append((g, [words, 0.0], True))
            if cfg.broadcast:
                got = shared.get((g, key, rnd))
                if got is not None:                         # another TAU's transfer fed this one too
                    multicast = max(multicast, got)
                    continue
                sent.append((g, key))
            new_bytes += gbytes
            new_misses += gmiss
        nbytes = new_bytes + st.pending_write
        st.pending_write = 0.0
        if nbytes:
            start = max(ready, dram_free)
            if cfg.row_burst:
                dram_free = start + float(cfg.dram_timing.transfer_cycles(nbytes, new_misses, bpc, cfg.clock_hz))
            else:
                dram_free = start + nbytes / bpc
            dram_bytes += nbytes
            load_done = dram_free + cfg.dram_latency
        else:
            load_done = ready
        load_done = max(load_done, multicast)
        for g, key in sent:
            shared[(g, key, rnd)] = load_done
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
        if shared and count % 4096 == 0:                    # rounds every TAU has left behind
            lo = min(rounds[k] for k in range(T) if taus[k].nxt is not None)
            shared = {k: v for k, v in shared.items() if k[2] >= lo}
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
