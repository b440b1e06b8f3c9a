"""Footprints (eq. 9), on-the-fly loads and the bank-conflict remedies of Fig. 6."""

import numpy as np
import pytest

from core.errors import InputError
from core.merit import banks as B
from core.merit_transform import workloads as W
from core.merit.tiling import footprint, load_counts, tile_sizes


def test_equation_9_example_5x5_kernel_16x8_outputs():
    t = W.conv(1, 36, 28, 1, 5)
    ext = tile_sizes(t, {"y": 16, "x": 8})
    assert footprint(t, t.operand("I"), ext)[1:] == (20, 12)


def test_footprint_with_stride_and_dilation():
    t = W.conv(3, 64, 64, 8, 3, stride=2, dilation=2, pad=2)
    ext = tile_sizes(t, {"y": 4, "x": 8})
    # 1 + (4-1)*2 + (3-1)*2 = 11, 1 + (8-1)*2 + (3-1)*2 = 19
    assert footprint(t, t.operand("I"), ext) == (3, 11, 19)


def test_loads_with_and_without_expansion():
    t = W.conv(1, 18, 18, 1, 3)
    counts = {c.operand: c for c in load_counts(t, {"y": 4, "x": 4})}
    i = counts["I"]
    assert i.tiles == 16
    assert i.direct == 16 * 4 * 4 * 9                # every element of each M(I) sub-tensor
    assert i.on_the_fly == 16 * 6 * 6                # one 6x6 footprint per tile
    assert i.on_the_fly < i.direct


def test_loads_count_edge_tiles():
    t = W.gemm(10, 7, 5)
    a = {c.operand: c for c in load_counts(t, {"m": 4, "n": 4, "k": 5})}["A"]
    assert a.tiles == 3 * 2
    # A footprint of a tile is (m extent) x 5; m extents 4,4,2 each used by 2 n-tiles
    assert a.on_the_fly == 2 * (4 + 4 + 2) * 5


@pytest.fixture(scope="module")
def fig6():
    wl = W.WORKLOADS["conv3x3"]
    res = B.analyse(wl.transform, wl.transform.operand("I"), wl.tile, 8)
    B.with_butterfly(res, 8)
    return {r.name: r for r in res}


def test_fig6_naive_layout_conflicts(fig6):
    naive = fig6["naive"]
    assert naive.c == [1, 2, 6]                              # A_0:7 = (0,1,2,3,6,7,8,9)
    assert naive.addr[np.arange(8), 0].tolist() == [0, 1, 2, 3, 6, 7, 8, 9]
    assert naive.extra_cycles > 0
    assert any(cell[2] for cell in naive.shown)              # conflicting cells are marked


def test_fig6_padding_needs_six_words_per_row(fig6):
    pad = fig6["padding"]
    assert pad.extra_cycles == 0 and pad.pitch == 12 and pad.padding_words == 36


def test_fig6_xor_hash_needs_two_words_per_row(fig6):
    x = fig6["xor"]
    assert x.extra_cycles == 0 and x.pitch == 8 and x.padding_words == 12
    # the first sub-tile reads banks 0..7 once each
    assert sorted((x.addr[np.arange(8), 0] % 8).tolist()) == list(range(8))


def test_fig6_retiling_finds_paper_groupings(fig6):
    cs = sorted(tuple(r.c) for n, r in fig6.items() if n.startswith("retile"))
    assert cs == [(1, 2, 12), (1, 6, 12)]                    # Fig. 6 (iii) and (iv)
    assert all(r.extra_cycles == 0 and r.padding_words == 0 for n, r in fig6.items() if n.startswith("retile"))


def test_conflict_free_layouts_pass_butterfly_test(fig6):
    assert fig6["naive"].verdict is not None and fig6["naive"].verdict.ok is False
    for name in ("padding", "xor", "retile-1", "retile-2"):
        v = fig6[name].verdict
        assert v is not None and v.ok and v.routable == 1.0


def test_stride_4_reads_along_a_row_need_padding_or_xor_inside_the_row():
    wl = W.WORKLOADS["alexnet-conv1"]
    res = {r.name: r for r in B.analyse(wl.transform, wl.transform.operand("I"), wl.tile, 8)}
    assert res["naive"].extra_cycles > 0
    pad, xor = res["padding"], res["xor"]
    assert pad.extra_cycles == 0 and "after every 4 words of a row" in pad.detail
    assert xor.extra_cycles == 0 and "column >>" in xor.detail
    # both are bijections: every footprint word keeps its own address
    for r in (pad, xor):
        cells = [b for row in r.grid for b in row if b >= 0]
        assert len(cells) == 3 * 39 * 39 and r.padding_words == len(r.grid) * r.pitch - len(cells)


def test_bad_bank_count():
    wl = W.WORKLOADS["conv3x3"]
    with pytest.raises(InputError):
        B.analyse(wl.transform, wl.transform.operand("I"), wl.tile, 0)
    res = B.analyse(wl.transform, wl.transform.operand("I"), wl.tile, 6)   # conflicts work for any N ...
    with pytest.raises(InputError) as e:                                      # ... the butterfly needs 2^L
        B.with_butterfly(res, 6)
    assert "power-of-two" in e.value.message


@pytest.mark.parametrize("name", W.names())
def test_equation_9_is_the_bounding_box_of_what_a_tile_reads(name):
    from core.merit.tiling import tiling_report

    wl = W.WORKLOADS[name]
    for st in wl.stages:
        tile = {k: v for k, v in wl.tile.items() if k in dict(st.indices)}
        rep = tiling_report(st, tile)
        assert rep.footprints == rep.measured_footprints and rep.footprint_check
