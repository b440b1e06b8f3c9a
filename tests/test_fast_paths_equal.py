"""The fast paths of the tests' and simulators' helpers give exactly what the plain definitions give.

Each check compares a vectorised or indexed routine with a slow, literal formulation of the same
definition on random small cases; both must agree bit for bit (counts, schedules, orders)."""

from __future__ import annotations

import random

import pytest

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
        for it in trio:
            if it in resident:
                continue
            if len(resident) >= S:
                def next_use(z: int) -> int:
                    return next((u for u in range(t, len(seq)) if z in seq[u]), 1 << 60)
                victim = max((z for z in resident if z not in trio), key=next_use)
                resident.discard(victim)
                traffic += victim < n_out and victim in started
            resident.add(it)
            traffic += it >= n_out or it in started
        started.add(trio[0])
    return traffic + sum(1 for z in resident if z < n_out)


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
