"""The optimal dataflow for a chosen objective on the dataflow accelerator (issue 50): the least
off-chip traffic (the engine's search, core.bound.loopnest.search_optimal), the least energy, the
least latency, or the least energy-delay product of each layer.

The space is the traffic search's (docs/bound.md, "Optimal dataflow"): the same grids of tile sizes,
loop orders, held tensors, sliding and streaming input tiles, each with its output-channel tile as
large as fits (then as small as the same trip count allows); every tiling of it is mapped onto the PE
array by its fastest split whose partial sums per PE fit the register file (core.bound.onchip.map_to_pes(
fastest=True, rf_words=...)); a tiling with no such split is left out. Each candidate's time and
energy are those of core.bound.cost, computed here for all candidates at once (numpy arrays), so the
choice is exact over the space; tests compare it with the candidates one by one, and the cycles and
on-chip counts with the trace simulator. Ties go to the least traffic, then the least memory, then
the first candidate (for "traffic": the least latency, then the least memory).
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from functools import lru_cache
from typing import TYPE_CHECKING, Iterator, NamedTuple

import numpy as np

from core.bound.bounds import axes
from core.bound.geometry import Axis, distinct_tiles
from core.bound.loopnest import (HOLDS, OPTIMAL_ORDERS, STREAMS, SearchResult, TileGrid, Tiling, _ceil, general_orders,
                                 grid_tiles, held_words, traffic_of)
from core.bound.onchip import _patch_rows
from core.bound.shapes import ConvShape

if TYPE_CHECKING:
    from core.workload import DataflowTarget

NO_SPLIT = np.iinfo(np.int64).max     # fastest_split's work where no split fits the register file
OBJECTIVES = {"traffic": "least off-chip traffic", "energy": "least energy", "latency": "least latency",
              "edp": "least energy x latency"}


class Hardware(NamedTuple):
    """What the objectives read of the target (hashable, so searches are remembered)."""

    words: int
    word_bytes: float
    pe_rows: int
    pe_cols: int
    clock_hz: float
    bandwidth_bytes_per_s: float
    dram_read_pj: float
    dram_write_pj: float
    gbuf_read_pj: float
    gbuf_write_pj: float
    rf_read_pj: float
    rf_write_pj: float
    mac_pj: float
    rf_words: int                 # one PE's register file, which holds its partial sums

    @staticmethod
    def of(t: "DataflowTarget") -> "Hardware":
        return Hardware(t.memory_words, t.word_bits / 8, t.pe_rows, t.pe_cols, t.clock_mhz * 1e6,
                        t.bandwidth_gbps * 1e9, t.dram_read_pj, t.dram_write_pj, t.gbuf_read_pj, t.gbuf_write_pj,
                        t.rf_read_pj, t.rf_write_pj, t.mac_pj, t.rf_words)


class Candidates(NamedTuple):
    orders: tuple[str, ...]       # each loop order with the same tile arrays
    hold: str
    slide: bool
    stream: str
    n: np.ndarray
    m: np.ndarray
    c: np.ndarray
    p: np.ndarray
    q: np.ndarray


def candidates(shape: ConvShape, S: int) -> Iterator[Candidates]:
    """The traffic search's space (core.bound.loopnest._optimal and _search), candidate arrays by held
    tensor and way of streaming, each with its loop orders."""
    g = shape.group_shape()
    holds = [h for h in HOLDS if held_words(g, h) < S]
    grids = [(OPTIMAL_ORDERS, distinct_tiles(g.B), np.array(sorted({1, g.Ci}), dtype=np.int64),
              np.arange(1, g.Ho + 1), np.arange(1, g.Wo + 1)),
             (general_orders(g), distinct_tiles(g.B), distinct_tiles(g.Ci), distinct_tiles(g.Ho), distinct_tiles(g.Wo))]
    for (orders, ns, cs, ps, qs), streams in itertools.product(grids, (("",), STREAMS)):
        for hold, stream in itertools.product(holds, streams):
            if stream and hold == "I":
                continue
            found = grid_tiles(g, S, ns, cs, ps, qs, hold, stream)
            if found is not None:
                yield Candidates(tuple(orders), hold, hold != "I" and not stream, stream, *found)


@lru_cache(maxsize=256)
def rows_table(ax: Axis, R: int) -> np.ndarray:
    """table[t, k]: the input rows sent over the whole axis when each output tile of t rows is split
    among k PE rows (core.bound.onchip._patch_rows), for t = 1..O and k = 1..min(t, R) (0 elsewhere);
    remembered per axis (a network's layers share a few)."""
    table = np.zeros((ax.O + 1, R + 1), dtype=np.int64)
    for t in range(1, ax.O + 1):
        for k in range(1, min(t, R) + 1):
            table[t, k] = _patch_rows(ax, t, k)
    table.setflags(write=False)
    return table


@lru_cache(maxsize=256)
def extent_table(E: int, R: int) -> np.ndarray:
    """table[t, k]: core.bound.onchip.per_pe_extent(E, t, k) for t = 1..E, k = 1..R."""
    t = np.arange(E + 1, dtype=np.int64)[:, None]
    k = np.arange(R + 1, dtype=np.int64)[None, :]
    ts, ks = np.maximum(t, 1), np.maximum(k, 1)
    full, rest = np.divmod(E, ts)
    table = full * _ceil(ts, ks) + np.where(rest > 0, _ceil(rest, ks), 0)
    table.setflags(write=False)
    return table


def fastest_split(shape: ConvShape, hw: Hardware, cand: Candidates) -> tuple[np.ndarray, np.ndarray]:
    """Per candidate, the fastest split of a block over the PE rows whose partial sums per PE fit the
    register file (map_to_pes's order: fewest cycles, then fewest input rows sent): (rows of outputs one
    PE computes along batch x rows x columns, input rows x columns sent); the work is NO_SPLIT where no
    split fits. The loop order does not change it."""
    g = shape.group_shape()
    n, p, q = cand.n, cand.p, cand.q
    R = hw.pe_rows
    ay, ax = axes(g)
    ytab, xtab = rows_table(ay, R), rows_table(ax, R)
    eb, ey, ex = extent_table(g.B, R), extent_table(g.Ho, R), extent_table(g.Wo, R)
    work = np.full(len(n), NO_SPLIT, dtype=np.int64)
    rows = np.zeros(len(n), dtype=np.int64)
    zs = _ceil(cand.m, hw.pe_cols)
    for pb in range(1, min(int(n.max()), R) + 1):
        for py in range(1, min(int(p.max()), R // pb) + 1):
            px = np.minimum(q, R // (pb * py))
            valid = (pb <= n) & (py <= p) & (_ceil(n, pb) * _ceil(p, py) * _ceil(q, px) * zs <= hw.rf_words)
            w = eb[n, pb] * ey[p, py] * ex[q, px]
            rr = ytab[p, py] * xtab[q, px]
            better = valid & ((w < work) | ((w == work) & (rr < rows)))
            work = np.where(better, w, work)
            rows = np.where(better, rr, rows)
    return work, rows


def costs(shape: ConvShape, hw: Hardware, cand: Candidates, order: str,
          split: tuple[np.ndarray, np.ndarray] | None = None, grid: TileGrid | None = None) -> dict[str, np.ndarray]:
    """Traffic (words), memory, compute cycles, time (s) and energy (J) of one group's candidates in one
    loop order, as core.bound.cost computes them for one tiling (times the groups, which do not change
    the choice). `split`: fastest_split's, when already known; `grid`: the candidates' `TileGrid`, when
    already built (it serves every loop order)."""
    g = shape.group_shape()
    if grid is None:
        grid = TileGrid(g, cand.n, cand.m, cand.c, cand.p, cand.q, cand.hold, cand.stream)
    r = grid.evaluate(order, cand.slide)
    n, m, p, q = cand.n, cand.m, cand.p, cand.q
    work, rows = split if split is not None else fastest_split(shape, hw, cand)
    fits = work < NO_SPLIT                  # some split keeps the partial sums in the register file
    ok = np.asarray(r["ok"], dtype=bool) & fits
    work = np.where(fits, work, 0)
    zs = _ceil(m, hw.pe_cols)
    full, rest = np.divmod(g.Co, m)
    column = full * zs + np.minimum(rest, zs)
    cycles = g.Ci * g.Hk * g.Wk * work * column
    reads = r["input_reads"] + r["weight_reads"] + r["output_reads"]
    writes = r["output_writes"]
    traffic = reads + writes
    macs = g.macs
    gbuf_in = _ceil(g.Co, m) * g.B * g.Ci * rows
    gbuf_w = _ceil(g.B, n) * _ceil(g.Ho, p) * _ceil(g.Wo, q) * g.Co * g.Ci * g.Hk * g.Wk
    greg_writes = gbuf_in * -(-hw.pe_cols // 4) + gbuf_w * -(-hw.pe_rows // 4)
    pj = (reads * hw.dram_read_pj + writes * hw.dram_write_pj
          + (gbuf_in + gbuf_w) * hw.gbuf_read_pj + reads * hw.gbuf_write_pj
          + 3 * macs * hw.rf_read_pj + (greg_writes + macs) * hw.rf_write_pj + macs * hw.mac_pj)
    time = cycles / hw.clock_hz + traffic * hw.word_bytes / hw.bandwidth_bytes_per_s
    return {"ok": ok, "traffic": traffic, "memory": r["memory"], "cycles": cycles, "time": time,
            "energy": pj * 1e-12}


def score(values: dict[str, np.ndarray], objective: str) -> np.ndarray:
    if objective == "traffic":
        return values["traffic"].astype(np.float64)
    if objective == "energy":
        return values["energy"]
    if objective == "latency":
        return values["time"]
    if objective == "edp":
        return values["energy"] * values["time"]
    raise ValueError(f"unknown objective {objective!r}")


def search_for(shape: ConvShape, target: "DataflowTarget", objective: str) -> SearchResult | None:
    """The tiling of the least `objective` over the space, with its traffic. For "traffic" that is the
    traffic search's least traffic, its ties (many tilings reach the compulsory traffic, one output at a
    time among them) going to the least latency."""
    return _search_for(replace(shape, name=""), Hardware.of(target), objective)


@lru_cache(maxsize=512)
def _search_for(shape: ConvShape, hw: Hardware, objective: str) -> SearchResult | None:
    best: tuple[float, float, int, Tiling] | None = None
    count = 0
    for cand, order in ((cand, order) for cand in candidates(shape, hw.words) for order in cand.orders):
        if order == cand.orders[0]:
            split = fastest_split(shape, hw, cand)
            grid = TileGrid(shape.group_shape(), cand.n, cand.m, cand.c, cand.p, cand.q, cand.hold, cand.stream)
        v = costs(shape, hw, cand, order, split, grid)
        ok = v["ok"]
        count += int(ok.sum())
        if not ok.any():
            continue
        s = np.where(ok, score(v, objective), np.inf)
        least = float(s.min())
        ties = np.flatnonzero(s <= least)
        then = v["time"] if objective == "traffic" else v["traffic"]
        i = int(ties[np.lexsort((v["memory"][ties], then[ties]))[0]])
        key = (least, float(then[i]), int(v["memory"][i]))
        if best is None or key < best[:3]:
            best = (*key, Tiling(int(cand.n[i]), int(cand.m[i]), int(cand.c[i]), int(cand.p[i]), int(cand.q[i]),
                                 order, cand.hold, cand.slide, cand.stream))
    if best is None:
        return None
    t = best[3]
    if t.slide and traffic_of(shape, replace(t, slide=False)) == traffic_of(shape, t):
        t = replace(t, slide=False)          # as the traffic search reports it: sliding only where it saves words
    return SearchResult(t, traffic_of(shape, t), count)


def least_rf_words(shape: ConvShape, target: "DataflowTarget") -> int | None:
    """The fewest register-file words per PE for which the space holds a dataflow of `shape` (the
    partial sums of its block, split over the PE rows), found by bisection on the register file; None
    when the space is empty whatever its size. Says why a register file too small is refused."""
    hw = replace_rf(Hardware.of(target), 2 ** 62)
    found = _search_for(replace(shape, name=""), hw, "traffic")
    if found is None:
        return None
    from core.bound.onchip import map_to_pes

    hi = map_to_pes(shape, found.tiling, hw.pe_rows, hw.pe_cols, fastest=True).psums_per_pe
    lo = 0
    while hi - lo > 1:                      # the space only grows with the register file
        mid = (lo + hi) // 2
        if _search_for(replace(shape, name=""), replace_rf(hw, mid), "traffic") is None:
            lo = mid
        else:
            hi = mid
    return hi


def replace_rf(hw: Hardware, words: int) -> Hardware:
    return hw._replace(rf_words=words)
