"""The pipeline depth D of f-CNNx's eq. 1 (core.fcnnx.model.subgraph_cycles): one frame's drain time.
A stage's line buffers fill with the rows its first window reads at the pace they arrive (no MACs run
meanwhile), and a stage after the bottleneck fills while the bottleneck runs. Before this, each
stage's fill was charged at its own II, so a compute-bound stage waited MAC time for rows it only
stores, and every stage after the bottleneck added its fill: LeNet-5 conv2 at <5, 25> then took 34 %
over fpgaConvNet's latency, against its own pipeline depth's 13 % (benchmarks/fcnnx_vs_fpgaconvnet.py).
Cases worked by hand."""

from __future__ import annotations

from core.fcnnx.model import EngineDesign, LayerTask, Subgraph, subgraph_cycles


def _conv(name: str, n_out: int, k: int, size: int, maps: int, pad: int = 0) -> LayerTask:
    out = size + 2 * pad - k + 1
    return LayerTask("conv", name, n_out, k * k, k, size, size, out, out, maps, maps, n_out * maps * k * k, pad)


def _design(blocks: list[tuple[LayerTask, list[LayerTask]]], folding: list[tuple[int, int]]) -> EngineDesign:
    d = EngineDesign("t", [[0]], None, [Subgraph("s", blocks, 1, 1)])
    d.init_stages()
    for sc, (n_pe, n_op) in zip(d.stages, folding):
        sc.n_pe, sc.n_op = n_pe, n_op
    return d


def test_a_compute_bound_stage_fills_at_its_input_pace_and_the_pool_after_it_adds_nothing():
    conv = _conv("conv2", 50, 5, 12, 20)                  # II 50 x 25 x 64 x 20 = 1 600 000 at <1, 1>
    pool = LayerTask("pool", "pool2", 50, 4, 2, 8, 8, 4, 4, 50, 1, 0)
    ii, depth = subgraph_cycles(_design([(conv, [pool])], [(1, 1), (1, 4)]), 0)
    assert ii == 1_600_000
    # 4 of the 12 input rows (20 maps of 12 words each) before the first window, read one word a cycle:
    # 960 cycles; the pool's first row waits for one conv row, but it ends with the conv
    assert depth == 1_600_000 + 960                       # was II + II x 4/12 + the pool's 3200 x 1/8


def test_a_stage_after_a_slower_one_fills_at_that_pace_and_only_up_to_the_bottleneck_adds():
    fast = (4, 9)
    # the slow stage first: conv1 II 4 x 9 x 64 = 2304 at <1, 1>, conv2 at <8, 9> reads 256 words a frame
    slow_first = _design([(_conv("c1", 4, 3, 10, 1), []), (_conv("c2", 8, 3, 8, 4), [])],
                         [(1, 1), (1, 1), (8, 9), (1, 1)])
    ii, depth = subgraph_cycles(slow_first, 0)
    assert ii == 2304
    # conv1's 2 rows of 10 words: 20 cycles; conv2's first row waits 2 of 8 rows at conv1's pace (576),
    # then ends 256 cycles later, before conv1 does
    assert depth == 20 + 2304
    # the slow stage second: conv1 at <4, 9> reads 100 words (its II); conv2 II 8 x 9 x 36 x 4 = 10368
    slow_second = _design([(_conv("c1", 4, 3, 10, 1), []), (_conv("c2", 8, 3, 8, 4), [])],
                          [fast, (1, 1), (1, 1), (1, 1)])
    ii, depth = subgraph_cycles(slow_second, 0)
    assert ii == 10368
    assert depth == 100 * 2 / 10 + 256 * 2 / 8 + 10368  # conv2's rows come at its own read pace (256 > 100)


def test_top_padding_is_made_on_chip():
    conv = _conv("c", 8, 3, 16, 2, pad=1)                 # the first window reads 1 real row, not 2
    ii, depth = subgraph_cycles(_design([(conv, [])], [(1, 1), (1, 1)]), 0)
    assert ii == 8 * 9 * 256 * 2
    assert depth == ii + 16 * 2 * 1
