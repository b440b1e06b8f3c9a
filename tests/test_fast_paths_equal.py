"""The fast paths of the tests' and simulators' helpers give exactly what the plain definitions give.

Each check compares a vectorised or indexed routine with a slow, literal formulation of the same
definition on random small cases; both must agree bit for bit (counts, schedules, orders)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from core.cain import lower_bound as lb
from pebbling import macs_of, schedule_traffic
from test_bound_proof import _mac_indices, _random_layers, _tiled_order


def _belady_by_scanning(shape, S: int, order: list[int]) -> int:
    """pebbling.schedule_traffic's definition, the next use of each word found by scanning ahead."""
    macs, n_out, n_in, _ = macs_of(shape)
    seq = [(o, n_out + i, n_out + n_in + k) for o, i, k in (macs[j] for j in order)]
    resident: set[int] = set()
    started: set[int] = set()
    traffic = 0
    for t, trio in enumerate(seq):
        for word in (w for w in trio if w not in resident):        # the MAC's words not on chip, in turn
            if len(resident) == S:
                later = {z: next((u for u in range(t, len(seq)) if z in seq[u]), 1 << 60)
                         for z in resident if z not in trio}
                victim = max(later, key=later.__getitem__)        # the first farthest, in the set's order
                resident.remove(victim)
                if victim in started and victim < n_out:
                    traffic += 1                                    # a partial sum goes back to DRAM
            resident.add(word)
            if word in started or word >= n_out:
                traffic += 1
        started.add(trio[0])
    return traffic + len([z for z in resident if z < n_out])


@pytest.mark.parametrize("seed", range(4))
def test_belady_schedule_traffic_equals_the_scanning_definition(seed):
    rnd = random.Random(seed)
    for s in _random_layers(3, 100 + seed, max_ch=4, max_hw=5):
        n = len(macs_of(s)[0])
        for S in (3, 4, 7, 12):
            order = rnd.sample(range(n), n)
            assert schedule_traffic(s, S, order) == _belady_by_scanning(s, S, order), (s, S)


@pytest.mark.parametrize("seed", range(3))
def test_tiled_order_equals_the_sort_by_tile_keys(seed):
    rnd = random.Random(seed)
    for s in _random_layers(4, 200 + seed, max_ch=6, max_hw=6):
        index = _mac_indices(s)
        dims = dict(N=s.B, M=s.Co, P=s.Ho, Q=s.Wo, C=s.Cig, R=s.Hk, T=s.Wk)
        for _ in range(5):
            tile = {d: rnd.randint(1, v) for d, v in dims.items()}
            outer, inner = rnd.sample(list(dims), rnd.randint(1, 7)), rnd.sample(list(dims), rnd.randint(0, 7))
            expect = sorted(range(len(index)), key=lambda j: tuple(index[j][d] // tile[d] for d in outer)
                            + tuple(index[j][d] % tile[d] for d in inner))
            assert _tiled_order(index, tile, outer, inner) == expect


def _shifts_by_search(offsets: tuple[tuple[int, int], ...]) -> tuple[int, ...]:
    """lower_bound._shift_table by its definition: a breadth-first search over the sums of the shifts'
    east, west, north and south parts (each capped at the table's size), then for every box the
    fewest shifts of any sums that cover it."""
    C = lb._SHIFT_CAP + 1
    big = 10 ** 6
    parts = [(max(dx, 0), max(-dx, 0), max(dy, 0), max(-dy, 0)) for dx, dy in offsets]
    fewest = np.full(C ** 4, big, dtype=np.int64)
    fewest[0] = 0
    frontier, steps = np.zeros(1, dtype=np.int64), 0         # the sums first reached at `steps`, as indices
    while frontier.size:
        steps += 1
        box = np.unravel_index(frontier, (C,) * 4)
        reached = np.unique(np.concatenate([np.ravel_multi_index(tuple(np.minimum(v + d, C - 1) for v, d in zip(box, p)),
                                                                 (C,) * 4) for p in parts] or [frontier[:0]]))
        frontier = reached[fewest[reached] == big]
        fewest[frontier] = steps
    fewest = fewest.reshape((C,) * 4)
    for axis in range(4):                    # covering sums: the least over every larger box
        fewest = np.flip(np.minimum.accumulate(np.flip(fewest, axis), axis=axis), axis)
    return tuple(fewest.ravel().tolist())


@pytest.mark.parametrize("offsets", [lb._UNIT, lb._DOUBLE, lb._UNIT + lb._DOUBLE, ((1, 0),), ((1, 1), (-2, 0)), ()])
def test_shift_table_equals_the_search_of_its_definition(offsets):
    assert lb._shift_table.__wrapped__(offsets) == _shifts_by_search(offsets)
