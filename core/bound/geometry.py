"""Exact one-dimensional tile geometry: which input rows an output-row tile reads.

Output row o of a convolution with stride D, padding P, kernel K and dilation d reads input rows
o*D - P + r*d (r = 0..K-1). A tile of output rows [a, e] reads the union of those rows that lie in
the real input: padding is never read from DRAM, and rows that no window of the tile touches (a
stride larger than the kernel's extent, gaps between dilated taps) are never loaded. When every
row between the first and the last is touched this is the span [a*D - P, e*D - P + d*(K-1)]
clipped to the input. Tiles are `t` rows; the last tile is the remainder (ceilings at the edge).
These counts are what the trace simulator loads, so they are exact, not the paper's x' ~ D*x
approximation.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

import numpy as np


@dataclass(frozen=True)
class Axis:
    """One spatial axis: output size O, input size I, kernel K, stride D, pad P, dilation d."""

    O: int
    I: int
    K: int
    D: int
    P: int
    d: int = 1

    def taps(self) -> np.ndarray:
        """The O x K input row of every (output row, kernel tap), padding rows included (< 0 or >= I);
        read-only, made once per axis (the models ask for it on every tile size they count)."""
        return _taps(self)

    def rows_read(self, o0: int, o1: int) -> np.ndarray:
        """The input rows (sorted, in the real input) that output rows o0..o1-1 read."""
        o1 = min(o1, self.O)                                   # as slicing taps() would
        o0 = min(o0, o1)
        rows = (np.arange(o0, o1)[:, None] * self.D - self.P + np.arange(self.K)[None, :] * self.d).ravel()
        return np.unique(rows[(rows >= 0) & (rows < self.I)])

    def read_counts(self, group: np.ndarray) -> np.ndarray:
        """How many distinct real input rows each group of output rows reads; `group[o]` (0, 1, ...)
        says which group output row o belongs to."""
        rows = self.taps()
        ids = np.broadcast_to(np.asarray(group, dtype=np.int64)[:, None], rows.shape)
        ok = (rows >= 0) & (rows < self.I)
        keys = np.unique(ids[ok] * self.I + rows[ok])
        return np.bincount(keys // self.I, minlength=int(np.max(group)) + 1).astype(np.int64)

    def spans(self, t: int) -> np.ndarray:
        """How many input rows each tile of `t` output rows reads (distinct rows in the real input)."""
        return self.read_counts(np.arange(self.O) // t)


@lru_cache(maxsize=4096)
def _taps(ax: Axis) -> np.ndarray:
    rows = np.arange(ax.O)[:, None] * ax.D - ax.P + np.arange(ax.K)[None, :] * ax.d
    rows.setflags(write=False)
    return rows


@dataclass(frozen=True)
class BlockRows:
    """One tile along one axis, as half-open row ranges: its output rows, the input rows its windows
    span (padding included, so possibly outside 0..I), the first to the last row read from DRAM
    (inside the span; rows a large stride skips in between are not read, see `Axis.rows_read`), and
    the rows its window origins sit on (the block without its halo)."""

    out: tuple[int, int]
    span: tuple[int, int]
    read: tuple[int, int]
    origin: tuple[int, int]


def block_rows(ax: Axis, t: int, index: int) -> BlockRows:
    """Tile `index` (0-based) of `t` output rows; `ax.spans(t)[index]` rows of `read` are loaded (all
    of them unless the stride or the dilation leaves gaps)."""
    o0 = index * t
    o1 = min(o0 + t, ax.O)
    i0, last = o0 * ax.D - ax.P, (o1 - 1) * ax.D - ax.P
    i1 = last + ax.d * (ax.K - 1) + 1
    rows = ax.rows_read(o0, o1)
    read = (int(rows[0]), int(rows[-1]) + 1) if rows.size else (max(i0, 0), max(i0, 0))
    return BlockRows((o0, o1), (i0, i1), read, (i0, last + 1))


class LayerShape(Protocol):
    """What the tile geometry needs of a layer: core.bound.shapes.ConvShape (also the shape a bound
    result stores), or any object with the same sizes."""

    @property
    def Ho(self) -> int: ...
    @property
    def Wo(self) -> int: ...
    @property
    def Hi(self) -> int: ...
    @property
    def Wi(self) -> int: ...
    @property
    def Hk(self) -> int: ...
    @property
    def Wk(self) -> int: ...
    @property
    def stride(self) -> int: ...
    @property
    def pad(self) -> int: ...
    @property
    def dilation(self) -> int: ...


class RowColTile(Protocol):
    """Output rows y and columns x of a tile: core.bound.loopnest.Tiling, or a result's tiling."""

    @property
    def y(self) -> int: ...
    @property
    def x(self) -> int: ...


def layer_axes(shape: LayerShape) -> tuple[Axis, Axis]:
    """The row and column axes of a layer shape."""
    return (Axis(shape.Ho, shape.Hi, shape.Hk, shape.stride, shape.pad, shape.dilation),
            Axis(shape.Wo, shape.Wi, shape.Wk, shape.stride, shape.pad, shape.dilation))


def block_grid(shape: LayerShape, tiling: RowColTile) -> tuple[int, int]:
    """How many output blocks a tiling (its y and x tile sizes) cuts a layer into: (rows, columns)."""
    return -(-shape.Ho // tiling.y), -(-shape.Wo // tiling.x)


def interior_block(shape: LayerShape, tiling: RowColTile) -> tuple[int, int]:
    """The block in the middle of the grid (a block away from the padded borders when there is one)."""
    ny, nx = block_grid(shape, tiling)
    return ny // 2, nx // 2


def tile_block(shape: LayerShape, tiling: RowColTile, block: tuple[int, int] = (0, 0)) -> dict[str, tuple[int, ...]]:
    """Output block `block` = (row, column) of a layer's tiling and the input it needs, each as
    (y0, y1, x0, x1) half-open: "out", "in" (with the halo, padding included), "in_clipped" (the
    rows and columns from the first to the last read from DRAM) and "core" (the window origins,
    without the halo); and "rows_read", "cols_read": the input rows and columns actually loaded
    (a stride larger than the kernel skips some inside "in_clipped")."""
    ay, ax = layer_axes(shape)
    ry, rx = block_rows(ay, tiling.y, block[0]), block_rows(ax, tiling.x, block[1])
    return {"out": ry.out + rx.out, "in": ry.span + rx.span, "in_clipped": ry.read + rx.read,
            "core": ry.origin + rx.origin,
            "rows_read": tuple(int(v) for v in ay.rows_read(*ry.out)),
            "cols_read": tuple(int(v) for v in ax.rows_read(*rx.out))}


@lru_cache(maxsize=4096)
def axis_tables(ax: Axis) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For t = 1..O: trips ceil(O/t), total input rows over all tiles, and the largest tile span.

    Index 0 is unused (t = 0) so arrays index by tile size directly.
    """
    trips = np.zeros(ax.O + 1, dtype=np.int64)
    total = np.zeros(ax.O + 1, dtype=np.int64)
    peak = np.zeros(ax.O + 1, dtype=np.int64)
    for t in range(1, ax.O + 1):
        s = ax.spans(t)
        trips[t] = len(s)
        total[t] = int(s.sum())
        peak[t] = int(s.max())
    for arr in (trips, total, peak):
        arr.setflags(write=False)
    return trips, total, peak


@lru_cache(maxsize=4096)
def slide_table(ax: Axis) -> np.ndarray:
    """For t = 1..O: input rows one sweep over the tiles of `t` output rows loads when each tile keeps
    on chip the rows it shares with the tile before it (the halo of a sliding window) and loads only
    the others: |rows(0)| + sum over i >= 1 of |rows(i) - rows(i-1)|. A row two tiles apart reads
    again (dilation gaps) is loaded again: only the previous tile's rows are kept.

    Counted per input row as the runs of consecutive tiles that read it. Index 0 is unused."""
    out = np.zeros(ax.O + 1, dtype=np.int64)
    rows = ax.taps()
    ok = (rows >= 0) & (rows < ax.I)
    real = rows[ok]
    outs = np.broadcast_to(np.arange(ax.O)[:, None], rows.shape)[ok]
    for t in range(1, ax.O + 1):
        keys = np.unique((outs // t) * ax.I + real)
        out[t] = keys.size - int(np.isin(keys - ax.I, keys).sum())      # (tile - 1, same row) also read
    out.setflags(write=False)
    return out


@lru_cache(maxsize=4096)
def live_table(ax: Axis) -> np.ndarray:
    """For t = 1..O: the most input rows on chip at once when a tile of `t` output rows streams its
    input through the buffer one output row at a time: each row it reads is loaded just before the
    first of the tile's output rows that reads it and dropped just after the last, so every row is
    still loaded once per tile (the tile's traffic is unchanged) but only the live rows take room.
    The largest over all tiles and all output rows. Index 0 is unused.

    At output row o the live rows are those whose first reader in the tile is <= o and last >= o:
    the window of o itself, and with dilation gaps also the rows between its taps that earlier rows
    read and later rows will read again."""
    out = np.zeros(ax.O + 1, dtype=np.int64)
    rows = ax.taps()
    ok = (rows >= 0) & (rows < ax.I)
    real = rows[ok]
    outs = np.broadcast_to(np.arange(ax.O)[:, None], rows.shape)[ok]
    if not real.size:                                          # every window reads padding only
        out.setflags(write=False)
        return out
    for t in range(1, ax.O + 1):
        keys = (outs // t) * ax.I + real                       # (tile, input row) of every real tap
        order = np.lexsort((outs, keys))
        k_sorted, o_sorted = keys[order], outs[order]
        starts = np.r_[True, k_sorted[1:] != k_sorted[:-1]]
        ends = np.r_[k_sorted[1:] != k_sorted[:-1], True]
        delta = np.zeros(ax.O + 1, dtype=np.int64)              # +1 at a row's first reader, -1 after its last
        np.add.at(delta, o_sorted[starts], 1)
        np.add.at(delta, o_sorted[ends] + 1, -1)
        out[t] = int(np.cumsum(delta)[:ax.O].max())
    out.setflags(write=False)
    return out


def max_reuse(ax: Axis) -> int:
    """The largest number of (output position, kernel tap) pairs that read one input row."""
    rows = ax.taps()
    rows = rows[(rows >= 0) & (rows < ax.I)]
    return int(np.bincount(rows, minlength=ax.I).max()) if rows.size else 0


def rows_used(ax: Axis) -> int:
    """Input rows touched by at least one window (rows a stride skips are never read)."""
    rows = ax.taps()
    return int(np.unique(rows[(rows >= 0) & (rows < ax.I)]).size)


def real_taps(ax: Axis) -> np.ndarray:
    """O x K: True where (output row, tap) reads a real input row, False where it reads padding."""
    rows = ax.taps()
    return (rows >= 0) & (rows < ax.I)


@dataclass(frozen=True)
class AxisCounts:
    """What the lower bound needs to know about one axis: `pairs`, the (output, tap) pairs reading
    a real row; `reuse`, the most pairs reading one input row; `taps_per_output`, the most real taps
    of one output; `outputs_per_tap`, the most outputs one tap serves with a real row; `taps_used`,
    the taps that read a real row for some output (a tap that only ever meets padding needs no weight)."""

    pairs: int
    reuse: int
    taps_per_output: int
    outputs_per_tap: int
    taps_used: int


def axis_counts(ax: Axis) -> AxisCounts:
    real = real_taps(ax)
    per_tap = real.sum(axis=0)
    return AxisCounts(int(real.sum()), max_reuse(ax), int(real.sum(axis=1).max()), int(per_tap.max()),
                      int((per_tap > 0).sum()))


def phase_classes(ax: Axis) -> list[tuple[int, int]]:
    """The axis's taps split into stride phases: tap t reads rows h = o*D - P + t*d, all of residue
    (t*d - P) mod D, so taps of one residue read rows of that residue only and taps of different
    residues read disjoint rows (and use different weights). For each phase with a real pair:
    (the (output, tap) pairs reading a real row, the most pairs reading one row). One phase when
    D = 1."""
    rows = ax.taps()
    real = (rows >= 0) & (rows < ax.I)
    residue = (np.arange(ax.K) * ax.d - ax.P) % ax.D
    out = []
    for rho in np.unique(residue):
        read = rows[:, residue == rho][real[:, residue == rho]]
        if read.size:
            out.append((int(read.size), int(np.bincount(read, minlength=ax.I).max())))
    return out


def distinct_tiles(n: int) -> np.ndarray:
    """The smallest tile size for every distinct trip count ceil(n/t), ascending.

    When traffic depends on a tile size only through its trip count (channels, batch), these are the
    only sizes worth trying: any other size has the same trips and needs more memory.
    """
    ts = {-(-n // k) for k in range(1, n + 1)}
    return np.array(sorted(ts), dtype=np.int64)
