"""Tiled execution (paper, section IV-A): sub-tensors (t_p, t_a) of M(A) and their footprints.

The footprint of a sub-tensor of M(A) in A is, per axis i (eq. 9):

    1 + sum_j (t_j - 1) |s_j| delta(d_j, i)

Loading the footprint once and expanding on the fly replaces loading every element of the M(A)
sub-tensor directly (or of the unrolled matrix U(A), eq. 2).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from core.errors import InputError
from core.merit.result import LoadCount, Tile, Tiling
from core.merit_transform.transform import MeritTransform, Operand


def tile_sizes(t: MeritTransform, tile: dict[str, int], where: str = "tile") -> dict[str, int]:
    """Tile extent per index (missing: the whole range), checked against the index sizes."""
    sizes = dict(t.indices)
    for name, v in tile.items():
        if name not in sizes:
            raise InputError(f"tile names unknown index {name!r}; indices: {', '.join(sizes)}", f"{where}.{name}")
        if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
            raise InputError(f"tile size must be a positive integer, got {v!r}", f"{where}.{name}")
    return {n: min(tile.get(n, s), s) for n, s in t.indices}


def footprint(t: MeritTransform, op: Operand, ext: dict[str, int]) -> tuple[int, ...]:
    """Eq. 9 for tile extents `ext` (index -> t_j)."""
    fp = [1] * len(op.shape)
    for idx, m in op.maps.items():
        fp[m.axis] += (ext[idx] - 1) * abs(m.stride)
    return tuple(fp)


def measured_footprint(t: MeritTransform, op: Operand, ext: dict[str, int]) -> tuple[int, ...]:
    """The bounding box of the elements one tile of M(op) actually reads (a check of eq. 9)."""
    used = [n for n, _ in t.indices if n in op.maps]
    k = {}
    for pos, n in enumerate(used):
        shape = [1] * len(used)
        shape[pos] = ext[n]
        k[n] = np.arange(ext[n]).reshape(shape)
    xs = t.coords(op, k)
    return tuple(int(np.max(x) - np.min(x)) + 1 if np.ndim(x) else 1 for x in xs)


def clipped_footprint(t: MeritTransform, op: Operand, ext: dict[str, int]) -> tuple[int, ...]:
    """Eq. 9, but never larger than the tensor plus its zero padding."""
    pad = op.padding()
    return tuple(min(f, s + 2 * p) for f, s, p in zip(footprint(t, op, ext), op.shape, pad))


@dataclass
class LoadCounts:
    operand: str
    tiles: int
    direct: int            # every element of each M(A) sub-tensor read from A
    unrolled: int          # each U(A) sub-matrix: repetition only over indices the operand moves with
    on_the_fly: int        # each eq. 9 footprint read once, expanded while moving to the ALUs

    @property
    def saving_vs_direct(self) -> float:
        """The share of direct reads that reading each footprint once saves (4 decimals)."""
        return round(1 - self.on_the_fly / self.direct, 4) if self.direct else 0.0


def _extent_options(n: int, t: int) -> list[tuple[int, int]]:
    """(extent, how many tiles) for an index of size n cut into tiles of t."""
    opts = [(t, n // t)] if n // t else []
    if n % t:
        opts.append((n % t, 1))
    return opts


def load_counts(t: MeritTransform, tile: dict[str, int]) -> list[LoadCounts]:
    """Words loaded per operand over all tiles, with and without on-the-fly expansion."""
    ext_full = tile_sizes(t, tile)
    names = [n for n, _ in t.indices]
    options = [_extent_options(s, ext_full[n]) for n, s in t.indices]
    out = []
    for op in t.operands:
        tiles = direct = unrolled = otf = 0
        for combo in itertools.product(*options):
            count = int(np.prod([c for _, c in combo], dtype=np.int64))
            ext = {n: e for n, (e, _) in zip(names, combo)}
            tiles += count
            direct += count * int(np.prod([e for e, _ in combo], dtype=np.int64))
            unrolled += count * int(np.prod([ext[n] for n in names if n in op.maps] or [1], dtype=np.int64))
            otf += count * int(np.prod(clipped_footprint(t, op, ext), dtype=np.int64))
        out.append(LoadCounts(op.name, tiles, direct, unrolled, otf))
    return out


def tiling_report(t: MeritTransform, tile: dict[str, int]) -> Tiling:
    """The tile's extents, each operand's eq. 9 footprint beside the bounding box of what the tile
    reads (they agree when eq. 9 holds), and the loads per operand."""
    ext = tile_sizes(t, tile)
    fps = {f"{i}:{op.name}": list(footprint(t, op, ext)) for i, op in enumerate(t.operands)}
    measured = {f"{i}:{op.name}": list(measured_footprint(t, op, ext)) for i, op in enumerate(t.operands)}
    return Tiling(tile=Tile(parallel={n: ext[n] for n, _ in t.parallel}, accumulate={n: ext[n] for n, _ in t.accumulate}),
                  footprints=fps, measured_footprints=measured,
                  loads=[LoadCount.of(c) for c in load_counts(t, tile)], footprint_check=fps == measured)
