"""The loop-nest model's fast paths agree with its array path word for word: `evaluate_one` (one tiling in
plain integers, what `traffic_of` uses) and `TileGrid` (one grid of tiles shared by many loop orders, what
the searches use) against `evaluate` on random layers, tilings, orders, held tensors, sliding and
streaming (seeded, fast)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from core.bound.loopnest import ALL_ORDERS, TileGrid, Tiling, evaluate, evaluate_one, stream_ok, traffic_of
from tests.test_bound_slide import _random_layer

KEYS = ("input_reads", "weight_reads", "output_writes", "output_reads", "memory", "ok")


def _ways(rnd: random.Random) -> tuple[str, bool, str]:
    """A held tensor, sliding and streaming that go together (a streamed tile neither slides nor is held)."""
    stream = rnd.choice(["", "", "P", "Q"])
    hold = rnd.choice(["", "W"] if stream else ["", "W", "I"])
    return hold, (not stream and rnd.random() < 0.5), stream


@pytest.mark.parametrize("seed", range(4))
def test_one_tiling_in_integers_equals_the_array_path(seed: int) -> None:
    rnd = random.Random(seed)
    for _ in range(150):
        s = _random_layer(rnd)
        g = s.group_shape()
        hold, slide, stream = _ways(rnd)
        t = Tiling(rnd.randint(1, g.B), rnd.randint(1, g.Co), rnd.randint(1, g.Ci), rnd.randint(1, g.Ho),
                   rnd.randint(1, g.Wo), rnd.choice(ALL_ORDERS), hold, slide, stream)
        want = evaluate(g, t.order, t.n, t.m, t.c, t.p, t.q, hold, slide, stream)
        got = evaluate_one(g, t)
        assert got == {k: int(want[k]) for k in KEYS}, (s, t)
        assert all(type(v) is int for v in got.values())
        if got["ok"]:
            tr = traffic_of(s, t)
            assert (tr.input_reads, tr.memory) == (s.groups * got["input_reads"], got["memory"])


@pytest.mark.parametrize("seed", range(3))
def test_a_grid_shared_by_many_orders_equals_one_evaluation_per_order(seed: int) -> None:
    rnd = random.Random(100 + seed)
    for _ in range(6):
        g = _random_layer(rnd).group_shape()
        size = 40
        n, m, c, p, q = (np.array([rnd.randint(1, v) for _ in range(size)])
                         for v in (g.B, g.Co, g.Ci, g.Ho, g.Wo))
        hold, slide, stream = _ways(rnd)
        grid = TileGrid(g, n, m, c, p, q, hold, stream)
        for order in rnd.sample(ALL_ORDERS, 12):
            got = grid.evaluate(order, slide)
            for i in range(size):
                one = evaluate_one(g, Tiling(int(n[i]), int(m[i]), int(c[i]), int(p[i]), int(q[i]), order, hold,
                                             slide, stream))
                assert {k: int(got[k][i]) for k in KEYS} == one, (g, order, i)
            if stream:
                assert np.array_equal(got["ok"], stream_ok(g, order, n, m, c, p, q))


def test_the_fast_path_refuses_what_the_array_path_refuses() -> None:
    g = _random_layer(random.Random(5)).group_shape()
    for t in (Tiling(1, 1, 1, 1, 1, stream="P", slide=True), Tiling(1, 1, 1, 1, 1, stream="Q", hold="I"),
              Tiling(1, 1, 1, 1, 1, hold="X"), Tiling(1, 1, 1, 1, 1, stream="R")):
        with pytest.raises(ValueError):
            evaluate(g, t.order, t.n, t.m, t.c, t.p, t.q, t.hold, t.slide, t.stream)
        with pytest.raises(ValueError):
            evaluate_one(g, t)
