"""Exact one-dimensional tile geometry: which input rows an output-row tile needs.

Output rows [a, e] of a convolution with stride D, padding P, kernel K and dilation d need input
rows [a*D - P, e*D - P + d*(K-1)], clipped to the real input (padding is never read from DRAM).
Tiles are `t` rows; the last tile is the remainder (ceilings at the edge). These sums are what the
trace simulator counts, so they are exact, not the paper's x' ~ D*x approximation.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Mapping

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

    def spans(self, t: int) -> np.ndarray:
        """Input rows read by each tile of `t` output rows (clipped to the input)."""
        a = np.arange(0, self.O, t)
        e = np.minimum(a + t, self.O) - 1
        lo = np.maximum(a * self.D - self.P, 0)
        hi = np.minimum(e * self.D - self.P + self.d * (self.K - 1), self.I - 1)
        return np.maximum(hi - lo + 1, 0)


@dataclass(frozen=True)
class BlockRows:
    """One tile along one axis, as half-open row ranges: its output rows, the input rows its windows
    span (padding included, so possibly outside 0..I), those clipped to the real input (what is read
    from DRAM), and the rows its window origins sit on (the block without its halo)."""

    out: tuple[int, int]
    span: tuple[int, int]
    read: tuple[int, int]
    origin: tuple[int, int]


def block_rows(ax: Axis, t: int, index: int) -> BlockRows:
    """Tile `index` (0-based) of `t` output rows; `read` has the length `ax.spans(t)[index]`."""
    o0 = index * t
    o1 = min(o0 + t, ax.O)
    i0, last = o0 * ax.D - ax.P, (o1 - 1) * ax.D - ax.P
    i1 = last + ax.d * (ax.K - 1) + 1
    return BlockRows((o0, o1), (i0, i1), (max(i0, 0), max(min(i1, ax.I), max(i0, 0))), (i0, last + 1))


def layer_axes(shape: Mapping[str, Any]) -> tuple[Axis, Axis]:
    """The row and column axes of a layer shape (ConvShape.to_json(), as in a result)."""
    return (Axis(shape["Ho"], shape["Hi"], shape["Hk"], shape["stride"], shape["pad"], shape["dilation"]),
            Axis(shape["Wo"], shape["Wi"], shape["Wk"], shape["stride"], shape["pad"], shape["dilation"]))


def block_grid(shape: Mapping[str, Any], tiling: Mapping[str, Any]) -> tuple[int, int]:
    """How many output blocks a tiling (its y and x tile sizes) cuts a layer into: (rows, columns)."""
    return -(-shape["Ho"] // tiling["y"]), -(-shape["Wo"] // tiling["x"])


def interior_block(shape: Mapping[str, Any], tiling: Mapping[str, Any]) -> tuple[int, int]:
    """The block in the middle of the grid (a block away from the padded borders when there is one)."""
    ny, nx = block_grid(shape, tiling)
    return ny // 2, nx // 2


def tile_block(shape: Mapping[str, Any], tiling: Mapping[str, Any],
               block: tuple[int, int] = (0, 0)) -> dict[str, tuple[int, int, int, int]]:
    """Output block `block` = (row, column) of a layer's tiling and the input it needs, each as
    (y0, y1, x0, x1) half-open: "out", "in" (with the halo, padding included), "in_clipped" (read
    from DRAM) and "core" (the window origins, without the halo)."""
    ay, ax = layer_axes(shape)
    ry, rx = block_rows(ay, tiling["y"], block[0]), block_rows(ax, tiling["x"], block[1])
    return {"out": ry.out + rx.out, "in": ry.span + rx.span, "in_clipped": ry.read + rx.read,
            "core": ry.origin + rx.origin}


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


def max_reuse(ax: Axis) -> int:
    """The largest number of (output position, kernel tap) pairs that read one input row."""
    counts = np.zeros(ax.I, dtype=np.int64)
    o = np.arange(ax.O)
    for r in range(ax.K):
        rows = o * ax.D - ax.P + r * ax.d
        rows = rows[(rows >= 0) & (rows < ax.I)]
        np.add.at(counts, rows, 1)
    return int(counts.max()) if ax.I else 0


def rows_used(ax: Axis) -> int:
    """Input rows touched by at least one window (rows a stride skips are never read)."""
    used = np.zeros(ax.I, dtype=bool)
    o = np.arange(ax.O)
    for r in range(ax.K):
        rows = o * ax.D - ax.P + r * ax.d
        used[rows[(rows >= 0) & (rows < ax.I)]] = True
    return int(used.sum())


def distinct_tiles(n: int) -> np.ndarray:
    """The smallest tile size for every distinct trip count ceil(n/t), ascending.

    When traffic depends on a tile size only through its trip count (channels, batch), these are the
    only sizes worth trying: any other size has the same trips and needs more memory.
    """
    ts = {-(-n // k) for k in range(1, n + 1)}
    return np.array(sorted(ts), dtype=np.int64)
