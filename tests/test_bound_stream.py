"""Input tiles that stream through the buffer (issue 33, the richer dataflow space): within each step
the output tile is computed one output row (column) at a time, each input row (column) loaded before
its first use and dropped after its last, so the output block and the weights stay resident while
only the live input rows take room. The traffic is the plain tiling's, word for word in the trace
simulator; the footprint is `geometry.live_table`'s; the search over the stated space, now with
streaming, still equals brute force; and AlexNet CONV2 at 64 KiB moves 703,776 words (773,760 before)."""

from __future__ import annotations

import itertools
import random

import pytest

from core.bound.bounds import conv_bound
from core.bound.geometry import Axis, axis_tables, live_table
from core.bound.loopnest import ALL_ORDERS, Tiling, evaluate, exhaustive_optimal, search_optimal, traffic_of
from core.bound.shapes import from_conv
from core.nets import zoo
from sims.loopnest_trace import BufferOverflow, simulate
from tests.test_bound_slide import _random_layer, least_on_grid, random_axes, random_tilings, shape


def _live_by_hand(ax: Axis, t: int) -> int:
    """Rows on chip at once, tile by tile and output row by output row: a row is live from the first
    to the last output row of its tile that reads it."""
    best = 0
    for a in range(0, ax.O, t):
        b = min(a + t, ax.O)
        readers: dict[int, list[int]] = {}
        for o in range(a, b):
            for h in ax.rows_read(o, o + 1).tolist():
                readers.setdefault(h, []).append(o)
        for o in range(a, b):
            best = max(best, sum(1 for uses in readers.values() if min(uses) <= o <= max(uses)))
    return best


def test_live_table_counts_the_rows_live_at_once():
    """Against the tiles' rows one output row at a time (strides, padding, dilation gaps), and never
    more than the whole tile's rows."""
    for ax in random_axes(4):
        live, peak = live_table(ax), axis_tables(ax)[2]
        for t in range(1, ax.O + 1):
            assert live[t] == _live_by_hand(ax, t), (ax, t)
            assert live[t] <= peak[t]
        assert live[1] == peak[1]                  # a one-row tile holds its window either way
    assert live_table(Axis(1, 1, 2, 1, 1, 2)).tolist() == [0, 0]      # a window that reads padding only


@pytest.mark.parametrize("s,t", random_tilings(40, 23, streaming=True))
def test_trace_simulator_counts_streaming_tilings_exactly(s, t):
    """The simulator fetches each input row (column) before the first output row (column) of the
    step that reads it and drops it after the last: the right convolution, the plain tiling's words
    exactly, and the model's footprint as its peak."""
    model = traffic_of(s, t)
    plain = traffic_of(s, Tiling(t.n, t.m, t.c, t.p, t.q, t.order, t.hold))
    sim = simulate(s, t, S=10 ** 9)
    assert sim.max_abs_error == 0.0
    assert (sim.input_reads, sim.weight_reads, sim.output_writes, sim.output_reads) == \
        (model.input_reads, model.weight_reads, model.output_writes, model.output_reads) == \
        (plain.input_reads, plain.weight_reads, plain.output_writes, plain.output_reads), (s, t)
    assert sim.peak_words == model.memory <= plain.memory
    with pytest.raises(BufferOverflow):
        simulate(s, t, S=model.memory - 1)


def test_a_tile_kept_for_the_next_output_channel_tile_cannot_stream():
    """Input stationary (M innermost, two output-channel tiles): the nest keeps the input tile while
    M turns, so streaming it would lose it; the model refuses the tiling, and so does the simulator."""
    s = shape(Ci=2, H=6, W=6, Co=4, k=3, pad=1)
    t = Tiling(1, 2, 2, 3, 3, "NCPQM", "", False, "P")
    g = s.group_shape()
    assert not bool(evaluate(g, t.order, t.n, t.m, t.c, t.p, t.q, "", False, "P")["ok"])
    with pytest.raises(ValueError, match="cannot stream"):
        traffic_of(s, t)
    with pytest.raises(ValueError, match="cannot stream"):
        simulate(s, t, S=10 ** 9)
    with pytest.raises(ValueError):
        evaluate(g, t.order, t.n, t.m, t.c, t.p, t.q, "", True, "P")      # sliding and streaming at once
    # one output-channel tile, or an input loop inside M, and it may
    assert bool(evaluate(g, "NCPQM", 1, 4, 2, 3, 3, "", False, "P")["ok"])
    assert bool(evaluate(g, "MNCPQ", 1, 2, 1, 3, 3, "", False, "P")["ok"])


@pytest.mark.slow
def test_search_with_streaming_equals_brute_force_and_streams_where_it_saves():
    """Random small layers and memories near their smallest tiles, where streaming matters: the
    search equals brute force over the whole stated space (streaming included), the simulator runs
    its tiling within S, and it reports a streaming tiling only where the best plain one moves more."""
    rnd = random.Random(41)
    streamed = 0
    for _ in range(14):
        s = _random_layer(rnd)
        g = s.group_shape()
        smallest = int(evaluate(g, "NMCPQ", 1, 1, 1, 1, 1)["memory"])
        for S in (smallest + rnd.randint(0, 8), 2 * smallest + rnd.randint(0, 20)):
            opt = search_optimal(s, S)
            total, _ = exhaustive_optimal(s, S)
            assert opt.traffic.total == total, (s, S, opt.tiling)
            sim = simulate(s, opt.tiling, S)
            assert sim.max_abs_error == 0.0 and sim.total == total and sim.peak_words <= S
            if opt.tiling.stream:
                streamed += 1
                plain = [least_on_grid(g, order, hold, slide, S)
                         for order, hold, slide in itertools.product(ALL_ORDERS, ("", "W", "I"), (False, True))]
                assert all(v is None or v * s.groups > total for v in plain)
    assert streamed >= 3


def test_alexnet_conv2_streams_its_input_and_is_simulated():
    """AlexNet CONV2 at 64 KiB of 16-bit words (two groups of 48 input channels): 43 output channels'
    27x27 sums stay on chip while each input channel's plane streams through five rows at a time
    (135 words instead of 729), so 43 channels fit where 32 did: each group reads its inputs three
    times instead of four. 703,776 words by the model and by the simulator, against 773,760 for the
    best plain tiling; never below the proven bound."""
    s = from_conv(next(c for c in zoo.get("alexnet").convs if c.name == "conv2"))
    S = 32768
    # by hand: each pass over a group's 128 output channels reads its 48 x 27 x 27 inputs once; the
    # weights and the outputs move once
    group_inputs, weights, outputs = 48 * 27 * 27, 256 * 48 * 5 * 5, 256 * 27 * 27

    def by_hand(z: int) -> int:            # ceil(128 / z) passes per group, two groups
        return 2 * -(-128 // z) * group_inputs + weights + outputs

    assert (by_hand(32), by_hand(43)) == (773_760, 703_776)
    # room: z channels' sums, their weights for one input channel, and the input plane or 5 of its rows
    assert 32 * 729 + 32 * 25 + 729 <= S < 43 * 729 + 43 * 25 + 729 and 43 * 729 + 43 * 25 + 5 * 27 <= S
    opt = search_optimal(s, S)
    assert opt.tiling.stream == "P" and opt.traffic.total == by_hand(43) and opt.traffic.memory <= S
    assert (opt.tiling.z, opt.tiling.y, opt.tiling.x, opt.tiling.k) == (43, 27, 27, 1)
    plain = traffic_of(s, Tiling(1, 32, 1, 27, 27))
    assert plain.total == by_hand(32) and plain.memory <= S < traffic_of(s, Tiling(1, 43, 1, 27, 27)).memory
    sim = simulate(s, opt.tiling, S)
    assert sim.max_abs_error == 0.0 and sim.total == by_hand(43) and sim.peak_words == opt.traffic.memory
    assert opt.traffic.total >= conv_bound(s, S).reference
