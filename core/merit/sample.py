"""Verification of large transforms on sampled outputs (issue 31).

A real layer has millions of outputs of thousands of steps each; evaluating every one in numpy (and
holding M() for it) is what kept the engine at toy sizes. Above FULL_MAX_WORK steps the engine and
the code check compute, exactly (float64, eq. 5 gathered for just those outputs), a sample:

* SAMPLE_RANDOM outputs drawn with the run's seed, uniformly over Vec(C);
* whole tiles at the borders: for the tile the code runs with, the first tile, the last tile (the
  remainder tile where the tile does not divide a range) and, per parallel index, the tile that is last
  along that index and first along the others. Edge tiles are where tiled code goes wrong (bounds,
  padding, partial tiles), so they are checked whole.

The sample is stated in the result (`OutputSample.describe`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from core.merit_transform.transform import MeritTransform

FULL_MAX_WORK = 1 << 26          # p x a steps evaluated in full below this (AlexNet CONV1: 2^25.7)
SAMPLE_RANDOM = 256              # seeded random outputs
MAX_TILE_OUTPUTS = 4096          # a border tile larger than this is checked on its first outputs


@dataclass
class OutputSample:
    """Flat output numbers (row-major over the parallel indices) checked, and how they were drawn."""

    rows: np.ndarray                 # sorted, unique, int64
    total: int                       # outputs of the transform
    random: int                      # of which drawn at random
    tiles: list[dict[str, int]]      # starts of the whole tiles at the borders
    tile: dict[str, int]             # the tile's extents (parallel indices)
    seed: int

    @property
    def full(self) -> bool:
        return len(self.rows) == self.total

    def describe(self) -> str:
        if self.full:
            return f"all {self.total} outputs"
        ext = "x".join(str(v) for v in self.tile.values())
        return (f"{len(self.rows)} of {self.total} outputs: {self.random} drawn at random (seed {self.seed}) and "
                f"{len(self.tiles)} whole {ext} tiles at the borders (first, last and last along each parallel "
                f"index), computed exactly in float64")


def full_sample(t: MeritTransform) -> OutputSample:
    return OutputSample(np.arange(t.p_count, dtype=np.int64), t.p_count, 0, [], {}, 0)


def needs_sampling(t: MeritTransform) -> bool:
    return t.p_count * t.a_count > FULL_MAX_WORK


def border_tiles(t: MeritTransform, ext: dict[str, int]) -> list[dict[str, int]]:
    """Starts of the first tile, the last tile and, per parallel index, the last-along-it tile."""
    sizes = dict(t.parallel)
    first = {n: 0 for n in sizes}
    last = {n: ((s - 1) // ext[n]) * ext[n] for n, s in sizes.items()}
    out = [first, last]
    for n in sizes:
        out.append({**first, n: last[n]})
    seen, uniq = set(), []
    for d in out:
        key = tuple(d.values())
        if key not in seen:
            seen.add(key)
            uniq.append(d)
    return uniq


def tile_rows(t: MeritTransform, start: dict[str, int], ext: dict[str, int], limit: int = MAX_TILE_OUTPUTS) -> np.ndarray:
    """Flat output numbers of the tile at `start` (clipped to the ranges), at most `limit` of them."""
    if not t.parallel:
        return np.zeros(1, dtype=np.int64)
    sizes = [s for _, s in t.parallel]
    ranges = [np.arange(start[n], min(start[n] + ext[n], s), dtype=np.int64) for n, s in t.parallel]
    count = math.prod(len(r) for r in ranges)
    k = np.arange(min(count, limit), dtype=np.int64)
    idx = np.unravel_index(k, [len(r) for r in ranges])
    coords = [r[i] for r, i in zip(ranges, idx)]
    return np.ravel_multi_index(coords, sizes).astype(np.int64)


def choose_sample(t: MeritTransform, ext: dict[str, int], seed: int, n_random: int = SAMPLE_RANDOM) -> OutputSample:
    """The sample of the module docstring for tile extents `ext` (missing: the whole range)."""
    P = t.p_count
    pext = {n: min(int(ext.get(n, s)), s) for n, s in t.parallel}
    rng = np.random.default_rng([int(seed), 31])
    random = rng.integers(0, P, size=min(n_random, P), dtype=np.int64)
    tiles = border_tiles(t, pext)
    parts = [random] + [tile_rows(t, s, pext) for s in tiles]
    rows = np.unique(np.concatenate(parts))
    return OutputSample(rows, P, int(len(random)), tiles, pext, int(seed))
