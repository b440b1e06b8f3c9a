"""On-chip traffic of the paper's PE-array mapping, and its architecture-sizing example (section 4.2, 5).

The on-chip bounds of section 4.2: every word filled into the GBuf is read out at least once
(`gbuf_read_bound`; weights meet it, inputs exceed it by the halo the PE rows' patches share), every
MAC reads two operands from registers (GReg reads >= 2 MACs) and updates one partial sum (LReg
writes >= MACs, met by keeping the sums in the PEs). `sims.loopnest_trace.simulate_onchip` runs the
mapping and counts these words as they move.

A p x q PE array computes one output block (b, z, y, x) per iteration. PEs in a column share weights
and PEs in a row share inputs: each of the q columns owns zs = ceil(z/q) output channels and each
of the p rows owns a patch of the b*y*x outputs (bs x ys x xs). Partial sums live in the PEs' local
registers (LRegs), so an LReg is written once per MAC, which is the minimum. Per iteration every
weight in the global buffer (GBuf) is read once and every input once per PE row whose patch (with
its halo xs' x ys') contains it. Global registers (GRegs) receive what the GBuf sends; each MAC
reads one input and one weight from them.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any, ClassVar

import numpy as np

from core.bound.bounds import axes
from core.bound.geometry import Axis
from core.bound.loopnest import Tiling, traffic_of
from core.bound.shapes import ConvShape
from core.results import to_plain


def patch_groups(O: int, tile: int, parts: int) -> np.ndarray:
    """For each of O output rows, which PE-row patch it falls in when every tile of `tile` rows is
    split into `parts` patches of ceil(len/parts) rows (the last tile may be shorter)."""
    o = np.arange(O)
    start = (o // tile) * tile
    length = np.minimum(start + tile, O) - start
    sub = -(-length // parts)
    return (o // tile) * parts + (o - start) // sub


@lru_cache(maxsize=65536)
def _patch_rows(ax: Axis, tile: int, parts: int) -> int:
    """Input rows the GBuf sends over the whole axis when each tile is split among `parts` PE rows
    (each patch reads the rows its windows touch, halo included); remembered, as the PE mapping of
    every candidate tiling asks again for the same few."""
    return int(ax.read_counts(patch_groups(ax.O, tile, parts)).sum())


@dataclass(frozen=True)
class PeMapping:
    JSON_DERIVED: ClassVar[tuple[str, ...]] = ("gbuf_reads", "greg_writes")

    pe_rows: int
    pe_cols: int
    split_b: int      # PE rows split the batch tile, output rows, output columns into pb x py x px
    split_y: int
    split_x: int
    zs: int           # output channels per PE column
    psums_per_pe: int
    utilisation: float
    gbuf_input_reads: int
    gbuf_weight_reads: int
    gbuf_writes: int          # fills from DRAM
    greg_input_writes: int    # GBuf input reads x groups along a PE row
    greg_weight_writes: int   # GBuf weight reads x groups down a PE column
    greg_reads: int
    lreg_writes: int
    lreg_reads: int
    output_drain: int         # final sums leaving the LRegs
    gbuf_read_bound: int      # every word the GBuf is filled with is read at least once (section 4.2)

    @property
    def gbuf_reads(self) -> int:
        return self.gbuf_input_reads + self.gbuf_weight_reads

    @property
    def greg_writes(self) -> int:
        return self.greg_input_writes + self.greg_weight_writes

    def to_json(self) -> dict[str, Any]:
        return to_plain(self)


def per_pe_extent(extent: int, tile: int, parts: int) -> int:
    """Sum over the tiles of an axis of the rows one PE computes: each tile of length L (the last may
    be shorter) split into `parts` patches of ceil(L / parts)."""
    full, rest = divmod(extent, tile)
    return full * -(-tile // parts) + (-(-rest // parts) if rest else 0)


def map_to_pes(shape: ConvShape, t: Tiling, pe_rows: int, pe_cols: int, group_rows: int = 4,
               group_cols: int = 4, fastest: bool = False, rf_words: int | None = None) -> PeMapping:
    """The best split of one block over the array, and its on-chip traffic: the least GBuf input
    traffic, or (`fastest`) the fewest compute cycles, ties broken by the least GBuf input traffic
    (the least-traffic split may leave most PE rows idle). `rf_words`: only splits whose partial sums
    per PE fit a register file of that many words (ValueError when none does)."""
    g = shape.group_shape()
    ay, ax = axes(g)
    zs = -(-t.m // pe_cols)
    best: tuple[int, int, int, int, int] | None = None
    for pb in range(1, min(t.n, pe_rows) + 1):
        for py in range(1, min(t.p, pe_rows // pb) + 1):
            px = min(t.q, pe_rows // (pb * py))
            if rf_words is not None and -(-t.n // pb) * -(-t.p // py) * -(-t.q // px) * zs > rf_words:
                continue
            rows = _patch_rows(ay, t.p, py) * _patch_rows(ax, t.q, px)
            work = (per_pe_extent(g.B, t.n, pb) * per_pe_extent(g.Ho, t.p, py) * per_pe_extent(g.Wo, t.q, px)
                    if fastest else 0)
            if best is None or (work, rows) < best[:2]:
                best = (work, rows, pb, py, px)
    if best is None:
        raise ValueError(f"no split of the {t.n}x{t.m}x{t.p}x{t.q} block keeps its partial sums per PE within "
                         f"{rf_words} words")
    _, rows_cols, pb, py, px = best
    dram = traffic_of(shape, t)
    tM = -(-g.Co // t.m)
    blocks_nyx = -(-g.B // t.n) * -(-g.Ho // t.p) * -(-g.Wo // t.q)
    gbuf_in = shape.groups * tM * g.B * g.Ci * rows_cols
    gbuf_w = shape.groups * blocks_nyx * g.Co * g.Ci * g.Hk * g.Wk
    bs, ys, xs = -(-t.n // pb), -(-t.p // py), -(-t.q // px)
    psums = bs * ys * xs * zs
    util = (t.n * t.p * t.q * t.m) / (pe_rows * pe_cols * psums)
    macs = shape.macs
    return PeMapping(pe_rows, pe_cols, pb, py, px, zs, psums, util, gbuf_in, gbuf_w,
                     dram.input_reads + dram.weight_reads + dram.output_reads,
                     gbuf_in * -(-pe_cols // group_cols), gbuf_w * -(-pe_rows // group_rows), 2 * macs,
                     macs, macs, shape.outputs, dram.input_reads + dram.weight_reads)


def _pow2(v: float) -> int:
    return 1 << max(0, math.ceil(math.log2(v)))


@dataclass(frozen=True)
class ArchitectureSizing:
    """Buffer sizes following the paper's rules b*x*y ~ R*z and b*x*y*z ~ S (psum entries)."""

    psum_bytes: int
    word_bits: int
    pe_rows: int
    pe_cols: int
    psum_entries: int
    psums_per_pe: int
    z_at_r1: float            # sqrt(S): z when R = 1
    wgbuf: int                # weight GBuf entries: next power of two above z
    bxy_at_rmax: float        # sqrt(R_max * S)
    halo_entries: float       # (sqrt(bxy) + Hk - D)^2
    igbuf: int                # input GBuf entries: next power of two above the halo'd tile
    greg_input_entries: int   # per PE row: its xs' x ys' patch, next power of two
    greg_weight_entries: int  # per PE column: zs = WGBuf / q weights

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def size_architecture(psum_bytes: int = 64 * 1024, word_bits: int = 16, pe_rows: int = 16, pe_cols: int = 16,
                      r_max: int = 9, kernel: int = 3, stride: int = 1) -> ArchitectureSizing:
    """Reproduce the paper's example: 16x16 PEs, 64 KB of 16-bit psums -> WGBuf 256, IGBuf 1024."""
    S = psum_bytes * 8 // word_bits
    z1 = math.sqrt(S)
    bxy = math.sqrt(r_max * S)
    halo = (math.sqrt(bxy) + kernel - stride) ** 2
    per_row = (math.sqrt(bxy / pe_rows) + kernel - stride) ** 2
    wgbuf = _pow2(z1)
    return ArchitectureSizing(psum_bytes, word_bits, pe_rows, pe_cols, S, S // (pe_rows * pe_cols), z1, wgbuf, bxy,
                              halo, _pow2(halo), _pow2(per_row), max(1, wgbuf // pe_cols))


def tiling_for_array(S: int, R: float) -> dict[str, float]:
    """The balanced real-valued tile: z = sqrt(S/R), b*x*y = sqrt(R*S)."""
    return {"z": float(np.sqrt(S / R)), "bxy": float(np.sqrt(R * S))}
